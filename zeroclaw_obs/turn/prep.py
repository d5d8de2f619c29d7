"""Preparation: each call of one response, in the model's order, through LIFECYCLE §4.

1. `before_tool_call` hooks (cancel / rewrite).
2. Channel delivery defaults.
3. The `approved` marker reset; (beyond) unknown, excluded and invalid-argument calls get
   their slot here, before the gate, so nobody approves a call that cannot run.
4. The repeated prompt-required `shell` guard (aborts the turn).
5. The approval gate; an MCP tool's server and annotations go with it, so a
   destructive or unannotated MCP tool needs a by-name approval (DESIGN §7).
6. `approved: true` restored on marker tools that were approved.
7. The duplicate guard.

A call that fails a step owns its slot from then on; only the survivors are dispatched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..approval import DENIED_BY_USER, Requirement
from ..errors import TurnAborted
from ..observability.events import ApprovalDecision, ObserverEvent, ToolOutcome
from ..tools.base import ArgumentError, Tool
from ..tools.mcp import McpToolWrapper
from .approval_gate import ask_approval
from .context import ResolvedAgentExecution, TurnState
from .hooks import CancelCall, HookCall
from .parse import ParsedToolCall
from .results import (
    Slot,
    call_key,
    cancelled_by_hook_text,
    canonical_json,
    canonical_key,
    duplicate_text,
    excluded_text,
    unknown_text,
)
from .specs import EffectiveTools

__all__ = [
    "CHANNEL_AWARE_TOOLS",
    "DEDUP_ALWAYS_EXEMPT",
    "MARKER_TOOLS",
    "PreparedCall",
    "prepare_calls",
    "shell_repeat_abort_text",
]

MARKER_TOOLS = frozenset({"shell", "schedule", "cron_add", "cron_update", "cron_run"})
CHANNEL_AWARE_TOOLS = frozenset({"ask_user", "poll", "escalate_to_human"})
NO_DEFAULT_CHANNELS = frozenset({"agent", "daemon"})
DEDUP_ALWAYS_EXEMPT = frozenset({"spawn_subagent", "delegate"})


def shell_repeat_abort_text(tool: str = "shell") -> str:
    """The exact abort text of the repeated prompt-required shell guard."""
    return (
        f"Agent loop aborted: repeated prompt-required tool call '{tool}' with identical "
        "arguments before approval."
    )


@dataclass(slots=True)
class PreparedCall:
    """A call after preparation: its slot (decided or not) and the tool to run."""

    slot: Slot
    tool: Tool | None = None
    needs_approval: bool = False
    """The call required a prompt (even if approved): the batch then runs sequentially."""

    @property
    def runnable(self) -> bool:
        """True when the call survived every step and must be dispatched."""
        return not self.slot.decided and self.tool is not None


async def prepare_calls(
    execution: ResolvedAgentExecution,
    state: TurnState,
    tools: EffectiveTools,
    calls: list[ParsedToolCall],
) -> list[PreparedCall]:
    """Run every call of one response through preparation, in order.

    Raises:
        TurnAborted: the repeated prompt-required shell guard fired.
        asyncio.CancelledError: a cancellation the turn's scope did not request. The turn's
            own cancel (e.g. while waiting for approval) returns normally with the undecided
            calls left for dispatch to interrupt.
    """
    seen: set[str] = set()
    asked_now: set[str] = set()
    exempt = DEDUP_ALWAYS_EXEMPT.union(execution.config.dedup_exempt_tools)
    prepared: list[PreparedCall] = []
    try:
        for index, call in enumerate(calls):
            item = await _prepare_one(execution, state, tools, index, call)
            prepared.append(item)
            if item.runnable:
                await _gate(execution, state, item, asked_now, exempt)
            if item.runnable:
                _dedup(item, seen, exempt)
    except asyncio.CancelledError as exc:
        if not state.cancellation.owns(exc):
            raise
        state.cancellation.absorb()
        # Calls decided before the cancel keep their slot (denied stays denied); the call being
        # prepared and the rest never run: dispatch sees the cancel and interrupts them.
        if prepared and prepared[-1].runnable:
            prepared[-1].tool = None
        prepared.extend(
            PreparedCall(slot=Slot(index=i, call_id=c.call_id, name=c.name, arguments=c.arguments))
            for i, c in enumerate(calls[len(prepared) :], start=len(prepared))
        )
    state.prompted_calls |= asked_now
    return prepared


async def _prepare_one(
    execution: ResolvedAgentExecution,
    state: TurnState,
    tools: EffectiveTools,
    index: int,
    call: ParsedToolCall,
) -> PreparedCall:
    slot = Slot(index=index, call_id=call.call_id, name=call.name, arguments=call.arguments)
    item = PreparedCall(slot=slot)
    if execution.hooks.has_before:
        hooked = await execution.hooks.run_before(
            HookCall(
                name=call.name,
                arguments=dict(call.arguments),
                call_id=call.call_id,
                turn_id=state.turn_id,
            )
        )
        if isinstance(hooked, CancelCall):
            slot.fill(ToolOutcome.CANCELLED_BY_HOOK, cancelled_by_hook_text(hooked.reason))
            return item
        slot.name, slot.arguments = hooked.name, hooked.arguments
    resolution = tools.resolve(slot.name)
    tool = resolution.tool
    if tool is not None:
        slot.known_tool = True
        slot.resolved_name = tool.name
        slot.provenance = tool.provenance.value
        span_attributes = getattr(tool, "span_attributes", None)
        if span_attributes is not None:
            slot.span_attributes = span_attributes()
    # Exclusion before unknown (LIFECYCLE §2): an excluded name is refused as excluded even
    # when no tool answers to that spelling.
    if resolution.status == "excluded":
        slot.fill(ToolOutcome.EXCLUDED, excluded_text(slot.name))
        return item
    if resolution.status == "unknown" or tool is None:
        slot.fill(ToolOutcome.UNKNOWN, unknown_text(slot.name))
        return item
    if call.arguments_error is not None:
        slot.fill(ToolOutcome.ERROR, f"Error: invalid arguments: {call.arguments_error}")
        return item
    arguments = _with_delivery_default(tool.name, slot.arguments, state.channel)
    validated = _validate(tool, arguments)
    if isinstance(validated, ArgumentError):
        slot.fill(ToolOutcome.ERROR, f"Error: invalid arguments: {validated.message}")
        return item
    if tool.name in MARKER_TOOLS:
        # The model can never pre-approve itself: the runtime owns this key.
        validated = {**validated, "approved": False}
    slot.arguments = validated
    item.tool = tool
    return item


def _with_delivery_default(tool: str, arguments: dict, channel: str) -> dict:
    needs_default = tool in CHANNEL_AWARE_TOOLS and channel not in NO_DEFAULT_CHANNELS
    if needs_default and "channel" not in arguments:
        return {**arguments, "channel": channel}
    return arguments


def _validate(tool: Tool, arguments: dict) -> dict | ArgumentError:
    if tool.name not in MARKER_TOOLS or "approved" not in arguments:
        return tool.validate_arguments(arguments)
    # The marker key is the runtime's, not the model's: the model's value is discarded, so it
    # is never validated. A schema that declares the key sees the runtime's `false` instead.
    properties = tool.parameters_schema().get("properties", {})
    if "approved" in properties:
        return tool.validate_arguments({**arguments, "approved": False})
    return tool.validate_arguments({k: v for k, v in arguments.items() if k != "approved"})


async def _gate(
    execution: ResolvedAgentExecution,
    state: TurnState,
    item: PreparedCall,
    asked_now: set[str],
    exempt: set[str] | frozenset[str],
) -> None:
    assert item.tool is not None
    slot, name = item.slot, item.tool.name
    mcp = item.tool if isinstance(item.tool, McpToolWrapper) else None
    requirement = execution.approval.requirement(
        name,
        read_only=item.tool.read_only,
        mcp_annotations=None if mcp is None else mcp.annotations,
    )
    if requirement is Requirement.PROMPT:
        item.needs_approval = True
        key = canonical_key(name, slot.arguments)
        if name == "shell" and key in asked_now and name not in exempt:
            # An identical repeat in this response is a duplicate (step 7); asking about it
            # again would consume a second answer for a call that will be skipped anyway.
            slot.fill(ToolOutcome.DEDUPLICATED, duplicate_text(slot.name))
            return
        if name == "shell" and key in state.prompted_calls:
            raise TurnAborted(shell_repeat_abort_text(name))
        asked_now.add(key)
        shown = execution.shown.tool(name)
        verdict = await ask_approval(
            execution.approval,
            state,
            tool=name,
            call_id=slot.call_id,
            redacted_arguments=execution.redactor.redact_value(slot.arguments),
            emit=_ShownApproval(execution.observer.on_event, shown),
            schema=item.tool.parameters_schema(),
            shown_tool=shown,
            mcp_server=None if mcp is None else mcp.server,
            mcp_annotations=None if mcp is None else mcp.annotations,
            redact=execution.redactor.redact_text,
        )
        outcome = verdict.outcome
        if outcome.replacement is not None:
            slot.fill(ToolOutcome.REPLACED, outcome.replacement, success=True)
            return
        if not verdict.approved:
            slot.fill(ToolOutcome.DENIED, outcome.slot_text or DENIED_BY_USER)
            return
    if name in MARKER_TOOLS and requirement is not Requirement.NOT_REQUIRED:
        slot.arguments = {**slot.arguments, "approved": True}


class _ShownApproval:
    """Emits the gate's `ApprovalDecision` under the tool's shown (redacted) name.

    The gate and the approval manager work with the real name (the session allowlist is keyed
    by it); observers, and the spans, metric labels and logs behind them, get the shown one.
    """

    __slots__ = ("_emit", "_tool")

    def __init__(self, emit: Callable[[ObserverEvent], None], tool: str) -> None:
        self._emit = emit
        self._tool = tool

    def __call__(self, event: ObserverEvent) -> None:
        if isinstance(event, ApprovalDecision) and event.tool != self._tool:
            event = replace(event, tool=self._tool)
        self._emit(event)


def _dedup(item: PreparedCall, seen: set[str], exempt: set[str] | frozenset[str]) -> None:
    slot = item.slot
    if slot.name in exempt or (item.tool is not None and item.tool.name in exempt):
        return
    canonical = canonical_json(slot.arguments)
    if canonical is not None:
        slot.canonical = (slot.arguments, canonical)  # the receipt signs the same text
    key = slot.key = call_key(slot.name, slot.arguments, canonical)
    if key in seen:
        slot.fill(ToolOutcome.DEDUPLICATED, duplicate_text(slot.name))
    else:
        seen.add(key)
