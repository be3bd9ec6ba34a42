"""Drive Debian's Chromium through Playwright: observe the page as tree text, execute WebArena actions.

The browser may only talk to the site: every request to another origin is aborted, and `goto` to
another origin is refused. Element ids in actions are the ids of the last observed tree
(`accessibility.TreeFlattener`); an id that is not in it raises `ActionError`.

A Chromium that dies (crashed, killed, out of memory) raises `BrowserCrashedError` from any call of a driver
on it, never an `ActionError` or `PageLoadError` that would read as the agent's mistake; the next
`BrowserDriver` starts a new Chromium.
"""

from __future__ import annotations

import atexit
import os
import shutil
from typing import Any
from urllib.parse import urljoin, urlsplit

from rlvr_sim.envs.web.accessibility import TreeFlattener
from rlvr_sim.envs.web.actions import WebAction

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-features=BackForwardCache",  # go_back reloads the page: same tree ids as a fresh visit
)
_MARK = "data-rlvr-target"
# Tag the DOM element behind an AX node so Playwright can act on it; a text node or a node inside an
# input's shadow tree resolves to the nearest element of the page itself (the text field).
_MARK_JS = f"""function() {{
  document.querySelectorAll('[{_MARK}]').forEach(e => e.removeAttribute('{_MARK}'));
  let el = this.nodeType === 1 ? this : this.parentElement;
  while (el && el.getRootNode() instanceof ShadowRoot) el = el.getRootNode().host;
  if (!el) return false;
  el.setAttribute('{_MARK}', '1');
  return true;
}}"""
_NEW_DOCUMENT_JS = "() => { const fresh = !window.__rlvrSeen; window.__rlvrSeen = true; return fresh; }"


class ActionError(RuntimeError):
    """A well-formed action that cannot be executed here (unknown element id, unsupported action)."""


class PageLoadError(RuntimeError):
    """A page did not load (server down, refused URL, timeout)."""


class BrowserCrashedError(RuntimeError):
    """The Chromium process behind a driver is gone (crashed or killed): its pages cannot be used again."""


