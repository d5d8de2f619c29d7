"""Redaction: the one `Redactor` every outward surface uses (DESIGN.md §2).

A leaf package: it imports nothing of zeroclaw-obs. Replacement text is
`[REDACTED:<rule_id>]`, never any part of the secret.
"""

from __future__ import annotations

from ._redactor import MAX_DEPTH, RedactionConfigError, Redactor
from ._rules import DEFAULT_RULE_IDS, DEFAULT_SENSITIVE_KEYS, SENSITIVE_KEY_RULE_ID

__all__ = [
    "DEFAULT_RULE_IDS",
    "DEFAULT_SENSITIVE_KEYS",
    "MAX_DEPTH",
    "SENSITIVE_KEY_RULE_ID",
    "RedactionConfigError",
    "Redactor",
]
