"""What the redactor is known to leave unchanged: a bounded memory of clean strings.

The span export guard and the log chain share one `CleanTextCache`, so a string one surface
scanned is not scanned again by the other; only strings that came out unchanged are kept, so
no secret is ever held here.
"""

from __future__ import annotations

import re
from typing import Protocol

__all__ = ["CleanTextCache"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A string holding one cannot be encoded as UTF-8: it is never remembered as clean (the
surfaces must see it to escape it). Checked here so the package stays a leaf."""


class _TextRedactor(Protocol):
    def redact_text(self, s: str) -> str: ...


class CleanTextCache:
    """Remembers strings the redactor left unchanged, so each is scanned once.

    Span names, ids, tool names, models and outcomes repeat on every span and log line, and
    content can repeat (the same result on many spans, arguments on a span and on two log
    lines); without this each costs a full scan every time. Only strings that came out
    *unchanged* are kept, so no secret is ever held here; a string with a secret is scanned
    every time. The redactor is deterministic, so a remembered answer is the answer.

    Strings are kept in two generations: when the young one reaches a bound it becomes the
    old one and the previous old one is dropped, so a string stays known for at least one
    generation and one still in use is carried over. One instance may serve several surfaces
    and threads (the log processor on the turn's path, the span guard on the export thread):
    a string scanned by one is not scanned again by the other. Every operation is a single
    set or attribute operation, so it is safe under the GIL; a race can only forget a string.

    Args:
        redactor: the runtime's one `Redactor`.
        max_entries: strings per generation.
        max_length: longer strings are never remembered.
        max_chars: characters per generation.
    """

    def __init__(
        self,
        redactor: _TextRedactor,
        *,
        max_entries: int = 4096,
        max_length: int = 16384,
        max_chars: int = 1 << 20,
    ) -> None:
        self._redact = redactor.redact_text
        self._young: set[str] = set()
        self._old: set[str] = set()
        self._chars = 0
        self._max_entries = max_entries
        self._max_length = max_length
        self._max_chars = max_chars

    def redact_text(self, s: str) -> str:
        """`redactor.redact_text(s)`, answered from memory when `s` is known to be clean."""
        if self.is_clean(s):
            return s
        redacted = self._redact(s)
        if redacted == s:
            self._remember(s)
        return redacted

    def unchanged(self, s: str) -> bool:
        """Whether the redactor leaves `s` as it is and it encodes as UTF-8 (asked once, then
        answered from memory): a string with a lone surrogate is never unchanged."""
        if self.is_clean(s):
            return True
        if self._redact(s) == s and (s.isascii() or _LONE_SURROGATE.search(s) is None):
            self._remember(s)
            return True
        return False

    def is_clean(self, s: str) -> bool:
        """Whether `s` is remembered as a string the redactor leaves unchanged."""
        if s in self._young:
            return True
        if s in self._old:
            self._remember(s)  # still in use: carry it into the young generation
            return True
        return False

    def _remember(self, s: str) -> None:
        """Keep `s` as clean: only ever a string the redactor returned unchanged, and never one
        holding a lone surrogate (the span steps must see it to escape it)."""
        size = len(s)
        if size > self._max_length or (not s.isascii() and _LONE_SURROGATE.search(s)):
            return
        if len(self._young) >= self._max_entries or self._chars + size > self._max_chars:
            # The bound: two generations at most; new sets, never cleared in place, so a
            # reader on another thread always holds a whole one.
            self._old, self._young, self._chars = self._young, set(), 0
        self._young.add(s)
        self._chars += size
