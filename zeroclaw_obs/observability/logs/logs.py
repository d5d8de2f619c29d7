"""Structured logs: one JSON line per lifecycle fact, scrubbed by the runtime's one `Redactor`.

`LogObserver` writes the DESIGN §3 log events (`turn_start` … `turn_end`) with the ids that
join a log line to its span. `build_logger` builds the JSON-lines structlog pipeline for our
own records, and `route_stdlib_logging` sends records we did not create (stdlib logging from
libraries) through the same processors, so both meet the same `RedactingProcessor`.

Risky parts:
- The redaction step is the last line of defence for everything any processor added, the
  formatted traceback included. It must run after every processor that adds text and right
  before the renderer; `build_processors` fixes that order and a test holds it there.
- Nothing here touches structlog's or logging's global configuration: loggers are built from
  explicit processors, and the stdlib handler is returned so the caller can remove it.
- The turn's path pays for a tuple and a queue append per event, no more: `LogObserver` hands
  the event, its span ids and the time to `QueuedLogger`'s bounded queue (in the runtime, to
  the queue it shares with metrics and the tree: `signal_queue.SignalQueue`), and one worker
  thread builds the fields, runs the processors (redaction included; `LineWriter`, without
  structlog's per-line bound-logger plumbing, redacts and encodes our flat lines in one pass:
  `flat_json.FlatJsonRenderer`) and writes each batch in one go. A full queue drops lines
  and counts them (`zeroclaw_telemetry_dropped_total{signal="logs"}`); it never blocks the
  turn. Lines are written at the end of every turn, every `schedule_delay_s` while no burst
  is on, the batches over half the queue during one, and at shutdown (with a deadline): a
  process killed outright loses the lines of the last second (of a burst, up to half the
  queue).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..events import (
    CALL_CANCELLED,
    NO_IDS,
    AgentEnd,
    AgentStart,
    ApprovalDecision,
    ContextTrimmed,
    ContextTrimReason,
    Correlation,
    EventIds,
    LlmRequest,
    LlmResponse,
    LoopDetection,
    ModelSwitched,
    ObserverEvent,
    ProviderAttempt,
    SteeringMessages,
    ToolCall,
    ToolCallStart,
    ToolOutcome,
    TurnOutcomeKind,
)
from ..health import HealthCounter, Signal, TelemetryHealth
from .chain import (
    BufferedWriteLogger,
    Line,
    LineWriter,
    RedactingProcessor,
    add_event_time,
    build_logger,
    build_processors,
    route_stdlib_logging,
)
from .queued import QueuedLogger

if TYPE_CHECKING:
    from ..signal_queue import Queued, SignalQueue

__all__ = [
    "BufferedWriteLogger",
    "LineWriter",
    "LogObserver",
    "QueuedLogger",
    "RedactingProcessor",
    "add_event_time",
    "build_logger",
    "build_processors",
    "route_stdlib_logging",
]


_NO_SPAN = (None, None)
_TOOL_LEVELS = {ToolOutcome.ERROR: logging.WARNING, ToolOutcome.INTERRUPTED: logging.WARNING}


_TURN_LEVELS = {TurnOutcomeKind.ABORTED: logging.WARNING, TurnOutcomeKind.ERROR: logging.ERROR}


_LOOP_LEVELS = {"abort": logging.ERROR}


_LLM_FAILURE_LEVELS = {CALL_CANCELLED: logging.WARNING}


class LogObserver:
    """Writes one structlog event per lifecycle fact, with the ids that join it to its span.

    Every event carries `trace_id`, `span_id` (null when no tracing side is given or the span
    is unknown), `turn_id`, `channel` and `agent`, and a sub-agent's turn `parent_agent_alias`
    (the agent that delegated it); tool events add `tool_call_id` and `tool`.
    The ids come from the span step of the telemetry chain (`record(event, ids)`): tool events
    take their tool span's, `llm_*` their `chat` span's, `approval_decision` its
    `await_approval` span's (each falling back to the root's), the others the root's;
    `on_event` alone writes null ids. A provider request sent again is an `llm_retry` warning
    (`attempt`, `error_type`, `status`, `wait_ms`) between the call's `llm_request` and
    `llm_response`. Leaving the oldest turns out of the requests is a `context_trimmed` line
    (`reason` `budget` at info, `overflow` at warning; counts only). A model switch is a
    `model_switched` line (shown names); each steering message appended to the turn is a
    `steering_message` line with its length (never its text), messages the turn ended before
    appending one `steering_dropped` warning with their count.

    Content: the redacted `arguments` and `result` of tool calls are written only with
    `capture_content=True`. Off by default: spans already carry the redacted content
    (DESIGN §3) and a log line joins them by `trace_id`, while logs are copied to more places,
    kept longer, and would grow by up to `max_tool_result_chars` per call.

    Args:
        logger: a structlog logger (see `build_logger`), a `LineWriter`, or anything with
            their `log` method; a `QueuedLogger` gets the events themselves (`defer`) and
            builds the fields on its worker.
        capture_content: add redacted `arguments` / `result` to tool events.
        flush: called after each `turn_end` line, so a turn's lines are in the file when it
            ends (`build_logger` does not flush info lines one by one); e.g. `stream.flush`.
        health: where events this observer fails on are counted (`observer_errors`, signal
            `logs`), besides `errors`.
        queue: the queue that metrics, log lines and the trace tree share
            (`signal_queue.SignalQueue`): the observer joins it, and its worker builds the
            lines of each batch and writes them through the `QueuedLogger` (`logger`), each
            stamped with the time the turn queued the event, as `defer` does; then the queue,
            not this observer, is the chain's signal.
    """

    def __init__(
        self,
        logger: Any,
        *,
        capture_content: bool = False,
        flush: Callable[[], None] | None = None,
        health: TelemetryHealth | None = None,
        queue: SignalQueue | None = None,
    ) -> None:
        if queue is not None and not isinstance(logger, QueuedLogger):
            raise TypeError("a log observer on a signal queue writes through a QueuedLogger")
        self.errors = 0
        """Events that failed to log (never raised into the turn)."""
        self._health = health
        self._log = logger.log
        self._queued = logger if isinstance(logger, QueuedLogger) else None
        self._defer = logger.defer if isinstance(logger, QueuedLogger) else None
        self._flush = flush
        self._capture = capture_content
        self._handlers: dict[type, Callable[[Any, EventIds], list[Line]]] = {
            AgentStart: self._on_agent_start,
            LlmRequest: self._on_llm_request,
            LlmResponse: self._on_llm_response,
            ProviderAttempt: self._on_provider_attempt,
            ToolCallStart: self._on_tool_call_start,
            ToolCall: self._on_tool_call,
            ApprovalDecision: self._on_approval,
            LoopDetection: self._on_loop_detection,
            ContextTrimmed: self._on_context_trimmed,
            ModelSwitched: self._on_model_switched,
            SteeringMessages: self._on_steering,
            AgentEnd: self._on_agent_end,
        }
        if queue is not None:
            queue.add(self)

    lost_as = Signal.LOGS
    """Events of its kinds that the signal queue loses are counted as lost log lines."""

    def kinds(self) -> Iterable[type]:
        """The event types it writes lines for (`QueuedSignal`)."""
        return self._handlers.keys()

    def apply(self, batch: Sequence[Queued]) -> None:
        """Write the lines of a signal queue's batch (`QueuedSignal`): the items `defer` would
        have queued, written at once on the queue's worker."""
        handlers, lines = self._handlers, self._lines
        mine = [
            (when, lines, (handlers[type(event)], event, ids))
            for when, event, ids in batch
            if type(event) in handlers
        ]
        if mine:
            self._queued.write(mine)  # type: ignore[union-attr]  # checked in __init__

    def on_event(self, event: ObserverEvent) -> None:
        """Log `event` with null ids. Never raises."""
        self.record(event, NO_IDS)

    def record(self, event: ObserverEvent, ids: EventIds) -> None:
        """Log `event` with the ids of its spans (the chain's span step). Never raises; blocks
        only as long as the logger's stream does.

        With a `QueuedLogger` the turn only queues the event and its ids: the worker builds
        the fields (`QueuedLogger.defer`; events are read-only, ids are strings)."""
        handler = self._handlers.get(type(event))
        if handler is None:
            return
        if self._defer is not None:
            self._defer(self._lines, handler, event, ids)
        else:
            try:
                for level, name, fields in handler(event, ids):
                    self._log(level, name, **fields)
            except Exception:
                self._count_error()
                return
        if self._flush is not None and type(event) is AgentEnd:
            self._flush()

    def _lines(
        self, handler: Callable[[Any, EventIds], list[Line]], event: Any, ids: EventIds
    ) -> list[Line]:
        """`handler`'s lines, on the log worker; a failure is counted, never raised."""
        try:
            return handler(event, ids)
        except Exception:
            self._count_error()
            return []

    def _count_error(self) -> None:
        self.errors += 1
        if self._health is not None:
            self._health.increment(HealthCounter.OBSERVER_ERRORS, Signal.LOGS)

    def _context(
        self, correlation: Correlation, ids: tuple[str, str] | None, **fields: Any
    ) -> dict[str, Any]:
        trace_id, span_id = ids if ids is not None else (None, None)
        context = {
            "trace_id": trace_id,
            "span_id": span_id,
            "turn_id": correlation.turn_id,
            "channel": correlation.channel,
            "agent": correlation.agent_alias,
            **fields,
        }
        if correlation.parent_agent_alias is not None:
            # A delegated turn: the agent that handed it the task (`delegate`).
            context["parent_agent_alias"] = correlation.parent_agent_alias
        return context

    def _on_agent_start(self, event: AgentStart, event_ids: EventIds) -> list[Line]:
        ids = event_ids.root
        fields = self._context(
            event.correlation,
            ids,
            provider=event.provider,
            model=event.model,
            receipt_key_id=event.receipt_key_id,
        )
        return [(logging.INFO, "turn_start", fields)]

    def _on_llm_request(self, event: LlmRequest, event_ids: EventIds) -> list[Line]:
        ids = event_ids.own
        fields = self._context(
            event.correlation,
            ids,
            iteration=event.iteration,
            provider=event.provider,
            model=event.model,
            message_count=event.message_count,
            tool_count=event.tool_count,
        )
        return [(logging.INFO, "llm_request", fields)]

    def _on_llm_response(self, event: LlmResponse, event_ids: EventIds) -> list[Line]:
        ids = event_ids.own
        fields = self._context(
            event.correlation,
            ids,
            iteration=event.iteration,
            provider=event.provider,
            model=event.model,
            success=event.success,
            duration_ms=_ms(event.duration_s),
            input_tokens=event.input_tokens,
            output_tokens=event.output_tokens,
            tool_call_count=event.tool_call_count,
            attempts=event.attempts,
            response_model=event.response_model,
            response_id=event.response_id,
            finish_reasons=list(event.finish_reasons),
            error=event.error,
            error_type=event.error_type,
        )
        level = logging.INFO if event.success else _LLM_FAILURE_LEVELS.get(event.error_type)
        return [(level or logging.ERROR, "llm_response", fields)]

    def _on_provider_attempt(self, event: ProviderAttempt, event_ids: EventIds) -> list[Line]:
        ids = event_ids.own
        fields = self._context(
            event.correlation,
            ids,
            iteration=event.iteration,
            provider=event.provider,
            model=event.model,
            attempt=event.attempt,
            error_type=event.error_type,
            status=event.status,
            wait_ms=_ms(event.wait_s),
        )
        return [(logging.WARNING, "llm_retry", fields)]

    def _on_tool_call_start(self, event: ToolCallStart, event_ids: EventIds) -> list[Line]:
        # The two lines of every call are written out as `_context` lays them (same keys, same
        # order): one dict per line instead of a keyword dict merged into another.
        c = event.correlation
        fields = _call_head(event, event_ids)
        fields["provenance"] = event.provenance
        if c.parent_agent_alias is not None:
            fields["parent_agent_alias"] = c.parent_agent_alias
        if self._capture:
            fields["arguments"] = event.arguments
        return [(logging.INFO, "tool_call_start", fields)]

    def _on_tool_call(self, event: ToolCall, event_ids: EventIds) -> list[Line]:
        c = event.correlation
        counts = event.redaction_counts
        fields = _call_head(event, event_ids)
        # Set one by one: no second dict to build and merge. `_value_` is the enum's value
        # without the `value` property's descriptor call.
        fields["known_tool"] = event.known_tool
        fields["outcome"] = event.outcome._value_
        fields["success"] = event.success
        fields["duration_ms"] = _ms(event.duration_s)
        fields["error_type"] = event.error_type
        fields["receipt"] = event.receipt
        fields["truncated_chars"] = event.truncated_chars
        fields["truncated_bytes"] = event.truncated_bytes
        fields["redactions"] = sum(counts.values()) if counts else 0
        if c.parent_agent_alias is not None:
            fields["parent_agent_alias"] = c.parent_agent_alias
        if self._capture:
            fields["arguments"] = event.arguments
            fields["result"] = event.result
        level = _TOOL_LEVELS.get(event.outcome, logging.INFO)
        return [(level, "tool_call_result", fields)]

    def _on_approval(self, event: ApprovalDecision, event_ids: EventIds) -> list[Line]:
        ids = event_ids.own
        fields = self._context(
            event.correlation,
            ids,
            iteration=event.iteration,
            tool_call_id=event.tool_call_id,
            tool=event.tool,
            decision=event.decision,
            surface=event.surface,
            wait_ms=_ms(event.wait_s),
        )
        return [(logging.INFO, "approval_decision", fields)]

    def _on_loop_detection(self, event: LoopDetection, event_ids: EventIds) -> list[Line]:
        ids = event_ids.own
        fields = self._context(
            event.correlation,
            ids,
            iteration=event.iteration,
            tool_call_id=event.tool_call_id,
            tool=event.tool,
            kind=event.kind,
            severity=event.severity,
            message=event.message,
        )
        return [(_LOOP_LEVELS.get(event.severity, logging.WARNING), "loop_detection", fields)]

    def _on_context_trimmed(self, event: ContextTrimmed, event_ids: EventIds) -> list[Line]:
        fields = self._context(
            event.correlation,
            event_ids.root,
            iteration=event.iteration,
            reason=event.reason.value,
            messages_dropped=event.messages_dropped,
            turns_dropped=event.turns_dropped,
            tokens_before=event.tokens_before,
            tokens_after=event.tokens_after,
            token_budget=event.token_budget,
        )
        overflow = event.reason is ContextTrimReason.OVERFLOW
        return [(logging.WARNING if overflow else logging.INFO, "context_trimmed", fields)]

    def _on_model_switched(self, event: ModelSwitched, event_ids: EventIds) -> list[Line]:
        fields = self._context(
            event.correlation,
            event_ids.root,
            iteration=event.iteration,
            source=event.source.value,
            from_provider=event.from_provider,
            from_model=event.from_model,
            to_provider=event.to_provider,
            to_model=event.to_model,
        )
        return [(logging.INFO, "model_switched", fields)]

    def _on_steering(self, event: SteeringMessages, event_ids: EventIds) -> list[Line]:
        """One `steering_message` line per appended message (its length, never its text),
        or one `steering_dropped` warning for messages the turn ended before appending."""
        if not event.applied:
            fields = self._context(
                event.correlation, event_ids.root, iteration=event.iteration, count=event.count
            )
            return [(logging.WARNING, "steering_dropped", fields)]
        return [
            (
                logging.INFO,
                "steering_message",
                self._context(
                    event.correlation,
                    event_ids.root,
                    iteration=event.iteration,
                    position=position,
                    count=event.count,
                    length=length,
                ),
            )
            for position, length in enumerate(event.lengths, 1)
        ]

    def _on_agent_end(self, event: AgentEnd, event_ids: EventIds) -> list[Line]:
        ids = event_ids.root
        fields = self._context(
            event.correlation,
            ids,
            outcome=event.outcome.value,
            iterations=event.iterations,
            duration_ms=_ms(event.duration_s),
            error=event.error,
        )
        return [(_TURN_LEVELS.get(event.outcome, logging.INFO), "turn_end", fields)]


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _call_head(event: ToolCallStart | ToolCall, event_ids: EventIds) -> dict[str, Any]:
    """The fields both lines of a call start with, laid out as `_context` lays them."""
    c = event.correlation
    trace_id, span_id = event_ids.own or _NO_SPAN
    return {
        "trace_id": trace_id,
        "span_id": span_id,
        "turn_id": c.turn_id,
        "channel": c.channel,
        "agent": c.agent_alias,
        "iteration": event.iteration,
        "tool_call_id": event.tool_call_id,
        "tool": event.tool,
    }
