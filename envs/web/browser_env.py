"""`RLVRSim/WebShop-v0`: the shop site in a real headless Chromium as a Gymnasium environment."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from rlvr_sim.envs.web.actions import ActionParseError, parse_action
from rlvr_sim.envs.web.driver import ActionError, BrowserCrashedError, BrowserDriver, PageLoadError
from rlvr_sim.envs.web.server import SiteServer, SiteUnavailableError, fetch_state, reset_site, restore_state
from rlvr_sim.envs.web.spaces import TextSpace
from rlvr_sim.envs.web.tasks import WEB_TASKS, WebTaskSpec, get_task

MAX_TREE_CHARS = 20_000
MAX_ACTION_CHARS = 1_000


class SimulationError(RuntimeError):
    """`BrowserEnv.simulate` cannot rebuild the current page in its scratch tab, so it has no ground truth."""


class BrowserEnv(gym.Env):
    """The shop-admin site driven through Playwright + Chromium.

    ## Description
    Each episode is one task of `rlvr_sim.envs.web.tasks.WEB_TASKS` (an objective with a programmatic
    success check). The site's state is reset at the start of every episode.

    ## Action Space
    Text in WebArena syntax (`click [id]`, `type [id] [text] [0|1]`, `hover [id]`, `scroll [up|down]`,
    `press [key]`, `goto [url]`, `go_back`, `go_forward`, `stop [answer]`), ids from the current tree.

    ## Observation Space
    The page's accessibility tree as WebArena-style text (`[id] role 'name' prop: value`, one node a
    line, tab indent = depth), ids stable within a page. The objective is in `info["objective"]`.

    ## Rewards
    1.0 on the step the task is judged successful, else 0.0.

    ## Starting State
    The task's start page on a freshly reset site. `reset(options={"task_id": i})` picks a task;
    otherwise the constructor's `task_id`, else a task drawn with the env's seeded generator.

    ## Episode End
    Terminated when the agent stops (`stop [...]`; answer tasks are judged on the answer) or when a
    state or URL task's check holds; truncated after `max_steps` steps.
    Bad actions are not fatal: malformed text, an id missing from the tree, an unsupported action or a
    page that fails to load leave the episode running with reward 0 and the reason in
    `info["action_error"]` (the observation is the page as it now is). A site that does not answer
    (server down) raises `SiteUnavailableError` from `reset` and from `step`. A Chromium that dies
    mid-episode (crashed or killed) raises `BrowserCrashedError` from `step` (or `simulate`) and ends the
    episode: `step` then asks for `reset`, and `reset` starts a new Chromium. Nothing is scored for it.

    ## Arguments
    `task_id`: fixed task (None: drawn per episode); `base_url`: an already running site (None: start a
    loopback server owned by the env); `max_steps`: step limit; `render_mode`: None or "ansi".

    ## Version History
    v0: first version.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, task_id: int | None = None, base_url: str | None = None, max_steps: int = 15,
                 render_mode: str | None = None, timeout_ms: int = 5000) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if task_id is not None:
            get_task(task_id)
        self.task_id, self.max_steps, self.render_mode, self.timeout_ms = task_id, max_steps, render_mode, timeout_ms
        self.observation_space = TextSpace(MAX_TREE_CHARS)
        self.action_space = TextSpace(MAX_ACTION_CHARS)
        self._server = SiteServer().start() if base_url is None else None
        self.base_url = base_url.rstrip("/") if base_url else self._server.url
        self._driver: BrowserDriver | None = None
        self._scratch: BrowserDriver | None = None
        self.task: WebTaskSpec | None = None
        self._tree = ""
        self._steps = 0
        self._document_path = "/"
        self._page_actions: list[str] = []
        self._start_state: dict[str, Any] = {}
        self._episode_actions: list[tuple[str, bool]] = []  # (action, failed) since reset, for `simulate`

    @property
    def driver(self) -> BrowserDriver:
        if self._driver is None:
            self._driver = BrowserDriver(self.base_url, timeout_ms=self.timeout_ms)
        return self._driver

    def _observe(self) -> str:
        tree = self.driver.observe()
        return tree[:MAX_TREE_CHARS]

    def _info(self, **extra: Any) -> dict[str, Any]:
        assert self.task is not None
        return {"task_id": self.task.task_id, "objective": self.task.objective, "url": self.driver.path,
                "steps": self._steps, **extra}

    def _drop_dead_drivers(self) -> None:
        """Forget drivers whose Chromium is gone, so the next use starts a new one."""
        for name in ("_driver", "_scratch"):
            driver = getattr(self, name)
            if driver is not None and not driver.alive():
                driver.close()
                setattr(self, name, None)

    def _browser_gone(self, exc: BrowserCrashedError) -> BrowserCrashedError:
        """End the episode after a Chromium crash; the error says how to go on."""
        self.task = None
        self._drop_dead_drivers()
        return BrowserCrashedError(f"{exc}; the episode cannot continue (nothing was scored): call reset(), "
                                   "which starts a new Chromium")

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self._drop_dead_drivers()
        task_id = (options or {}).get("task_id", self.task_id)
        if task_id is None:
            task_id = int(self.np_random.integers(len(WEB_TASKS)))
        self.task = get_task(task_id)
        reset_site(self.base_url)
        try:
            self.driver.goto(self.task.start_path)
        except PageLoadError as exc:
            raise SiteUnavailableError(f"the site at {self.base_url} did not load: {exc}") from exc
        self._steps = 0
        self._tree = self._observe()
        self._document_path, self._page_actions = self.driver.path, []
        self._start_state, self._episode_actions = fetch_state(self.base_url), []
        return self._tree, self._info()

    def _judge(self, answer: str | None) -> bool:
        assert self.task is not None
        if self.task.kind == "answer" and answer is None:
            return False
        return bool(self.task.check(fetch_state(self.base_url), self.driver.path, answer))

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.task is None:
            raise RuntimeError("call reset() before step()")
        self._steps += 1
        error = None
        answer = None
        parsed = None
        try:
            try:
                parsed = parse_action(action)
                if parsed.kind == "stop":
                    answer = parsed.text
                else:
                    self.driver.execute(parsed)
            except (ActionParseError, ActionError, PageLoadError) as exc:
                error = f"{type(exc).__name__}: {exc}"
            self._tree = self._observe()
        except BrowserCrashedError as exc:
            raise self._browser_gone(exc) from exc
        if parsed is not None and answer is None:
            self._episode_actions.append((parsed.to_text(), error is not None))
        if self.driver.new_document:
            self._document_path, self._page_actions = self.driver.path, []
        elif error is None and answer is None:
            self._page_actions.append(parsed.to_text())
        stopped = answer is not None
        success = self._judge(answer) if (stopped or self.task.kind != "answer") else False
        terminated = stopped or success
        truncated = not terminated and self._steps >= self.max_steps
        info = self._info(success=success, answer=answer)
        if error is not None:
            info["action_error"] = error
        return self._tree, float(success), terminated, truncated, info

    def simulate(self, action: str) -> str:
        """Ground-truth lookahead: the tree `action` would produce, without changing this episode.

        The server state is saved, the current page is rebuilt in a scratch page (its URL, then the
        in-page actions since it loaded, so ids match), the action runs there, and the state is
        restored. Malformed or impossible actions return the current tree unchanged. A page that its URL
        and in-page actions do not rebuild (one a form submission returned) is rebuilt by replaying the
        episode from its start; if that fails too, `SimulationError`: there is no ground truth to give, and
        a wrong one would pass for it.
        """
        if self.task is None:
            raise RuntimeError("call reset() before simulate()")
        if self._scratch is None:
            self._scratch = BrowserDriver(self.base_url, timeout_ms=self.timeout_ms)
        saved = fetch_state(self.base_url)
        scratch = self._scratch
        try:
            return self._simulate_on(scratch, action)
        except BrowserCrashedError as exc:
            raise self._browser_gone(exc) from exc
        finally:
            restore_state(self.base_url, saved)

    @staticmethod
    def _replay(scratch: BrowserDriver, path: str, actions: list[tuple[str, bool]]) -> str:
        """The page after loading `path` and running `actions` (action, failed before) in the scratch tab,
        observed after each as the episode was (ids match); an action that failed before may fail again,
        any other failure raises."""
        scratch.goto(path)
        rebuilt = scratch.observe()
        for replay, failed in actions:
            try:
                scratch.execute(parse_action(replay))
            except (ActionError, PageLoadError):
                if not failed:
                    raise
            rebuilt = scratch.observe()
        return rebuilt[:MAX_TREE_CHARS]

    def _rebuild_document(self, scratch: BrowserDriver) -> str:
        """The current page rebuilt from its URL and the in-page actions since it loaded (the usual case)."""
        return self._replay(scratch, self._document_path, [(a, False) for a in self._page_actions])

    def _rebuild_episode(self, scratch: BrowserDriver) -> str:
        """The current page rebuilt by replaying the whole episode from its start page and start state (for
        a page that its URL does not load, e.g. one a form submission returned)."""
        assert self.task is not None
        restore_state(self.base_url, self._start_state)
        return self._replay(scratch, self.task.start_path, self._episode_actions)

    def _simulate_on(self, scratch: BrowserDriver, action: str) -> str:
        """`simulate`'s replay and action on the scratch page (the caller restores the server state).

        The page is rebuilt from its URL and in-page actions, else by replaying the episode; `SimulationError`
        when neither gives back the current page."""
        rebuilt = None
        for rebuild in (self._rebuild_document, self._rebuild_episode):
            try:
                rebuilt = rebuild(scratch)
            except (ActionError, PageLoadError):
                continue
            if rebuilt == self._tree:
                break
        if rebuilt != self._tree:
            raise SimulationError(f"the current page of {self._document_path} cannot be rebuilt in the scratch tab, "
                                  "neither from its URL and in-page actions nor by replaying the episode")
        try:
            parsed = parse_action(action)
            if parsed.kind != "stop":
                scratch.execute(parsed)
        except (ActionParseError, ActionError, PageLoadError):
            return self._tree
        return scratch.observe()[:MAX_TREE_CHARS]

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self._tree
        return None

    def close(self) -> None:
        for driver in (self._driver, self._scratch):
            if driver is not None:
                driver.close()
        self._driver = self._scratch = None
        if self._server is not None:
            self._server.stop()
            self._server = None
        super().close()
