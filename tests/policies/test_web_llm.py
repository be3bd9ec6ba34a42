"""LLM adapters against a fake OpenAI-compatible server on loopback and a tiny local HF model (no network)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from rlvr_sim.envs.web.world_model_env import EMBEDDED_TOKENIZER_DIR
from rlvr_sim.policies.web_llm import (
    ChatBackendError,
    HFChatBackend,
    LLMValueFunction,
    LLMWebPolicy,
    LLMWorldModel,
    OpenAIChatBackend,
    extract_action,
    extract_likert,
)
from transformers import PreTrainedTokenizerFast

from rlvr_sim.models.lm import build_model

TREE = "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True\n\t[2] link 'Orders'"


class FakeChat(BaseHTTPRequestHandler):
    """Answers /chat/completions by the system prompt's role; records requests; ignores `n` like some servers."""

    requests: list = []

    def do_POST(self):  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeChat.requests.append((self.path, self.headers.get("Authorization"), body))
        system = body["messages"][0]["content"]
        if "web agent." in system:
            reply = "The orders link leads there.\n```click [2]```"
        elif "judge" in system:
            reply = "4"
        else:
            reply = "New items:\nNone\n\nDeleted items:\nNone\n\nUpdated items:\n[1] RootWebArea 'Orders' focused: True"
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": reply}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        return None


@pytest.fixture(scope="module")
def fake_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeChat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_openai_compatible_adapters(fake_server):
    backend = OpenAIChatBackend(fake_server, model="fake-model", api_key="sk-test")
    rng = np.random.default_rng(0)
    assert LLMWebPolicy(backend).propose("Open orders", TREE, "/", [], 3, rng) == ["click [2]"] * 3
    assert LLMValueFunction(backend, samples=2).score("Open orders", TREE, "click [2]", TREE, []) == 4.0
    imagined = LLMWorldModel(backend).imagine("Open orders", "/", TREE, "click [2]", seed=0)
    assert "RootWebArea 'Orders'" in imagined
    path, auth, body = FakeChat.requests[0]
    assert path == "/v1/chat/completions" and auth == "Bearer sk-test" and body["model"] == "fake-model"


def test_endpoint_down_raises_clear_error():
    backend = OpenAIChatBackend("http://127.0.0.1:9/v1", model="m", timeout=2)
    with pytest.raises(ChatBackendError, match="failed"):
        backend.complete([{"role": "user", "content": "hi"}])


def test_reply_parsing_fallbacks():
    assert extract_action("I will click.\n```\ntype [5] [tea] [1]\n```") == "type [5] [tea] [1]"
    assert extract_action("hover [3]\nmore text") == "hover [3]"
    assert extract_action("no action here") is None
    assert extract_likert("Score: 3.5/5") == 3.5 and extract_likert("none") is None


class _ScriptedCache:
    """The sampler's KV-cache seam: only counts the decoding steps already answered."""

    def __init__(self) -> None:
        self.step = 0

    def batch_repeat_interleave(self, repeats: int) -> None:
        return None


class ScriptedLM(torch.nn.Module):
    """A stand-in causal LM that answers every prompt with known text: sample k of a group is a newline
    followed by `replies[k]` and EOS, token for token, whatever the seed or temperature (the prefill runs
    once per prompt, before the group is split, so the first token is shared: the newline). It records the
    prompts it saw."""

    def __init__(self, tokenizer: PreTrainedTokenizerFast, replies: list[str]) -> None:
        super().__init__()
        self.anchor = torch.nn.Parameter(torch.zeros(1))  # the sampler reads the device off a parameter
        self.vocab = len(tokenizer)
        self.opening = tokenizer.encode("\n", add_special_tokens=False)
        assert len(self.opening) == 1
        self.scripts = [tokenizer.encode(r, add_special_tokens=False) + [tokenizer.eos_token_id] for r in replies]
        self.prompts: list[list[int]] = []

    def forward(self, input_ids, attention_mask, position_ids, use_cache, past_key_values=None):
        if past_key_values is None:
            self.prompts.append(input_ids[0].tolist())
            cache = _ScriptedCache()
        else:
            cache = past_key_values
            cache.step += 1
        logits = torch.full((*input_ids.shape, self.vocab), -1e4)
        for row in range(input_ids.shape[0]):
            script = self.scripts[row % len(self.scripts)]
            token = self.opening[0] if cache.step == 0 else script[min(cache.step - 1, len(script) - 1)]
            logits[row, -1, token] = 0.0
        return SimpleNamespace(logits=logits, past_key_values=cache)


