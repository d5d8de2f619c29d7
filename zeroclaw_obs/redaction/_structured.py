"""Structured values: the key-aware walk over JSON-like data, and JSON text read as data.

`ValueWalker` rebuilds dicts, lists and tuples (never mutating its input) and sends each
string through the text chain. Key awareness happens here:
- a value under a sensitive key is masked whole as `[REDACTED:sensitive_key]`, every scalar
  at any depth below it (`None`, booleans, empty strings and measurements — floats and
  integers of at most three digits — reveal nothing and stay; a value that is already a
  marker stays and is not counted). Inside a masked container, scalars
  under metadata keys (`type`, `expires_in`, `name`…) are kept, since they describe the secret;
- in an argv list, the item after a sensitive flag (`["--api-key", "…"]`) is masked;
- a name/value pair whose name is a sensitive key (`{"name": "DB_PASSWORD", "value": …}`,
  Kubernetes env, SSM parameters, header lists) has its value masked;
- an integer of 13–19 digits goes through the text chain as a string, so a card number
  stored as a number is caught (numbers that fail Luhn are returned unchanged).

`JsonTextReader` is the step of the text chain that reads a string holding a JSON document
with a sensitive key over a container (`{"credentials": {"user": …, "pass": …}}`): text rules
cannot see which values sit under that key, so the document is parsed, walked, and written
back (compact or `", "`/`": "` separators, like the original) only if something was redacted.
The walk sends every string back through the text chain, so JSON inside a JSON string is
read the same way, to `MAX_DEPTH`.

Risky part: recursion. Containers nested deeper than `MAX_DEPTH` are replaced by
`[REDACTED:max_depth]`; the walk never recurses on anything but containers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._assignments import is_credential_document
from ._cookies import cookie_value_spans, is_cookie_key
from ._keys import METADATA_KEYS, SensitiveKeys
from ._manifests import is_certificate_key
from ._normalize import fold_key, utf8_safe
from ._scanner import compile_pattern
from ._tables import is_phone_key, is_phone_value
from ._validators import is_basic_credential, is_events_routing_key, is_measurement

__all__ = ["MAX_DEPTH", "JsonTextReader", "ValueWalker", "is_secret_manifest", "marker"]

MAX_DEPTH = 64
"""Containers nested deeper than this are replaced by `[REDACTED:max_depth]` (no recursion bomb)."""

SENSITIVE_KEY_RULE_ID = "sensitive_key"
PHONE_RULE_ID = "phone_number"
MAX_DEPTH_RULE_ID = "max_depth"

BatchStep = Callable[[list[str], "dict[str, int] | None"], list[str]]
"""Redacts many strings at once (the text chain), counting into the dict; same order out."""

_NAME_FIELDS = frozenset({"name", "key", "parameter_key", "parameter_name", "header", "field"})
_VALUE_FIELDS = frozenset({"value", "parameter_value", "string_value", "secret_value"})
_MARKER = compile_pattern(r"\[REDACTED:[a-z0-9_]{1,64}\]")
_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Placed as they are by the walk; strings and integers are patched afterwards if need be."""


def marker(rule_id: str) -> str:
    """The replacement text for `rule_id`: `[REDACTED:<rule_id>]`."""
    return f"[REDACTED:{rule_id}]"


def _is_marker(value: str) -> bool:
    return value.startswith("[REDACTED:") and value.isascii() and bool(_MARKER.fullmatch(value))


_MANIFEST_SECTIONS = frozenset({"data", "stringData"})
_CREDENTIAL_TYPES = frozenset(
    {"service_account", "authorized_user", "external_account", "impersonated_service_account"}
)
"""`type` values of Google credential files (see `ValueWalker._mask`)."""


def is_secret_manifest(value: Mapping[Any, Any]) -> bool:
    """Whether a mapping is a Kubernetes `Secret` (its `data` and `stringData` are masked)."""
    return value.get("kind") == "Secret" and ("data" in value or "stringData" in value)


def _is_basic_auth(key: str, value: Any) -> bool:
    """`"auth": "<base64 of user:password>"` (Docker config.json, containers auth.json): the
    key alone is too common to be sensitive (`"auth": "oauth2"`), the value decides."""
    return type(value) is str and key.lower() == "auth" and is_basic_credential(value)


_ROUTING_SECRET_KEYS = frozenset({"routing_key", "integration_key", "service_key"})
"""PagerDuty's names for its Events API key (v2 `routing_key`, v1 `service_key`)."""


