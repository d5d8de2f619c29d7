"""Recording step: slot texts, receipts, truncation, redaction, and the close of every slot.

Every call the model made owns exactly one `Slot`. Slots that never ran are filled by
preparation with the exact texts of LIFECYCLE §7; executed slots are filled by dispatch. Then
`SlotRecorder.close` does, in this order: receipt over the normalised output (before
truncation), redaction of the whole output with the runtime's one redactor, truncation of the
redacted text with the exact marker (`truncation.py`: redacting after the cut would leak the
secret a cut separates from its context), receipt appended after truncation, TurnEvent
`tool_result`, observer `ToolCall`. With `redact_history` off only the model-visible text is
the raw output cut; every other surface still gets the redacted-then-cut text.

Risky part: this runs once per call on the hot path. It never walks the history, and the
redactor runs once per slot; every surface (history, events, observer) shares that result.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..observability.events import ToolCall, ToolCallStart, ToolOutcome
from ..observability.observer import NoopObserver
from ..receipts import compact_json
from ..tools.base import Provenance, ToolResult
from .context import ResolvedAgentExecution, TurnState
from .events import TurnEvent
from .truncation import bound_result, truncate, truncated_bytes

__all__ = [
    "INTERRUPTED_TEXT",
    "Slot",
    "SlotRecorder",
    "call_key",
    "cancelled_by_hook_text",
    "canonical_json",
    "canonical_json_of",
    "canonical_key",
    "duplicate_text",
    "excluded_text",
    "executed_text",
    "format_seconds",
    "raised_text",
    "truncate",
    "truncated_bytes",
    "unknown_text",
]

# Built once (see receipts.compact_json): the display form of redacted arguments.
_DISPLAY_JSON = json.JSONEncoder(ensure_ascii=False, default=str)
_PLAIN_JSON = json.JSONEncoder(ensure_ascii=False)

INTERRUPTED_TEXT = "[interrupted by user before this tool produced a result]"
NO_OUTPUT = "(no output)"


def executed_text(result: ToolResult) -> tuple[str, bool]:
    """Slot text of an executed call: output / `(no output)`, or `Error: {error or output}`."""
    if result.success:
        return (result.output or NO_OUTPUT), True
    return f"Error: {result.error or result.output}", False


def raised_text(name: str, exc: BaseException) -> str:
    """`Error executing {name}: {message}` for a tool that raised.

    An exception without a message reads as its class name, so the model never sees a bare
    `Error executing x: `.
    """
    return f"Error executing {name}: {str(exc) or type(exc).__name__}"


def format_seconds(seconds: float) -> str:
    """`120` for whole seconds, `0.05` otherwise (never exponent notation)."""
    if seconds == int(seconds):
        return str(int(seconds))
    return f"{seconds:.6f}".rstrip("0").rstrip(".")


def unknown_text(name: str) -> str:
    """`Unknown tool: {name}`."""
    return f"Unknown tool: {name}"


def excluded_text(name: str) -> str:
    """`Tool not available in this turn: {name}`."""
    return f"Tool not available in this turn: {name}"


def cancelled_by_hook_text(reason: str) -> str:
    """`Cancelled by hook: {reason}`."""
    return f"Cancelled by hook: {reason}"


def duplicate_text(name: str) -> str:
    """`Skipped duplicate tool call '{name}' with identical arguments in this turn.`"""
    return f"Skipped duplicate tool call '{name}' with identical arguments in this turn."


@dataclass(slots=True)
class Slot:
    """The one result slot of one call, in the model's order."""

    index: int
    call_id: str
    name: str
    """The name as called (after hook rewrites)."""
    arguments: dict[str, Any]
    """The arguments as dispatched (or as they stood when the slot was decided)."""
    known_tool: bool = False
    provenance: str = Provenance.EXTENSION.value
    span_attributes: Mapping[str, Any] | None = None
    """What the tool adds to its `execute_tool` span (an MCP tool's `mcp.*` attributes)."""
    outcome: ToolOutcome | None = None
    text: str = ""
    """Normalised model-visible text before truncation and receipt."""
    success: bool = False
    error_type: str | None = None
    executed: bool = False
    """True when the tool itself ran (receipts and after-hooks only for these)."""
    start_ns: int = 0
    start_perf: float = 0.0
    model_text: str = ""
    """Final model-visible text: truncated, redacted (if `redact_history`), receipt appended."""
    receipt: str | None = None
    notes: list[str] = field(default_factory=list)
    """System notes (loop detection) appended to the model-visible text."""
    redacted_arguments: str = ""
    key: str | None = None
    """Canonical call key (dedup guard), computed once in preparation; loop detection reuses it."""
    canonical: tuple[dict[str, Any], str] | None = None
    """`(arguments, compact_json(arguments))`: the canonical JSON made for the key, or when the
    call was dispatched, for the receipt. It holds only while `arguments` is that very object
    (`canonical_json_of`): a rewrite replaces the dict, never edits it in place."""
    closed: bool = False
    """True once `SlotRecorder.close` reported the slot; it is never closed twice."""
    shown_name: str = ""
    """The name every surface shows (redacted), computed when the slot opens."""
    resolved_name: str | None = None
    """The registry name the call resolved to (`wx__storm_warnings` for a model's short
    `storm_warnings`); None when nothing answered to the name."""
    label: str = ""
    """The name telemetry labels the call by (spans, metrics, logs, progress): the shown form
    of `resolved_name` when the model used a short name, else `shown_name`. TurnEvents and
    history keep the model's spelling, so a client pairs them with the call it saw."""

    def fill(
        self,
        outcome: ToolOutcome,
        text: str,
        *,
        success: bool = False,
        error_type: str | None = None,
    ) -> Slot:
        """Decide the slot without running the tool."""
        self.outcome = outcome
        self.text = text
        self.success = success
        self.error_type = error_type
        return self

    @property
    def decided(self) -> bool:
        """True once the slot has an outcome."""
        return self.outcome is not None


