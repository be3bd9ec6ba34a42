"""ArmReachEnv: a top-down planar two-link arm in MuJoCo whose tip follows a commanded target, with a puck.

The second robot scene of the video world model (beside PushT): an articulated arm whose links, joints and
tip a model must draw, with PushT's action semantics so that the same action discretiser, edge tests and
tooling apply. The action is where the tip should go, in the 512-unit scene square (x right, y down the
image, pixel = unit * size / 512). A controller turns it into joint targets by closed-form inverse
kinematics (elbow always bent the same way, q_elbow in [0, pi], so every reachable point has one
configuration; targets outside the reachable annulus go to its nearest point) and drives each joint as a
critically damped second-order system, solved exactly:

    e(t) = (e0 + (de0 + w e0) t) exp(-w t),  e = joint angle - target,  w = 25 rad/s

so the arm's motion is a known function of its state and the held target (no solver drift), and the puck
is pushed by MuJoCo's contacts. One env step is 0.1 s (10 Hz, 25 physics substeps of 4 ms). From rest a
held target closes 71% of each joint's error in one step, 96% in two and 99.5% in three: the tip arrives
within 0.5 px (at 64x64) of any reachable target after 3 steps, wherever it started (measured in
tests/envs/test_arm.py and docs/arm.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from rlvr_sim.metrics.arm_pixels import WORLD_SIZE, world_to_px

os.environ.setdefault("MUJOCO_GL", "egl")  # headless offscreen rendering (Mesa llvmpipe on CPU-only hosts)
import mujoco  # noqa: E402  (MUJOCO_GL must be set before the import)

SCENE_XML = Path(__file__).with_name("arm_reach.xml")
BASE = np.array([256.0, 256.0])  # the shoulder, scene units
UPPER_ARM, FOREARM = 125.0, 105.0  # link lengths (must match the MJCF)
REACH_MIN, REACH_MAX = UPPER_ARM - FOREARM, UPPER_ARM + FOREARM  # the reachable annulus about BASE
REACH_MARGIN = 1e-3  # IK aims this far inside the annulus so acos stays finite
OMEGA = 25.0  # rad/s, natural frequency of each joint's critically damped tracking
CONTROL_HZ, SUBSTEPS = 10, 25  # one env step = 25 physics substeps of 4 ms
PUCK_RADIUS, TIP_RADIUS = 20.0, 12.0  # collision radii (MJCF)
PUCK_LOW, PUCK_HIGH = 116.0, 396.0  # where the puck's centre can be: wall inner faces 96/416 minus its radius
SUCCESS_DISTANCE = WORLD_SIZE / 64  # one pixel of a 64x64 frame


def wrap_angle(angle: np.ndarray | float) -> np.ndarray | float:
    """Angle(s) mapped to [-pi, pi)."""
    return (np.asarray(angle) + np.pi) % (2 * np.pi) - np.pi


def forward_kinematics(joints: np.ndarray) -> np.ndarray:
    """(..., 2) shoulder and elbow angles -> (..., 2) tip position in scene units."""
    joints = np.asarray(joints, dtype=np.float64)
    q1, q12 = joints[..., 0], joints[..., 0] + joints[..., 1]
    x = BASE[0] + UPPER_ARM * np.cos(q1) + FOREARM * np.cos(q12)
    y = BASE[1] + UPPER_ARM * np.sin(q1) + FOREARM * np.sin(q12)
    return np.stack([x, y], axis=-1)


def reachable(target: np.ndarray) -> np.ndarray:
    """The nearest point of the reachable annulus to `target` (itself when reachable), scene units."""
    target = np.asarray(target, dtype=np.float64)
    offset = target - BASE
    radius = float(np.hypot(*offset))
    if radius < 1e-9:  # the shoulder itself: every direction is equally near
        return BASE + np.array([REACH_MIN + REACH_MARGIN, 0.0])
    clipped = np.clip(radius, REACH_MIN + REACH_MARGIN, REACH_MAX - REACH_MARGIN)
    return BASE + offset * (clipped / radius)


def inverse_kinematics(target: np.ndarray, shoulder_now: float = 0.0) -> np.ndarray:
    """Joint angles (shoulder, elbow) putting the tip on `reachable(target)`, elbow in [0, pi], shoulder
    unwrapped to the equivalent angle nearest `shoulder_now` (the arm turns the short way)."""
    offset = reachable(target) - BASE
    radius_sq = float(offset @ offset)
    cos_elbow = (radius_sq - UPPER_ARM**2 - FOREARM**2) / (2 * UPPER_ARM * FOREARM)
    elbow = float(np.arccos(np.clip(cos_elbow, -1.0, 1.0)))
    shoulder = float(np.arctan2(offset[1], offset[0]) - np.arctan2(FOREARM * np.sin(elbow),
                                                                    UPPER_ARM + FOREARM * np.cos(elbow)))
    shoulder = shoulder_now + float(wrap_angle(shoulder - shoulder_now))
    return np.array([shoulder, elbow])


def critically_damped(error: np.ndarray, rate: np.ndarray, dt: float, omega: float = OMEGA) -> tuple[np.ndarray, np.ndarray]:
    """Exact solution of e'' = -w^2 e - 2 w e' after `dt`: the new (error, rate)."""
    decay = np.exp(-omega * dt)
    slope = rate + omega * error
    new_error = (error + slope * dt) * decay
    new_rate = (slope - omega * (error + slope * dt)) * decay
    return new_error, new_rate


