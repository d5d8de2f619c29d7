"""Values known by their column: CSV/TSV exports, Markdown tables and SQL `INSERT … VALUES`.

A national number (`020 7946 0958`, `912 345 678`, `817/784-5377`) has no `+`, no label next
to it and no fixed grouping, so the `phone_number` rule cannot tell it from an order number.
In a table the label is there, once, in the header: `name,email,phone` above the rows, or
`INSERT INTO customers (id, email, phone) VALUES (…)`. `PiiColumnRule` reads such a header,
finds the columns it names as phone numbers, and checks that field of every row with the
labelled reading of `is_phone` (7–15 digits in any grouping). The same reading serves
structured values: a string under a key such as `phone` or `mobile_number`
(`is_phone_key`).

The same reading finds undashed SSNs in an `ssn` column (`PiiColumnRule` too) and the values
of a column named by a sensitive key (`SecretColumnRule`: `| Service | User | Password |`,
`name,api_token`, `INSERT INTO … (name, api_key)`).

Risky part: this parses tables without a parser. Fields are split on the header's delimiter
(`,`, `;`, tab or `|`) with double quotes honoured; a row with another number of fields ends
the table. Each line is read once: a header found inside rows already read is skipped.
"""

from __future__ import annotations

from collections.abc import Container, Iterator

from ._normalize import fold_key
from ._scanner import Candidate, View, compile_pattern
from ._validators import is_phone, is_placeholder, is_ssn

__all__ = [
    "PiiColumnRule",
    "SecretColumnRule",
    "is_phone_key",
    "is_phone_value",
]

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


class _ColumnRule:
    """Replaces the fields of a table's labelled columns: the reading every column rule shares.

    A subclass says which column names it wants and under which rule id (`_wanted`), which
    field values it takes for that id (`_takes`), and gives the trigger and the label
    alternation of its header pattern.
    """

    rule_id = ""
    reports = True
    description = ""
    trigger = ""
    pii = False
    _labels = ""
    _quotes_sql = "'"
    _names_only = False
    _header_leading = True
    """A header label may also start a field (`phone_number`), not only end one."""
    """Read a header only when every field of it is a column name (`_is_column_name`), not
    code (`def f(password: str, hashed: bytes)`) or prose that happens to hold delimiters."""

    def __init__(self, priority: int) -> None:
        self.priority = priority
        # The trigger's shapes within one line: a line break ends the header, not a label.
        label = rf"(?i:{self._labels})[\"'`*]{{0,2}}[ \t]*(?:[,;\t|)]|\r?$)"
        if self._header_leading:
            label += rf"|(?:^|[,;\t|(])[ \t]*[\"'`]?(?i:{self._labels})"
        self._header = compile_pattern(rf"(?m)^[^\r\n]*(?:{label})[^\r\n]*$")
        self._insert = compile_pattern(
            r"(?i)insert[ \t]+into[ \t]+[^\s(]{1,128}[ \t]*\(([^()\r\n]{1,1000})\)"
            r"[ \t\r\n]*values[ \t\r\n]*"
        )

    def _wanted(self, name: str) -> str | None:
        raise NotImplementedError

    def _takes(self, value: str, rule_id: str) -> bool:
        raise NotImplementedError

    def find(self, view: View) -> list[Candidate]:
        """Candidates for the labelled fields of every table in the view."""
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
            labels = (self._label(text[a:b]) for a, b in columns)
            wanted = {i: rule_id for i, rule_id in enumerate(labels) if rule_id}
            done = spans[0][1]
            if wanted:
                done = self._tuples(text, done, len(columns), wanted, found)
        return found

    def _label(self, name: str) -> str | None:
        """The rule id of a raw column name that is short and one this rule wants."""
        name = name.strip(" \t\"'`[]*")
        if not name or len(name) > _NAME_LIMIT:
            return None  # a longer field in a header-like line is prose
        return self._wanted(name)

    def _rows(self, text: str, start: int, end: int, found: list[Candidate]) -> int:
        """Read the rows under a header line `text[start:end]`; returns where reading stopped."""
        header = text[start:end].rstrip("\r")
        delimiter = max(_DELIMITERS, key=header.count)
        if header.count(delimiter) == 0:
            return end
        names = [text[a:b] for a, b in _split(text, start, start + len(header), delimiter)]
        labels = (self._label(name) for name in names)
        wanted = {i: rule_id for i, rule_id in enumerate(labels) if rule_id}
        if not wanted or (self._names_only and not all(map(_is_column_name, names))):
            return end
        at = end + 1
        while at < len(text):
            stop = text.find("\n", at)
            stop = len(text) if stop < 0 else stop
            line_end = stop - 1 if stop > at and text[stop - 1] == "\r" else stop
            fields = list(_split(text, at, line_end, delimiter))
            if len(fields) != len(names):
                return at
            for i, rule_id in wanted.items():
                span = _unquoted(text, *fields[i])
                if self._takes(text[span[0] : span[1]], rule_id):
                    found.append((span[0], span[1], self.priority, rule_id))
            at = stop + 1
        return len(text)

    def _tuples(
        self, text: str, at: int, width: int, wanted: dict[int, str], found: list[Candidate]
    ) -> int:
        """Read `(…), (…)` after `VALUES`; returns where reading stopped."""
        size = len(text)
        while at < size and text[at] == "(":
            close = _closing(text, at + 1)
            if close < 0:
                return size
            fields = list(_split(text, at + 1, close, ","))
            if len(fields) == width:
                for i, rule_id in wanted.items():
                    a, b = _unquoted(text, *fields[i], quotes=self._quotes_sql)
                    if self._takes(text[a:b], rule_id):
                        found.append((a, b, self.priority, rule_id))
            at = close + 1
            while at < size and text[at] in " \t\r\n,":
                at += 1
        return at


