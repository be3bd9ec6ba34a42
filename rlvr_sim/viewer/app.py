"""The pygame window onto a learned simulator (`rlvr-sim view`, `python -m rlvr_sim.viewer`).

Layout: the world model's frame and, beside it, the ground truth (gym-pusht fed the same actions, or the
replayed episode's own frames), each scaled up with nearest-neighbour so pixels stay crisp; below them
the look-ahead filmstrip, then a status bar (mode, model, step, frame rate, temperature, per-frame SSIM
and LPIPS). `H` toggles the key help. Every world step can be recorded to mp4/GIF; `--record PATH
--steps N` runs without interaction and writes N + 1 frames (the start frame, then one per step).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rlvr_sim.reporting import add_out_argument
from rlvr_sim.viewer.recorder import VideoRecorder, save_png, timestamped_path
from rlvr_sim.viewer.session import MODES, Filmstrip, FrameScorer, ViewerSession, make_policy
from rlvr_sim.viewer.worlds import (
    WORLD_MODEL_ID,
    EnvHandle,
    frame_shape,
    ground_truth_available,
    load_episode,
    make_ground_truth,
    make_world_model,
    model_frame_skip,
    model_name,
)

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep stdout clean for scripted runs

HELP_KEYS = (
    ("mouse", "set the target"),
    ("space", "pause / resume"),
    ("right, n", "one step (paused)"),
    ("r", "reset, next seed"),
    ("up, down", "temperature +/- 0.1"),
    ("c", "take / give back control"),
    ("f", "filmstrip: look ahead"),
    ("s", "screenshot (PNG)"),
    ("v", "start / stop recording"),
    ("h", "hide this help"),
    ("esc, q", "quit"),
)
BACKGROUND, PANEL_EDGE, TEXT = (24, 26, 30), (70, 74, 82), (230, 232, 236)
DIM_TEXT, TARGET, POLICY_TARGET, RECORDING = (150, 154, 162), (235, 64, 52), (255, 170, 40), (235, 40, 40)
MARGIN, GAP, TITLE_HEIGHT, LINE_HEIGHT, THUMB_GAP, SIDEBAR_WIDTH = 12, 12, 24, 20, 4, 260


def _round_up(value: int, multiple: int = 16) -> int:
    """Window sides are multiples of 16 so that mp4 encoders take the frames unchanged."""
    return -(-value // multiple) * multiple


@dataclass
class Layout:
    """Where everything goes, computed once from the frame size, scale, panel count and horizon."""

    panel: int
    panels: list[tuple[int, int]]
    sidebar: tuple[int, int, int, int]  # help panel: left, top, width, height
    strip_top: int
    thumb: int
    strip_rows: int
    status_top: int
    size: tuple[int, int]

    @classmethod
    def build(cls, frame_size: int, scale: int, panel_count: int, horizon: int, strip_rows: int) -> Layout:
        panel = frame_size * scale
        panels_width = panel_count * panel + (panel_count - 1) * GAP
        width = max(2 * MARGIN + panels_width + GAP + SIDEBAR_WIDTH, 640)
        panels = [(MARGIN + i * (panel + GAP), MARGIN + TITLE_HEIGHT) for i in range(panel_count)]
        sidebar = (MARGIN + panels_width + GAP, MARGIN + TITLE_HEIGHT, SIDEBAR_WIDTH, panel)
        strip_top = MARGIN + TITLE_HEIGHT + panel + GAP
        thumb = min(frame_size * 3, (width - 2 * MARGIN - (horizon - 1) * THUMB_GAP) // max(horizon, 1))
        status_top = strip_top + strip_rows * (LINE_HEIGHT + thumb + THUMB_GAP) + GAP
        height = status_top + 2 * LINE_HEIGHT + MARGIN
        size = (_round_up(width), _round_up(height))
        return cls(panel, panels, sidebar, strip_top, thumb, strip_rows, status_top, size)


class Viewer:
    """Draws a `ViewerSession` and turns pygame events into its controls; `tick()` is one frame of the loop."""

    def __init__(
        self,
        session: ViewerSession,
        *,
        model_label: str,
        scale: int = 6,
        fps: float = 10.0,
        horizon: int = 7,
        out_dir: str | Path = "viewer_captures",
        record_format: str = "mp4",
        show_help: bool = True,
        show_filmstrip: bool = False,
    ) -> None:
        import pygame

        if scale < 1 or horizon < 1:
            raise ValueError(f"scale and horizon must be >= 1, got scale={scale}, horizon={horizon}")
        if record_format not in ("mp4", "gif"):
            raise ValueError(f"record format must be 'mp4' or 'gif', got {record_format!r}")
        self.pg = pygame
        self.session = session
        self.model_label = model_label
        self.fps_cap = fps
        self.horizon = horizon
        self.out_dir = Path(out_dir)
        self.record_format = record_format
        self.show_help = show_help
        self.show_filmstrip = show_filmstrip
        height, width = session.world_frame.shape[:2]
        has_truth = session.truth_frame is not None
        self.layout = Layout.build(
            max(height, width), scale, 2 if has_truth else 1, horizon, 2 if has_truth else 1
        )
        self.frame_pixels = (int(width * scale), int(height * scale))
        pygame.display.init()
        pygame.font.init()
        self.screen = pygame.display.set_mode(self.layout.size)
        pygame.display.set_caption(f"rlvr-sim viewer: {model_label}")
        self.font = pygame.font.Font(None, 22)
        self.small_font = pygame.font.Font(None, 18)
        self.clock = pygame.time.Clock()
        self.paused = False
        self.pending_steps = 0
        self.running = True
        self.measured_fps = 0.0
        self._last_tick: float | None = None
        self.strip = Filmstrip()
        self._strip_stale = True
        self._strip_step = 0
        self.recorder: VideoRecorder | None = None
        self.message = ""
        self.steps_taken = 0
        self._record_next_frame = False

    # -- events ----------------------------------------------------------------------------------------
    def _panel_fraction(self, position: tuple[int, int]) -> tuple[float, float] | None:
        """Where a screen position falls inside any frame panel, as fractions of the frame; None outside."""
        px, py = position
        for left, top in self.layout.panels:
            width, height = self.frame_pixels
            if left <= px < left + width and top <= py < top + height:
                return (px - left + 0.5) / width, (py - top + 0.5) / height
        return None

    def handle_event(self, event) -> None:
        """Apply one pygame event to the session."""
        pg = self.pg
        if event.type == pg.QUIT:
            self.running = False
        elif event.type in (pg.MOUSEMOTION, pg.MOUSEBUTTONDOWN) and self.session.human_control:
            fraction = self._panel_fraction(event.pos)
            if fraction is not None and self.session.mode != "replay":
                self.session.set_target_fraction(*fraction)
                self._strip_stale = True
        elif event.type == pg.KEYDOWN:
            self._handle_key(event.key)

    def _handle_key(self, key: int) -> None:
        pg, session = self.pg, self.session
        if key in (pg.K_ESCAPE, pg.K_q):
            self.running = False
        elif key == pg.K_SPACE:
            self.paused = not self.paused
        elif key in (pg.K_RIGHT, pg.K_n):
            self.pending_steps += 1
        elif key == pg.K_r:
            session.reset()
            self._after_world_change()
        elif key in (pg.K_UP, pg.K_EQUALS, pg.K_PLUS, pg.K_KP_PLUS, pg.K_DOWN, pg.K_MINUS, pg.K_KP_MINUS):
            delta = 0.1 if key in (pg.K_UP, pg.K_EQUALS, pg.K_PLUS, pg.K_KP_PLUS) else -0.1
            value = session.change_temperature(delta)
            self.message = "this model has no temperature" if value is None else f"temperature {value:.2f}"
        elif key == pg.K_c:
            human = session.toggle_control()
            self.message = "you drive (mouse)" if human else "policy drives"
            self._strip_stale = True
        elif key == pg.K_f:
            self.show_filmstrip = not self.show_filmstrip
            self._strip_stale = True
        elif key == pg.K_s:
            path = self.screenshot()
            self.message = f"saved {path.name}"
        elif key == pg.K_v:
            if self.recorder is None:
                self.start_recording(timestamped_path(self.out_dir, "viewer", f".{self.record_format}"))
            else:
                self.message = f"saved {self.stop_recording().name}"
        elif key == pg.K_h:
            self.show_help = not self.show_help

    # -- loop ------------------------------------------------------------------------------------------
    def _after_world_change(self) -> None:
        self._strip_stale = True
        self._record_next_frame = True

    def _strip_due(self) -> bool:
        """While running, refresh the look-ahead once per `horizon` steps (it costs `horizon` model steps);
        when paused, or when it is empty, at once."""
        return (
            self.paused
            or not self.strip.world
            or abs(self.session.step_index - self._strip_step) >= self.horizon
        )

    def tick(self) -> bool:
        """One frame: events, at most one world step, drawing, recording. False once the user quits."""
        for event in self.pg.event.get():
            self.handle_event(event)
        if not self.running:
            return False
        if not self.paused or self.pending_steps > 0:
            self.pending_steps = max(0, self.pending_steps - 1)
            if self.session.step():
                self.steps_taken += 1
                self._after_world_change()
            else:
                self.paused = True
        if self.show_filmstrip and self._strip_stale and self._strip_due():
            self.strip = self.session.filmstrip(self.horizon)
            self._strip_stale = False
            self._strip_step = self.session.step_index
        now = time.perf_counter()
        if self._last_tick is not None:
            instant = 1.0 / max(now - self._last_tick, 1e-6)
            self.measured_fps = (
                instant if self.measured_fps == 0.0 else 0.9 * self.measured_fps + 0.1 * instant
            )
        self._last_tick = now
        self.draw()
        self.pg.display.flip()
        if self.recorder is not None and self._record_next_frame:
            self.recorder.add(self.capture())
        self._record_next_frame = False
        if self.fps_cap > 0:
            self.clock.tick(self.fps_cap)
        return True

    def run(self, max_steps: int | None = None) -> int:
        """Loop until the user quits, or (scripted) until `max_steps` world steps or a replay's end."""
        if max_steps is not None:
            self.paused = False
        while True:
            if max_steps is not None and (self.steps_taken >= max_steps or self.session.steps_left == 0):
                self.paused, self.pending_steps = True, 0
                self.tick()  # draws (and records) the frame the last step produced, steps no further
                break
            if not self.tick():
                break
        return self.steps_taken

    # -- output ----------------------------------------------------------------------------------------
    def capture(self) -> np.ndarray:
        """The window's pixels as an (H, W, 3) uint8 array."""
        return np.ascontiguousarray(self.pg.surfarray.array3d(self.screen).swapaxes(0, 1))

    def screenshot(self, path: str | Path | None = None) -> Path:
        """Save what the window shows now as a PNG."""
        self.draw()
        return save_png(self.capture(), path or timestamped_path(self.out_dir, "viewer", ".png"))

    def start_recording(self, path: str | Path) -> None:
        """Record from the current frame on: one video frame per world step."""
        self.recorder = VideoRecorder(path, fps=self.fps_cap if self.fps_cap > 0 else 10.0)
        self.message = f"recording {self.recorder.path.name}"
        self.draw()
        self.recorder.add(self.capture())

    def stop_recording(self) -> Path:
        assert self.recorder is not None
        path = self.recorder.close()
        self.recorder = None
        return path

    def close(self) -> None:
        """Finish any recording, close the envs and the window."""
        if self.recorder is not None:
            self.stop_recording()
        self.session.close()
        self.pg.display.quit()

    # -- drawing ---------------------------------------------------------------------------------------
    def _blit_frame(self, frame: np.ndarray, position: tuple[int, int], size: tuple[int, int]) -> None:
        surface = self.pg.surfarray.make_surface(np.ascontiguousarray(frame.swapaxes(0, 1)))
        self.screen.blit(self.pg.transform.scale(surface, size), position)  # nearest neighbour: crisp pixels
        self.pg.draw.rect(self.screen, PANEL_EDGE, (*position, *size), 1)

    def _text(self, text: str, position: tuple[int, int], colour=TEXT, font=None) -> None:
        self.screen.blit((font or self.font).render(text, True, colour), position)

    def _draw_target(self, left: int, top: int) -> None:
        session = self.session
        if session.mode == "replay":
            return
        if session.human_control:
            fx, fy = session.target_fraction()
            colour = TARGET
        else:
            if not session.world.actions or session.action_space.shape != (2,):
                return
            low, high = session.action_space.low, session.action_space.high
            fx, fy = (session.world.actions[-1] - low) / np.maximum(high - low, 1e-9)
            colour = POLICY_TARGET
        width, height = self.frame_pixels
        x, y = int(left + fx * width), int(top + fy * height)
        self.pg.draw.circle(self.screen, colour, (x, y), 7, 2)
        self.pg.draw.line(self.screen, colour, (x - 11, y), (x + 11, y), 1)
        self.pg.draw.line(self.screen, colour, (x, y - 11), (x, y + 11), 1)

    def draw(self) -> None:
        """Render panels, filmstrip, status bar and the help panel."""
        session, layout = self.session, self.layout
        self.screen.fill(BACKGROUND)
        frames = [("World model: " + self.model_label, session.world_frame)]
        if session.truth_frame is not None:
            truth_title = f"Episode {session.episode.name}" if session.episode else "Ground truth (gym-pusht)"
            frames.append((truth_title, session.truth_frame))
        for (title, frame), (left, top) in zip(frames, layout.panels):
            self._text(title, (left, top - TITLE_HEIGHT + 4))
            self._blit_frame(frame, (left, top), self.frame_pixels)
            self._draw_target(left, top)
        self._draw_filmstrip()
        self._draw_status()
        self._draw_help()

    def _draw_filmstrip(self) -> None:
        layout = self.layout
        top = layout.strip_top
        if not self.show_filmstrip:
            self._text("f: predict the next frames for the current plan (filmstrip)", (MARGIN, top), DIM_TEXT)
            return
        rows = [("world model, predicted for the plan", self.strip.world)]
        if layout.strip_rows > 1:
            rows.append(("ground truth, the same actions", self.strip.truth))
        for label, frames in rows:
            caption = f"{label}: {len(frames)} steps from step {self._strip_step}"
            self._text(caption, (MARGIN, top), DIM_TEXT, self.small_font)
            for k, frame in enumerate(frames[: self.horizon]):
                position = (MARGIN + k * (layout.thumb + THUMB_GAP), top + LINE_HEIGHT)
                self._blit_frame(frame, position, (layout.thumb, layout.thumb))
            top += LINE_HEIGHT + layout.thumb + THUMB_GAP

    def _draw_status(self) -> None:
        session, top = self.session, self.layout.status_top
        mode = session.mode
        if mode == "policy":
            mode += " (you drive)" if session.human_control else " (policy drives)"
        temperature = session.temperature
        parts = [
            mode,
            f"model {self.model_label}",
            f"step {session.step_index}",
            f"{self.measured_fps:.1f} fps",
            "temp n/a" if temperature is None else f"temp {temperature:.2f}",
        ]
        if self.paused:
            parts.append("PAUSED")
        self._text("  |  ".join(parts), (MARGIN, top))
        readout = session.readout
        details = [f"reward {readout.reward:.3f}"]
        if readout.ssim is not None:
            details.append(f"SSIM {readout.ssim:.1f}")
        if readout.lpips is not None and session.scorer is not None:
            details.append(f"{session.scorer.lpips_name.split(' (')[0]} {readout.lpips:.2f}")
        details += [text for text in (readout.note, self.message) if text]
        self._text("  |  ".join(details), (MARGIN, top + LINE_HEIGHT), DIM_TEXT)
        if self.recorder is not None:
            width = self.layout.size[0]
            self.pg.draw.circle(self.screen, RECORDING, (width - MARGIN - 40, top + 8), 6)
            self._text("REC", (width - MARGIN - 30, top), RECORDING)

    def _draw_help(self) -> None:
        """The help panel beside the frames (never over them): model, frame rate, then the keys."""
        left, top, width, height = self.layout.sidebar
        self.pg.draw.rect(self.screen, (34, 37, 43), (left, top, width, height))
        self.pg.draw.rect(self.screen, PANEL_EDGE, (left, top, width, height), 1)
        x, y = left + 10, top + 10
        if not self.show_help:
            self._text("h: keys", (x, y), DIM_TEXT, self.small_font)
            return
        self._text(self.model_label, (x, y), TEXT, self.font)
        self._text(f"{self.measured_fps:.1f} frames/s", (x, y + LINE_HEIGHT), DIM_TEXT, self.small_font)
        for i, (key, meaning) in enumerate(HELP_KEYS):
            row = y + LINE_HEIGHT * (i + 3)
            self._text(key, (x, row), TEXT, self.small_font)
            self._text(meaning, (x + 72, row), DIM_TEXT, self.small_font)


