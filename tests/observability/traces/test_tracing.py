"""The span observer: DESIGN §3 spans from real turns, on a provider each test builds."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import SpanKind, StatusCode

from zeroclaw_obs.observability.events import (
    AgentEnd,
    AgentStart,
    Correlation,
    LlmRequest,
    LlmResponse,
    ToolCall,
    ToolCallStart,
    ToolOutcome,
    TurnOutcomeKind,
)
from zeroclaw_obs.observability.health import TelemetryHealth
from zeroclaw_obs.observability.traces.export_guard import RedactingSpanExporter
from zeroclaw_obs.observability.traces.otlp_json import OtlpJsonFileExporter, read_otlp_json
from zeroclaw_obs.observability.traces.tracer_setup import build_tracer_provider, shutdown_tracing
from zeroclaw_obs.observability.traces.tracing import ContentCapture, SpanObserver
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.tools.base import tool
from zeroclaw_obs.turn.hooks import CancelCall, Hooks

from ...builders import PlayedProvider, Traced, answer, build, http

SECRET = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
WEATHER = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "responses": [
        {"when": {"city": "Paris"}, "output": "18C", "delay_ms": 60},
        {"when": {"city": "Oslo"}, "output": "4C", "delay_ms": 60},
        {"when": {"city": "Nowhere"}, "error": "city not found"},
        {"when": {"city": "Crash"}, "raise": f"kaput {SECRET}"},
        {"when": {"city": "Leak"}, "output": f"token {SECRET}"},
        {"when": {"city": "Long"}, "output": "x" * 50},
        {"when": {"city": "Stuck"}, "hang": True},
        {"default": {"output": "other"}},
    ],
}


def call(cid: str, city: str, name: str = "get_weather") -> dict:
    return {"id": cid, "name": name, "arguments": {"city": city}}


def scenario(*rounds: list[dict], **config: object) -> dict:
    config.setdefault("approval", {"auto_approve": ["get_weather"]})
    return {
        "agent": {"alias": "weather-bot", "channel": "cli"},
        "user": "go",
        "config": config,
        "tools": [WEATHER],
        "responses": [*({"tool_calls": r} for r in rounds), {"text": "done"}],
    }


async def run_fetches(run_scenario, traced: Traced) -> None:
    """Two parallel calls (`c1` Paris, `c2` Oslo) to a tool whose code starts its own span,
    `GET {city}`, on another tracer of the same provider."""
    user_tracer = traced.provider.get_tracer("user.code")

    @tool
    async def fetch(city: str) -> str:
        """Fetch a page."""
        with user_tracer.start_as_current_span(f"GET {city}"):
            await asyncio.sleep(0.01)
        return "ok"

    data = scenario(
        [call("c1", "Paris", "fetch"), call("c2", "Oslo", "fetch")],
        parallel_tools=True,
        approval={"auto_approve": ["fetch"]},
    )
    await run_scenario(data, observer=traced.observer, extra_tools=[fetch])


async def run_probe(run_scenario, traced: Traced) -> list[int]:
    """One call (`c1`) to a tool that reports the span id current while it runs."""
    seen: list[int] = []

    @tool
    async def probe(city: str) -> str:
        """Report the current span."""
        seen.append(trace.get_current_span().get_span_context().span_id)
        return "ok"

    data = scenario([call("c1", "Paris", "probe")], approval={"auto_approve": ["probe"]})
    await run_scenario(data, observer=traced.observer, extra_tools=[probe])
    return seen


class TestSpanShape:
    async def test_names_and_kinds(self, run_scenario, traced):
        """A turn with one call has `invoke_agent`, two `chat` (CLIENT) and one `execute_tool`."""
        await run_scenario(scenario([call("c1", "Paris")]), observer=traced.observer)
        actual = sorted((s.name, s.kind) for s in traced.spans)
        assert [
            ("chat scripted-model", SpanKind.CLIENT),
            ("chat scripted-model", SpanKind.CLIENT),
            ("execute_tool get_weather", SpanKind.INTERNAL),
            ("invoke_agent weather-bot", SpanKind.INTERNAL),
        ] == actual

    async def test_turn_span_attributes(self, run_scenario, traced):
        """The root carries agent, conversation (the turn id), channel, outcome and iterations."""
        outcome, _ = await run_scenario(scenario([call("c1", "Paris")]), observer=traced.observer)
        attributes = traced.root().attributes
        assert {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "weather-bot",
            "gen_ai.conversation.id": outcome.turn_id,
            "zeroclaw.turn.id": outcome.turn_id,
            "zeroclaw.channel": "cli",
            "zeroclaw.turn.outcome": "final",
            "zeroclaw.turn.iterations": 2,
        }.items() <= dict(attributes).items()
        assert StatusCode.UNSET == traced.root().status.status_code

    async def test_chat_span_attributes(self, run_scenario, traced):
        """A chat span names provider and model, counts tokens and says which iteration it was."""
        await run_scenario(scenario([call("c1", "Paris")]), observer=traced.observer)
        first = min(traced.named("chat"), key=lambda s: s.start_time)
        attributes = dict(first.attributes)
        assert ("chat", "scripted", "scripted-model", 1) == (
            attributes["gen_ai.operation.name"],
            attributes["gen_ai.provider.name"],
            attributes["gen_ai.request.model"],
            attributes["zeroclaw.iteration"],
        )
        assert attributes["gen_ai.usage.input_tokens"] > 0
        assert attributes["gen_ai.usage.output_tokens"] > 0

    async def test_tool_span_attributes(self, run_scenario, traced):
        """A successful call: name, id, type `function`, outcome, redacted arguments and result."""
        await run_scenario(scenario([call("c1", "Paris")]), observer=traced.observer)
        attributes = dict(traced.tool("c1").attributes)
        assert {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.type": "function",
            "zeroclaw.tool.outcome": "success",
            "zeroclaw.tool.truncated_bytes": 0,
            "zeroclaw.redaction.count": 0,
            "zeroclaw.iteration": 1,
            "gen_ai.tool.call.arguments": '{"city": "Paris"}',
            "gen_ai.tool.call.result": "18C",
        }.items() <= attributes.items()
        assert StatusCode.UNSET == traced.tool("c1").status.status_code

    async def test_every_span_carries_the_turn_id(self, run_scenario, traced):
        """`zeroclaw.turn.id` is on every span of the turn."""
        outcome, _ = await run_scenario(
            scenario([call("c1", "Paris"), call("c2", "Oslo")]), observer=traced.observer
        )
        assert {outcome.turn_id} == {s.attributes["zeroclaw.turn.id"] for s in traced.spans}


class TestRealProviderChat:
    async def test_response_attributes(self, traced):
        """A real provider's chat span: response model, id, finish reasons, server, usage."""
        provider = PlayedProvider(
            answer(model="gpt-test-2025-01", response_id="chatcmpl-42", finish_reasons=("stop",)),
            server_address="api.example.test",
            server_port=8443,
        )
        await build(provider, observer=traced.observer).run()
        (chat,) = traced.named("chat")
        assert {
            "gen_ai.request.model": "gpt-test",
            "gen_ai.response.model": "gpt-test-2025-01",
            "gen_ai.response.id": "chatcmpl-42",
            "gen_ai.response.finish_reasons": ("stop",),
            "server.address": "api.example.test",
            "server.port": 8443,
            "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.output_tokens": 5,
        }.items() <= dict(chat.attributes).items()
        assert ("chat gpt-test", StatusCode.UNSET) == (chat.name, chat.status.status_code)

    async def test_each_retry_is_an_attempt_event_on_the_one_chat_span(self, traced):
        """One chat span per call; every retry is a `zeroclaw.provider.attempt` event on it."""
        provider = PlayedProvider(
            http(503), http(429, "rate_limit_error", retry_after=2.0), answer()
        )
        await build(provider, observer=traced.observer).run()
        (chat,) = traced.named("chat")
        assert [
            ("zeroclaw.provider.attempt", 1, "http_503", 503, 0.25),
            ("zeroclaw.provider.attempt", 2, "rate_limit_error", 429, 2.0),
        ] == [
            (
                e.name,
                e.attributes["zeroclaw.provider.attempt"],
                e.attributes["error.type"],
                e.attributes["http.response.status_code"],
                e.attributes["zeroclaw.provider.retry_wait_s"],
            )
            for e in chat.events
        ]

    async def test_a_final_failure_sets_error_type_and_status(self, traced):
        """The last error: `error.type` from the error, status ERROR, on the chat and the root."""
        provider = PlayedProvider(http(500), http(500), http(500))
        await build(provider, observer=traced.observer).run()
        (chat,) = traced.named("chat")
        line = "provider 'openai': HTTP 500 http_500"
        assert ("http_500", StatusCode.ERROR, line, "api.example.test", 2) == (
            chat.attributes["error.type"],
            chat.status.status_code,
            chat.status.description,
            chat.attributes["server.address"],
            len(chat.events),
        )
        root = traced.root()
        assert ("http_500", "error", line) == (
            root.attributes["error.type"],
            root.attributes["zeroclaw.turn.outcome"],
            root.status.description,
        )

    async def test_a_call_the_cancel_stops_ends_as_cancelled(self, run_scenario, traced):
        """A cancel during a provider call closes its chat span as `cancelled`, not unfinished."""
        data = {"user": "go", "responses": [{"text": "late", "delay_ms": 2000}]}
        await run_scenario({**data, "cancel_after_ms": 50}, observer=traced.observer)
        (chat,) = traced.named("chat")
        assert "cancelled" == chat.attributes["error.type"]
        assert "zeroclaw.turn.outcome" in traced.root().attributes
        assert "error.type" not in traced.root().attributes


