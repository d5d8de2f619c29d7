"""Parse step: native and text tool calls become `ParsedToolCall`s with ids.

Native calls keep the provider's id; a call without one gets a fresh UUID4 here, and that one
id is used by TurnEvents, observer events, spans, logs and history. Text-protocol calls are
parsed by `providers/text_protocol.py`; a native provider's text is parsed too when it sent no
native calls (many models fall back to tags), unless `strict_tool_parsing` hides the text
protocol entirely.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..providers.base import ProviderResponse
from ..providers.text_protocol import TextParse, is_parse_failure, parse_text_tool_calls

__all__ = ["ParseResult", "ParsedToolCall", "parse_response"]


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


def _decode_arguments(raw: dict[str, Any] | str | None) -> tuple[dict[str, Any], str | None]:
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {}, "arguments are not valid JSON"
    if not isinstance(value, dict):
        return {}, "arguments must be a JSON object"
    return value, None


def parse_response(
    response: ProviderResponse,
    *,
    tool_names: set[str],
    strict: bool,
    native_provider: bool = True,
) -> ParseResult:
    """Normalise one provider response into calls.

    Args:
        response: what the provider returned.
        tool_names: the effective tool names offered this iteration (text calls to other names
            are ignored, per LIFECYCLE §3).
        strict: `strict_tool_parsing`; only native calls count for a native provider.
        native_provider: `Provider.native_tools`. Strict parsing hides the text protocol from
            native providers only: a text-protocol provider is taught the tags in its system
            prompt, so its tags are always parsed.
    """
    if response.tool_calls:
        calls = []
        for native in response.tool_calls:
            arguments, problem = _decode_arguments(native.arguments)
            calls.append(ParsedToolCall(native.name, arguments, native.id or _new_id(), problem))
        return ParseResult(calls=calls, text=response.text, native=True)
    if (strict and native_provider) or not response.text:
        return ParseResult(text=response.text, native=True)
    parsed: TextParse = parse_text_tool_calls(response.text, tool_names)
    if is_parse_failure(parsed):
        return ParseResult(text=response.text, native=False, parse_failed=True)
    if not parsed.calls:
        return ParseResult(text=response.text, native=True)
    calls = [ParsedToolCall(c.name, dict(c.arguments), _new_id()) for c in parsed.calls]
    return ParseResult(calls=calls, text=response.text, native=False)
