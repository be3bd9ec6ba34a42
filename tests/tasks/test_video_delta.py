"""The delta layout (task_args.layout="delta", keypoint tokenizers): each generated coordinate token is the change
since the previous frame (mod the codebook), so "nothing moved" is one token wherever a point lies.

Pins: the round trip is exact on real episodes; a still point is token 0; a token outside the codes keeps its
coordinate; the reward scores a delta-layout answer exactly as the same frames in the absolute layout; the env
generates what `sample()` generates (one path), median-decoded around the likeliest change; and the layout is
refused for tokenizers whose codes are not ordered coordinates."""

import numpy as np
import pytest

from rlvr_sim.tasks import make_task
from rlvr_sim.tasks.video import VideoCodec

BINS = {"low": [0, 0], "high": [512, 512], "num_bins": 256}


def _codec() -> VideoCodec:
    return VideoCodec(128, 2, 8, 8, 256, delta_slots=list(range(8)))


def test_codec_round_trip_still_points_and_bad_tokens():
    codec = _codec()
    rng = np.random.default_rng(0)
    prev, codes = rng.integers(0, 128, (50, 8)), rng.integers(0, 128, (50, 8))
    tokens = codec.frame_tokens(prev, codes)
    assert tokens.min() >= 0 and tokens.max() < 128 and codec.frame_vocab == 128
    assert (codec.to_codes(prev, tokens) == codes).all()
    assert (codec.frame_tokens(prev, prev) == 0).all()  # nothing moved: token 0 in every slot
    assert (codec.to_codes(prev, np.zeros_like(prev)) == prev).all()
    bad = tokens.copy()
    bad[:, 3] = codec.action_offset + 5  # an action token where a coordinate belongs
    assert (codec.to_codes(prev, bad)[:, 3] == prev[:, 3]).all()
    chain = rng.integers(0, 128, (6, 8))
    raw = codec.frame_tokens(chain[:-1], chain[1:])
    assert (codec.frames_to_codes(chain[0], raw) == chain[1:]).all()
    assert codec.stateful and not VideoCodec(128, 2, 8, 8, 256).stateful
    with pytest.raises(ValueError, match="delta layout"):
        VideoCodec(128, 2, 8, 4, 256, delta_slots=[0])
    with pytest.raises(ValueError, match="delta_slots"):
        VideoCodec(128, 2, 8, 8, 256, delta_slots=[8])
    mixed = VideoCodec(128, 2, 8, 8, 256, delta_slots=[2, 3])  # point 1 change-coded, the rest as coordinates
    tokens = mixed.frame_tokens(prev, codes)
    assert (tokens[:, [0, 1, 4, 5, 6, 7]] == codes[:, [0, 1, 4, 5, 6, 7]]).all()
    assert (tokens[:, 2:4] == (codes[:, 2:4] - prev[:, 2:4]) % 128).all()
    assert (mixed.to_codes(prev, tokens) == codes).all()


def test_still_slots_pick_the_points_that_rarely_move():
    from rlvr_sim.tasks.video import still_slots

    rng = np.random.default_rng(0)
    frames = np.repeat(rng.integers(0, 128, (1, 6)), 41, axis=0)  # three points, 40 transitions
    frames[1:, 0] = rng.integers(0, 128, 40)       # point 0 moves (x) almost every transition
    frames[::4, 5] += 1                            # point 2 moves (y) in half of them: not still
    frames[10, 3] += 1                             # point 1 moves once: still
    assert still_slots(frames) == [2, 3]
    assert still_slots(frames[None].repeat(3, 0)) == [2, 3]  # windows (W, F, 2K)
    with pytest.raises(ValueError, match="frames"):
        still_slots(frames[:1])


