"""The export guard's steps and exporter wrapper."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from zeroclaw_obs.observability.health import TelemetryHealth
from zeroclaw_obs.observability.traces.deferred_spans import RuntimeSpan
from zeroclaw_obs.observability.traces.export_guard import (
    AttributeScrubber,
    CleanTextCache,
    EventScrubber,
    LinkScrubber,
    NameScrubber,
    RedactingSpanExporter,
    StatusScrubber,
    guard_steps,
    span_to_dict,
)
from zeroclaw_obs.observability.traces.otlp_json import encode_otlp_json
from zeroclaw_obs.redaction import Redactor

from ...builders import RaisingExporter, SeenRedactor

SECRET = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
MASK = "[REDACTED:github_token]"
CONTEXT = SpanContext(1, 2, False, TraceFlags(1))


def span_dict(**overrides) -> dict:
    span = ReadableSpan(
        name="s",
        context=CONTEXT,
        resource=Resource({"service.name": "svc"}),
        status=Status(StatusCode.UNSET),
    )
    return {**span_to_dict(span), **overrides}


class TestSteps:
    def test_attribute_scrubber(self):
        """String attributes and string items of sequences are redacted; other values kept."""
        data = span_dict(attributes={"a": f"x {SECRET}", "b": (SECRET, "ok"), "n": 3, "t": True})
        actual = AttributeScrubber(Redactor())(data)["attributes"]
        assert {"a": f"x {MASK}", "b": (MASK, "ok"), "n": 3, "t": True} == actual

    def test_event_scrubber(self):
        """Event names and event attributes are redacted; timestamps kept."""
        data = span_dict(events=(Event("exception", {"exception.message": SECRET}, 7),))
        (event,) = EventScrubber(Redactor())(data)["events"]
        assert ("exception", {"exception.message": MASK}, 7) == (
            event.name,
            dict(event.attributes),
            event.timestamp,
        )

    def test_link_scrubber(self):
        """Link attributes are redacted; the linked context is kept."""
        data = span_dict(links=(Link(CONTEXT, {"why": SECRET}),))
        (link,) = LinkScrubber(Redactor())(data)["links"]
        assert (CONTEXT, {"why": MASK}) == (link.context, dict(link.attributes))

    def test_status_scrubber(self):
        """The status description is redacted; the code is kept."""
        data = span_dict(status=Status(StatusCode.ERROR, f"failed: {SECRET}"))
        status = StatusScrubber(Redactor())(data)["status"]
        assert (StatusCode.ERROR, f"failed: {MASK}") == (status.status_code, status.description)

    def test_name_scrubber(self):
        """A secret in a span name (a model-chosen tool name) is redacted."""
        data = span_dict(name=f"execute_tool {SECRET}")
        assert f"execute_tool {MASK}" == NameScrubber(Redactor())(data)["name"]

    def test_steps_leave_clean_fields_as_they_were(self):
        """A step that changed nothing leaves the very same objects in the span dict."""
        data = span_dict(
            name="clean",
            attributes={"a": "x", "b": ("y", 1), "n": 3},
            events=(Event("e", {"k": "v"}, 7),),
            links=(Link(CONTEXT, {"l": "v"}),),
            status=Status(StatusCode.ERROR, "plain failure"),
        )
        before = dict(data)
        for step in guard_steps(Redactor()):
            data = step(data)
        assert [] == [key for key, value in before.items() if data[key] is not value]

    def test_default_chain(self):
        """The default chain is name, attributes, events, links, status."""
        steps = guard_steps(Redactor())
        assert [NameScrubber, AttributeScrubber, EventScrubber, LinkScrubber, StatusScrubber] == [
            type(s) for s in steps
        ]


@pytest.fixture
def guarded_provider():
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "svc"}))
    provider.add_span_processor(SimpleSpanProcessor(RedactingSpanExporter(memory, Redactor())))
    yield provider, memory
    provider.shutdown()


class TestRedactingSpanExporter:
    def test_spans_from_user_code_are_scrubbed(self, guarded_provider):
        """A span created by user code through the same provider is scrubbed everywhere."""
        provider, memory = guarded_provider
        tracer = provider.get_tracer("user-code")
        span = tracer.start_span(
            "user", attributes={"token": SECRET}, links=[Link(CONTEXT, {"l": SECRET})]
        )
        span.record_exception(RuntimeError(f"bad {SECRET}"))
        span.set_status(Status(StatusCode.ERROR, f"bad {SECRET}"))
        span.end()
        (exported,) = memory.get_finished_spans()
        assert SECRET not in exported.to_json()
        assert MASK == exported.attributes["token"]
        assert f"bad {MASK}" == exported.events[0].attributes["exception.message"]

    def test_everything_else_is_kept(self, guarded_provider):
        """Ids, parent, kind, times, resource and scope pass through unchanged."""
        provider, memory = guarded_provider
        tracer = provider.get_tracer("user-code")
        root = tracer.start_span("root", start_time=10)
        child = tracer.start_span(
            "child", context=trace.set_span_in_context(root), kind=SpanKind.CLIENT, start_time=11
        )
        child.end(end_time=12)
        root.end(end_time=13)
        child_out, _ = memory.get_finished_spans()
        assert (
            child.get_span_context(),
            root.get_span_context(),
            SpanKind.CLIENT,
            11,
            12,
            "user-code",
            "svc",
        ) == (
            child_out.context,
            child_out.parent,
            child_out.kind,
            child_out.start_time,
            child_out.end_time,
            child_out.instrumentation_scope.name,
            child_out.resource.attributes["service.name"],
        )

    def test_dropped_counts_are_kept(self):
        """The original span's dropped attribute count survives the copy."""
        memory = InMemorySpanExporter()
        provider = TracerProvider(span_limits=trace_limits(max_attributes=1))
        provider.add_span_processor(SimpleSpanProcessor(RedactingSpanExporter(memory, Redactor())))
        provider.get_tracer("t").start_span("s", attributes={"a": 1, "b": 2, "c": 3}).end()
        assert 2 == memory.get_finished_spans()[0].dropped_attributes
        provider.shutdown()

    def test_a_clean_span_ships_as_it_was(self):
        """A span no step changed is handed on itself, not rebuilt."""
        memory = InMemorySpanExporter()
        guard = RedactingSpanExporter(memory, Redactor())
        span = ReadableSpan("s", CONTEXT, attributes={"a": "clean", "n": 1})
        assert SpanExportResult.SUCCESS == guard.export([span])
        assert span is memory.get_finished_spans()[0]

    @pytest.mark.parametrize(
        "place",
        [
            "name",
            "attribute",
            "sequence item",
            "str subclass",
            "event name",
            "event attribute",
            "link",
            "status",
        ],
    )
    def test_the_clean_check_misses_no_place(self, place):
        """A span whose every other string is already known clean still has the one secret
        scrubbed, wherever it sits: the clean check looks where the steps look."""

        class Text(str):
            pass

        def span(secret: str) -> ReadableSpan:
            at = dict.fromkeys(
                ["name", "attribute", "sequence item", "event name", "event attribute", "link"],
                "clean",
            )
            at[place] = secret
            subclass = Text(secret) if place == "str subclass" else "clean"
            return ReadableSpan(
                at["name"],
                CONTEXT,
                attributes={"a": at["attribute"], "seq": ("x", at["sequence item"]), "t": subclass},
                events=[Event(at["event name"], {"e": at["event attribute"]}, timestamp=1)],
                links=[Link(CONTEXT, {"l": at["link"]})],
                status=Status(StatusCode.ERROR, secret if place == "status" else "clean"),
            )

        memory = InMemorySpanExporter()
        guard = RedactingSpanExporter(memory, Redactor())
        guard.export([span("clean"), span(SECRET)])
        clean, scrubbed = memory.get_finished_spans()
        assert SECRET not in scrubbed.to_json()
        assert MASK in scrubbed.to_json()
        assert SECRET not in clean.to_json()

    def test_a_receipt_in_the_runtime_form_on_our_span_is_not_scanned(self):
        """The runtime's receipt on its own tool span (scope `zeroclaw_obs`, the exact
        `zc-receipt-…` form) ships unscanned: an HMAC, new on every call. Under another scope,
        or in any other form, the same key is scanned and scrubbed like every string."""
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope

        receipt = "zc-receipt-1700000000-ZkaLxTunanPKbpk1kZfk9JAYABR2Eo_Gg8WgmjhWovc"
        ours = InstrumentationScope("zeroclaw_obs", "1")
        other = InstrumentationScope("user-code", "1")
        memory = InMemorySpanExporter()
        redactor = SeenRedactor()
        guard = RedactingSpanExporter(memory, redactor)

        def span(value: str, scope: InstrumentationScope) -> ReadableSpan:
            attributes = {"zeroclaw.tool.receipt": value, "out": "18C"}
            return ReadableSpan("s", CONTEXT, attributes=attributes, instrumentation_scope=scope)

        bad = f"zc-receipt-1-{SECRET}"
        guard.export([span(receipt, ours), span(receipt, other), span(bad, ours)])
        assert 1 == redactor.seen.get(receipt)  # on the other scope's span only
        assert redactor.seen.get(bad)
        shipped = [dict(s.attributes)["zeroclaw.tool.receipt"] for s in memory.get_finished_spans()]
        assert [receipt, receipt, f"zc-receipt-1-{MASK}"] == shipped

    def test_lone_surrogates_are_escaped_wherever_they_sit(self):
        """A lone surrogate (which no exporter can encode) ships as `\\udXXX` in the name,
        attributes, events and status, even where every other string is known clean."""
        memory = InMemorySpanExporter()
        guard = RedactingSpanExporter(memory, Redactor())
        clean = ReadableSpan("s", CONTEXT, attributes={"out": "18C", "n": 1})
        assert SpanExportResult.SUCCESS == guard.export([clean, clean])  # all known clean now
        span = ReadableSpan(
            "execute_tool x\ud800",
            CONTEXT,
            attributes={"out": "18C \udc80", "args": ("ok", "\udfff"), "n": 1},
            events=(Event("e", {"why": "\ud800"}, 7),),
            status=Status(StatusCode.ERROR, "bad \ud800"),
        )
        assert SpanExportResult.SUCCESS == guard.export([span])
        shipped = memory.get_finished_spans()[-1]
        assert (
            "execute_tool x\\ud800",
            {"out": "18C \\udc80", "args": ("ok", "\\udfff"), "n": 1},
            {"why": "\\ud800"},
            "bad \\ud800",
        ) == (
            shipped.name,
            dict(shipped.attributes),
            dict(shipped.events[0].attributes),
            shipped.status.description,
        )
        encode_otlp_json([shipped]).encode("utf-8")  # the protobuf and JSON encoders accept it

    def test_a_secret_from_user_code_is_scrubbed_every_time(self, guarded_provider):
        """The same secret on many spans, after clean spans filled the memory, is scrubbed on
        every one: only strings the redactor left unchanged are remembered."""
        provider, memory = guarded_provider
        tracer = provider.get_tracer("user-code")
        for i in range(3):
            tracer.start_span("clean", attributes={"i": i, "note": "nothing here"}).end()
            tracer.start_span(f"user {SECRET}", attributes={"token": SECRET}).end()
        scrubbed = [s for s in memory.get_finished_spans() if s.name != "clean"]
        assert [(f"user {MASK}", MASK)] * 3 == [(s.name, s.attributes["token"]) for s in scrubbed]

    def test_a_shared_memory_spares_a_second_scan(self):
        """A string another surface already found clean through the same memory is not
        scanned again; a secret is scanned on every span (twice: the clean check stops at it,
        then the steps scrub it)."""
        counting = SeenRedactor()
        shared = CleanTextCache(counting)
        shared.redact_text("zc-receipt-seen-on-a-log-line")
        guard = RedactingSpanExporter(InMemorySpanExporter(), shared)
        attributes = {"receipt": "zc-receipt-seen-on-a-log-line", "token": SECRET}
        guard.export([ReadableSpan("s", CONTEXT, attributes=attributes)] * 2)
        assert {"zc-receipt-seen-on-a-log-line": 1, "s": 1, SECRET: 4} == counting.seen

    def test_the_redactors_outputs_ship_unscanned_and_a_smuggled_secret_is_caught(self):
        """Texts the engine already redacted (a result, arguments marked as built from
        redacted parts) ship without another scan; a user attribute that holds such a text
        with a secret beside it, or a raw secret, is scanned and scrubbed."""
        redactor = Redactor()
        result = redactor.redact_text(f"rotated {SECRET}")
        arguments = redactor.mark_clean('{"path": "notes.txt"}')
        memory = InMemorySpanExporter()
        guard = RedactingSpanExporter(memory, CleanTextCache(redactor))
        attributes = {
            "gen_ai.tool.call.result": result,
            "gen_ai.tool.call.arguments": arguments,
            "user.note": f"{result} {SECRET}",
            "user.raw": SECRET,
        }
        guard.export([ReadableSpan("s", CONTEXT, attributes=attributes)])
        (span,) = memory.get_finished_spans()
        assert {
            "gen_ai.tool.call.result": f"rotated {MASK}",
            "gen_ai.tool.call.arguments": '{"path": "notes.txt"}',
            "user.note": f"rotated {MASK} {MASK}",
            "user.raw": MASK,
        } == dict(span.attributes)
        assert (result, arguments) == (
            span.attributes["gen_ai.tool.call.result"],
            span.attributes["gen_ai.tool.call.arguments"],
        )

    def test_a_failing_step_drops_the_span_instead_of_leaking_it(self):
        """When a step raises the span is dropped and counted; the inner exporter never sees it."""

        def broken(span):
            raise RuntimeError("bug")

        memory, health = InMemorySpanExporter(), TelemetryHealth()
        guard = RedactingSpanExporter(memory, Redactor(), steps=[broken], health=health)
        assert SpanExportResult.SUCCESS == guard.export([ReadableSpan("s", CONTEXT)])
        assert () == memory.get_finished_spans()
        assert {"traces": 1} == dict(health.snapshot().dropped)

    def test_an_inner_exporter_that_raises_reads_as_failure(self):
        """An inner exporter that raises gives `FAILURE`; nothing escapes."""
        guard = RedactingSpanExporter(RaisingExporter(), Redactor())
        assert SpanExportResult.FAILURE == guard.export([ReadableSpan("s", CONTEXT)])


