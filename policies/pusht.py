"""Scripted PushT policies of graded skill, the near-goal evaluation task, and frame-only policy wrappers.

PushT actions are target positions (x, y) in [0, 512]^2 for a PD-controlled agent disc. The scripted
pusher reads the state from gym-pusht's `info` (agent position, block pose, goal pose) and plans one
push per decision: of the contact points along the T's outline, it picks the one whose push (straight
into the outline) would move the T most nearly the way the goal asks, in position and angle together
(a quasi-static point-push model: gym-pusht damps all velocity, so the T moves only while pushed). It
walks to just outside that point, around the T when the straight way is blocked, and pushes a depth
that shrinks as the T nears the goal. Skill is graded by action noise, by how long an action is held
and by how stale the state is the policy acts on; `random` and `jitter` never aim, so the collected
data also covers motions no competent policy would make; `explore` is the aimed pusher with a goal pose of
its own, redrawn at random every few decisions, so the data holds pushes from every side of the T in
every direction, the pushes a planner weighs (gym-pusht's fixed goal gives the other skills a narrow
set). Every policy draws its noise from its own
seeded generator, so a (policy, seed) pair replays exactly.

`NearGoalTask` is the Real2Sim evaluation task (start states near the goal, pose-tolerance success
within a fixed horizon; see docs/real2sim.md for why), and `make_frame_policy` gives any of these
policies, or the learned BC policy, as a policy that sees frames only, so it runs the same in every
simulator.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from rlvr_sim.metrics.pusht_pixels import rotate

ACTION_LOW, ACTION_HIGH = 0.0, 512.0
GOAL_POSE = np.array([256.0, 256.0, np.pi / 4])  # gym-pusht's fixed goal (x, y, angle)
# Body-frame centre of mass of the T in gym-pusht (mean of the bar and stem centres).
TEE_COM_LOCAL = np.array([0.0, 45.0])
# The T's two rectangles in its body frame (min corner, max corner) and its moment of inertia per unit
# mass (gym-pusht: twice the bar's moment about the body origin).
TEE_BOXES = ((np.array([-60.0, 0.0]), np.array([60.0, 30.0])), (np.array([-15.0, 30.0]), np.array([15.0, 120.0])))
TEE_GYRATION_SQ = 2550.0
AGENT_RADIUS = 15.0


@dataclass(frozen=True)
class Skill:
    """How well a scripted pusher executes: action noise (px), lag (steps an action is kept), push depth
    (px) and observation delay (decisions the state it acts on is stale by)."""

    noise_px: float
    hold_steps: int
    push_step_px: float
    aim: bool = True  # False: never aims at the block (random / jitter policies)
    delay_steps: int = 0
    # > 0: push toward a random pose of the T, drawn from the policy's generator and redrawn every this many
    # decisions, instead of gym-pusht's goal (the `explore` skill: contacts from every side, for world-model data)
    wander_every: int = 0


SKILLS: dict[str, Skill] = {
    "expert": Skill(noise_px=0.0, hold_steps=1, push_step_px=25.0),
    "good": Skill(noise_px=12.0, hold_steps=1, push_step_px=25.0),
    "mediocre": Skill(noise_px=25.0, hold_steps=1, push_step_px=25.0),
    "poor": Skill(noise_px=20.0, hold_steps=2, push_step_px=25.0),
    "laggy": Skill(noise_px=0.0, hold_steps=1, push_step_px=25.0, delay_steps=3),
    "jitter": Skill(noise_px=70.0, hold_steps=1, push_step_px=0.0, aim=False),
    "random": Skill(noise_px=0.0, hold_steps=4, push_step_px=0.0, aim=False),
    "explore": Skill(noise_px=8.0, hold_steps=1, push_step_px=25.0, wander_every=10),
}


def _wrap_angle(angle: float) -> float:
    return float((angle + np.pi) % (2 * np.pi) - np.pi)


def _outline(step: float = 5.0) -> tuple[np.ndarray, np.ndarray]:
    """Points along the T's outline (body frame, every `step` units, corners left out) and outward normals."""
    edges = [
        ((-60, 0), (60, 0), (0, -1)),
        ((-60, 30), (-15, 30), (0, 1)),
        ((15, 30), (60, 30), (0, 1)),
        ((-60, 0), (-60, 30), (-1, 0)),
        ((60, 0), (60, 30), (1, 0)),
        ((-15, 30), (-15, 120), (-1, 0)),
        ((15, 30), (15, 120), (1, 0)),
        ((-15, 120), (15, 120), (0, 1)),
    ]
    points, normals = [], []
    for start, end, normal in edges:
        start, end = np.array(start, np.float64), np.array(end, np.float64)
        count = int(np.linalg.norm(end - start) // step)
        for t in np.linspace(0.0, 1.0, count + 1)[1:-1]:
            points.append(start + t * (end - start))
            normals.append(normal)
    return np.array(points), np.array(normals, np.float64)


OUTLINE_POINTS, OUTLINE_NORMALS = _outline()


def distance_to_tee(points: np.ndarray, pose: np.ndarray) -> np.ndarray:
    """Distance of world points (..., 2) from the T at `pose` (0 inside it)."""
    local = rotate(np.asarray(points, dtype=np.float64) - pose[:2], -float(pose[2]))
    distance = np.full(local.shape[:-1], np.inf)
    for low, high in TEE_BOXES:
        outside = np.maximum(np.maximum(low - local, local - high), 0.0)
        distance = np.minimum(distance, np.linalg.norm(outside, axis=-1))
    return distance


class PushPlanner:
    """The aimed pusher: choose a contact on the T's outline, walk there, push (see module docstring)."""

    def __init__(self, push_step_px: float = 25.0, clearance: float = 6.0, orbit_radius: float = 105.0) -> None:
        self.push_step_px, self.clearance, self.orbit_radius = push_step_px, clearance, orbit_radius
        self.contact: int | None = None  # kept while still nearly the best, so pushes are not abandoned

    def reset(self) -> None:
        self.contact = None

    def target(self, agent: np.ndarray, block_pose: np.ndarray, goal_pose: np.ndarray) -> np.ndarray:
        com = block_pose[:2] + rotate(TEE_COM_LOCAL, float(block_pose[2]))
        goal_com = goal_pose[:2] + rotate(TEE_COM_LOCAL, float(goal_pose[2]))
        gyration = np.sqrt(TEE_GYRATION_SQ)
        wanted = np.concatenate([goal_com - com, [gyration * _wrap_angle(float(goal_pose[2] - block_pose[2]))]])
        error = float(np.linalg.norm(wanted))
        if error < 3.0:
            return agent.copy()
        points = block_pose[:2] + rotate(OUTLINE_POINTS, float(block_pose[2]))
        normals = rotate(OUTLINE_NORMALS, float(block_pose[2]))
        lever = points - com
        spin = (lever[:, 0] * -normals[:, 1] - lever[:, 1] * -normals[:, 0]) / TEE_GYRATION_SQ
        twist = np.concatenate([-normals, gyration * spin[:, None]], axis=1)
        score = twist @ wanted / (np.linalg.norm(twist, axis=1) * error)
        standoff = points + normals * (AGENT_RADIUS + self.clearance)
        reachable = (distance_to_tee(standoff, block_pose) > AGENT_RADIUS) & np.all(
            (standoff > 10.0) & (standoff < 502.0), axis=1
        )
        score = np.where(reachable, score, -np.inf)
        best = int(np.argmax(score))
        if self.contact is not None and score[self.contact] > score[best] - 0.1:
            best = self.contact
        self.contact = best
        if np.linalg.norm(agent - standoff[best]) < 8.0 or self._in_contact(agent, points[best], normals[best]):
            depth = float(np.clip(0.6 * error, 4.0, self.push_step_px))
            return points[best] - normals[best] * (depth - AGENT_RADIUS)
        return self._walk(agent, standoff[best], block_pose, com)

    @staticmethod
    def _in_contact(agent: np.ndarray, point: np.ndarray, normal: np.ndarray) -> bool:
        offset = agent - point
        along, lateral = float(offset @ normal), abs(float(offset @ np.array([-normal[1], normal[0]])))
        return 0.0 < along < AGENT_RADIUS + 8.0 and lateral < 8.0

    def _walk(self, agent: np.ndarray, goal: np.ndarray, block_pose: np.ndarray, com: np.ndarray) -> np.ndarray:
        """Straight to `goal` when the way is clear of the T, else out to and around an orbit of the T."""
        path = agent + np.linspace(0.0, 1.0, 20)[:, None] * (goal - agent)
        if (distance_to_tee(path, block_pose) > AGENT_RADIUS + 2.0).all():
            return goal
        radial, wanted = agent - com, goal - com
        if np.linalg.norm(radial) < self.orbit_radius - 10.0:
            return com + radial / max(float(np.linalg.norm(radial)), 1e-6) * self.orbit_radius
        here = float(np.arctan2(radial[1], radial[0]))
        turn = _wrap_angle(float(np.arctan2(wanted[1], wanted[0])) - here)
        return com + rotate(np.array([self.orbit_radius, 0.0]), here + np.sign(turn) * min(abs(turn), 0.7))


class PushTPolicy:
    """A scripted PushT policy; `act(info)` maps the env's info dict to a target position (float32, (2,))."""

    def __init__(self, skill: str = "expert", seed: int = 0) -> None:
        if skill not in SKILLS:
            raise ValueError(f"unknown PushT skill {skill!r}; known: {', '.join(SKILLS)}")
        self.skill_name = skill
        self.skill = SKILLS[skill]
        self.seed = seed
        self.planner = PushPlanner(self.skill.push_step_px)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Restart the noise stream (and forget any held action, stale states and the chosen contact)."""
        self.rng = np.random.default_rng(self.seed if seed is None else seed)
        self._held: np.ndarray | None = None
        self._held_left = 0
        self._seen: deque[dict[str, np.ndarray]] = deque(maxlen=self.skill.delay_steps + 1)
        self.planner.reset()
        self._decisions = 0
        self._wander_goal: np.ndarray | None = None

    def act(self, info: dict[str, Any]) -> np.ndarray:
        """Next target position given gym-pusht's info (`pos_agent`, `block_pose`, `goal_pose`)."""
        self._seen.append({key: np.asarray(info[key], dtype=np.float64) for key in ("pos_agent", "block_pose", "goal_pose")})
        if self._held is not None and self._held_left > 0:
            self._held_left -= 1
            return self._held.copy()
        state = self._seen[0]  # the oldest kept: `delay_steps` decisions stale
        agent = state["pos_agent"]
        if self.skill_name == "random":
            action = self.rng.uniform(50.0, 462.0, size=2)
        elif self.skill_name == "jitter":
            centre_pull = 0.1 * (np.array([256.0, 256.0]) - agent)  # keeps the random walk off the walls
            action = agent + centre_pull + self.rng.normal(0.0, self.skill.noise_px, size=2)
        else:
            goal = state["goal_pose"]
            if self.skill.wander_every:
                if self._decisions % self.skill.wander_every == 0:
                    self._wander_goal = np.array([*self.rng.uniform(120.0, 392.0, size=2), self.rng.uniform(-np.pi, np.pi)])
                    self.planner.reset()
                goal = self._wander_goal
            action = self.planner.target(agent, state["block_pose"], goal)
            action = action + self.rng.normal(0.0, self.skill.noise_px, size=2) if self.skill.noise_px else action
        self._decisions += 1
        action = np.clip(action, ACTION_LOW, ACTION_HIGH).astype(np.float32)
        self._held, self._held_left = action, self.skill.hold_steps - 1
        return action.copy()


@dataclass(frozen=True)
class NearGoalTask:
    """The Real2Sim PushT task: start near the goal, succeed by reaching the goal pose within tolerance.

    Start states (gym-pusht `reset_to_state` order: agent x, y, block x, y, angle): the block's origin
    `radius` world units from the goal's in a uniform direction, turned `turn_deg` (either sign) from
    the goal angle, the agent uniform in the arena at least `agent_clearance` from the T's centre of mass.
    Success: at any decision within `horizon` (each held `frame_skip` env steps), the block within
    `position_tol` world units and `angle_tol_deg` degrees of the goal pose.
    """

    radius: tuple[float, float] = (30.0, 90.0)
    turn_deg: tuple[float, float] = (20.0, 70.0)
    agent_clearance: float = 110.0
    horizon: int = 48
    frame_skip: int = 4
    position_tol: float = 10.0
    angle_tol_deg: float = 8.0

    def sample_start(self, rng: np.random.Generator) -> np.ndarray:
        """One start state, drawn from the distribution in the class docstring."""
        direction = rng.uniform(-np.pi, np.pi)
        block = GOAL_POSE[:2] + rng.uniform(*self.radius) * np.array([np.cos(direction), np.sin(direction)])
        angle = GOAL_POSE[2] + rng.choice([-1.0, 1.0]) * np.radians(rng.uniform(*self.turn_deg))
        com = block + rotate(TEE_COM_LOCAL, angle)
        while True:
            agent = rng.uniform(60.0, 452.0, size=2)
            if np.linalg.norm(agent - com) > self.agent_clearance:
                return np.array([agent[0], agent[1], block[0], block[1], angle])

    def pose_error(self, block_pose: np.ndarray) -> tuple[float, float]:
        """(distance in world units, |angle| in degrees) of a block pose from the goal."""
        return (
            float(np.linalg.norm(np.asarray(block_pose[:2]) - GOAL_POSE[:2])),
            abs(float(np.degrees(_wrap_angle(float(block_pose[2] - GOAL_POSE[2]))))),
        )

    def success(self, block_pose: np.ndarray | None) -> bool:
        if block_pose is None:
            return False
        distance, angle = self.pose_error(block_pose)
        return distance < self.position_tol and angle < self.angle_tol_deg


class FramePolicy(Protocol):
    """A PushT policy that sees only frames (uint8 (H, W, 3)) and returns a target position."""

    def reset(self, seed: int) -> None: ...

    def act(self, frame: np.ndarray) -> np.ndarray: ...


class PixelPushTPolicy:
    """A scripted policy acting on the state the pixel judge reads off each frame; anything not visible
    (e.g. the agent hidden in a blurry prediction) keeps its last estimate."""

    def __init__(self, skill: str, seed: int = 0) -> None:
        self.policy = PushTPolicy(skill, seed=seed)
        self.reset(seed)

    def reset(self, seed: int) -> None:
        self.policy.reset(seed)
        self.last: dict[str, np.ndarray] = {
            "pos_agent": np.array([256.0, 256.0]),
            "block_pose": np.array([256.0, 256.0, 0.0]),
            "goal_pose": GOAL_POSE.copy(),
        }

    def act(self, frame: np.ndarray, estimate: dict[str, Any] | None = None) -> np.ndarray:
        """Next target; `estimate` (the frame's `estimate_state`) saves reading the frame twice."""
        if estimate is None:
            from rlvr_sim.metrics.pusht_pixels import estimate_state

            estimate = estimate_state(frame)
        for key, value in estimate.items():
            if value is not None:
                self.last[key] = np.asarray(value, dtype=np.float64)
        return self.policy.act(self.last)


def make_frame_policy(name: str, seed: int = 0) -> PixelPushTPolicy | Any:
    """A frame-only policy by name: a scripted skill from SKILLS, `bc` (the shipped behaviour-cloning
    checkpoint) or `bc:<checkpoint dir>`."""
    if name == "bc" or name.startswith("bc:"):
        from rlvr_sim.policies.pusht_bc import BCPolicy

        return BCPolicy.load(name[3:] or None, seed=seed)
    return PixelPushTPolicy(name, seed=seed)


__all__ = [
    "SKILLS",
    "FramePolicy",
    "NearGoalTask",
    "PixelPushTPolicy",
    "PushPlanner",
    "PushTPolicy",
    "Skill",
    "make_frame_policy",
]