def test_delta_answers_score_as_the_same_frames_in_the_absolute_layout(delta_setup):
    delta = make_task("pusht", layout="delta", **delta_setup)
    absolute = make_task("pusht", layout="pose", **delta_setup)
    w = delta.windows["train"]
    tokens = delta.codec.frame_tokens(w.cond_codes[:, :-1], w.cond_codes[:, 1:])
    assert (delta.codec.frames_to_codes(w.cond_codes[:, 0], tokens) == w.cond_codes[:, 1:]).all()
    d_ex, a_ex = delta.examples("test"), absolute.examples("test")
    assert [e.prompt_ids for e in d_ex] == [e.prompt_ids for e in a_ex]  # the anchor is absolute in both
    assert [e.answer_ids for e in d_ex] != [e.answer_ids for e in a_ex]
    score = lambda task, ex, answers: task.reward([e.prompt_ids for e in ex], answers, [e.metadata for e in ex])  # noqa: E731
    gold_d, gold_a = score(delta, d_ex, [e.answer_ids for e in d_ex]), score(absolute, a_ex, [e.answer_ids for e in a_ex])
    assert np.allclose(gold_d, gold_a)
    # "nothing moves" in the delta layout is the anchor copied in the absolute one
    stride = delta.codec.cond_tokens + delta.codec.chunk_len
    still_d, still_a = [], []
    for d, a in zip(d_ex, a_ex):
        sd, sa = list(d.answer_ids), list(a.answer_ids)
        anchor = a.prompt_ids[1 : 1 + absolute.codec.abs_tokens]
        for t in range(delta.horizon):
            sd[t * stride : t * stride + 8] = [0] * 8
            sa[t * stride : t * stride + 8] = anchor
        still_d.append(sd)
        still_a.append(sa)
    assert np.allclose(score(delta, d_ex, still_d), score(absolute, a_ex, still_a))


def test_env_generates_what_sample_generates_in_the_delta_layout(delta_setup, tmp_path, tiny_video_checkpoint,
                                                                 env_step_codes):
    """`sample()` (GRPO, the single-step evaluation) and `VideoWorldModel.step` (env, viewer, rollouts) give the
    same codes for the same seed, frame and actions; median decoding reads the change around its likeliest
    value, so a model sure that nothing moved keeps every point where it was."""
    import torch
    from rlvr_sim.envs.video.world_model_env import VideoWorldModel

    from rlvr_sim.models.keypoint_tokenizer import KeypointTokenizer
    from rlvr_sim.rl.sampler import sample

    codec = _codec()
    tiny_video_checkpoint(tmp_path, codec, BINS)
    KeypointTokenizer.load(delta_setup["tokenizer_dir"]).save(tmp_path / "tokenizer")
    frame = make_task("pusht", layout="delta", **delta_setup).windows["test"].context[0]
    world = VideoWorldModel(tmp_path)
    actions = np.array([[40.0, 400.0], [300.0, 20.0], [500.0, 250.0], [100.0, 100.0]])
    bins = world.action_bins.encode(actions)
    codes = world.tokenizer.encode(frame[None])[0]
    for seed, temperature in ((7, 1.0), (8, 0.0)):
        prompt = [codec.bos_id, *map(int, codes), *codec.chunks(None, bins[0]).tolist()]
        forced = [codec.chunks(None, b).tolist() for b in bins[1:]]
        out = sample(world.model, [prompt], max_new_tokens=4 * 8, seeds=[seed], forced=[forced],
                     interleave_every=8, allowed_token_range=(0, codec.frame_vocab), temperature=temperature,
                     pad_token_id=codec.pad_id)
        completion, stride = out.completions()[0], 8 + codec.chunk_len
        raw = np.array([completion[t * stride : t * stride + 8] for t in range(4)])
        sampled = codec.frames_to_codes(codes, raw)
        assert (env_step_codes(world, frame, actions, seed, temperature) == sampled).all()
    # median decoding: the change read in order around its likeliest value (-1, 0, +1 here), so mass split over
    # "one level down" and "one level up" stays centred on "still" instead of wrapping to the far end
    logits = torch.full((codec.vocab_size,), -1e4)
    logits[[127, 0, 1]] = torch.log(torch.tensor([0.35, 0.40, 0.25]))
    head = torch.nn.Linear(world.model.config.hidden_size, codec.vocab_size, bias=True)
    with torch.no_grad():
        head.weight.zero_()
        head.bias.copy_(logits)
    world.model.lm_head = head
    world.start(frame[None], [0])
    world.step(actions[:1], 0.0, median=True)
    assert (world.last_codes[0] == codes).all()  # every coordinate's median change is 0: nothing moved


