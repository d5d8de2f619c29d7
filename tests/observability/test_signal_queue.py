"""One queue for metrics, log lines and the trace tree: the same outputs as their own queues,
and every lost event counted under each signal that would have recorded it."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from zeroclaw_obs.observability import signal_queue
from zeroclaw_obs.observability.chain import TelemetryChain
from zeroclaw_obs.observability.events import (
    AgentEnd,
    AgentStart,
    Correlation,
    LlmRequest,
    ObserverEvent,
    ToolCall,
    ToolCallStart,
    TurnOutcomeKind,
)
from zeroclaw_obs.observability.health import Signal, TelemetryHealth
from zeroclaw_obs.observability.logs import queued as queued_module
from zeroclaw_obs.observability.logs.logs import LineWriter, LogObserver, QueuedLogger
from zeroclaw_obs.observability.metrics.exposition import render_metrics
from zeroclaw_obs.observability.metrics.metrics import MetricsObserver
from zeroclaw_obs.observability.signal_queue import Queued, SignalQueue
from zeroclaw_obs.observability.trace_tree import TraceTreeObserver
from zeroclaw_obs.redaction import Redactor

from ..builders import DEPLOY, ECHO, WEATHER, HashSpanIds, call, mixed_turn
from ..conftest import RecordingObserver, make_replay

T1 = Correlation(turn_id="t1", channel="cli", agent_alias="a")

BUSY_TURN = {
    "agent": {"alias": "ops", "channel": "slack"},
    "user": "go",
    "config": {
        "approval": {"auto_approve": ["echo", "get_weather"], "answers": ["yes"]},
        "receipts": {"enabled": True},
    },
    "tools": [ECHO, DEPLOY, WEATHER],
    "responses": [
        {"tool_calls": [call("deploy", "c0", target="prod")]},
        {"tool_calls": [call("get_weather", "w1", city="Leaky")]},
        # The same call again and again: loop detection lines, counts and tree marks.
        *({"tool_calls": [call("echo", f"e{i}", q="x")]} for i in range(6)),
        {"text": "done"},
    ],
}


async def recorded(*turns: dict[str, Any]) -> list[ObserverEvent]:
    """Every observer event of `turns`, run one after the other."""
    recorder = RecordingObserver()
    for turn in turns:
        await make_replay(turn, observer=recorder, receipt_key=bytes(32)).run()
    return recorder.events


class Signals:
    """Metrics, log lines and the tree, fed by their own queues or by one `SignalQueue`."""

    def __init__(self, *, shared: bool) -> None:
        self.stream = io.StringIO()
        self.registry = CollectorRegistry(auto_describe=True)
        health = TelemetryHealth()
        self.lines = QueuedLogger(
            LineWriter(redactor=Redactor(), stream=self.stream),
            health=health,
            schedule_delay_s=3600,
        )
        self.queue = SignalQueue(health=health, schedule_delay_s=3600) if shared else None
        self.metrics = MetricsObserver(
            self.registry, health=health, deferred=not shared, queue=self.queue
        )
        logs = LogObserver(self.lines, capture_content=True, health=health, queue=self.queue)
        self.tree = TraceTreeObserver(queue=self.queue)
        signals = [self.queue] if self.queue is not None else [self.metrics, logs, self.tree]
        self.chain = TelemetryChain(HashSpanIds(), signals)

    def outputs(self) -> tuple[str, bytes, str]:
        """The tree, the OpenMetrics exposition (each read applies what is queued), then the
        log lines once every queue is shut."""
        tree = self.tree.render()
        exposition = render_metrics(self.registry, openmetrics=True)
        assert self.metrics.shutdown(5)
        assert self.lines.shutdown(5)
        return tree, exposition, self.stream.getvalue()


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """One moment for every log line and exemplar, so two runs can be compared byte for byte."""
    now = 1_764_000_000.25
    monkeypatch.setattr(queued_module, "_now", lambda: now)
    monkeypatch.setattr(signal_queue, "_now", lambda: now)
    monkeypatch.setattr(time, "time", lambda: now)


class TestSameOutputs:
    async def test_lines_metrics_and_tree_are_those_of_their_own_queues(self, fixed_clock):
        """Byte for byte: the log lines, the OpenMetrics exposition (exemplars included) and
        the trace tree of turns with every kind of event, fed by one queue or by three."""
        events = await recorded(BUSY_TURN, mixed_turn(), BUSY_TURN)
        kinds = {type(e) for e in events}
        assert {AgentStart, LlmRequest, ToolCallStart, ToolCall} <= kinds
        own, shared = Signals(shared=False), Signals(shared=True)
        for event in events:
            own.chain.on_event(event)
            shared.chain.on_event(event)

        own_tree, own_exposition, own_lines = own.outputs()
        shared_tree, shared_exposition, shared_lines = shared.outputs()

        assert own_lines.count("\n") > len(events) // 2
        assert "loop_detection" in own_lines and "# {span_id=" in own_exposition.decode()
        assert own_lines == shared_lines
        assert own_exposition == shared_exposition
        assert own_tree == shared_tree != ""

    async def test_a_read_applies_what_waits_without_a_shutdown(self):
        """The worker sleeps (an hour's delay, no turn end yet): a scrape and a drawing still
        see every queued event."""
        events = [e for e in await recorded(mixed_turn()) if type(e).__name__ != "AgentEnd"]
        signals = Signals(shared=True)
        for event in events:
            signals.chain.on_event(event)
        exposition = render_metrics(signals.registry, openmetrics=False).decode()
        assert 'zeroclaw_tool_calls_total{outcome="success",tool="get_weather"} 1.0' in exposition
        assert "get_weather" in signals.tree.render()
        assert signals.metrics.shutdown(5)


class Blocking:
    """A queued signal whose `apply` waits until released (the worker stays busy)."""

    lost_as = Signal.TRACES  # any signal: only what the queue counts is read

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.applied: list[Queued] = []

    def kinds(self) -> Sequence[type]:
        return (ToolCallStart,)

    def apply(self, batch: Sequence[Queued]) -> None:
        self.entered.set()
        self.release.wait(5)
        self.applied.extend(batch)


class TestLosses:
    async def test_a_closed_queue_counts_each_event_under_its_signals(self):
        """Metrics count tool calls but not their starts; logs count both; the tree, a view,
        counts nothing: each dropped event once under each signal that records it."""
        events = await recorded(mixed_turn())
        health = TelemetryHealth()
        queue = SignalQueue(health=health)
        MetricsObserver(CollectorRegistry(), health=health, queue=queue)
        LogObserver(
            QueuedLogger(LineWriter(redactor=Redactor(), stream=io.StringIO()), health=health),
            health=health,
            queue=queue,
        )
        TraceTreeObserver(queue=queue)
        assert queue.shutdown(5)
        for event in events:
            queue.record(event, HashSpanIds().record(event))

        metrics_kinds = {
            ToolCall,
            *(
                type(e)
                for e in events
                if type(e).__name__
                in {"AgentEnd", "LlmResponse", "ApprovalDecision", "LoopDetection"}
            ),
        }
        dropped = dict(health.snapshot().dropped)
        assert sum(1 for e in events if type(e) in metrics_kinds) == dropped["metrics"]
        assert len(events) == dropped["logs"]  # the log observer writes a line for each
        assert {"metrics", "logs"} == set(dropped)

    def test_events_left_at_the_shutdown_deadline_are_counted_per_signal(self):
        """A worker stuck in a batch: what it holds and what waits are dropped and timed out,
        under the signal of each event's kind; events nobody records are not even queued."""
        health = TelemetryHealth()
        queue = SignalQueue(health=health, max_queue_size=16, max_export_batch_size=1)
        blocking = Blocking()
        queue.add(blocking)
        start = _tool_call_start()
        queue.record(start, HashSpanIds().record(start))
        queue.force_flush(0.0)
        assert blocking.entered.wait(5)
        for _ in range(3):
            queue.record(start, HashSpanIds().record(start))
        agent_start = _agent_start()
        queue.record(agent_start, HashSpanIds().record(agent_start))  # no signal records it

        assert not queue.shutdown(0.05)
        blocking.release.set()
        snapshot = health.snapshot()
        assert {"traces": 4} == dict(snapshot.dropped) == dict(snapshot.timed_out)


class Counting:
    """A queued signal that records the size of every batch it applies."""

    lost_as = None

    def __init__(self, expected: int) -> None:
        self.batches: list[int] = []
        self.expected = expected
        self.done = threading.Event()

    def kinds(self) -> Sequence[type]:
        return (ToolCallStart, AgentEnd)

    def apply(self, batch: Sequence[Queued]) -> None:
        self.batches.append(len(batch))
        if sum(self.batches) >= self.expected:
            self.done.set()


class TestBursts:
    def test_a_burst_of_a_few_thousand_calls_waits_for_the_turn_s_end(self):
        """5,000 events queued back to back (2,500 calls' starts and ends, past the old mark
        of 4,096): none is applied until the turn ends, since a worker beside a busy turn
        costs far more CPU than after it (issue 17); then every one is."""
        queue = SignalQueue(health=TelemetryHealth())
        counting = Counting(expected=5001)
        queue.add(counting)
        start = _tool_call_start()
        ids = HashSpanIds().record(start)
        for _ in range(5000):
            queue.record(start, ids)
        time.sleep(0.3)
        assert [] == counting.batches
        end = AgentEnd(
            correlation=T1, outcome=TurnOutcomeKind.FINAL, iterations=1, time_ns=2, duration_s=0.1
        )
        queue.record(end, HashSpanIds().record(end))
        assert counting.done.wait(5)
        assert 5001 == sum(counting.batches)
        assert queue.shutdown(5)


def _tool_call_start() -> ToolCallStart:
    return ToolCallStart(
        correlation=T1,
        iteration=1,
        tool_call_id="c1",
        tool="echo",
        provenance="native",
        arguments="{}",
        time_ns=1,
    )


def _agent_start() -> AgentStart:
    return AgentStart(correlation=T1, provider="openai", model="gpt", time_ns=1)
