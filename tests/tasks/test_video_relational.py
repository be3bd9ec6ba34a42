"""The relational pose layout (task_args.layout="relational"): the T's motion in its own body frame.

Pins: the layout reproduces the true pose codes exactly; the body-frame tokens are the geometry they claim;
the arena's symmetries still give true windows scored on the original; sampled rollouts never see the true
frames (chunks follow each sample's own frames); and the env generates exactly what `sample()` does."""

import numpy as np
import pytest

from rlvr_sim.tasks import make_task
from rlvr_sim.tasks.video import DISP_RANGE, REL_RANGE, REL_STEP, StateForcing, VideoCodec

BINS = {"low": [0, 0], "high": [512, 512], "num_bins": 256}


@pytest.fixture(scope="module")
def rel_setup(pose_setup):
    """Real gym-pusht episodes and the pose tokenizer (conftest's `pose_setup`), in the relational layout."""
    return dict(pose_setup, action_bins=BINS, layout="relational")


def _codec() -> VideoCodec:
    return VideoCodec(645, 2, 5, 5, 256, relational=True, action_low=[0.0, 0.0], action_high=[512.0, 512.0])


def _codes(states) -> np.ndarray:
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    return PoseTokenizer().states_to_codes(np.asarray(states, dtype=np.float64))


def test_layout_reproduces_the_true_codes_of_real_episodes(rel_setup):
    task = make_task("pusht", reward_kind="object", **rel_setup)
    codec, w = task.codec, task.windows["train"]
    tokens = codec.frame_tokens(w.cond_codes[:, :-1], w.cond_codes[:, 1:])
    assert (codec.to_codes(w.cond_codes[:, :-1], tokens) == w.cond_codes[:, 1:]).all()
    assert (codec.frames_to_codes(w.cond_codes[:, 0], tokens) == w.cond_codes[:, 1:]).all()
    examples = task.examples("test")
    layout = 1 + 5 + codec.chunk_len + 4 * 5 + 3 * codec.chunk_len
    assert all(len(e.prompt_ids) + len(e.answer_ids) == layout for e in examples)
    gold = task.reward([e.prompt_ids for e in examples], [e.answer_ids for e in examples],
                       [e.metadata for e in examples])
    assert all(-3.0 < r <= 0.0 for r in gold)  # quantisation and judge error only
    frozen = []  # the T kept still (zero displacement) where the truth moved it, agent as true
    for e in examples:
        answer = list(e.answer_ids)
        for t in range(4):
            base = t * (5 + codec.chunk_len)
            for slot, (lo, hi) in list(enumerate(codec.slot_ranges()))[2:]:
                answer[base + slot] = lo + (hi - lo - 1) // 2
        frozen.append(answer)
    true = task.windows["test"].cond_codes[[e.metadata["index"] for e in examples]]
    moved = (true[:, 1:, 2:] != true[:, :-1, 2:]).any((1, 2))
    scores = task.reward([e.prompt_ids for e in examples], frozen, [e.metadata for e in examples])
    assert any(moved) and all(s <= g + 1e-9 for s, g, m in zip(scores, gold, moved) if m)


def test_body_frame_tokens_are_the_geometry_they_claim():
    codec = _codec()
    # T at (256, 256) turned a quarter turn; the agent 40 units along the T's own +v axis (its stem)
    angle = np.pi / 2
    agent = np.array([256.0, 256.0]) + 40.0 * np.array([-np.sin(angle), np.cos(angle)])
    codes = _codes([[*agent, 256.0, 256.0, angle]])[0]
    chunk = codec.chunks(codes, np.array([128, 128]))  # target: the arena's centre = the T's origin
    half, size = REL_RANGE // REL_STEP, codec.rel_size
    rel = (chunk[2:] - codec.rel_offset - np.arange(4) * size - half) * REL_STEP
    assert np.allclose(rel, [0.0, 40.0, 0.0, 0.0], atol=4.5)  # within a pose bin (4 units) + rounding
    # the T pushed 10 units along its own +u axis and turned 2 angle bins
    u = np.array([np.cos(angle), np.sin(angle)])
    after = codes.copy()
    after[2:4] = _codes([[0.0, 0.0, *(np.array([256.0, 256.0]) + 10 * u), 0.0]])[0][2:4]
    after[4] = codes[4] + 2
    tokens = codec.frame_tokens(codes, after)
    ranges = codec.slot_ranges()
    du, dv, dtheta = (tokens[i] - ranges[i][0] - limit for i, limit in ((2, DISP_RANGE), (3, DISP_RANGE), (4, 32)))
    assert abs(du - 10) <= 4 and abs(dv) <= 4 and dtheta == 2
    assert (codec.to_codes(codes, tokens) == after).all()
    # not visible T: "unknown" tokens, and the T stays not visible
    hidden = codes.copy()
    hidden[2:] = _codes([[np.nan] * 5])[0][2:]
    assert codec.chunks(hidden, np.array([0, 0]))[2] == codec.rel_offset + size - 1
    assert (codec.to_codes(hidden, codec.frame_tokens(hidden, hidden))[2:] == hidden[2:]).all()
    with pytest.raises(ValueError, match="relational layout"):
        VideoCodec(645, 2, 5, 5, 256, relational=True)