def _is_routing_secret(key: str, value: Any) -> bool:
    """`"routingKey": "<32 hex>"` (a PagerDuty integration): the key alone is too common to be
    sensitive (a message broker's `routing_key`), the value decides."""
    return (
        type(value) is str
        and len(value) == 32
        and fold_key(key) in _ROUTING_SECRET_KEYS
        and is_events_routing_key(value)
    )


def _is_phone_field(key: Any, value: Any) -> bool:
    """A national phone number under a phone key (`"phone": "020 7946 0958"`): known only by
    its key, as a table column is known by its header (see `_tables.py`)."""
    return (
        type(value) is str and isinstance(key, str) and is_phone_key(key) and is_phone_value(value)
    )


def _count(counts: dict[str, int] | None, rule_id: str) -> None:
    if counts is not None:
        counts[rule_id] = counts.get(rule_id, 0) + 1


class _Build:
    """One walk of a value: counts, and where each string the text chain must see landed.

    A site is `(container, key, original)`: the copy holds `original` at `container[key]`
    (or, with `key` None, `original` is a key of the dict `container`). Lists that must end
    up as tuples are recorded in `tuples` and frozen by `ValueWalker._patch`.
    """

    __slots__ = ("counts", "sites", "tuples")

    def __init__(self, counts: dict[str, int] | None) -> None:
        self.counts = counts
        self.sites: list[tuple[Any, Any, Any]] = []
        self.tuples: list[tuple[Any, Any, list[Any]]] = []

    def place(self, container: Any, key: Any, value: Any, original: Any) -> None:
        """Put `value` at `container[key]`, remembering it if the text chain must see it."""
        container[key] = value
        kind = type(value)
        if value is original and (kind is str or kind is int):
            self.sites.append((container, key, value))
        elif kind is _Frozen:
            self.tuples.append((container, key, value))
        elif value is original and isinstance(value, str | int) and not isinstance(value, bool):
            self.sites.append((container, key, value))  # subclasses (IntEnum is not bool)


class _Frozen(list):  # type: ignore[type-arg]
    """A tuple under construction: a list until its strings are patched."""

    __slots__ = ()


