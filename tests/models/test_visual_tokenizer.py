"""Compressive FSQ tokenizer: shapes, code ranges, FSQ round trip, save/load, bad input."""

import numpy as np
import pytest
import torch

from rlvr_sim.models.visual_tokenizer import ABSOLUTE, CONDITIONAL, FSQ, FrameTokenizer, TokenizerConfig


def test_fsq_codes_round_trip():
    fsq = FSQ([8, 5, 5, 5])
    values, codes = fsq(torch.randn(2, 3, 3, 4) * 3)
    assert codes.min() >= 0 and codes.max() < 1000
    assert torch.allclose(fsq.codes_to_values(codes), values)


def test_encode_decode_shapes_and_persistence(tmp_path):
    tok = FrameTokenizer(TokenizerConfig(width=8)).eval()
    frames = np.random.default_rng(0).integers(0, 256, (3, 64, 64, 3), dtype=np.uint8)
    abs_codes = tok.encode(frames, None, ABSOLUTE)
    cond_codes = tok.encode(frames, frames, CONDITIONAL)
    assert abs_codes.shape == (3, 64) and cond_codes.shape == (3, 16)
    out = tok.decode(cond_codes, frames, CONDITIONAL)
    assert out.shape == frames.shape and out.dtype == np.uint8
    tok.save(tmp_path / "t")
    again = FrameTokenizer.load(tmp_path / "t")
    assert np.array_equal(again.encode(frames, None, ABSOLUTE), abs_codes)


def test_bad_inputs():
    tok = FrameTokenizer(TokenizerConfig(width=8)).eval()
    with pytest.raises(ValueError, match="uint8 of shape"):
        tok.encode(np.zeros((1, 32, 32, 3), np.uint8))
    with pytest.raises(ValueError, match="need the context"):
        tok.encode(np.zeros((1, 64, 64, 3), np.uint8), None, CONDITIONAL)
    with pytest.raises(ValueError, match="codes must"):
        tok.decode(np.full((1, 16), 5000), np.zeros((1, 64, 64, 3), np.uint8), CONDITIONAL)
    with pytest.raises(ValueError, match="abs_grid"):
        TokenizerConfig(image_size=64, abs_grid=6)
    with pytest.raises(FileNotFoundError):
        FrameTokenizer.load("/nonexistent/tokenizer")


def test_composite_decoder_copies_the_context_where_its_mask_is_closed():
    tok = FrameTokenizer(TokenizerConfig(width=8)).eval()
    assert tok.config.output == "composite"
    rng = np.random.default_rng(1)
    context = rng.integers(0, 256, (2, 64, 64, 3), dtype=np.uint8)
    future = rng.integers(0, 256, (2, 64, 64, 3), dtype=np.uint8)
    codes = tok.encode(future, context, CONDITIONAL)
    with torch.no_grad():
        tok.dec_out.weight[3].zero_()
        tok.dec_out.bias[3].fill_(-50.0)  # mask shut everywhere: nothing is painted
    assert np.array_equal(tok.decode(codes, context, CONDITIONAL), context)
    with torch.no_grad():
        tok.dec_out.bias[3].fill_(50.0)  # mask open everywhere: the painted colour layer alone
    assert not np.array_equal(tok.decode(codes, context, CONDITIONAL), context)


def test_checkpoint_without_output_field_loads_as_residual(tmp_path):
    import json

    tok = FrameTokenizer(TokenizerConfig(width=8, output="residual")).eval()
    tok.save(tmp_path / "old")
    path = tmp_path / "old" / "tokenizer_config.json"
    stored = json.loads(path.read_text())
    del stored["config"]["output"]
    path.write_text(json.dumps(stored))
    again = FrameTokenizer.load(tmp_path / "old")
    assert again.config.output == "residual" and again.dec_out.out_channels == 3
    with pytest.raises(ValueError, match="output must be"):
        TokenizerConfig(output="warp")
