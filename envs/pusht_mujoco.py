"""A hand-built PushT in MuJoCo: the "SIMPLER" of the Real2Sim experiment.

Real2Sim asks how well a simulator ranks policies compared with the real world (here gym-pusht,
pymunk physics). SIMPLER-style simulators are engineered by hand: the scene is re-created from the
real system's documented geometry, masses and controller, and the camera and colours are matched so
that policies see the same pixels ("visual matching"). This module is that re-creation: every value
below is read off gym-pusht's source, not fitted to its trajectories, so the gap to gym-pusht comes
from the engine (MuJoCo's soft, velocity-level contacts against pymunk's impulse solver) and can be
widened on purpose with `PushTPerturbation` to chart how ranking quality falls with the gap.

Coordinates are gym-pusht's own (x right, y down the screen, angles in radians, 512x512 units): the
camera looks along +z so that image rows follow +y, and MuJoCo qpos holds gym-pusht's poses directly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from rlvr_sim.metrics.pusht_pixels import GOAL_POSE, PALETTE, TEE_POLYGONS, WORLD_SIZE

os.environ.setdefault("MUJOCO_GL", "egl")  # headless offscreen rendering (Mesa llvmpipe on CPU-only hosts)
import mujoco  # noqa: E402  (MUJOCO_GL must be set before the import)

# gym-pusht's documented physics (gym_pusht/envs/pusht.py).
SIM_HZ, CONTROL_HZ = 100, 10  # dt = 0.01, one env step = 10 physics substeps
K_P, K_V = 100.0, 20.0  # PD law setting the kinematic agent's velocity
AGENT_RADIUS = 15.0
TEE_MASS = 1.0
TEE_MOMENT = 3000.0  # pymunk moment_for_poly of the bar, counted twice (add_tee reuses vertices1)
TEE_COG = np.array([0.0, 45.0])  # body-frame centre of gravity: mean of the bar and stem centroids
WALL_SEGMENTS = (((5, 506), (5, 5)), ((5, 5), (506, 5)), ((506, 5), (506, 506)), ((5, 506), (506, 506)))
WALL_RADIUS = 2.0
SUCCESS_THRESHOLD = 0.95
# pymunk_override draws fills at 1.2x the shape colour (clipped to 255) under a darker outline.
LIGHT_BLOCK = (142, 163, 183)
LIGHT_AGENT = (78, 126, 255)
OUTLINE = 2.0  # half-width of the polygon outline gym-pusht draws (fat segments of radius 2)
AGENT_INNER_RADIUS = 11.0  # gym-pusht draws the disc at round(15) and its light core at round(15 - 4)
_TEE_AREA = 6300.0  # bar 120x30 + stem 30x90
# pygame fills pixel i at world coordinate i (vertices are rounded) where an image pixel's centre is i + 0.5.
PYGAME_PIXEL_SHIFT = 0.5
# pygame fills both end pixels of every span (a circle of radius 15 is 31 pixels wide), so its shapes
# look half a unit larger on each side than their geometry; the visual geoms are grown to match.
PYGAME_FILL_GROW = 0.5


@dataclass(frozen=True)
class PushTPerturbation:
    """Deliberate gaps to gym-pusht, for charting ranking quality against sim-to-real distance.

    The defaults are gym-pusht's values, so `PushTPerturbation()` is no perturbation.
    """

    friction: float = 0.0  # Coulomb coefficient of agent-T and T-wall contacts (gym-pusht: 0, frictionless)
    damping: float = 0.0  # fraction of the T's velocity kept per second (pymunk space damping; 0 = stops at once)
    block_mass: float = TEE_MASS  # the T's mass; its moment stays 3000, so this shifts pushes between slide and turn
    colour_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)  # added to every material's RGB (0-255)
    camera_offset: tuple[float, float] = (0.0, 0.0)  # camera shift in world units (512 = frame width)

    def __post_init__(self) -> None:
        if self.friction < 0 or not 0 <= self.damping <= 1 or self.block_mass <= 0:
            raise ValueError(f"need friction >= 0, 0 <= damping <= 1, block_mass > 0; got {self}")
        if len(self.colour_offset) != 3 or len(self.camera_offset) != 2:
            raise ValueError("colour_offset needs 3 values, camera_offset 2")

    @classmethod
    def coerce(cls, value: PushTPerturbation | dict[str, Any] | None) -> PushTPerturbation:
        """Accept a dataclass, a dict of its fields (as from YAML) or None (no perturbation)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        unknown = set(value) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown perturbation keys {sorted(unknown)}")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in value.items()})


