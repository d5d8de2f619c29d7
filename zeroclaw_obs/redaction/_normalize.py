"""The shadow copy: text as the rules see it, with offsets back into the text as written.

Rules match on a folded *shadow* of the text, never on the text itself, so that a secret
cannot hide behind characters a person does not see or does not tell apart:

- invisible characters (zero-width space/joiners U+200B–U+200D, word joiner U+2060, BOM
  U+FEFF, soft hyphen U+00AD, bidi controls, variation selectors, tag characters) are deleted;
- full-width forms (U+FF01–U+FF5E), mathematical and letter-like alphanumerics and odd spaces
  become their ASCII twin (`ｐａｓｓｗｏｒｄ` → `password`);
- common homoglyphs (Cyrillic `а е о р с х`, Greek `ο α ρ`…) become the Latin letter they
  imitate (`pаssword` with a Cyrillic `а` → `password`).

Replacements are one character for one, so only deletions move offsets. `Folded` keeps the
shadow positions where characters were deleted and maps a span of the shadow back to the span
of the original text that holds it, deleted characters inside the span included: the marker
then replaces the zero-width characters along with the secret they were hiding.

Risky part: the fold is for matching only. What is replaced is always a span of the original
text, so nothing of the original (invisible characters included) leaks through a fold that is
too eager, and a fold that is too shy only loses a match.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_left, bisect_right

import re2

__all__ = ["Folded", "fold", "fold_key", "has_continuation", "utf8_safe"]

_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e"
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u3164\ufeff\uffa0"
    + "".join(chr(c) for c in range(0xFE00, 0xFE10))
    + "".join(chr(c) for c in range(0xE0000, 0xE0080))
    + "".join(chr(c) for c in range(0xE0100, 0xE01F0))
    + "".join(chr(c) for c in range(0x0300, 0x0370))
    + "".join(chr(c) for c in range(0x1AB0, 0x1B00))
    + "".join(chr(c) for c in range(0x1DC0, 0x1E00))
    + "".join(chr(c) for c in range(0x20D0, 0x2100))
    + "".join(chr(c) for c in range(0xFE20, 0xFE30))
)
"""Characters that render as nothing, or only as a mark on the letter before them (combining
marks: `passw\u0336ord`, `g\u0301hp_…`): deleted from the shadow."""

_HOMOGLYPHS = {
    # Cyrillic lower case, then upper case
    "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j",
    "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "ѕ": "s", "т": "t",
    "у": "y", "х": "x", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ɡ": "g",
    "А": "A", "В": "B", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M",
    "О": "O", "Р": "P", "С": "C", "Ѕ": "S", "Т": "T", "У": "Y", "Х": "X",
    # Greek lower case, then upper case
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "ω": "w",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin look-alikes
    "ı": "i", "ȷ": "j", "ℓ": "l", "ǀ": "l",
}  # fmt: skip

# NFKC folds these ranges to ASCII one character for one: full-width forms, mathematical
# alphanumerics, letter-like symbols, circled letters, and typographic spaces.
_NFKC_RANGES = (
    (0x00A0, 0x00A0),
    (0x2000, 0x200A),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x2100, 0x214F),
    (0x24B6, 0x24E9),
    (0x3000, 0x3000),
    (0xFF01, 0xFF5E),
    (0x1D400, 0x1D7FF),
)


def _fold_table() -> dict[int, int | None]:
    table: dict[int, int | None] = dict.fromkeys(map(ord, _INVISIBLE))
    for low, high in _NFKC_RANGES:
        for code in range(low, high + 1):
            folded = unicodedata.normalize("NFKC", chr(code))
            if len(folded) == 1 and folded.isascii() and folded.isprintable():
                table[code] = ord(folded)
    table.update((ord(k), ord(v)) for k, v in _HOMOGLYPHS.items())
    # Lone surrogates (from JSON `\ud800`) cannot be encoded for RE2; one for one to U+FFFD.
    table.update(dict.fromkeys(range(0xD800, 0xE000), 0xFFFD))
    return table


_TABLE = _fold_table()
# A line continuation: a backslash and a line break, or the same written in a JSON string
# (`\\\\\\n`: an escaped backslash, then an escaped newline). Right after a word, the
# indentation of the next line goes too: a token wrapped for display (`ghp_abc\\`, then
# `    def…`) reads whole. And the backslash of a JSON-escaped slash (`https:\/\/hooks…`,
# as PHP and many JSON writers emit URLs), so a URL's secret path reads as written.
# Linear: literals and fixed-width lookarounds.
# (The lookbehind comes after the backslash: first, it costs `re` its literal prefix scan.)
_CONTINUATION = re.compile(
    r"(?:\\\r?\n|\\\\\\(?:r\\)?n)(?:(?<=[^\s\\]\\\n)[ \t]+)?|\\(?=/)(?<!\\\\)"
)
_INVISIBLE_RUN = re2.compile("[" + "".join(_INVISIBLE) + "]")


def _class(codes: list[int]) -> str:
    """An RE2 character class of `codes` (sorted), as ranges of `\\x{…}` escapes."""
    parts: list[str] = []
    start = prev = codes[0]
    for code in [*codes[1:], -1]:
        if code != prev + 1:
            parts.append(f"\\x{{{start:x}}}" + (f"-\\x{{{prev:x}}}" if prev > start else ""))
            start = code
        prev = code
    return "[" + "".join(parts) + "]"


_FOLDABLE = re2.compile(_class(sorted(c for c in _TABLE if not 0xD800 <= c < 0xE000)))
"""Every character the fold changes or deletes, lone surrogates aside (RE2 cannot read them)."""
_DELETED = frozenset(_INVISIBLE)


class Folded:
    """A text and its shadow; maps shadow spans back to spans of the text.

    `gaps` holds, for each deleted character, the shadow index of the first kept character
    after it (ascending). With no deletions the shadow's offsets are the text's.
    """

    __slots__ = ("gaps", "shadow", "text")

    def __init__(self, text: str, shadow: str, gaps: list[int]) -> None:
        self.text = text
        self.shadow = shadow
        self.gaps = gaps

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that the shadow span `[start, end)` was folded from.

        Deleted characters strictly inside the span belong to it; those at its edges do not.
        """
        gaps = self.gaps
        if not gaps:
            return start, end
        return start + bisect_right(gaps, start), end + bisect_left(gaps, end)


