"""Seconds per GRPO step: our trainer (`rlvr_sim.rl.trainer.Trainer`, mode "grpo") against TRL's
`GRPOTrainer` at equal settings, on CPU in fp32.

Both start from the same tiny Llama (built from one seed, saved to a temp dir and loaded by both), see the
same prompts (the addition task's training split, optionally behind a fixed filler prefix that makes the
prompts world-model long), score with the same exact-match reward (`AdditionTask.reward` on the token ids),
and use the same group size, prompts per step, max new tokens, steps, lr (constant), AdamW, grad-norm clip,
k3 KL coefficient, clip epsilon, token-mean loss (TRL `loss_type="dapo"`), one PPO iteration per batch,
temperature 1.0 without top-k/top-p, and one torch thread. Neither evaluates, checkpoints mid-run or logs
per step. A step is timed from the end of the previous step to the end of this one (sampling, reward,
reference and policy passes, optimizer); the first step is excluded. The two runs alternate in one process.

Two length variants per shape: `fixed_length` (equal work: no stop on either side, every completion is
`max_new_tokens` long: ours samples without stop ids, TRL's `generate` gets `min_new_tokens` =
`max_completion_length`, which suppresses <eos>) and `natural_stop` (both stop at <eos>; lengths differ a
little as the samples differ). Each reports seconds per step and completion tokens per second.

    python benchmarks/grpo_vs_trl.py --out benchmarks/results/grpo_vs_trl.json
    python benchmarks/grpo_vs_trl.py --quick
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import platform
import random
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from rlvr_sim.config import load_config
from rlvr_sim.models.lm import build_model, load_model, save_checkpoint
from rlvr_sim.reporting import emit_json
from rlvr_sim.rl.trainer import Trainer
from rlvr_sim.tasks.addition import AdditionTask
from rlvr_sim.tasks.base import Example

FILLER_SYMBOLS = "0123456789+="


class PrefixedAdditionTask(AdditionTask):
    """The addition task with a fixed pseudo-random filler of `prefix_tokens` symbols between <bos> and the
    sum: long, world-model-like prompts with the same short exact-match answers and reward."""

    name = "addition_prefixed"

    def __init__(self, tokenizer: Any = None, prefix_tokens: int = 0, prefix_seed: int = 1234, **kwargs: Any) -> None:
        super().__init__(tokenizer=tokenizer, **kwargs)
        if prefix_tokens < 0:
            raise ValueError(f"prefix_tokens must be >= 0, got {prefix_tokens}")
        rng = random.Random(prefix_seed)
        filler = "".join(rng.choice(FILLER_SYMBOLS) for _ in range(prefix_tokens))
        self.prefix_ids = self.tokenizer.encode(filler, add_special_tokens=False) if filler else []

    def _example(self, a: int, b: int) -> Example:
        example = super()._example(a, b)
        example.prompt_ids = example.prompt_ids[:1] + self.prefix_ids + example.prompt_ids[1:]
        return example


class TimedTrainer(Trainer):
    """Our Trainer on a given task object, recording the wall-clock time at the end of every GRPO step."""

    def __init__(self, config: Any, task: AdditionTask, fixed_length: bool = False) -> None:
        super().__init__(config, "grpo", command="benchmarks/grpo_vs_trl.py")
        self.task = task
        self.train_examples = task.examples("train")
        self.spec = task.generation_spec()
        if fixed_length:  # no stop token: every completion is max_new_tokens long
            self.spec = dataclasses.replace(self.spec, stop_token_ids=[])
        self.step_ends: list[float] = []

    def train_step(self) -> dict[str, float]:
        metrics = super().train_step()
        self.step_ends.append(time.perf_counter())
        return metrics


def step_seconds(step_ends: list[float]) -> list[float]:
    """Durations of steps 2..N (end of step i-1 to end of step i)."""
    return [b - a for a, b in zip(step_ends, step_ends[1:])]


def summarise(step_ends: list[float], rewards: list[float], lengths: list[float], rows: int) -> dict[str, Any]:
    """Per-run figures; `rows` = prompts x group (completions per step)."""
    seconds = step_seconds(step_ends)
    tail = max(1, len(rewards) // 4)
    timed_tokens = [n * rows for n in lengths[1:len(seconds) + 1]]  # completion tokens of steps 2..N
    return {
        "median_seconds_per_step": statistics.median(seconds) if seconds else None,
        "seconds_per_step": seconds,
        "completion_tokens_per_step": timed_tokens,
        "tokens_per_second": sum(timed_tokens) / sum(seconds) if seconds else None,
        "mean_reward_last_steps": sum(rewards[-tail:]) / tail,
        "last_steps_averaged": tail,
        "reward_per_step": rewards,
        "mean_completion_tokens_per_step": lengths,
    }


def run_ours(init_dir: Path, task: AdditionTask, settings: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    config = load_config(
        None, [], task="addition", task_args={"digits": task.digits}, model={"name_or_path": str(init_dir)},
        output_dir=str(out_dir), seed=settings["seed"], steps=settings["steps"], lr=settings["lr"],
        batch_size=settings["prompts"], micro_batch_size=settings["prompts"], group_size=settings["group_size"],
        kl_coef=settings["kl_coef"], clip_eps=settings["clip_eps"], temperature=1.0,
        max_new_tokens=settings["max_new_tokens"], eval_examples=0, progress=False, mini_batches=1,
    )
    trainer = TimedTrainer(config, task, fixed_length=settings["variant"] == "fixed_length")
    summary = trainer.run()
    history = summary["history"]
    return summarise(trainer.step_ends, [h["reward"] for h in history], [h["response_tokens"] for h in history],
                     settings["prompts"] * settings["group_size"])


def run_trl(init_dir: Path, task: AdditionTask, settings: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    model, tokenizer, _ = load_model(init_dir)
    examples = task.examples("train")
    texts = [tokenizer.decode(e.prompt_ids, skip_special_tokens=False) for e in examples]
    for text, example in zip(texts[:32], examples):
        if tokenizer(text)["input_ids"] != example.prompt_ids:
            raise RuntimeError(f"TRL would tokenize prompt {text!r} differently from the task's prompt ids")
    dataset = Dataset.from_dict({"prompt": texts, "answer_sum": [e.metadata["sum"] for e in examples]})
    rewards_per_step: list[float] = []
    lengths_per_step: list[float] = []

    def exact_match_reward(prompts: list[str], completions: list[str], completion_ids: list[list[int]],
                           answer_sum: list[int], **_: Any) -> list[float]:
        """The task's reward on the token ids TRL generated (trimmed after the first <eos>, as ours)."""
        rewards = task.reward([[] for _ in completion_ids], completion_ids, [{"sum": s} for s in answer_sum])
        rewards_per_step.append(sum(rewards) / len(rewards))
        lengths_per_step.append(sum(len(c) for c in completion_ids) / len(completion_ids))
        return rewards

    step_ends: list[float] = []

    class StepTimer(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            step_ends.append(time.perf_counter())

    config = GRPOConfig(
        output_dir=str(out_dir), seed=settings["seed"], max_steps=settings["steps"],
        learning_rate=settings["lr"], lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0,
        adam_beta1=0.9, adam_beta2=0.999, optim="adamw_torch", max_grad_norm=1.0,
        per_device_train_batch_size=settings["prompts"] * settings["group_size"], gradient_accumulation_steps=1,
        num_generations=settings["group_size"], max_completion_length=settings["max_new_tokens"],
        temperature=1.0, top_k=0, top_p=1.0, beta=settings["kl_coef"], epsilon=settings["clip_eps"],
        loss_type="dapo", num_iterations=1, scale_rewards="group", use_vllm=False,
        generation_kwargs={"min_new_tokens": settings["max_new_tokens"]} if settings["variant"] == "fixed_length" else None,
        use_cpu=True, bf16=False, fp16=False, report_to="none", save_strategy="no", eval_strategy="no",
        logging_steps=10**6, disable_tqdm=True, log_completions=False, dataloader_num_workers=0,
    )
    trainer = GRPOTrainer(model=model, reward_funcs=[exact_match_reward], args=config, train_dataset=dataset,
                          processing_class=tokenizer, callbacks=[StepTimer()])
    with contextlib.redirect_stdout(sys.stderr):  # transformers prints a training summary dict to stdout
        trainer.train()
    if len(rewards_per_step) != settings["steps"]:
        raise RuntimeError(f"TRL scored {len(rewards_per_step)} batches in {settings['steps']} steps")
    return summarise(step_ends, rewards_per_step, lengths_per_step, settings["prompts"] * settings["group_size"])


def compare(settings: dict[str, Any], model_preset: str, model_overrides: dict[str, Any], rounds: int,
            work_dir: Path) -> dict[str, Any]:
    """One shape: build and save the initial model once, then run ours and TRL `rounds` times each, alternating."""
    task = PrefixedAdditionTask(digits=settings["digits"], prefix_tokens=settings["prefix_tokens"],
                                seed=settings["seed"])
    prompt_len = len(task.examples("train")[0].prompt_ids)
    torch.manual_seed(settings["seed"])
    model = build_model(model_preset, vocab_size=task.vocab_size,
                        max_positions=prompt_len + settings["max_new_tokens"] + 8, **model_overrides)
    init_dir = save_checkpoint(work_dir / f"init-{settings['name']}-{settings['variant']}", model, task.tokenizer)
    runs: dict[str, list[dict[str, Any]]] = {"ours": [], "trl": []}
    for r in range(rounds):
        order = ["ours", "trl"] if r % 2 == 0 else ["trl", "ours"]
        for name in order:
            out_dir = work_dir / f"{settings['name']}-{settings['variant']}-{name}-{r}"
            runner = run_ours if name == "ours" else run_trl
            runs[name].append(runner(init_dir, task, settings, out_dir))
    result: dict[str, Any] = {**settings, "prompt_tokens": prompt_len}
    for name, results in runs.items():
        all_seconds = [s for res in results for s in res["seconds_per_step"]]
        all_tokens = [t for res in results for t in res["completion_tokens_per_step"]]
        result[name] = {
            "median_seconds_per_step": statistics.median(all_seconds),
            "mean_completion_tokens_per_step": statistics.mean(all_tokens),
            "tokens_per_second": sum(all_tokens) / sum(all_seconds),
            "mean_reward_last_steps": statistics.mean(res["mean_reward_last_steps"] for res in results),
            "rounds": results,
        }
    result["ratio_trl_over_ours"] = result["trl"]["median_seconds_per_step"] / result["ours"]["median_seconds_per_step"]
    result["tokens_per_second_ratio_ours_over_trl"] = result["ours"]["tokens_per_second"] / result["trl"]["tokens_per_second"]
    return result


VARIANTS = ("fixed_length", "natural_stop")


def shapes(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every shape in every chosen length variant."""
    variants = [args.variant] if args.variant else list(VARIANTS)
    return [{**shape, "variant": v} for shape in base_shapes(args) for v in variants]


def base_shapes(args: argparse.Namespace) -> list[dict[str, Any]]:
    common = {"seed": args.seed, "steps": args.steps, "lr": args.lr, "kl_coef": 1e-3, "clip_eps": 0.2}
    if args.quick:
        return [
            {"name": "trl_default_like", "prompts": 2, "group_size": 3, "digits": 1, "prefix_tokens": 0,
             "max_new_tokens": 4, **common},
            {"name": "world_model_like", "prompts": 2, "group_size": 4, "digits": 1, "prefix_tokens": 24,
             "max_new_tokens": 6, **common},
        ]
    return [
        {"name": "trl_default_like", "prompts": args.prompts, "group_size": 5, "digits": 5, "prefix_tokens": 0,
         "max_new_tokens": 64, **common},
        {"name": "world_model_like", "prompts": args.wm_prompts or args.prompts, "group_size": args.wm_group_size, "digits": 2,
         "prefix_tokens": args.wm_prefix_tokens, "max_new_tokens": 100, **common},
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="tiny-5m")
    parser.add_argument("--prompts", type=int, default=8, help="prompts per step")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1, help="alternating ours/TRL runs per shape")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--wm-group-size", type=int, default=16)
    parser.add_argument("--wm-prompts", type=int, help="prompts per step of the world-model-like shape (default --prompts)")
    parser.add_argument("--wm-prefix-tokens", type=int, default=293, help="filler making world-model prompts ~300")
    parser.add_argument("--only", choices=["trl_default_like", "world_model_like"], help="run one shape")
    parser.add_argument("--variant", choices=VARIANTS, help="run one length variant (default both)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (the machine is shared)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny model, 3 steps: a smoke test")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps = 3
    torch.set_num_threads(args.threads)
    import trl

    overrides = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2} \
        if args.quick else {}
    chosen = [s for s in shapes(args) if args.only in (None, s["name"])]
    results = []
    with tempfile.TemporaryDirectory(prefix="grpo_vs_trl_") as tmp:
        for settings in chosen:
            results.append(compare(settings, args.preset, overrides, args.rounds, Path(tmp)))
    report = {
        "command": "python " + shlex.join(["benchmarks/grpo_vs_trl.py", *(sys.argv[1:] if argv is None else argv)]),
        "model": {"preset": args.preset, **overrides},
        "settings": "CPU fp32, 1 PPO iteration, token-mean loss (TRL loss_type=dapo), k3 KL to a frozen reference, "
                    "group-normalised advantages, AdamW constant lr, grad clip 1.0, temperature 1.0, no top-k/p, "
                    "stop at <eos> (natural_stop) or no stop (fixed_length), no eval/checkpoint/per-step logging",
        "notes": [
            "seconds per step: end of step i-1 to end of step i, median over steps 2..N of all rounds",
            "mean_reward_last_steps: mean training reward over the last quarter of the steps",
            "both run the backward pass on every step, also when all advantages are zero (TRL 1.16 does not skip it)",
            "fixed_length: no stop on either side (ours: no stop ids; TRL: min_new_tokens = max_completion_length), "
            "so both generate prompts x group x max_new_tokens completion tokens per step (equal work)",
            "natural_stop: both stop at <eos>; samples differ between the two (different RNG streams), so completion "
            "lengths differ a little; tokens_per_second counts each side's own completion tokens of the timed steps",
            "TRL also computes per-token entropies in its loss pass (its default, for logging); ours does not",
            "advantage eps: ours 1e-6, TRL 1e-4 (no effect on timing)",
        ],
        "threads": torch.get_num_threads(), "torch": torch.__version__, "trl": trl.__version__,
        "platform": platform.platform(), "results": results,
    }
    emit_json(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
