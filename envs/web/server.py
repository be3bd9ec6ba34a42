"""Serve the shop site on loopback in a background thread.

The site must never be reachable from another machine: `SiteServer` refuses any host that is not a
loopback address, and binds a free port chosen by the OS unless one is given.
"""

from __future__ import annotations

import ipaddress
import json
import threading
import urllib.error
import urllib.request
from typing import Any

from rlvr_sim.envs.web.site import create_app
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

LOOPBACK_NAMES = ("localhost",)


class SiteUnavailableError(RuntimeError):
    """The site did not answer (server down, wrong URL)."""


def check_loopback(host: str) -> None:
    """Raise ValueError unless `host` is a loopback address: the site is for this machine only."""
    if host in LOOPBACK_NAMES:
        return
    try:
        is_loopback = ipaddress.ip_address(host).is_loopback
    except ValueError as exc:
        raise ValueError(f"host {host!r} is not an IP address or 'localhost'; the site serves loopback only") from exc
    if not is_loopback:
        raise ValueError(f"host {host!r} is not a loopback address; the site serves loopback only")


class _QuietRequestHandler(WSGIRequestHandler):
    """No per-request log lines: collection makes thousands of requests."""

    def log_request(self, *args: object, **kwargs: object) -> None:
        return None


class SiteServer:
    """The shop site on http://127.0.0.1:<port>, in a daemon thread; use as a context manager."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        check_loopback(host)
        self.app = create_app()
        self._server: BaseWSGIServer = make_server(
            host, port, self.app, threaded=True, request_handler=_QuietRequestHandler
        )
        self._thread = threading.Thread(target=self._server.serve_forever, name="shop-site", daemon=True)
        self.host, self.port = host, self._server.server_port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> SiteServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _request(url: str, method: str, timeout: float, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else (b"" if method == "POST" else None)
    req = urllib.request.Request(url, method=method, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return json.loads(response.read().decode())
    except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
        raise SiteUnavailableError(f"the site at {url} did not answer ({exc}); is the server running?") from exc


def reset_site(base_url: str, timeout: float = 5.0) -> None:
    """Restore the site's initial state (start of an episode)."""
    _request(base_url.rstrip("/") + "/__reset", "POST", timeout)


def fetch_state(base_url: str, timeout: float = 5.0) -> dict[str, Any]:
    """The site's server state as JSON (products, customers, orders) for success checks."""
    return _request(base_url.rstrip("/") + "/__state", "GET", timeout)


def restore_state(base_url: str, state: dict[str, Any], timeout: float = 5.0) -> None:
    """Put a state from `fetch_state` back on the server."""
    _request(base_url.rstrip("/") + "/__restore", "POST", timeout, body=state)


def main(argv: list[str] | None = None) -> None:
    """`python -m rlvr_sim.envs.web.server --port 8765`: serve the site until Ctrl-C."""
    import argparse
    import time

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="loopback address only")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    with SiteServer(args.host, args.port) as server:
        print(f"shop site on {server.url} (Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