def has_continuation(text: str) -> bool:
    """Whether `text` holds a line continuation (`\\` then a line break), raw or JSON-escaped,
    or a JSON-escaped slash (`\\/`): what `fold` deletes besides invisible characters."""
    return "\\" in text and _CONTINUATION.search(text) is not None


def fold(text: str) -> Folded:
    """Build the shadow of `text` (ASCII text is its own shadow, at the cost of one check).

    Line continuations are deleted too, so a token split by `\\`-newline (in a shell
    command, or the same command inside JSON) reads whole: `ghp_abc\\<newline>def…` is
    matched as `ghp_abcdef…` and its marker replaces both halves and the break between. So
    is the backslash of an escaped slash: `https:\\/\\/hooks.slack.com\\/services\\/…`
    reads as the URL it is.

    Args:
        text: any text.

    Returns:
        The `Folded` pair; `shadow is text` when nothing needed folding.
    """
    if "\\" in text:
        joins = [m.span() for m in _CONTINUATION.finditer(text)]
        if joins:
            return _fold_joined(text, joins)
    return _fold_chars(text)


def _fold_joined(text: str, joins: list[tuple[int, int]]) -> Folded:
    """`fold` for a text with line continuations at `joins` (sorted, disjoint spans)."""
    pieces: list[str] = []
    deleted: list[int] = []
    last = 0
    for start, end in joins:
        pieces.append(text[last:start])
        deleted.extend(range(start, end))
        last = end
    pieces.append(text[last:])
    if not text.isascii():
        deleted.extend(i for i, ch in enumerate(text) if ch in _DELETED)
        deleted.sort()
    shadow = "".join(pieces).translate(_TABLE)
    return Folded(text, shadow, [i - k for k, i in enumerate(deleted)])


