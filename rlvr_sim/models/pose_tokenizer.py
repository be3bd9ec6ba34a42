"""Object-pose frame tokenizer for PushT: five tokens per frame, read off pixels, drawn back as pixels.

Why not a learned VQ grid: PushT's agent is a ~5-pixel disc at 64x64 that moves a median 4 px per model
step. The embedded compressive FSQ tokenizer (16 codes per future frame) kept it in only 38% of its
reconstructed future frames (median error 6.4 px where it did), so no transformer behind it could follow
an action: the code never carried the motion (docs/video.md). A PushT frame is fully determined by five
numbers (agent x, y; block x, y, angle; the goal is fixed), so this tokenizer spends its five tokens on
exactly those:
- *encode* reads them off any RGB frame at any resolution with the validated pixel judge
  (`rlvr_sim.metrics.pusht_pixels.estimate_state`; its error against gym-pusht's true state is
  reported by `evaluations/video.py --judge`) and quantises each to `bins` uniform bins (world units
  [0, 512] for positions, [-pi, pi) for the angle). Each slot owns its own code range, so a token says
  which quantity it is.
- *decode* draws the scene the way gym-pusht's pygame renderer draws it (white floor, grey walls,
  light-green goal T, slate-grey T with its outline, royal-blue agent disc with its lighter core) at
  512x512 and resizes it as a recorded 96x96 gym-pusht episode is resized, so a decoded frame is what
  gym-pusht would show for that state.
The world model (the transformer) learns the dynamics over these tokens; everything it predicts is
checkable on decoded frames by the same judge. An object that is not visible gets the slot's "absent"
code and is not drawn. It is PushT-specific by design: other scenes use the learned `FrameTokenizer`.
Same numpy API as `FrameTokenizer` (`encode`, `decode`, `tokens_per_frame`, `save`, `load`); every
frame is coded on its own, so the absolute and conditional modes give the same codes.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from rlvr_sim.metrics.pusht_pixels import GOAL_POSE, TEE_POLYGONS, WORLD_SIZE, judge_states

CONFIG_FILE = "tokenizer_config.json"
SLOTS = ("agent_x", "agent_y", "block_x", "block_y", "block_angle")
# gym-pusht's colours (pygame named colours) and geometry: walls are fat segments of radius 2 at 5 / 506,
# the agent a disc of radius 15 drawn with a core of radius 11 in a 1.2x lighter colour, the T a polygon
# filled 1.2x lighter with a 4-px outline in its own colour.
_GOAL, _BLOCK, _AGENT, _WALL = (144, 238, 144), (119, 136, 153), (65, 105, 225), (211, 211, 211)
_WALLS = (((5, 506), (5, 5)), ((5, 5), (506, 5)), ((506, 5), (506, 506)), ((5, 506), (506, 506)))
AGENT_RADIUS = 15
# gym-pusht's default observation size: frames are drawn at 512, resized to 96 as gym-pusht does (bilinear),
# then to `image_size` as the episode loader resizes recorded episodes (area), so decoded frames look
# like the recorded ones.
RENDER_SIZE = 96


def _lighter(colour: tuple[int, int, int]) -> tuple[int, int, int]:
    return tuple(int(min(255.0, 1.2 * c)) for c in colour)


@dataclass
class PoseTokenizerConfig:
    """`bins` quantisation levels per quantity (128: 0.25 px at 64x64, 1.4 degrees at worst)."""

    image_size: int = 64
    bins: int = 128
    kind: str = "pose"

    def __post_init__(self) -> None:
        if self.image_size < 8 or self.bins < 2:
            raise ValueError(f"image_size must be >= 8 and bins >= 2, got {self.image_size}, {self.bins}")

    @property
    def slot_size(self) -> int:
        return self.bins + 1  # the last code of every slot means "not visible"

    @property
    def codebook_size(self) -> int:
        return len(SLOTS) * self.slot_size

    def tokens_per_frame(self, mode: str = "absolute") -> int:
        return len(SLOTS)


class PoseTokenizer:
    """Frames <-> five pose tokens (see the module docstring)."""

    context_free = True  # a frame's codes do not depend on any other frame

    def __init__(self, config: PoseTokenizerConfig | None = None) -> None:
        self.config = config or PoseTokenizerConfig()

    # ---- quantisation ----
    def _scale(self) -> tuple[np.ndarray, np.ndarray]:
        low = np.array([0.0, 0.0, 0.0, 0.0, -np.pi])
        high = np.array([WORLD_SIZE, WORLD_SIZE, WORLD_SIZE, WORLD_SIZE, np.pi])
        return low, high

    def states_to_codes(self, states: np.ndarray) -> np.ndarray:
        """(N, 5) states (agent x, y, block x, y, angle; NaN = not visible) -> (N, 5) codes."""
        states = np.asarray(states, dtype=np.float64).reshape(-1, len(SLOTS))
        low, high = self._scale()
        bins = self.config.bins
        wrapped = states.copy()
        wrapped[:, 4] = (wrapped[:, 4] + np.pi) % (2 * np.pi) - np.pi
        unit = (wrapped - low) / (high - low)
        index = np.clip(np.floor(np.nan_to_num(unit, nan=0.0) * bins), 0, bins - 1).astype(np.int64)
        index = np.where(np.isnan(states), bins, index)
        return index + np.arange(len(SLOTS)) * self.config.slot_size

    def codes_to_states(self, codes: np.ndarray) -> np.ndarray:
        """(N, 5) codes -> (N, 5) states at bin centres (NaN where a slot says "not visible").

        A code from another slot's range is read as its bin value (code modulo the slot size), so any
        code in [0, codebook_size) decodes."""
        codes = np.asarray(codes).reshape(-1, len(SLOTS))
        if codes.size and (codes.min() < 0 or codes.max() >= self.config.codebook_size):
            raise ValueError(f"codes must lie in [0, {self.config.codebook_size})")
        index = codes % self.config.slot_size
        low, high = self._scale()
        states = low + (index + 0.5) / self.config.bins * (high - low)
        return np.where(index == self.config.bins, np.nan, states)

    # ---- symmetries ----
    def symmetry_codes(self, codes: np.ndarray, k: int, inverse: bool = False) -> np.ndarray:
        """Codes (..., 5) of the scene mirrored and rotated by element `k` of the square's symmetry group.

        k = 4 f + r: mirror left-right if f (x -> 512 - x, angle -> -angle), then rotate r quarter turns
        ((x, y) -> (y, 512 - x), angle -> angle - 90 degrees). gym-pusht's physics is invariant under all
        eight (the arena, the walls, the disc and the T's mirror axis are symmetric; `docs/video.md` gives
        the measured check), so a transformed window is another true window. On bins these maps are exact
        (bin b <-> bins - 1 - b, a quarter turn = bins / 4 angle bins); "not visible" codes stay so.
        `inverse=True` applies the inverse element.
        """
        bins = self.config.bins
        if bins % 4:
            raise ValueError(f"symmetries need a bin count divisible by 4, got {bins}")
        if not 0 <= k < 8:
            raise ValueError(f"symmetry index must be in [0, 8), got {k}")
        codes = np.asarray(codes)
        index = codes % self.config.slot_size
        absent = index == bins
        flip, turns = divmod(k, 4)
        ops = [("flip",)] * flip + [("turn",)] * turns
        for (op,) in (reversed(ops) if inverse else ops):
            x, y, bx, by, angle = (index[..., i] for i in range(len(SLOTS)))
            if op == "flip":
                index = np.stack([bins - 1 - x, y, bins - 1 - bx, by, bins - 1 - angle], -1)
            else:
                step = -1 if inverse else 1  # a quarter turn, or its inverse
                if step == 1:
                    index = np.stack([y, bins - 1 - x, by, bins - 1 - bx, (angle - bins // 4) % bins], -1)
                else:
                    index = np.stack([bins - 1 - y, x, bins - 1 - by, bx, (angle + bins // 4) % bins], -1)
        index = np.where(absent[..., [0, 0, 2, 2, 4]] | absent[..., [1, 1, 3, 3, 4]], bins, index)
        return index + np.arange(len(SLOTS)) * self.config.slot_size

    # ---- frames ----
    def frames_to_states(self, frames: np.ndarray) -> np.ndarray:
        """(N, H, W, 3) uint8 frames of any size -> (N, 5) judged states (NaN where not visible)."""
        return judge_states(frames)

    def render(self, states: np.ndarray) -> np.ndarray:
        """(N, 5) states -> (N, S, S, 3) uint8 frames drawn as gym-pusht draws them."""
        import cv2

        states = np.asarray(states, dtype=np.float64).reshape(-1, len(SLOTS))
        size = self.config.image_size
        frames = [cv2.resize(self._draw(state), (RENDER_SIZE, RENDER_SIZE)) for state in states]
        if size != RENDER_SIZE:
            interpolation = cv2.INTER_AREA if size < RENDER_SIZE else cv2.INTER_LINEAR
            frames = [cv2.resize(frame, (size, size), interpolation=interpolation) for frame in frames]
        return np.stack(frames) if frames else np.zeros((0, size, size, 3), np.uint8)

    @staticmethod
    def _draw(state: np.ndarray) -> np.ndarray:
        return _canvas().draw(state)

    # ---- the FrameTokenizer API ----
    def encode(self, frames: np.ndarray, context: np.ndarray | None = None, mode: str = "absolute",
               batch_size: int = 32) -> np.ndarray:
        """uint8 frames (N, H, W, 3) -> codes (N, 5); `context` and `mode` are accepted and unused."""
        return self.states_to_codes(self.frames_to_states(frames))

    def decode(self, codes: np.ndarray, context: np.ndarray | None = None, mode: str = "absolute",
               batch_size: int = 32) -> np.ndarray:
        """codes (N, 5) -> uint8 frames (N, S, S, 3); `context` and `mode` are accepted and unused."""
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(SLOTS):
            raise ValueError(f"pose codes must have shape (N, {len(SLOTS)}), got {codes.shape}")
        return self.render(self.codes_to_states(codes))

    def eval(self) -> PoseTokenizer:
        return self

    def save(self, directory: str | Path, extra: dict | None = None) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / CONFIG_FILE).write_text(json.dumps({"config": asdict(self.config), **(extra or {})}, indent=2))

    @classmethod
    def load(cls, directory: str | Path) -> PoseTokenizer:
        path = Path(directory) / CONFIG_FILE
        if not path.is_file():
            raise FileNotFoundError(f"tokenizer checkpoint {directory} lacks {CONFIG_FILE}")
        return cls(PoseTokenizerConfig(**json.loads(path.read_text())["config"]))


class _Canvas:
    """Draws frames as gym-pusht does (white, goal T, walls, then the agent disc and the block) at 512 x 512.

    The static arena is drawn once; each frame draws the agent and block on a working surface, copies the
    pixels of their bounding boxes over the arena's RGB array, and restores those boxes from the arena.
    The result is pixel for pixel the full redraw (the same draw calls on the same pixels; a test checks
    it) at a fraction of the cost: the per-frame work is the shapes, not two whole-canvas copies."""

    MARGIN = 4  # pixels around a shape's vertices that its outline (2-pixel fat segments) may touch

    def __init__(self) -> None:
        import os

        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        import pygame

        size = int(WORLD_SIZE)
        self.background = pygame.Surface((size, size))
        self.background.fill((255, 255, 255))
        for polygon in _tee_world(GOAL_POSE):
            pygame.draw.polygon(self.background, _GOAL, [*polygon, polygon[0]])
        for a, b in _WALLS:
            _fat_segment(self.background, a, b, 2, _WALL)
        # row-major RGB bytes: already (y, x, channel)
        self.rgb = np.frombuffer(pygame.image.tobytes(self.background, "RGB"), np.uint8).reshape(size, size, 3)
        self.work = self.background.copy()

    def _box(self, xs: list[float], ys: list[float], margin: int) -> tuple[int, int, int, int] | None:
        size = int(WORLD_SIZE)
        x0, x1 = max(0, int(np.floor(min(xs))) - margin), min(size, int(np.ceil(max(xs))) + margin + 1)
        y0, y1 = max(0, int(np.floor(min(ys))) - margin), min(size, int(np.ceil(max(ys))) + margin + 1)
        return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None

    def draw(self, state: np.ndarray) -> np.ndarray:
        import pygame

        boxes = []
        if np.isfinite(state[:2]).all():
            centre = (round(state[0]), round(state[1]))
            pygame.draw.circle(self.work, _AGENT, centre, AGENT_RADIUS)
            pygame.draw.circle(self.work, _lighter(_AGENT), centre, AGENT_RADIUS - 4)
            r = AGENT_RADIUS
            boxes.append(self._box([centre[0] - r, centre[0] + r], [centre[1] - r, centre[1] + r], self.MARGIN))
        if np.isfinite(state[2:]).all():
            polygons = _tee_world(state[2:])
            for polygon in polygons:
                pygame.draw.polygon(self.work, _lighter(_BLOCK), [*polygon, polygon[0]])
                for i in range(len(polygon)):
                    _fat_segment(self.work, polygon[i], polygon[(i + 1) % len(polygon)], 2, _BLOCK)
            points = [p for polygon in polygons for p in polygon]
            boxes.append(self._box([p[0] for p in points], [p[1] for p in points], self.MARGIN))
        boxes = [b for b in boxes if b is not None]
        out = self.rgb.copy()
        if boxes:
            view = pygame.surfarray.pixels3d(self.work)  # (x, y, channel) view of the working surface
            for x0, y0, x1, y1 in boxes:
                out[y0:y1, x0:x1] = view[x0:x1, y0:y1].swapaxes(0, 1)
            del view  # unlocks the surface
            for x0, y0, x1, y1 in boxes:
                rect = pygame.Rect(x0, y0, x1 - x0, y1 - y0)
                self.work.blit(self.background, rect, rect)
        return out


@functools.cache
def _canvas() -> _Canvas:
    """One canvas per process (drawing is sequential; frames are copies, never views of it)."""
    return _Canvas()


def _tee_world(pose: np.ndarray) -> list[list[tuple[int, int]]]:
    """The T's two polygons at `pose` in integer screen coordinates (pymunk's local_to_world, rounded)."""
    c, s = np.cos(pose[2]), np.sin(pose[2])
    out = []
    for polygon in TEE_POLYGONS:
        world = polygon @ np.array([[c, s], [-s, c]]) + np.asarray(pose[:2])
        out.append([(round(x), round(y)) for x, y in world])
    return out


def _fat_segment(screen: object, a: tuple, b: tuple, radius: int, colour: tuple[int, int, int]) -> None:
    """pymunk's pygame debug drawing of a fat segment: a thick line, a quad and round caps."""
    import pygame

    p1, p2 = (round(a[0]), round(a[1])), (round(b[0]), round(b[1]))
    pygame.draw.lines(screen, colour, False, [p1, p2], 2 * radius)
    dx, dy = abs(p2[1] - p1[1]), abs(p2[0] - p1[0])
    if dx == 0 and dy == 0:
        return
    scale = radius / (dx * dx + dy * dy) ** 0.5
    ox, oy = round(dx * scale), round(dy * scale)
    pygame.draw.polygon(screen, colour, [(p1[0] - ox, p1[1] - oy), (p1[0] + ox, p1[1] + oy),
                                         (p2[0] + ox, p2[1] + oy), (p2[0] - ox, p2[1] - oy)])
    pygame.draw.circle(screen, colour, p1, radius)
    pygame.draw.circle(screen, colour, p2, radius)


def load_frame_tokenizer(directory: str | Path):  # noqa: ANN201 - FrameTokenizer | KeypointTokenizer | PoseTokenizer
    """Load whichever frame tokenizer `directory` holds, by its config's `kind`: "pose" (PushT's five pose
    tokens), "keypoint" (learned image points, `rlvr_sim.models.keypoint_tokenizer`), else the learned FSQ grid."""
    from rlvr_sim.models.keypoint_tokenizer import KeypointTokenizer
    from rlvr_sim.models.visual_tokenizer import FrameTokenizer

    path = Path(directory) / CONFIG_FILE
    kind = json.loads(path.read_text()).get("config", {}).get("kind") if path.is_file() else None
    if kind == "pose":
        return PoseTokenizer.load(directory)
    return KeypointTokenizer.load(directory) if kind == "keypoint" else FrameTokenizer.load(directory)


__all__ = ["PoseTokenizer", "PoseTokenizerConfig", "SLOTS", "load_frame_tokenizer"]
