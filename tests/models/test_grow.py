"""Function-preserving depth growth (`model.grow_layers`): the deeper model starts exactly where the trained
one stopped, its new layers learn, and bad settings are named."""

import pytest
import torch

from rlvr_sim.config import ConfigError, load_config
from rlvr_sim.models.lm import build_model, grow_depth, load_model, save_checkpoint
from rlvr_sim.rl.trainer import run_training


def _trained_like(seed=0, layers=2):
    torch.manual_seed(seed)
    model = build_model("tiny-5m", vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
                        num_attention_heads=2, attention_bias=True)
    with torch.no_grad():  # random non-zero biases so zeroing them is tested too
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.normal_(0, 0.5)
    return model.eval()


@pytest.mark.parametrize("layers, target", [(2, 4), (2, 5), (3, 4)])
def test_grown_model_computes_the_same_logits_and_its_new_layers_get_gradients(layers, target):
    model = _trained_like(layers=layers)
    grown = grow_depth(model, target).eval()
    assert grown.config.num_hidden_layers == target and len(grown.model.layers) == target
    ids = torch.randint(0, 50, (3, 11))
    with torch.no_grad():
        same = (model(input_ids=ids).logits - grown(input_ids=ids).logits).abs().max()
    assert same < 1e-5, float(same)
    # and a KV-cached decode agrees with the full forward (layer indices are renumbered)
    with torch.no_grad():
        out = grown(input_ids=ids[:, :10], use_cache=True)
        step = grown(input_ids=ids[:, 10:], past_key_values=out.past_key_values, use_cache=True).logits[:, -1]
        full = grown(input_ids=ids).logits[:, -1]
    assert (step - full).abs().max() < 1e-4
    grown.train()
    grown(input_ids=ids, labels=ids).loss.backward()
    new = [i for i in range(target) if float(grown.model.layers[i].self_attn.o_proj.weight.detach().abs().max()) == 0]
    assert len(new) == target - layers
    for i in new:  # a zero output projection still receives a gradient, so the new layer can learn
        assert float(grown.model.layers[i].self_attn.o_proj.weight.grad.abs().max()) > 0
        assert float(grown.model.layers[i].mlp.down_proj.weight.grad.abs().max()) > 0


def test_grow_rejects_a_shallower_or_equal_depth():
    model = _trained_like(layers=3)
    for bad in (3, 2, 0, 4.0):
        with pytest.raises(ValueError, match="grow_layers must be an integer above the model's 3 layers"):
            grow_depth(model, bad)


def test_grow_layers_needs_a_checkpoint_and_an_integer():
    with pytest.raises(ConfigError, match="grow_layers"):
        load_config(None, ["model.preset=tiny-5m", "model.grow_layers=8"])
    with pytest.raises(ConfigError, match="grow_layers"):
        load_config(None, ["model.name_or_path=x", "model.grow_layers=eight"])
    # null switches a preset's growth off (continuing an already grown checkpoint)
    assert load_config(None, ["model.name_or_path=x", "model.grow_layers=null"]).model["grow_layers"] is None


def test_sft_run_grows_the_checkpoint_and_saves_the_deeper_model(addition_sft, tmp_path):
    sft_dir, _ = addition_sft
    base, _, _ = load_model(sft_dir)
    layers = base.config.num_hidden_layers
    config = load_config(None, [], task="addition", task_args={"digits": 1},
                         model={"name_or_path": str(sft_dir), "grow_layers": layers + 2}, steps=2, lr=1e-3,
                         batch_size=8, micro_batch_size=8, eval_examples=0, output_dir=str(tmp_path), progress=False)
    run_training("sft", config)
    grown, _, _ = load_model(tmp_path / "final")
    assert grown.config.num_hidden_layers == layers + 2
    save_checkpoint(tmp_path / "again", grown)  # and the grown checkpoint is an ordinary one
    assert load_model(tmp_path / "again")[0].config.num_hidden_layers == layers + 2
