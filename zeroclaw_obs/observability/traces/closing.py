"""What ends a span, as pure functions of the closing event: attributes, error type, status.

`SpanObserver` (`tracing.py`) applies them: the root's on the turn's path, a provider call's
too, a tool call's on the build worker (`Deferred`), since nothing in it depends on the time
it is made. `capture` False (`ContentCapture.NONE`) leaves error texts out of the status.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import Status, StatusCode

from ..events import AgentEnd, LlmResponse, ToolCall, TurnOutcomeKind
from .attributes import (
    TOOL_ERROR_TYPES,
    TURN_ERROR_TYPES,
    chat_end_attributes,
    status_description,
    tool_end_attributes,
    truncation_attributes,
    turn_end_attributes,
)
from .deferred_spans import AddEvent, Operation, SetAttribute, SetAttributes, SetStatus

__all__ = ["UNFINISHED", "chat_closing", "root_closing", "tool_closing"]

UNFINISHED: tuple[Operation, ...] = (
    SetAttribute("error.type", "unfinished"),
    SetStatus(Status(StatusCode.ERROR)),
)
"""What ends a child the engine never closed (a bug upstream), so the trace stays whole."""


def _describe(text: str | None, capture: bool) -> str | None:
    return status_description(text) if capture else None


def root_closing(
    event: AgentEnd, provider_error: str | None, *, capture: bool
) -> tuple[dict[str, Any], Status | None]:
    """The root span's closing attributes and its error status (None when the turn ended well).

    A turn that ran out of iterations without an error is not an error; a turn that ended on a
    provider error takes that call's `error.type` (`provider_error`, what its `chat` span said).
    """
    attributes = turn_end_attributes(event, capture=capture)
    error_type = TURN_ERROR_TYPES.get(event.outcome)
    if event.outcome is TurnOutcomeKind.MAX_ITERATIONS and event.error is None:
        error_type = None
    if error_type is None:
        return attributes, None
    if event.outcome is TurnOutcomeKind.ERROR and provider_error:
        error_type = provider_error
    attributes["error.type"] = error_type
    return attributes, Status(StatusCode.ERROR, _describe(event.error, capture))


def chat_closing(
    event: LlmResponse, *, messages: bool, capture: bool
) -> tuple[tuple[Operation, ...], str | None]:
    """A `chat` span's closing operations, and the error type of a failed call (else None)."""
    attributes = chat_end_attributes(event, messages=messages)
    if event.success:
        return (SetAttributes(attributes),), None
    error_type = event.error_type or "provider_error"
    attributes["error.type"] = error_type
    status = SetStatus(Status(StatusCode.ERROR, _describe(event.error, capture)))
    return (SetAttributes(attributes), status), error_type


def tool_closing(event: ToolCall, *, capture: bool) -> list[Operation]:
    """What ends a call's `execute_tool` span: its attributes, an error's type and status,
    a truncation event."""
    attributes = tool_end_attributes(event, capture=capture)
    closing: list[Operation] = [SetAttributes(attributes)]
    default_error = TOOL_ERROR_TYPES.get(event.outcome)
    if default_error is not None:
        attributes["error.type"] = event.error_type or default_error
        closing.append(SetStatus(Status(StatusCode.ERROR, _describe(event.result, capture))))
    if event.truncated_chars:
        truncation = truncation_attributes(event)
        closing.append(AddEvent("zeroclaw.truncation", truncation, event.time_ns))
    return closing
