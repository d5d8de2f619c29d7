"""The attributes of each span (DESIGN §3), built from observer events, as plain dicts.

`tracing.py` decides when spans start and end and which span an event belongs to; this module
says what they carry: the GenAI conventions, the OpenInference names backends such as Arize
Phoenix read, and the `zeroclaw.*` extensions. Content (arguments, results, messages, the
user's message and the answer) is added only when its capture flag is on; every text in an
event is already redacted by the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from ..events import (
    AgentEnd,
    AgentStart,
    ApprovalDecision,
    ContextTrimmed,
    LlmRequest,
    LlmResponse,
    LoopDetection,
    ModelSwitched,
    ProviderAttempt,
    SteeringMessages,
    ToolCall,
    ToolCallStart,
    ToolOutcome,
    ToolProgress,
    TurnOutcomeKind,
)

__all__ = [
    "DESCRIPTION_LIMIT",
    "RECEIPT_KEY",
    "ROOT_EVENTS",
    "RUNTIME_SCOPE",
    "TOOL_ERROR_TYPES",
    "TOOL_TYPES",
    "TURN_ERROR_TYPES",
    "ContentCapture",
    "approval_attributes",
    "attempt_attributes",
    "chat_end_attributes",
    "chat_start_attributes",
    "loop_attributes",
    "progress_attributes",
    "status_description",
    "steering_attributes",
    "switch_attributes",
    "tool_end_attributes",
    "tool_start_attributes",
    "trimmed_attributes",
    "truncation_attributes",
    "turn_end_attributes",
    "turn_start_attributes",
]

RUNTIME_SCOPE = "zeroclaw_obs"
"""The instrumentation scope of the runtime's own spans (`tracing.py`; the guard trusts it)."""
RECEIPT_KEY = "zeroclaw.tool.receipt"
"""The tool span attribute that carries the call's receipt."""


class ContentCapture(StrEnum):
    """What of the tool-call content reaches span attributes (there is no raw setting)."""

    REDACTED = "redacted"
    """Redacted arguments and results on tool spans, redacted reasons in status descriptions."""
    NONE = "none"
    """No arguments, results or free-text reasons: ids, names, outcomes and counts only."""


TOOL_TYPES = {"native": "function", "extension": "extension"}
"""`gen_ai.tool.type` by provenance: built-in tools are functions the agent runs itself; MCP
and other extension tools run elsewhere. Anything else is an extension, as the registry
treats it."""

TOOL_ERROR_TYPES: dict[ToolOutcome, str] = {
    ToolOutcome.ERROR: "tool_error",
    ToolOutcome.UNKNOWN: "unknown_tool",
    ToolOutcome.EXCLUDED: "excluded_tool",
    ToolOutcome.INTERRUPTED: "interrupted",
}
"""Outcomes that set status ERROR, with their default `error.type` (an `error` slot uses the
event's own type when it has one: an exception class, `timeout`, `invalid_result`). The other
outcomes — denied, replaced, deduplicated, cancelled_by_hook — are policy decisions that worked
as intended, so they leave the status UNSET; `zeroclaw.tool.outcome` carries the detail."""

TURN_ERROR_TYPES: dict[TurnOutcomeKind, str] = {
    TurnOutcomeKind.ABORTED: "aborted",
    TurnOutcomeKind.ERROR: "turn_error",
    TurnOutcomeKind.MAX_ITERATIONS: "max_iterations",
}
"""Turn outcomes that set status ERROR. `max_iterations` only when it ended in an error
(`error_at_cap`); a graceful summary, a final answer and a user's cancel are not errors."""

_OUTCOME_VALUES = {outcome: outcome.value for outcome in ToolOutcome}
"""Each outcome's value as a plain `str` (a dict lookup: `.value` is a Python-level
property, read for every tool span)."""

DESCRIPTION_LIMIT = 256
"""Status descriptions are cut here: they are summaries, the full text is in the result."""


def status_description(text: str | None) -> str | None:
    """An ERROR status's description: `text` cut to `DESCRIPTION_LIMIT` (None when empty)."""
    if not text:
        return None
    return text if len(text) <= DESCRIPTION_LIMIT else text[: DESCRIPTION_LIMIT - 1] + "…"


