"""The approval gate: ask the `ApprovalManager` about one prompt-required call.

The gate owns the time a human spends deciding, so that wait is reported as its own
`ApprovalDecision` event (the `await_approval` span) and never counts as tool latency. The
decision itself, the session allowlist and the audit entry belong to `approval/`.

The gate also decides what the operator is shown: the call's arguments, already redacted by the
caller, complete and with the arguments that decide the call first. Which arguments those are
comes from `PRIMARY_ARGUMENTS` (known tools such as `shell` → `command`), else from the tool
schema's `required` list; the rest follow in key order. The same order is used for the
`arguments_summary` JSON that the audit entry records and a back-channel operator reads, and
for the `arguments` a terminal renders one per line. When the call carries none of the
deciding arguments named this way, every argument counts as deciding: nothing the gate cannot
rule out is ever shortened.

For an MCP tool the gate also passes the server and the annotations on: only the standard
hints (`STANDARD_HINTS`), booleans as they are and `title` (server text) through the
redactor, with the server name; the terminal shows them on the tool's line and the audit entry
records them. Any other annotation key a server sends is never shown.

Risky part: nothing here may cut an argument. A summary cut at a fixed length let a long
model-added key (sorted first) push `command` out of view, so an operator approved a
`curl … | sh` it never saw. The summary is therefore complete, whatever its size; only the
terminal bounds how much of the non-deciding rest it prints, with an explicit marker
(`approval/surfaces.py`), and never the deciding arguments.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..approval import ApprovalManager, ApprovalOutcome, ApprovalRequest, Decision
from ..observability.events import ApprovalDecision, ObserverEvent
from .context import TurnState

__all__ = [
    "PRIMARY_ARGUMENTS",
    "STANDARD_HINTS",
    "GateVerdict",
    "ask_approval",
    "order_arguments",
    "primary_arguments",
    "shown_annotations",
    "summarize_arguments",
]

PRIMARY_ARGUMENTS: Mapping[str, tuple[str, ...]] = {
    "shell": ("command",),
    "schedule": ("command", "action"),
    "cron_add": ("command", "prompt", "schedule"),
    "cron_update": ("job_id", "patch"),
    "cron_run": ("job_id",),
    "file_write": ("path", "content"),
    "file_edit": ("path", "old_string", "new_string"),
    "http_request": ("url", "method"),
    "web_fetch": ("url",),
    "browser_open": ("url",),
    "git_operations": ("operation",),
}
"""The arguments that decide a call of a known tool, shown first in this order (ZeroClaw's
names). An MCP wrapper `server__tool` is looked up by its full name, then by `tool`."""


STANDARD_HINTS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
"""The MCP `ToolAnnotations` keys an operator is shown and the audit records, in this order."""


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """What the gate decided for one call."""

    approved: bool
    outcome: ApprovalOutcome


def primary_arguments(tool: str, schema: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The names of the arguments that decide a call of `tool`, in the order they are shown.

    Args:
        tool: the resolved tool name.
        schema: the tool's JSON schema; its `required` list is used for a tool that
            `PRIMARY_ARGUMENTS` does not know.

    Returns:
        The names, possibly empty; arguments a call does not carry are simply skipped later.
    """
    known = PRIMARY_ARGUMENTS.get(tool)
    if known is None and "__" in tool:
        known = PRIMARY_ARGUMENTS.get(tool.rsplit("__", 1)[1])
    if known is not None:
        return known
    required = schema.get("required") if isinstance(schema, Mapping) else None
    if not isinstance(required, list):
        return ()
    return tuple(dict.fromkeys(name for name in required if isinstance(name, str)))


def order_arguments(
    redacted_arguments: Mapping[str, Any], primary: tuple[str, ...]
) -> dict[str, Any]:
    """The arguments with the `primary` ones first (in that order), then the rest by key.

    Args:
        redacted_arguments: the arguments after redaction.
        primary: the deciding argument names, from `primary_arguments`.

    Returns:
        A new dict holding every argument, none shortened.
    """
    ordered = {name: redacted_arguments[name] for name in primary if name in redacted_arguments}
    rest = sorted((key for key in redacted_arguments if key not in ordered), key=str)
    ordered.update((key, redacted_arguments[key]) for key in rest)
    return ordered


