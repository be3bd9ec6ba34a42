"""Model-predictive control for web agents (RLVR-World / WMA): propose, imagine, evaluate, act.

Each step: the policy samples `n_samples` candidate actions and the `top_k` most frequent are kept;
the world model predicts each candidate's next tree (depth > 1: the policy continues greedily inside
the imagined page and the value of the last imagined state counts); a value function scores each
imagined state against the objective (Likert 1-5, averaged over `value_samples` predictions); the best
candidate runs in the real environment. With `world_model=None` the agent is the policy alone (its most
frequent sample). `min_confidence` gates the lookahead by the world model's own confidence in its
predictions (see `MPCWebAgent`).

Pluggable parts (Protocols below): the local CPU ones here (`HeuristicWebPolicy`,
`HeuristicValueFunction`), LLM-backed ones in `rlvr_sim.policies.web_llm` (any OpenAI-compatible chat
endpoint or a Hugging Face causal LM), world models `LearnedWorldModel` (an `LMWebWorldModel`
checkpoint) and `BrowserLookahead` (the real browser, the upper bound).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from rlvr_sim.envs.web.actions import ActionParseError, parse_action
from rlvr_sim.envs.web.tree import item_changes, split_header

_STOPWORDS = {"the", "of", "to", "a", "an", "is", "what", "which", "how", "many", "set", "from", "open",
              "go", "for", "and", "with", "only", "new", "named", "are", "there", "show", "product", "products", "list"}


class WebPolicy(Protocol):
    def propose(self, objective: str, tree: str, url: str, history: list[str], n_samples: int,
                rng: np.random.Generator) -> list[str]:
        """`n_samples` sampled action texts (duplicates expected: frequency is the policy's confidence)."""


class WebValueFunction(Protocol):
    def score(self, objective: str, tree: str, action: str, next_tree: str, history: list[str]) -> float:
        """How promising `next_tree` (reached by `action` from `tree`) is for the objective, 1 to 5."""


class WebWorldModel(Protocol):
    def imagine(self, objective: str, url: str, tree: str, action: str, seed: int) -> str:
        """The next tree after `action`."""


# ----------------------------------------------------------------------------------- tree helpers
@dataclass(frozen=True)
class Element:
    element_id: str
    role: str
    name: str
    depth: int
    index: int


def elements(tree: str) -> list[Element]:
    """Parsed (id, role, name) of every tree line, in order."""
    out = []
    for index, line in enumerate(split_header(tree)[1]):
        match = re.match(r"\[(\d+)\] (\S+) (?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\")", line.text)
        if match:
            name = match.group(3) if match.group(3) is not None else (match.group(4) or "")
            out.append(Element(match.group(1), match.group(2), name, line.depth, index))
    return out


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9@.#]+", text.lower())) - _STOPWORDS


def objective_values(objective: str) -> list[str]:
    """Values an objective asks to enter: the text after 'to' / 'named ... with' / 'for', amounts, emails."""
    values = []
    for pattern in (r"\bto (\S+@\S+)$", r"\bto ([A-Z][\w ]+)$", r"named ([A-Z][\w ]+?) with", r"\bfor (\w+)$"):
        values += re.findall(pattern, objective)
    values += re.findall(r"\b\d+\.\d+\b|(?<![#\w])\d+\b", objective)
    return list(dict.fromkeys(v.strip() for v in values))


def value_for_label(objective: str, label: str) -> str | None:
    """The value an objective gives for a field label ('price of Blue Mug to 9.00' -> '9.00' for 'price')."""
    if label == "name":
        match = re.search(r"\bto ([A-Z][\w ]+)$", objective) if "rename" in objective.lower() else None
        match = match or re.search(r"named ([A-Z][\w ]+?)(?: with|$)", objective)
        return match.group(1).strip() if match else None
    label_pattern = rf"\b{re.escape(label)}\b"
    match = re.search(label_pattern + r"(?: of [A-Z][\w ]*?)? to ([\w.@]+)", objective)
    match = match or re.search(label_pattern + r" (?!of\b)([\w.@]+)", objective)
    return match.group(1) if match else None


def entities(objective: str) -> list[str]:
    """Capitalised names in an objective ('Wall Clock', 'Ada Lovelace'), the first word excluded."""
    return re.findall(r"(?<=\s)[A-Z][a-z0-9]+(?: [A-Z0-9][\w]*)+", objective)


def field_value(tree_elements: list[Element], field_element: Element) -> str:
    """The text shown inside a text field (its StaticText child), '' if empty."""
    following = [e for e in tree_elements if e.index == field_element.index + 1]
    if following and following[0].role == "StaticText" and following[0].depth > field_element.depth:
        return following[0].name
    return ""


# --------------------------------------------------------------------------------- local policy
@dataclass
class HeuristicWebPolicy:
    """A small objective-matching policy that runs anywhere (no model): scores the page's elements by the
    words they share with the objective and samples from a softmax over candidate actions.

    Candidates: click/hover an element (score = shared words, plus navigation hints such as 'Orders'
    for an order objective), type an objective value into a text field whose label the objective names
    (or the search box), click a submit button after typing, and `stop [answer]` when the page shows a
    value the question asks for. `temperature` sets how noisy the samples are.
    """

    temperature: float = 1.0
    hints: dict[str, tuple[str, ...]] = field(default_factory=lambda: {
        "products": ("price", "stock", "rename", "product", "delete", "search", "tea", "lamp", "mug"),
        "orders": ("order", "shipped", "pending", "cancel", "total"),
        "customers": ("customer", "email", "newsletter", "subscribe", "unsubscribe"),
        "account": ("profile", "account", "settings"),
    })

    def candidates(self, objective: str, tree: str, history: list[str], url: str = "") -> dict[str, float]:
        """Every candidate action with its score (higher: more likely)."""
        tree_elements = elements(tree)
        goal, lowered = words(objective), objective.lower()
        scores: dict[str, float] = {}
        last = history[-1] if history else ""
        by_id = {e.element_id: e for e in tree_elements}
        last_target = re.match(r"(?:click|type) \[(\d+)\]", last)
        edited_recently = last.startswith("type") or bool(
            last_target and by_id.get(last_target.group(1)) and by_id[last_target.group(1)].role == "checkbox")
        page_text = " ".join(e.name for e in tree_elements)
        missing = [name for name in entities(objective) if name not in page_text]
        for element in tree_elements:
            name_words = words(element.name)
            overlap = len(goal & name_words)
            if element.role in ("link", "button", "checkbox", "menuitem", "tab"):
                score = 2.0 * overlap
                for target, cues in self.hints.items():
                    here = url.startswith(f"/{target}")
                    if element.name.lower() == target and any(cue in lowered for cue in cues) and not here:
                        score += 1.5
                if element.role == "button" and element.name.lower() in ("save", "create", "search") and edited_recently:
                    score += 4.0
                if element.role == "button" and element.name.lower() == "account" and "account" in lowered:
                    scores[f"hover [{element.element_id}]"] = 3.0
                if element.role == "checkbox" and ("newsletter" in lowered):
                    checked = "checked: true" in element.name.lower() or "checked: true" in tree.split(f"[{element.element_id}]")[1].split("\n")[0]
                    wants = "unsubscribe" not in lowered
                    score += 3.0 if checked != wants else -2.0
                if element.role == "button" and "ship" in element.name.lower() and "shipped" in lowered:
                    score += 2.0
                if element.role == "button" and element.name.lower().startswith("cancel order") and "cancel" in lowered:
                    score += 2.0
                if element.role == "button" and "delete" in element.name.lower() and "delete" in lowered:
                    score += 2.0
                if element.role == "button" and element.name.lower() == "confirm delete" and "delete" in lowered:
                    score += 3.0
                scores[f"click [{element.element_id}]"] = max(score, scores.get(f"click [{element.element_id}]", -9.0))
            elif element.role in ("textbox", "searchbox", "combobox"):
                label = element.name.lower()
                current = field_value(tree_elements, element)
                if element.role == "searchbox":
                    wanted = value_for_label(objective, "for") if "search" in lowered else None
                    wanted = wanted or (missing[0] if missing else None)
                    if wanted:
                        scores[f"type [{element.element_id}] [{wanted}] [1]"] = 3.0 + ("search" in lowered)
                    continue
                value = value_for_label(objective, label)
                question = lowered.startswith(("what", "which", "how"))
                if value and current != value and not question:
                    scores[f"type [{element.element_id}] [{value}] [0]"] = 4.0
        for action in scores:
            scores[action] -= 2.0 * history.count(action)  # repeating an action rarely helps
        answer = self.read_answer(objective, tree_elements)
        if answer:
            scores[f"stop [{answer}]"] = 6.0
        return scores

    def read_answer(self, objective: str, tree_elements: list[Element]) -> str | None:
        """A value the question asks for, if this page shows it (None otherwise)."""
        lowered = objective.lower()
        if not lowered.startswith(("what", "which", "how")):
            return None
        heading = next((e.name for e in tree_elements if e.role == "heading"), "")
        if "how many" in lowered:
            subject = [w for w in words(objective)]
            for e in tree_elements:
                if e.role == "StaticText" and ":" in e.name and all(w in e.name.lower() for w in subject):
                    return e.name.split(":", 1)[1].strip()
            return None
        entity = words(objective) - {"price", "stock", "email", "total", "customer", "placed"}
        if not entity or not entity <= words(heading):
            return None
        for attribute in ("price", "stock", "email", "total", "customer"):
            if attribute not in lowered and not (attribute == "customer" and "customer" in lowered):
                continue
            for position, e in enumerate(tree_elements):
                if e.role in ("textbox", "searchbox") and e.name.lower() == attribute:
                    return field_value(tree_elements, e) or None
                if e.role == "StaticText" and e.name.lower().startswith(attribute + ":"):
                    value = e.name.split(":", 1)[1].strip()
                    if value:
                        return value
                    if position + 1 < len(tree_elements):
                        return tree_elements[position + 1].name
        return None

    def propose(self, objective: str, tree: str, url: str, history: list[str], n_samples: int,
                rng: np.random.Generator) -> list[str]:
        scores = self.candidates(objective, tree, history, url)
        if not scores:
            return ["go_back"] * n_samples
        actions = list(scores)
        logits = np.array([scores[a] for a in actions]) / max(self.temperature, 1e-6)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        picks = rng.choice(len(actions), size=n_samples, p=probs)
        return [actions[i] for i in picks]


@dataclass
class HeuristicValueFunction:
    """Likert 1-5 progress of an imagined page towards the objective, read off the page itself:
    the entity's own page is open, fields hold the values the objective asks for, the newsletter box
    is as wanted, a confirmation names the target once the values are in place, and the changed items
    share words with the objective. Changing nothing scores 1; `stop [answer]` scores 5 if the answer is
    on the current page, else 1.5."""

    def score(self, objective: str, tree: str, action: str, next_tree: str, history: list[str]) -> float:
        try:
            parsed = parse_action(action)
        except ActionParseError:
            return 1.0
        if parsed.kind == "stop":
            return 5.0 if parsed.text and parsed.text in tree else 1.5
        changes = item_changes(tree, next_tree)
        if changes.is_empty():
            return 1.0
        page = elements(next_tree)
        names = [e.name for e in page]
        heading = next((e.name for e in page if e.role == "heading"), "")
        targets = entities(objective) + re.findall(r"Order #\d+", objective.replace("order #", "Order #"))
        score = 1.5
        if any(t in heading for t in targets):
            score += 1.0
        elif any(t in name for name in names for t in targets):
            score += 0.5
        values_in_place = True
        for label in ("price", "stock", "name", "email"):
            wanted = value_for_label(objective, label)
            field_element = next((e for e in page if e.role == "textbox" and e.name.lower() == label), None)
            if wanted and field_element is not None:
                holds = field_value(page, field_element) == wanted
                score += 1.0 if holds else 0.0
                values_in_place &= holds
        lowered = objective.lower()
        if "newsletter" in lowered:
            box = next((line for line in next_tree.split("\n") if "checkbox 'Newsletter'" in line), "")
            holds = ("checked: true" in box) == ("unsubscribe" not in lowered)
            score += 1.0 if box and holds else 0.0
            values_in_place &= bool(box) and holds
        changed_text = " ".join(changes.new + changes.updated)
        confirmation = re.search(r"StaticText '((?:Saved|Deleted|Created) [^']*|Order #\d+ (?:shipped|cancelled))'",
                                 changed_text)
        if confirmation and values_in_place and (not targets or any(t in confirmation.group(1) for t in targets)):
            score += 1.5
        goal = words(objective)
        score += 1.0 * len(goal & words(changed_text)) / max(len(goal), 1)
        return float(min(5.0, max(1.0, score)))


# ---------------------------------------------------------------------------------- world models
class LearnedWorldModel:
    """A trained `LMWebWorldModel` as the MPC world model: predicted changes applied to the tree."""

    def __init__(self, lm_world_model: Any) -> None:
        self.lm = lm_world_model

    def imagine(self, objective: str, url: str, tree: str, action: str, seed: int) -> str:
        return self.imagine_batch(objective, url, tree, [action], seed)[0]

    def imagine_batch(self, objective: str, url: str, tree: str, actions: list[str], seed: int) -> list[str]:
        """Next trees of several candidate actions from one state, predicted in one batched sampling call."""
        return [next_tree for next_tree, _ in self.imagine_batch_scored(objective, url, tree, actions, seed)]

    def imagine_batch_scored(self, objective: str, url: str, tree: str, actions: list[str],
                             seed: int) -> list[tuple[str, float]]:
        """`imagine_batch`'s next trees (the same call), each with the model's confidence in its prediction:
        the mean log-probability per predicted token (`LMWebWorldModel.predict_batch_scored`)."""
        from rlvr_sim.envs.web.world_model_env import next_tree_from_prediction

        scored = self.lm.predict_batch_scored(objective, url, actions, tree, seed=seed)
        return [(next_tree_from_prediction(tree, text)[0], confidence) for text, confidence in scored]


class BrowserLookahead:
    """The real browser as the world model (upper bound): `BrowserEnv.simulate` runs the action on a
    scratch page and puts the server state back."""

    def __init__(self, env: Any) -> None:
        self.env = env

    def imagine(self, objective: str, url: str, tree: str, action: str, seed: int) -> str:
        return self.env.simulate(action)


# ------------------------------------------------------------------------------------------ agent
@dataclass
class MPCWebAgent:
    """Propose `n_samples`, keep the `top_k` most frequent, imagine, score, act (see module doc).

    `min_confidence` (None: off, every prediction counts, as in the paper's MPC): the lookahead may
    overrule the policy only where the world model knows the pages it compares. Each prediction comes with
    the model's confidence, its mean log-probability per predicted token (`imagine_batch_scored`, which
    `LearnedWorldModel` has); the agent keeps the policy's most frequent action when that action's own
    prediction is below `min_confidence`, and otherwise picks the best-valued among it and the candidates
    predicted at or above it (`stop` candidates are never imagined and always count). The confidences of
    the last decision are in `last_confidence`. Needs `depth` 1 and `value_samples` 1.
    """

    policy: WebPolicy
    value_function: WebValueFunction
    world_model: WebWorldModel | None = None
    n_samples: int = 20
    top_k: int = 3
    depth: int = 1
    value_samples: int = 1
    seed: int = 0
    min_confidence: float | None = None
    last_scores: dict[str, float] = field(default_factory=dict)
    last_confidence: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.min_confidence is None:
            return
        if self.world_model is not None and not hasattr(self.world_model, "imagine_batch_scored"):
            raise ValueError(f"min_confidence needs a world model that reports its confidence (imagine_batch_scored, "
                             f"e.g. LearnedWorldModel); {type(self.world_model).__name__} does not")
        if self.depth != 1 or self.value_samples != 1:
            raise ValueError(f"min_confidence gates one imagined step per candidate: it needs depth 1 and "
                             f"value_samples 1 (got depth {self.depth}, value_samples {self.value_samples})")

    def ranked_proposals(self, objective: str, tree: str, url: str, history: list[str],
                         rng: np.random.Generator) -> list[str]:
        """The distinct actions among `n_samples` policy samples, most frequent first (keep `[:top_k]`)."""
        return list(self.proposal_counts(objective, tree, url, history, rng))

    def proposal_counts(self, objective: str, tree: str, url: str, history: list[str],
                        rng: np.random.Generator) -> dict[str, int]:
        """How often each distinct action came up among `n_samples` policy samples, most frequent first
        (ties in order of first appearance)."""
        samples = self.policy.propose(objective, tree, url, history, self.n_samples, rng)
        return dict(Counter(samples).most_common())

    def values(self, objective: str, tree: str, history: list[str], candidates: list[str],
               next_trees: dict[str, str]) -> dict[str, float]:
        """Each candidate's value given its next tree (a candidate without one, e.g. `stop`, keeps `tree`)."""
        return {a: self.value_function.score(objective, tree, a, next_trees.get(a, tree), history) for a in candidates}

    @staticmethod
    def best(candidates: list[str], scores: dict[str, float]) -> str:
        """The highest-valued candidate; ties go to the more frequent one."""
        return max(candidates, key=lambda a: (scores[a], -candidates.index(a)))

    @staticmethod
    def gated_best(candidates: list[str], scores: dict[str, float], confidence: dict[str, float],
                   min_confidence: float) -> str:
        """`best` among the candidates the world model is confident about (see the class doc): the policy's
        most frequent candidate (`candidates[0]`) when its own prediction is below `min_confidence`."""
        def known(action: str) -> bool:
            return action not in confidence or confidence[action] >= min_confidence

        if not known(candidates[0]):
            return candidates[0]
        return MPCWebAgent.best([a for a in candidates if known(a)], scores)

    def act(self, objective: str, tree: str, url: str, history: list[str], rng: np.random.Generator) -> str:
        ranked = self.ranked_proposals(objective, tree, url, history, rng)
        self.last_confidence = {}
        if self.world_model is None or len(ranked) == 1:
            self.last_scores = {ranked[0]: float("nan")}
            return ranked[0]
        candidates = ranked[: self.top_k]
        batchable = [a for a in candidates if not a.startswith("stop")]
        gated = self.min_confidence is not None  # __post_init__ checked depth 1 and a scoring world model
        if gated or (self.depth == 1 and self.value_samples == 1 and hasattr(self.world_model, "imagine_batch")
                     and batchable):
            imagined: dict[str, str] = {}
            if batchable:
                seed = int(rng.integers(2**31 - 1))
                if gated:
                    scored = self.world_model.imagine_batch_scored(objective, url, tree, batchable, seed)  # type: ignore[attr-defined]
                    imagined = {a: next_tree for a, (next_tree, _) in zip(batchable, scored)}
                    self.last_confidence = {a: confidence for a, (_, confidence) in zip(batchable, scored)}
                else:
                    imagined = dict(zip(batchable, self.world_model.imagine_batch(objective, url, tree, batchable, seed)))  # type: ignore[attr-defined]
            self.last_scores = self.values(objective, tree, history, candidates, imagined)
            if gated:
                return self.gated_best(candidates, self.last_scores, self.last_confidence, self.min_confidence)  # type: ignore[arg-type]
            return self.best(candidates, self.last_scores)
        scores = {}
        for action in candidates:
            total = 0.0
            for repeat in range(self.value_samples):
                seed = int(rng.integers(2**31 - 1)) + repeat
                total += self._rollout_value(objective, url, tree, action, history, seed, rng)
            scores[action] = total / self.value_samples
        self.last_scores = scores
        return self.best(candidates, scores)

    def _rollout_value(self, objective: str, url: str, tree: str, action: str, history: list[str], seed: int,
                       rng: np.random.Generator) -> float:
        current, step_action, imagined_history = tree, action, list(history)
        value = 1.0
        for level in range(self.depth):
            if step_action.startswith("stop"):
                return self.value_function.score(objective, current, step_action, current, imagined_history)
            assert self.world_model is not None
            nxt = self.world_model.imagine(objective, url, current, step_action, seed + level)
            value = self.value_function.score(objective, current, step_action, nxt, imagined_history)
            imagined_history.append(step_action)
            current = nxt
            if level + 1 < self.depth:
                step_action = Counter(self.policy.propose(objective, current, url, imagined_history, 5, rng)).most_common(1)[0][0]
        return value


def run_episode(env: Any, agent: MPCWebAgent, task_id: int, seed: int = 0, max_steps: int = 10) -> dict[str, Any]:
    """One episode of `agent` in a `BrowserEnv`; returns success, steps and the action trace."""
    rng = np.random.default_rng(seed)
    tree, info = env.reset(seed=seed, options={"task_id": task_id})
    history: list[str] = []
    trace = []
    success = False
    for _ in range(max_steps):
        action = agent.act(info["objective"], tree, info["url"], history, rng)
        tree, reward, terminated, truncated, info = env.step(action)
        trace.append({"action": action, "scores": dict(agent.last_scores), "error": info.get("action_error")})
        if getattr(agent, "last_confidence", None):
            trace[-1]["confidence"] = dict(agent.last_confidence)
        history.append(action)
        success = reward > 0
        if terminated or truncated:
            break
    return {"task_id": task_id, "success": bool(success), "steps": len(history), "trace": trace}
