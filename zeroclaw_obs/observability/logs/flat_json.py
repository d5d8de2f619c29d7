"""`FlatJsonRenderer`: the runtime's own log lines redacted and written as JSON in one pass.

A line `LogObserver` makes is a flat record (strings, numbers, booleans, null) whose keys
repeat from line to line and whose strings mostly repeat too (the turn id, the agent, the
tool, the outcome, a call id on both lines of its call). The chain redacts such a record in
one pass over its fields (`FlatRecordRedactor.redact_record`), then the JSON encoder makes a
second pass that quotes every key and string again. This renderer does both in one pass: a
key set's layout (its quoted keys, joined) is made once, and a string the redactor leaves as
it is is remembered with its JSON (bounded, per renderer), so seeing it again costs a lookup.

Risky part: a line must be byte for byte what the chain writes (`chain.build_processors`).
The JSON is made of the stdlib encoder's own pieces (`encode_basestring_ascii`, `int.__repr__`,
`float.__repr__`, its separators); anything else (a container, an object, a long integer, a
float that is not finite, a key set the redactor does not read field by field) is left to the
chain. Only strings the redactor returned unchanged are remembered, so no secret is held
here; an id kept because it has its field's exact form (`FlatRecordRedactor.is_generated`)
holds under that key alone and is remembered with it, as the pair `(key, id)`: a string in a
field is looked up by itself, so it never meets a pair.
"""

from __future__ import annotations

import json
from typing import Any

from ...redaction import FlatRecordRedactor

__all__ = ["FlatJsonRenderer"]

_TAIL = ("timestamp", "event", "level")
"""The fields every own line ends with, in this order (`LineWriter.render_own`)."""

_CARD = 10**12
"""Integers this long or longer are read as text by the redactor (a card number, as in
`FlatRecordRedactor`): such a line is left to the chain."""

_quote = json.encoder.encode_basestring_ascii


class FlatJsonRenderer:
    """`render(fields, …)` is the chain's line for the record `fields` + `timestamp`, `event`,
    `level`: the JSON of `FlatRecordRedactor.redact_record` of it, in one pass.

    Only for records the runtime builds with the same redactor as the chain's (the
    `FlatRecordRedactor` it runs, `verbatim` ids included). Meant for one thread (the log
    worker); a race from another can only forget a remembered string.

    Args:
        records: the chain's flat-record redactor (`RedactingProcessor.records`).
        max_texts: the bound on remembered strings; the memory is emptied when reached.
        max_text_length: longer strings are redacted every time, never remembered.
        max_layouts: the bound on remembered key sets' layouts; emptied when reached.
    """

    def __init__(
        self,
        records: FlatRecordRedactor,
        *,
        max_texts: int = 1024,
        max_text_length: int = 256,
        max_layouts: int = 256,
    ) -> None:
        self._records = records
        self._texts: dict[str | tuple[str, str], str] = {}
        """Strings the redactor left unchanged, and `(key, id)` for ids kept in their
        field's exact form, each with its JSON."""
        self._max_texts = max_texts
        self._max_text_length = max_text_length
        self._layouts: dict[tuple[Any, ...], str] = {}
        """Per key set, the line as a `%` template ('': the chain writes such lines)."""
        self._max_layouts = max_layouts

    def render(self, fields: dict[str, Any], timestamp: str, event: str, level: str) -> str | None:
        """The JSON line of `fields` followed by `timestamp`, `event` and `level`, redacted,
        or None when the chain must write it. Never mutates `fields`.

        Args:
            fields: the line's fields, without the three that end it.
            timestamp: the time as `chain.iso_utc` writes it (digits and punctuation that
                JSON keeps as they are; not a payload, so not scanned).
            event: the event name; redacted like any field.
            level: the level name; redacted like any field.
        """
        keys = tuple(fields)
        layout = self._layouts.get(keys)
        if layout is None:
            layout = self._layout(keys)
        if not layout or type(event) is not str:
            return None
        texts = self._texts
        parts: list[str] = []
        append = parts.append
        for key, value in fields.items():
            kind = type(value)
            if kind is str:
                # A clean string by itself, then an id as the pair (key, id), then the scan.
                text = texts.get(value) or texts.get((key, value)) or self._text(key, value)
            elif kind is int and -_CARD < value < _CARD:
                text = repr(value)  # the exact type: `int.__repr__`, as the encoder writes
            elif kind is bool:
                text = "true" if value else "false"
            elif value is None:
                text = "null"
            elif kind is float and value - value == 0.0:  # finite: NaN and ±inf fail
                text = repr(value)
            else:
                return None
            append(text)
        append(timestamp)
        append(texts.get(event) or self._text("event", event))
        append(texts.get(level) or self._text("level", level))
        return layout % tuple(parts)

    def _text(self, key: str, value: str) -> str:
        """The JSON of `value` under `key` as the chain writes it, when `render` does not
        remember it: an id in its field's exact form as it is (remembered for that key, as
        `(key, value)`), anything else redacted (remembered when the redactor left it)."""
        if self._records.is_generated(key, value):
            text = _quote(value)
            self._remember((key, value), text)
            return text
        redacted = self._records.redact_text(value)
        text = _quote(redacted)
        if redacted == value and len(value) <= self._max_text_length:
            self._remember(value, text)
        return text

    def _remember(self, known: str | tuple[str, str], text: str) -> None:
        if len(self._texts) >= self._max_texts:
            self._texts.clear()  # the bound
        self._texts[known] = text

    def _layout(self, keys: tuple[Any, ...]) -> str:
        """The `%` template of lines with these keys: each quoted key, `: ` and a `%s`, joined
        by `, ` as the encoder joins them; '' when the redactor does not read such a record
        field by field or the fields hold one of the three that end every line."""
        layout = ""
        # `is_flat` first: it answers False for a key that is not a string, compared to nothing.
        if self._records.is_flat(keys + _TAIL) and not any(key in _TAIL for key in keys):
            quoted = [_quote(key).replace("%", "%%") + ": %s" for key in keys]
            quoted += ['"timestamp": "%s"', '"event": %s', '"level": %s']
            layout = "{" + ", ".join(quoted) + "}"
        if len(self._layouts) >= self._max_layouts:
            self._layouts.clear()  # the bound
        self._layouts[keys] = layout
        return layout
