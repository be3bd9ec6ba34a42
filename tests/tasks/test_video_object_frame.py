"""The object frame (task_args.object_frame, keypoint delta / mixed layouts): after every frame the codec forces, besides
the action, the actor point nearest the change-coded points' centroid and the commanded target in the frame of those
points (origin their centroid, x axis towards `frame_point`), as the pose model's relational layout does with the
judged T pose.

Pins: the tokens are the same wherever the scene lies and however it is turned (a push is the same push); they are
computed from the frame they follow, so a sampled rollout computes them from its own frames and the env generates what
`sample()` generates; the task picks `frame_point` from the data and refuses the options outside the keypoint layouts."""

import numpy as np
import pytest

from rlvr_sim.tasks import make_task
from rlvr_sim.tasks.video import OBJ_RANGE, StateForcing, VideoCodec, widest_point

BINS = {"low": [0, 0], "high": [512, 512], "num_bins": 256}
OBJECT = [0, 1, 2, 3, 4, 5]  # points 0-2 change-coded (the object), point 3 as coordinates (the actor)


def _codec(**kwargs) -> VideoCodec:
    """Four points: 0-2 change-coded (the object), 3 as coordinates (the actor); the target spans the frame."""
    args = dict(delta_slots=OBJECT, object_frame=True, frame_point=0, action_spans_frame=True)
    return VideoCodec(128, 2, 8, 8, 256, **{**args, **kwargs})


