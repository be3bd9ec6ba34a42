"""LLM adapters against a fake OpenAI-compatible server on loopback and a tiny local HF model (no network)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
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


def test_hf_backend_with_tiny_local_model():
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(EMBEDDED_TOKENIZER_DIR))
    model = build_model("tiny-5m", len(tokenizer), max_positions=768, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=1, num_attention_heads=2)
    backend = HFChatBackend(model, tokenizer, max_new_tokens=5)
    replies = backend.complete([{"role": "user", "content": "hello"}], n=2, seed=1)
    assert len(replies) == 2 and all(isinstance(r, str) for r in replies)
    assert replies == backend.complete([{"role": "user", "content": "hello"}], n=2, seed=1)
    # a random model produces no readable action: the documented fallback
    actions = LLMWebPolicy(backend).propose("o", TREE, "/", [], 2, np.random.default_rng(0))
    assert actions == ["go_back"] * 2 or all(extract_action(a) == a for a in actions)
    value = LLMValueFunction(backend).score("o", TREE, "click [2]", TREE, [])
    assert 1.0 <= value <= 5.0
