"""The approval gate: ask the `ApprovalManager` about one prompt-required call.

The gate owns the time a human spends deciding, so that wait is reported as its own
`ApprovalDecision` event (the `await_approval` span) and never counts as tool latency. The
decision itself, the session allowlist and the audit entry belong to `approval/`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..approval import ApprovalManager, ApprovalOutcome, ApprovalRequest, Decision
from ..observability.events import ApprovalDecision, ObserverEvent
from .context import TurnState

__all__ = ["GateVerdict", "ask_approval", "summarize_arguments"]

SUMMARY_LIMIT = 200


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """What the gate decided for one call."""

    approved: bool
    outcome: ApprovalOutcome


def summarize_arguments(redacted_arguments: object) -> str:
    """A one-line summary of already-redacted arguments for prompts and audit entries."""
    text = json.dumps(redacted_arguments, ensure_ascii=False, default=str, sort_keys=True)
    if len(text) > SUMMARY_LIMIT:
        text = text[: SUMMARY_LIMIT - 1] + "…"
    return text


async def ask_approval(
    manager: ApprovalManager,
    state: TurnState,
    *,
    tool: str,
    call_id: str,
    redacted_arguments: object,
    emit: Callable[[ObserverEvent], None],
) -> GateVerdict:
    """Ask for a decision and report the wait.

    Args:
        manager: the agent's approval manager.
        state: the turn (ids for the audit entry and the event).
        tool: the resolved tool name.
        call_id: the call's correlation id.
        redacted_arguments: the arguments after redaction; raw arguments never reach a prompt.
        emit: the observer's `on_event`.

    Raises:
        asyncio.CancelledError: the turn was cancelled while waiting.
    """
    request = ApprovalRequest(
        tool=tool,
        arguments_summary=summarize_arguments(redacted_arguments),
        turn_id=state.turn_id,
        tool_call_id=call_id,
    )
    start_ns = time.time_ns()
    start = time.perf_counter()
    outcome = await manager.decide(request)
    wait = time.perf_counter() - start
    assert state.correlation is not None
    emit(
        ApprovalDecision(
            correlation=state.correlation,
            iteration=state.iteration,
            tool_call_id=call_id,
            tool=tool,
            decision=outcome.decision.value,
            surface=outcome.surface,
            wait_start_ns=start_ns,
            wait_end_ns=time.time_ns(),
            wait_s=wait,
        )
    )
    approved = outcome.decision in (Decision.YES, Decision.ALWAYS) and not outcome.runtime_denied
    return GateVerdict(approved=approved, outcome=outcome)