def test_mixed_layout_codes_the_data_s_still_points_as_changes(delta_setup):
    from rlvr_sim.tasks.video import still_slots

    task = make_task("pusht", layout="mixed", **delta_setup)
    assert task.codec.delta_slots == still_slots(task.windows["train"].cond_codes)
    assert task.checkpoint_meta()["video_codec"]["delta_slots"] == task.codec.delta_slots
    w = task.windows["test"]
    tokens = task.codec.frame_tokens(w.cond_codes[:, :-1], w.cond_codes[:, 1:])
    assert (task.codec.frames_to_codes(w.cond_codes[:, 0], tokens) == w.cond_codes[:, 1:]).all()


@pytest.mark.parametrize("layout", ["delta", "mixed"])
def test_delta_layouts_need_a_keypoint_tokenizer(pose_setup, layout):
    with pytest.raises(ValueError, match="keypoint tokenizer"):
        make_task("pusht", layout=layout, **dict(pose_setup, action_bins=BINS))


def test_training_from_a_checkpoint_needs_its_layout(delta_setup, tmp_path):
    """SFT in the delta layout, then GRPO from that checkpoint: in the same layout it trains; in the absolute
    layout (the same token ids meaning coordinates instead of changes) it is refused by name."""
    from rlvr_sim.config import load_config
    from rlvr_sim.rl.trainer import Trainer

    tiny = {"preset": "tiny-5m", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
            "num_attention_heads": 2, "num_key_value_heads": 2, "max_positions": 160}
    common = dict(steps=1, batch_size=2, micro_batch_size=2, group_size=2, eval_examples=0, lr=1e-3, progress=False)
    sft = load_config(None, [], task="pusht", task_args={**delta_setup, "layout": "delta"}, model=tiny,
                      output_dir=str(tmp_path / "sft"), **common)
    Trainer(sft, "sft").run()
    start = {"name_or_path": str(tmp_path / "sft" / "final")}
    grpo = load_config(None, [], task="pusht", task_args={**delta_setup, "layout": "delta"}, model=start,
                       output_dir=str(tmp_path / "grpo"), **common)
    assert Trainer(grpo, "grpo").run()["steps"] == 1
    wrong = load_config(None, [], task="pusht", task_args={**delta_setup, "layout": "pose"}, model=start,
                        output_dir=str(tmp_path / "wrong"), **common)
    with pytest.raises(ValueError, match="another token layout.*delta_slots"):
        Trainer(wrong, "grpo")


def test_mixed_layout_slots_can_be_pinned(delta_setup):
    """A model continued on more data keeps its layout: `delta_slots` pins the change-coded points; slot lists that
    split a point or leave the frame are refused by name, and only the mixed layout takes them."""
    chosen = make_task("pusht", layout="mixed", **delta_setup).codec.delta_slots
    pinned = [0, 1] if chosen != [0, 1] else [2, 3]
    task = make_task("pusht", layout="mixed", delta_slots=pinned, **delta_setup)
    assert task.codec.delta_slots == pinned and task.checkpoint_meta()["video_codec"]["delta_slots"] == pinned
    for bad in ([0], [0, 3], [0, 1, 0, 1], [998, 999], "x"):
        with pytest.raises(ValueError, match="delta_slots"):
            make_task("pusht", layout="mixed", delta_slots=bad, **delta_setup)
    with pytest.raises(ValueError, match="delta_slots"):
        make_task("pusht", layout="delta", delta_slots=[0, 1], **delta_setup)
