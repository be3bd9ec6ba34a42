"""VideoTask codec and reward on tiny synthetic episodes with an untrained tokenizer (fast)."""

import numpy as np
import pytest

from rlvr_sim.models.visual_tokenizer import CONDITIONAL, FrameTokenizer, TokenizerConfig
from rlvr_sim.tasks import make_task
from rlvr_sim.tasks.video import WORST_REWARD, VideoCodec


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("video_task")
    rng = np.random.default_rng(0)
    for i in range(4):
        frames = np.full((12, 64, 64, 3), 255, np.uint8)
        for t in range(12):  # a moving block so consecutive frames differ
            frames[t, 20:30, 5 + 3 * t : 15 + 3 * t] = (90, 100, 120)
        np.savez_compressed(root / f"ep{i}.npz", image=frames, action=rng.uniform(0, 512, (12, 2)).astype(np.float32))
    tokenizer = FrameTokenizer(TokenizerConfig(width=8, levels=[5, 5])).eval()
    tokenizer.save(root / "tok")
    kwargs = dict(data_dir=str(root), tokenizer_dir=str(root / "tok"), horizon=3, frame_skip=1,
                  test_fraction=0.25, train_stride=2, test_stride=2, lpips="st-lpips")
    return root, kwargs


def test_multi_step_layout(setup):
    _, kwargs = setup
    task = make_task("pusht", **kwargs)
    codec = task.codec
    assert codec == VideoCodec(25, 2, 64, 16) and task.vocab_size == 25 + 512 + 2
    examples = task.examples("train")
    e = examples[0]
    assert e.prompt_ids[0] == codec.bos_id and len(e.prompt_ids) == 1 + 64 + 2
    assert len(e.answer_ids) == 3 * 16 + 2 * 2 and len(e.forced) == 2
    assert all(codec.action_offset <= t < codec.pad_id for chunk in e.forced for t in chunk)
    assert e.answer_ids[16:18] == e.forced[0]  # forced actions sit between generated frames
    spec = task.generation_spec()
    assert spec.max_new_tokens == 48 and spec.interleave_every == 16 and task.code_range == (0, 25)
    assert spec.allowed_token_range is None  # forced action tokens must stay scoreable by the trainer
    assert task.examples("train")[0] == e  # deterministic (served from the cache the second time)


def test_single_step_layout(setup):
    _, kwargs = setup
    task = make_task("pusht", mode="single", context_frames=2, **kwargs)
    e = task.examples("test")[0]
    assert len(e.prompt_ids) == 1 + 64 + 2 * (2 + 16) - 16 and len(e.answer_ids) == 16 and e.forced is None
    spec = task.generation_spec()
    assert spec.interleave_every is None and spec.allowed_token_range == task.code_range == (0, 25)


def test_reward_prefers_truth_and_handles_garbage(setup):
    _, kwargs = setup
    task = make_task("pusht", **kwargs)
    e = task.examples("test")[0]
    blank = [0] * 16 + e.forced[0] + [0] * 16 + e.forced[1] + [0] * 16
    one_bad = [9999] + e.answer_ids[1:]  # a non-code token in frame 1: that frame scores the worst (2)
    rewards = task.reward([e.prompt_ids] * 5, [e.answer_ids, blank, e.answer_ids[:10], [9999] * 52, one_bad],
                          [e.metadata] * 5)
    assert all(np.isfinite(rewards)) and rewards[2] == rewards[3] == WORST_REWARD
    assert WORST_REWARD < rewards[0] <= 0 and WORST_REWARD < rewards[1] <= 0
    assert rewards[4] < rewards[0] and rewards[4] == pytest.approx(rewards[0] * 2 / 3 - 2 / 3, abs=0.05)