class ValueWalker:
    """Redacts a JSON-like value: key-aware masking plus the text chain on every string.

    One walk builds the copy and records where each string (and card-sized integer) landed;
    `batch` then redacts them all in one scan, and only those that changed are patched in.
    One RE2 gate call per value instead of one per string is what keeps a 1 KB tool-call
    argument dict cheap. Dispatch is by exact type through `_handlers` (one small handler per
    kind of value), falling back to `isinstance` for subclasses and other mappings.
    """

    __slots__ = ("_allowed", "_batch", "_handlers", "_keys", "_pii")

    def __init__(
        self,
        batch: BatchStep,
        keys: SensitiveKeys,
        *,
        allowed: Callable[[str], bool],
        pii: bool,
    ) -> None:
        self._batch = batch
        self._keys = keys
        self._allowed = allowed
        self._pii = pii
        self._handlers: dict[type, Callable[[Any, _Build, int], Any]] = {
            dict: self._mapping,
            list: self._list,
            tuple: self._tuple,
        }

    def __call__(self, value: Any, counts: dict[str, int] | None) -> Any:
        """A redacted copy of `value`, counting replacements into `counts`."""
        build = _Build(counts)
        root: list[Any] = [None]
        build.place(root, 0, self._walk(value, build, 0), value)
        self._patch(build)
        return root[0]

    def _patch(self, build: _Build) -> None:
        """Redact the recorded strings in one batch and patch the ones that changed.

        Values first, then tuples are frozen (innermost first, the order they were placed),
        and dict keys are renamed last, in place and in order, once nothing refers to them.
        """
        sites = [site for site in build.sites if self._needs_text(site[2])]
        texts = [str(site[2]) for site in sites]
        renames: list[tuple[dict[Any, Any], Any, str]] = []
        for (container, key, original), text, redacted in zip(
            sites, texts, self._batch(texts, build.counts), strict=True
        ):
            if redacted == text:
                continue
            if key is None:
                renames.append((container, original, redacted))
            else:
                container[key] = redacted
        for container, key, items in build.tuples:
            container[key] = tuple(items)
        for mapping, original, redacted in renames:
            items = [(redacted if k == original else k, v) for k, v in mapping.items()]
            mapping.clear()
            mapping.update(items)

    def _needs_text(self, value: Any) -> bool:
        if isinstance(value, str):
            return bool(value)
        return self._pii and 10**12 <= abs(value) < 10**19

    def _walk(self, value: Any, build: _Build, depth: int) -> Any:
        kind = type(value)
        if kind in _SCALARS:
            return value
        handler = self._handlers.get(kind)
        if handler is not None:
            return handler(value, build, depth)
        if isinstance(value, Mapping):
            return self._mapping(value, build, depth)
        if isinstance(value, list):
            return self._list(value, build, depth)
        if isinstance(value, tuple):
            return self._tuple(value, build, depth)
        return value  # strings and numbers are placed as they are and patched later

    def _deeper(self, build: _Build, depth: int) -> bool:
        if depth < MAX_DEPTH:
            return False
        _count(build.counts, MAX_DEPTH_RULE_ID)
        return True

    def _list(self, value: list[Any], build: _Build, depth: int) -> Any:
        if self._deeper(build, depth):
            return marker(MAX_DEPTH_RULE_ID)
        return self._items(value, build, depth + 1, [])

    def _tuple(self, value: tuple[Any, ...], build: _Build, depth: int) -> Any:
        if self._deeper(build, depth):
            return marker(MAX_DEPTH_RULE_ID)
        return self._items(value, build, depth + 1, _Frozen())

    def _items(self, value: Sequence[Any], build: _Build, depth: int, out: list[Any]) -> Any:
        """Walk a sequence; in an argv list the item after `--password`-like flags is masked."""
        out.extend([None] * len(value))
        flagged = False
        for i, item in enumerate(value):
            if flagged and isinstance(item, str) and not item.startswith("-"):
                build.place(out, i, self._mask(item, build, depth), item)
                flagged = False
                continue
            build.place(out, i, self._walk(item, build, depth), item)
            flagged = (
                isinstance(item, str)
                and item.startswith("-")
                and "=" not in item
                and item.lstrip("-") in self._keys
            )
        return out

    def _mapping(self, value: Mapping[Any, Any], build: _Build, depth: int) -> Any:
        if self._deeper(build, depth):
            return marker(MAX_DEPTH_RULE_ID)
        hidden = self._pair_value_field(value)
        manifest = is_secret_manifest(value)
        out: dict[Any, Any] = {}
        for key, item in value.items():
            sensitive = isinstance(key, str) and (
                key in self._keys
                or key == hidden
                or _is_basic_auth(key, item)
                or _is_routing_secret(key, item)
            )
            if manifest and key in _MANIFEST_SECTIONS and isinstance(item, Mapping):
                build.place(out, key, self._secret_section(item, build, depth + 1), item)
            elif sensitive and is_cookie_key(key) and isinstance(item, str | list):
                build.place(out, key, self._cookies(item, build, key, depth + 1), item)
            elif sensitive:
                build.place(out, key, self._mask(item, build, depth + 1), item)
            elif self._pii and _is_phone_field(key, item):
                _count(build.counts, PHONE_RULE_ID)
                build.place(out, key, marker(PHONE_RULE_ID), item)
            else:
                build.place(out, key, self._walk(item, build, depth + 1), item)
            if isinstance(key, str) and key:
                build.sites.append((out, None, key))
        return out

    def _secret_section(self, value: Mapping[Any, Any], build: _Build, depth: int) -> Any:
        """A Secret manifest's `data`/`stringData`: every value masked but certificates'."""
        if self._deeper(build, depth):
            return marker(MAX_DEPTH_RULE_ID)
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and is_certificate_key(key):
                build.place(out, key, self._walk(item, build, depth + 1), item)
            else:
                build.place(out, key, self._mask(item, build, depth + 1), item)
            if isinstance(key, str) and key:
                build.sites.append((out, None, key))
        return out

    def _cookies(self, value: Any, build: _Build, key: str, depth: int) -> Any:
        """A cookie header under a cookie key: each cookie's value masked, names and
        attributes kept (see `_cookies.py`); anything but text is masked whole."""
        if isinstance(value, list):
            if self._deeper(build, depth):
                return marker(MAX_DEPTH_RULE_ID)
            items: list[Any] = [None] * len(value)
            for i, item in enumerate(value):
                build.place(items, i, self._cookies(item, build, key, depth + 1), item)
            return items
        if not isinstance(value, str) or "=" not in value:
            return self._mask(value, build, depth)
        set_cookie = fold_key(key).endswith("set_cookie")
        pieces, last = [], 0
        for start, end in cookie_value_spans(value, 0, len(value), set_cookie=set_cookie):
            pieces += [value[last:start], marker(SENSITIVE_KEY_RULE_ID)]
            _count(build.counts, SENSITIVE_KEY_RULE_ID)
            last = end
        return "".join([*pieces, value[last:]]) if pieces else value

    def _pair_value_field(self, value: Mapping[Any, Any]) -> str | None:
        """In `{"name": "DB_PASSWORD", "value": …}`, the key of the field to mask."""
        if len(value) > 8:
            return None
        name = field = None
        for key, item in value.items():
            if not isinstance(key, str):
                continue
            folded = fold_key(key)
            if folded in _NAME_FIELDS and isinstance(item, str) and item in self._keys:
                name = item
            elif folded in _VALUE_FIELDS:
                field = key
        return field if name is not None else None

    def _mask(self, value: Any, build: _Build, depth: int) -> Any:
        """Mask every scalar of a value found under a sensitive key, keeping its shape.

        A Google credential file (`"type": "service_account"`, as data or as JSON text) is
        walked instead: its own keys say which of its values are secret (`private_key`,
        `private_key_id`, `client_secret`), and its project, e-mail and URLs are not.
        """
        if isinstance(value, Mapping) and value.get("type") in _CREDENTIAL_TYPES:
            return self._walk(value, build, depth)
        if isinstance(value, Mapping | list | tuple):
            if self._deeper(build, depth):
                return marker(MAX_DEPTH_RULE_ID)
            # Placed through `build`, so the keys and the strings left unmasked (metadata,
            # measurements, allowed values) still meet the text chain: a token used as a key
            # inside a masked container must not survive until a second pass.
            if isinstance(value, Mapping):
                out: dict[Any, Any] = {}
                for key, item in value.items():
                    if (
                        isinstance(key, str)
                        and fold_key(key) in METADATA_KEYS
                        and not isinstance(item, Mapping | list | tuple)
                    ):
                        build.place(out, key, item, item)  # metadata: text rules only
                    else:
                        build.place(out, key, self._mask(item, build, depth + 1), item)
                    if isinstance(key, str) and key:
                        build.sites.append((out, None, key))
                return out
            items: list[Any] = [] if isinstance(value, list) else _Frozen()
            items.extend([None] * len(value))
            for i, item in enumerate(value):
                build.place(items, i, self._mask(item, build, depth + 1), item)
            return items
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, float) or (isinstance(value, int) and -1000 < value < 1000):
            return value  # a measurement, as `is_measurement` reads one in text
        if isinstance(value, str):
            if not value or _is_marker(value) or self._allowed(value) or is_measurement(value):
                return value
            if is_credential_document(value):
                return value  # its own keys name its secrets: the text chain reads it
        elif isinstance(value, bytes | bytearray) and not value:
            return value
        _count(build.counts, SENSITIVE_KEY_RULE_ID)
        return marker(SENSITIVE_KEY_RULE_ID)


