"""The fast path for flat records: what `Redactor.redact_value` does to a record of scalars,
field by field, once its set of keys is known to be harmless.

A log line is a flat record (string, number, boolean and null fields) whose keys repeat from
line to line. `redact_value` over such a record is a pass of `redact_text` over each string,
provided no key is sensitive and no key pair masks by the other's value (`name="DB_PASSWORD",
value=…`): each new key set is asked once, by a probe through `redact_value` itself, and
remembered (bounded). Strings the redactor left unchanged come from `CleanTextCache`. Anything
else (a container, an object, an integer long enough to be a card number, a key set that
failed the probe) goes through `redact_value` whole.

Risky part: the ids the runtime generates (`RUNTIME_IDS`) are kept unscanned when they match
their field's form, and each id so validated is remembered for that field only (bounded, per
instance): the same text under another key is a payload like any other.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._clean import CleanTextCache
from ._redactor import Redactor

__all__ = ["RUNTIME_IDS", "FlatRecordRedactor"]

_PROBES = ("password", "client_secret", "zeroclaw_probe_api_key")
"""Candidate values for the key-set probe (see `FlatRecordRedactor.is_flat`)."""

_PLAIN_SCALARS = frozenset({float, bool, type(None)})
"""Field types `redact_value` passes through whatever their key (the key set is checked)."""

_CARD = 10**12
"""Integers this long or longer are read as text by `redact_value` (a card number)."""

RUNTIME_IDS: Mapping[str, re.Pattern[str]] = {
    "trace_id": re.compile(r"[0-9a-f]{32}"),
    "span_id": re.compile(r"[0-9a-f]{16}"),
    "receipt": re.compile(r"zc-receipt-[0-9]{1,19}-[A-Za-z0-9_-]{43}"),
}
"""The fields of our own log lines that the runtime generates, with their exact form: the
ids of the line's span (the OpenTelemetry hex ids) and the call's receipt. They are not
payloads: a value that matches its field's form in full is kept as it is, unscanned."""


class FlatRecordRedactor:
    """`redact_record(record)` equals `redactor.redact_value(record)`, field by field when it can.

    Args:
        redactor: the runtime's one redactor.
        clean_text: the memory of clean strings (shared with other surfaces); a new one when
            None.
        max_key_sets: the bound on remembered key sets; the memory is emptied when reached.
        verbatim: fields whose values the runtime generates (`RUNTIME_IDS` for our own log
            lines): a string value that matches its field's pattern in full is kept unscanned;
            any other value of the field is redacted as usual. Only for records the runtime
            builds: in a foreign record the same key could hold anything.
        max_ids: the bound on remembered ids per `verbatim` field (a trace id is on every
            line of a turn, a span id on both lines of a call); emptied when reached.
    """

    def __init__(
        self,
        redactor: Redactor,
        *,
        clean_text: CleanTextCache | None = None,
        max_key_sets: int = 256,
        verbatim: Mapping[str, re.Pattern[str]] | None = None,
        max_ids: int = 1024,
    ) -> None:
        self._redact_value = redactor.redact_value
        self._clean = clean_text if clean_text is not None else CleanTextCache(redactor)
        self._flat_key_sets: dict[tuple[Any, ...], bool] = {}
        self._max_key_sets = max_key_sets
        self._probe = _probe_value(redactor)
        self._verbatim = {key: pattern.fullmatch for key, pattern in (verbatim or {}).items()}
        self._ids: dict[str, set[str]] = {key: set() for key in self._verbatim}
        """Per `verbatim` field, the values already found in its exact form."""
        self._max_ids = max_ids

    def redact_record(self, record: Any) -> Any:
        """The record with every secret replaced; never mutates it (a changed record is a
        copy, an unchanged one is returned as it is)."""
        if type(record) is not dict or not self.is_flat(tuple(record)):
            return self._redact_value(record)
        redact = self._clean.redact_text
        known = self._clean.young
        ids = self._ids
        scrubbed: dict[Any, Any] | None = None
        for key, value in record.items():
            kind = type(value)
            if kind is str:
                if value in known:
                    continue
                seen = ids.get(key)
                if seen is not None and (value in seen or self.is_generated(key, value)):
                    continue  # an id the runtime made, in its exact form: not a payload
                redacted = redact(value)
                if redacted != value:
                    if scrubbed is None:
                        scrubbed = dict(record)
                    scrubbed[key] = redacted
            elif kind not in _PLAIN_SCALARS and not (kind is int and -_CARD < value < _CARD):
                return self._redact_value(record)
        return record if scrubbed is None else scrubbed

    def redact_text(self, value: str) -> str:
        """What `redact_record` writes for the string `value` of a flat record, unless
        `is_generated` keeps it: `redactor.redact_text`, answered from memory when it can."""
        return self._clean.redact_text(value)

    def is_generated(self, key: str, value: str) -> bool:
        """Whether `value` is an id the runtime generates for the field `key`, in its exact
        form (`verbatim`): kept unscanned in a record that `is_flat`. Each id found is
        remembered for that key alone (bounded); any other key answers False."""
        seen = self._ids.get(key)
        if seen is None:
            return False
        if value in seen:
            return True
        if self._verbatim[key](value) is None:
            return False
        if len(seen) >= self._max_ids:
            seen.clear()  # the bound; a race with another thread can only forget an id
        seen.add(value)
        return True

    def is_flat(self, keys: tuple[Any, ...]) -> bool:
        """Whether `redact_value` over a record with these keys is a pass over each value.

        Asked once per key set: every key must be a string `redact_value` keeps as it is and
        none may mask a value, even when every value is the name of a sensitive key (the
        probe) and so could make a sibling sensitive. Without a probe the answer is no.
        """
        known = self._flat_key_sets.get(keys)
        if known is not None:
            return known
        flat = self._probe is not None and all(type(key) is str for key in keys)
        if flat:
            probe = dict.fromkeys(keys, self._probe)
            flat = self._redact_value(probe) == probe
        if len(self._flat_key_sets) >= self._max_key_sets:
            self._flat_key_sets.clear()  # the bound
        self._flat_key_sets[keys] = flat
        return flat


def _probe_value(redactor: Redactor) -> str | None:
    """A value for the key-set probe: the name of a sensitive key that the redactor masks.

    The probe must see every mask a key set can cause, so its value must itself be masked
    under a sensitive key (an operator's allowlist could spare it) and make a sibling
    sensitive when it names one. None when no candidate qualifies: no key set is then flat.
    """
    for candidate in _PROBES:
        if redactor.is_sensitive_key(candidate):
            masked = redactor.redact_value({candidate: candidate})
            if candidate in masked and masked[candidate] != candidate:
                return candidate
    return None