def test_repetition_penalty_hits_repeated_frames(setup):
    _, kwargs = setup
    plain = make_task("pusht", **kwargs)
    penalised = make_task("pusht", repetition_penalty=0.5, **kwargs)
    e = plain.examples("test")[0]
    w = plain.windows["test"]
    same = list(map(int, w.cond_codes[e.metadata["index"], 0]))  # "no change" codes of the anchor
    repeating = same + e.forced[0] + same + e.forced[1] + same
    gold_changes = (w.cond_codes[e.metadata["index"], 1:] != w.cond_codes[e.metadata["index"], :-1]).any()
    r_plain = plain.reward([e.prompt_ids], [repeating], [e.metadata])[0]
    r_pen = penalised.reward([e.prompt_ids], [repeating], [e.metadata])[0]
    assert r_pen == pytest.approx(r_plain - 0.5 * gold_changes)


def test_decode_matches_tokenizer(setup):
    root, kwargs = setup
    task = make_task("pusht", **kwargs)
    w = task.windows["test"]
    frames = task.decode_predictions(w.cond_codes[:1, 1:], np.array([0]), "test")
    direct = task.frame_tokenizer.decode(w.cond_codes[0, 1:], np.repeat(w.context[:1], 3, axis=0), CONDITIONAL)
    assert np.array_equal(frames[0], direct)


def test_checkpoint_meta_and_bad_arguments(setup):
    _, kwargs = setup
    task = make_task("pusht", **kwargs)
    meta = task.checkpoint_meta()
    assert meta["action_bins"]["num_bins"] == 256 and meta["video_codec"]["cond_tokens"] == 16
    with pytest.raises(ValueError, match="mode"):
        make_task("pusht", mode="triple", **kwargs)
    with pytest.raises(ValueError, match="context_frames"):
        make_task("pusht", mode="single", context_frames=9, **kwargs)
    with pytest.raises(FileNotFoundError):
        make_task("pusht", **{**kwargs, "tokenizer_dir": "/nonexistent"})


def test_object_reward_scores_the_truth_near_zero_and_lost_objects_worst(pose_setup):
    from rlvr_sim.metrics.pusht_pixels import WORST_OBJECT_SCORE

    task = make_task("pusht", reward_kind="object", **pose_setup)
    assert task.worst_reward == -WORST_OBJECT_SCORE and task.codec.cond_tokens == 5
    examples = task.examples("test")[:3]
    prompts, metas = [e.prompt_ids for e in examples], [e.metadata for e in examples]
    gold = task.reward(prompts, [e.answer_ids for e in examples], metas)
    assert all(-3.0 < r <= 0.0 for r in gold)  # the tokenizer's own quantisation and judge error only
    slot = task.frame_tokenizer.config.slot_size
    far = []
    for e in examples:
        answer = list(e.answer_ids)
        answer[0] = (answer[0] + 60) % slot  # agent x moved 60 bins (30 px) in the first frame
        far.append(answer)
    assert all(f < g - 3.0 for f, g in zip(task.reward(prompts, far, metas), gold))
    lost = [[task.frame_tokenizer.config.bins] * 5 + e.answer_ids[5:] for e in examples]  # agent code "absent"
    assert all(r < g for r, g in zip(task.reward(prompts, lost, metas), gold))
    assert task.reward(prompts, [[0, 1]] * 3, metas) == [task.worst_reward] * 3  # unparseable: the worst
    both = make_task("pusht", reward_kind="both", **pose_setup)
    assert both.worst_reward == WORST_REWARD - WORST_OBJECT_SCORE / 10
    with pytest.raises(ValueError, match="reward_kind"):
        make_task("pusht", reward_kind="pixels", **pose_setup)


