"""A Gymnasium text space for page trees and action text, which hold any Unicode character."""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium.spaces import Text

_SAMPLE_CHARSET = string.ascii_letters + string.digits + " []'_-:.\n\t"


class TextSpace(Text):
    """Strings of up to `max_length` characters, any Unicode character allowed.

    Gymnasium's `Text` only admits a fixed character set; accessibility trees carry arbitrary page text
    (WebArena's contain private-use icon glyphs), so membership here checks type and length only.
    `sample()` draws from a small printable set (useful for fuzzing actions).
    """

    def __init__(self, max_length: int, min_length: int = 0, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(max_length=max_length, min_length=min_length, charset=_SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"TextSpace({self.min_length}, {self.max_length}, any Unicode)"