@pytest.fixture(scope="module")
def web_tokenizer():
    return PreTrainedTokenizerFast.from_pretrained(str(EMBEDDED_TOKENIZER_DIR))


def test_hf_backend_replies_are_the_models_tokens(web_tokenizer):
    model = ScriptedLM(web_tokenizer, ["Orders is linked.\n```click [2]```", "I am not sure."])
    replies = HFChatBackend(model, web_tokenizer, max_new_tokens=40).complete(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}], n=2, seed=3)
    assert replies == ["\nOrders is linked.\n```click [2]```", "\nI am not sure."]
    # without a chat template the roles are spelled out and the reply is prompted for
    assert web_tokenizer.decode(model.prompts[0]) == "SYSTEM: Be brief.\nUSER: hello\nASSISTANT: "


def test_hf_backend_truncates_at_max_new_tokens(web_tokenizer):
    model = ScriptedLM(web_tokenizer, ["hover [1]"])
    expected = web_tokenizer.decode(model.opening + model.scripts[0][:2])
    assert HFChatBackend(model, web_tokenizer, max_new_tokens=3).complete([{"role": "user", "content": "hi"}]) == [expected]


def test_hf_policy_parses_each_readable_reply_and_drops_the_rest(web_tokenizer):
    model = ScriptedLM(web_tokenizer, ["Orders is linked.\n```click [2]```", "I am not sure.", "hover [1]\nthen more"])
    policy = LLMWebPolicy(HFChatBackend(model, web_tokenizer, max_new_tokens=40))
    actions = policy.propose("Open orders", TREE, "/", ["scroll [down]"], 3, np.random.default_rng(0))
    assert actions == ["click [2]", "hover [1]"]
    prompt = web_tokenizer.decode(model.prompts[0])
    assert "OBJECTIVE: Open orders\nURL: /\nPREVIOUS ACTIONS:\nscroll [down]\nOBSERVATION:\n" + TREE in prompt


def test_hf_policy_falls_back_to_go_back_when_nothing_parses(web_tokenizer):
    model = ScriptedLM(web_tokenizer, ["no action here", "click on the orders link"])
    policy = LLMWebPolicy(HFChatBackend(model, web_tokenizer, max_new_tokens=40))
    assert policy.propose("Open orders", TREE, "/", [], 2, np.random.default_rng(0)) == ["go_back", "go_back"]


def test_hf_value_averages_likert_and_counts_unreadable_as_one(web_tokenizer):
    model = ScriptedLM(web_tokenizer, ["I rate it 4", "unsure"])
    value = LLMValueFunction(HFChatBackend(model, web_tokenizer, max_new_tokens=40), samples=2)
    assert value.score("Open orders", TREE, "click [2]", TREE, []) == 2.5
    model = ScriptedLM(web_tokenizer, ["Score: 3.5/5"])
    assert LLMValueFunction(HFChatBackend(model, web_tokenizer, max_new_tokens=40)).score(
        "Open orders", TREE, "click [2]", TREE, []) == 3.5


def test_hf_backend_sampling_is_seeded(web_tokenizer):
    model = build_model("tiny-5m", len(web_tokenizer), max_positions=768, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=1, num_attention_heads=2)
    backend = HFChatBackend(model, web_tokenizer, max_new_tokens=5)
    replies = backend.complete([{"role": "user", "content": "hello"}], n=2, seed=1)
    assert len(replies) == 2 and all(isinstance(r, str) for r in replies)
    assert replies == backend.complete([{"role": "user", "content": "hello"}], n=2, seed=1)