def tee_polygons(pose: np.ndarray) -> list[np.ndarray]:
    """World-frame corners of the T's bar and stem at `pose` (x, y, angle), gym-pusht's rotation convention."""
    c, s = np.cos(pose[2]), np.sin(pose[2])
    rotation = np.array([[c, -s], [s, c]])
    return [polygon @ rotation.T + np.asarray(pose[:2], dtype=np.float64) for polygon in TEE_POLYGONS]


def _polygon_area(points: np.ndarray) -> float:
    if len(points) < 3:
        return 0.0
    x, y = points[:, 0], points[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def _clip_convex(subject: np.ndarray, clip: np.ndarray) -> np.ndarray:
    """Sutherland-Hodgman: the part of convex `subject` inside convex `clip` (both as corner arrays)."""
    orientation = np.sign(_signed_area(clip))
    output = list(subject)
    for i in range(len(clip)):
        a, b = clip[i], clip[(i + 1) % len(clip)]
        edge = b - a

        def inside(p: np.ndarray, a: np.ndarray = a, edge: np.ndarray = edge) -> float:
            return orientation * (edge[0] * (p[1] - a[1]) - edge[1] * (p[0] - a[0]))

        points, output = output, []
        for j, current in enumerate(points):
            previous = points[j - 1]
            d_cur, d_prev = inside(current), inside(previous)
            if d_cur >= 0:
                if d_prev < 0:
                    output.append(previous + (current - previous) * d_prev / (d_prev - d_cur))
                output.append(current)
            elif d_prev >= 0:
                output.append(previous + (current - previous) * d_prev / (d_prev - d_cur))
        if not output:
            break
    return np.array(output).reshape(-1, 2)


def _signed_area(points: np.ndarray) -> float:
    x, y = points[:, 0], points[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def goal_coverage(block_pose: np.ndarray, goal_pose: np.ndarray = GOAL_POSE) -> float:
    """Share of the goal T's area covered by the T, exact on the polygons (gym-pusht's `_get_coverage`).

    The bar and stem have disjoint interiors, so the overlap is the sum of the four convex pairwise overlaps.
    """
    overlap = sum(
        _polygon_area(_clip_convex(block, goal))
        for block in tee_polygons(np.asarray(block_pose, dtype=np.float64))
        for goal in tee_polygons(np.asarray(goal_pose, dtype=np.float64))
    )
    return overlap / _TEE_AREA


def _rgba(rgb: tuple[float, float, float], offset: tuple[float, float, float]) -> str:
    values = np.clip(np.asarray(rgb, dtype=np.float64) + np.asarray(offset, dtype=np.float64), 0, 255) / 255
    return " ".join(f"{v:.6f}" for v in values) + " 1"


def _box(center: tuple[float, float], half: tuple[float, float], z: float, half_z: float, **attrs: str) -> str:
    extra = " ".join(f'{k}="{v}"' for k, v in attrs.items())
    return (f'<geom type="box" pos="{center[0]} {center[1]} {z}" '
            f'size="{half[0]} {half[1]} {half_z}" {extra}/>')


def _tee_geoms(z_base: float, inflate: float, material: str, contact: bool, step: float = 1.0) -> str:
    """Boxes for the bar and stem, grown by `inflate` (negative shrinks); the stem sits nearer the camera."""
    parts = []
    for index, polygon in enumerate(TEE_POLYGONS):
        low, high = polygon.min(axis=0), polygon.max(axis=0)
        centre = tuple((low + high) / 2)
        half = tuple((high - low) / 2 + inflate)
        if contact:
            parts.append(_box(centre, half, 0.0, 15.0, group="3", contype="1", conaffinity="3"))
        else:
            parts.append(_box(centre, half, z_base - step * index * 2, 0.25, material=material,
                              contype="0", conaffinity="0"))
    return "\n".join(parts)


def build_mjcf(perturb: PushTPerturbation, offscreen_size: int) -> str:
    """The scene as MJCF: gym-pusht's geometry, masses and colours, an orthographic camera above.

    The camera sits at z = -100 looking along +z (image rows follow +y as on gym-pusht's screen); nearer
    means lower z, so the layers stack as gym-pusht draws them: goal, T, agent, walls on top (pymunk draws
    dynamic, then kinematic, then static shapes). Collision geoms (group 3) are hidden and all lie at z = 0.
    """
    friction, condim = perturb.friction, (3 if perturb.friction > 0 else 1)
    offset = perturb.colour_offset
    colours = {
        "background": PALETTE["background"], "goal": PALETTE["goal"], "wall": PALETTE["wall"],
        "block": PALETTE["block"], "block_light": LIGHT_BLOCK, "agent": PALETTE["agent"],
        "agent_light": LIGHT_AGENT,
    }
    materials = "\n".join(
        f'<material name="{name}" rgba="{_rgba(rgb, offset)}" emission="1" specular="0" shininess="0"/>'
        for name, rgb in colours.items()
    )
    walls = "\n".join(
        f'<geom type="capsule" fromto="{a[0]} {a[1]} 0 {b[0]} {b[1]} 0" size="{WALL_RADIUS}" group="3" '
        'contype="1" conaffinity="0"/>\n'
        f'<geom type="capsule" fromto="{a[0]} {a[1]} -40 {b[0]} {b[1]} -40" size="{WALL_RADIUS + PYGAME_FILL_GROW}" '
        'material="wall" contype="0" conaffinity="0"/>'
        for a, b in WALL_SEGMENTS
    )
    # Shifting the camera by half a unit puts MuJoCo's raster on pygame's pixel grid.
    centre = WORLD_SIZE / 2 - PYGAME_PIXEL_SHIFT
    cam_x, cam_y = centre + perturb.camera_offset[0], centre + perturb.camera_offset[1]
    goal_quat = f"{np.cos(GOAL_POSE[2] / 2)} 0 0 {np.sin(GOAL_POSE[2] / 2)}"
    return f"""
<mujoco model="pusht">
  <compiler angle="radian"/>
  <option timestep="{1.0 / SIM_HZ}" gravity="0 0 0" integrator="Euler"/>
  <statistic extent="{WORLD_SIZE}" center="{WORLD_SIZE / 2} {WORLD_SIZE / 2} 0"/>
  <visual>
    <global offwidth="{offscreen_size}" offheight="{offscreen_size}"/>
    <quality shadowsize="0" offsamples="0"/>
    <headlight ambient="0 0 0" diffuse="0 0 0" specular="0 0 0"/>
  </visual>
  <asset>
{materials}
  </asset>
  <default>
    <geom friction="{friction} 0 0" condim="{condim}"/>
  </default>
  <worldbody>
    <camera name="top" projection="orthographic" fovy="90" pos="{cam_x} {cam_y} -100" xyaxes="1 0 0 0 -1 0"/>
    {_box((WORLD_SIZE / 2, WORLD_SIZE / 2), (2 * WORLD_SIZE, 2 * WORLD_SIZE), 60.0, 1.0,
          material="background", contype="0", conaffinity="0")}
    <body name="goal" pos="{GOAL_POSE[0]} {GOAL_POSE[1]} 0" quat="{goal_quat}">
      {_tee_geoms(50.0, PYGAME_FILL_GROW, "goal", contact=False, step=0.0)}
    </body>
{walls}
    <body name="agent">
      <joint name="agent_x" type="slide" axis="1 0 0"/>
      <joint name="agent_y" type="slide" axis="0 1 0"/>
      <inertial pos="0 0 0" mass="1e6" diaginertia="1 1 1"/>
      <geom type="sphere" size="{AGENT_RADIUS}" group="3" contype="2" conaffinity="0"/>
      <geom type="cylinder" pos="0 0 -30" size="{AGENT_RADIUS + PYGAME_FILL_GROW} 0.25" material="agent" contype="0" conaffinity="0"/>
      <geom type="cylinder" pos="0 0 -31" size="{AGENT_INNER_RADIUS + PYGAME_FILL_GROW} 0.25" material="agent_light"
            contype="0" conaffinity="0"/>
    </body>
    <body name="block">
      <joint name="block_x" type="slide" axis="1 0 0"/>
      <joint name="block_y" type="slide" axis="0 1 0"/>
      <joint name="block_angle" type="hinge" axis="0 0 1"/>
      <inertial pos="{TEE_COG[0]} {TEE_COG[1]} 0" mass="{perturb.block_mass}"
                diaginertia="{TEE_MOMENT} {TEE_MOMENT} {TEE_MOMENT}"/>
      {_tee_geoms(0.0, 0.0, "", contact=True)}
      {_tee_geoms(-20.0, OUTLINE + PYGAME_FILL_GROW, "block", contact=False)}
      {_tee_geoms(-21.0, -OUTLINE + PYGAME_FILL_GROW, "block_light", contact=False)}
    </body>
  </worldbody>
</mujoco>
"""


class MuJoCoPushTEnv(gym.Env):
    """
    ## Description

    gym-pusht's PushT re-created by hand in MuJoCo: push the T-shaped block onto the fixed goal T with a
    disc agent. Geometry (512x512 arena, walls, T of scale 30 and length 4, agent radius 15), masses
    (T mass 1, moment 3000, centre of gravity (0, 45)), contacts (frictionless, inelastic), control (a
    kinematic agent whose velocity follows gym-pusht's PD law, k_p 100, k_v 20, 100 Hz physics, 10 Hz
    control) and looks (colours, outlines, layer order, orthographic top-down camera) are gym-pusht's.
    Only the engine differs.

    ## Action Space

    `Box(0, 512, (2,), float32)`: the target (x, y) of the agent, as in gym-pusht.

    ## Observation Space

    `Box(0, 255, (S, S, 3), uint8)`: a top-down RGB frame, S = `observation_size` (gym-pusht's
    `obs_type="pixels"`). Image x/y are world x/y scaled by S/512 (y down).

    ## Rewards

    `clip(coverage / 0.95, 0, 1)` where coverage is the share of the goal T covered by the T, computed
    exactly on the polygons from the true pose (gym-pusht's reward).

    ## Starting State

    A seeded reset draws agent (x, y) in [50, 450), T (x, y) in [100, 400) and angle in [-pi, pi) from the
    env's generator exactly as gym-pusht does, so a seed gives both simulators the same start.
    `options={"reset_to_state": [agent_x, agent_y, block_x, block_y, block_angle]}` sets it explicitly,
    reproducing gym-pusht's legacy quirk (the angle is applied about the centre of gravity after the
    position, so the T lands at (x + 45 sin a, y + 45 (1 - cos a))). One physics substep then settles it,
    as in gym-pusht.

    ## Episode End

    Terminates when coverage > 0.95 (`info["is_success"]`); register with `max_episode_steps` (300 for
    `RLVRSim/PushT-MuJoCo-v0`, as gym-pusht) for truncation.

    ## Arguments

    * `observation_size`: side of the square observation in pixels (default 96, gym-pusht's default).
    * `render_mode`: `"rgb_array"` (default) or None; `render()` returns a `render_size` frame.
    * `render_size`: side of `render()` frames (default 512, one pixel per world unit).
    * `perturb`: a `PushTPerturbation` or a dict of its fields (friction, damping, block_mass,
      colour_offset, camera_offset); default: none.
    * `resize_from_512`: draw at 512x512 and resize bilinearly, as gym-pusht does: edge pixels blend as
      in its frames (mean colour error at 96 px 1.4 -> 0.2 of 255) at about 4x the frame time. Default
      False: draw straight at the observation size.

    `info` holds `pos_agent`, `vel_agent`, `block_pose` (x, y, angle; angle unwrapped as in gym-pusht),
    `goal_pose`, `coverage` and `is_success`.

    ## Version History

    * v0: initial version.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": CONTROL_HZ}

    def __init__(
        self,
        observation_size: int = 96,
        render_mode: str | None = "rgb_array",
        render_size: int = 512,
        perturb: PushTPerturbation | dict[str, Any] | None = None,
        resize_from_512: bool = False,
    ) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        if observation_size < 8 or render_size < 8:
            raise ValueError("observation_size and render_size must be at least 8 pixels")
        self.observation_size = int(observation_size)
        self.render_size = int(render_size)
        self.render_mode = render_mode
        self.resize_from_512 = resize_from_512
        self.perturb = PushTPerturbation.coerce(perturb)
        self.observation_space = spaces.Box(0, 255, (self.observation_size, self.observation_size, 3), np.uint8)
        self.action_space = spaces.Box(low=0.0, high=WORLD_SIZE, shape=(2,), dtype=np.float32)

        self.model = mujoco.MjModel.from_xml_string(
            build_mjcf(self.perturb, max(self.observation_size, self.render_size, int(WORLD_SIZE)))
        )
        # The compiler caps fovy below 180 (degrees, for perspective); for an orthographic camera it is
        # the visible height in length units, so the 512-unit arena is set after compiling.
        self.model.cam_fovy[0] = WORLD_SIZE
        self.data = mujoco.MjData(self.model)
        self._dt = float(self.model.opt.timestep)
        self._substeps = SIM_HZ // CONTROL_HZ
        self._block_keep = self.perturb.damping**self._dt  # pymunk: v *= damping ** dt every step
        self._agent_qpos = [self._joint_address(n) for n in ("agent_x", "agent_y")]
        self._agent_dof = [self._dof_address(n) for n in ("agent_x", "agent_y")]
        self._block_qpos = [self._joint_address(n) for n in ("block_x", "block_y", "block_angle")]
        self._block_dof = [self._dof_address(n) for n in ("block_x", "block_y", "block_angle")]
        self._renderers: dict[int, mujoco.Renderer] = {}
        self._scene_option = mujoco.MjvOption()
        self._scene_option.geomgroup[3] = 0  # collision geoms stay invisible
        self._agent_pos = np.zeros(2)
        self._agent_vel = np.zeros(2)

    def _joint_address(self, name: str) -> int:
        return int(self.model.jnt_qposadr[mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, name)])

    def _dof_address(self, name: str) -> int:
        return int(self.model.jnt_dofadr[mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, name)])

    # ---- state ---------------------------------------------------------------------------------------
    @property
    def block_pose(self) -> np.ndarray:
        """(x, y, angle) of the T's body origin in gym-pusht's convention."""
        return self.data.qpos[self._block_qpos].copy()

    def _physics_substep(self, target: np.ndarray) -> None:
        """One 100 Hz step: gym-pusht's PD law sets the kinematic agent's velocity, then MuJoCo steps.

        The agent is a very heavy slide-joint body whose pose is overwritten with the kinematic integral
        after each step, so contacts see its velocity but cannot move it (pymunk's KINEMATIC body).
        """
        acceleration = K_P * (target - self._agent_pos) - K_V * self._agent_vel
        self._agent_vel = self._agent_vel + acceleration * self._dt
        self.data.qpos[self._agent_qpos] = self._agent_pos
        self.data.qvel[self._agent_dof] = self._agent_vel
        self.data.qvel[self._block_dof] *= self._block_keep
        mujoco.mj_step(self.model, self.data)
        self._agent_pos = self._agent_pos + self._agent_vel * self._dt
        self.data.qpos[self._agent_qpos] = self._agent_pos
        self.data.qvel[self._agent_dof] = self._agent_vel

    def _info(self) -> dict[str, Any]:
        coverage = goal_coverage(self.block_pose)
        return {
            "pos_agent": self._agent_pos.copy(),
            "vel_agent": self._agent_vel.copy(),
            "block_pose": self.block_pose,
            "goal_pose": GOAL_POSE.copy(),
            "coverage": coverage,
            "is_success": coverage > SUCCESS_THRESHOLD,
        }

    # ---- gymnasium API -------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start from `options["reset_to_state"]` or from a gym-pusht-style seeded draw."""
        super().reset(seed=seed)
        if options is not None and options.get("reset_to_state") is not None:
            state = np.asarray(options["reset_to_state"], dtype=np.float64)
            if state.shape != (5,) or not np.isfinite(state).all():
                raise ValueError(f"reset_to_state must be 5 finite numbers, got {options['reset_to_state']!r}")
        else:
            state = np.array([
                self.np_random.integers(50, 450),
                self.np_random.integers(50, 450),
                self.np_random.integers(100, 400),
                self.np_random.integers(100, 400),
                self.np_random.uniform(-np.pi, np.pi),
            ], dtype=np.float64)
        mujoco.mj_resetData(self.model, self.data)
        self._agent_pos, self._agent_vel = state[:2].copy(), np.zeros(2)
        angle = state[4]
        # gym-pusht sets the position (angle 0), then the angle, which pymunk applies about the centre of gravity.
        origin = state[2:4] + TEE_COG - np.array([-np.sin(angle), np.cos(angle)]) * TEE_COG[1]
        self.data.qpos[self._block_qpos] = [origin[0], origin[1], angle]
        self._physics_substep(self._agent_pos)  # gym-pusht runs one physics step "to take effect"
        mujoco.mj_forward(self.model, self.data)
        return self._frame(self.observation_size), self._info()

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Hold the target for 10 physics substeps (gym-pusht's control period); reward from true coverage."""
        target = np.asarray(action, dtype=np.float64)
        if target.shape != (2,) or not np.isfinite(target).all():
            raise ValueError(f"action must be a finite (x, y) target, got {action!r}")
        for _ in range(self._substeps):
            self._physics_substep(target)
        mujoco.mj_forward(self.model, self.data)  # body poses for rendering follow the final qpos
        info = self._info()
        reward = float(np.clip(info["coverage"] / SUCCESS_THRESHOLD, 0.0, 1.0))
        return self._frame(self.observation_size), reward, bool(info["is_success"]), False, info

    def render(self) -> np.ndarray | None:
        """The current scene at `render_size` (None when render_mode is None)."""
        return None if self.render_mode is None else self._frame(self.render_size)

    def _frame(self, size: int) -> np.ndarray:
        if self.resize_from_512 and size != WORLD_SIZE:
            import cv2  # installed with gym-pusht, which resizes with it the same way

            return cv2.resize(self._frame(int(WORLD_SIZE)), (size, size))
        if size not in self._renderers:
            self._renderers[size] = mujoco.Renderer(self.model, size, size)
        renderer = self._renderers[size]
        renderer.update_scene(self.data, camera="top", scene_option=self._scene_option)
        return renderer.render()

    def close(self) -> None:
        """Release the offscreen GL contexts."""
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()


__all__ = ["MuJoCoPushTEnv", "PushTPerturbation", "build_mjcf", "goal_coverage", "tee_polygons"]
