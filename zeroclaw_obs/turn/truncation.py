"""Bounding a result: redact the whole result first, then cut it to `max_tool_result_chars`.

LIFECYCLE §7 keeps the first 2/3 and the last 1/3 of the budget around the exact marker
`\\n\\n[... {n} characters truncated ...]\\n\\n`. Cutting first and redacting the pieces would leak:
a tail that starts right after `aws_secret_access_key = ` (or inside a PEM block) no longer
shows the redactor the context that makes its value a secret, and a token straddling the cut
leaves a half too short for any rule. So every text that leaves the engine is
`cut(redact(whole result))`; the cut may split a `[REDACTED:…]` marker, never a secret.

Risky part: cost. A result can be tens of megabytes and this runs once per call on the turn's
path. Up to `WHOLE_REDACTION_LIMIT` characters the whole result is redacted, exactly as above.
Beyond it only two windows are redacted: the head of the result and its tail, each reaching
`REDACTION_MARGIN` characters past what is kept (grown while the redactor shrinks them), so
every kept character was redacted with at least that much context on either side; the middle,
which is cut anyway, is never scanned. That is linear in the kept size plus one pass to
measure the middle, whatever the result's size.

What the counts mean (`ToolCall.truncated_chars` / `truncated_bytes`, the marker's `{n}`):
the characters, and their UTF-8 size, of the *redacted* result that the kept text leaves out,
so head + marker + tail always adds up against the text the surfaces show. On the windowed
path the unscanned middle counts at its raw size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..redaction import Redactor

__all__ = [
    "REDACTION_MARGIN",
    "TRUNCATION_MARKER",
    "WHOLE_REDACTION_LIMIT",
    "BoundedResult",
    "bound_result",
    "truncate",
    "truncated_bytes",
]

TRUNCATION_MARKER = "\n\n[... {n} characters truncated ...]\n\n"

WHOLE_REDACTION_LIMIT = 1_000_000
"""Results up to this many characters are redacted whole before the cut (exact)."""

REDACTION_MARGIN = 65_536
"""Context redacted beyond each kept piece of a larger result: longer than any PEM key, so a
`BEGIN` line or a `key = ` before the cut is always seen with its value."""


def truncate(text: str, max_chars: int) -> tuple[str, int]:
    """Keep the first 2/3 and the last 1/3 of `max_chars`; return the text and chars dropped.

    `max_chars == 0` disables truncation. This cuts `text` as it is: callers that show the
    result outside the engine use `bound_result`, which redacts first.
    """
    if max_chars <= 0 or len(text) <= max_chars:
        return text, 0
    head, tail = _split(max_chars)
    dropped = len(text) - max_chars
    end = text[len(text) - tail :] if tail else ""
    return text[:head] + TRUNCATION_MARKER.format(n=dropped) + end, dropped


def truncated_bytes(original: str, kept: str, dropped: int) -> int:
    """The UTF-8 size of what `truncate` cut from `original`; `kept` is its output."""
    if not dropped:
        return 0
    marker = TRUNCATION_MARKER.format(n=dropped)
    return _utf8_size(original) - (_utf8_size(kept) - _utf8_size(marker))


@dataclass(slots=True)
class BoundedResult:
    """A result redacted, then cut: the one text every outward surface shows."""

    text: str
    """`cut(redact(result))`, with the marker when something was cut."""
    counts: dict[str, int] = field(default_factory=dict)
    """Redactions by rule over the redacted part of the result (`redact_text_report`)."""
    dropped_chars: int = 0
    """Characters of the redacted result left out (the marker's `{n}`); 0 when not cut."""
    dropped_bytes: int = 0
    """The UTF-8 size of those characters."""


def bound_result(text: str, max_chars: int, redactor: Redactor) -> BoundedResult:
    """Redact `text` as a whole, then cut it to `max_chars` (0: never cut).

    Results longer than `WHOLE_REDACTION_LIMIT` (and longer than the budget plus two
    margins) are redacted as two windows instead; see the module docstring.
    """
    if max_chars <= 0 or len(text) <= max(WHOLE_REDACTION_LIMIT, max_chars + 4 * REDACTION_MARGIN):
        redacted, counts = redactor.redact_text_report(text)
        kept, dropped = truncate(redacted, max_chars)
        return BoundedResult(kept, counts, dropped, truncated_bytes(redacted, kept, dropped))
    return _bound_windows(text, max_chars, redactor)


def _bound_windows(text: str, max_chars: int, redactor: Redactor) -> BoundedResult:
    head, tail = _split(max_chars)
    head_text, head_size, counts = _redact_head(text, head, redactor)
    tail_text, tail_size, tail_counts = _redact_tail(text, tail, redactor)
    if head_size + tail_size >= len(text):
        # The windows met (the redactor shrank the result to less than its budget, or
        # nearly): the whole result has been seen, so redact it whole and stay exact.
        redacted, counts = redactor.redact_text_report(text)
        kept, dropped = truncate(redacted, max_chars)
        return BoundedResult(kept, counts, dropped, truncated_bytes(redacted, kept, dropped))
    counts = dict(counts)
    for rule, count in tail_counts.items():
        counts[rule] = counts.get(rule, 0) + count
    middle = text[head_size : len(text) - tail_size]
    kept_head = head_text[:head]
    kept_tail = tail_text[len(tail_text) - tail :] if tail else ""
    dropped = (len(head_text) - head) + len(middle) + (len(tail_text) - len(kept_tail))
    dropped_bytes = (
        _utf8_size(head_text[head:])
        + _utf8_size(middle)
        + _utf8_size(tail_text[: len(tail_text) - len(kept_tail)])
    )
    kept = kept_head + TRUNCATION_MARKER.format(n=dropped) + kept_tail
    return BoundedResult(kept, counts, dropped, dropped_bytes)


def _redact_head(text: str, keep: int, redactor: Redactor) -> tuple[str, int, dict[str, int]]:
    """Redact a prefix long enough that `keep` redacted characters sit a margin from its end."""
    size = keep + REDACTION_MARGIN
    while True:
        size = min(size, len(text))
        redacted, counts = redactor.redact_text_report(text[:size])
        if size == len(text) or len(redacted) >= keep + REDACTION_MARGIN:
            return redacted, size, counts
        size *= 2


def _redact_tail(text: str, keep: int, redactor: Redactor) -> tuple[str, int, dict[str, int]]:
    """Redact a suffix long enough that `keep` redacted characters sit a margin from its start."""
    size = keep + REDACTION_MARGIN
    while True:
        size = min(size, len(text))
        redacted, counts = redactor.redact_text_report(text[len(text) - size :])
        if size == len(text) or len(redacted) >= keep + REDACTION_MARGIN:
            return redacted, size, counts
        size *= 2


def _split(max_chars: int) -> tuple[int, int]:
    head = max_chars * 2 // 3
    return head, max_chars - head


def _utf8_size(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))