_SSN_LABELS = r"ssn|social[ _-]?security(?:[ _-]?(?:number|no|num))?"
_SSN_NAMES = frozenset({"ssn", "social_security", "social_security_number"})
_SSN_NAMES |= {"social_security_no", "social_security_num", "us_ssn"}
_SSN_CHARS = frozenset("0123456789- ")


class PiiColumnRule(_ColumnRule):
    """Replaces the phone numbers of a table's phone columns (`phone_number`) and the SSNs of
    its SSN columns (`us_ssn`): one rule, so the gate holds one trigger for both.

    Undashed, an SSN is nine digits like any other number; in a column named `ssn` it is one
    (checked with `is_ssn`: never-issued areas, groups and serials are refused). A
    personal-data rule: it runs with the others, last, and not when personal data is off.
    """

    rule_id = "phone_number"
    description = (
        "phone numbers and US social security numbers in table columns labelled as such "
        "(CSV/TSV, SQL INSERT)"
    )
    trigger = (
        rf"(?i:{_LABELS})(?:[ _-]?(?i:number|num|no))?[\"'`]?[ \t]*[,;\t|)\r\n]"
        rf"|(?:^|[\r\n,;\t|(])[ \t]*[\"'`]?(?i:{_LABELS})"
        rf"|(?i:{_SSN_LABELS})[\"'`]?[ \t]*[,;\t|)\r\n]"
    )
    """A label beside a delimiter: a column name, not a word in prose. Literal shapes only:
    a run of letters before the label (`work_phone`) multiplies the gate's states on text
    full of commas (measured: the whole gate 40% slower on the dense mix)."""
    pii = True
    _labels = rf"(?:{_LABELS})(?:[ _-]?(?:number|num|no))?|{_SSN_LABELS}"

    def _wanted(self, name: str) -> str | None:
        key = fold_key(name)
        if key in _SSN_NAMES or key.endswith("_ssn"):
            return "us_ssn"
        low = name.lower()
        if not any(word in low for word in _PHONE_WORDS):
            return None
        return None if _PHONE_WORDS.isdisjoint(key.split("_")) else "phone_number"

    def _takes(self, value: str, rule_id: str) -> bool:
        if rule_id == "phone_number":
            return is_phone_value(value)
        value = value.strip()
        return 9 <= len(value) <= 11 and _SSN_CHARS.issuperset(value) and is_ssn(value)


class SecretColumnRule(_ColumnRule):
    """Replaces the values of a table's credential columns (`key_value`): a CSV export, a
    Markdown table pasted into chat (`| Service | User | Password |`), an SQL `INSERT`
    naming `api_key`. A column is a credential column when its name is a sensitive key.

    A cell that describes rather than holds a value is kept: a lone word (`string`,
    `required`, `yes`), a placeholder or reference (`${DB_PASSWORD}`, `<token>`, `****`),
    a Markdown rule (`---`), a date or a count.
    """

    rule_id = "key_value"
    description = "values in table columns named by a sensitive key (CSV/TSV, Markdown, SQL)"
    _labels = (
        r"passw(?:or)?d|pwd|secret|token|credentials?|passphrase"
        r"|(?:api|secret|private|access|signing|master|account)[ _-]?key"
    )
    _quotes_sql = "'\""
    _names_only = True
    trigger = (
        r"(?:^|[\r\n,;\t|(])[ \t]*[\"'`*]{0,2}(?:[A-Za-z0-9]+[_ -]){0,2}"
        rf"(?i:{_labels})s?[\"'`*]{{0,2}}[ \t]*[,;\t|)\r\n]"
    )
    """A whole field that is a sensitive name, between delimiters: `…,password,…`,
    `| Password |`, `, api_key)`. Not a name inside other text (`kind: Secret`), nor one
    starting a field (`, "password": …` is JSON, on every dense record)."""
    _header_leading = False

    def __init__(self, priority: int, sensitive: Container[str]) -> None:
        super().__init__(priority)
        self._sensitive = sensitive

    def _wanted(self, name: str) -> str | None:
        # a column name, not a phrase (`Enter your password, then …` is prose)
        return self.rule_id if name.count(" ") <= 1 and name in self._sensitive else None

    def _takes(self, value: str, rule_id: str) -> bool:
        value = value.strip()
        if len(value) < 6 or len(value) > 512 or value[0] in "$<{%[(":
            return False
        bare = value.replace("-", "").replace("_", "").replace(" ", "")
        if bare.isalpha() or bare.isdigit() or not bare or _RULE_CHARS.issuperset(value):
            return False  # a word, a count, a Markdown rule
        if value[:4].isdigit() and value[4:5] in "-/.":
            return False  # a date
        return not is_placeholder(value)


_RULE_CHARS = frozenset("-:=+*| ")


_NAME_LIMIT = 48
_COLUMN_NAME = compile_pattern(
    r"[ \t]*[\"'`*]{0,2}[A-Za-z_][A-Za-z0-9_ .#/-]{0,47}[\"'`*]{0,2}[ \t]*"
)


def _is_column_name(name: str) -> bool:
    """A header field that is a column name (`Password`, `api_key`, `"Client Secret"`) or the
    empty field outside a Markdown row's outer bars."""
    return not name.strip() or _COLUMN_NAME.fullmatch(name) is not None


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
