"""Parse step: native and text tool calls become `ParsedToolCall`s with ids.

Native calls keep the provider's id; a call without one gets a fresh UUID4 here, and that one
id is used by TurnEvents, observer events, spans, logs and history. Text-protocol calls are
parsed by `providers/text_protocol.py`; a native provider's text is parsed too when it sent no
native calls (many models fall back to tags), unless `strict_tool_parsing` hides the text
protocol entirely.

An id is model output too, and a provider's id can hold a token: `CallIds` passes each one
through the redactor here, once, so the id every surface uses (history included, so the
assistant's `tool_calls[].id` and the `tool` message's `tool_call_id` still match) is already
the shown one. See `CallIds` for how redacted ids stay unique.

Native arguments nested deeper than `MAX_ARGUMENT_DEPTH` (the text protocol's cap) are
invalid arguments, found by an iterative walk: later steps (canonical JSON, the redactor,
schema validation) walk arguments recursively and would fail with `RecursionError`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..providers.base import ProviderResponse
from ..providers.text_protocol import (
    MAX_ARGUMENT_DEPTH,
    TextParse,
    depth_within,
    is_parse_failure,
    parse_text_tool_calls,
)
from ..redaction import Redactor

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "CallIds",
    "ParseResult",
    "ParsedToolCall",
    "depth_within",
    "parse_response",
]


_TOO_DEEP = f"arguments are nested deeper than {MAX_ARGUMENT_DEPTH} levels"
_MARKER = "[REDACTED"


@dataclass(frozen=True, slots=True)
class ParsedToolCall:
    """One call as the model made it, normalised."""

    name: str
    arguments: dict[str, Any]
    call_id: str
    arguments_error: str | None = None
    """Set when the arguments could not be decoded; the slot then fails before the gate."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ParseResult:
    """The calls of one response, the prose around them, and whether parsing failed."""

    calls: list[ParsedToolCall] = field(default_factory=list)
    text: str = ""
    native: bool = True
    """True when the calls came as native structured calls (history shape follows this)."""
    parse_failed: bool = False
    """A tool envelope was seen but no valid call came out of it."""


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex}"


class CallIds:
    """The one id of each call in a turn, as every surface shows it.

    A provider id the redactor leaves alone is kept. One it changes is replaced by its
    redacted form plus `-{n}`, where n counts the redacted ids of the turn (1, 2, …) and
    skips any marker-holding id the turn already used: two different secret ids never collide
    into one `[REDACTED:…]`, and the same script always gets the same ids. A call without an id
    gets a fresh `call_{uuid4 hex}`.

    Args:
        redactor: the runtime's one redactor.
    """

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._marked: set[str] = set()
        """Ids of the turn holding a redaction marker: the only ones a suffixed id can meet
        (kept apart so a 10,000-call turn does not hold a set of every id)."""
        self._redacted = 0

    def assign(self, raw: str | None) -> str:
        """The id the turn uses for a call the provider gave `raw` (None: no id)."""
        if not raw:
            return _new_id()
        shown = self._redactor.redact_text(raw)
        if shown != raw:
            shown = self._unique(shown)
        if _MARKER in shown:
            self._marked.add(shown)
        return shown

    def _unique(self, redacted: str) -> str:
        while True:
            self._redacted += 1
            candidate = f"{redacted}-{self._redacted}"
            if candidate not in self._marked:
                return candidate


def _decode_arguments(raw: dict[str, Any] | str | None) -> tuple[dict[str, Any], str | None]:
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        value: Any = raw
    else:
        try:
            value = json.loads(raw)
        except RecursionError:
            return {}, _TOO_DEEP
        except (TypeError, ValueError):
            return {}, "arguments are not valid JSON"
    if not isinstance(value, dict):
        return {}, "arguments must be a JSON object"
    if not _flat(value) and not depth_within(value):
        return {}, _TOO_DEEP
    return value, None


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _flat(arguments: dict[str, Any]) -> bool:
    """True when no value holds anything (exact scalar types): depth 2, no walk needed."""
    return all(type(value) in _SCALARS for value in arguments.values())


def parse_response(
    response: ProviderResponse,
    *,
    tool_names: set[str],
    strict: bool,
    native_provider: bool = True,
    call_ids: CallIds | None = None,
    aliases: Mapping[str, str] | None = None,
) -> ParseResult:
    """Normalise one provider response into calls.

    Args:
        response: what the provider returned.
        tool_names: the effective tool names offered this iteration (text calls to other names
            are ignored, per LIFECYCLE §3).
        strict: `strict_tool_parsing`: only native calls count, for every provider. Strict
            parsing hides the text protocol entirely (LIFECYCLE §3): a text-protocol provider
            is taught no tags under it, and tags in any reply are plain text.
        native_provider: `Provider.native_tools` (kept for callers; strict parsing no longer
            depends on it).
        call_ids: the turn's ids (`CallIds`); None keeps provider ids as they are (tests).
        aliases: shown name → real name of tools the text protocol's prompt lists under a
            redacted name; a text call to a shown name becomes a call to the real tool.
    """
    assign = call_ids.assign if call_ids is not None else (lambda raw: raw or _new_id())
    if response.tool_calls:
        calls = []
        for native in response.tool_calls:
            arguments, problem = _decode_arguments(native.arguments)
            calls.append(ParsedToolCall(native.name, arguments, assign(native.id), problem))
        return ParseResult(calls=calls, text=response.text, native=True)
    if strict or not response.text:
        return ParseResult(text=response.text, native=True)
    if aliases:
        tool_names = tool_names | aliases.keys()
    parsed: TextParse = parse_text_tool_calls(response.text, tool_names)
    if is_parse_failure(parsed):
        return ParseResult(text=response.text, native=False, parse_failed=True)
    if not parsed.calls:
        return ParseResult(text=response.text, native=True)
    real = aliases or {}
    calls = [
        ParsedToolCall(real.get(c.name, c.name), dict(c.arguments), assign(None))
        for c in parsed.calls
    ]
    return ParseResult(calls=calls, text=response.text, native=False)
