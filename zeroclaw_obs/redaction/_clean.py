"""What the redactor is known to leave unchanged: bounded memories of clean strings.

Two memories, both `KnownTexts`:
- each `Redactor` remembers the texts it returned (`Redactor.is_output`): it is idempotent, so
  redacting one of them again would return it unchanged. Texts the engine builds only from
  redacted parts are added on purpose (`Redactor.mark_clean`, e.g. the arguments JSON encoded
  from redacted arguments);
- a `CleanTextCache` in front of the redactor remembers strings a surface found unchanged.
The span export guard and the log chain share one `CleanTextCache`, so a string one surface
scanned is not scanned again by the other, and a text the engine already redacted (a result,
the arguments, a call id) is scanned by neither. Only redactor outputs and strings that came
out unchanged are kept, so no secret is ever held here.
"""

from __future__ import annotations

import re
from typing import Protocol

__all__ = ["CleanTextCache", "KnownTexts"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A string holding one cannot be encoded as UTF-8: it is never remembered as clean (the
surfaces must see it to escape it). Checked here so the package stays a leaf."""


class KnownTexts:
    """A bounded set of strings, kept in two generations.

    When the young generation reaches a bound (entries or characters) it becomes the old one
    and the previous old one is dropped, so a string stays known for at least one generation,
    and one found in the old generation is carried into the young one. Memory is therefore at
    most two generations: `2 * max_entries` strings and `2 * max_chars` characters, however
    long the turn or the process. Strings longer than `max_length` and strings holding a lone
    surrogate are never kept.

    Every operation is a single set or attribute operation, safe under the GIL from several
    threads; a race can only forget a string, never make one known.

    Args:
        max_entries: strings per generation.
        max_length: longer strings are never kept.
        max_chars: characters per generation.
    """

    __slots__ = ("_chars", "_max_chars", "_max_entries", "_max_length", "_old", "_young")

    def __init__(
        self, *, max_entries: int = 4096, max_length: int = 16384, max_chars: int = 1 << 20
    ) -> None:
        self._young: set[str] = set()
        self._old: set[str] = set()
        self._chars = 0
        self._max_entries = max_entries
        self._max_length = max_length
        self._max_chars = max_chars

    def __contains__(self, s: object) -> bool:
        if s in self._young:
            return True
        if s in self._old:
            self.add(s)  # type: ignore[arg-type]  # still in use: carry it into the young one
            return True
        return False

    @property
    def young(self) -> set[str]:
        """The young generation itself: a quick first look (a C set lookup) for a hot loop;
        a string not in it may still be known (`in`)."""
        return self._young

    def __len__(self) -> int:
        return len(self._young) + len(self._old)

    @property
    def chars(self) -> int:
        """Characters held, both generations (an upper bound: a carried string counts twice)."""
        return self._chars + sum(map(len, self._old))

    def add(self, s: str) -> None:
        """Keep `s` (unless it is too long or holds a lone surrogate)."""
        size = len(s)
        if size > self._max_length or (not s.isascii() and _LONE_SURROGATE.search(s)):
            return
        if len(self._young) >= self._max_entries or self._chars + size > self._max_chars:
            # The bound: new sets, never cleared in place, so a reader on another thread
            # always holds a whole one.
            self._old, self._young, self._chars = self._young, set(), 0
        self._young.add(s)
        self._chars += size


class _TextRedactor(Protocol):
    def redact_text(self, s: str) -> str: ...


class CleanTextCache:
    """Remembers strings the redactor left unchanged, so each is scanned once.

    Span names, ids, tool names, models and outcomes repeat on every span and log line, and
    content can repeat (the same result on many spans, arguments on a span and on two log
    lines); without this each costs a full scan every time. Only strings that came out
    *unchanged* are kept, so no secret is ever held here; a string with a secret is scanned
    every time. The redactor is deterministic, so a remembered answer is the answer.

    With a redactor that remembers its own outputs (`Redactor.outputs`) that memory is this
    cache's (one per redactor, its bounds): a text the redactor returned, or one the engine
    marked as built from its outputs (`Redactor.mark_clean`), is clean without a scan, since
    the redactor is idempotent. Only the very string is skipped (equal text), never a text
    that merely contains one. Otherwise (any other `redact_text`) the cache keeps its own
    memory with the bounds given here.

    One instance may serve several surfaces and threads (the log processor, the span guard
    on the export thread): a string scanned by one is not scanned again by the other.

    Args:
        redactor: the runtime's one `Redactor`.
        max_entries: strings per generation (see `KnownTexts`); this and the next two apply
            to the cache's own memory, not to a redactor's.
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
        outputs = getattr(redactor, "outputs", None)
        # A redactor that remembers its outputs also remembers every text it left unchanged
        # (it returned it): its memory is this cache's, one per redactor.
        self._shared = isinstance(outputs, KnownTexts)
        self._known: KnownTexts = (
            outputs
            if isinstance(outputs, KnownTexts)
            else KnownTexts(max_entries=max_entries, max_length=max_length, max_chars=max_chars)
        )

    @property
    def young(self) -> set[str]:
        """The memory's young generation: `s in cache.young` is a quick first look for a hot
        loop (most known strings are there); a miss must still ask `is_clean`."""
        return self._known.young

    def redact_text(self, s: str) -> str:
        """`redactor.redact_text(s)`, answered from memory when `s` is known to be clean."""
        if self.is_clean(s):
            return s
        redacted = self._redact(s)
        if redacted == s and not self._shared:
            self._known.add(s)
        return redacted

    def unchanged(self, s: str) -> bool:
        """Whether the redactor leaves `s` as it is and it encodes as UTF-8 (asked once, then
        answered from memory): a string with a lone surrogate is never unchanged."""
        if self.is_clean(s):
            return True
        if self._redact(s) == s and (s.isascii() or _LONE_SURROGATE.search(s) is None):
            if not self._shared:
                self._known.add(s)
            return True
        return False

    def is_clean(self, s: str) -> bool:
        """Whether `s` is remembered as a string the redactor leaves unchanged: one found
        unchanged here, or one of the redactor's own outputs (never with a lone surrogate)."""
        return s in self._known
