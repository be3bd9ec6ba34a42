"""LLM-backed parts for the MPC web agent: any OpenAI-compatible chat endpoint, or a Hugging Face causal LM.

`ChatBackend` is the one seam: `complete(messages, n, temperature, seed) -> list[str]`.
- `OpenAIChatBackend` POSTs to `<base_url>/chat/completions` (OpenAI, vLLM, llama.cpp server, ...), with
  the standard library only; the key comes from the argument or $OPENAI_API_KEY.
- `HFChatBackend` runs a local `transformers` causal LM (chat template if the tokenizer has one).
On top of a backend: `LLMWebPolicy` (WebArena-style action prompt; the action is read from the last
``` block, else the first line that parses), `LLMValueFunction` (Likert 1-5; an unreadable answer scores
1.0) and `LLMWorldModel` (RLVR-World-style state-change prompt; the predicted items are applied to the tree).
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from typing import Any, Protocol

import numpy as np
from rlvr_sim.envs.web.actions import ActionParseError, parse_action


class ChatBackend(Protocol):
    def complete(self, messages: list[dict[str, str]], n: int = 1, temperature: float = 1.0, seed: int = 0) -> list[str]:
        """`n` assistant replies to a chat."""


class ChatBackendError(RuntimeError):
    """The chat endpoint failed or answered in an unexpected shape."""


class OpenAIChatBackend:
    """An OpenAI-compatible `/chat/completions` endpoint (no SDK needed)."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 60.0,
                 max_tokens: int = 512) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.timeout, self.max_tokens = model, timeout, max_tokens
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")

    def complete(self, messages: list[dict[str, str]], n: int = 1, temperature: float = 1.0, seed: int = 0) -> list[str]:
        body = {"model": self.model, "messages": messages, "n": n, "temperature": temperature, "seed": seed,
                "max_tokens": self.max_tokens}
        replies = self._post(body)
        while len(replies) < n:  # servers that ignore `n` return one choice: ask again
            body = body | {"n": 1, "seed": body["seed"] + 1}
            replies += self._post(body)
        return replies[:n]

    def _post(self, body: dict[str, Any]) -> list[str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = json.loads(response.read().decode())
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise ChatBackendError(f"chat endpoint {self.url} failed: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise ChatBackendError(f"chat endpoint {self.url} returned non-JSON: {exc}") from exc
        try:
            replies = [choice["message"]["content"] or "" for choice in payload["choices"]]
        except (KeyError, TypeError) as exc:
            raise ChatBackendError(f"chat endpoint {self.url} returned no choices[].message.content: {payload!r:.200}") from exc
        if not replies:
            raise ChatBackendError(f"chat endpoint {self.url} returned no choices")
        return replies


class HFChatBackend:
    """A local Hugging Face causal LM (a model id already on disk, a directory, or model + tokenizer objects)."""

    def __init__(self, model: Any, tokenizer: Any = None, max_new_tokens: int = 256) -> None:
        if isinstance(model, str):
            from rlvr_sim.models.lm import load_model

            model, loaded_tokenizer, _ = load_model(model)
            tokenizer = tokenizer or loaded_tokenizer
        if tokenizer is None:
            raise ValueError("HFChatBackend needs a tokenizer (none was found with the model)")
        self.model, self.tokenizer, self.max_new_tokens = model.eval(), tokenizer, max_new_tokens

    def _prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        if getattr(self.tokenizer, "chat_template", None):
            ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
            return list(ids["input_ids"] if isinstance(ids, dict) else ids)
        text = "".join(f"{m['role'].upper()}: {m['content']}\n" for m in messages) + "ASSISTANT: "
        return self.tokenizer.encode(text, add_special_tokens=False)

    def complete(self, messages: list[dict[str, str]], n: int = 1, temperature: float = 1.0, seed: int = 0) -> list[str]:
        import torch

        from rlvr_sim.rl.sampler import sample

        stop = [self.tokenizer.eos_token_id] if self.tokenizer.eos_token_id is not None else []
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else (stop[0] if stop else 0)
        with torch.no_grad():
            out = sample(self.model, [self._prompt_ids(messages)], group_size=n, max_new_tokens=self.max_new_tokens,
                         temperature=temperature, stop_token_ids=stop, pad_token_id=pad, seed=seed)
        return [self.tokenizer.decode(c, skip_special_tokens=True) for c in out.completions()]


# ------------------------------------------------------------------------------------------ prompts
POLICY_SYSTEM = (
    "You are a web agent. You see a web page as an accessibility tree: one element a line, "
    "`[id] role 'name' properties`. Actions: click [id], type [id] [text] [1 to press Enter after, 0 not], "
    "hover [id], scroll [up|down], press [keys], goto [url], go_back, go_forward, stop [answer] "
    "(stop with the answer when the objective asks a question, or stop [] when the task is done). "
    "Think briefly, then give exactly one action in a ``` block."
)
VALUE_SYSTEM = (
    "You judge a web agent's progress. Given the objective, the action taken and the page that results, "
    "rate how likely the agent is on track to complete the objective, from 1 (wrong direction) to 5 "
    "(objective complete or one obvious step away). Answer with the number only."
)
WORLD_MODEL_SYSTEM = (
    "You predict how a web page's accessibility tree changes after an action. Answer in three sections, "
    "'New items:', 'Deleted items:', 'Updated items:', one tree line per item ([id] role 'name' properties), "
    "'None' for an empty section."
)


def extract_action(reply: str) -> str | None:
    """The action in a reply: the last ``` block that parses, else the first line that parses."""
    for block in reversed(re.findall(r"```(?:\w+\n)?(.*?)```", reply, re.DOTALL)):
        try:
            return parse_action(block.strip()).to_text()
        except ActionParseError:
            continue
    for line in reply.splitlines():
        try:
            return parse_action(line.strip()).to_text()
        except ActionParseError:
            continue
    return None


def extract_likert(reply: str) -> float | None:
    """The first number in a reply that lies in [1, 5] (decimals allowed), None if there is none. Numbers are
    read whole: "5.5" and "5.3e-2" are out of range, not 5 and 5.3."""
    for match in re.finditer(r"(?<![\d.])(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\d.])", reply):
        value = float(match.group(1))
        if 1.0 <= value <= 5.0:
            return value
    return None


class LLMWebPolicy:
    """Sample actions from a chat model; replies without a readable action are dropped (if none is
    readable the policy falls back to `go_back`)."""

    def __init__(self, backend: ChatBackend, temperature: float = 1.0, max_history: int = 5) -> None:
        self.backend, self.temperature, self.max_history = backend, temperature, max_history

    def propose(self, objective: str, tree: str, url: str, history: list[str], n_samples: int,
                rng: np.random.Generator) -> list[str]:
        previous = "\n".join(history[-self.max_history:]) or "None"
        user = f"OBJECTIVE: {objective}\nURL: {url}\nPREVIOUS ACTIONS:\n{previous}\nOBSERVATION:\n{tree}"
        replies = self.backend.complete([{"role": "system", "content": POLICY_SYSTEM}, {"role": "user", "content": user}],
                                        n=n_samples, temperature=self.temperature, seed=int(rng.integers(2**31 - 1)))
        actions = [a for a in (extract_action(r) for r in replies) if a is not None]
        return actions or ["go_back"] * n_samples


class LLMValueFunction:
    """Likert 1-5 from a chat model, averaged over `samples` replies; unreadable replies count 1.0."""

    def __init__(self, backend: ChatBackend, samples: int = 1, temperature: float = 0.0, max_tree_chars: int = 6000) -> None:
        self.backend, self.samples, self.temperature, self.max_tree_chars = backend, samples, temperature, max_tree_chars

    def score(self, objective: str, tree: str, action: str, next_tree: str, history: list[str]) -> float:
        user = (f"OBJECTIVE: {objective}\nPREVIOUS ACTIONS: {', '.join(history[-5:]) or 'None'}\nACTION: {action}\n"
                f"RESULTING PAGE:\n{next_tree[: self.max_tree_chars]}")
        replies = self.backend.complete([{"role": "system", "content": VALUE_SYSTEM}, {"role": "user", "content": user}],
                                        n=self.samples, temperature=self.temperature)
        values = [extract_likert(r) for r in replies]
        return float(np.mean([v if v is not None else 1.0 for v in values]))


class LLMWorldModel:
    """A chat model as the MPC world model: its predicted item changes are applied to the tree."""

    def __init__(self, backend: ChatBackend, temperature: float = 0.0) -> None:
        self.backend, self.temperature = backend, temperature

    def imagine(self, objective: str, url: str, tree: str, action: str, seed: int) -> str:
        from rlvr_sim.envs.web.world_model_env import next_tree_from_prediction

        user = f"URL: {url}\nOBJECTIVE: {objective}\nCURRENT OBSERVATION:\n{tree}\nCURRENT ACTION: {action}"
        reply = self.backend.complete([{"role": "system", "content": WORLD_MODEL_SYSTEM},
                                       {"role": "user", "content": user}], n=1, temperature=self.temperature, seed=seed)[0]
        return next_tree_from_prediction(tree, reply)[0]
