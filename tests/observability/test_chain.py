"""The telemetry chain: the span step first, its ids to every signal, each step isolated."""

from __future__ import annotations

from typing import Any

from zeroclaw_obs.observability.chain import TelemetryChain
from zeroclaw_obs.observability.events import NO_IDS, EventIds

from ..builders import llm_response

IDS = EventIds(("a" * 32, "1" * 16), ("a" * 32, "2" * 16))


class Spans:
    def __init__(self, log: list[str], ids: EventIds = IDS, fail: bool = False) -> None:
        self.log, self.ids, self.fail = log, ids, fail
        self.wants_messages = True

    def record(self, event: Any) -> EventIds:
        self.log.append("spans")
        if self.fail:
            raise RuntimeError("tracer broke")
        return self.ids

    def tool_scope(self, turn_id: str, tool_call_id: str) -> Any:
        return f"scope {turn_id} {tool_call_id}"


class Signal:
    def __init__(self, name: str, log: list[str], fail: bool = False) -> None:
        self.name, self.log, self.fail = name, log, fail
        self.seen: list[EventIds] = []

    def record(self, event: Any, ids: EventIds) -> None:
        self.log.append(self.name)
        self.seen.append(ids)
        if self.fail:
            raise RuntimeError("signal broke")


class Plain:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def on_event(self, event: Any) -> None:
        self.log.append("plain")


def test_the_span_step_runs_first_and_its_ids_reach_every_signal():
    log: list[str] = []
    metrics, logs = Signal("metrics", log), Signal("logs", log)
    chain = TelemetryChain(Spans(log), [metrics, logs], [Plain(log)])

    chain.on_event(llm_response())

    assert ["spans", "metrics", "logs", "plain"] == log
    assert [IDS] == metrics.seen == logs.seen


def test_a_failing_step_costs_only_itself():
    """A span step that raises hands `NO_IDS` on; a signal that raises stops no other."""
    log: list[str] = []
    first, second = Signal("first", log, fail=True), Signal("second", log)
    chain = TelemetryChain(Spans(log, fail=True), [first, second], [Plain(log)])

    chain.on_event(llm_response())
    chain.on_event(llm_response())

    assert ["spans", "first", "second", "plain"] * 2 == log
    assert [NO_IDS, NO_IDS] == second.seen
    assert 4 == chain.failures


def test_without_a_tracing_side_signals_get_no_ids():
    log: list[str] = []
    signal = Signal("metrics", log)
    chain = TelemetryChain(None, [signal])

    chain.on_event(llm_response())

    assert [NO_IDS] == signal.seen
    assert None is chain.tool_scope("t", "c")
    assert not chain.wants_messages


def test_scopes_and_message_capture_are_the_span_steps():
    chain = TelemetryChain(Spans([]), [])
    assert "scope t c" == chain.tool_scope("t", "c")
    assert chain.wants_messages
