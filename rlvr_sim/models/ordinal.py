"""Value embeddings for ordered token bins: each bin's input embedding is a linear function of its value.

A codec that turns numbers into tokens (pose bins, displacement bins, action bins, body-frame bins) gives every
bin its own embedding row, so a model has to learn from data that bin 50 and bin 51 mean almost the same thing.
Contact in PushT happens at particular relative positions, seen a few times each in a few thousand pushes, so
per-bin rows memorise the training pushes and do not generalise to the plans a planner weighs. Measured
(`evaluations/pusht_token_inputs.py`, docs/planning.md "The cause"): an MLP given the codec's quantised inputs
as numbers predicts the T along a planner's candidate plans with 9.5 world units of error after 6 steps and ranks
them with Spearman 0.747; the same MLP given them one-hot (an embedding row per bin) 25.9 units and 0.501, below a
T that never moves (0.608); one-hot with each group's rows kept linear in the value 14.5 units and 0.645.

`project_ordinal` enforces that constraint on an embedding table in place: the rows of each `OrdinalGroup`
become their least-squares fit by `a + v * b` (v the bin's value scaled to [-1, 1]; a circular group, an angle:
`a + cos(v) * b + sin(v) * c`). The trainer applies it after every optimizer step (`ordinal_embeddings: true`,
projected gradient descent), so the model stays a plain `transformers` model with an ordinary embedding table
that any code loads; tokens outside the groups (the "not visible" / "unknown" codes, PAD, BOS) keep free rows.
The output layer (untied) keeps a free row per bin: a distribution over bins may have any shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import torch


@dataclass(frozen=True)
class OrdinalGroup:
    """Token ids [start, start + size) holding the ordered bins 0..size-1 of one number; `circular`: an angle
    (bin size - 1 is next to bin 0)."""

    start: int
    size: int
    circular: bool = False

    def __post_init__(self) -> None:
        if self.start < 0 or self.size < 3:
            raise ValueError(f"an ordinal group needs start >= 0 and at least 3 bins, got {self}")

    def basis(self, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """(size, k) the functions of the bin value the group's rows are combinations of."""
        index = torch.arange(self.size, dtype=dtype)
        if self.circular:
            angle = 2 * torch.pi * index / self.size
            return torch.stack([torch.ones_like(angle), torch.cos(angle), torch.sin(angle)], 1)
        value = 2 * index / (self.size - 1) - 1
        return torch.stack([torch.ones_like(value), value], 1)


@cache
def _projector(group: OrdinalGroup) -> torch.Tensor:
    """(size, size) the orthogonal projection onto the group's basis, made once per group (the trainer applies it
    after every step)."""
    basis = group.basis()
    return basis @ torch.linalg.pinv(basis)


def check_groups(groups: list[OrdinalGroup], vocab_size: int) -> None:
    """Groups must lie inside the vocabulary and not overlap."""
    spans = sorted((g.start, g.start + g.size) for g in groups)
    for (lo, hi), (next_lo, _) in zip(spans, spans[1:]):
        if next_lo < hi:
            raise ValueError(f"ordinal groups overlap: ids [{lo}, {hi}) and [{next_lo}, ...)")
    if spans and spans[-1][1] > vocab_size:
        raise ValueError(f"an ordinal group ends at id {spans[-1][1]}, past the model's {vocab_size} embeddings")


@torch.no_grad()
def project_ordinal(weight: torch.Tensor, groups: list[OrdinalGroup]) -> float:
    """Replace each group's rows of `weight` (vocab, hidden) by their least-squares fit on the group's basis;
    returns the largest change of any entry (0 when the table already satisfies the constraint)."""
    check_groups(groups, weight.shape[0])
    change = 0.0
    for group in groups:
        rows = weight[group.start : group.start + group.size]
        fitted = (_projector(group) @ rows.double()).to(rows.dtype)
        change = max(change, float((fitted - rows).abs().max()))
        rows.copy_(fitted)
    return change


def input_embedding_weight(model: torch.nn.Module) -> torch.Tensor:
    """The input embedding table of a `transformers` model (LoRA-wrapped or not)."""
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    if embeddings is None or not isinstance(getattr(embeddings, "weight", None), torch.Tensor):
        raise ValueError(f"{type(model).__name__} has no input embedding table to constrain")
    return embeddings.weight


__all__ = ["OrdinalGroup", "check_groups", "input_embedding_weight", "project_ordinal"]