class TestParenting:
    async def test_children_parent_on_the_root_in_one_trace(self, run_scenario, traced):
        """Every chat, tool and approval span is a child of `invoke_agent`, all in one trace."""
        data = scenario(
            [call("c1", "Paris"), call("c2", "Oslo")],
            approval={"auto_approve": [], "answers": ["yes", "yes"]},
        )
        await run_scenario(data, observer=traced.observer)
        root = traced.root()
        children = [s for s in traced.spans if s is not root]
        assert 6 == len(children)  # two chats, two approvals, two tools
        assert {root.context.span_id} == {s.parent.span_id for s in children}
        assert {root.context.trace_id} == {s.context.trace_id for s in traced.spans}
        assert root.parent is None

    async def test_parallel_calls_overlap(self, run_scenario, traced):
        """With `parallel_tools` the two tool spans' [start, end] intervals overlap."""
        data = scenario([call("c1", "Paris"), call("c2", "Oslo")], parallel_tools=True)
        await run_scenario(data, observer=traced.observer)
        one, two = traced.tool("c1"), traced.tool("c2")
        assert one.start_time < two.end_time and two.start_time < one.end_time

    async def test_sequential_calls_do_not_overlap(self, run_scenario, traced):
        """Sequential calls: the second tool span starts after the first one ended."""
        data = scenario([call("c1", "Paris"), call("c2", "Oslo")], parallel_tools=False)
        await run_scenario(data, observer=traced.observer)
        assert traced.tool("c1").end_time <= traced.tool("c2").start_time

    async def test_spans_have_real_durations(self, run_scenario, traced):
        """A tool that takes 60 ms has a span of at least 60 ms, inside its root's interval."""
        await run_scenario(scenario([call("c1", "Paris")]), observer=traced.observer)
        span, root = traced.tool("c1"), traced.root()
        assert span.end_time - span.start_time >= 60_000_000
        assert root.start_time <= span.start_time and span.end_time <= root.end_time

    async def test_spans_the_tool_starts_nest_under_its_tool_span(self, run_scenario, traced):
        """A span started inside the tool, on any tracer, is a child of that call's span.

        Two parallel calls: each inner span finds its own call's span, not the sibling's.
        """
        await run_fetches(run_scenario, traced)
        for call_id, city in (("c1", "Paris"), ("c2", "Oslo")):
            (inner,) = traced.named(f"GET {city}")
            outer = traced.tool(call_id)
            assert outer.context.span_id == inner.parent.span_id
            assert outer.context.trace_id == inner.context.trace_id
            assert outer.start_time <= inner.start_time and inner.end_time <= outer.end_time

    async def test_the_scope_ends_with_the_call(self, run_scenario, traced):
        """After the tool returns, the engine's own context no longer has the tool span."""
        seen = await run_probe(run_scenario, traced)
        assert [traced.tool("c1").context.span_id] == seen
        assert not trace.get_current_span().get_span_context().is_valid