def trace_limits(max_attributes: int):
    from opentelemetry.sdk.trace import SpanLimits

    return SpanLimits(max_span_attributes=max_attributes)


class TestRuntimeSpanCleanTexts:
    """The texts the turn knew clean when it recorded one of its spans (`RuntimeSpan`)."""

    def runtime_span(self, attributes: dict, clean_texts: tuple[str, ...]) -> RuntimeSpan:
        span = RuntimeSpan("execute_tool t", CONTEXT, attributes=attributes)
        span.clean_texts = clean_texts
        return span

    def test_listed_texts_ship_unscanned_though_the_memory_forgot_them(self):
        """The very objects listed are not scanned again, whatever the memory holds now."""
        arguments, result = '{"path": "a.txt"}', "wrote 3 lines"
        redactor = SeenRedactor()
        memory = InMemorySpanExporter()
        guard = RedactingSpanExporter(memory, redactor)
        span = self.runtime_span({"args": arguments, "out": result}, (arguments, result))
        assert SpanExportResult.SUCCESS == guard.export([span])
        assert arguments not in redactor.seen and result not in redactor.seen
        assert [span] == list(memory.get_finished_spans())

    def test_everything_else_is_scanned_and_scrubbed(self):
        """A secret not listed, an equal copy of a listed text, and any span that is not the
        runtime's are scanned as usual."""
        listed = "".join(["wrote ", "3 lines"])  # a text made at run time, not interned
        copy = "".join(["wrote ", "3 lines"])
        assert listed == copy and listed is not copy
        redactor = SeenRedactor()
        memory = InMemorySpanExporter()
        guard = RedactingSpanExporter(memory, redactor)
        ours = self.runtime_span({"out": listed, "user": f"key {SECRET}"}, (listed,))
        theirs = ReadableSpan("s", CONTEXT, attributes={"out": listed})
        guard.export([ours, self.runtime_span({"out": copy}, (listed,)), theirs])
        shipped = [dict(s.attributes) for s in memory.get_finished_spans()]
        assert {"out": listed, "user": f"key {MASK}"} == shipped[0]
        assert redactor.seen.get(copy)  # the copy (and the plain span's text) were scanned

    def test_only_the_very_listed_object_is_taken_as_clean(self):
        """An equal copy of a listed text is no listed text: listed wrongly (it holds a
        secret), the copy on the span is still found and scrubbed."""
        raw = "".join(["token ", SECRET])
        copy = "".join(["token ", SECRET])
        memory = InMemorySpanExporter()
        guard = RedactingSpanExporter(memory, Redactor())
        guard.export([self.runtime_span({"out": copy}, (raw,))])
        (shipped,) = memory.get_finished_spans()
        assert {"out": f"token {MASK}"} == dict(shipped.attributes)

    def test_a_listed_text_with_a_secret_is_still_scrubbed_by_the_steps(self):
        """Listing changes only the clean check: a span that needs the steps gets them all."""
        redactor = Redactor()
        memory = InMemorySpanExporter()
        guard = RedactingSpanExporter(memory, redactor)
        raw = f"token {SECRET}"
        guard.export([self.runtime_span({"out": raw, "other": SECRET}, (raw,))])
        (shipped,) = memory.get_finished_spans()
        assert {"out": f"token {MASK}", "other": MASK} == dict(shipped.attributes)