def _scene(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n frames' codes (an object of three points round (64, 64), the actor near it) and action bins near it."""
    centre = rng.uniform(50, 78, (n, 1, 2))
    shape = np.array([[12.0, 0.0], [-6.0, 8.0], [-6.0, -8.0]])
    turn = rng.uniform(0, 2 * np.pi, n)
    rot = np.stack([np.stack([np.cos(turn), -np.sin(turn)], -1), np.stack([np.sin(turn), np.cos(turn)], -1)], -2)
    objects = centre + shape @ rot.transpose(0, 2, 1)
    actor = centre[:, 0] + rng.uniform(-20, 20, (n, 2))
    codes = np.concatenate([objects, actor[:, None]], 1).round().astype(np.int64).reshape(n, 8)
    bins = (2 * (centre[:, 0] + rng.uniform(-25, 25, (n, 2))) + 0.5).round().astype(np.int64)
    return codes, bins


def test_object_frame_tokens_follow_the_object_not_the_arena():
    codec, rng = _codec(), np.random.default_rng(0)
    codes, bins = _scene(rng, 200)
    chunks = codec.chunks(codes, bins)
    assert chunks.shape == (200, codec.chunk_len) and codec.chunk_len == 2 + 4
    assert (chunks[:, :2] == codec.chunks(codes, bins)[:, :2]).all()
    rel = chunks[:, 2:] - codec.rel_offset - np.arange(4) * codec.rel_size
    assert rel.min() >= 0 and rel.max() <= 2 * OBJ_RANGE and codec.pad_id == codec.rel_offset + 4 * codec.rel_size
    # the whole scene moved by whole levels (the target by the same distance: 2 action bins per level)
    shift = np.array([[5, -7]])
    moved = (codes.reshape(200, 4, 2) + shift[:, None]).reshape(200, 8)
    assert (codec.chunks(moved, bins + 2 * shift)[:, 2:] == chunks[:, 2:]).all()
    # ... or a quarter turn of the arena, (x, y) -> (127 - y, x), with the target turned alike
    points = codes.reshape(200, 4, 2)
    turned = np.stack([127 - points[..., 1], points[..., 0]], -1).reshape(200, 8)
    turned_bins = np.stack([255 - bins[:, 1], bins[:, 0]], -1)
    assert np.abs(codec.chunks(turned, turned_bins)[:, 2:] - chunks[:, 2:]).max() <= 1  # rounding at a level's edge
    # the actor on the object's centroid reads (0, 0); a target across the arena is clipped to the range
    centre = points[:, :3].mean(1)
    on = points.copy()
    on[:, 3] = centre.round()
    near = codec.chunks(on.reshape(200, 8), bins)[:, 2:4] - codec.rel_offset - np.arange(2) * codec.rel_size
    assert np.abs(near - OBJ_RANGE).max() <= 1
    unturned = _codec(frame_point=None)
    far = unturned.chunks(codes, np.tile([[0, 255]], (200, 1)))[:, 4:] - unturned.rel_offset
    level = (np.array([0, 255]) + 0.5) / 256 * 128 - 0.5  # the bins' centres as code levels
    want = np.clip(np.round(level - centre), -OBJ_RANGE, OBJ_RANGE) + OBJ_RANGE
    assert (far - np.arange(2, 4) * unturned.rel_size == want).all() and (want == 2 * OBJ_RANGE).any()
    # a translated frame (no frame_point) and a frame without the target
    plain = _codec(frame_point=None, action_spans_frame=False)
    assert plain.chunk_len == 4
    offset = plain.chunks(codes, bins)[:, 2:] - plain.rel_offset - np.arange(2) * plain.rel_size - OBJ_RANGE
    assert (offset == np.clip(np.round(points[:, 3] - centre), -OBJ_RANGE, OBJ_RANGE)).all()


def test_object_frame_options_are_checked():
    with pytest.raises(ValueError, match="object_frame needs"):
        VideoCodec(128, 2, 8, 8, 256, object_frame=True)  # no change-coded points
    with pytest.raises(ValueError, match="object_frame needs"):
        VideoCodec(128, 2, 8, 8, 256, delta_slots=list(range(8)), object_frame=True)  # no actor
    with pytest.raises(ValueError, match="frame_point"):
        _codec(frame_point=3)  # the actor cannot set the object's frame
    with pytest.raises(ValueError, match="options of object_frame"):
        VideoCodec(128, 2, 8, 8, 256, delta_slots=[0, 1], frame_point=0)


def test_widest_point_is_the_object_point_farthest_from_its_centroid():
    rng = np.random.default_rng(1)
    codes, _ = _scene(rng, 50)
    assert widest_point(codes[:, None].repeat(2, 1), [0, 1, 2, 3, 4, 5]) == 0  # 12 levels out against 10
    assert widest_point(codes[:, None].repeat(2, 1), [2, 3]) is None  # one point: a translated frame


def test_sampled_rollouts_compute_the_object_frame_from_their_own_frames(delta_setup, tmp_path, tiny_video_checkpoint,
                                                                   env_step_codes):
    """The teacher-forced chunks are the true frames'; `StateForcing` computes them from the tokens a row generated,
    and the env (`VideoWorldModel.step`) generates what `sample()` generates with that forcing (one path)."""
    from rlvr_sim.envs.video.world_model_env import VideoWorldModel

    from rlvr_sim.models.keypoint_tokenizer import KeypointTokenizer
    from rlvr_sim.rl.sampler import sample

    # an untrained tokenizer's points all move: pin three of its four as the object
    task = make_task("pusht", layout="mixed", delta_slots=OBJECT, object_frame=True, action_spans_frame=True,
                     **delta_setup)
    codec = task.codec
    assert codec.object_frame and codec.frame_point in codec.object_points + [None]
    meta = task.checkpoint_meta()["video_codec"]
    assert meta["object_frame"] and meta["action_spans_frame"] and meta["frame_point"] == codec.frame_point
    example = task.examples("train")[0]
    assert isinstance(example.forced, StateForcing)
    stride = codec.cond_tokens + codec.chunk_len
    for i, chunk in enumerate(example.forced):
        assert example.forced(i, example.answer_ids[: (i + 1) * stride - codec.chunk_len]) == list(chunk)

    tiny_video_checkpoint(tmp_path, codec, BINS)
    KeypointTokenizer.load(delta_setup["tokenizer_dir"]).save(tmp_path / "tokenizer")
    frame = task.windows["test"].context[0]
    world = VideoWorldModel(tmp_path)
    actions = np.array([[40.0, 400.0], [300.0, 20.0], [500.0, 250.0], [100.0, 100.0]])
    bins = world.action_bins.encode(actions)
    codes = world.tokenizer.encode(frame[None])[0]
    n = codec.cond_tokens
    for seed, temperature in ((7, 1.0), (8, 0.0)):
        prompt = [codec.bos_id, *map(int, codes), *codec.chunks(codes, bins[0]).tolist()]
        forcing = StateForcing([[0] * codec.chunk_len] * 3, codec, codes, bins)
        out = sample(world.model, [prompt], max_new_tokens=4 * n, seeds=[seed], forced=[forcing], interleave_every=n,
                     allowed_token_range=(0, codec.frame_vocab), temperature=temperature, pad_token_id=codec.pad_id)
        completion = out.completions()[0]
        raw = np.array([completion[t * stride : t * stride + n] for t in range(4)])
        sampled = codec.frames_to_codes(codes, raw)
        for t in range(3):  # each forced chunk is the one of the frame the row generated
            assert completion[t * stride + n : (t + 1) * stride] == codec.chunks(sampled[t], bins[t + 1]).tolist()
        assert (env_step_codes(world, frame, actions, seed, temperature) == sampled).all()


def test_object_frame_options_need_the_keypoint_layouts(delta_setup, pose_setup):
    with pytest.raises(ValueError, match="keypoint layouts"):
        make_task("pusht", layout="pose", object_frame=True, **delta_setup)
    with pytest.raises(ValueError, match="options of object_frame"):
        make_task("pusht", layout="mixed", action_spans_frame=True, **delta_setup)
    with pytest.raises(ValueError, match="object_frame needs"):  # no point of the untrained tokenizer stays still
        make_task("pusht", layout="mixed", object_frame=True, **delta_setup)
    task = make_task("pusht", layout="mixed", delta_slots=OBJECT, object_frame=True, **delta_setup)
    assert task.codec.frame_point == widest_point(task.windows["train"].cond_codes, OBJECT)
    other = next(p for p in task.codec.object_points if p != task.codec.frame_point)
    assert make_task("pusht", layout="mixed", delta_slots=OBJECT, object_frame=True, frame_point=other,
                     **delta_setup).codec.frame_point == other
