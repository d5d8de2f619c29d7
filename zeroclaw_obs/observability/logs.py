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
- `LogObserver` writes synchronously to the logger's stream on the turn's path. Give it a
  stream that does not block (a file, a pipe with a reader, or a queue-backed writer).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TextIO

import structlog
from structlog.typing import EventDict, FilteringBoundLogger, Processor, WrappedLogger

from ..redaction import Redactor
from .events import (
    AgentEnd,
    AgentStart,
    ApprovalDecision,
    Correlation,
    LlmRequest,
    LlmResponse,
    LoopDetection,
    ObserverEvent,
    ToolCall,
    ToolCallStart,
    ToolOutcome,
    TurnOutcomeKind,
)
from .metrics import SpanIdCache, SpanIds

__all__ = [
    "LogObserver",
    "RedactingProcessor",
    "build_logger",
    "build_processors",
    "route_stdlib_logging",
]

_TOOL_LEVELS = {ToolOutcome.ERROR: logging.WARNING, ToolOutcome.INTERRUPTED: logging.WARNING}
_TURN_LEVELS = {TurnOutcomeKind.ABORTED: logging.WARNING, TurnOutcomeKind.ERROR: logging.ERROR}
_LOOP_LEVELS = {"abort": logging.ERROR}


class RedactingProcessor:
    """Run the runtime's `Redactor` over every string of the event dict, at any depth.

    Covers the `event` text, every field value (recursively through dicts, lists and tuples),
    dict keys, and whole values under sensitive keys (`password=…`, `authorization=…`), as
    `Redactor.redact_value` does. structlog's bookkeeping (`_record`, `_from_structlog`) passes
    untouched for `ProcessorFormatter` to remove.

    Where it must sit: last before the renderer, after `format_exc_info` and every other
    processor that adds text, so that fields added late (the formatted exception and its stack
    trace, timestamps, logger names) are scrubbed too. A processor placed after it could add
    text that no one redacts. Objects the renderer cannot encode are scrubbed by
    `render_fallback`, which the JSON renderer calls for them.
    """

    def __init__(self, redactor: Redactor) -> None:
        self._redact_value = redactor.redact_value
        self._redact_text = redactor.redact_text

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
        redacted: EventDict = self._redact_value(event_dict)
        return redacted

    def render_fallback(self, obj: object) -> Any:
        """Encode an object JSON cannot: structlog's `__structlog__` or its `repr`, redacted.

        Pass it as the renderer's `default`; a `repr` may hold a URL with credentials.
        """
        hook = getattr(obj, "__structlog__", None)
        value = hook() if callable(hook) else repr(obj)
        if isinstance(value, str):
            return self._redact_text(value)
        return self._redact_value(value)


def _pre_render(redacting: RedactingProcessor) -> list[Processor]:
    """Level, time, exception text, then redaction: everything up to the renderer."""
    return [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
        structlog.processors.format_exc_info,
        redacting,
    ]


def _json(redacting: RedactingProcessor) -> structlog.processors.JSONRenderer:
    return structlog.processors.JSONRenderer(default=redacting.render_fallback)


def build_processors(redactor: Redactor) -> list[Processor]:
    """The chain of our own records: level, ISO UTC timestamp, exception text, redaction, JSON.

    Args:
        redactor: the runtime's one redactor.

    Returns:
        A new list; its last two steps are `RedactingProcessor` and `JSONRenderer`.
    """
    redacting = RedactingProcessor(redactor)
    return [*_pre_render(redacting), _json(redacting)]


def build_logger(
    *, redactor: Redactor, stream: TextIO, level: int = logging.INFO
) -> FilteringBoundLogger:
    """A JSON-lines structlog logger writing to `stream`, built without global configuration.

    Records below `level` are dropped before any processor runs.

    Args:
        redactor: the runtime's one redactor (see `RedactingProcessor`).
        stream: where lines go, one JSON object per line.
        level: the least severe stdlib level written.
    """
    wrapper = structlog.make_filtering_bound_logger(level)
    return wrapper(structlog.WriteLogger(stream), build_processors(redactor), {})


def route_stdlib_logging(
    redactor: Redactor,
    stream: TextIO,
    level: int = logging.INFO,
    *,
    logger: logging.Logger | None = None,
) -> logging.Handler:
    """Send stdlib records (from libraries) through the same redacting chain, as JSON lines.

    Attaches a handler with structlog's `ProcessorFormatter` to `logger` (default: the root
    logger). Its `foreign_pre_chain` is our chain up to and including `RedactingProcessor`,
    plus the logger name first; after it only the removal of structlog's bookkeeping keys and
    the renderer run. The logger's own level is left alone: it still filters first.

    Args:
        redactor: the runtime's one redactor.
        stream: where lines go.
        level: the handler's level.
        logger: the stdlib logger to attach to; the root logger when None.

    Returns:
        The handler; `logger.removeHandler(handler)` undoes the change.
    """
    redacting = RedactingProcessor(redactor)
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[structlog.stdlib.add_logger_name, *_pre_render(redacting)],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, _json(redacting)],
    )
    handler = logging.StreamHandler(stream)
    handler.setLevel(level)
    handler.setFormatter(formatter)
    (logger or logging.getLogger()).addHandler(handler)
    return handler


