"""The build worker: a record built without the SDK is the span the SDK would have built."""

from __future__ import annotations

import logging
import math
import time
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import (
    ReadableSpan,
    SpanLimits,
    TracerProvider,
    sampling,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

from zeroclaw_obs.observability.batching import BoundedBatchSpanProcessor
from zeroclaw_obs.observability.events import AgentStart, Correlation, ToolCallStart
from zeroclaw_obs.observability.health import TelemetryHealth
from zeroclaw_obs.observability.traces.deferred_spans import (
    AddEvent,
    AddLink,
    PendingSpan,
    RecordException,
    RuntimeSpan,
    SetAttribute,
    SetAttributes,
    SetStatus,
    UpdateName,
)
from zeroclaw_obs.observability.traces.otlp_proto import encode_otlp_proto
from zeroclaw_obs.observability.traces.span_builder import DirectBuild, SpanBuilder
from zeroclaw_obs.observability.traces.span_ids import SpanIdHandoff, install_handoff
from zeroclaw_obs.observability.traces.tracing import ContentCapture, SpanObserver
from zeroclaw_obs.redaction import CleanTextCache, Redactor
from zeroclaw_obs.tools.base import Tool, ToolResult

from ...builders import Seen, tool_call_event
from ...conftest import make_replay


class Setup:
    """A provider with only our batch processor (to memory), our tracer and its handoff."""

    def __init__(self, *, limits: SpanLimits | None = None, sampler=None) -> None:
        self.memory = InMemorySpanExporter()
        self.provider = TracerProvider(
            resource=Resource({"service.name": "t", "n": 1}),
            span_limits=limits,
            sampler=sampler,
            id_generator=SpanIdHandoff(RandomIdGenerator()),
        )
        self.provider.add_span_processor(
            BoundedBatchSpanProcessor(self.memory, health=TelemetryHealth())
        )
        self.tracer = self.provider.get_tracer("zeroclaw_obs", "9.9")
        self.handoff = install_handoff(self.tracer)
        self.root = self.tracer.start_span("root")

    def record(self, attributes: dict, ops: list, *, name: str = "child") -> PendingSpan:
        span = PendingSpan.child_of(
            self.root,
            trace.set_span_in_context(self.root),
            self.handoff,
            name,
            SpanKind.CLIENT,
            1_000,
            dict(attributes),
        )
        return span.close(2_000, *ops)

    def through_the_sdk(self, record: PendingSpan) -> ReadableSpan:
        self.memory.clear()
        record.build(self.tracer, self.handoff)
        self.provider.force_flush()
        (span,) = self.memory.get_finished_spans()
        return span

    def direct(self) -> DirectBuild:
        direct = DirectBuild.probe(self.tracer, self.handoff)
        assert direct is not None
        return direct

    def close(self) -> None:
        self.provider.shutdown()


def same_span(sdk: ReadableSpan, direct: ReadableSpan) -> None:
    """Every field an exporter reads is the same (the encoding covers all but the counts)."""
    assert encode_otlp_proto([sdk]) == encode_otlp_proto([direct])
    assert (sdk.dropped_attributes, sdk.dropped_events, sdk.dropped_links) == (
        direct.dropped_attributes,
        direct.dropped_events,
        direct.dropped_links,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # still handed to exporters
        assert sdk.instrumentation_info == direct.instrumentation_info
    assert sdk.instrumentation_scope == direct.instrumentation_scope
    assert sdk.resource == direct.resource
    assert sdk.parent == direct.parent
    assert dict(sdk.attributes) == dict(direct.attributes)


@pytest.fixture
def setup():
    setup = Setup()
    yield setup
    setup.close()


ENGINE_SPAN = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "edit_file",
    "zeroclaw.iteration": 1,
    "input.value": "{}" * 300,
}
CASES = {
    "a tool span as the engine closes it": (
        ENGINE_SPAN,
        [
            SetAttributes({"zeroclaw.tool.outcome": "error", "error.type": "tool_error"}),
            SetStatus(Status(StatusCode.ERROR, "boom")),
            AddEvent("zeroclaw.truncation", {"zeroclaw.tool.truncated_bytes": 3}, 1_500),
        ],
    ),
    "a key set again moves to the end": (
        {"a": 1, "b": 2, "c": 3},
        [SetAttribute("a", 4), SetAttributes({"b": 5.5, "d": True})],
    ),
    "lists become tuples": ({"l": ["a", "b"], "t": (1, 2)}, [SetAttribute("m", [True])]),
    "an OK status is final, UNSET is ignored": (
        {},
        [
            SetStatus(StatusCode.UNSET),
            SetStatus(StatusCode.OK),
            SetStatus(Status(StatusCode.ERROR, "late")),
        ],
    ),
    "a status code with a description, then a Status": (
        {},
        [SetStatus(StatusCode.ERROR, "first"), SetStatus(Status(StatusCode.ERROR, "second"))],
    ),
    "a renamed span with events": (
        {"x": ""},
        [UpdateName("renamed"), AddEvent("e", None, 1_100), AddEvent("f", {"k": "v"}, 1_200)],
    ),
}


class _Text(str):
    """A `str` subclass: the SDK keeps it, the direct way must not assume it is plain."""


class TestDirectBuild:
    @pytest.mark.parametrize(("attributes", "ops"), CASES.values(), ids=CASES.keys())
    def test_is_the_span_the_sdk_builds(self, setup, attributes, ops):
        """The same record through the SDK and directly: the same exported span."""
        record = setup.record(attributes, ops)
        direct = setup.direct().readable(record)
        assert direct is not None
        same_span(setup.through_the_sdk(record), direct)

    @pytest.mark.parametrize(
        ("attributes", "ops"),
        [
            ({"": 1}, []),
            ({1: "x"}, []),
            ({"a": 1}, [SetAttributes({"b": _Text("x")})]),
            ({"none": None}, []),
            ({"nested": ((1,),)}, []),
            ({"mapping": {"a": 1}}, []),
            ({"object": object()}, []),
            ({}, [SetAttribute("bytes", b"x")]),
            ({}, [AddEvent("e", {"": 1}, 5)]),
            ({}, [AddLink(trace.INVALID_SPAN_CONTEXT, None)]),
            ({}, [RecordException(ValueError("x"), None, 5, False)]),
        ],
        ids=[
            "empty key",
            "key not str",
            "str subclass",
            "None",
            "nested sequence",
            "mapping",
            "object",
            "bytes",
            "empty event key",
            "link",
            "exception",
        ],
    )
    def test_refuses_what_only_the_sdk_decides(self, setup, attributes, ops):
        """Anything the SDK would clean, drop, convert or format goes the SDK's way."""
        assert setup.direct().readable(setup.record(attributes, ops)) is None

    def test_limits_are_the_providers(self):
        """Strings are cut at the provider's limits as the SDK cuts them; past a count limit
        the record goes the SDK's way (which drops and counts)."""
        limits = SpanLimits(
            max_span_attributes=3,
            max_events=1,
            max_event_attributes=1,
            max_span_attribute_length=4,
            max_attribute_length=2,
        )
        setup = Setup(limits=limits)
        try:
            within = setup.record(
                {"long": "abcdefgh", "list": ["abcdef", "x"]},
                [AddEvent("e", {"k": "abcdef"}, 5)],
            )
            direct = setup.direct().readable(within)
            assert direct is not None
            assert "abcd" == direct.attributes["long"]
            same_span(setup.through_the_sdk(within), direct)
            for beyond in (
                setup.record({"a": 1, "b": 2, "c": 3, "d": 4}, []),
                setup.record({}, [AddEvent("e", None, 5), AddEvent("f", None, 6)]),
                setup.record({}, [AddEvent("e", {"a": 1, "b": 2}, 5)]),
            ):
                assert setup.direct().readable(beyond) is None
                built = setup.through_the_sdk(beyond)
                drops = built.dropped_attributes + built.dropped_events
                assert 1 == drops + sum(e.dropped_attributes for e in built.events)
        finally:
            setup.close()


PLAIN = st.one_of(
    st.text(max_size=8),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
)
VALUES = st.one_of(PLAIN, st.lists(PLAIN, max_size=3), st.lists(PLAIN, max_size=3).map(tuple))
KEYS = st.sampled_from(["a", "b", "c", "gen_ai.tool.name", "input.value"])
OPS = st.one_of(
    st.builds(SetAttributes, st.dictionaries(KEYS, VALUES, max_size=3)),
    st.builds(SetAttribute, KEYS, VALUES),
    st.builds(
        AddEvent,
        st.text(max_size=5),
        st.dictionaries(KEYS, VALUES, max_size=2),
        st.integers(1, 10**18),
    ),
    st.builds(UpdateName, st.text(max_size=5)),
    st.builds(
        SetStatus, st.sampled_from(list(StatusCode)), st.one_of(st.none(), st.text(max_size=5))
    ),
    st.builds(
        SetStatus,
        st.builds(
            Status, st.sampled_from(list(StatusCode)), st.one_of(st.none(), st.text(max_size=5))
        ),
    ),
)


class TestDirectBuildProperties:
    @settings(
        max_examples=200,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(st.dictionaries(KEYS, VALUES, max_size=4), st.lists(OPS, max_size=6))
    def test_any_plain_record_is_the_span_the_sdk_builds(self, setup, attributes, ops):
        """Any attributes and operations of plain values: the same span either way."""
        logging.disable(logging.WARNING)  # the SDK warns on descriptions of non-ERROR statuses
        try:
            record = setup.record(attributes, ops)
            direct = setup.direct().readable(record)
            assert direct is not None
            same_span(setup.through_the_sdk(record), direct)
        finally:
            logging.disable(logging.NOTSET)


class TestProbe:
    def test_our_processors_and_an_sdk_sampler_take_the_direct_way(self, setup):
        """The default set-up (only `BoundedBatchSpanProcessor`s, an SDK sampler)."""
        assert DirectBuild.probe(setup.tracer, setup.handoff) is not None

    def test_a_users_processor_takes_the_sdk_way(self, setup):
        """A processor added to the provider must see `on_start`: every span is the SDK's."""
        setup.provider.add_span_processor(Seen())
        assert DirectBuild.probe(setup.tracer, setup.handoff) is None

    def test_a_users_sampler_takes_the_sdk_way(self):
        """Only the SDK's own samplers are known to follow the root."""

        class Mine(sampling.Sampler):
            def should_sample(self, *args, **kwargs):
                return sampling.ALWAYS_ON.should_sample(*args, **kwargs)

            def get_description(self) -> str:
                return "mine"

        setup = Setup(sampler=Mine())
        try:
            assert DirectBuild.probe(setup.tracer, setup.handoff) is None
        finally:
            setup.close()

    @pytest.mark.parametrize(
        "sampler",
        [sampling.ALWAYS_ON, sampling.DEFAULT_ON, sampling.TraceIdRatioBased(0.5)],
        ids=["always_on", "parentbased_always_on", "traceidratio"],
    )
    def test_the_sdk_samplers_take_the_direct_way(self, sampler):
        setup = Setup(sampler=sampler)
        try:
            assert DirectBuild.probe(setup.tracer, setup.handoff) is not None
        finally:
            setup.close()

    def test_no_handoff_takes_the_sdk_way(self, setup):
        """Without the handoff the SDK picks the ids, so only it can build."""
        assert DirectBuild.probe(setup.tracer, None) is None


TURN = {
    "agent": {"alias": "bot"},
    "user": "weather?",
    "config": {"approval": {"auto_approve": ["get_weather"]}},
    "tools": [
        {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            "responses": [{"default": {"output": "4C"}}],
        }
    ],
    "responses": [
        {
            "tool_calls": [
                {"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}},
                {"id": "c2", "name": "get_weather", "arguments": {"city": "Oslo"}},
            ]
        },
        {"text": "done"},
    ],
}


class SlowExporter(InMemorySpanExporter):
    """An exporter several times slower than building a span directly."""

    def export(self, spans):
        time.sleep(0.002)
        return super().export(spans)


class TestSpanBuilder:
    def test_a_fast_build_does_not_overrun_a_slow_exporter(self):
        """1,000 records built directly into a 64-span export queue drained 32 at a time by a
        slow exporter: the build worker waits for room, so every span is exported and none
        is dropped."""
        health = TelemetryHealth()
        slow = SlowExporter()
        provider = TracerProvider(id_generator=SpanIdHandoff(RandomIdGenerator()))
        provider.add_span_processor(
            BoundedBatchSpanProcessor(
                slow, health=health, max_queue_size=64, max_export_batch_size=32
            )
        )
        tracer = provider.get_tracer("zeroclaw_obs")
        handoff = install_handoff(tracer)
        root = tracer.start_span("root")
        builder = SpanBuilder(
            tracer,
            handoff,
            failed=lambda exc, where: None,
            health=health,
            max_queue_size=2048,
            schedule_delay_s=5.0,
        )
        assert DirectBuild.probe(tracer, handoff) is not None
        for n in range(1000):
            record = PendingSpan.child_of(
                root, trace.set_span_in_context(root), handoff, f"s{n}", SpanKind.INTERNAL,
                1, {"n": n},
            )  # fmt: skip
            builder.emit(record.close(2))
        assert builder.shutdown(30.0)
        provider.force_flush(30_000)
        assert 1000 == len(slow.get_finished_spans())
        assert {} == dict(health.snapshot().dropped)
        provider.shutdown()

    async def test_a_processor_added_mid_run_sees_every_later_span(self, setup):
        """Added after the observer: it sees every span of the next turn, start and end."""
        observer = SpanObserver(setup.provider)
        seen = Seen()
        setup.provider.add_span_processor(seen)
        await make_replay(TURN, observer=observer).run()
        observer.shutdown()
        expected = ["chat scripted-model"] * 2 + ["execute_tool get_weather"] * 2
        assert expected == sorted(n for n in seen.started if not n.startswith("invoke"))
        assert sorted(seen.started) == sorted(seen.ended)

    async def test_a_turn_either_way_exports_the_same_spans(self):
        """One turn built directly and one through the SDK: the same spans, ids and times
        aside (each turn has its own)."""
        shapes = []
        for direct in (True, False):
            setup = Setup()
            observer = SpanObserver(setup.provider, direct_build=direct)
            await make_replay(TURN, observer=observer).run()
            observer.shutdown()
            setup.provider.force_flush()
            assert 0 == observer.errors
            spans = sorted(setup.memory.get_finished_spans(), key=lambda s: s.name)
            shapes.append(
                [
                    (
                        s.name,
                        s.kind,
                        s.status.status_code,
                        s.parent is None,
                        {k: v for k, v in s.attributes.items() if "id" not in k},
                        s.resource,
                        s.instrumentation_scope,
                    )
                    for s in spans
                ]
            )
            setup.close()
        assert 5 == len(shapes[0])  # the root, two chats, two tool calls
        assert shapes[0] == shapes[1]

    def test_a_failing_record_costs_that_record_only(self, setup):
        """A record that raises is reported to `failed`; the batch goes on."""
        failures: list[str] = []
        builder = SpanBuilder(
            setup.tracer,
            setup.handoff,
            failed=lambda exc, where: failures.append(where),
            health=TelemetryHealth(),
            max_queue_size=16,
            schedule_delay_s=5.0,
        )

        class Broken(PendingSpan):
            def build(self, tracer, handoff) -> None:
                raise RuntimeError("broken")

        good = setup.record({"a": 1}, [])
        bad = Broken("bad", good.context, good.parent, SpanKind.INTERNAL, 1, {"x": None})
        bad.close(2)
        builder.emit(bad)
        builder.emit(good)
        assert builder.shutdown(5.0)
        setup.provider.force_flush()
        assert ["Broken"] == failures
        assert ["child"] == [s.name for s in setup.memory.get_finished_spans()]


def test_nan_is_kept_as_the_sdk_keeps_it(setup):
    """A NaN attribute is a plain float: the direct span carries it as the SDK's does."""
    record = setup.record({"nan": math.nan}, [])
    direct = setup.direct().readable(record)
    assert direct is not None
    assert encode_otlp_proto([setup.through_the_sdk(record)]) == encode_otlp_proto([direct])


CALL_ID = "gen_ai.tool.call.id"


class NothingKnown:
    """A memory of clean strings that knows none."""

    young: frozenset[str] = frozenset()

    def is_clean(self, s: str) -> bool:
        return False


class Unchanged:
    """A redactor that changes nothing (so a `CleanTextCache` keeps a memory of its own)."""

    def redact_text(self, s: str) -> str:
        return s


class TestCleanTexts:
    def test_a_record_with_clean_texts_is_the_span_the_sdk_builds(self, setup):
        """Listed texts make a `RuntimeSpan` carrying them; it exports as the SDK's span."""
        record = setup.record(ENGINE_SPAN, [])
        record.clean_texts = (ENGINE_SPAN["input.value"],)
        direct = setup.direct().readable(record)
        assert RuntimeSpan is type(direct)
        assert (ENGINE_SPAN["input.value"],) == direct.clean_texts
        same_span(setup.through_the_sdk(record), direct)
        assert ReadableSpan is type(setup.direct().readable(setup.record(ENGINE_SPAN, [])))

    async def test_each_call_lists_its_id_arguments_and_result(self):
        """The very id, arguments and result objects on a tool span are listed: the engine
        redacted them and the memory knew them when the call ended."""
        setup = Setup()
        redactor = Redactor()
        observer = SpanObserver(setup.provider, clean_text=CleanTextCache(redactor))
        await make_replay(TURN, observer=observer, redactor=redactor).run()
        observer.shutdown()
        setup.provider.force_flush()
        tools = [s for s in setup.memory.get_finished_spans() if s.name.startswith("execute")]
        assert 2 == len(tools)
        for span in tools:
            assert RuntimeSpan is type(span)
            keys = ("gen_ai.tool.call.id", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")
            values = [span.attributes[key] for key in keys]
            assert len(values) == len(span.clean_texts)
            assert all(any(v is t for t in span.clean_texts) for v in values)
        setup.close()

    @pytest.mark.parametrize(
        "options",
        [
            {"capture": ContentCapture.NONE, "clean_text": CleanTextCache(Redactor())},
            {"clean_text": NothingKnown()},
            {},
        ],
        ids=["no content", "nothing known", "no memory"],
    )
    async def test_nothing_is_listed_without_content_or_a_memory_that_knows(self, options):
        """No content on the span, a memory that does not know the texts, or none: the
        spans are the SDK's plain kind and the guard checks every string."""
        setup = Setup()
        observer = SpanObserver(setup.provider, **options)
        await make_replay(TURN, observer=observer).run()
        observer.shutdown()
        setup.provider.force_flush()
        spans = setup.memory.get_finished_spans()
        assert {ReadableSpan} == {type(s) for s in spans}
        assert 2 == sum(1 for s in spans if s.name.startswith("execute_tool"))
        setup.close()

    @pytest.mark.parametrize("case", ["all young", "arguments old", "result unknown"])
    def test_the_quick_look_lists_what_asking_each_text_lists(self, case):
        """The young generation first, `is_clean` for a miss: the very texts, in the order,
        that asking `is_clean` about each of the call's id, arguments and result gives."""
        cache = CleanTextCache(Unchanged(), max_entries=4)
        texts = ("call-7", '{"path": "a.py"}', "wrote a.py")
        known = texts[:2] if case == "result unknown" else texts
        if case == "arguments old":
            cache.unchanged(texts[1])
            for n in range(4):  # a full young generation: the arguments move to the old one
                cache.unchanged(f"other {n}")
            assert texts[1] not in cache.young and cache.is_clean(texts[1]) is True
            known = texts
        for text in known:
            if case != "arguments old" or text != texts[1]:
                cache.unchanged(text)
        observer = SpanObserver(TracerProvider(), clean_text=cache)
        closed: list[PendingSpan] = []
        observer._builder.emit = closed.append  # type: ignore[method-assign]
        correlation = Correlation(turn_id="t1", channel="cli", agent_alias="a")
        observer.on_event(AgentStart(correlation=correlation, provider="p", model="m", time_ns=1))
        tool = {"correlation": correlation, "iteration": 1, "tool_call_id": texts[0]}
        start = {"tool": "edit", "provenance": "native", "arguments": texts[1], "time_ns": 2}
        observer.record(ToolCallStart(**tool, **start))
        observer.record(tool_call_event(**tool, arguments=texts[1], result=texts[2]))

        (span,) = closed
        assert known == span.clean_texts
        assert all(a is b for a, b in zip(span.clean_texts, known, strict=True))
        assert tuple(filter(cache.is_clean, texts)) == span.clean_texts
        observer.shutdown()

    async def test_an_id_the_memory_forgot_since_the_parse_is_listed(self):
        """The memory lets a call's id go in a long response (it was redacted when the
        response was parsed, and other calls ran since); the slot asks the redactor again
        when it opens, so the id is still listed clean when the call ends."""
        setup = Setup()
        redactor = Redactor()

        class Forgetful(Tool):
            name = "forget"
            description = "Runs while the memory lets everything go."

            def parameters_schema(self) -> dict:
                return {"type": "object", "properties": {}}

            async def execute(self, args: dict) -> ToolResult:
                if args.get("forget"):
                    # What thousands of other calls do to the bounded memory: fill both of its
                    # generations with other texts.
                    for n in range(40_000):  # more than two generations of entries
                        redactor.outputs.add(f"another text {n}")
                return ToolResult.ok("done")

        turn = {
            "user": "go",
            "config": {"approval": {"auto_approve": ["forget"]}},
            "responses": [
                {
                    "tool_calls": [
                        {"id": "c1", "name": "forget", "arguments": {"forget": True}},
                        {"id": "c2", "name": "forget", "arguments": {}},
                    ]
                },
                {"text": "ok"},
            ],
        }
        observer = SpanObserver(setup.provider, clean_text=CleanTextCache(redactor))
        replay = make_replay(turn, observer=observer, redactor=redactor, extra_tools=[Forgetful()])
        await replay.run()
        observer.shutdown()
        setup.provider.force_flush()
        (second,) = [
            s for s in setup.memory.get_finished_spans() if s.attributes.get(CALL_ID) == "c2"
        ]
        assert any(second.attributes[CALL_ID] is t for t in second.clean_texts)
        setup.close()