def chromium_path() -> str:
    """The Chromium executable: $RLVR_SIM_CHROMIUM, else `chromium` on PATH (Debian: apt-get install chromium)."""
    path = os.environ.get("RLVR_SIM_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise FileNotFoundError("no Chromium found: install it (apt-get install chromium) or set RLVR_SIM_CHROMIUM")
    return path


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


_shared: dict[str, Any] = {}


def shared_browser() -> Any:
    """The process's one Chromium (Playwright's sync API allows one instance per thread); drivers each
    get their own browser context on it. Stopped at interpreter exit."""
    browser = _shared.get("browser")
    if browser is not None and browser.is_connected():
        return browser
    from playwright.sync_api import sync_playwright

    if "playwright" not in _shared:
        _shared["playwright"] = sync_playwright().start()
        atexit.register(_stop_shared)
    _shared["browser"] = _shared["playwright"].chromium.launch(executable_path=chromium_path(), args=list(CHROMIUM_FLAGS))
    return _shared["browser"]


def _stop_shared() -> None:
    for key in ("browser", "playwright"):
        handle = _shared.pop(key, None)
        if handle is not None:
            try:
                handle.close() if key == "browser" else handle.stop()
            except Exception:
                pass


class BrowserDriver:
    """One headless Chromium page (in its own browser context) on the site at `base_url`."""

    def __init__(self, base_url: str, timeout_ms: int = 5000, viewport: tuple[int, int] = (1280, 720)) -> None:
        self.base_url = base_url.rstrip("/")
        self.origin = _origin(self.base_url)
        self.timeout_ms = timeout_ms
        self._context = shared_browser().new_context(viewport={"width": viewport[0], "height": viewport[1]})
        self._context.set_default_timeout(timeout_ms)
        self._context.route("**/*", self._only_site)
        self.page = self._context.new_page()
        self._cdp = self._context.new_cdp_session(self.page)
        self.flattener = TreeFlattener()
        self.new_document = True  # whether the last observe() saw a document not observed before

    def alive(self) -> bool:
        """Whether this driver's Chromium is still connected and its page open."""
        try:
            browser = self._context.browser
            return bool(browser is not None and browser.is_connected() and not self.page.is_closed())
        except Exception:
            return False

    def _crashed(self, doing: str, exc: BaseException | None = None) -> BrowserCrashedError:
        detail = f": {str(exc).splitlines()[0]}" if exc is not None and str(exc) else ""
        return BrowserCrashedError(f"Chromium is gone (crashed or killed) while {doing}{detail}")

    def _only_site(self, route: Any) -> None:
        if _origin(route.request.url) == self.origin:
            route.continue_()
        else:
            route.abort()

    @property
    def url(self) -> str:
        return self.page.url

    @property
    def path(self) -> str:
        """The current URL's path and query (e.g. `/products?page=2`), '' off the site."""
        if _origin(self.page.url) != self.origin:
            return ""
        parts = urlsplit(self.page.url)
        return parts.path + (f"?{parts.query}" if parts.query else "")

    def goto(self, url: str) -> None:
        """Open a site URL (absolute, or a path relative to the site); raises PageLoadError if it fails."""
        target = urljoin(self.base_url + "/", url)
        if _origin(target) != self.origin:
            raise ActionError(f"goto outside the site is not allowed: {url!r} (site: {self.origin})")
        try:
            self.page.goto(target, wait_until="load")
        except Exception as exc:  # playwright.Error: connection refused, timeout, ...
            if not self.alive():
                raise self._crashed(f"loading {target}", exc) from exc
            raise PageLoadError(f"could not load {target}: {str(exc).splitlines()[0]}") from exc

    def observe(self) -> str:
        """The current page as WebArena-style tree text (ids stable within the document)."""
        try:
            fresh = self.page.evaluate(_NEW_DOCUMENT_JS)
        except Exception as exc:
            if not self.alive():
                raise self._crashed("reading the page", exc) from exc
            fresh = True
        self.new_document = bool(fresh)
        if fresh:
            self.flattener.new_document()
        try:
            nodes = self._cdp.send("Accessibility.getFullAXTree", {})["nodes"]
            title = self.page.title()
        except Exception as exc:
            if not self.alive():
                raise self._crashed("reading the accessibility tree", exc) from exc
            raise
        return self.flattener.flatten(nodes, title)

    def _locate(self, element_id: str) -> Any:
        node_id = int(element_id)
        backend = self.flattener.backend_ids.get(node_id)
        if backend is None:
            raise ActionError(f"element [{element_id}] is not in the current page's tree")
        try:
            remote = self._cdp.send("DOM.resolveNode", {"backendNodeId": backend})["object"]
            marked = self._cdp.send("Runtime.callFunctionOn", {
                "objectId": remote["objectId"],
                "functionDeclaration": _MARK_JS,
                "returnByValue": True,
            })["result"].get("value", False)
        except Exception as exc:
            raise ActionError(f"element [{element_id}] is no longer in the page") from exc
        if not marked:
            raise ActionError(f"element [{element_id}] has no element to act on")
        return self.page.locator(f"[{_MARK}]").first

    def execute(self, action: WebAction) -> None:
        """Run one action. Raises ActionError (cannot be done here) or PageLoadError (navigation failed)."""
        kind = action.kind
        try:
            if kind in ("click", "hover", "type"):
                target = self._locate(action.element_id)
                if kind == "click":
                    target.click()
                elif kind == "hover":
                    target.hover()
                else:
                    try:
                        target.fill(action.text)
                    except Exception as exc:
                        raise ActionError(f"element [{action.element_id}] is not a text field") from exc
                    if action.press_enter:
                        target.press("Enter")
            elif kind == "press":
                self.page.keyboard.press(action.text)
            elif kind == "scroll":
                delta = self.page.viewport_size["height"] if self.page.viewport_size else 720
                self.page.mouse.wheel(0, delta if action.text == "down" else -delta)
            elif kind == "goto":
                self.goto(action.text)
            elif kind == "go_back":
                self.page.go_back(wait_until="load")
            elif kind == "go_forward":
                self.page.go_forward(wait_until="load")
            elif kind in ("new_tab", "tab_focus", "close_tab"):
                raise ActionError(f"{kind} is not supported: this environment has a single tab")
            elif kind != "stop":
                raise ActionError(f"unsupported action {kind!r}")
            self.page.wait_for_load_state("load")
        except BrowserCrashedError:
            raise
        except (ActionError, PageLoadError) as exc:
            if not self.alive():  # e.g. an element lookup or a goto that failed because Chromium died
                raise self._crashed(f"running {kind}", exc) from exc
            raise
        except Exception as exc:  # playwright.Error / TimeoutError from the browser
            if not self.alive():
                raise self._crashed(f"running {kind}", exc) from exc
            message = str(exc).splitlines()[0]
            if "net::" in message or "Navigation" in message:
                raise PageLoadError(f"{kind} failed to load a page: {message}") from exc
            raise ActionError(f"{kind} failed in the browser: {message}") from exc

    def close(self) -> None:
        try:
            self._context.close()
        except Exception:
            pass
