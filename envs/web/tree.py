"""WebArena-style tree text: item lines, item changes between two trees, and applying changes.

A tree is text with one node a line, `\t`-indented by depth: `[id] role 'name' prop: value`, optionally
under a header line such as `Tab 0 (current): Products / Shop Admin`. The line format and the answer
format (item changes, parsed and applied) belong to the web task's codec and live there,
`rlvr_sim.tasks.web`, where the world model decodes its answers; this module names them for the
collector, the policies and the evaluations.
"""

from rlvr_sim.tasks.web import (
    ITEM_LINE,
    ItemChanges,
    TreeLine,
    apply_changes,
    format_changes,
    item_changes,
    parse_changes,
    split_header,
)

__all__ = ["ITEM_LINE", "ItemChanges", "TreeLine", "apply_changes", "format_changes", "item_changes",
           "parse_changes", "split_header"]