# ---------------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rlvr-sim view",
        description="Watch or play a learned video simulator in a pygame window, beside the ground truth.",
    )
    parser.add_argument("--mode", choices=MODES, default="play", help="who drives (default: play)")
    parser.add_argument("--env-id", default=WORLD_MODEL_ID, help="Gymnasium id of the learned simulator")
    parser.add_argument("--checkpoint", help="world-model checkpoint directory (default: the embedded one)")
    parser.add_argument(
        "--env-kwargs", default="{}", help="JSON object of extra keyword arguments for gym.make of the model"
    )
    parser.add_argument(
        "--ground-truth",
        choices=("auto", "on", "off"),
        default="auto",
        help="run gym-pusht beside the model with the same actions (auto: when installed)",
    )
    parser.add_argument("--policy", default="expert", help="policy mode: a PushT skill or module:factory")
    parser.add_argument("--episode", help="replay mode: an episode .npz (keys image, action)")
    parser.add_argument(
        "--frame-skip",
        type=int,
        help="replay: keep every k-th episode frame (default: the model's frame skip)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--scale", type=int, default=6, help="screen pixels per frame pixel (nearest neighbour)"
    )
    parser.add_argument("--fps", type=float, default=10.0, help="frame-rate cap (0: as fast as possible)")
    parser.add_argument("--horizon", type=int, default=7, help="filmstrip: frames predicted ahead")
    parser.add_argument("--filmstrip", action="store_true", help="show the filmstrip from the start")
    parser.add_argument(
        "--lpips",
        choices=("auto", "on", "off"),
        default="auto",
        help="per-frame LPIPS beside SSIM (auto: in replay only; it costs a network pass per frame)",
    )
    parser.add_argument("--no-help", action="store_true", help="start with the help panel hidden")
    add_out_argument(parser, default="viewer_captures",
                     help="where screenshots and recordings go")
    parser.add_argument("--record-format", choices=("mp4", "gif"), default="mp4", help="format of the v key")
    parser.add_argument("--record", help="scripted run: record to this .mp4/.gif and exit after --steps")
    parser.add_argument("--steps", type=int, help="scripted run: number of world steps (with --record)")
    parser.add_argument("--screenshot", help="scripted run: save the last frame as this PNG")
    return parser


