"""What the rules that rescan joined pieces share: wrapped lines (`_wrapped.py`) and string
literals that code joins (`_concat.py`).

Both find pieces of text that belong together, join them, scan the joined text with the same
chain one level deeper (personal data off: a rescan looks for secrets split in pieces), and
keep the inner matches that cross from one piece into the next. `JoinedPiecesRule` holds the
attributes such a rule has in the chain; `scan_joined` does the join and the scan.

Risky part: the rescan is recursive; `depth` stops it at one level (a joined text is never
joined again).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._scanner import Candidate, View

__all__ = ["JoinedPiecesRule", "scan_joined"]


class JoinedPiecesRule:
    """A chain step that rescans joined pieces; its candidates carry the inner rules' ids.

    Sits after the plain rules, with the encodings: it rescans text with the same chain.
    """

    rule_id = ""
    description = ""
    trigger = ""
    reports = False
    """Its candidates carry the inner rules' ids; its own id is never reported."""
    pii = False

    def __init__(self, priority: int) -> None:
        self.priority = priority


def scan_joined(view: View, pieces: Sequence[tuple[int, int]]) -> tuple[list[int], list[Candidate]]:
    """Scan the text of `pieces` (spans of `view.text`) joined, one level deeper.

    Returns:
        The joined offsets where each piece ends, and the inner candidates in joined offsets.
    """
    text = view.text
    joined = "".join(text[a:b] for a, b in pieces)
    ends, at = [], 0
    for a, b in pieces:
        at += b - a
        ends.append(at)
    return ends, view.scanner.scan(joined, depth=view.depth + 1, pii=False)