class TestOutcomes:
    async def test_unknown_tool_gets_an_error_span(self, run_scenario, traced):
        """A call to a tool that does not exist still gets a span: outcome `unknown`, ERROR."""
        await run_scenario(scenario([call("c1", "x", name="nope")]), observer=traced.observer)
        span = traced.tool("c1")
        assert ("unknown", "unknown_tool", StatusCode.ERROR) == (
            span.attributes["zeroclaw.tool.outcome"],
            span.attributes["error.type"],
            span.status.status_code,
        )
        assert "extension" == span.attributes["gen_ai.tool.type"]

    async def test_denied_call_gets_a_span_and_an_approval_span(self, run_scenario, traced):
        """A denied call: a tool span with outcome `denied`, status UNSET; an `await_approval`."""
        data = scenario([call("c1", "Paris")], approval={"auto_approve": [], "answers": ["no"]})
        await run_scenario(data, observer=traced.observer)
        span = traced.tool("c1")
        assert ("denied", StatusCode.UNSET) == (
            span.attributes["zeroclaw.tool.outcome"],
            span.status.status_code,
        )
        assert "error.type" not in span.attributes
        (approval,) = traced.named("await_approval")
        assert {
            "zeroclaw.approval.decision": "no",
            "zeroclaw.approval.surface": "scenario",
            "gen_ai.tool.call.id": "c1",
        }.items() <= dict(approval.attributes).items()
        assert "await_approval get_weather" == approval.name
        assert approval.end_time <= span.start_time  # the human wait is not tool latency

    async def test_failing_tool_sets_error_status(self, run_scenario, traced):
        """A tool that returns an error: status ERROR, `error.type=tool_error`."""
        await run_scenario(scenario([call("c1", "Nowhere")]), observer=traced.observer)
        span = traced.tool("c1")
        assert ("error", "tool_error", StatusCode.ERROR) == (
            span.attributes["zeroclaw.tool.outcome"],
            span.attributes["error.type"],
            span.status.status_code,
        )
        assert "Error: city not found" == span.status.description

    async def test_raising_tool_sets_the_exception_type(self, run_scenario, traced):
        """A tool that raises: status ERROR, `error.type` is the exception's class name."""
        await run_scenario(scenario([call("c1", "Crash")]), observer=traced.observer)
        span = traced.tool("c1")
        assert ("ScriptedToolError", StatusCode.ERROR) == (
            span.attributes["error.type"],
            span.status.status_code,
        )

    async def test_interrupted_call_on_cancel(self, run_scenario, traced):
        """A call cut off by a cancel gets outcome `interrupted` (ERROR); the turn stays UNSET."""
        data = scenario([call("c1", "Stuck")])
        data["cancel_after_ms"] = 30
        await run_scenario(data, observer=traced.observer)
        span = traced.tool("c1")
        assert ("interrupted", StatusCode.ERROR) == (
            span.attributes["zeroclaw.tool.outcome"],
            span.status.status_code,
        )
        root = traced.root()
        assert ("cancelled", StatusCode.UNSET) == (
            root.attributes["zeroclaw.turn.outcome"],
            root.status.status_code,
        )

    async def test_loop_detection_is_a_span_event(self, run_scenario, traced):
        """The third identical call's span carries a `zeroclaw.loop_detection` warning event."""
        rounds = [[call(f"c{i}", "Paris")] for i in range(1, 4)]
        await run_scenario(
            scenario(*rounds, dedup_exempt_tools=["get_weather"]), observer=traced.observer
        )
        assert () == traced.tool("c2").events
        (event,) = traced.tool("c3").events
        assert ("zeroclaw.loop_detection", "repeat", "warning") == (
            event.name,
            event.attributes["zeroclaw.loop_detection.kind"],
            event.attributes["zeroclaw.loop_detection.severity"],
        )
        assert event.attributes["zeroclaw.loop_detection.message"]

    async def test_aborted_turn_sets_error_status(self, run_scenario, traced):
        """A loop-detection abort ends the root with outcome `aborted` and status ERROR."""
        rounds = [[call(f"c{i}", "Paris")] for i in range(1, 6)]
        await run_scenario(
            scenario(*rounds, dedup_exempt_tools=["get_weather"]), observer=traced.observer
        )
        root = traced.root()
        assert ("aborted", "aborted", StatusCode.ERROR) == (
            root.attributes["zeroclaw.turn.outcome"],
            root.attributes["error.type"],
            root.status.status_code,
        )

    async def test_truncation_is_a_span_event(self, run_scenario, traced):
        """Truncation sets `zeroclaw.tool.truncated_bytes` and a `zeroclaw.truncation` event."""
        data = scenario([call("c1", "Long")], max_tool_result_chars=10)
        await run_scenario(data, observer=traced.observer)
        span = traced.tool("c1")
        assert 40 == span.attributes["zeroclaw.tool.truncated_bytes"]
        (event,) = span.events
        assert ("zeroclaw.truncation", 40) == (
            event.name,
            event.attributes["zeroclaw.tool.truncated_bytes"],
        )

    async def test_truncated_bytes_are_utf8_bytes(self, run_scenario, traced):
        """40 cut characters of 3 bytes each are 120 bytes; the event also says 40 chars."""

        @tool
        async def euros(city: str) -> str:
            """Prices."""
            return "€" * 50

        data = scenario(
            [call("c1", "Paris", "euros")],
            max_tool_result_chars=10,
            approval={"auto_approve": ["euros"]},
        )
        await run_scenario(data, observer=traced.observer, extra_tools=[euros])
        span = traced.tool("c1")
        assert 120 == span.attributes["zeroclaw.tool.truncated_bytes"]
        (event,) = span.events
        assert (120, 40) == (
            event.attributes["zeroclaw.tool.truncated_bytes"],
            event.attributes["zeroclaw.tool.truncated_chars"],
        )

    async def test_receipt_and_key_id(self, run_scenario, traced):
        """With receipts on: the receipt on the tool span, the key id on the turn span."""
        _, replay = await run_scenario(
            scenario([call("c1", "Paris")], receipts={"enabled": True}), observer=traced.observer
        )
        key_id = traced.root().attributes["zeroclaw.receipt.key_id"]
        assert replay.execution.receipts.key_id == key_id
        receipt = traced.tool("c1").attributes["zeroclaw.tool.receipt"]
        assert receipt.startswith("zc-receipt-")
        assert f"[receipt: {receipt}]" in replay.state.messages[-2]["content"]

    async def test_no_receipt_attributes_when_off(self, run_scenario, traced):
        """With receipts off neither the key id nor a receipt appears."""
        await run_scenario(scenario([call("c1", "Paris")]), observer=traced.observer)
        assert "zeroclaw.receipt.key_id" not in traced.root().attributes
        assert "zeroclaw.tool.receipt" not in traced.tool("c1").attributes

    async def test_redaction_count(self, run_scenario, traced):
        """A secret in a result is counted in `zeroclaw.redaction.count` and not in the span."""
        await run_scenario(scenario([call("c1", "Leak")]), observer=traced.observer)
        attributes = traced.tool("c1").attributes
        assert 1 == attributes["zeroclaw.redaction.count"]
        assert "token [REDACTED:github_token]" == attributes["gen_ai.tool.call.result"]


