"""Item changes between trees, the three-section format, and applying predicted changes."""

import pytest
from rlvr_sim.envs.web.tree import (
    ItemChanges,
    apply_changes,
    format_changes,
    item_changes,
    parse_changes,
    split_header,
)

BEFORE = """Tab 0 (current): Products / Shop Admin

[1] RootWebArea 'Products / Shop Admin' focused: True
\t[2] navigation 'Main'
\t\t[3] link 'Dashboard'
\t[8] main ''
\t\t[9] heading 'Products'
\t\t[13] link 'Blue Mug'
\t\t[14] StaticText ' $8.50 stock 40'
\t\t[23] StaticText 'Page 1 of 3'"""

AFTER = """Tab 0 (current): Blue Mug / Shop Admin

[1] RootWebArea 'Blue Mug / Shop Admin' focused: True
\t[2] navigation 'Main'
\t\t[3] link 'Dashboard'
\t[8] main ''
\t\t[9] heading 'Blue Mug'
\t\t[10] StaticText 'Category: Kitchen'
\t\t[13] link 'Blue Mug'
\t\t[30] button 'Save'"""


def test_item_changes_by_id():
    changes = item_changes(BEFORE, AFTER)
    assert changes.new == ["[10] StaticText 'Category: Kitchen'", "[30] button 'Save'"]
    assert changes.deleted == ["[14] StaticText ' $8.50 stock 40'", "[23] StaticText 'Page 1 of 3'"]
    assert changes.updated == ["[1] RootWebArea 'Blue Mug / Shop Admin' focused: True", "[9] heading 'Blue Mug'"]
    assert item_changes(BEFORE, BEFORE).is_empty()


def test_format_parse_apply_round_trip():
    gold = format_changes(item_changes(BEFORE, AFTER))
    assert gold.startswith("New items:\n[10]") and "\n\nDeleted items:\n" in gold
    parsed, dropped = parse_changes(gold)
    assert dropped == 0
    assert apply_changes(BEFORE, parsed) == AFTER
    assert format_changes(ItemChanges()) == "New items:\nNone\n\nDeleted items:\nNone\n\nUpdated items:\nNone"


def test_parse_changes_drops_non_item_lines_and_rejects_headerless_text():
    changes, dropped = parse_changes("New items:\n[5] link 'x'\ngarbage line\nDeleted items:\nNone\nUpdated items:\n")
    assert changes.new == ["[5] link 'x'"] and dropped == 1
    with pytest.raises(ValueError, match="section"):
        parse_changes("nothing useful")


def test_apply_update_for_unknown_id_inserts_and_keeps_order():
    tree = apply_changes(BEFORE, ItemChanges(updated=["[20] link 'Next page'"], new=["[9] heading 'Changed'"]))
    _, lines = split_header(tree)
    ids = [line.node_id for line in lines]
    assert ids == sorted(ids) and 20 in ids
    assert "[9] heading 'Changed'" in tree and "[9] heading 'Products'" not in tree


def test_accessible_names_are_trimmed_whatever_the_chromium_version():
    """Chromium 150 names `<label>Stock <input></label>` 'Stock ' where 156 names it 'Stock' (accname 1.2 trims
    and collapses whitespace). The flattener does it itself, so the tree, the policy's label matching and the
    world model's prompts do not depend on the browser build; text nodes keep their own spacing."""
    from rlvr_sim.envs.web.accessibility import TreeFlattener

    def node(node_id, role, name, children=(), parent=None):
        return {"nodeId": node_id, "role": {"value": role}, "name": {"value": name}, "childIds": list(children),
                **({"parentId": parent} if parent else {}), "backendDOMNodeId": int(node_id) + 100}

    nodes = [node("1", "RootWebArea", "Desk Lamp", ["2", "3", "4"]),
             node("2", "StaticText", "Stock ", parent="1"),
             node("3", "textbox", "  Stock \n", parent="1"),
             node("4", "button", "Delete   product", parent="1")]
    tree = TreeFlattener().flatten(nodes, title="Desk Lamp")
    assert "textbox 'Stock'" in tree and "button 'Delete product'" in tree and "StaticText 'Stock '" in tree