def test_d4_augmentation_adds_true_symmetric_windows_scored_on_the_original(pose_setup):
    """augment="d4": 8x the training windows (test split untouched); a symmetric copy's gold answer is
    scored against the original window after mapping it back, so it scores as the original's gold does."""
    plain = make_task("pusht", reward_kind="object", **pose_setup)
    task = make_task("pusht", reward_kind="object", augment="d4",
                     action_bins={"low": [0, 0], "high": [512, 512], "num_bins": 256}, **pose_setup)
    train, n = task.examples("train"), len(plain.examples("train"))
    assert len(train) == 8 * n and len(task.examples("test")) == len(plain.examples("test"))
    assert sorted({e.metadata["sym"] for e in train}) == list(range(8))
    copies = [train[k * n] for k in range(8)]  # window 0 under each symmetry
    assert len({tuple(e.prompt_ids + e.answer_ids) for e in copies}) == 8
    gold = task.reward([e.prompt_ids for e in copies], [e.answer_ids for e in copies], [e.metadata for e in copies])
    assert np.allclose(gold, gold[0]) and gold[0] > -3.0
    wrong = dict(copies[3].metadata, sym=0)  # a turned answer scored as if it were unturned: far off
    assert task.reward([copies[3].prompt_ids], [copies[3].answer_ids], [wrong])[0] < gold[0] - 3.0
    bins = np.array([[3, 250], [128, 7]])
    for k in range(8):
        assert (task.symmetric_action_bins(task.symmetric_action_bins(bins, k), k, inverse=True) == bins).all()
    with pytest.raises(ValueError, match="augment must be one of"):
        make_task("pusht", augment="rot", **pose_setup)
    with pytest.raises(ValueError, match="centred on"):
        make_task("pusht", augment="d4", action_bins={"low": [0, 0], "high": [400, 512], "num_bins": 256},
                  **pose_setup)


def test_d4_augmentation_needs_pose_codes(setup):
    _, kwargs = setup
    with pytest.raises(ValueError, match="pose tokenizer"):
        make_task("pusht", augment="d4", **kwargs)
    with pytest.raises(ValueError, match="pose tokenizer"):
        make_task("pusht", contact_weight=1.0, **kwargs)


def test_extra_train_dirs_add_training_windows_only(pose_setup, tmp_path):
    from rlvr_sim.envs.video.collect import collect

    collect(tmp_path / "more", episodes=2, seed=5, max_steps=40, mix="expert:1")
    bins = {"low": [0, 0], "high": [512, 512], "num_bins": 256}  # fixed: fitted ranges would follow the data
    plain = make_task("pusht", action_bins=bins, **pose_setup)
    more = make_task("pusht", action_bins=bins, extra_train_dirs=[str(tmp_path / "more")], **pose_setup)
    assert len(more.examples("train")) > len(plain.examples("train"))
    assert [e.prompt_ids for e in more.examples("test")] == [e.prompt_ids for e in plain.examples("test")]
    assert more.checkpoint_meta()["video_settings"]["extra_train_dirs"] == [str(tmp_path / "more")]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        make_task("pusht", extra_train_dirs=[str(tmp_path / "nowhere")], **pose_setup)