class TestSlotsThatNeverRan:
    """Every slot gets its `execute_tool` span, even one that never ran (DESIGN §3)."""

    def assert_span(self, traced: Traced, call_id: str, outcome: str) -> ReadableSpan:
        span = traced.tool(call_id)
        assert (outcome, call_id, "execute_tool get_weather") == (
            span.attributes["zeroclaw.tool.outcome"],
            span.attributes["gen_ai.tool.call.id"],
            span.name,
        )
        assert SECRET not in str(dict(span.attributes))
        return span

    async def test_deduplicated(self, run_scenario, traced):
        """The duplicate's span: outcome `deduplicated`, status UNSET, arguments redacted."""
        twice = [call("c1", f"Paris {SECRET}"), call("c2", f"Paris {SECRET}")]
        await run_scenario(scenario(twice), observer=traced.observer)
        span = self.assert_span(traced, "c2", "deduplicated")
        assert StatusCode.UNSET == span.status.status_code
        assert "[REDACTED:" in span.attributes["gen_ai.tool.call.arguments"]

    async def test_replaced(self, run_scenario, traced):
        """A replaced call's span: outcome `replaced`, the replacement redacted, no receipt."""
        answers = [{"replace_with": f"pretend {SECRET}"}]
        data = scenario(
            [call("c1", "Paris")],
            approval={"auto_approve": [], "answers": answers},
            receipts={"enabled": True},
        )
        await run_scenario(data, observer=traced.observer)
        span = self.assert_span(traced, "c1", "replaced")
        assert "pretend [REDACTED:github_token]" == span.attributes["gen_ai.tool.call.result"]
        assert "zeroclaw.tool.receipt" not in span.attributes

    async def test_excluded(self, run_scenario, traced):
        """An excluded call's span: outcome `excluded`, ERROR `excluded_tool`."""
        data = scenario([call("c1", "Paris")], excluded_tools=["get_weather"])
        await run_scenario(data, observer=traced.observer)
        span = self.assert_span(traced, "c1", "excluded")
        assert ("excluded_tool", StatusCode.ERROR) == (
            span.attributes["error.type"],
            span.status.status_code,
        )

    async def test_cancelled_by_hook(self, run_scenario, traced):
        """A hook-cancelled call's span: outcome `cancelled_by_hook`, the reason redacted."""
        hooks = Hooks()
        hooks.add_before(lambda c: CancelCall(f"policy says no to {SECRET}"))
        await run_scenario(scenario([call("c1", "Paris")]), observer=traced.observer, hooks=hooks)
        span = self.assert_span(traced, "c1", "cancelled_by_hook")
        assert StatusCode.UNSET == span.status.status_code
        assert (
            "Cancelled by hook: policy says no to [REDACTED:github_token]"
            == span.attributes["gen_ai.tool.call.result"]
        )


