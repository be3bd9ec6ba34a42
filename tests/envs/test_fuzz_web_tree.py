"""Fuzz the accessibility-tree reader: trees come from a browser or a model, answers from a model.

`item_changes` reads any text; `parse_changes` raises ValueError only for an answer without sections;
`apply_changes` raises ValueError only for an item that is not an `[id] ...` line. On well-formed trees,
the gold changes between two trees, formatted and parsed back, rebuild the second tree's items.
"""

from hypothesis import given
from hypothesis import strategies as st
from rlvr_sim.envs.web.tree import ItemChanges, apply_changes, format_changes, item_changes, parse_changes

from rlvr_sim.tasks.web import split_header

names = st.text(st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=8).map(str.strip)


@st.composite
def trees(draw: st.DrawFn) -> str:
    """A WebArena-style tree: a tab header, then unique-id `[id] role 'name'` lines at any depth."""
    ids = draw(st.lists(st.integers(1, 60), unique=True, min_size=1, max_size=8))
    lines = [f"[{ids[0]}] RootWebArea '{draw(names)}' focused: True"]
    for node_id in ids[1:]:
        depth = draw(st.integers(1, 3))
        role = draw(st.sampled_from(["link", "button", "StaticText", "textbox"]))
        lines.append("\t" * depth + f"[{node_id}] {role} '{draw(names)}'" + draw(st.sampled_from(["", " focused: True"])))
    header = draw(st.sampled_from(["", f"Tab 0 (current): {draw(names)}\n\n"]))
    return header + "\n".join(lines)


any_text = st.text(max_size=200)


def _items(tree: str) -> dict[int, str]:
    return {line.node_id: line.text for line in split_header(tree)[1]}


@given(trees(), trees())
def test_gold_changes_rebuild_the_next_tree(before: str, after: str) -> None:
    changes, dropped = parse_changes(format_changes(item_changes(before, after)))
    assert dropped == 0
    assert _items(apply_changes(before, changes)) == _items(after)


@given(any_text | trees(), any_text | trees())
def test_item_changes_reads_any_text(before: str, after: str) -> None:
    changes = item_changes(before, after)
    assert isinstance(changes, ItemChanges)
    assert not item_changes(before, before).updated


@given(trees() | any_text, any_text | st.builds(format_changes, st.builds(
    ItemChanges, st.lists(any_text, max_size=3), st.lists(any_text, max_size=3), st.lists(any_text, max_size=3))))
def test_parse_and_apply_raise_only_value_error(tree: str, answer: str) -> None:
    try:
        changes, dropped = parse_changes(answer)
    except ValueError as error:
        assert "no 'New items:'" in str(error)
        return
    # what was kept is a whole answer of item lines: it reads back unchanged, with nothing dropped
    assert parse_changes(format_changes(changes)) == (changes, 0)
    # only lines of the answer are dropped, and a kept line is never counted as dropped
    kept = len(changes.new) + len(changes.deleted) + len(changes.updated)
    assert dropped + kept <= len(answer.splitlines())
    result = apply_changes(tree, changes)
    assert isinstance(result, str)


@given(trees() | any_text, st.lists(any_text, min_size=1, max_size=3))
def test_apply_changes_refuses_lines_that_are_not_items(tree: str, items: list[str]) -> None:
    try:
        apply_changes(tree, ItemChanges(new=items))
    except ValueError as error:
        assert "not a tree item line" in str(error)
