"""The span observer: observer events become the spans of DESIGN §3.

`SpanObserver` turns the engine's events into `invoke_agent`, `chat`, `execute_tool` and
`await_approval` spans with their real start and end times (`time_ns` stamps carried by the
events) and explicit parents: every child is started with `set_span_in_context(root)`, never
with the ambient context, because parallel tool calls run in sibling asyncio tasks whose
ambient context says nothing about the turn. Only the root looks at the ambient context, once,
so a turn run inside a caller's span (a server request, a user's own span) joins that trace.

It depends on the OpenTelemetry API, plus the SDK's `IdGenerator` interface for the ids of
deferred spans; the provider, exporters and the export guard are set up in `tracer_setup.py`.
Nothing under `turn/` imports this module.

Risky part: `on_event` runs on the turn's path. It must not block or raise, so the handlers
only record: the root span is a live SDK span, but every child is a `PendingSpan`
(`deferred_spans.py`) that one worker thread builds later (`span_builder.py`), and a bug in a
handler or in a build is counted, never raised. What it keeps between events is bounded
(`open_spans.py`: a turn that never ends is evicted and counted as dropped), and so is the
build queue, which drops and counts when full.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import partial
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from ... import __version__
from ..events import (
    NO_IDS,
    AgentEnd,
    AgentStart,
    ApprovalDecision,
    ContextTrimmed,
    EventIds,
    Ids,
    LlmRequest,
    LlmResponse,
    LoopDetection,
    ModelSwitched,
    ObserverEvent,
    ProviderAttempt,
    SteeringMessages,
    ToolCall,
    ToolCallStart,
    ToolProgress,
)
from ..health import HealthCounter, Signal, TelemetryHealth
from .attributes import (
    ROOT_EVENTS,
    RUNTIME_SCOPE,
    TOOL_TYPES,
    ContentCapture,
    approval_attributes,
    attempt_attributes,
    chat_start_attributes,
    loop_attributes,
    progress_attributes,
    tool_start_attributes,
    turn_start_attributes,
)
from .closing import UNFINISHED, chat_closing, root_closing, tool_closing
from .deferred_spans import (
    CurrentSpan,
    Deferred,
    KnownClean,
    PendingSpan,
    RootEnd,
    known_clean,
)
from .event_ids import CHAT_ENDS, event_ids
from .open_spans import OpenSpans, OpenTurn, sampled_ids
from .span_builder import SpanBuilder
from .span_ids import install_handoff

__all__ = ["TOOL_TYPES", "ContentCapture", "SpanObserver"]

_log = logging.getLogger(__name__)


class SpanObserver:
    """Records every turn as spans on `tracer_provider`. `on_event` must not block or raise.

    The root span of a turn is a live SDK span. Its children (`chat`, `execute_tool`,
    `await_approval`) are recorded on the turn's path as `PendingSpan`s, with ids from the
    provider's own id generator and their real start and end times, and built by one worker
    thread (`span_builder.py`; through the SDK, or straight into the `ReadableSpan` the SDK
    would have built when that is equivalent); the root's end waits behind them in the same
    queue. Call `force_flush` before reading a span exporter, and `shutdown` at exit
    (`Telemetry.shutdown` does, before the provider's).

    Args:
        tracer_provider: where spans go (tests pass their own `TracerProvider`).
        capture: `ContentCapture.REDACTED` (default) or `NONE`.
        capture_messages: also put the redacted request and response messages on `chat`
            spans (`gen_ai.input.messages` / `gen_ai.output.messages`); ignored under
            `NONE`. Opt-in: the engine builds them only for an observer that asks
            (`wants_messages`).
        health: where bugs (`observer_errors`), evicted spans and a full queue (`dropped`) are
            counted.
        max_open_turns: open turns kept; the oldest is evicted beyond this.
        max_open_spans_per_turn: open child spans kept per turn; beyond it a span is built
            whole from its closing event (its real start is in the event) instead.
        max_recent_spans: ended spans `ids_for` still answers for (a bounded LRU).
        max_queue_size: spans waiting to be built; more are dropped and counted. The default
            (32,768, ~0.6 KB a span: the record points at texts the turn holds anyway) holds a
            burst of 16,384 calls before the worker must run beside the turn; the worker
            paces itself to the export queue behind it (`SpanBuilder._build`).
        schedule_delay_s: the longest a span waits to be built while no turn ends and no
            burst is on. The worker also wakes at the end of every turn, and at half the
            queue builds only what is over it: it stays off the GIL while a turn is busy
            (`BoundedBatcher.sidecar`).
        direct_build: build spans without the SDK where that is equivalent (`SpanBuilder`);
            False always goes through the SDK.
        clean_text: the export guard's memory of clean strings: a call's id, arguments and
            result it knows when the call ends are listed on the span (`RuntimeSpan`).

    Raises:
        ValueError: a bound is not a positive integer; the message names it.
    """

    def __init__(
        self,
        tracer_provider: trace.TracerProvider,
        *,
        capture: ContentCapture = ContentCapture.REDACTED,
        capture_messages: bool = False,
        health: TelemetryHealth | None = None,
        max_open_turns: int = 1024,
        max_open_spans_per_turn: int = 4096,
        max_recent_spans: int = 4096,
        max_queue_size: int = 32768,
        schedule_delay_s: float = 1.0,
        direct_build: bool = True,
        clean_text: KnownClean | None = None,
    ) -> None:
        self._tracer = tracer_provider.get_tracer(RUNTIME_SCOPE, __version__)
        self._handoff = install_handoff(self._tracer)
        self._capture = capture == ContentCapture.REDACTED
        self._clean_text = clean_text
        # Bound once: each call's span takes them, called on the build worker.
        self._tool_start_attributes = partial(tool_start_attributes, capture=self._capture)
        self._tool_closing = partial(tool_closing, capture=self._capture)
        self.wants_messages = self._capture and capture_messages
        """Read by the engine (`MultiObserver.wants_messages`): build message content."""
        self._health = health or TelemetryHealth()
        self._open = OpenSpans(
            health=self._health,
            max_open_turns=max_open_turns,
            max_open_spans_per_turn=max_open_spans_per_turn,
            max_recent_spans=max_recent_spans,
        )
        self._reported: set[type] = set()
        self._last_approval: tuple[str, str, Ids] | None = None
        self.errors = 0
        """Events a handler failed on (also counted in `health` as `observer_errors`)."""
        self._handlers: dict[type, Callable[[Any], object]] = {
            AgentStart: self._agent_start,
            AgentEnd: self._agent_end,
            LlmRequest: self._llm_request,
            LlmResponse: self._llm_response,
            ProviderAttempt: self._provider_attempt,
            ToolCallStart: self._tool_start,
            ToolCall: self._tool_end,
            ToolProgress: self._tool_progress,
            ApprovalDecision: self._approval,
            LoopDetection: self._loop_detection,
            ContextTrimmed: self._root_event,
            ModelSwitched: self._root_event,
            SteeringMessages: self._root_event,
        }
        self._tool_handlers: dict[type, Callable[[Any], EventIds | None]] = {
            ToolCallStart: self._tool_start,
            ToolCall: self._tool_end,
        }
        self._builder = SpanBuilder(
            self._tracer,
            self._handoff,
            failed=self._failed,
            health=self._health,
            max_queue_size=max_queue_size,
            schedule_delay_s=schedule_delay_s,
            direct=direct_build,
        )

    def on_event(self, event: ObserverEvent) -> None:
        """Record one event as span work. Must not block or raise: a failure is counted."""
        handler = self._handlers.get(type(event))
        if handler is None:
            return
        try:
            handler(event)
        except Exception as exc:
            self._failed(exc, type(event).__name__)

    def record(self, event: ObserverEvent) -> EventIds:
        """`on_event`, then the ids of the spans the event belongs to: the telemetry chain's
        first step (`observability/chain.py`) hands them to metrics, logs and the tree, so
        they point at the span that is exported. Never raises."""
        kind = type(event)
        if kind is ToolCallStart or kind is ToolCall:
            # The two events of every call: their handler knows the ids when the call's span
            # is the only one open under its id (the common case), without a second lookup.
            try:
                known = self._tool_handlers[kind](event)
            except Exception as exc:
                self._failed(exc, kind.__name__)
                known = None
            if known is not None:
                return known
            return self._ids_of(event, None)
        chat = None
        if isinstance(event, CHAT_ENDS):
            chat = self.chat_ids_for(event.correlation.turn_id, event.iteration)  # while open
        self.on_event(event)
        return self._ids_of(event, chat)

    def _ids_of(self, event: ObserverEvent, chat: Ids | None) -> EventIds:
        try:
            return event_ids(event, self, chat)
        except Exception as exc:
            self._failed(exc, "ids")
            return NO_IDS

    def force_flush(self, timeout_s: float = 5.0) -> bool:
        """Build every recorded span now; wait at most `timeout_s`. True when done in time.

        The spans then sit in the provider's processors: flush the provider to export them.
        """
        return self._builder.force_flush(timeout_s)

    def shutdown(self, timeout_s: float = 5.0) -> bool:
        """Build what is recorded and stop the worker within `timeout_s`; the rest is counted."""
        return self._builder.shutdown(timeout_s)

    def _failed(self, exc: Exception, where: str) -> None:
        self.errors += 1
        self._health.increment(HealthCounter.OBSERVER_ERRORS, Signal.TRACES)
        if type(exc) not in self._reported:
            self._reported.add(type(exc))
            # The type only: an exception message could quote a payload.
            _log.warning("span observer failed on %s: %s", where, type(exc).__name__)

    def ids_for(self, turn_id: str, tool_call_id: str | None = None) -> Ids | None:
        """(trace_id as 32 hex, span_id as 16 hex) of a tool span, or of the turn's root.

        Answers while the span is open and for the `max_recent_spans` most recently ended
        spans. Metrics exemplars and log records use it to point at the span of a fact.

        Returns:
            None when the span is unknown, evicted, or not sampled (an id that leads to no
            trace is worse than none).
        """
        return self._open.ids_for(turn_id, tool_call_id)

    def chat_ids_for(self, turn_id: str, iteration: int) -> Ids | None:
        """(trace_id, span_id) of the open `chat` span of a turn's iteration, or None.

        Answers only while the call is open (from its `LlmRequest` to its `LlmResponse`): the
        log observer reads it at the request and keeps it for the call's later lines.
        """
        turn = self._open.turn(turn_id)
        span = turn.chats.get(iteration) if turn is not None else None
        return None if span is None or turn is None else self._child_ids(span, turn)

    def approval_ids_for(self, turn_id: str, tool_call_id: str) -> Ids | None:
        """(trace_id, span_id) of the `await_approval` span just recorded for this call.

        Answers for the latest `ApprovalDecision` only: the log observer, which handles the
        same event right after this one (`MultiObserver` order), reads it for its
        `approval_decision` line. One entry, so nothing grows.
        """
        last = self._last_approval
        if last is None or last[0] != turn_id or last[1] != tool_call_id:
            return None
        return last[2]

    def tool_scope(self, turn_id: str, tool_call_id: str) -> AbstractContextManager[Any] | None:
        """The call's open `execute_tool` span as the current span, while its tool runs.

        The engine enters it in the task that runs the call (`observer.tool_scope`), so a span
        the tool's own code starts, on any tracer, has the tool span as its parent, and what
        the code records on the current span lands on the tool span. The scope neither ends
        the span nor records the tool's exception on it: the closing event does. A call with
        no open span runs in the root's scope: in a turn that is not sampled (the tool's spans
        follow that decision) and beyond the per-turn cap (they still join the turn's trace).
        None when the turn is unknown (evicted, or tracing is off).
        """
        turn = self._open.turn(turn_id)
        if turn is None:
            return None
        return CurrentSpan(self._open.tool_span(turn, tool_call_id, newest=True) or turn.root)

    # -- turn ------------------------------------------------------------------------------

    def _agent_start(self, event: AgentStart) -> None:
        c = event.correlation
        attributes = turn_start_attributes(event, capture=self._capture)
        root = self._tracer.start_span(
            f"invoke_agent {c.agent_alias}",
            # The one read of the ambient context: join the caller's trace, if any.
            context=otel_context.get_current(),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=event.time_ns,
        )
        turn = OpenTurn(
            root=root,
            context=trace.set_span_in_context(root),
            ids=sampled_ids(root.get_span_context()),
            recording=root.is_recording(),
        )
        self._open.open_turn(c.turn_id, turn)

    def _agent_end(self, event: AgentEnd) -> None:
        turn = self._open.close_turn(event.correlation.turn_id)
        if turn is None:
            return  # evicted (already counted) or started before this observer was added
        self._end_unfinished(turn, event.time_ns)
        attributes, status = root_closing(event, turn.provider_error, capture=self._capture)
        # Behind the turn's children in the queue, so the root is the last span built.
        self._builder.emit(RootEnd(turn.root, event.time_ns, attributes, status))
        self._builder.wake()

    def _end_unfinished(self, turn: OpenTurn, end_ns: int) -> None:
        """End children the engine never closed (a bug upstream) so the trace stays whole."""
        leftovers = [*turn.chats.values(), *(s for spans in turn.tools.values() for s, _ in spans)]
        for span in leftovers:
            self._builder.emit(span.close(end_ns, *UNFINISHED))

    # -- provider calls --------------------------------------------------------------------

    def _llm_request(self, event: LlmRequest) -> None:
        turn = self._open.turn_with_room(event.correlation.turn_id)
        if turn is None:
            return  # beyond the cap the response builds the span whole
        self._open.open_chat(turn, event.iteration, self._chat(turn, event, event.time_ns))

    def _chat(self, turn: OpenTurn, event: LlmRequest | LlmResponse, start_ns: int) -> PendingSpan:
        attributes = chat_start_attributes(event, messages=self.wants_messages)
        return self._child(turn, f"chat {event.model}", SpanKind.CLIENT, start_ns, attributes)

    def _llm_response(self, event: LlmResponse) -> None:
        turn = self._open.turn(event.correlation.turn_id)
        if turn is None or not turn.recording:
            return
        span = self._open.close_chat(turn, event.iteration)
        if span is None:
            # The request was missed (per-turn cap, observer added mid-turn); the duration
            # gives the real start back.
            start_ns = event.time_ns - int(event.duration_s * 1e9)
            span = self._chat(turn, event, start_ns)
        closing, error_type = chat_closing(
            event, messages=self.wants_messages, capture=self._capture
        )
        if error_type is not None:
            turn.provider_error = error_type
        self._builder.emit(span.close(event.time_ns, *closing))

    def _provider_attempt(self, event: ProviderAttempt) -> None:
        """A retry: a `zeroclaw.provider.attempt` event on the call's open `chat` span.

        One span per provider call (DESIGN §3), so the failed requests are its events. A call
        whose span was not opened (beyond the per-turn cap) keeps no record of its retries.
        """
        turn = self._open.turn(event.correlation.turn_id)
        if turn is None or not turn.recording:
            return
        span = turn.chats.get(event.iteration)
        if span is None:
            return
        span.add_event("zeroclaw.provider.attempt", attempt_attributes(event), event.time_ns)

    # -- tool calls ------------------------------------------------------------------------

    def _tool_start(self, event: ToolCallStart) -> EventIds | None:
        """Open the call's span; its ids when it is the only one open under the call's id
        (what `ids_for` would answer), else None (look them up)."""
        turn = self._open.turn_with_room(event.correlation.turn_id)
        if turn is None:
            return None  # beyond the cap `ToolCall` builds the span whole
        span = self._tool(turn, event, event.time_ns)
        root = turn.ids
        if self._handoff is None or root is None:
            ids = known = None
        else:
            ids = root[0], "%016x" % span.context.span_id  # noqa: UP031  # `_child_ids`
            known = EventIds(root, ids)  # the end hands it on too
        if self._open.open_tool(turn, event.tool_call_id, (span, ids, known)) == 1:
            return known
        return None

    def _tool(self, turn: OpenTurn, event: ToolCallStart | ToolCall, start_ns: int) -> PendingSpan:
        # Made on the build worker from the read-only event: one dict fewer on every call's path.
        attributes = partial(self._tool_start_attributes, event)
        return PendingSpan.child_of(
            turn.root,
            turn.context,
            self._handoff,
            f"execute_tool {event.tool}",
            SpanKind.INTERNAL,
            start_ns,
            attributes,
        )

    def _tool_end(self, event: ToolCall) -> EventIds | None:
        """Close the call's span; its ids when no other span stays open under the call's id
        (what `ids_for` would answer once they are remembered), else None (look them up)."""
        turn = self._open.turn(event.correlation.turn_id)
        if turn is None or not turn.recording:
            return None
        call_id = event.tool_call_id
        # Closed and its ids remembered at once: `ids_for` answers for them throughout.
        opened = self._open.end_tool(event.correlation.turn_id, turn, call_id)
        if opened is None:
            # The start was missed (observer added mid-turn, or the per-turn cap): the event
            # still carries the real start, so the span is whole.
            span = self._tool(turn, event, event.start_time_ns)
            ids = self._child_ids(span, turn)
            self._open.remember(event.correlation.turn_id, call_id, ids)
            opened = (span, ids, None if ids is None else EventIds(turn.ids, ids))
        span, _, known = opened
        clean_text = self._clean_text
        if clean_text is not None and self._capture:
            # Known now, maybe forgotten by the time the span is exported (`RuntimeSpan`).
            span.clean_texts = known_clean(clean_text, call_id, event.arguments, event.result)
        # The closing attributes, status and events are made on the build worker.
        self._builder.emit(span.close(event.time_ns, Deferred(self._tool_closing, event)))
        # Another call under the same id still open: `ids_for` answers with its span.
        return None if call_id in turn.tools else known

    def _tool_progress(self, event: ToolProgress) -> None:
        """A `zeroclaw.tool.progress` event on the call's open `execute_tool` span."""
        turn = self._open.turn(event.correlation.turn_id)
        if turn is None or not turn.recording:
            return
        span = self._open.tool_span(turn, event.tool_call_id)
        if span is None:
            return
        span.add_event("zeroclaw.tool.progress", progress_attributes(event), event.time_ns)

    def _loop_detection(self, event: LoopDetection) -> None:
        turn = self._open.turn(event.correlation.turn_id)
        if turn is None:
            return
        # Without an open tool span the live root takes the event; its SDK span is thread-safe.
        span = self._open.tool_span(turn, event.tool_call_id) or turn.root
        span.add_event("zeroclaw.loop_detection", loop_attributes(event), event.time_ns)

    def _root_event(self, event: ContextTrimmed | ModelSwitched | SteeringMessages) -> None:
        """An event on the turn's live root span (`ROOT_EVENTS`: its name and attributes)."""
        turn = self._open.turn(event.correlation.turn_id)
        if turn is None:
            return
        name, attributes = ROOT_EVENTS[type(event)]
        turn.root.add_event(name, attributes(event), event.time_ns)

    def _approval(self, event: ApprovalDecision) -> None:
        turn = self._open.turn(event.correlation.turn_id, for_span=True)
        if turn is None or not turn.recording:
            return
        span = self._child(
            turn,
            f"await_approval {event.tool}",
            SpanKind.INTERNAL,
            event.wait_start_ns,
            approval_attributes(event),
        )
        ids = self._child_ids(span, turn)
        self._last_approval = (
            None if ids is None else (event.correlation.turn_id, event.tool_call_id, ids)
        )
        self._builder.emit(span.close(event.wait_end_ns))

    # -- bookkeeping -----------------------------------------------------------------------

    def _child(
        self,
        turn: OpenTurn,
        name: str,
        kind: SpanKind,
        start_ns: int,
        attributes: dict[str, Any] | Callable[[], dict[str, Any]],
    ) -> PendingSpan:
        """A pending child of the turn's root (`PendingSpan.child_of`)."""
        return PendingSpan.child_of(
            turn.root, turn.context, self._handoff, name, kind, start_ns, attributes
        )

    def _child_ids(self, span: PendingSpan, turn: OpenTurn) -> Ids | None:
        if self._handoff is None or turn.ids is None:
            return None  # no ids of its own, or an unsampled turn (its children follow it)
        # `%` formats an int ~2x faster than `format`, on every call's path; the same text.
        return turn.ids[0], "%016x" % span.context.span_id  # noqa: UP031
