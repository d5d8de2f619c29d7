"""Prometheus metrics: what to count from observer events, and the `/metrics` exposition.

`MetricsObserver` turns observer events into the metrics of DESIGN §3 on a `CollectorRegistry`
the runtime owns (never prometheus_client's global `REGISTRY`), with exemplars that carry the
`trace_id`/`span_id` of the span each observation belongs to. `exposition.py` serves and
renders a registry as the text format or OpenMetrics; `series.py` keeps the label values bounded
and holds the collectors registered beside the metrics.

Risky parts:
- Label values are the cardinality of the whole time-series database. Every label value here is
  bounded: a tool name the model invented is `unknown`, outcomes and rule ids come from enums or
  configuration, free strings that should be enums fall back to `other`, and every value is cut
  at `LABEL_LIMIT` characters. Never label by turn id, call id, argument or result.
- The `model` label of the LLM metrics is the *requested* model (the agent file's, bounded by
  configuration), never the model a response reports: backends route and version models, so
  the reported name would grow the label set; spans carry it as `gen_ai.response.model`.
- Label values are payloads too: a tool, provider or model name is the operator's text and can
  hold a token. The engine already sends their redacted forms; with a `redactor`, each value is
  also redacted here (then cut, never cut then redacted), once per distinct label set, when its
  child is first created, so the per-event cost stays one dict lookup.
- `on_event` runs on the turn's path. It only increments in-memory counters (or, `deferred`,
  queues the event for a worker that does); it never blocks, and it never raises (a failure
  is counted in `errors`). Deferred, every read of the registry (a scrape, `render_metrics`)
  first has the worker apply what is queued (`Pending`, registered first), so a reader sees
  every event recorded before it read.
- Turn metrics (`zeroclaw_turns_total`, `zeroclaw_turn_duration_seconds`) count top-level
  turns only: a delegated turn (its `parent_agent_alias` set) is inside its parent's turn and
  its `delegate` call; counting it too would make one user message two turns.
- Exemplar ids come with each event from the span step of the telemetry chain
  (`observability/chain.py`: `record(event, ids)`), which has seen the event first. A series
  or bucket shows only its latest exemplar, so a deferred batch sets each one once, from the
  latest tool call that has one (`MetricsObserver._tool_plan`): the same exposition, without
  an exemplar validated and timestamped per call only to be overwritten by the next.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram

from ..batching import BoundedBatcher
from ..events import (
    NO_IDS,
    AgentEnd,
    ApprovalDecision,
    ApprovalSurface,
    Decision,
    EventIds,
    Ids,
    LlmResponse,
    LoopDetection,
    LoopKind,
    LoopSeverity,
    ObserverEvent,
    ToolCall,
    ToolOutcome,
)
from ..health import HealthCounter, Signal, TelemetryHealth
from .series import (
    APPLY_WAIT_S,
    LABEL_LIMIT,
    UNKNOWN_TOOL,
    Children,
    DroppedTelemetryCollector,
    HealthSource,
    Pending,
    label_shower,
    one_of,
)

if TYPE_CHECKING:
    from ...redaction import Redactor
    from ..signal_queue import Queued, SignalQueue

__all__ = [
    "APPROVAL_WAIT_BUCKETS",
    "LABEL_LIMIT",
    "LLM_DURATION_BUCKETS",
    "TOOL_DURATION_BUCKETS",
    "TURN_DURATION_BUCKETS",
    "UNKNOWN_TOOL",
    "DroppedTelemetryCollector",
    "HealthSource",
    "MetricsObserver",
]

TOOL_DURATION_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80)
"""Seconds: a cached lookup (10 ms) up to a long shell command or crawl (~80 s)."""

LLM_DURATION_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128)
"""Seconds: a short cached completion up to a long reasoning response."""

TURN_DURATION_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
"""Seconds: a one-shot answer up to a ten-minute multi-tool turn."""

APPROVAL_WAIT_BUCKETS = (0.01, 0.1, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600)
"""Seconds: a scripted answer (milliseconds) up to a human who came back an hour later."""

_OUTCOME_VALUES = {outcome: outcome.value for outcome in ToolOutcome}
"""Each outcome's value as a plain `str` (a dict lookup: `.value` is a Python-level
property, read for every tool call)."""

# The label values these free-string fields may take: the enums of `events.py`, defined once
# (`approved` is the decision label of a call approved by policy, which asks nobody).
_DECISIONS = frozenset({*Decision, "approved"})
_SURFACES = frozenset(ApprovalSurface)
_LOOP_KINDS = frozenset(LoopKind)
_LOOP_SEVERITIES = frozenset(LoopSeverity)
_TOOL_RESULT_SURFACE = "tool_result"


_TOOL_BOUNDS = (*map(float, TOOL_DURATION_BUCKETS), math.inf)
"""The tool histogram's upper bounds, as `Histogram` keeps them (+Inf appended)."""


