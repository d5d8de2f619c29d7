"""A text rule as data (`Spec`), and what its check sees and answers (`Hit`, `Check`).

Rules are written as `Spec` values (`_tokens.py`, `_rules.py`, …) and turned into running
rules by `_chain.py`; the scanner (`_scanner.py`) runs them. Kept apart from the scanner so a
rule module reads as data, with nothing of the scan around it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["LEAD", "LOOK_INSIDE", "RECEIPT", "Check", "Hit", "Spec", "run_start"]

LEAD = r"(?:^|[^A-Za-z0-9]|\\[nrt])"
"""What may come right before a token (`Spec.lead`): the text's start, any character but a
letter or digit, or a JSON escape (`\\n`, `\\r`, `\\t`), so `"…\\nghp_…"` holds a token."""

RECEIPT = r"zc-receipt-[0-9]{1,20}-[A-Za-z0-9_-]{43}"
"""A receipt, as the scanner finds it to blank it out before the rules run."""


def run_start(inside: str) -> str:
    """Where a trigger may start for a rule that accepts a match only where a run of the
    characters `inside` (a class body, without `]`) starts: the text's start, a character
    outside the run, or the end of a receipt. The scanner blanks receipts out before the
    rules read the text, so a run may start right after one there though not in the text
    the gate reads; a marker ends with `]`, outside every such run."""
    return rf"(?:^|[^{inside}]|{RECEIPT})"


class Hit(NamedTuple):
    """One match of a rule, as its check sees it (offsets into `text`)."""

    text: str
    start: int
    end: int
    match_start: int
    match_end: int
    key: str | None


Check = Callable[[Hit], "tuple[int, int] | None"]
"""Accepts a hit (returning the span to replace, possibly trimmed or extended) or refuses it
(None, or `LOOK_INSIDE`)."""

LOOK_INSIDE = (-1, -1)
"""What a check returns to refuse a value whose inside the rule should read on its own: a
`HeadValueRule` then searches on from the end of the head, not after the value (a credential
document under a sensitive key names its own secrets). Once per value: a head found inside
it that answers the same is refused, which keeps the search linear."""


@dataclass(frozen=True, slots=True)
class Spec:
    """A text rule as data: what it finds, how it is triggered, how a match is checked."""

    rule_id: str
    description: str
    pattern: str
    trigger: str
    """A pattern that matches wherever `pattern` does, or at least wherever the rule accepts
    a match (a boundary its check requires: `run_start`): a necessary condition, cheap for
    a DFA."""
    secret: tuple[int, ...] = (1,)
    """Groups that hold the secret; the first one that took part in the match is replaced."""
    key: tuple[int, ...] = ()
    """Groups holding a key name; the first that took part is passed to `check` as `Hit.key`."""
    check: Check | None = None
    pii: bool = False
    not_after: str = ""
    """Characters that must not come right before the secret (a token starts a run)."""
    lead: bool = False
    """`pattern` starts with `LEAD`: the boundary it matches before the token is skipped."""
    values: Mapping[str, str] | None = None
    """Two-phase matching (see `HeadValueRule`): `pattern` is a head ending where the value
    starts, its group `secret[0]` holds the opening quote, and the value's extent is the
    match of `values[opening]` anchored there (`"\\"` stands for any escaped quote)."""
    blocks: tuple[str, str] | None = None
    """`pattern` is `block_pattern(*blocks)`, found in pieces by `PemBlockRule` (`_pem.py`)."""