def turn_start_attributes(event: AgentStart, *, capture: bool) -> dict[str, Any]:
    """`invoke_agent {agent}` at its start."""
    c = event.correlation
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": c.agent_alias,
        "gen_ai.conversation.id": c.conversation,
        "session.id": c.conversation,
        "gen_ai.provider.name": event.provider,
        "gen_ai.request.model": event.model,
        "zeroclaw.turn.id": c.turn_id,
        "zeroclaw.channel": c.channel,
        "openinference.span.kind": "AGENT",
    }
    if c.parent_agent_alias is not None:
        # A delegated turn: the agent that delegated it (log lines: `parent_agent_alias`).
        attributes["zeroclaw.parent_agent.name"] = c.parent_agent_alias
    if capture and event.input is not None:
        attributes["input.value"] = event.input
    if event.receipt_key_id:
        attributes["zeroclaw.receipt.key_id"] = event.receipt_key_id
    return attributes


def turn_end_attributes(event: AgentEnd, *, capture: bool) -> dict[str, Any]:
    """What `invoke_agent` gets at its end (the error type is the observer's decision)."""
    attributes: dict[str, Any] = {
        "zeroclaw.turn.outcome": event.outcome.value,
        "zeroclaw.turn.iterations": event.iterations,
    }
    if capture and event.output:
        attributes["output.value"] = event.output
    return attributes


def chat_start_attributes(event: LlmRequest | LlmResponse, *, messages: bool) -> dict[str, Any]:
    """`chat {model}` at its start (from the request, or from a response whose request was
    missed)."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": event.provider,
        "gen_ai.request.model": event.model,
        "gen_ai.conversation.id": event.correlation.conversation,
        "session.id": event.correlation.conversation,
        "zeroclaw.turn.id": event.correlation.turn_id,
        "zeroclaw.iteration": event.iteration,
        "openinference.span.kind": "LLM",
        "llm.model_name": event.model,
    }
    if messages and isinstance(event, LlmRequest) and event.input_messages is not None:
        attributes["gen_ai.input.messages"] = event.input_messages
    return attributes


def chat_end_attributes(event: LlmResponse, *, messages: bool) -> dict[str, Any]:
    """What `chat {model}` gets at its end: the server, and for a success usage, the answer's
    model, id and finish reasons (a failure's error type is the observer's decision)."""
    attributes: dict[str, Any] = {}
    if event.server_address is not None:
        attributes["server.address"] = event.server_address
    if event.server_port is not None:
        attributes["server.port"] = event.server_port
    if not event.success:
        return attributes
    attributes["gen_ai.usage.input_tokens"] = event.input_tokens
    attributes["gen_ai.usage.output_tokens"] = event.output_tokens
    attributes["llm.token_count.prompt"] = event.input_tokens
    attributes["llm.token_count.completion"] = event.output_tokens
    attributes["llm.token_count.total"] = event.input_tokens + event.output_tokens
    if messages and event.output_messages is not None:
        attributes["gen_ai.output.messages"] = event.output_messages
    if event.response_model:
        attributes["gen_ai.response.model"] = event.response_model
    if event.response_id:
        attributes["gen_ai.response.id"] = event.response_id
    if event.finish_reasons:
        attributes["gen_ai.response.finish_reasons"] = event.finish_reasons
    return attributes


def tool_start_attributes(event: ToolCallStart | ToolCall, *, capture: bool) -> dict[str, Any]:
    """`execute_tool {tool}` at its start (from the call's start, or from its end when the
    start was missed); the tool's own attributes (MCP) are merged in."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": event.tool,
        "gen_ai.tool.call.id": event.tool_call_id,
        "gen_ai.tool.type": TOOL_TYPES.get(event.provenance, "extension"),
        "zeroclaw.turn.id": event.correlation.turn_id,
        "zeroclaw.iteration": event.iteration,
        "openinference.span.kind": "TOOL",
        "tool.name": event.tool,
    }
    if event.span_attributes:
        attributes.update(event.span_attributes)
    if capture:
        attributes["gen_ai.tool.call.arguments"] = event.arguments
        attributes["input.value"] = event.arguments
        attributes["input.mime_type"] = "application/json"
    return attributes


