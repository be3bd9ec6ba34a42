"""GRPO on the real tasks of every modality (text game, web, video with forced actions) and on a user task
written from the documentation alone."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from rlvr_sim.config import load_config
from rlvr_sim.rl.trainer import Trainer
from rlvr_sim.tasks import make_task

REPO = Path(__file__).resolve().parents[2]
TINY = {"preset": "tiny-5m", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
        "num_attention_heads": 2}


def documented_user_task() -> str:
    """The minimal task of rlvr_sim/tasks/base.py's docstring, as printed there (the README's "your own task"
    points there), with the imports it names: the test runs the documentation itself, not a copy of it."""
    from rlvr_sim.tasks import base

    doc = base.__doc__
    return "from rlvr_sim.tasks.base import Example, GenerationSpec\n\n\n" + textwrap.dedent(
        doc[doc.index("    class MyTask:"):])


USER_TASK = documented_user_task()


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_documented_user_task_trains_with_the_grpo_script(tmp_path):
    """`training/grpo.py --task module:Class` with a task that takes no tokenizer (the constructor
    contract: `tokenizer=` is passed only to an `__init__` that accepts it) and its own task_args."""
    (tmp_path / "my_user_task.py").write_text(textwrap.dedent(USER_TASK))
    out = tmp_path / "run"
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    model = [f"model.{k}={v}" for k, v in TINY.items()] + ["model.max_positions=16"]
    result = subprocess.run(
        [sys.executable, str(REPO / "training" / "grpo.py"), "--task", "my_user_task:MyTask", "task_args.size=8",
         *model, "steps=2", "batch_size=2", "micro_batch_size=2", "group_size=2", "eval_examples=1",
         "progress=false", f"output_dir={out}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["steps"] == 2 and summary["reward_errors"] == 0
    assert (out / "final").is_dir()


def test_user_task_missing_a_protocol_member_is_refused_by_name(tmp_path, monkeypatch):
    (tmp_path / "my_partial_task.py").write_text(textwrap.dedent(USER_TASK).replace(
        "    worst_reward = 0.0        # the lowest value reward() can give\n", ""))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="lacks worst_reward"):
        make_task("my_partial_task:MyTask")


def textgame_data(out: Path) -> dict:
    from rlvr_sim.envs.textgame.collect import collect

    collect(out, episodes_per_game=1, max_steps=3, seed=0, test_fraction=0.25)
    return {"data_dir": str(out), "max_prompt_tokens": 1024}


def web_pages() -> tuple[dict, dict]:
    """Two recorded start pages that differ (the dashboard, then the first other page), {"tree", "url"} each."""
    from rlvr_sim.resources import asset_path

    pages = json.loads(asset_path("web_start_pages.json").read_text())
    first = pages["0"]
    return first, next(page for page in pages.values() if page["tree"] != first["tree"])


def web_data(out: Path) -> dict:
    from rlvr_sim.envs.web.tree import format_changes, item_changes

    first, second = web_pages()
    record = {"objective": "Open products", "current_action": "click [4]", "observation": first["tree"],
              "url": first["url"], "next_state_tao": format_changes(item_changes(first["tree"], second["tree"]))}
    for split in ("train", "test"):
        (out / f"{split}.jsonl").write_text(json.dumps(record) + "\n")
    return {"data_dir": str(out), "max_prompt_tokens": 256, "max_new_tokens": 1024}


@pytest.mark.parametrize("task, data", [("textgame", textgame_data), ("web", web_data)])
def test_two_grpo_steps_on_the_real_text_task(task, data, tmp_path):
    """The real task objects through GRPO: sampling, decoding, the task's reward, the update."""
    task_args = data(tmp_path)
    config = load_config(None, [], task=task, task_args=task_args, model={**TINY, "max_positions": 1280},
                         steps=2, batch_size=2, micro_batch_size=2, group_size=2, max_new_tokens=6,
                         eval_examples=0, lr=1e-3, output_dir=str(tmp_path / "run"), progress=False)
    trainer = Trainer(config, "grpo")
    assert trainer.task.name == task and trainer.train_examples
    summary = trainer.run()
    assert summary["steps"] == 2 and summary["reward_errors"] == 0
    history = summary["history"]
    assert all(row["reward"] >= trainer.task.worst_reward and row["response_tokens"] > 0 for row in history)
    gold = trainer.train_examples[0]  # the gold answer beats the worst reward through the trainer's path
    assert trainer.safe_reward([gold.prompt_ids], [gold.answer_ids], [gold.metadata])[0] > trainer.task.worst_reward
    assert (tmp_path / "run" / "final" / "tokenizer.json").exists()  # the task's tokenizer is saved