class TestContentCapture:
    async def test_none_has_no_arguments_results_or_reasons(self, run_scenario):
        """Capture `none`: no arguments, no results, no status descriptions; the rest remains."""
        traced = Traced(capture=ContentCapture.NONE)
        await run_scenario(
            scenario([call("c1", "Paris"), call("c2", "Nowhere")]), observer=traced.observer
        )
        for span in traced.named("execute_tool"):
            assert "gen_ai.tool.call.arguments" not in span.attributes
            assert "gen_ai.tool.call.result" not in span.attributes
            assert span.status.description is None
        assert "tool_error" == traced.tool("c2").attributes["error.type"]
        traced.provider.shutdown()


class TestOpenInference:
    """DESIGN §3: OpenInference backends (Arize Phoenix, …) show our spans first-class."""

    async def test_every_span_has_its_kind(self, run_scenario, traced):
        """AGENT, LLM, TOOL, and GUARDRAIL for an approval wait (not a second tool call)."""
        data = scenario([call("c1", "Paris")], approval={"auto_approve": [], "answers": ["yes"]})
        await run_scenario(data, observer=traced.observer)

        kinds = sorted(
            (s.name.split()[0], s.attributes["openinference.span.kind"]) for s in traced.spans
        )
        assert [
            ("await_approval", "GUARDRAIL"),
            ("chat", "LLM"),
            ("chat", "LLM"),
            ("execute_tool", "TOOL"),
            ("invoke_agent", "AGENT"),
        ] == kinds

    async def test_turn_and_tool_spans_carry_redacted_input_and_output(self, run_scenario, traced):
        data = scenario([call("c1", "Leak")])
        data["user"] = f"use {SECRET}"
        data["responses"][-1] = {"text": f"done with {SECRET}"}
        await run_scenario(data, observer=traced.observer)

        root = traced.root().attributes
        tool = traced.tool("c1").attributes
        assert "use [REDACTED:github_token]" == root["input.value"]
        assert "done with [REDACTED:github_token]" == root["output.value"]
        assert {"city": "Leak"} == json.loads(tool["input.value"])
        assert "token [REDACTED:github_token]" == tool["output.value"].split("\n")[0]
        assert "get_weather" == tool["tool.name"]

    async def test_chat_spans_carry_model_and_token_counts(self, run_scenario, traced):
        await run_scenario(scenario([call("c1", "Paris")]), observer=traced.observer)

        chat = traced.named("chat")[0].attributes
        assert "scripted-model" == chat["llm.model_name"]
        assert chat["gen_ai.usage.input_tokens"] == chat["llm.token_count.prompt"] > 0
        assert chat["gen_ai.usage.output_tokens"] == chat["llm.token_count.completion"] > 0
        assert (
            chat["llm.token_count.prompt"] + chat["llm.token_count.completion"]
            == chat["llm.token_count.total"]
        )
        assert "gen_ai.input.messages" not in chat  # opt-in only

    async def test_messages_are_opt_in_and_redacted(self, run_scenario):
        traced = Traced(capture_messages=True)
        data = scenario([call("c1", "Paris")])
        data["user"] = f"use {SECRET}"
        await run_scenario(data, observer=traced.observer)

        first = traced.named("chat")[0].attributes
        sent = json.loads(first["gen_ai.input.messages"])
        answered = json.loads(first["gen_ai.output.messages"])
        assert [{"role": "user", "content": "use [REDACTED:github_token]"}] == [
            m for m in sent if m["role"] == "user"
        ]
        assert "get_weather" == answered[0]["tool_calls"][0]["name"]
        traced.provider.shutdown()

    async def test_capture_none_carries_no_content_at_all(self, run_scenario):
        """Under `none`: no input/output values and no messages on any span, even if asked."""
        traced = Traced(capture=ContentCapture.NONE, capture_messages=True)
        await run_scenario(scenario([call("c1", "Paris")]), observer=traced.observer)

        content = {
            "input.value",
            "output.value",
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
        }
        assert [] == [(s.name, k) for s in traced.spans for k in s.attributes if k in content]
        assert not traced.observer.wants_messages
        traced.provider.shutdown()


class TestShortMcpNames:
    async def test_a_short_name_is_labelled_by_its_full_name(self, run_scenario, traced):
        """A deferred MCP tool the model calls by its short name: the span (and every label
        built from the observer events) says `wx__storm_warnings`; the TurnEvent card keeps the
        model's spelling, so a client pairs it with the call it saw."""
        data = {
            "user": "storms?",
            "config": {"approval": {"auto_approve": ["tool_search", "wx__storm_warnings"]}},
            "mcp_servers": [
                {
                    "name": "wx",
                    "deferred": True,
                    "tools": [
                        {
                            "name": "storm_warnings",
                            "description": "Storm warnings for a region",
                            "parameters": {
                                "type": "object",
                                "properties": {"region": {"type": "string"}},
                            },
                            "responses": [{"default": {"output": "gale"}}],
                        }
                    ],
                }
            ],
            "responses": [
                {"tool_calls": [{"name": "tool_search", "arguments": {"query": "storm"}}]},
                {"tool_calls": [{"name": "storm_warnings", "arguments": {"region": "N"}}]},
                {"text": "done"},
            ],
        }
        _, replay = await run_scenario(data, observer=traced.observer)

        names = sorted(s.name for s in traced.named("execute_tool"))
        cards = [e.name for e in replay.events.events if e.type == "tool_result"]
        assert ["execute_tool tool_search", "execute_tool wx__storm_warnings"] == names
        assert ["tool_search", "storm_warnings"] == cards