class ArmReachEnv(gym.Env):
    """
    ## Description

    A planar two-link arm (upper arm 125, forearm 105 scene units, shoulder at the centre of a 512-unit
    square) seen from straight above by an orthographic MuJoCo camera, and a green puck that only the arm's
    red tip marker pushes, confined by grey walls to a 320-unit square that the tip reaches everywhere.
    Colours are flat: background light grey, upper arm blue, forearm orange, shoulder disc dark grey, tip
    crimson, puck green (`rlvr_sim.metrics.arm_pixels.PALETTE`). The task: bring the tip to `goal`.

    ## Action Space

    `Box(0, 512, (2,), float32)`: the target (x, y) of the tip in scene units (x right, y down the image;
    pixel = unit * size / 512), as PushT's agent target. A controller (module docstring) tracks it; held
    for 3 steps it puts the tip on any reachable target within 0.5 px at 64x64. Unreachable targets (closer
    than 20 or farther than 230 units from the shoulder at (256, 256)) are replaced by the nearest reachable
    point.

    ## Observation Space

    `Box(0, 255, (S, S, 3), uint8)`: the top-down RGB frame, S = `observation_size` (default 64).

    ## Rewards

    `-|tip - goal| / 512` each step (scene units normalised by the square's side), as Reacher's distance term.

    ## Starting State

    A seeded reset draws the shoulder angle in [-pi, pi), the elbow in [0.3, pi - 0.3], the puck anywhere in
    its square at least 40 units from the tip, and a goal uniformly over the reachable part of the square
    [64, 448]^2. `options` may fix any of them: `{"joints": (q1, q2), "puck": (x, y), "goal": (x, y)}`.
    The arm starts at rest.

    ## Episode End

    Never terminates (like Reacher); `info["is_success"]` says whether the tip is within one 64x64 pixel
    (8 units) of the goal. Truncation by `max_episode_steps` (100 for `RLVRSim/ArmReach-v0`).

    ## Arguments

    * `observation_size`: side of the square observation in pixels (default 64).
    * `render_mode`: `"rgb_array"` (default) or None; `render()` returns a `render_size` frame.
    * `render_size`: side of `render()` frames (default 256).

    `info` holds `tip` and `puck` (scene units), `tip_px` and `puck_px` (continuous pixel coordinates of the
    observation: the MuJoCo sites projected through the camera), `joints`, `joint_velocities`, `target`
    (the reachable point being tracked), `goal`, `distance` and `is_success`.

    ## Version History

    * v0: initial version.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": CONTROL_HZ}

    def __init__(self, observation_size: int = 64, render_mode: str | None = "rgb_array",
                 render_size: int = 256) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        if not 8 <= observation_size <= 512 or not 8 <= render_size <= 512:
            raise ValueError(f"observation_size and render_size must be in [8, 512], got {observation_size}, {render_size}")
        self.observation_size, self.render_size = int(observation_size), int(render_size)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0, 255, (self.observation_size, self.observation_size, 3), np.uint8)
        self.action_space = spaces.Box(low=0.0, high=WORLD_SIZE, shape=(2,), dtype=np.float32)
        self.model = mujoco.MjModel.from_xml_string(SCENE_XML.read_text())
        # The compiler caps fovy below 180 (degrees, for perspective); for an orthographic camera it is the
        # visible height in length units, so the 512-unit square is set after compiling.
        self.model.cam_fovy[0] = WORLD_SIZE
        self.data = mujoco.MjData(self.model)
        self._dt = float(self.model.opt.timestep)
        joint_id = lambda name: mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, name)  # noqa: E731
        self._arm_qpos = [int(self.model.jnt_qposadr[joint_id(n)]) for n in ("shoulder", "elbow")]
        self._arm_dof = [int(self.model.jnt_dofadr[joint_id(n)]) for n in ("shoulder", "elbow")]
        self._puck_qpos = [int(self.model.jnt_qposadr[joint_id(n)]) for n in ("puck_x", "puck_y")]
        self._puck_dof = [int(self.model.jnt_dofadr[joint_id(n)]) for n in ("puck_x", "puck_y")]
        self._tip_site = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SITE, "tip")
        self._puck_site = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SITE, "puck")
        self._camera = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_CAMERA, "top")
        self._renderers: dict[int, mujoco.Renderer] = {}
        self._scene_option = mujoco.MjvOption()
        self._scene_option.geomgroup[3] = 0  # collision geoms stay invisible
        self._joints, self._rates = np.zeros(2), np.zeros(2)
        self._target = forward_kinematics(self._joints)
        self._goal = np.array([256.0, 256.0])

    # ---- state ---------------------------------------------------------------------------------------
    def project(self, point: np.ndarray, size: int) -> np.ndarray:
        """A 3-D scene point -> continuous pixel (x, y) of a size x size frame, through the orthographic camera."""
        offset = np.asarray(point, dtype=np.float64) - self.data.cam_xpos[self._camera]
        axes = self.data.cam_xmat[self._camera].reshape(3, 3)  # columns: camera x (right), y (up), z (back)
        units_per_px = self.model.cam_fovy[self._camera] / size
        right, up = offset @ axes[:, 0], offset @ axes[:, 1]
        return np.array([size / 2 + right / units_per_px, size / 2 - up / units_per_px])

    def _info(self) -> dict[str, Any]:
        tip, puck = self.data.site_xpos[self._tip_site], self.data.site_xpos[self._puck_site]
        distance = float(np.hypot(*(tip[:2] - self._goal)))
        return {
            "tip": tip[:2].copy(),
            "puck": puck[:2].copy(),
            "tip_px": self.project(tip, self.observation_size),
            "puck_px": self.project(puck, self.observation_size),
            "joints": self._joints.copy(),
            "joint_velocities": self._rates.copy(),
            "target": self._target.copy(),
            "goal": self._goal.copy(),
            "distance": distance,
            "is_success": distance < SUCCESS_DISTANCE,
        }

    def _write_arm(self) -> None:
        self.data.qpos[self._arm_qpos] = self._joints
        self.data.qvel[self._arm_dof] = self._rates

    def _pair(self, options: dict[str, Any], key: str) -> np.ndarray | None:
        value = options.get(key)
        if value is None:
            return None
        array = np.asarray(value, dtype=np.float64)
        if array.shape != (2,) or not np.isfinite(array).all():
            raise ValueError(f"options[{key!r}] must be two finite numbers, got {value!r}")
        return array

    # ---- gymnasium API -------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Seeded start (arm at rest, puck, goal); `options` may fix `joints`, `puck`, `goal`."""
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"joints", "puck", "goal"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; expected joints, puck, goal")
        rng = self.np_random
        joints = self._pair(options, "joints")
        if joints is None:
            joints = np.array([rng.uniform(-np.pi, np.pi), rng.uniform(0.3, np.pi - 0.3)])
        tip = forward_kinematics(joints)
        puck = self._pair(options, "puck")
        if puck is None:
            for _ in range(1000):  # rejection: away from the tip, so the start is not mid-contact
                puck = rng.uniform(PUCK_LOW, PUCK_HIGH, size=2)
                if np.hypot(*(puck - tip)) >= 2 * PUCK_RADIUS:
                    break
        elif not ((PUCK_LOW <= puck) & (puck <= PUCK_HIGH)).all():
            raise ValueError(f"options['puck'] must lie in [{PUCK_LOW}, {PUCK_HIGH}]^2 (inside the walls), got {puck}")
        goal = self._pair(options, "goal")
        if goal is None:
            for _ in range(1000):
                goal = rng.uniform(64.0, 448.0, size=2)
                if np.allclose(reachable(goal), goal):
                    break
        mujoco.mj_resetData(self.model, self.data)
        self._joints, self._rates = joints.copy(), np.zeros(2)
        self._target, self._goal = tip, goal
        self._write_arm()
        self.data.qpos[self._puck_qpos] = puck
        mujoco.mj_forward(self.model, self.data)
        return self._frame(self.observation_size), self._info()

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Track the target for one 0.1 s control period (25 substeps); the puck moves by contact."""
        target = np.asarray(action, dtype=np.float64)
        if target.shape != (2,) or not np.isfinite(target).all():
            raise ValueError(f"action must be a finite (x, y) tip target, got {action!r}")
        self._target = reachable(target)
        goal_joints = inverse_kinematics(self._target, float(self._joints[0]))
        for _ in range(SUBSTEPS):
            error, self._rates = critically_damped(self._joints - goal_joints, self._rates, self._dt)
            self._joints = goal_joints + error
            self._write_arm()
            mujoco.mj_step(self.model, self.data)
        self._write_arm()  # the step moved the (very heavy) arm by a hair; put it back on its exact path
        mujoco.mj_forward(self.model, self.data)
        info = self._info()
        return self._frame(self.observation_size), -info["distance"] / WORLD_SIZE, False, False, info

    def render(self) -> np.ndarray | None:
        """The current scene at `render_size` (None when render_mode is None)."""
        return None if self.render_mode is None else self._frame(self.render_size)

    def _frame(self, size: int) -> np.ndarray:
        if size not in self._renderers:
            self._renderers[size] = mujoco.Renderer(self.model, size, size)
        renderer = self._renderers[size]
        renderer.update_scene(self.data, camera=self._camera, scene_option=self._scene_option)
        return renderer.render()

    def close(self) -> None:
        """Release the offscreen GL contexts."""
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()


def arrival_errors(runs: int = 200, steps: int = 4, seed: int = 0, size: int = 64) -> np.ndarray:
    """(runs, steps) tip-to-target distance in pixels of a size x size frame after each step of holding a
    far target: each run starts from a seeded random arm at rest and commands a reachable point at least
    150 units (19 px at 64x64) from the tip. Backs the arrival figures in docs/arm.md
    (`python -m rlvr_sim.envs.arm.measure`)."""
    env = ArmReachEnv(observation_size=size, render_mode=None)
    rng = np.random.default_rng(seed)
    errors = np.zeros((runs, steps))
    try:
        for run in range(runs):
            _, info = env.reset(seed=int(rng.integers(0, 2**31 - 1)))
            target = info["tip"]
            while np.hypot(*(target - info["tip"])) < 150.0:
                radius = np.sqrt(rng.uniform(REACH_MIN**2, REACH_MAX**2))
                angle = rng.uniform(-np.pi, np.pi)
                target = BASE + radius * np.array([np.cos(angle), np.sin(angle)])
            for step in range(steps):
                _, _, _, _, info = env.step(target.astype(np.float32))
                errors[run, step] = np.hypot(*(info["tip"] - target.astype(np.float32))) * size / WORLD_SIZE
    finally:
        env.close()
    return errors


__all__ = ["ArmReachEnv", "arrival_errors", "critically_damped", "forward_kinematics", "inverse_kinematics", "reachable",
           "world_to_px"]