class LogObserver:
    """Writes one structlog event per lifecycle fact, with the ids that join it to its span.

    Every event carries `trace_id`, `span_id` (null when no tracing side is given or the span
    is unknown), `turn_id`, `channel` and `agent`; tool events add `tool_call_id` and `tool`.
    Tool events take the ids of the tool span, the others those of the turn's root span. Put
    the span observer before this one in the `MultiObserver`.

    Content: the redacted `arguments` and `result` of tool calls are written only with
    `capture_content=True`. Off by default: spans already carry the redacted content
    (DESIGN §3) and a log line joins them by `trace_id`, while logs are copied to more places,
    kept longer, and would grow by up to `max_tool_result_chars` per call.

    Args:
        logger: a structlog logger (see `build_logger`), or anything with its `log` method.
        span_ids: the tracing side; None writes null ids.
        capture_content: add redacted `arguments` / `result` to tool events.
    """

    def __init__(
        self,
        logger: Any,
        *,
        span_ids: SpanIds | None = None,
        capture_content: bool = False,
    ) -> None:
        self.errors = 0
        """Events that failed to log (never raised into the turn)."""
        self._log = logger.log
        self._ids = SpanIdCache(span_ids)
        self._capture = capture_content
        self._handlers: dict[type, Callable[[Any], None]] = {
            AgentStart: self._on_agent_start,
            LlmRequest: self._on_llm_request,
            LlmResponse: self._on_llm_response,
            ToolCallStart: self._on_tool_call_start,
            ToolCall: self._on_tool_call,
            ApprovalDecision: self._on_approval,
            LoopDetection: self._on_loop_detection,
            AgentEnd: self._on_agent_end,
        }

    def on_event(self, event: ObserverEvent) -> None:
        """Log `event`. Never raises; blocks only as long as the logger's stream does."""
        handler = self._handlers.get(type(event))
        if handler is None:
            return
        try:
            handler(event)
        except Exception:
            self.errors += 1

    def _context(
        self, correlation: Correlation, ids: tuple[str, str] | None, **fields: Any
    ) -> dict[str, Any]:
        trace_id, span_id = ids if ids is not None else (None, None)
        return {
            "trace_id": trace_id,
            "span_id": span_id,
            "turn_id": correlation.turn_id,
            "channel": correlation.channel,
            "agent": correlation.agent_alias,
            **fields,
        }

    def _on_agent_start(self, event: AgentStart) -> None:
        ids = self._ids.remember(event.correlation.turn_id)
        fields = self._context(
            event.correlation,
            ids,
            provider=event.provider,
            model=event.model,
            receipt_key_id=event.receipt_key_id,
        )
        self._log(logging.INFO, "turn_start", **fields)

    def _on_llm_request(self, event: LlmRequest) -> None:
        ids = self._ids.lookup(event.correlation.turn_id)
        fields = self._context(
            event.correlation,
            ids,
            iteration=event.iteration,
            provider=event.provider,
            model=event.model,
            message_count=event.message_count,
            tool_count=event.tool_count,
        )
        self._log(logging.INFO, "llm_request", **fields)

    def _on_llm_response(self, event: LlmResponse) -> None:
        ids = self._ids.lookup(event.correlation.turn_id)
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
            error=event.error,
        )
        self._log(logging.INFO if event.success else logging.ERROR, "llm_response", **fields)

    def _on_tool_call_start(self, event: ToolCallStart) -> None:
        ids = self._ids.remember(event.correlation.turn_id, event.tool_call_id)
        fields = self._context(
            event.correlation,
            ids,
            iteration=event.iteration,
            tool_call_id=event.tool_call_id,
            tool=event.tool,
            provenance=event.provenance,
        )
        if self._capture:
            fields["arguments"] = event.arguments
        self._log(logging.INFO, "tool_call_start", **fields)

    def _on_tool_call(self, event: ToolCall) -> None:
        ids = self._ids.forget(event.correlation.turn_id, event.tool_call_id)
        fields = self._context(
            event.correlation,
            ids,
            iteration=event.iteration,
            tool_call_id=event.tool_call_id,
            tool=event.tool,
            known_tool=event.known_tool,
            outcome=event.outcome.value,
            success=event.success,
            duration_ms=_ms(event.duration_s),
            error_type=event.error_type,
            receipt=event.receipt,
            truncated_chars=event.truncated_chars,
            redactions=sum(event.redaction_counts.values()),
        )
        if self._capture:
            fields["arguments"] = event.arguments
            fields["result"] = event.result
        level = _TOOL_LEVELS.get(event.outcome, logging.INFO)
        self._log(level, "tool_call_result", **fields)

    def _on_approval(self, event: ApprovalDecision) -> None:
        ids = self._ids.lookup(event.correlation.turn_id)
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
        self._log(logging.INFO, "approval_decision", **fields)

    def _on_loop_detection(self, event: LoopDetection) -> None:
        ids = self._ids.lookup(event.correlation.turn_id, event.tool_call_id)
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
        self._log(_LOOP_LEVELS.get(event.severity, logging.WARNING), "loop_detection", **fields)

    def _on_agent_end(self, event: AgentEnd) -> None:
        ids = self._ids.forget(event.correlation.turn_id)
        fields = self._context(
            event.correlation,
            ids,
            outcome=event.outcome.value,
            iterations=event.iterations,
            duration_ms=_ms(event.duration_s),
            error=event.error,
        )
        self._log(_TURN_LEVELS.get(event.outcome, logging.INFO), "turn_end", **fields)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)
