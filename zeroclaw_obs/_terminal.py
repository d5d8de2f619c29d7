"""Text bound for a terminal or a file: what a terminal must not interpret, and how any string
is encoded.

Two risks live here. Text a model or a tool chose (a tool name, an argument, a result, the
final answer) can carry escape sequences (cursor moves, screen clears, OSC 8 links, a title
change) and bidi controls that reorder what the operator reads; `printable` shows each of them
as the escape Python would write (`\\x1b`, `\\u202e`), so the terminal prints it instead of
obeying it. And a Python `str` can hold a lone surrogate (`\\ud800`) that no UTF-8 encoder
accepts: every stream and file the runtime writes uses `ENCODING_ERRORS` (`backslashreplace`),
which writes such a code point as the six characters `\\ud800`. The file stays valid UTF-8; in a
JSON string that is JSON's own escape, so a JSON reader gets the very same string back, and in
plain text (stdout, stderr, the metrics exposition) it is visible rather than fatal.
"""

from __future__ import annotations

import contextlib
import re
from typing import TextIO

__all__ = ["ENCODING", "ENCODING_ERRORS", "encodable", "printable", "survive_any_text"]

ENCODING = "utf-8"
ENCODING_ERRORS = "backslashreplace"
"""The error policy of every text stream and file: a lone surrogate becomes `\\udXXX`."""

# Every Cc character (C0, DEL, C1), the line and paragraph separators, the bidi marks,
# embeddings, overrides and isolates, and lone surrogates (which no terminal can print).
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_UNPRINTABLE_BUT_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return ascii(match.group())[1:-1]


def printable(text: str, *, keep_lines: bool = False) -> str:
    """`text` with terminal controls, bidi controls and lone surrogates shown as escapes.

    Args:
        text: any string, e.g. a model's final answer or a tool's name.
        keep_lines: keep `\\n` and `\\t` as they are (multi-line text such as an answer);
            `\\r`, which can overwrite what a line showed, is escaped either way.

    Returns:
        The text a terminal prints as it reads, character for character: `\\x1b[2J` for a
        screen clear, `\\u202e` for a right-to-left override.
    """
    pattern = _UNPRINTABLE_BUT_LINES if keep_lines else _UNPRINTABLE
    return pattern.sub(_escape, text)


def encodable(text: str) -> str:
    """`text` with each lone surrogate written as `\\udXXX`, so it encodes as UTF-8.

    The same policy as `ENCODING_ERRORS`, for a string that leaves as bytes through an
    encoder the runtime does not open (a protobuf field, a Prometheus label value).
    """
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_escape, text)


def survive_any_text(stream: TextIO) -> None:
    """Make `stream` (stdout, stderr) write any string: `ENCODING_ERRORS` for what it cannot encode.

    A stream that cannot be reconfigured (a test's buffer, a closed stream) is left as it is.
    """
    with contextlib.suppress(AttributeError, ValueError, OSError):
        stream.reconfigure(errors=ENCODING_ERRORS)  # type: ignore[attr-defined]
