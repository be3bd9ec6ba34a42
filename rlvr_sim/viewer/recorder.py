"""Recording viewer sessions to mp4 or GIF (imageio) and saving screenshots (PNG)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

VIDEO_SUFFIXES = (".mp4", ".gif")


class VideoRecorder:
    """Appends RGB frames to an mp4 (ffmpeg via imageio-ffmpeg) or an animated GIF, one frame per call."""

    def __init__(self, path: str | Path, fps: float = 10.0) -> None:
        import imageio

        self.path = Path(path)
        suffix = self.path.suffix.lower()
        if suffix not in VIDEO_SUFFIXES:
            raise ValueError(f"record to .mp4 or .gif, got {self.path.name!r}")
        if fps <= 0:
            raise ValueError(f"recording fps must be positive, got {fps}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".gif":
            self._writer = imageio.get_writer(self.path, mode="I", duration=1000.0 / fps, loop=0)
        else:
            try:
                self._writer = imageio.get_writer(self.path, fps=fps, codec="libx264", macro_block_size=16)
            except (ImportError, ValueError, RuntimeError) as error:
                raise RuntimeError(
                    f"cannot write {self.path.name}: mp4 needs ffmpeg (pip install imageio-ffmpeg); "
                    f"record to .gif instead ({error})"
                ) from None
        self.frames_written = 0

    def add(self, frame: np.ndarray) -> None:
        """Append one (H, W, 3) uint8 frame; every frame of a recording must have the same size."""
        self._writer.append_data(np.ascontiguousarray(frame, dtype=np.uint8))
        self.frames_written += 1

    def close(self) -> Path:
        self._writer.close()
        return self.path


def timestamped_path(directory: str | Path, prefix: str, suffix: str) -> Path:
    """A fresh file name like `viewer_20250101-120000_3.png` in `directory` (never overwrites)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    index = 0
    while (path := directory / f"{prefix}_{stamp}_{index}{suffix}").exists():
        index += 1
    return path


def save_png(frame: np.ndarray, path: str | Path) -> Path:
    """Write one RGB frame as a PNG."""
    import imageio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    imageio.imwrite(path, np.ascontiguousarray(frame, dtype=np.uint8))
    return path
