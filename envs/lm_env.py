"""One base for the learned simulators: `RLVRWorld-TextGame-v0`, `RLVRWorld-Web-v0` and `RLVRWorld-Video-v0`.

A text world model is a causal LM plus its task's codec (`rlvr_sim.tasks.text_transition`): the codec
turns a (state, action) query into prompt ids, the LM generates an answer, the codec decodes it against
the state into the next state (or a parse error). `LMWorldModel` holds the loaded checkpoint and
generates through `rlvr_sim.rl.sampler.sample` (built on `DecodeSession`), the decoding loop that GRPO
and the evaluations use, so an env step predicts exactly what `evaluations/textgame.py` and
`evaluations/web.py` score for the same prompt and seed.

`LMWorldModelEnv` owns what the envs share: render_mode and temperature checks, seeding (sample seeds
drawn from the env's `np_random` in [0, SEED_BOUND), so `reset(seed=s)` replays a rollout exactly, and
reported in `info["sample_seed"]`), and the step skeleton. A text subclass says how a step becomes a query
(`_begin_step`) and how a prediction becomes the next observation (`_finish_step`); each step draws a seed.
The video env (`envs/video/world_model_env.py`) keeps a KV-cache decoding session from step to step
(`DecodeSession`, the sampler's loop, with the actions as forced chunks), so it draws one seed per episode
at reset and overrides `step`; `vector_seeds` gives both kinds of vector env the same sub-env seeds.
`LMWorldModelVectorEnv` runs N text envs over one loaded model and predicts all N queries of a step in
one batched generation (one LM call per token for all N worlds): what `gym.make_vec(id, num_envs=N)`
returns for both text ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

SEED_BOUND = 2**31  # per-step sample seeds are drawn from [0, SEED_BOUND) with the env's np_random


def vector_seeds(seed: int | Sequence[int | None] | None, num_envs: int) -> list[int | None]:
    """The sub-env seeds of a vector env's `reset(seed=...)`: `seed + i` for an int (so sub-env i replays a
    single env seeded `seed + i`), the list itself for a list of `num_envs`, all None for None."""
    if seed is None or isinstance(seed, (int, np.integer)):
        return [None if seed is None else int(seed) + i for i in range(num_envs)]
    seeds = list(seed)
    if len(seeds) != num_envs:
        raise ValueError(f"got {len(seeds)} seeds for {num_envs} envs")
    return seeds


def check_render_mode(render_mode: str | None, modes: Sequence[str]) -> str | None:
    """`render_mode` if it is None or one of `modes`, else a clear error (every world-model env's check)."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be None or one of {list(modes)}, got {render_mode!r}")
    return render_mode


def check_temperature(temperature: float) -> float:
    """A sampling temperature (0 = greedy) as a float, or a clear error when negative."""
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    return float(temperature)


@dataclass
class Prediction:
    """One world-model step: the decoded answer, the next state (None if unparseable) and why not."""

    text: str
    state: Any | None
    error: str | None


def load_lm(checkpoint: str | Path, device: str = "cpu") -> tuple[torch.nn.Module, Any, dict[str, Any]]:
    """(model in eval mode, tokenizer, the checkpoint's task_args) of a text world-model checkpoint."""
    from rlvr_sim.models.lm import load_model

    model, tokenizer, meta = load_model(str(checkpoint))
    if tokenizer is None:
        raise ValueError(f"{checkpoint} has no tokenizer files; a text world model needs its tokenizer")
    if tokenizer.pad_token_id is None and tokenizer.eos_token is not None:  # HF LMs without a pad token
        tokenizer.pad_token = tokenizer.eos_token
    task_args = (meta.get("task_args") or {}) if isinstance(meta, dict) else {}
    return model.to(device).eval(), tokenizer, task_args


class LMWorldModel:
    """A causal LM and a text codec that predicts next states, in batches, through the shared sampler.

    The codec is the task's (`rlvr_sim.tasks.base.WorldModelCodec`): `prompt_ids(query)` is its q(s, a)
    and `decode_state(query, text)` its decoding of an answer against the query's state; a subclass
    overrides them only to read other prompts (e.g. a data set's own). `predict_next` (and `generate` under
    it) is what the envs, `evaluations/textgame.py`, the text-game viewer and the web MPC agent call, and
    `evaluations/web.py` calls `generate` on the data set's prompts; the tests check that they give the
    same tokens.
    """

    def __init__(self, model: torch.nn.Module, codec: Any, checkpoint: str | Path | None = None,
                 temperature: float = 0.0) -> None:
        self.model = model.eval()
        self.codec = codec
        self.tokenizer = codec.tokenizer
        self.checkpoint = None if checkpoint is None else str(checkpoint)
        self.temperature = temperature
        spec = codec.generation_spec()
        self.max_new_tokens = spec.max_new_tokens
        self.stop_token_ids = list(spec.stop_token_ids)
        self.pad_token_id = codec.pad_token_id if codec.pad_token_id is not None else codec.eos_token_id
        self.max_positions = int(getattr(model.config, "max_position_embeddings", 1 << 30))

    # ------------------------------------------------------------------------------- codec hooks
    def prompt_ids(self, query: Any) -> list[int]:
        return self.codec.prompt_ids(query)

    def decode_state(self, query: Any, text: str) -> tuple[Any | None, str | None]:
        return self.codec.decode_state(query, text)

    # -------------------------------------------------------------------------------- generation
    def generate(self, prompts: Sequence[Sequence[int]], temperature: float | None = None,
                 seeds: Sequence[int] | None = None, seed: int = 0, group_size: int = 1) -> list[str | None]:
        """Decoded answers, `group_size` per prompt (groups contiguous), in one batched `sample` call.

        Prompt i is seeded with `seeds[i]`, else as `sample(..., seed=seed)` seeds it, so a prompt's
        answer does not depend on the other prompts of the batch. A prompt that leaves no room for
        `max_new_tokens` within the model's positions is not run: its answers are None.
        """
        return [text for text, _ in self.generate_scored(prompts, temperature, seeds, seed, group_size)]

    def generate_scored(self, prompts: Sequence[Sequence[int]], temperature: float | None = None,
                        seeds: Sequence[int] | None = None, seed: int = 0,
                        group_size: int = 1) -> list[tuple[str | None, float | None]]:
        """`generate`'s answers, each with the model's confidence in it: the mean log-probability per
        generated token (stop token included) under the model's own distribution (at temperature 0, the
        log-probability of each greedy token; otherwise under the tempered distribution sampled from).
        The same call, so the same tokens as `generate`; (None, None) for a prompt that is not run."""
        from rlvr_sim.rl.sampler import prompt_seeds, sample

        temperature = self.temperature if temperature is None else temperature
        seeds = list(seeds) if seeds is not None else prompt_seeds(seed, len(prompts))
        if len(seeds) != len(prompts):
            raise ValueError(f"got {len(seeds)} seeds for {len(prompts)} prompts")
        runnable = [i for i, p in enumerate(prompts) if len(p) + self.max_new_tokens <= self.max_positions]
        texts: list[tuple[str | None, float | None]] = [(None, None)] * (len(prompts) * group_size)
        if runnable:
            # inference_mode: no autograd bookkeeping on the cache tensors (no training happens here)
            with torch.inference_mode():
                out = sample(self.model, [prompts[i] for i in runnable], group_size=group_size,
                             max_new_tokens=self.max_new_tokens, temperature=temperature,
                             stop_token_ids=self.stop_token_ids, pad_token_id=self.pad_token_id,
                             seeds=[seeds[i] for i in runnable])
            completions = out.completions()
            sampled = out.loss_mask.float()
            confidence = (out.logprobs * sampled).sum(-1) / sampled.sum(-1).clamp(min=1.0)
            for k, i in enumerate(runnable):
                for g in range(group_size):
                    row = k * group_size + g
                    texts[i * group_size + g] = (self.codec.decode(completions[row]), float(confidence[row]))
        return texts

    def too_long(self, prompt: Sequence[int]) -> str:
        return (f"prompt of {len(prompt)} tokens exceeds the model's {self.max_positions} positions "
                f"(with {self.max_new_tokens} new tokens)")

    def generator_seed(self, seed: int) -> int:
        """The sampling generator's seed for a query given `seed` (identity; a modality may follow its
        evaluation's convention instead, so that an env's `info["sample_seed"]` replays there)."""
        return seed

    def predict_next(self, queries: Sequence[Any], temperature: float | None = None,
                     seeds: Sequence[int] | None = None) -> list[Prediction]:
        """Next states of a batch of (state, action) queries, in one batched generation (query i sampled
        with `generator_seed(seeds[i])`; greedy at temperature 0)."""
        prompts = [self.prompt_ids(q) for q in queries]
        texts = self.generate(prompts, temperature, None if seeds is None else [self.generator_seed(s) for s in seeds])
        predictions = []
        for query, prompt, text in zip(queries, prompts, texts):
            if text is None:
                predictions.append(Prediction("", None, self.too_long(prompt)))
            else:
                predictions.append(Prediction(text, *self.decode_state(query, text)))
        return predictions


class LMWorldModelEnv(gym.Env):
    """Base of the text world-model envs: checks, seeding and the step skeleton (see the module docstring).

    Subclasses set `metadata`, the spaces, `world_model` (an `LMWorldModel` or anything with its
    `predict_next`), call `_check_render_mode` and `_set_temperature`, and implement `_start(options) -> (obs, info)`,
    `_begin_step(action) -> query or None` (None: the step needs no prediction, e.g. a stop action),
    `_finish_step(query, prediction or None, sample_seed) -> (obs, reward, terminated, truncated, info)`
    and `_observation() -> str | None`.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}

    world_model: Any
    temperature: float

    def _check_render_mode(self, render_mode: str | None) -> None:
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])

    def _set_temperature(self, temperature: float) -> None:
        self.temperature = check_temperature(temperature)

    # --------------------------------------------------------------------------- subclass hooks
    def _start(self, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        raise NotImplementedError

    def _begin_step(self, action: Any) -> Any | None:
        raise NotImplementedError

    def _finish_step(self, query: Any, prediction: Prediction | None,
                     sample_seed: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        raise NotImplementedError

    def _observation(self) -> str | None:
        raise NotImplementedError

    # ------------------------------------------------------------------------------ shared logic
    def _predict(self, queries: Sequence[Any], seeds: Sequence[int]) -> list[Prediction]:
        """One batched prediction for queries of envs that share this env's world model and temperature."""
        return self.world_model.predict_next(list(queries), self.temperature, list(seeds))

    def _draw_sample_seed(self) -> int:
        """Every step draws one seed, predicted or not, so the env's random stream never depends on the model."""
        return int(self.np_random.integers(SEED_BOUND))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return self._start(options or {})

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        query = self._begin_step(action)
        sample_seed = self._draw_sample_seed()
        prediction = self._predict([query], [sample_seed])[0] if query is not None else None
        return self._finish_step(query, prediction, sample_seed)

    def render(self) -> str | None:
        return self._observation() if self.render_mode == "ansi" else None


class LMWorldModelVectorEnv(VectorEnv):
    """N text world-model envs over one loaded model, each step predicted as one batch.

    Sub-env i is an `env_class` instance sharing the first one's world model; seeded with `seed + i` it
    gives what a single env seeded `seed + i` gives. Episodes end independently; autoreset is NEXT_STEP
    (the step after an env's episode ends returns its reset observation, and its action is ignored).
    Observations are tuples of strings; infos are Gymnasium's vector infos (arrays with `_key` masks).
    """

    env_class: ClassVar[type[LMWorldModelEnv]]
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        first = self.env_class(**kwargs)
        shared = {k: v for k, v in kwargs.items() if k != "checkpoint"}
        shared["world_model"] = first.world_model
        self.envs = [first] + [self.env_class(**shared) for _ in range(num_envs - 1)]
        self.num_envs, self.render_mode = num_envs, first.render_mode
        self.single_observation_space, self.single_action_space = first.observation_space, first.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.world_model = first.world_model
        self._autoreset = np.zeros(num_envs, dtype=bool)
        self._observations: list[Any] = [None] * num_envs
        self._started = False

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
        seeds = vector_seeds(seed, self.num_envs)
        options = dict(options or {})
        mask = np.asarray(options.pop("reset_mask", np.ones(self.num_envs, dtype=bool)), dtype=bool)
        if mask.shape != (self.num_envs,):
            raise ValueError(f"reset_mask must have shape ({self.num_envs},), got {mask.shape}")
        if not self._started and not mask.all():
            raise ValueError("the first reset must reset every sub-env")
        infos: dict[str, Any] = {}
        for i, env in enumerate(self.envs):
            if mask[i]:
                self._observations[i], info = env.reset(seed=seeds[i], options=options)
                infos = self._add_info(infos, info, i)
                self._autoreset[i] = False
        self._started = True
        return tuple(self._observations), infos

    def step(self, actions: Sequence[Any]) -> tuple[tuple[Any, ...], np.ndarray, np.ndarray, np.ndarray, dict]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if len(actions) != self.num_envs:
            raise ValueError(f"got {len(actions)} actions for {self.num_envs} envs")
        rewards = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        infos: dict[str, Any] = {}
        stepping, queries, seeds = [], [], []
        for i, env in enumerate(self.envs):
            if self._autoreset[i]:
                self._observations[i], info = env.reset()
                infos = self._add_info(infos, info, i)
            else:
                stepping.append(i)
                queries.append(env._begin_step(actions[i]))
                seeds.append(env._draw_sample_seed())
        asked = [k for k, q in enumerate(queries) if q is not None]
        predictions: list[Prediction | None] = [None] * len(queries)
        if asked:  # the one batched LM call of this step, for every world that needs a prediction
            for k, prediction in zip(asked, self.envs[0]._predict([queries[k] for k in asked], [seeds[k] for k in asked])):
                predictions[k] = prediction
        for k, i in enumerate(stepping):
            obs, reward, term, trunc, info = self.envs[i]._finish_step(queries[k], predictions[k], seeds[k])
            self._observations[i], rewards[i], terminated[i], truncated[i] = obs, reward, term, trunc
            infos = self._add_info(infos, info, i)
        self._autoreset = terminated | truncated
        return tuple(self._observations), rewards, terminated, truncated, infos

    def render(self) -> tuple[str | None, ...] | None:
        return tuple(env.render() for env in self.envs) if self.render_mode == "ansi" else None

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()