class TestLeaks:
    async def test_secret_is_absent_from_every_exported_byte(self, run_scenario, tmp_path):
        """A secret in arguments, a result and an exception message never reaches the file."""
        path = tmp_path / "spans.jsonl"
        provider = TracerProvider()
        guarded = RedactingSpanExporter(OtlpJsonFileExporter(path), Redactor())
        provider.add_span_processor(SimpleSpanProcessor(guarded))
        data = scenario(
            [call("c1", "Leak"), call("c2", "Crash"), call("c3", f"at {SECRET}")],
            receipts={"enabled": True},
        )
        observer = SpanObserver(provider)
        await run_scenario(data, observer=observer)
        assert observer.shutdown(5.0)
        provider.shutdown()
        exported = path.read_bytes()
        assert 6 == exported.count(b'"spanId"')  # root, 2 chats, 3 tools: all exported
        assert SECRET.encode() not in exported
        assert b"[REDACTED:github_token]" in exported


class TestIds:
    async def test_ids_for_tool_and_root(self, run_scenario, traced):
        """`ids_for` gives the hex ids of the tool span and of the root, after they ended."""
        outcome, _ = await run_scenario(scenario([call("c1", "Paris")]), observer=traced.observer)
        tool, root = traced.tool("c1"), traced.root()
        assert (
            format(tool.context.trace_id, "032x"),
            format(tool.context.span_id, "016x"),
        ) == traced.observer.ids_for(outcome.turn_id, "c1")
        assert (
            format(root.context.trace_id, "032x"),
            format(root.context.span_id, "016x"),
        ) == traced.observer.ids_for(outcome.turn_id)

    def test_ids_for_open_spans(self, traced):
        """While the turn is open `ids_for` answers for the root."""
        traced.observer.on_event(start_event("t1"))
        trace_id, span_id = traced.observer.ids_for("t1")
        assert (32, 16) == (len(trace_id), len(span_id))

    def test_ids_for_unknown_is_none(self, traced):
        """An unknown turn or call id gives None."""
        traced.observer.on_event(start_event("t1"))
        assert None is traced.observer.ids_for("other")
        assert None is traced.observer.ids_for("t1", "no-such-call")

    async def test_recent_spans_are_bounded(self, run_scenario):
        """Only `max_recent_spans` ended spans are remembered: older ones give None."""
        traced = Traced(max_recent_spans=1)
        outcome, _ = await run_scenario(
            scenario([call("c1", "Paris"), call("c2", "Oslo")]), observer=traced.observer
        )
        assert None is traced.observer.ids_for(outcome.turn_id, "c1")
        assert traced.observer.ids_for(outcome.turn_id) is not None  # the root ended last
        traced.provider.shutdown()


def correlation(turn_id: str) -> Correlation:
    return Correlation(turn_id=turn_id, channel="cli", agent_alias="a")


def start_event(turn_id: str) -> AgentStart:
    return AgentStart(correlation=correlation(turn_id), provider="p", model="m", time_ns=1)


def end_event(turn_id: str) -> AgentEnd:
    return AgentEnd(
        correlation=correlation(turn_id),
        outcome=TurnOutcomeKind.FINAL,
        iterations=1,
        time_ns=20,
        duration_s=19e-9,
    )


class TestEventsAlone:
    def test_a_provider_failure(self, traced):
        """A failed provider call: the chat span and the turn carry its error type, ERROR."""
        c = correlation("t1")
        for event in (
            start_event("t1"),
            LlmRequest(
                correlation=c, iteration=1, provider="p", model="m",
                message_count=1, tool_count=0, time_ns=2,
            ),
            LlmResponse(
                correlation=c, iteration=1, provider="p", model="m", success=False,
                time_ns=3, duration_s=1e-9, error="provider 'p': timeout", error_type="timeout",
            ),
            AgentEnd(
                correlation=c, outcome=TurnOutcomeKind.ERROR, iterations=1, time_ns=4,
                duration_s=3e-9, error="provider 'p': timeout",
            ),
        ):  # fmt: skip
            traced.observer.on_event(event)
        (chat,) = traced.named("chat")
        assert ("timeout", StatusCode.ERROR, "provider 'p': timeout", 2, 3) == (
            chat.attributes["error.type"],
            chat.status.status_code,
            chat.status.description,
            chat.start_time,
            chat.end_time,
        )
        root = traced.root()
        assert ("timeout", StatusCode.ERROR, "provider 'p': timeout") == (
            root.attributes["error.type"],
            root.status.status_code,
            root.status.description,
        )

    def test_a_missed_start_still_gives_a_whole_span(self, traced):
        """A `ToolCall` whose start was not seen builds its span from the event's start time."""
        traced.observer.on_event(start_event("t1"))
        traced.observer.on_event(
            ToolCall(
                correlation=correlation("t1"), iteration=1, tool_call_id="c1", tool="x",
                known_tool=True, provenance="native", outcome=ToolOutcome.SUCCESS, success=True,
                arguments="{}", result="ok", start_time_ns=5, time_ns=9, duration_s=4e-9,
            )
        )  # fmt: skip
        span = traced.tool("c1")
        assert (5, 9, "success") == (
            span.start_time,
            span.end_time,
            span.attributes["zeroclaw.tool.outcome"],
        )

    async def test_the_per_turn_cap_loses_no_span(self, run_scenario):
        """Beyond `max_open_spans_per_turn` spans are built whole when they close."""
        traced = Traced(max_open_spans_per_turn=1)
        data = scenario([call("c1", "Paris"), call("c2", "Oslo")], parallel_tools=True)
        await run_scenario(data, observer=traced.observer)
        root = traced.root()
        assert 5 == len(traced.spans)
        assert {root.context.span_id} == {s.parent.span_id for s in traced.spans if s is not root}
        assert traced.tool("c2").end_time - traced.tool("c2").start_time >= 60_000_000
        traced.provider.shutdown()

    async def test_beyond_the_cap_tool_code_still_joins_the_turn(self, run_scenario):
        """A call past `max_open_spans_per_turn` has no open span while it runs: the spans its
        code starts take the turn's root as parent instead of leaving the trace."""
        traced = Traced(max_open_spans_per_turn=1)
        await run_fetches(run_scenario, traced)
        root, (inner,) = traced.root(), traced.named("GET Oslo")
        assert (root.context.trace_id, root.context.span_id) == (
            inner.context.trace_id,
            inner.parent.span_id,
        )
        assert traced.observer.shutdown(1.0)

    def test_the_root_joins_the_callers_trace(self, traced):
        """A turn started inside a caller's span becomes its child; children still use the root."""
        tracer = traced.provider.get_tracer("caller")
        with tracer.start_as_current_span("request") as request:
            traced.observer.on_event(start_event("t1"))
        traced.observer.on_event(
            AgentEnd(
                correlation=correlation("t1"), outcome=TurnOutcomeKind.FINAL, iterations=1,
                time_ns=2, duration_s=1e-9,
            )
        )  # fmt: skip
        root = traced.root()
        assert request.get_span_context().span_id == root.parent.span_id
        assert request.get_span_context().trace_id == root.context.trace_id

    @pytest.mark.parametrize("bound", ["max_open_turns", "max_recent_spans"])
    def test_bounds_are_validated(self, traced, bound):
        """A bound that is not positive raises `ValueError` naming it."""
        with pytest.raises(ValueError, match=f"{bound} must be a positive integer"):
            SpanObserver(traced.provider, **{bound: 0})