def summarize_arguments(
    redacted_arguments: object,
    *,
    tool: str = "",
    schema: Mapping[str, Any] | None = None,
) -> str:
    """The complete, already-redacted arguments as one JSON object, deciding arguments first.

    This is what the audit entry records and a back-channel operator reads. It is never cut.

    Args:
        redacted_arguments: the arguments after redaction (a dict; anything else is dumped
            as it is).
        tool: the resolved tool name, which picks the deciding arguments.
        schema: the tool's JSON schema, for a tool `PRIMARY_ARGUMENTS` does not know.

    Returns:
        JSON text with non-ASCII characters kept.
    """
    if isinstance(redacted_arguments, Mapping):
        redacted_arguments = order_arguments(redacted_arguments, primary_arguments(tool, schema))
    return _to_json(redacted_arguments)


def _to_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _shown_whole(arguments: Mapping[str, Any] | None, primary: tuple[str, ...]) -> tuple[str, ...]:
    """The keys a surface must show whole: the deciding ones the call carries, or all of them
    when it carries none (a tool unknown to the table, an MCP tool that names it otherwise)."""
    if arguments is None:
        return ()
    present = tuple(name for name in primary if name in arguments)
    return present or tuple(arguments)


def shown_annotations(
    annotations: Mapping[str, Any], redact: Callable[[str], str] | None = None
) -> dict[str, Any]:
    """An MCP tool's annotations as an operator is shown them and the audit records them.

    Args:
        annotations: the annotations as the server listed them.
        redact: the runtime redactor's `redact_text`, applied to `title` (server text); None
            leaves `title` out.

    Returns:
        The `STANDARD_HINTS` keys only, in that order: hints only when boolean, `title` only
        when a string; every other key or value is left out.
    """
    shown: dict[str, Any] = {}
    for key in STANDARD_HINTS:
        value = annotations.get(key) if isinstance(annotations, Mapping) else None
        if key == "title":
            if isinstance(value, str) and redact is not None:
                shown[key] = redact(value)
        elif isinstance(value, bool):
            shown[key] = value
    return shown


async def ask_approval(
    manager: ApprovalManager,
    state: TurnState,
    *,
    tool: str,
    call_id: str,
    redacted_arguments: object,
    emit: Callable[[ObserverEvent], None],
    schema: Mapping[str, Any] | None = None,
    shown_tool: str | None = None,
    mcp_server: str | None = None,
    mcp_annotations: Mapping[str, Any] | None = None,
    redact: Callable[[str], str] | None = None,
) -> GateVerdict:
    """Ask for a decision and report the wait.

    Args:
        manager: the agent's approval manager.
        state: the turn (ids for the audit entry and the event).
        tool: the resolved tool name.
        call_id: the call's correlation id.
        redacted_arguments: the arguments after redaction; raw arguments never reach a prompt.
        emit: the observer's `on_event`.
        schema: the tool's JSON schema; its `required` arguments are shown first for a tool
            `PRIMARY_ARGUMENTS` does not know.
        shown_tool: the redacted form of the tool name, for the prompt and the audit entry;
            None shows `tool` as it is.
        mcp_server: the server of an MCP tool, shown and audited; None for any other tool.
        mcp_annotations: the MCP tool's annotations as its server listed them; filtered by
            `shown_annotations` before anyone sees them.
        redact: the runtime redactor's `redact_text`, applied to the server name and the
            annotation `title`; None leaves `title` out and shows the server as it is.

    Raises:
        asyncio.CancelledError: the turn was cancelled while waiting.
    """
    primary = primary_arguments(tool, schema)
    arguments: dict[str, Any] | None = None
    if isinstance(redacted_arguments, Mapping):
        arguments = order_arguments(redacted_arguments, primary)
    request = ApprovalRequest(
        tool=tool,
        arguments_summary=_to_json(redacted_arguments if arguments is None else arguments),
        turn_id=state.turn_id,
        tool_call_id=call_id,
        top_turn_id=state.top_turn_id,
        subagent=(
            None
            if state.top_turn_id is None or state.correlation is None
            else state.correlation.agent_alias
        ),
        arguments=arguments,
        primary=_shown_whole(arguments, primary),
        shown_tool=shown_tool,
        server=mcp_server if mcp_server is None or redact is None else redact(mcp_server),
        annotations=(
            None if mcp_server is None else shown_annotations(mcp_annotations or {}, redact)
        ),
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