def test_d4_shift_translates_copies_away_from_the_walls_and_scores_them_on_the_original(pose_setup):
    bins = {"low": [0, 0], "high": [512, 512], "num_bins": 256}
    plain = make_task("pusht", reward_kind="object", action_bins=bins, augment="d4", **pose_setup)
    task = make_task("pusht", reward_kind="object", action_bins=bins, augment="d4_shift", **pose_setup)
    train = task.examples("train")
    moved = [e for e in train if any(e.metadata.get("shift", [0, 0]))]
    assert len(train) > len(plain.examples("train")) and moved
    slot, pose_bins = task.frame_tokenizer.config.slot_size, task.frame_tokenizer.config.bins
    for e in moved[:20]:
        assert max(abs(d) for d in e.metadata["shift"]) <= 16
        codes = np.array(e.prompt_ids[1:6])
        assert ((codes // slot) == np.arange(5)).all()  # every code stays in its own slot's range
        assert (codes[:4] % slot >= pose_bins // 16).all() and (codes[:4] % slot < pose_bins - pose_bins // 16).all()
    sample = moved[:4]
    gold = task.reward([e.prompt_ids for e in sample], [e.answer_ids for e in sample], [e.metadata for e in sample])
    assert all(-3.0 < r <= 0.0 for r in gold)  # mapped back onto the true window: only quantisation error
    unmoved = [dict(e.metadata, shift=[0, 0]) for e in sample]
    assert np.mean(task.reward([e.prompt_ids for e in sample], [e.answer_ids for e in sample], unmoved)) < np.mean(gold)


def test_contact_weight_penalises_a_disc_inside_the_t(pose_setup):
    from rlvr_sim.metrics.pusht_pixels import MAX_PENETRATION

    plain = make_task("pusht", reward_kind="object", **pose_setup)
    task = make_task("pusht", reward_kind="object", contact_weight=2.0, **pose_setup)
    assert task.worst_reward == plain.worst_reward - 2.0 * MAX_PENETRATION
    examples = task.examples("test")[:2]
    prompts, metas = [e.prompt_ids for e in examples], [e.metadata for e in examples]
    gold = [e.answer_ids for e in examples]
    assert np.allclose(task.reward(prompts, gold, metas), plain.reward(prompts, gold, metas), atol=0.2)
    slot = task.frame_tokenizer.config.slot_size
    inside = []
    for e in examples:  # every frame's agent put on the T's position: the disc deep inside the T
        answer = list(e.answer_ids)
        for t in range(task.horizon):
            base = t * 7
            answer[base], answer[base + 1] = answer[base + 2] - 2 * slot, answer[base + 3] - 2 * slot
        inside.append(answer)
    penalised, unpenalised = task.reward(prompts, inside, metas), plain.reward(prompts, inside, metas)
    assert all(p < u - 1.0 for p, u in zip(penalised, unpenalised))
    with pytest.raises(ValueError, match="contact_weight"):
        make_task("pusht", contact_weight=-1.0, **pose_setup)


def test_window_frames_are_stored_once_and_read_as_each_window_s_frames(setup, tmp_path):
    """Overlapping windows share their episode frames (`WindowFrames`): every window still reads its own true frames
    x_1..x_T, the store holds each episode frame once, and a cache from before (frames per window) loads the same."""
    from rlvr_sim.data.episodes import episode_paths, load_episodes
    from rlvr_sim.tasks.video_data import WindowFrames, _from_arrays

    root, kwargs = setup
    task = make_task("pusht", **dict(kwargs, cache_dir=str(tmp_path / "c1")))
    episodes = load_episodes(episode_paths(root), 64, 1)
    w = task.windows["train"]
    assert w.future.shape == (len(w.context), 3, 64, 64, 3) and w.future.dtype == np.uint8
    assert len(w.future.frames) < w.future.index.size  # stride 2 < horizon 3: frames shared, not copied
    for r in range(len(w.context)):  # each window's frames follow its anchor in one recorded episode
        match = [ep for ep in episodes for t in range(len(ep.images) - 3) if (ep.images[t] == w.context[r]).all()
                 and (ep.images[t + 1 : t + 4] == w.future[r]).all()]
        assert match
    assert (np.asarray(w.future)[:, 1] == w.future[:, 1]).all() and (w.future[[2, 0], 2] == w.future[:, 2][[2, 0]]).all()
    arrays = {"train_context": w.context, "train_future": np.asarray(w.future), "train_abs_codes": w.abs_codes,
              "train_cond_codes": w.cond_codes, "train_action_bins": w.action_bins}
    np.savez(tmp_path / "old.npz", **arrays)
    with np.load(tmp_path / "old.npz") as data:
        old = _from_arrays(data, "train")
    assert (np.asarray(old.future) == np.asarray(w.future)).all()
    again = make_task("pusht", **dict(kwargs, cache_dir=str(tmp_path / "c1")))  # from this cache
    assert (np.asarray(again.windows["train"].future) == np.asarray(w.future)).all()
    with pytest.raises(ValueError, match="window frame index"):
        WindowFrames(w.future.frames, np.array([[0, len(w.future.frames)]]))


def test_lazy_examples_index_like_a_list():
    from rlvr_sim.tasks.video import LazyExamples

    made = []
    seq = LazyExamples(lambda v, j: made.append((v, j)) or (v, j), [2, 0, 3])
    assert len(seq) == 5 and not made  # nothing is built until asked for
    assert [seq[i] for i in range(5)] == [(0, 0), (0, 1), (2, 0), (2, 1), (2, 2)] == list(seq)
    assert seq[-1] == (2, 2) and seq[1:4] == [(0, 1), (2, 0), (2, 1)] and seq[:0] == []
    for bad in (5, -6):
        with pytest.raises(IndexError, match="out of range"):
            seq[bad]
    assert len(LazyExamples(lambda v, j: None, [])) == 0
