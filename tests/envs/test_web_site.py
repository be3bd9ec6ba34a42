"""The shop site without a browser: pages, reset/state/restore endpoints, loopback-only serving, tasks."""

import json
import socket

import pytest
from rlvr_sim.envs.web.server import (
    SiteServer,
    SiteUnavailableError,
    check_loopback,
    fetch_state,
    reset_site,
    restore_state,
)
from rlvr_sim.envs.web.site import create_app, initial_state
from rlvr_sim.envs.web.tasks import WEB_TASKS, get_task, normalise_answer

INITIAL = json.loads(json.dumps(initial_state().to_json()))


@pytest.fixture()
def client():
    return create_app().test_client()


def test_pages_render(client):
    for path in ("/", "/products", "/products?page=3", "/products?q=tea", "/products/1", "/products/new", "/orders",
                 "/orders?status=pending", "/orders/1001", "/customers", "/customers/2", "/account/profile"):
        assert client.get(path).status_code == 200, path
    assert client.get("/products/999").status_code == 404
    assert b"Green Tea" in client.get("/products?q=tea").data


def test_forms_change_state_and_reset_restores(client):
    client.post("/products/1", data={"name": "Blue Mug", "price": "9.00", "stock": "40"})
    client.post("/orders/1001/ship")
    client.post("/customers/5", data={"email": "marie@example.com", "newsletter": "on"})
    state = client.get("/__state").get_json()
    assert next(p for p in state["products"] if p["id"] == 1)["price"] == 9.0
    assert next(o for o in state["orders"] if o["id"] == 1001)["status"] == "shipped"
    assert next(c for c in state["customers"] if c["id"] == 5)["newsletter"] is True
    client.post("/__reset")
    assert client.get("/__state").get_json() == INITIAL


def test_invalid_form_values_are_refused(client):
    page = client.post("/products/1", data={"name": "Blue Mug", "price": "-3", "stock": "x"})
    assert b"Invalid value" in page.data
    assert client.get("/__state").get_json() == INITIAL
    assert client.post("/__restore", json={"products": "nope"}).status_code == 400


def test_server_is_loopback_only_and_reports_when_down():
    for host in ("0.0.0.0", "192.168.1.5", "example.com", "::"):
        with pytest.raises(ValueError, match="loopback"):
            SiteServer(host=host)
    check_loopback("127.0.0.1")
    with SiteServer() as server:
        assert server.host == "127.0.0.1"
        bound = server._server.socket.getsockname()[0]
        assert bound == "127.0.0.1"
        state = fetch_state(server.url)
        state["products"][0]["price"] = 1.0
        restore_state(server.url, state)
        assert fetch_state(server.url)["products"][0]["price"] == 1.0
        reset_site(server.url)
        url = server.url
    with pytest.raises(SiteUnavailableError, match="did not answer"):
        reset_site(url, timeout=1.0)
    probe = socket.socket()
    assert probe.connect_ex(("127.0.0.1", int(url.rsplit(":", 1)[1]))) != 0
    probe.close()


def test_task_suite_has_twenty_unsolved_tasks_with_checks():
    assert len(WEB_TASKS) >= 20
    state = initial_state().to_json()
    for task in WEB_TASKS:
        assert not task.check(state, task.start_path, None), task.objective
    assert get_task(12).check(state, "/", "$4.20") and not get_task(12).check(state, "/", "4.30")
    assert get_task(18).check(state, "/products/4", None)
    assert normalise_answer(" Alan  Turing. ") == "alan turing"
    with pytest.raises(ValueError, match="valid ids"):
        get_task(999)