class SlotRecorder:
    """Opens and closes slots: TurnEvents, observer events, receipts, truncation, redaction."""

    def __init__(self, execution: ResolvedAgentExecution, state: TurnState) -> None:
        self._execution = execution
        self._state = state
        config = execution.config
        self._max_chars = config.max_tool_result_chars
        self._redact_history = config.redact_history
        self._receipts = execution.receipts if config.receipts.enabled else None
        self._redactor = execution.redactor
        self._shown = execution.shown
        self._observer = execution.observer
        self._observed = type(execution.observer) is not NoopObserver
        """False on the no-op: the work done only for observers (their events, the clean-text
        marks the span guard and log chain read) is skipped."""
        self._events = state.events

    def open(self, slot: Slot) -> None:
        """Emit the pending card (`tool_call`) and `ToolCallStart`; start the slot's clock.

        A slot about to run (`executed`) with receipts on has its canonical arguments JSON
        taken now, if preparation did not already make it: the receipt signs the arguments
        as dispatched (LIFECYCLE §7), even if the tool edits its dict while it runs.
        """
        if self._receipts is not None and slot.executed and canonical_json_of(slot) is None:
            canonical = canonical_json(slot.arguments)
            slot.canonical = None if canonical is None else (slot.arguments, canonical)
        slot.start_ns = time.time_ns()
        slot.start_perf = time.perf_counter()
        observed = self._observed
        if observed:
            # The id came out of the redactor when the response was parsed (`parse.CallIds`),
            # but in a response of thousands of calls its bounded memory has let the id go
            # since: asked again here (a memory hit in any shorter turn), it is known when the
            # span observer lists the call's clean texts (`RuntimeSpan`), instead of being
            # scanned on the export thread, where RE2 trades the GIL with the turn.
            self._redactor.redact_text(slot.call_id)
        redacted = self._redactor.redact_value(slot.arguments)
        try:
            # Plain JSON values only: every key and string is the redactor's output, so the
            # text is marked as one and the span guard and the log chain skip it.
            text = _PLAIN_JSON.encode(redacted)
            slot.redacted_arguments = self._redactor.mark_clean(text) if observed else text
        except (TypeError, ValueError):
            # An object `redact_value` passed through (`str()` of it was never redacted):
            # the surfaces scan this text again.
            slot.redacted_arguments = _DISPLAY_JSON.encode(redacted)
        shown = slot.shown_name = self._shown_name(slot)
        resolved = slot.resolved_name
        slot.label = shown if resolved in (None, slot.name) else self._shown.tool(resolved)
        self._events(
            TurnEvent(
                type="tool_call",
                id=slot.call_id,
                name=shown,
                data={"arguments": redacted},
            )
        )
        if not observed:
            return
        correlation = self._state.correlation
        assert correlation is not None
        self._observer.on_event(
            ToolCallStart(
                correlation=correlation,
                iteration=self._state.iteration,
                tool_call_id=slot.call_id,
                tool=slot.label,
                provenance=slot.provenance,
                arguments=slot.redacted_arguments,
                time_ns=slot.start_ns,
                span_attributes=slot.span_attributes,
            )
        )

    def close(self, slot: Slot) -> None:
        """Finish a decided slot: receipt, truncation, redaction, `tool_result`, `ToolCall`."""
        end_perf = time.perf_counter()
        end_ns = time.time_ns()
        assert slot.outcome is not None
        if self._receipts is not None and slot.executed and slot.outcome is ToolOutcome.SUCCESS:
            slot.receipt = self._sign(slot)
        bounded = bound_result(slot.text, self._max_chars, self._redactor)
        redacted = bounded.text
        if self._redact_history:
            model_text = redacted
        else:
            model_text, _ = truncate(slot.text, self._max_chars)
        for note in slot.notes:
            # Notes quote tool names (the operator's): shown redacted outside the engine.
            shown_note = self._redactor.redact_text(note)
            model_text += f"\n\n{shown_note if self._redact_history else note}"
            redacted += f"\n\n{shown_note}"
        if slot.receipt is not None:
            model_text += f"\n\n[receipt: {slot.receipt}]"
        slot.model_text = model_text
        slot.closed = True
        shown = slot.shown_name or self._shown_name(slot)
        self._events(
            TurnEvent(
                type="tool_result",
                id=slot.call_id,
                name=shown,
                data={
                    "outcome": slot.outcome.value,
                    "success": slot.success,
                    "output": redacted,
                    "duration_ms": round((end_perf - slot.start_perf) * 1000, 3),
                    **({"receipt": slot.receipt} if slot.receipt else {}),
                },
            )
        )
        if not self._observed:
            return
        correlation = self._state.correlation
        assert correlation is not None
        self._observer.on_event(
            ToolCall(
                correlation=correlation,
                iteration=self._state.iteration,
                tool_call_id=slot.call_id,
                tool=slot.label or shown,
                known_tool=slot.known_tool,
                provenance=slot.provenance,
                outcome=slot.outcome,
                success=slot.success,
                arguments=slot.redacted_arguments,
                result=redacted,
                start_time_ns=slot.start_ns,
                time_ns=end_ns,
                duration_s=end_perf - slot.start_perf,
                error_type=slot.error_type,
                receipt=slot.receipt,
                truncated_chars=bounded.dropped_chars,
                truncated_bytes=bounded.dropped_bytes,
                redaction_counts=bounded.counts,
                span_attributes=slot.span_attributes,
            )
        )

    def _sign(self, slot: Slot) -> str:
        assert self._receipts is not None
        now = int(time.time())
        canonical = canonical_json_of(slot)
        if canonical is not None:
            # The JSON the key (or the dispatch) already made: encoding it again cost as much
            # as the HMAC.
            return self._receipts.sign_canonical(slot.name, canonical, slot.text, now)
        try:
            return self._receipts.generate(slot.name, slot.arguments, slot.text, now)
        except (TypeError, ValueError):
            # `@tool` validation may dispatch typed values (a `date`, a model) that JSON cannot
            # encode. Sign their JSON form as history shows it (`default=str`), so a successful
            # run still gets a receipt a verifier can check, instead of crashing the turn.
            jsonable = json.loads(json.dumps(slot.arguments, ensure_ascii=False, default=str))
            return self._receipts.generate(slot.name, jsonable, slot.text, now)

    def _shown_name(self, slot: Slot) -> str:
        # A name the model invented is model output like any other: it may carry a secret, and
        # is redacted each time (never memoised: the model could invent names without end).
        # A registry name is the operator's, a payload too: its shown form is memoised per agent.
        if slot.known_tool:
            return self._shown.tool(slot.name)
        return self._redactor.redact_text(slot.name)

    def record_unrun(self, slot: Slot) -> None:
        """Open and close a slot that never ran (denied, unknown, duplicate, …)."""
        self.open(slot)
        self.close(slot)


def canonical_key(name: str, arguments: dict[str, Any]) -> str:
    """(trimmed lowercase name, canonical compact JSON) as one string: dedup and repeat keys."""
    return call_key(name, arguments, canonical_json(arguments))


def call_key(name: str, arguments: dict[str, Any], canonical: str | None) -> str:
    """`canonical_key` from the arguments' `canonical_json`, already made (None: not JSON)."""
    body = canonical
    if body is None:
        body = repr(sorted(arguments.items(), key=lambda kv: kv[0]))
    return f"{name.strip().lower()}\x00{body}"


def canonical_json(arguments: dict[str, Any]) -> str | None:
    """`compact_json(arguments)`, or None for arguments JSON cannot encode."""
    try:
        return compact_json(arguments)
    except (TypeError, ValueError):
        return None


def canonical_json_of(slot: Slot) -> str | None:
    """The slot's canonical arguments JSON while it still describes `slot.arguments`."""
    canonical = slot.canonical
    if canonical is None or canonical[0] is not slot.arguments:
        return None
    return canonical[1]
