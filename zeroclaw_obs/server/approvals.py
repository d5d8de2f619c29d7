"""The `web` approval surface: calls waiting for an operator, and their decisions over HTTP.

`ApprovalBroker.ask` is the back-channel callback of every conversation's `ApprovalManager`
(wrapped in a `Backchannel` with surface `web` and the config's `backchannel_timeout_s`). A
call that needs a human becomes a `PendingApproval`: listed by `GET /v1/approvals`, announced
as `approval_request` on its turn's stream, and decided by `POST /v1/approvals/{id}`. The
manager audits the decision (surface `web`, `decided_by` the operator) and the
`await_approval` span covers the wait, as for any surface.

Risky part: the operator's name is client text, so it is redacted before it reaches the audit
log or a stream; the arguments shown are the gate's redacted, complete arguments; a wait that
times out or whose turn is cancelled leaves the list at once (`approval_decided`, surface
`runtime`). A sub-agent's call belongs to a delegated turn no client knows: it is listed,
streamed and decided under the top-level turn (`ApprovalRequest.top_turn_id`), with the
nested turn's id and the sub-agent's alias beside it (`nested_turn_id`, `agent`).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..approval import ApprovalRequest, Decision, SurfaceAnswer
from ..redaction import Redactor

if TYPE_CHECKING:
    from .streams import OperatorFeed, TurnHandle

__all__ = ["ApprovalBroker", "PendingApproval"]

OPERATOR_MAX_CHARS = 128


@dataclass(eq=False)
class PendingApproval:
    """One call waiting for an operator."""

    approval_id: str
    turn: TurnHandle
    request: ApprovalRequest
    shown_conversation: str
    shown_server: str | None
    requested_at: str
    answer: asyncio.Future[SurfaceAnswer] = field(repr=False)

    def to_json(self) -> dict[str, Any]:
        """The `GET /v1/approvals` entry (every text already redacted)."""
        request = self.request
        arguments: Any = request.arguments
        if arguments is None:
            arguments = json.loads(request.arguments_summary)
        return {
            "approval_id": self.approval_id,
            "turn_id": self.turn.turn_id,
            "conversation_id": self.shown_conversation,
            "tool": request.display_tool,
            "server": self.shown_server,
            "annotations": dict(request.annotations) if request.annotations is not None else None,
            "primary": list(request.primary),
            "arguments": dict(arguments),
            "requested_at": self.requested_at,
            # A sub-agent's call: its delegated turn and the sub-agent (None for a top-level
            # call). `turn_id` is always the top-level turn a client started.
            "nested_turn_id": request.turn_id if request.top_turn_id is not None else None,
            "agent": request.subagent,
        }


class ApprovalBroker:
    """Pending approvals of every conversation, oldest first."""

    def __init__(
        self,
        redactor: Redactor,
        turns: Callable[[str], TurnHandle | None],
        feed: OperatorFeed,
    ) -> None:
        self._redactor = redactor
        self._turns = turns
        self._feed = feed
        self._pending: dict[str, PendingApproval] = {}

    def pending(self) -> list[dict[str, Any]]:
        """`GET /v1/approvals`: oldest first."""
        return [p.to_json() for p in self._pending.values()]

    async def ask(self, request: ApprovalRequest) -> SurfaceAnswer | None:
        """Wait for the operator's answer (the `Backchannel` bounds the wait)."""
        # A sub-agent's call is listed and streamed under the top-level turn: its nested
        # turn is no turn a client started, so `/v1/turns` and the page do not know it.
        turn = self._turns(request.top_turn_id or request.turn_id)
        if turn is None:
            return None
        pending = PendingApproval(
            approval_id=uuid.uuid4().hex,
            turn=turn,
            request=request,
            shown_conversation=self._redactor.redact_text(turn.conversation_id),
            shown_server=(
                self._redactor.redact_text(request.server) if request.server is not None else None
            ),
            requested_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            answer=asyncio.get_running_loop().create_future(),
        )
        self._pending[pending.approval_id] = pending
        entry = pending.to_json()
        del entry["turn_id"], entry["conversation_id"]
        turn.publish({"type": "approval_request", **entry})
        answer: SurfaceAnswer | None = None
        try:
            answer = await pending.answer
            return answer
        finally:
            self._pending.pop(pending.approval_id, None)
            turn.publish(
                {
                    "type": "approval_decided",
                    "approval_id": pending.approval_id,
                    "decision": answer.decision.value if answer else Decision.NO.value,
                    "surface": "web" if answer else "runtime",
                    "decided_by": answer.decided_by if answer else "runtime-policy",
                }
            )

    def decide(
        self,
        approval_id: str,
        decision: Decision,
        *,
        replacement: str | None = None,
        operator: str | None = None,
    ) -> bool:
        """Answer a pending approval; False when it is unknown or already decided."""
        pending = self._pending.get(approval_id)
        if pending is None or pending.answer.done():
            return False
        shown = self._redactor.redact_text(operator) if operator else "web"
        pending.answer.set_result(
            SurfaceAnswer(
                decision=decision, surface="web", decided_by=shown, replacement=replacement
            )
        )
        del self._pending[approval_id]
        return True
