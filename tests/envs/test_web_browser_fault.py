"""Fault: the Chromium process is killed mid-episode. The env raises BrowserCrashedError (never a hang, never an
`action_error` that would score as the agent's mistake), ends the episode, and `reset` starts a new Chromium."""

import os
import signal
import time
from pathlib import Path

import pytest
from rlvr_sim.envs.web.browser_env import BrowserEnv
from rlvr_sim.envs.web.driver import BrowserCrashedError

pytestmark = pytest.mark.browser


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == pid:
                found += [int(entry.name), *_children(int(entry.name))]
    return found


def chromium_browser_pids() -> list[int]:
    """This test process's Chromium browser processes (descendants started by Playwright; not renderers)."""
    pids = []
    for pid in _children(os.getpid()):
        try:
            argv = (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and b"chrom" in Path(argv[0].decode(errors="replace")).name.encode() and not any(
                a.startswith(b"--type=") for a in argv):
            pids.append(pid)
    return pids


class _Hang(Exception):
    pass


def _within(seconds: int):
    def alarm(signum, frame):
        raise _Hang(f"no answer within {seconds} s")

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)


def test_chromium_killed_mid_episode_raises_clearly_and_reset_recovers():
    env = BrowserEnv(max_steps=6)
    try:
        start_tree, _ = env.reset(seed=0, options={"task_id": 7})
        env.step("scroll [down]")
        pids = chromium_browser_pids()
        assert pids, "found no Chromium process to kill"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        _within(60)
        try:
            started = time.time()
            with pytest.raises(BrowserCrashedError, match="Chromium is gone.*call reset"):
                env.step("click [5]")
            assert time.time() - started < 30
            with pytest.raises(RuntimeError, match="reset"):  # the episode is over
                env.step("click [5]")
            tree, info = env.reset(seed=0, options={"task_id": 7})  # a new Chromium
            assert tree == start_tree and set(chromium_browser_pids()).isdisjoint(pids)
            tree, reward, terminated, truncated, info = env.step("click [5]")
            assert "RootWebArea 'Orders / Shop Admin'" in tree and "action_error" not in info
        finally:
            signal.alarm(0)
    finally:
        env.close()


def test_agent_evaluation_reruns_an_episode_whose_chromium_died():
    """evaluations/web_agent.py: a crashed episode is rerun from its start in a new Chromium, recorded, and
    scored as the clean run of the same seed is."""
    from rlvr_sim.evaluations.web_agent import episode_with_restart
    from rlvr_sim.policies.web_mpc import HeuristicValueFunction, HeuristicWebPolicy, MPCWebAgent

    class KillsChromiumOnce(MPCWebAgent):
        killed = False

        def act(self, objective, tree, url, history, rng):
            if len(history) == 1 and not self.killed:
                type(self).killed = True
                for pid in chromium_browser_pids():
                    os.kill(pid, signal.SIGKILL)
            return super().act(objective, tree, url, history, rng)

    env = BrowserEnv(max_steps=4)
    parts = (HeuristicWebPolicy(temperature=2.0), HeuristicValueFunction())
    _within(120)
    try:
        clean = episode_with_restart(env, MPCWebAgent(*parts, n_samples=6), 18, 3, 4, [])
        restarts: list = []
        rerun = episode_with_restart(env, KillsChromiumOnce(*parts, n_samples=6), 18, 3, 4, restarts)
        assert KillsChromiumOnce.killed and len(restarts) == 1 and "Chromium is gone" in restarts[0]["error"]
        assert rerun["success"] == clean["success"] and [s["action"] for s in rerun["trace"]] == [
            s["action"] for s in clean["trace"]]
    finally:
        signal.alarm(0)
        env.close()