def _fold_chars(text: str) -> Folded:
    """`fold` without line continuations: one character folded or deleted at a time."""
    if text.isascii():
        return Folded(text, text, [])
    if len(text) >= _SPARSE_FROM:
        folded = _fold_sparse(text)
        if folded is not None:
            return folded
    shadow = text.translate(_TABLE)
    if len(shadow) == len(text):
        return Folded(text, shadow, [])
    if (len(text) - len(shadow)) * 64 <= len(text):
        # Sparse deleted characters (the common case, even in a 50 MB text): one linear RE2
        # scan, far faster than a Python loop over every character. Lone surrogates become
        # `?` one for one, so offsets hold.
        found = _INVISIBLE_RUN.finditer(utf8_safe(text))
        gaps = [m.start() - k for k, m in enumerate(found)]
    else:
        gaps = _gaps(text)
    return Folded(text, shadow, gaps)


_SPARSE_FROM = 4096
"""Texts this long are folded by `_fold_sparse` first."""


def _fold_sparse(text: str) -> Folded | None:
    """`fold` for a long text in which few characters fold, or None when many do.

    `str.translate` looks every character up in a dict, some 60 ns each: 3 s for 50 MB of
    mostly ASCII text with a few accents. One linear RE2 pass finds the characters that
    fold, and only those are replaced. Past one in 64 (full-width text, say) the per-match
    cost of the RE2 wrapper outweighs that, and `str.translate` is used instead.
    """
    pieces: list[str] = []
    gaps: list[int] = []
    last = 0
    limit = len(text) // 64
    try:
        for n, found in enumerate(_FOLDABLE.finditer(text)):
            if n > limit:
                return None
            at = found.start()
            pieces.append(text[last:at])
            target = _TABLE[ord(text[at])]
            if target is None:
                gaps.append(at - len(gaps))
            else:
                pieces.append(chr(target))
            last = at + 1
    except UnicodeEncodeError:  # a lone surrogate: RE2 needs UTF-8
        return None
    pieces.append(text[last:])
    return Folded(text, "".join(pieces), gaps)


def _gaps(text: str) -> list[int]:
    """`Folded.gaps` by a plain loop: for dense deleted characters (RE2's per-match cost)."""
    return [i - k for k, i in enumerate(i for i, ch in enumerate(text) if ch in _DELETED)]


def utf8_safe(text: str) -> str:
    """`text` with lone surrogates replaced one for one by `?`, so that RE2 can read it."""
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode()
    return text


_KEY_TAIL = 96
"""Only the end of a key decides whether it is sensitive; longer keys are cut to this."""


@functools.lru_cache(maxsize=8192)
def fold_key(key: str) -> str:
    """Spell a key the way sensitive names are listed: folded, snake_case, lower case.

    `apiKey`, `API-Key`, `DBPassword`, `x-api-key`, `ｐａｓｓｗｏｒｄ` and `pass\u200bword`
    become `api_key`, `api_key`, `db_password`, `x_api_key`, `password`, `password`.

    Args:
        key: a key as the caller wrote it.

    Returns:
        The normalised key, without leading or trailing underscores. Results are cached
        (bounded): the same few key names come back on every tool call.
    """
    key = key[-_KEY_TAIL:]
    if not key.isascii():
        key = key.translate(_TABLE)
    out: list[str] = []
    previous = ""
    for i, ch in enumerate(key):
        if ch.isupper():
            following = key[i + 1 : i + 2]
            # A boundary before an upper-case letter that follows a lower-case letter or digit
            # (`apiKey`), or that starts a word after an acronym (`DBPassword`).
            if (
                previous.islower()
                or previous.isdigit()
                or (previous.isupper() and following.islower())
            ):
                out.append("_")
            out.append(ch.lower())
        elif ch.isalnum():
            out.append(ch.lower())
        else:
            out.append("_")
        previous = ch
    return "_".join(part for part in "".join(out).split("_") if part)