class BrokenTracerProvider:
    """A tracer provider whose tracer fails on every span."""

    def get_tracer(self, *args, **kwargs):
        return self

    def start_span(self, *args, **kwargs):
        raise RuntimeError(f"broken {SECRET}")


class ThreadRecorder(SpanProcessor):
    """Notes the thread each span starts on; can hold the span worker inside `on_start`."""

    def __init__(self, *, hold: bool = False, fail_on: str | None = None) -> None:
        self.threads: dict[str, str] = {}
        self.entered = threading.Event()
        self.release = threading.Event()
        self._hold = hold
        self._fail_on = fail_on

    def on_start(self, span, parent_context=None) -> None:
        self.threads[span.name] = threading.current_thread().name
        if self._fail_on and span.name.startswith(self._fail_on):
            raise RuntimeError(f"broken {SECRET}")
        if self._hold and threading.current_thread().name == BUILD_THREAD:
            self._hold = False
            self.entered.set()
            self.release.wait(5.0)


BUILD_THREAD = "zeroclaw-traces-build"


def tool_events(turn_id: str, call_id: str) -> list[object]:
    c = correlation(turn_id)
    common = {"correlation": c, "iteration": 1, "tool_call_id": call_id, "tool": "x"}
    return [
        ToolCallStart(**common, provenance="native", arguments="{}", time_ns=5),
        ToolCall(
            **common, known_tool=True, provenance="native", outcome=ToolOutcome.SUCCESS,
            success=True, arguments="{}", result="ok", start_time_ns=5, time_ns=9,
            duration_s=4e-9,
        ),
    ]  # fmt: skip