def _tool_bucket(seconds: float) -> int | None:
    """The bucket `Histogram.observe` sets an exemplar on: the first bound `seconds` is at
    most (None for NaN, which is in no bucket)."""
    i = bisect_left(_TOOL_BOUNDS, seconds)
    return i if i < len(_TOOL_BOUNDS) and seconds <= _TOOL_BOUNDS[i] else None


def _exemplar(ids: Ids | None) -> dict[str, str] | None:
    if ids is None:
        return None
    trace_id, span_id = ids
    return {"trace_id": trace_id, "span_id": span_id}


_Tally = dict[Any, int]
"""Counter increments added up over a batch, by counter series (a labelled child; looked up
at each event all the same, so that series are created, and exposed, in the same order)."""


def _add_up(child: Counter, count: int) -> None:
    """A tally's `count` added to its counter series."""
    child.inc(count)


class MetricsObserver:
    """Counts every lifecycle fact of DESIGN §3 on a registry the runtime owns.

    Create one per registry: the metric names are registered in the constructor, and a second
    observer on the same registry raises `ValueError` (prometheus_client's duplicate check).
    Fed by the telemetry chain (`record(event, ids)`): exemplars carry the ids it hands over;
    `on_event` alone records without exemplars.

    Args:
        registry: where the metrics live; tests build a fresh one.
        known_tools: whether a name is a registered tool; names it rejects are labelled
            `unknown` (as are those the engine already marked `known_tool=False`).
        health: the export side's counters, for `zeroclaw_telemetry_dropped_total`; when it
            is a `TelemetryHealth`, events this observer fails on are counted there too
            (`observer_errors`, signal `metrics`).
        redactor: the runtime's one redactor; each label value is redacted, then cut, when
            its child is first created. None cuts only (the engine's events already carry
            redacted names).
        deferred: the turn only queues each event it counts (with its ids); a worker applies
            them at the end of every turn, every second while no burst is on, the batches
            over half the queue during one (`BoundedBatcher.sidecar`), and before every read
            of the registry. A full queue drops events and counts them
            (`signal="metrics"`). Call `shutdown` at exit (`Telemetry.shutdown` does).
        queue: the queue that metrics, log lines and the trace tree share
            (`signal_queue.SignalQueue`): the observer joins it and its worker applies the
            events, as `deferred` does, with every read of the registry applying what it
            holds; then the queue, not this observer, is the chain's signal.

    Raises:
        ValueError: the registry already holds one of these metric names.
    """

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        known_tools: Callable[[str], bool] | None = None,
        health: HealthSource | None = None,
        redactor: Redactor | None = None,
        deferred: bool = False,
        queue: SignalQueue | None = None,
    ) -> None:
        self.errors = 0
        self._shown = label_shower(redactor)
        """Events that failed to record (never raised into the turn)."""
        self._health = health if isinstance(health, TelemetryHealth) else None
        self._known_tools = known_tools
        self._pending: BoundedBatcher[tuple[Any, EventIds]] | None = None
        self._queue = queue
        if queue is not None:
            registry.register(Pending(queue.force_flush))
        elif deferred:
            self._pending = BoundedBatcher.sidecar(
                self._apply,
                signal=Signal.METRICS,
                health=health if isinstance(health, TelemetryHealth) else TelemetryHealth(),
                max_queue_size=8192,
                max_export_batch_size=512,
                schedule_delay_s=1.0,
                name="metrics-apply",
            )
            registry.register(Pending(self._pending.force_flush))
        self._build_metrics(registry)
        registry.register(DroppedTelemetryCollector(health))
        self._handlers: dict[type, Callable[[Any, EventIds], None]] = {
            AgentEnd: self._on_agent_end,
            LlmResponse: self._on_llm_response,
            ToolCall: self._on_tool_call,
            ApprovalDecision: self._on_approval,
            LoopDetection: self._on_loop_detection,
        }
        if queue is not None:
            queue.add(self)

    lost_as = Signal.METRICS
    """Events of its kinds that the signal queue loses are counted as lost metrics."""

    def kinds(self) -> Iterable[type]:
        """The event types it counts (`QueuedSignal`)."""
        return self._handlers.keys()

    def apply(self, batch: Sequence[Queued]) -> None:
        """Count the events of a signal queue's batch that it counts (`QueuedSignal`)."""
        handlers = self._handlers
        mine = [(event, ids) for _, event, ids in batch if type(event) in handlers]
        if mine:
            self._apply(mine)

    def _build_metrics(self, registry: CollectorRegistry) -> None:
        # Labelled metrics are kept as `Children`: call them with the label values.
        def counter(name: str, doc: str, labels: tuple[str, ...]) -> Children:
            return Children(Counter(name, doc, labels, registry=registry), self._shown)

        def histogram(name: str, doc: str, buckets: tuple[float, ...]) -> Histogram:
            return Histogram(name, doc, registry=registry, buckets=buckets)

        def histograms(
            name: str, doc: str, labels: tuple[str, ...], buckets: tuple[float, ...]
        ) -> Children:
            return Children(
                Histogram(name, doc, labels, registry=registry, buckets=buckets), self._shown
            )

        self._tool_calls = counter(
            "zeroclaw_tool_calls_total", "Tool result slots closed.", ("tool", "outcome")
        )
        self._tool_duration = histograms(
            "zeroclaw_tool_duration_seconds",
            "Time from dispatch to recorded result, approval wait excluded.",
            ("tool", "outcome"),
            TOOL_DURATION_BUCKETS,
        )
        self._llm_requests = counter(
            "zeroclaw_llm_requests_total", "Provider calls.", ("provider", "model", "success")
        )
        self._llm_duration = histograms(
            "zeroclaw_llm_duration_seconds",
            "Provider call latency.",
            ("provider", "model"),
            LLM_DURATION_BUCKETS,
        )
        self._tokens = counter(
            "zeroclaw_tokens_total",
            "Tokens reported by the provider.",
            ("provider", "model", "direction"),
        )
        self._turns = counter(
            "zeroclaw_turns_total", "Top-level turns ended, by outcome.", ("outcome",)
        )
        self._turn_duration = histogram(
            "zeroclaw_turn_duration_seconds",
            "Top-level whole-turn latency.",
            TURN_DURATION_BUCKETS,
        )
        self._approvals = counter(
            "zeroclaw_approvals_total", "Approval decisions.", ("tool", "decision", "surface")
        )
        self._approval_wait = histogram(
            "zeroclaw_approval_wait_seconds",
            "Time spent waiting for an approval decision.",
            APPROVAL_WAIT_BUCKETS,
        )
        self._redactions = counter(
            "zeroclaw_redactions_total",
            "Secrets replaced, by rule and surface.",
            ("rule", "surface"),
        )
        self._receipts = counter("zeroclaw_receipts_total", "Receipts issued.", ("tool",))
        self._loop_detections = counter(
            "zeroclaw_loop_detections_total", "Loop detector firings.", ("kind", "severity")
        )

    def on_event(self, event: ObserverEvent) -> None:
        """Record `event` without exemplars. Never blocks or raises."""
        self.record(event, NO_IDS)

    def record(self, event: ObserverEvent, ids: EventIds) -> None:
        """Record `event`; exemplars point at `ids` (the chain's span step). Never raises."""
        handler = self._handlers.get(type(event))
        if handler is None:
            return
        pending = self._pending
        if pending is not None:
            pending.emit((event, ids))  # events are read-only, ids are strings
            if type(event) is AgentEnd:
                pending.wake()
            return
        self._count(handler, event, ids)

    def force_flush(self, timeout_s: float = APPLY_WAIT_S) -> bool:
        """Apply every queued event now (deferred); wait at most `timeout_s`."""
        if self._queue is not None:
            return self._queue.force_flush(timeout_s)
        return True if self._pending is None else self._pending.force_flush(timeout_s)

    def shutdown(self, timeout_s: float = 5.0) -> bool:
        """Apply what is queued and stop the worker within `timeout_s` (deferred); the rest
        is counted as dropped."""
        if self._queue is not None:
            return self._queue.shutdown(timeout_s)
        return True if self._pending is None else self._pending.shutdown(timeout_s)

    def _apply(self, batch: list[tuple[Any, EventIds]]) -> bool:
        """The worker: each queued event counted, in order.

        A tool call's exemplars are set only where no later call of the batch replaces them
        (`_tool_plan`): each series and bucket keeps its latest exemplar only, so the
        exposition is the one setting every call's would give, without prometheus_client
        validating and timestamping an exemplar that the next call overwrites. The tool
        calls' counters without an exemplar to set are added up over the batch and
        incremented once per series (`_Tally`): whole counts, so the sums are exact.
        """
        handlers = self._handlers
        plans = self._tool_plan(batch)
        tally: _Tally = {}
        for n, (event, ids) in enumerate(batch):
            plan = plans.get(n)
            if plan is None:
                self._count(handlers[type(event)], event, ids)
            else:
                self._count(self._tool_call, event, ids, *plan, tally)
        for child, count in tally.items():
            self._count(_add_up, child, count)
        return True

    def _tool_plan(
        self, batch: Sequence[tuple[Any, EventIds]]
    ) -> dict[int, tuple[str, bool, bool]]:
        """For each tool call of `batch` (by index): its `tool` label, and whether it sets the
        exemplar of its counter series, and of its duration bucket. A call sets one unless a
        later call in the batch sets one on the same series (same tool label and outcome) or
        on the same bucket of it; a call without a span id sets none (and replaces none)."""
        plans: dict[int, tuple[str, bool, bool]] = {}
        series: dict[tuple[str, str], int] = {}
        buckets: dict[tuple[str, str, int | None], int] = {}
        for n, (event, ids) in enumerate(batch):
            if type(event) is ToolCall:
                tool = self._tool(event.tool, known=event.known_tool)
                plans[n] = (tool, False, False)
                if ids.span is not None:
                    series[tool, event.outcome] = n
                    buckets[tool, event.outcome, _tool_bucket(event.duration_s)] = n
        for n in series.values():
            plans[n] = (plans[n][0], True, False)
        for n in buckets.values():
            plans[n] = (plans[n][0], plans[n][1], True)
        return plans

    def _count(self, handler: Callable[..., None], event: Any, ids: EventIds, *plan: Any) -> None:
        try:
            handler(event, ids, *plan)
        except Exception:
            self.errors += 1
            if self._health is not None:
                self._health.increment(HealthCounter.OBSERVER_ERRORS, Signal.METRICS)

    def count_redactions(self, counts: Mapping[str, int], surface: str) -> None:
        """Add a redaction report (`Redactor.redact_text_report`) for one outward surface.

        Other surfaces (span guard, log processor, progress lines) call this with their own
        `surface` name; tool results are counted from `ToolCall` as `tool_result`.

        Args:
            counts: `{rule_id: count}`; rule ids come from the redactor's configuration.
            surface: a fixed name chosen by the caller, never data.
        """
        for rule, count in counts.items():
            if count > 0:
                self._redactions(rule, surface).inc(count)

    def tool_label(self, name: str, *, known: bool = True) -> str:
        """The `tool` label as written: the name (redacted, cut) if the registry knows it,
        else `unknown`."""
        return self._shown(self._tool(name, known=known))

    def _tool(self, name: str, *, known: bool = True) -> str:
        if not known or not name:
            return UNKNOWN_TOOL
        if self._known_tools is not None and not self._known_tools(name):
            return UNKNOWN_TOOL
        return name

    def _on_agent_end(self, event: AgentEnd, ids: EventIds) -> None:
        if event.correlation.parent_agent_alias is not None:
            # A delegated (nested) turn is part of its parent's turn, not a turn of its own:
            # it shows as the `delegate` call's tool metrics, its requests and tool calls count
            # as usual, and the turn metrics stay one per user message.
            return
        self._turns(event.outcome.value).inc()
        self._turn_duration.observe(event.duration_s, exemplar=_exemplar(ids.root))

    def _on_llm_response(self, event: LlmResponse, event_ids: EventIds) -> None:
        provider, model = event.provider, event.model
        ids = event_ids.root  # the turn's: these exemplars open the whole trace
        success = "true" if event.success else "false"
        self._llm_requests(provider, model, success).inc(exemplar=_exemplar(ids))
        self._llm_duration(provider, model).observe(event.duration_s, exemplar=_exemplar(ids))
        self._tokens(provider, model, "input").inc(event.input_tokens)
        self._tokens(provider, model, "output").inc(event.output_tokens)

    def _on_tool_call(self, event: ToolCall, ids: EventIds) -> None:
        self._tool_call(event, ids, self._tool(event.tool, known=event.known_tool), True, True)

    def _tool_call(
        self,
        event: ToolCall,
        ids: EventIds,
        tool: str,
        on_series: bool,
        on_bucket: bool,
        tally: _Tally | None = None,
    ) -> None:
        """A tool call counted, with its exemplar on its series and its bucket where asked;
        with a `tally`, its counters without an exemplar are added there instead."""
        exemplar = _exemplar(ids.span) if on_series or on_bucket else None
        outcome = _OUTCOME_VALUES[event.outcome]
        series = self._tool_calls(tool, outcome)
        if on_series or tally is None:
            series.inc(exemplar=exemplar if on_series else None)
        else:
            tally[series] = tally.get(series, 0) + 1
        self._tool_duration(tool, outcome).observe(
            event.duration_s, exemplar=exemplar if on_bucket else None
        )
        if event.receipt is not None:
            receipts = self._receipts(tool)
            if tally is None:
                receipts.inc()
            else:
                tally[receipts] = tally.get(receipts, 0) + 1
        if event.redaction_counts:
            self.count_redactions(event.redaction_counts, _TOOL_RESULT_SURFACE)

    def _on_approval(self, event: ApprovalDecision, event_ids: EventIds) -> None:
        tool = self._tool(event.tool)
        decision = one_of(event.decision, _DECISIONS)
        surface = one_of(event.surface, _SURFACES)
        self._approvals(tool, decision, surface).inc()
        self._approval_wait.observe(event.wait_s, exemplar=_exemplar(event_ids.root))

    def _on_loop_detection(self, event: LoopDetection, ids: EventIds) -> None:
        kind = one_of(event.kind, _LOOP_KINDS)
        severity = one_of(event.severity, _LOOP_SEVERITIES)
        self._loop_detections(kind, severity).inc()
