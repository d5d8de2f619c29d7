"""The attributes of each span (DESIGN §3), built from observer events, as plain dicts.

`tracing.py` decides when spans start and end and which span an event belongs to; this module
says what they carry: the GenAI conventions, the OpenInference names backends such as Arize
Phoenix read, and the `zeroclaw.*` extensions. Content (arguments, results, messages, the
user's message and the answer) is added only when its capture flag is on; every text in an
event is already redacted by the engine.
"""

from __future__ import annotations

from typing import Any

from ..events import (
    AgentEnd,
    AgentStart,
    ApprovalDecision,
    LlmRequest,
    LlmResponse,
    ToolCall,
    ToolCallStart,
)

__all__ = [
    "TOOL_TYPES",
    "approval_attributes",
    "chat_end_attributes",
    "chat_start_attributes",
    "tool_end_attributes",
    "tool_start_attributes",
    "turn_end_attributes",
    "turn_start_attributes",
]

TOOL_TYPES = {"native": "function", "extension": "extension"}
"""`gen_ai.tool.type` by provenance; anything else is an extension."""


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
        "zeroclaw.tool.outcome": event.outcome.value,
        "zeroclaw.tool.truncated_bytes": event.truncated_bytes,
        "zeroclaw.redaction.count": sum(event.redaction_counts.values()),
    }
    if event.receipt:
        attributes["zeroclaw.tool.receipt"] = event.receipt
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
