"""Redaction: the one `Redactor` every outward surface uses (DESIGN.md §2).

A leaf package: it imports nothing of zeroclaw-obs. Replacement text is
`[REDACTED:<rule_id>]`, never any part of the secret. Matching runs on google-re2, so every
pattern is linear in its input (see `_scanner.py` for why and how).
"""

from __future__ import annotations

from ._chain import DEFAULT_RULE_IDS, RULES, RedactionConfigError
from ._clean import CleanTextCache, KnownTexts
from ._flat import RUNTIME_IDS, FlatRecordRedactor
from ._keys import DEFAULT_SENSITIVE_KEYS
from ._redactor import Redactor
from ._structured import MAX_DEPTH, SENSITIVE_KEY_RULE_ID

__all__ = [
    "DEFAULT_RULE_IDS",
    "DEFAULT_SENSITIVE_KEYS",
    "MAX_DEPTH",
    "RULES",
    "RUNTIME_IDS",
    "SENSITIVE_KEY_RULE_ID",
    "CleanTextCache",
    "FlatRecordRedactor",
    "KnownTexts",
    "RedactionConfigError",
    "Redactor",
]