def test_symmetric_and_translated_copies_score_as_the_original(rel_setup):
    task = make_task("pusht", reward_kind="object", augment="d4_shift", **rel_setup)
    train = task.examples("train")
    copies = [e for e in train if e.metadata["index"] == 0]
    assert len({e.metadata["sym"] for e in copies}) == 8
    gold = task.reward([e.prompt_ids for e in copies], [e.answer_ids for e in copies], [e.metadata for e in copies])
    assert np.allclose(gold, gold[0], atol=1e-6) and gold[0] > -3.0


def test_sampled_chunks_follow_each_samples_own_frames(rel_setup):
    """GRPO's sampler calls StateForcing: every forced chunk equals the codec's chunk of the frame that
    row itself generated (never the true frame), while SFT's teacher-forced chunks are the true ones."""
    import torch

    from rlvr_sim.models.lm import build_model
    from rlvr_sim.rl.sampler import sample

    task = make_task("pusht", **rel_setup)
    codec = task.codec
    examples = task.examples("test")[:2]
    e = examples[0]
    assert isinstance(e.forced, StateForcing) and e.forced(0, e.answer_ids) == list(e.forced[0])
    torch.manual_seed(0)
    model = build_model("tiny-5m", codec.vocab_size, 256, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    spec = task.generation_spec()
    out = sample(model, [x.prompt_ids for x in examples], group_size=3, max_new_tokens=spec.max_new_tokens,
                 forced=[x.forced for x in examples], interleave_every=spec.interleave_every,
                 allowed_token_range=task.code_range, pad_token_id=codec.pad_id, seed=1)
    stride = codec.cond_tokens + codec.chunk_len
    differs = False
    for r, completion in enumerate(out.completions()):
        x = examples[r // 3]
        frames = np.array([completion[t * stride : t * stride + 5] for t in range(4)])  # as generated
        codes = codec.frames_to_codes(np.asarray(x.metadata["prev"]), frames)
        for t in range(3):
            chunk = completion[t * stride + 5 : (t + 1) * stride]
            assert chunk == codec.chunks(codes[t], x.forced.action_bins[t + 1]).tolist()
            differs |= chunk != list(x.forced[t])
    assert differs  # an untrained model's frames are not the truth, so neither are its chunks


def test_env_generates_what_sample_generates_in_the_relational_layout(tmp_path, tiny_video_checkpoint):
    """One generation path: `sample()` with the sample-following chunks (GRPO) and `VideoWorldModel.step`
    (env, viewer, evaluation rollouts) give the same pose codes for the same seed, frame and actions."""
    import cv2
    from rlvr_sim.envs.video.collect import rollout_episode
    from rlvr_sim.envs.video.world_model_env import VideoWorldModel

    from rlvr_sim.models.pose_tokenizer import PoseTokenizer
    from rlvr_sim.rl.sampler import sample

    codec = _codec()
    tiny_video_checkpoint(tmp_path, codec, BINS)
    PoseTokenizer().save(tmp_path / "tokenizer")
    frame = cv2.resize(rollout_episode("expert", 0, 4, 4, 96)["image"][0], (64, 64), interpolation=cv2.INTER_AREA)
    world = VideoWorldModel(tmp_path)
    actions = np.array([[40.0, 400.0], [300.0, 20.0], [500.0, 250.0], [100.0, 100.0], [256.0, 256.0]])
    bins = world.action_bins.encode(actions)
    codes = world.tokenizer.encode(frame[None])[0]
    for seed, temperature in ((7, 1.0), (8, 0.0)):
        prompt = [codec.bos_id, *map(int, codes), *codec.chunks(codes, bins[0]).tolist()]
        forcing = StateForcing([[0] * codec.chunk_len] * 3, codec, codes, bins)
        out = sample(world.model, [prompt], max_new_tokens=4 * 5, seeds=[seed], forced=[forcing],
                     interleave_every=5, allowed_token_range=(0, codec.frame_vocab), temperature=temperature,
                     pad_token_id=codec.pad_id)
        completion, stride = out.completions()[0], 5 + codec.chunk_len
        raw = np.array([completion[t * stride : t * stride + 5] for t in range(4)])  # as generated, unparsed
        sampled = codec.frames_to_codes(codes, raw)
        world.start(frame[None], [seed])
        for a in actions:  # five steps: past the horizon (4) the context rolls, then one more step
            world.step(a[None], temperature)
        assert world.steps_since_anchor == 3
        rolled = VideoWorldModel(tmp_path)
        rolled.start(frame[None], [seed])
        stepped = []
        for a in actions[:4]:
            rolled.step(a[None], temperature)
            stepped.append(rolled.last_codes[0])
        assert (np.stack(stepped) == sampled).all()
    assert world.prefix[0] == codec.window_tokens(world.history_codes[0][0], [c[0] for c in world.history_codes[1:3]],
                                                  [b[0] for b in world.history_bins[:2]])


def test_grpo_and_sft_steps_train_the_relational_layout(rel_setup, tmp_path):
    """Two GRPO steps (object reward, sample-following chunks) and two SFT steps run end to end, and the
    saved checkpoint serves as the env (its metadata carries the layout)."""
    from rlvr_sim.envs.video.world_model_env import VideoWorldModelEnv

    from rlvr_sim.config import load_config
    from rlvr_sim.rl.trainer import Trainer

    tiny = {"preset": "tiny-5m", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
            "num_attention_heads": 2, "num_key_value_heads": 2, "max_positions": 160}
    for stage in ("sft", "grpo"):
        config = load_config(None, [], task="pusht", task_args={**rel_setup, "reward_kind": "object"}, model=tiny,
                             steps=2, batch_size=2, micro_batch_size=2, group_size=2, eval_examples=0, lr=1e-3,
                             output_dir=str(tmp_path / stage), progress=False)
        trainer = Trainer(config, stage)
        assert isinstance(trainer.train_examples[0].forced, StateForcing)
        summary = trainer.run()
        assert summary["steps"] == 2 and summary.get("reward_errors", 0) == 0
    env = VideoWorldModelEnv(checkpoint=str(tmp_path / "grpo" / "final"))
    assert env.world.codec.relational
    task = make_task("pusht", **rel_setup)
    obs, _ = env.reset(seed=0, options={"frame": task.windows["test"].context[0]})
    assert env.step(np.array([100.0, 400.0], np.float32))[0].shape == obs.shape


def test_ordinal_embeddings_stay_value_linear_through_sft_and_save_a_plain_checkpoint(pose_setup, tmp_path):
    """`ordinal_embeddings: true` (rlvr_sim.models.ordinal): after the run every ordered bin's input row is linear
    in its value, the free rows (BOS) are not, a run resumes from its resumable state, and the checkpoint loads as a
    plain model."""
    import torch

    from rlvr_sim.config import load_config
    from rlvr_sim.models.lm import load_model
    from rlvr_sim.models.ordinal import OrdinalGroup
    from rlvr_sim.rl.trainer import Trainer

    torch.set_num_threads(1)
    tiny = {"preset": "tiny-5m", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
            "num_attention_heads": 2, "num_key_value_heads": 2, "max_positions": 160}
    args = dict(pose_setup, action_bins={"low": [0, 0], "high": [512, 512], "num_bins": 256}, layout="relational")
    config = load_config(None, [], task="pusht", task_args=args, model=tiny, steps=2, batch_size=2,
                         micro_batch_size=2, eval_examples=0, lr=1e-2, output_dir=str(tmp_path / "run"),
                         progress=False, ordinal_embeddings=True)
    trainer = Trainer(config, "sft")
    groups = trainer.task.ordinal_groups()
    trainer.run()
    resumed = Trainer(load_config(None, [], **{**{k: getattr(config, k) for k in config.field_names},
                                               "steps": 3, "resume": "auto"}), "sft")
    assert resumed.step == 2  # the parametrised table's resumable state loads back into a parametrised model
    resumed.run()
    from rlvr_sim.models.lm import CheckpointError

    with pytest.raises(CheckpointError, match="different ordinal_embeddings setting"):
        Trainer(load_config(None, [], **{**{k: getattr(config, k) for k in config.field_names}, "steps": 4,
                                         "resume": "auto", "ordinal_embeddings": False}), "sft")
    model, _, _ = load_model(str(tmp_path / "run" / "final"))
    weight = model.get_input_embeddings().weight.detach()
    for g in groups:
        basis = OrdinalGroup(0, g.size, g.circular).basis()
        rows = weight[g.start : g.start + g.size].double()
        assert torch.allclose(basis @ torch.linalg.lstsq(basis, rows).solution, rows, atol=1e-5)
    free = weight[trainer.task.codec.bos_id]
    assert not torch.allclose(free, torch.zeros_like(free))


def test_unknown_layout_is_refused_by_name(rel_setup):
    args = dict(rel_setup, layout="body")
    with pytest.raises(ValueError, match="layout must be one of"):
        make_task("pusht", **args)