class JsonTextReader:
    """The text-chain step that redacts a JSON document as data when key-aware masking needs it.

    Sits first in the text chain: when it applies, the walk runs the rest of the chain on
    every string of the document, so the plain text rules must not run again on the whole.
    """

    __slots__ = ("_keys", "_manifest", "_probe", "_walker")

    def __init__(self, keys: SensitiveKeys, walker: ValueWalker) -> None:
        self._keys = keys
        self._walker = walker
        words = "|".join(sorted(keys.words, key=lambda w: (-len(w), w)))
        self._probe = compile_pattern(
            rf"(?i)\\*[\"']([A-Za-z0-9_.\- ]*(?:{words}))\\*[\"'][ \t\r\n]*:[ \t\r\n]*[\[{{]"
        )
        self._manifest = compile_pattern(r"\"kind\"[ \t\r\n]*:[ \t\r\n]*\"Secret\"")

    def _is_manifest(self, text: str) -> bool:
        """Whether the document is a Kubernetes Secret (`"kind": "Secret"`)."""
        return '"Secret"' in text and self._manifest.search(utf8_safe(text)) is not None

    def __call__(self, text: str, counts: dict[str, int] | None) -> str | None:
        """The redacted document, or None when `text` is not JSON with a sensitive container."""
        if text[:1] not in ("{", "[") or text[-1:] not in ("}", "]"):
            return None
        probed = self._probe.finditer(utf8_safe(text))
        if not any(found.group(1) in self._keys for found in probed) and not self._is_manifest(
            text
        ):
            return None
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None  # not JSON, or nested past what the parser takes: plain text rules
        local: dict[str, int] = {}
        redacted = self._walker(data, local)
        if not local:
            return text
        if counts is not None:
            for rule_id, count in local.items():
                counts[rule_id] = counts.get(rule_id, 0) + count
        compact = '": ' not in text and '", ' not in text
        separators = (",", ":") if compact else (", ", ": ")
        return json.dumps(redacted, ensure_ascii=False, separators=separators)