class TestOffThePath:
    async def test_children_are_built_on_the_worker_with_the_ids_of_the_path(self, run_scenario):
        """The turn's thread starts only the root; the tool span is built by the span worker,
        with the span id the tool's code saw as its current span during the call."""
        recorder = ThreadRecorder()
        traced = Traced()
        traced.provider.add_span_processor(recorder)
        seen = await run_probe(run_scenario, traced)
        assert [traced.tool("c1").context.span_id] == seen
        assert {
            "invoke_agent weather-bot": threading.main_thread().name,
            "chat scripted-model": BUILD_THREAD,
            "execute_tool probe": BUILD_THREAD,
        } == recorder.threads
        assert traced.observer.shutdown(1.0)

    async def test_tool_code_records_on_its_tool_span(self, run_scenario, traced):
        """Attributes and events the tool's code puts on the current span reach its span."""

        @tool
        async def rows(city: str) -> str:
            """Count rows."""
            span = trace.get_current_span()
            span.set_attribute("db.rows", 3)
            span.add_event("cache.miss")
            return "ok"

        data = scenario([call("c1", "Paris", "rows")], approval={"auto_approve": ["rows"]})
        await run_scenario(data, observer=traced.observer, extra_tools=[rows])
        span = traced.tool("c1")
        assert (3, "success", ["cache.miss"]) == (
            span.attributes["db.rows"],
            span.attributes["zeroclaw.tool.outcome"],
            [e.name for e in span.events],
        )

    async def test_an_unsampled_turn_records_nothing(self, run_scenario):
        """Children follow the root's sampling decision, and so do the tool's own spans."""
        traced = Traced()
        traced.provider = TracerProvider(sampler=ALWAYS_OFF)
        traced.provider.add_span_processor(SimpleSpanProcessor(traced.exporter))
        traced.observer = SpanObserver(traced.provider)
        user_tracer = traced.provider.get_tracer("user.code")

        @tool
        async def fetch(city: str) -> str:
            """Fetch a page."""
            with user_tracer.start_as_current_span("GET") as inner:
                assert not inner.is_recording()
            return "ok"

        data = scenario([call("c1", "Paris", "fetch")], approval={"auto_approve": ["fetch"]})
        outcome, _ = await run_scenario(data, observer=traced.observer, extra_tools=[fetch])
        assert "final" == outcome.kind.value
        assert () == traced.spans
        assert None is traced.observer.ids_for(outcome.turn_id, "c1")
        assert traced.observer.shutdown(1.0)

    def test_a_full_build_queue_drops_and_counts(self):
        """Spans beyond the build queue's bound are dropped and counted, never waited for."""
        recorder = ThreadRecorder(hold=True)
        traced = Traced(max_queue_size=2, schedule_delay_s=60.0)
        traced.provider.add_span_processor(recorder)
        traced.observer.on_event(start_event("t1"))
        for call_id in ("c1", "c2"):  # a full batch wakes the worker, which holds on c1
            for event in tool_events("t1", call_id):
                traced.observer.on_event(event)
        assert recorder.entered.wait(5.0)
        for call_id in ("c3", "c4", "c5"):  # c3 and c4 fill the queue; c5 is dropped
            for event in tool_events("t1", call_id):
                traced.observer.on_event(event)
        traced.observer.on_event(end_event("t1"))  # so is the root's end
        assert {"traces": 2} == dict(traced.health.snapshot().dropped)
        recorder.release.set()
        assert ["c1", "c2", "c3", "c4"] == sorted(
            s.attributes["gen_ai.tool.call.id"] for s in traced.named("execute_tool")
        )
        assert [] == traced.named("invoke_agent")
        assert traced.observer.shutdown(1.0)

    def test_a_turn_is_built_when_it_ends(self):
        """A turn's burst of spans (600 calls: more than a batch, under half the queue) is not
        built while the turn runs, so the worker never competes with it for the GIL; the
        turn's end wakes the worker."""
        traced = Traced(schedule_delay_s=3600.0)
        traced.observer.on_event(start_event("t1"))
        for n in range(600):
            for event in tool_events("t1", f"c{n}"):
                traced.observer.on_event(event)
        time.sleep(0.3)
        assert () == traced.exporter.get_finished_spans()
        traced.observer.on_event(end_event("t1"))
        deadline = time.monotonic() + 5.0
        while len(traced.exporter.get_finished_spans()) < 601 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert 601 == len(traced.exporter.get_finished_spans())  # no flush asked for
        assert traced.observer.shutdown(1.0)

    def test_a_turn_larger_than_the_export_queue_loses_no_span(self, tmp_path):
        """2,500 calls in one turn, more than either default queue holds (2,048 spans to
        build, 2,048 to export): every span reaches the file and nothing is dropped."""
        path, health = tmp_path / "spans.jsonl", TelemetryHealth()
        provider = build_tracer_provider(
            otlp_json_path=path, redactor=Redactor(), health=health, env={}
        )
        observer = SpanObserver(provider, health=health)
        observer.on_event(start_event("t1"))
        for n in range(2500):
            for event in tool_events("t1", f"c{n}"):
                observer.on_event(event)
        observer.on_event(end_event("t1"))
        assert observer.shutdown(10.0)
        assert shutdown_tracing(provider, 10.0)
        assert 2501 == len(read_otlp_json(path))
        assert {} == dict(health.snapshot().dropped)

    def test_a_failing_build_costs_that_span_and_is_counted(self, traced, caplog):
        """A span the SDK fails to build on the worker is counted; the others still ship."""
        traced.provider.add_span_processor(ThreadRecorder(fail_on="execute_tool"))
        traced.observer.on_event(start_event("t1"))
        for event in tool_events("t1", "c1"):
            traced.observer.on_event(event)
        traced.observer.on_event(end_event("t1"))
        assert ([], 1) == (traced.named("execute_tool"), len(traced.named("invoke_agent")))
        assert {"traces": 1} == dict(traced.health.snapshot().observer_errors)
        assert SECRET not in caplog.text


class TestRobustness:
    async def test_a_failing_handler_is_counted_not_raised(self, run_scenario, caplog):
        """A bug inside the observer never reaches the turn; it is counted and logged by type."""
        health = TelemetryHealth()
        observer = SpanObserver(BrokenTracerProvider(), health=health)
        outcome, _ = await run_scenario(scenario([call("c1", "Paris")]), observer=observer)
        assert "final" == outcome.kind.value
        assert observer.errors > 0
        assert {"traces": observer.errors} == dict(health.snapshot().observer_errors)
        assert SECRET not in caplog.text

    def test_a_turn_that_never_ends_is_evicted(self, traced):
        """Beyond `max_open_turns` the oldest open turn is evicted and counted as dropped."""
        observer = SpanObserver(traced.provider, health=traced.health, max_open_turns=2)
        for turn_id in ("t1", "t2", "t3"):
            observer.on_event(start_event(turn_id))
        assert None is observer.ids_for("t1")
        assert observer.ids_for("t3") is not None
        assert {"traces": 1} == dict(traced.health.snapshot().dropped)

    def test_a_turn_runs_without_opentelemetry_installed(self):
        """With `opentelemetry` unimportable a turn still runs: `turn/` never imports it."""
        code = (
            "import asyncio, sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'opentelemetry':\n"
            "            raise ImportError('blocked: ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "from zeroclaw_obs.replay import build_replay\n"
            "from zeroclaw_obs.scenario import parse_scenario\n"
            "s = parse_scenario({'user': 'hi', 'responses': [{'text': 'hello'}]}, 'inline')\n"
            "print(asyncio.run(build_replay(s).run()).text)\n"
        )
        # Installed pydantic plugins (logfire's) import OpenTelemetry on their own.
        env = {**os.environ, "PYDANTIC_DISABLE_PLUGINS": "__all__"}
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        assert "hello" == result.stdout.strip()
