"""Value embeddings for ordered token bins: each bin's input embedding is a linear function of its value.

A codec that turns numbers into tokens (pose bins, displacement bins, action bins, body-frame bins) gives every
bin its own embedding row, so a model has to learn from data that bin 50 and bin 51 mean almost the same thing.
Contact in PushT happens at particular relative positions, seen a few times each in a few thousand pushes, so
per-bin rows memorise the training pushes and do not generalise to the plans a planner weighs. Measured
(`evaluations/pusht_token_inputs.py`, docs/planning.md "The cause"): an MLP given the codec's quantised inputs
as numbers predicts the T along a planner's candidate plans with 9.5 world units of error after 6 steps and ranks
them with Spearman 0.747; the same MLP given them one-hot (an embedding row per bin) 25.9 units and 0.501, below a
T that never moves (0.608); one-hot with each group's rows kept linear in the value 14.5 units and 0.645.

The trainer (`ordinal_embeddings: true`) trains the input table as `ValueLinearRows`, a `torch.nn.utils.parametrize`
parametrization: the rows of each `OrdinalGroup` are `a + v * b` (v the bin's value scaled to [-1, 1]; a circular
group, an angle: `a + cos(v) * b + sin(v) * c`) and the optimizer steps the coefficients, so every occurrence of any
of a group's bins trains the same two (three) vectors. The parametrization starts from the least-squares fit of the
table it is put on (`project_ordinal`), and a saved checkpoint holds the plain table it computes
(`plain_state_dict`): a plain `transformers` model that any code loads. Tokens outside the groups (the "not
visible" / "unknown" codes, PAD, BOS) keep free rows, and the output layer (untied) a free row per bin: a
distribution over bins may have any shape.

Training the coefficients matters, not only the constraint: projecting the table back onto the lines after each
Adam step (projected gradient descent, the first version) left the same MLP at 14.5 units and Spearman 0.645;
trained as coefficients it reaches 8.8 units and 0.768, as good as the numbers themselves (docs/planning.md).
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
def _fit(group: OrdinalGroup) -> torch.Tensor:
    """(k, size) the least-squares coefficients of the group's basis for its rows, made once per group."""
    return torch.linalg.pinv(group.basis())


@cache
def _projector(group: OrdinalGroup) -> torch.Tensor:
    """(size, size) the orthogonal projection onto the group's basis, made once per group."""
    return group.basis() @ _fit(group)


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


class ValueLinearRows(torch.nn.Module):
    """A `torch.nn.utils.parametrize` parametrization of an embedding table whose group rows are `basis @ coef`:
    the optimizer trains each group's coefficients (a, b: 2 x hidden; an angle's a, b, c) directly, so every
    occurrence of any of a group's bins moves the same two vectors. The other rows stay free."""

    def __init__(self, groups: list[OrdinalGroup]) -> None:
        super().__init__()
        self.groups = list(groups)
        self._bases: dict[tuple[torch.dtype, torch.device], list[torch.Tensor]] = {}  # not state: made from groups

    def forward(self, free: torch.Tensor, *coefs: torch.Tensor) -> torch.Tensor:
        key = (free.dtype, free.device)
        if key not in self._bases:
            self._bases[key] = [g.basis().to(dtype=free.dtype, device=free.device) for g in self.groups]
        table = free.clone()
        for group, basis, coef in zip(self.groups, self._bases[key], coefs):
            table[group.start : group.start + group.size] = basis @ coef.to(free.dtype)
        return table

    def right_inverse(self, table: torch.Tensor) -> tuple[torch.Tensor, ...]:
        coefs = [(_fit(g) @ table[g.start : g.start + g.size].double()).to(table.dtype) for g in self.groups]
        return (table, *coefs)


def parametrise_ordinal(model: torch.nn.Module, groups: list[OrdinalGroup]) -> None:
    """Train the input embedding table of `model` (a `transformers` model, or an `nn.Embedding` itself) as
    `ValueLinearRows` (in place): its group rows start as their least-squares fit (what `project_ordinal` gives) and
    stay linear in the value by construction."""
    from torch.nn.utils import parametrize

    embeddings = model if isinstance(model, torch.nn.Embedding) else model.get_input_embeddings()
    check_groups(groups, input_embedding_weight(model).shape[0] if embeddings is not model else model.num_embeddings)
    if parametrize.is_parametrized(embeddings, "weight"):
        raise ValueError("the input embedding table is already parametrised")
    parametrize.register_parametrization(embeddings, "weight", ValueLinearRows(groups))


def plain_state_dict(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """`model.state_dict()` with every parametrised table written as the plain tensor it computes (the keys a
    model without parametrizations has), so a checkpoint loads anywhere."""
    from torch.nn.utils import parametrize

    state = model.state_dict()
    for name, module in model.named_modules():
        if not parametrize.is_parametrized(module):
            continue
        prefix = f"{name}." if name else ""
        for tensor_name in list(module.parametrizations.keys()):
            for key in [k for k in state if k.startswith(f"{prefix}parametrizations.{tensor_name}.")]:
                del state[key]
            state[f"{prefix}{tensor_name}"] = getattr(module, tensor_name).detach()
    return state


def input_embedding_weight(model: torch.nn.Module) -> torch.Tensor:
    """The input embedding table of a `transformers` model (LoRA-wrapped or not)."""
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    if embeddings is None or not isinstance(getattr(embeddings, "weight", None), torch.Tensor):
        raise ValueError(f"{type(model).__name__} has no input embedding table to constrain")
    return embeddings.weight


__all__ = ["OrdinalGroup", "ValueLinearRows", "check_groups", "input_embedding_weight", "parametrise_ordinal",
           "plain_state_dict", "project_ordinal"]