def video_data(root: Path) -> dict:
    """Four synthetic 64x64 episodes (a block moving right) and an untrained frame tokenizer: the multi-step
    layout, three generated frames of 16 codes with the true actions (2 tokens) forced between them."""
    import numpy as np

    from rlvr_sim.models.visual_tokenizer import FrameTokenizer, TokenizerConfig

    rng = np.random.default_rng(0)
    for i in range(4):
        frames = np.full((12, 64, 64, 3), 255, np.uint8)
        for t in range(12):
            frames[t, 20:30, 5 + 3 * t: 15 + 3 * t] = (90, 100, 120)
        np.savez_compressed(root / f"ep{i}.npz", image=frames, action=rng.uniform(0, 512, (12, 2)).astype(np.float32))
    FrameTokenizer(TokenizerConfig(width=8, levels=[5, 5])).eval().save(root / "tok")
    return dict(data_dir=str(root), tokenizer_dir=str(root / "tok"), horizon=3, frame_skip=1, test_fraction=0.25,
                train_stride=2, test_stride=2, lpips="st-lpips")


def test_two_grpo_steps_on_the_video_task_with_forced_actions(tmp_path, monkeypatch):
    """The video task through GRPO: interleaved sampling keeps each example's true actions at their places
    between generated frames, out of the loss; the task's reward -(MAE + LPIPS) scores the decoded frames."""
    import rlvr_sim.rl.grpo as grpo_module

    if importlib.util.find_spec("stlpips_pytorch") is None:
        pytest.skip("the video extra (stlpips-pytorch) is not installed")
    task_args = video_data(tmp_path)
    config = load_config(None, [], task="pusht", task_args=task_args, model={**TINY, "max_positions": 160},
                         steps=2, batch_size=2, micro_batch_size=2, group_size=2, eval_examples=0, lr=1e-3,
                         output_dir=str(tmp_path / "run"), progress=False)
    trainer = Trainer(config, "grpo")
    spec = trainer.task.generation_spec()
    assert spec.interleave_every == 16 and trainer.train_examples[0].forced
    sampled = []

    def recording_sample(model, prompts, **kwargs):
        out = grpo_module_sample(model, prompts, **kwargs)
        if kwargs.get("forced") is not None:
            sampled.append((kwargs["forced"], kwargs["group_size"], out))
        return out

    grpo_module_sample = grpo_module.sample
    monkeypatch.setattr(grpo_module, "sample", recording_sample)
    summary = trainer.run()
    assert summary["steps"] == 2 and summary["reward_errors"] == 0 and len(sampled) == 2
    assert all(trainer.task.worst_reward <= row["reward"] <= 0.0 for row in summary["history"])
    every = spec.interleave_every
    for forced, group_size, out in sampled:
        for row, completion in enumerate(out.completions()):
            chunks = forced[row // group_size]
            assert len(completion) == 3 * every + sum(len(c) for c in chunks)
            for k, chunk in enumerate(chunks):  # after frame k+1: the true action of that step, not learned
                start = (k + 1) * every + sum(len(c) for c in chunks[:k])
                assert completion[start: start + len(chunk)] == list(chunk)
                assert not out.loss_mask[row, start: start + len(chunk)].any()
                assert out.loss_mask[row, start - every: start].all()  # the generated frame before it is
    gold = trainer.train_examples[0]  # the true answer beats the task's worst reward through the trainer
    assert trainer.safe_reward([gold.prompt_ids], [gold.answer_ids], [gold.metadata])[0] > trainer.task.worst_reward


@pytest.mark.parametrize("task, data", [("textgame", textgame_data), ("web", web_data)])
def test_text_tasks_are_world_model_codecs_that_decode_the_gold_answer_to_the_next_state(task, data, tmp_path):
    """The codec the envs serve with is the task's: q(s, a) is the training prompt, and the gold answer
    decodes against the state into the true next state; an answer without one decodes to a reason."""
    from rlvr_sim.envs.textgame.world_model_env import TextGameWorldModel
    from rlvr_sim.envs.web.world_model_env import LMWebWorldModel

    from rlvr_sim.metrics.textgame import compare_states
    from rlvr_sim.tasks.base import WorldModelCodec
    from rlvr_sim.tasks.web import item_changes

    codec = make_task(task, **data(tmp_path))
    assert isinstance(codec, WorldModelCodec)
    transitions, examples = codec.transitions("train"), codec.examples("train")
    assert len(transitions) == len(examples) > 0
    for transition, example in zip(transitions, examples):
        assert codec.prompt_ids(transition) == example.prompt_ids
        state, error = codec.decode_state(transition, codec.decode(example.answer_ids))
        assert error is None
        if task == "textgame":
            assert compare_states(state, transition.gold_state).all_correct
        else:  # web_data's transition goes from one recorded page to another
            after = web_pages()[1]["tree"]
            assert item_changes(state, after).is_empty() and not item_changes(transition.tree, after).is_empty()
    state, error = codec.decode_state(transitions[0], "no answer here")
    assert state is None and error
    served = {"textgame": TextGameWorldModel, "web": LMWebWorldModel}[task]
    assert "decode_state" not in served.__dict__  # the served world model decodes with the task's codec
