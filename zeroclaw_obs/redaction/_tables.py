"""Phone numbers known only by their column: CSV/TSV exports and SQL `INSERT … VALUES`.

A national number (`020 7946 0958`, `912 345 678`, `817/784-5377`) has no `+`, no label next
to it and no fixed grouping, so the `phone_number` rule cannot tell it from an order number.
In a table the label is there, once, in the header: `name,email,phone` above the rows, or
`INSERT INTO customers (id, email, phone) VALUES (…)`. `PhoneColumnRule` reads such a header,
finds the columns it names as phone numbers, and checks that field of every row with the
labelled reading of `is_phone` (7–15 digits in any grouping). The same reading serves
structured values: a string under a key such as `phone` or `mobile_number`
(`is_phone_key`).

Risky part: this parses tables without a parser. Fields are split on the header's delimiter
(`,`, `;`, tab or `|`) with double quotes honoured; a row with another number of fields ends
the table. Each line is read once: a header found inside rows already read is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator

from ._normalize import fold_key
from ._scanner import Candidate, View, compile_pattern
from ._validators import is_phone

__all__ = ["PhoneColumnRule", "is_phone_key", "is_phone_value"]

_PHONE_WORDS = frozenset({"phone", "mobile", "tel", "telephone", "cell", "fax", "msisdn"})
_PHONE_WORDS |= {"whatsapp", "cellphone", "telefon", "telefono"}
_PHONE_CHARS = frozenset("0123456789 ()+-./")
_DELIMITERS = ",;\t|"
_LABELS = r"phone|mobile|msisdn|telephone|tel|cell|fax|whatsapp"


def is_phone_key(key: str) -> bool:
    """Whether a key or column name labels a phone number (`phone`, `mobile_number`, `Tel`)."""
    return not _PHONE_WORDS.isdisjoint(fold_key(key).split("_"))


def is_phone_value(value: str) -> bool:
    """Whether a value under a phone label is a phone number: phone characters only, and
    7–15 digits (`is_phone` with context)."""
    value = value.strip()
    return bool(value) and _PHONE_CHARS.issuperset(value) and is_phone(value, context=True)


class PhoneColumnRule:
    """Replaces the phone numbers of a table's phone columns (`phone_number`).

    A personal-data rule: it runs with the others, last, and not when personal data is off.
    """

    rule_id = "phone_number"
    reports = True
    description = "phone numbers in table columns labelled as phones (CSV/TSV, SQL INSERT)"
    trigger = (
        rf"(?i:{_LABELS})(?:[ _-]?(?i:number|num|no))?[\"'`]?[ \t]*[,;\t|)\r\n]"
        rf"|(?:^|[\r\n,;\t|(])[ \t]*[\"'`]?(?i:{_LABELS})"
    )
    """A label beside a delimiter: a column name, not a word in prose. Literal shapes only:
    a run of letters before the label (`work_phone`) multiplies the gate's states on text
    full of commas (measured: the whole gate 40% slower on the dense mix)."""
    pii = True

    def __init__(self, priority: int) -> None:
        self.priority = priority
        # The trigger's shapes within one line: a line break ends the header, not a label.
        label = (
            rf"(?i:{_LABELS})(?:[ _-]?(?i:number|num|no))?[\"'`]?[ \t]*(?:[,;\t|)]|\r?$)"
            rf"|(?:^|[,;\t|(])[ \t]*[\"'`]?(?i:{_LABELS})"
        )
        self._header = compile_pattern(rf"(?m)^[^\r\n]*(?:{label})[^\r\n]*$")
        self._insert = compile_pattern(
            r"(?i)insert[ \t]+into[ \t]+[^\s(]{1,128}[ \t]*\(([^()\r\n]{1,1000})\)"
            r"[ \t\r\n]*values[ \t\r\n]*"
        )

    def find(self, view: View) -> list[Candidate]:
        """Candidates for the phone fields of every table in the view."""
        text, found, done = view.text, [], 0
        for spans in view.matches(self._header):
            start, end = spans[0]
            if start < done:
                continue  # a row of a table already read
            done = self._rows(text, start, end, found)
        if "insert" not in text and "INSERT" not in text and "Insert" not in text:
            return found
        done = 0
        for spans in view.matches(self._insert):
            if spans[0][0] < done:
                continue
            columns = list(_split(text, spans[1][0], spans[1][1], ","))
            wanted = {i for i, (a, b) in enumerate(columns) if _is_label(text[a:b])}
            done = spans[0][1]
            if wanted:
                done = self._tuples(text, done, len(columns), wanted, found)
        return found

    def _rows(self, text: str, start: int, end: int, found: list[Candidate]) -> int:
        """Read the rows under a header line `text[start:end]`; returns where reading stopped."""
        header = text[start:end].rstrip("\r")
        delimiter = max(_DELIMITERS, key=header.count)
        if header.count(delimiter) == 0:
            return end
        names = [text[a:b] for a, b in _split(text, start, start + len(header), delimiter)]
        wanted = {i for i, name in enumerate(names) if _is_label(name)}
        if not wanted:
            return end
        at = end + 1
        while at < len(text):
            stop = text.find("\n", at)
            stop = len(text) if stop < 0 else stop
            line_end = stop - 1 if stop > at and text[stop - 1] == "\r" else stop
            fields = list(_split(text, at, line_end, delimiter))
            if len(fields) != len(names):
                return at
            for i in wanted:
                span = _unquoted(text, *fields[i])
                if is_phone_value(text[span[0] : span[1]]):
                    found.append((span[0], span[1], self.priority, self.rule_id))
            at = stop + 1
        return len(text)

    def _tuples(
        self, text: str, at: int, width: int, wanted: set[int], found: list[Candidate]
    ) -> int:
        """Read `(…), (…)` after `VALUES`; returns where reading stopped."""
        size = len(text)
        while at < size and text[at] == "(":
            close = _closing(text, at + 1)
            if close < 0:
                return size
            fields = list(_split(text, at + 1, close, ","))
            if len(fields) == width:
                for i in wanted:
                    a, b = _unquoted(text, *fields[i], quotes="'")
                    if is_phone_value(text[a:b]):
                        found.append((a, b, self.priority, self.rule_id))
            at = close + 1
            while at < size and text[at] in " \t\r\n,":
                at += 1
        return at


def _is_label(name: str) -> bool:
    """Whether a raw column name is short and names a phone (`phone`, `work_phone`, `Tel`)."""
    name = name.strip(" \t\"'`[]")
    if not name or len(name) > _NAME_LIMIT:
        return False  # a longer field in a header-like line is prose
    low = name.lower()
    if not any(word in low for word in _PHONE_WORDS):
        return False
    return not _PHONE_WORDS.isdisjoint(fold_key(name).split("_"))


_NAME_LIMIT = 48


def _split(text: str, start: int, end: int, delimiter: str) -> Iterator[tuple[int, int]]:
    """The spans of the fields of `text[start:end]`, honouring double and single quotes that
    open a field."""
    field = start
    while True:
        stop = text.find(delimiter, field, end)
        stop = end if stop < 0 else stop
        opening = field
        while opening < stop and text[opening] in " \t":
            opening += 1
        quote = text[opening] if opening < end and text[opening] in "\"'" else ""
        if quote:  # a quoted field runs to its closing quote, delimiters inside included
            close = text.find(quote, opening + 1, end)
            stop = end if close < 0 else text.find(delimiter, close, end)
            stop = end if stop < 0 else stop
        yield field, stop
        if stop >= end:
            return
        field = stop + 1


def _unquoted(text: str, start: int, end: int, quotes: str = "\"'") -> tuple[int, int]:
    while start < end and text[start] in " \t":
        start += 1
    while end > start and text[end - 1] in " \t":
        end -= 1
    if end - start >= 2 and text[start] in quotes and text[end - 1] == text[start]:
        return start + 1, end - 1
    return start, end


def _closing(text: str, at: int) -> int:
    """The `)` that closes a SQL tuple opened before `at` (quotes honoured), or -1."""
    quote = ""
    while at < len(text):
        ch = text[at]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == ")":
            return at
        elif ch in "\r\n;(":
            return -1
        at += 1
    return -1