def tool_end_attributes(event: ToolCall, *, capture: bool) -> dict[str, Any]:
    """What `execute_tool` gets at its end (a failure's error type is the observer's)."""
    attributes: dict[str, Any] = {
        "zeroclaw.tool.outcome": _OUTCOME_VALUES[event.outcome],
        "zeroclaw.tool.truncated_bytes": event.truncated_bytes,
        "zeroclaw.redaction.count": sum(event.redaction_counts.values()),
    }
    if event.receipt:
        attributes[RECEIPT_KEY] = event.receipt
    if capture:
        attributes["gen_ai.tool.call.result"] = event.result
        attributes["output.value"] = event.result
    return attributes


def approval_attributes(event: ApprovalDecision) -> dict[str, Any]:
    """`await_approval {tool}`: a guardrail, not a second tool call."""
    return {
        "gen_ai.tool.name": event.tool,
        "gen_ai.tool.call.id": event.tool_call_id,
        "zeroclaw.turn.id": event.correlation.turn_id,
        "zeroclaw.iteration": event.iteration,
        "zeroclaw.approval.decision": event.decision,
        "zeroclaw.approval.surface": event.surface,
        "openinference.span.kind": "GUARDRAIL",
    }


def attempt_attributes(event: ProviderAttempt) -> dict[str, Any]:
    """A `zeroclaw.provider.attempt` event (a retried provider request) on its `chat` span."""
    attributes: dict[str, Any] = {
        "zeroclaw.provider.attempt": event.attempt,
        "error.type": event.error_type,
        "zeroclaw.provider.retry_wait_s": event.wait_s,
    }
    if event.status is not None:
        attributes["http.response.status_code"] = event.status
    return attributes


def truncation_attributes(event: ToolCall) -> dict[str, Any]:
    """A `zeroclaw.truncation` event on a tool span whose result was cut."""
    return {
        "zeroclaw.tool.truncated_bytes": event.truncated_bytes,
        "zeroclaw.tool.truncated_chars": event.truncated_chars,
    }


def progress_attributes(event: ToolProgress) -> dict[str, Any]:
    """A `zeroclaw.tool.progress` event on the call's `execute_tool` span."""
    attributes: dict[str, Any] = {"zeroclaw.tool.progress": event.progress}
    if event.total is not None:
        attributes["zeroclaw.tool.progress_total"] = event.total
    if event.message:
        attributes["zeroclaw.tool.progress_message"] = event.message
    return attributes


def loop_attributes(event: LoopDetection) -> dict[str, Any]:
    """A `zeroclaw.loop_detection` event on the call's span (or the turn's root)."""
    return {
        "zeroclaw.loop_detection.kind": event.kind,
        "zeroclaw.loop_detection.severity": event.severity,
        "zeroclaw.loop_detection.message": event.message,
    }


def trimmed_attributes(event: ContextTrimmed) -> dict[str, Any]:
    """A `zeroclaw.context.trimmed` event on the turn's root: counts only."""
    return {
        "zeroclaw.context.reason": event.reason.value,
        "zeroclaw.iteration": event.iteration,
        "zeroclaw.context.messages_dropped": event.messages_dropped,
        "zeroclaw.context.turns_dropped": event.turns_dropped,
        "zeroclaw.context.tokens_before": event.tokens_before,
        "zeroclaw.context.tokens_after": event.tokens_after,
        "zeroclaw.context.token_budget": event.token_budget,
    }


def switch_attributes(event: ModelSwitched) -> dict[str, Any]:
    """A `zeroclaw.model.switch` event on the turn's root (shown names)."""
    return {
        "zeroclaw.model.switch.source": event.source.value,
        "zeroclaw.iteration": event.iteration,
        "zeroclaw.model.from": event.from_model,
        "zeroclaw.model.to": event.to_model,
        "zeroclaw.provider.from": event.from_provider,
        "zeroclaw.provider.to": event.to_provider,
    }


def steering_attributes(event: SteeringMessages) -> dict[str, Any]:
    """A `zeroclaw.steering` event on the turn's root: the count, never the text."""
    return {
        "zeroclaw.steering.count": event.count,
        "zeroclaw.steering.applied": event.applied,
        "zeroclaw.iteration": event.iteration,
    }


ROOT_EVENTS: dict[type, tuple[str, Callable[[Any], dict[str, Any]]]] = {
    ContextTrimmed: ("zeroclaw.context.trimmed", trimmed_attributes),
    ModelSwitched: ("zeroclaw.model.switch", switch_attributes),
    SteeringMessages: ("zeroclaw.steering", steering_attributes),
}
"""Turn-level facts recorded as events on the live root span: event name and attributes."""