def build_viewer(args: argparse.Namespace) -> Viewer:
    """The session and window that the parsed arguments describe."""
    env_kwargs = json.loads(args.env_kwargs)
    if not isinstance(env_kwargs, dict):
        raise ValueError(f"--env-kwargs must be a JSON object, got {args.env_kwargs!r}")

    def world_factory():
        return make_world_model(args.env_id, args.checkpoint, **env_kwargs)

    world_env = world_factory()
    height, width = frame_shape(world_env)
    world = EnvHandle(world_env, world_factory, "world model")
    truth = None
    if args.mode != "replay" and args.ground_truth != "off":
        if ground_truth_available():
            truth = EnvHandle(
                make_ground_truth(height, width),
                lambda: make_ground_truth(height, width),
                "gym-pusht",
                action_repeat=model_frame_skip(world_env),
            )
        elif args.ground_truth == "on":
            raise RuntimeError("--ground-truth on needs gym-pusht: pip install gym-pusht")
    if args.mode == "replay" and args.episode is None:
        raise ValueError("--mode replay needs --episode PATH.npz")
    frame_skip = args.frame_skip or model_frame_skip(world_env)
    episode = load_episode(args.episode, height, width, frame_skip) if args.mode == "replay" else None
    policy = make_policy(args.policy, args.seed) if args.mode == "policy" else None
    with_lpips = args.lpips == "on" or (args.lpips == "auto" and args.mode == "replay")
    scorer = FrameScorer(with_lpips) if truth is not None or episode is not None else None
    session = ViewerSession(
        world, truth, mode=args.mode, policy=policy, episode=episode, scorer=scorer, seed=args.seed
    )
    return Viewer(
        session,
        model_label=model_name(world_env, args.checkpoint),
        scale=args.scale,
        fps=args.fps,
        horizon=args.horizon,
        out_dir=args.out,
        record_format=args.record_format,
        show_help=not args.no_help,
        show_filmstrip=args.filmstrip,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `rlvr-sim view` and `python -m rlvr_sim.viewer`."""
    args = build_parser().parse_args(argv)
    scripted = args.record is not None or args.screenshot is not None
    if scripted and args.steps is None:
        raise SystemExit("--record/--screenshot need --steps N")
    if args.steps is not None and args.steps < 0:
        raise SystemExit("--steps must be >= 0")
    if scripted and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    viewer = build_viewer(args)
    try:
        if args.record:
            viewer.start_recording(args.record)
        steps = viewer.run(max_steps=args.steps if scripted else None)
        if args.screenshot:
            print(f"screenshot: {viewer.screenshot(args.screenshot)}")
        if args.record:
            frames = viewer.recorder.frames_written if viewer.recorder else 0
            print(f"recorded {frames} frames ({steps} steps) to {viewer.stop_recording()}")
    finally:
        viewer.close()
    return 0
