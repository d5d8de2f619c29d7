"""Tests for `observability/logs/logs.py`: lifecycle log events and the redacting chain."""

from __future__ import annotations

import datetime
import io
import json
import logging
import threading
import time
from collections.abc import Iterator
from enum import StrEnum
from typing import Any, ClassVar

import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st

from zeroclaw_obs.observability.events import (
    Correlation,
    EventIds,
    ToolCall,
    ToolCallStart,
    ToolOutcome,
)
from zeroclaw_obs.observability.health import Signal, TelemetryHealth
from zeroclaw_obs.observability.logs.chain import iso_utc
from zeroclaw_obs.observability.logs.logs import (
    BufferedWriteLogger,
    LineWriter,
    LogObserver,
    QueuedLogger,
    RedactingProcessor,
    add_event_time,
    build_logger,
    build_processors,
    route_stdlib_logging,
)
from zeroclaw_obs.observability.traces.export_guard import CleanTextCache
from zeroclaw_obs.redaction import Redactor

from ...builders import (
    DEPLOY,
    ECHO,
    SECRET,
    WEATHER,
    HashSpanIds,
    PlayedProvider,
    Traced,
    answer,
    build,
    call,
    chained,
    http,
    llm_response,
)

EVENT_NAMES = [  # in the order each first happens: approval is asked before dispatch
    "turn_start",
    "llm_request",
    "llm_response",
    "approval_decision",
    "tool_call_start",
    "tool_call_result",
    "loop_detection",
    "turn_end",
]
TOOL_EVENTS = {"tool_call_start", "tool_call_result", "approval_decision", "loop_detection"}
LIFECYCLE_TURN = {
    "agent": {"alias": "ops", "channel": "slack"},
    "user": "go",
    "config": {"approval": {"auto_approve": ["echo", "get_weather"], "answers": ["yes"]}},
    "tools": [ECHO, DEPLOY, WEATHER],
    "responses": [
        {"tool_calls": [call("deploy", "c0", target="prod")]},
        {"tool_calls": [call("get_weather", "w1", city="Leaky")]},
        *({"tool_calls": [call("echo", f"e{i}", q="x")]} for i in range(3)),
        {"text": "done"},
    ],
}


class StrOutcome(StrEnum):
    SUCCESS = "success"


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    """Every line of `stream`, parsed as one JSON object."""
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def leaked_pieces(text: str, secret: str = SECRET, size: int = 12) -> list[str]:
    """The `size`-character pieces of `secret` found in `text`."""
    pieces = {secret[i : i + size] for i in range(len(secret) - size + 1)}
    return sorted(piece for piece in pieces if piece in text)


@pytest.fixture
def stream() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def library_logger() -> Iterator[logging.Logger]:
    """A stdlib logger standing in for a library's; its handlers and level are restored."""
    logger = logging.getLogger("tests.zeroclaw.httpx")
    handlers, level, propagate = list(logger.handlers), logger.level, logger.propagate
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger
    logger.handlers[:] = handlers
    logger.setLevel(level)
    logger.propagate = propagate


async def run_logged(
    run_scenario, stream, spans: Any = None, **kwargs: Any
) -> tuple[Any, list[dict[str, Any]]]:
    logger = build_logger(redactor=Redactor(), stream=stream)
    observer = chained(spans, LogObserver(logger, **kwargs))
    outcome, _ = await run_scenario(LIFECYCLE_TURN, observer=observer)
    return outcome, lines(stream)


class TestLogObserver:
    async def test_every_lifecycle_fact_has_its_event(self, run_scenario, stream):
        """Each DESIGN §3 event name is written, first in lifecycle order."""
        _, records = await run_logged(run_scenario, stream, spans=HashSpanIds())
        names = [r["event"] for r in records]
        assert EVENT_NAMES == sorted(set(names), key=names.index)

    async def test_every_event_carries_the_correlation_ids(self, run_scenario, stream):
        """Every line has trace and span ids, turn id, channel and agent; tool lines their call."""
        spans = HashSpanIds()
        outcome, records = await run_logged(run_scenario, stream, spans=spans)
        for record in records:
            call_id = record.get("tool_call_id") if record["event"] in TOOL_EVENTS else None
            expected = {
                "trace_id": spans.trace_id(outcome.turn_id),
                "span_id": spans.span_id(
                    None if record["event"] == "approval_decision" else call_id
                ),
                "turn_id": outcome.turn_id,
                "channel": "slack",
                "agent": "ops",
            }
            assert expected == {key: record[key] for key in expected}, record["event"]

    async def test_tool_result_fields(self, run_scenario, stream):
        """A tool result names its call, tool, outcome and duration in milliseconds."""
        _, records = await run_logged(run_scenario, stream)
        results = {r["tool_call_id"]: r for r in records if r["event"] == "tool_call_result"}
        assert ["c0", "w1", "e0", "e1", "e2"] == list(results)
        assert ("deploy", "success", "info") == (
            results["c0"]["tool"],
            results["c0"]["outcome"],
            results["c0"]["level"],
        )
        assert isinstance(results["c0"]["duration_ms"], float)

    async def test_approval_and_loop_detection_fields(self, run_scenario, stream):
        """Approval lines carry the decision and surface; loop lines the kind and severity."""
        _, records = await run_logged(run_scenario, stream)
        approval = next(r for r in records if r["event"] == "approval_decision")
        loop = next(r for r in records if r["event"] == "loop_detection")
        assert ("c0", "deploy", "yes", "scenario") == (
            approval["tool_call_id"],
            approval["tool"],
            approval["decision"],
            approval["surface"],
        )
        assert ("e2", "echo", "repeat", "warning", "warning") == (
            loop["tool_call_id"],
            loop["tool"],
            loop["kind"],
            loop["severity"],
            loop["level"],
        )

    async def test_without_span_ids_the_ids_are_null(self, run_scenario, stream):
        """With no tracing side every line still has `trace_id` and `span_id`, as null."""
        _, records = await run_logged(run_scenario, stream)
        assert {(None, None)} == {(r["trace_id"], r["span_id"]) for r in records}

    async def test_content_is_off_by_default(self, run_scenario, stream):
        """Tool arguments and results are not logged unless `capture_content` is on."""
        _, records = await run_logged(run_scenario, stream)
        keys = {key for r in records for key in r}
        assert set() == keys & {"arguments", "result"}

    async def test_captured_content_is_redacted(self, run_scenario, stream):
        """With `capture_content` the arguments and result are logged, redacted."""
        _, records = await run_logged(run_scenario, stream, capture_content=True)
        leaky = next(
            r for r in records if r["event"] == "tool_call_result" and r["tool_call_id"] == "w1"
        )
        assert '{"city": "Leaky"}' == leaky["arguments"]
        assert "18C token=[REDACTED:github_token]" == leaky["result"]
        assert [] == leaked_pieces(stream.getvalue())

    async def test_a_retry_is_an_llm_retry_warning(self, stream):
        """A provider request sent again is logged as `llm_retry` between request and response."""
        logger = build_logger(redactor=Redactor(), stream=stream)
        provider = PlayedProvider(http(429, "rate_limit_error", retry_after=1.5), answer())
        await build(provider, observer=LogObserver(logger)).run()
        records = [r for r in lines(stream) if r["event"].startswith("llm_")]
        assert ["llm_request", "llm_retry", "llm_response"] == [r["event"] for r in records]
        retry, response = records[1], records[2]
        assert ("warning", 1, "rate_limit_error", 429, 1500.0, "openai", "gpt-test") == (
            retry["level"],
            retry["attempt"],
            retry["error_type"],
            retry["status"],
            retry["wait_ms"],
            retry["provider"],
            retry["model"],
        )
        assert (2, None) == (response["attempts"], response["error_type"])

    async def test_llm_lines_carry_their_chat_span_ids(self, stream):
        """`llm_request`, `llm_retry` and `llm_response` point at the call's exported chat span."""
        traced = Traced()
        logger = build_logger(redactor=Redactor(), stream=stream)
        logs = LogObserver(logger)
        provider = PlayedProvider(http(503), answer())
        try:
            await build(provider, observer=chained(traced.observer, logs)).run()
            (chat,) = traced.named("chat")
        finally:
            traced.observer.shutdown(1.0)
            traced.provider.shutdown()
        expected = (format(chat.context.trace_id, "032x"), format(chat.context.span_id, "016x"))
        llm = [r for r in lines(stream) if r["event"].startswith("llm_")]
        assert 3 * [expected] == [(r["trace_id"], r["span_id"]) for r in llm]
        (end,) = [r for r in lines(stream) if r["event"] == "turn_end"]
        assert end["span_id"] != expected[1]

    async def test_an_approval_line_carries_its_await_approval_span_ids(self, run_scenario, stream):
        """`approval_decision` points at the exported `await_approval` span, not the root."""
        traced = Traced()
        logs = LogObserver(build_logger(redactor=Redactor(), stream=stream))
        try:
            await run_scenario(LIFECYCLE_TURN, observer=chained(traced.observer, logs))
            waits = traced.named("await_approval")
        finally:
            traced.observer.shutdown(1.0)
            traced.provider.shutdown()
        expected = {
            (format(w.context.trace_id, "032x"), format(w.context.span_id, "016x")) for w in waits
        }
        approvals = [r for r in lines(stream) if r["event"] == "approval_decision"]
        assert approvals and len(approvals) == len(waits)
        assert expected == {(r["trace_id"], r["span_id"]) for r in approvals}

    async def test_a_failed_call_logs_its_line_and_type(self, stream):
        """The last error: `llm_response` at error level with the one line and its type."""
        logger = build_logger(redactor=Redactor(), stream=stream)
        provider = PlayedProvider(http(500), max_retries=0)
        await build(provider, observer=LogObserver(logger)).run()
        (response,) = [r for r in lines(stream) if r["event"] == "llm_response"]
        assert ("error", False, "provider 'openai': HTTP 500 http_500", "http_500") == (
            response["level"],
            response["success"],
            response["error"],
            response["error_type"],
        )

    async def test_turn_end(self, run_scenario, stream):
        """The last line is `turn_end` with the outcome and iteration count."""
        _, records = await run_logged(run_scenario, stream)
        assert ("turn_end", "final", 6) == (
            records[-1]["event"],
            records[-1]["outcome"],
            records[-1]["iterations"],
        )

    async def test_lines_are_flushed_when_the_turn_ends(self, run_scenario, stream):
        """`flush` is called once per turn, after the `turn_end` line."""
        flushed: list[int] = []
        logger = build_logger(redactor=Redactor(), stream=stream)
        observer = LogObserver(logger, flush=lambda: flushed.append(len(lines(stream))))
        await run_scenario(LIFECYCLE_TURN, observer=observer)
        assert [len(lines(stream))] == flushed
        assert "turn_end" == lines(stream)[-1]["event"]

    async def test_a_queued_logger_writes_the_same_lines(self, run_scenario, stream):
        """Through a `QueuedLogger` the worker builds each line from the event (`defer`): the
        lines are those the observer writes straight to a structlog logger, in order."""
        direct = io.StringIO()
        await run_logged(run_scenario, direct, spans=HashSpanIds(), capture_content=True)
        queued = QueuedLogger(
            LineWriter(redactor=Redactor(), stream=stream),
            health=TelemetryHealth(),
            schedule_delay_s=3600,
        )
        observer = chained(HashSpanIds(), LogObserver(queued, capture_content=True))
        await run_scenario(LIFECYCLE_TURN, observer=observer)
        assert "" == stream.getvalue()  # nothing rendered on the turn's path
        assert queued.shutdown(5)
        varying = {"timestamp", "turn_id", "trace_id", "duration_ms", "wait_ms", "receipt"}

        def same(records: list[dict[str, Any]]) -> list[list[tuple[str, Any]]]:
            return [[(k, v) for k, v in r.items() if k not in varying] for r in records]

        assert same(lines(direct)) == same(lines(stream))
        assert [] == leaked_pieces(stream.getvalue())

    def test_a_handler_that_fails_on_the_worker_is_counted(self, stream):
        """A deferred line whose fields cannot be built is counted like an eager failure."""
        health = TelemetryHealth()
        queued = QueuedLogger(
            LineWriter(redactor=Redactor(), stream=stream), health=health, schedule_delay_s=3600
        )
        observer = LogObserver(queued, health=health)
        observer.record(llm_response(), None)  # type: ignore[arg-type]  # ids the handler reads
        observer.on_event(llm_response())
        assert queued.shutdown(5)
        assert 1 == observer.errors
        assert {"logs": 1} == dict(health.snapshot().observer_errors)
        assert ["llm_response"] == [r["event"] for r in lines(stream)]

    @pytest.mark.parametrize("parent", [None, "lead"], ids=["own turn", "delegated"])
    @pytest.mark.parametrize("capture", [False, True], ids=["no content", "content"])
    @pytest.mark.parametrize("ids", [None, ("a" * 32, "b" * 16)], ids=["no ids", "ids"])
    def test_the_call_lines_are_laid_out_as_every_line(self, parent, capture, ids):
        """`tool_call_start` and `tool_call_result` have `_context`'s keys in its order, then
        their own fields, the delegating agent and the content, like every other line."""
        correlation = Correlation(
            turn_id="t1", channel="cli", agent_alias="agent", parent_agent_alias=parent
        )
        common = {"correlation": correlation, "iteration": 2, "tool_call_id": "c1"}
        common |= {"tool": "echo", "provenance": "builtin", "arguments": '{"a": 1}'}
        start = ToolCallStart(**common, time_ns=5)
        end = ToolCall(
            **common, known_tool=True, outcome=ToolOutcome.SUCCESS, success=True,
            result="done", start_time_ns=5, time_ns=9, duration_s=0.25, receipt="zc",
            redaction_counts={"x": 2, "y": 1},
        )  # fmt: skip
        observer = LogObserver(
            build_logger(redactor=Redactor(), stream=io.StringIO()), capture_content=capture
        )
        own = EventIds(root=None, span=ids)
        (start_line,) = observer._on_tool_call_start(start, own)
        (end_line,) = observer._on_tool_call(end, own)
        expected_start = observer._context(
            correlation, ids, iteration=2, tool_call_id="c1", tool="echo", provenance="builtin"
        )
        expected_end = observer._context(
            correlation, ids, iteration=2, tool_call_id="c1", tool="echo", known_tool=True,
            outcome="success", success=True, duration_ms=250.0, error_type=None, receipt="zc",
            truncated_chars=0, truncated_bytes=0, redactions=3,
        )  # fmt: skip
        if capture:
            expected_start["arguments"] = expected_end["arguments"] = '{"a": 1}'
            expected_end["result"] = "done"
        assert list(expected_start.items()) == list(start_line[2].items())
        assert list(expected_end.items()) == list(end_line[2].items())

    def test_never_raises(self):
        """A logger that fails is counted in `errors`, never raised into the turn."""

        class FailingLogger:
            def log(self, level: int, event: str, **fields: Any) -> None:
                raise OSError("disk full")

        health = TelemetryHealth()
        observer = LogObserver(FailingLogger(), health=health)
        observer.on_event(llm_response())
        observer.on_event(object())  # type: ignore[arg-type]
        assert 1 == observer.errors
        assert {"logs": 1} == dict(health.snapshot().observer_errors)


FLAT_AND_NOT = {
    "a clean tool line": {
        "trace_id": "5b8efff798038103d269b633813fc60c",
        "span_id": "eee19b7ec3c1b174",
        "turn_id": "turn-1",
        "tool_call_id": "call_1",
        "known_tool": True,
        "duration_ms": 0.25,
        "error_type": None,
        "receipt": "zc-receipt-1700000000-ZkaLxTunanPKbpk1kZfk9JAYABR2Eo_Gg8WgmjhWovc",
        "redactions": 0,
        "event": "tool_call_result",
        "level": "info",
        "timestamp": "2024-06-01T12:00:00.000001Z",
    },
    "secrets in the event and a field": {"event": f"token={SECRET}", "note": f"x {SECRET}"},
    "a sensitive key": {"event": "login", "password": "hunter2hunter2", "pin_code": 1234},
    "a name/value pair": {"event": "env", "name": "DB_PASSWORD", "value": "hunter2hunter2"},
    "a name/value pair among many fields": {
        "event": "env",
        "name": "DB_PASSWORD",
        "value": "hunter2hunter2",
        **{f"field_{n}": f"v{n}" for n in range(8)},
    },
    "a value that names a sensitive key": {"event": "x", "field": "api_key", "other": 1},
    "a card number as an integer": {"event": "pay", "number": 4111111111111111},
    "a secret in a key": {"event": "x", f"k {SECRET}": 1},
    "a nested container": {"event": "x", "request": {"auth": SECRET, "n": [SECRET]}},
    "a JSON document in a field": {"event": "x", "body": '{"credentials": {"user": "u"}}'},
    "an enum value": {"event": "x", "outcome": StrOutcome.SUCCESS},
    "nothing": {},
}
"""Records the processor scrubs field by field, and records it hands to `redact_value` whole."""


class TestRedactingProcessor:
    def test_redacts_every_string_at_any_depth(self):
        """The event text, nested values, and values under sensitive keys are redacted."""
        processor = RedactingProcessor(Redactor())
        event = {
            "event": f"token={SECRET}",
            "nested": {"list": [f"x {SECRET}", ("t", SECRET)], "password": "hunter2hunter2"},
        }
        expected = {
            "event": "token=[REDACTED:github_token]",
            "nested": {
                "list": ["x [REDACTED:github_token]", ("t", "[REDACTED:github_token]")],
                "password": "[REDACTED:sensitive_key]",
            },
        }
        assert expected == processor(None, "info", event)

    def test_runtime_ids_of_our_own_lines_are_kept_and_anything_else_is_scanned(self):
        """With `runtime_ids` (our own lines), `trace_id`, `span_id` and `receipt` in the exact
        form the runtime makes are kept even when an operator's rule would match them (ids,
        not payloads); another value under those keys, or the same value under another key,
        is redacted. Without it (foreign records) every value is scanned."""
        redactor = Redactor.from_config(extra_rules={"hex_key": "[0-9a-f]{16,32}"})
        ids = {
            "trace_id": "0af7651916cd43dd8448eb211c80319c",
            "span_id": "b7ad6b7169203331",
            "receipt": "zc-receipt-1712345678-" + "A" * 43,
        }
        smuggled = {"trace_id": f"{SECRET}", "span_id": f"b7ad {SECRET}", "other": ids["span_id"]}
        own = RedactingProcessor(redactor, runtime_ids=True)
        foreign = RedactingProcessor(redactor)
        assert ids == own(None, "info", dict(ids))
        assert {
            "trace_id": "[REDACTED:github_token]",
            "span_id": "b7ad [REDACTED:github_token]",
            "other": "[REDACTED:hex_key]",
        } == own(None, "info", smuggled)
        scanned = foreign(None, "info", dict(ids))
        assert ("[REDACTED:hex_key]", "[REDACTED:hex_key]", ids["receipt"]) == (
            scanned["trace_id"],
            scanned["span_id"],
            scanned["receipt"],
        )

    @pytest.mark.parametrize("record", FLAT_AND_NOT.values(), ids=FLAT_AND_NOT.keys())
    def test_scrubs_as_redact_value_does(self, record):
        """Flat records scrubbed field by field, and the others whole, come out exactly as
        `Redactor.redact_value` writes them, the first time and from memory."""
        redactor = Redactor()
        processor = RedactingProcessor(redactor)
        expected = redactor.redact_value(record)
        assert [expected] * 2 == [processor(None, "info", dict(record)) for _ in range(2)]

    @pytest.mark.parametrize("record", FLAT_AND_NOT.values(), ids=FLAT_AND_NOT.keys())
    def test_an_allowlisted_probe_is_not_trusted(self, record):
        """An operator who allowlists the probe's sensitive names gets the same scrubbing."""
        redactor = Redactor.from_config(allow=["password", "client_secret"])
        processor = RedactingProcessor(redactor)
        expected = redactor.redact_value(record)
        assert [expected] * 2 == [processor(None, "info", dict(record)) for _ in range(2)]

    def test_never_mutates_the_event_dict(self):
        """The caller's dict keeps its secret; the processor returns a scrubbed copy."""
        event = {"event": "call", "note": f"token={SECRET}"}
        scrubbed = RedactingProcessor(Redactor())(None, "info", event)
        assert (f"token={SECRET}", "token=[REDACTED:github_token]") == (
            event["note"],
            scrubbed["note"],
        )

    def test_a_string_that_changed_is_never_remembered(self):
        """A value with a secret is redacted on every line; only clean values are remembered."""
        clean = CleanTextCache(Redactor())
        processor = RedactingProcessor(Redactor(), clean_text=clean)
        records = [processor(None, "info", {"event": "x", "note": f"k {SECRET}"}) for _ in range(3)]
        assert ["k [REDACTED:github_token]"] * 3 == [r["note"] for r in records]
        assert (False, True) == (clean.is_clean(f"k {SECRET}"), clean.is_clean("x"))

    def test_render_fallback_redacts_reprs(self):
        """An object JSON cannot encode is rendered as its redacted `repr`."""

        class Request:
            def __repr__(self) -> str:
                return f"<Request https://bot:{SECRET}@api.example.com/>"

        rendered = RedactingProcessor(Redactor()).render_fallback(Request())
        assert "<Request https://[REDACTED:url_credentials]@api.example.com/>" == rendered


class FlushCountingStream(io.StringIO):
    """A stream that counts its flushes."""

    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1


class TestBufferedWriteLogger:
    def test_info_lines_are_written_without_a_flush_each(self):
        """Info lines reach the stream in order; none of them flushes it."""
        stream = FlushCountingStream()
        writer = BufferedWriteLogger(stream, flush_interval_s=3600)
        for n in range(3):
            writer.info(f"line {n}")
        assert (["line 0", "line 1", "line 2"], 0) == (
            stream.getvalue().splitlines(),
            stream.flushes,
        )

    def test_a_warning_flushes_at_once(self):
        """A warning or worse is flushed with everything written before it."""
        stream = FlushCountingStream()
        writer = BufferedWriteLogger(stream, flush_interval_s=3600)
        writer.info("quiet")
        writer.warning("loud")
        assert 1 == stream.flushes

    def test_the_interval_bounds_the_wait(self):
        """Once the interval has passed, the next line flushes the stream."""
        stream = FlushCountingStream()
        writer = BufferedWriteLogger(stream, flush_interval_s=0)
        writer.info("a")
        writer.info("b")
        assert 2 == stream.flushes

    def test_flush(self):
        """`flush` flushes the stream."""
        stream = FlushCountingStream()
        BufferedWriteLogger(stream, flush_interval_s=3600).flush()
        assert 1 == stream.flushes


class TestBuildLogger:
    def test_processor_order(self):
        """Redaction runs after exception formatting; after it only the time and the renderer."""
        chain = build_processors(Redactor())
        assert RedactingProcessor is type(chain[-3])
        assert add_event_time is chain[-2]
        assert structlog.processors.JSONRenderer is type(chain[-1])
        assert chain.index(structlog.processors.format_exc_info) < len(chain) - 3

    def test_a_float_timestamp_is_the_moment_logged(self, stream):
        """A float `timestamp` (set by `QueuedLogger`) is written as that moment, in UTC."""
        build_logger(redactor=Redactor(), stream=stream).info("hello", timestamp=1717243200.000001)
        assert "2024-06-01T12:00:00.000001Z" == lines(stream)[0]["timestamp"]

    @given(
        st.one_of(
            st.floats(min_value=0, max_value=2.6e11),
            st.integers(0, 4 * 10**15).map(lambda half_micros: half_micros / 2e6),
            st.sampled_from([0.0, 1717243200.9999995, 1717243200.0000015, -1.5]),
        )
    )
    def test_the_time_is_shown_as_datetime_shows_it(self, when):
        """`iso_utc` (the date and time of day kept per second) writes what
        `datetime.fromtimestamp(when, UTC).isoformat()` writes, rounding included."""
        try:
            expected = datetime.datetime.fromtimestamp(when, datetime.UTC).isoformat()
        except (OverflowError, ValueError, OSError):
            return
        assert expected.replace("+00:00", "Z") == iso_utc(when)

    def test_any_other_timestamp_is_replaced_by_now(self, stream):
        """A `timestamp` field that is not a float cannot smuggle text past the redactor."""
        build_logger(redactor=Redactor(), stream=stream).info("hello", timestamp=SECRET)
        [record] = lines(stream)
        assert record["timestamp"].startswith("20") and record["timestamp"].endswith("Z")
        assert [] == leaked_pieces(stream.getvalue())

    def test_json_lines_with_level_and_utc_timestamp(self, stream):
        """Each record is one JSON line with `level` and an ISO UTC `timestamp`."""
        build_logger(redactor=Redactor(), stream=stream).info("hello", n=1)
        [record] = lines(stream)
        assert ("hello", "info", 1) == (record["event"], record["level"], record["n"])
        assert record["timestamp"].endswith("Z")

    def test_level_filters_before_processing(self, stream):
        """Records below the level are not written."""
        logger = build_logger(redactor=Redactor(), stream=stream, level=logging.WARNING)
        logger.info("quiet")
        logger.warning("loud")
        assert ["loud"] == [r["event"] for r in lines(stream)]

    def test_secret_in_a_nested_field(self, stream):
        """A secret in a nested dict field never reaches the output, not even in part."""
        logger = build_logger(redactor=Redactor(), stream=stream)
        logger.info("call", request={"headers": {"x": [f"Bearer {SECRET}"]}, "auth": SECRET})
        [record] = lines(stream)
        assert [] == leaked_pieces(stream.getvalue())
        assert {"x": ["Bearer [REDACTED:github_token]"]} == record["request"]["headers"]

    def test_secret_in_an_exception_and_its_traceback(self, stream):
        """`logger.exception` renders the traceback, and the secret in it is redacted."""
        logger = build_logger(redactor=Redactor(), stream=stream)
        try:
            raise RuntimeError(f"upstream refused token {SECRET}")
        except RuntimeError:
            logger.exception("call failed")
        [record] = lines(stream)
        assert [] == leaked_pieces(stream.getvalue())
        assert (
            "RuntimeError: upstream refused token [REDACTED:github_token]" in (record["exception"])
        )


class TestLineWriter:
    RECORDS: ClassVar[list[tuple[int, str, dict[str, Any]]]] = [
        (logging.INFO, "tool_call_result", {"n": 1, "ok": True, "ms": 0.25, "none": None}),
        (logging.WARNING, "llm_retry", {"request": {"headers": [f"Bearer {SECRET}"]}}),
        (logging.DEBUG, "quiet", {}),
        (logging.ERROR, "turn_end", {"error": f"token {SECRET}", "timestamp": 1717243200.5}),
    ]

    def test_writes_what_build_logger_writes(self, stream):
        """The same records give the same lines as a `build_logger` logger, timestamps set."""
        expected = io.StringIO()
        logger = build_logger(redactor=Redactor(), stream=expected)
        writer = LineWriter(redactor=Redactor(), stream=stream)
        for level, event, fields in self.RECORDS:
            logger.log(level, event, **{"timestamp": 1717243200.25, **fields})
            writer.log(level, event, **{"timestamp": 1717243200.25, **fields})
        writer.flush()
        assert expected.getvalue() == stream.getvalue()
        assert 3 == len(lines(stream))
        assert [] == leaked_pieces(stream.getvalue())

    def test_a_batch_is_one_write_and_a_warning_flushes_it(self):
        """`write` writes every line at once; with a warning among them it flushes."""
        stream = FlushCountingStream()
        writer = LineWriter(redactor=Redactor(), stream=stream)
        rendered = [writer.render(logging.INFO, f"line-{i}", {}) for i in range(3)]
        writer.write([line for line in rendered if line is not None])
        assert (3, 0) == (len(lines(stream)), stream.flushes)
        writer.write([writer.render(logging.WARNING, "loud", {}) or ""], urgent=True)
        assert 1 == stream.flushes


class TestRouteStdlibLogging:
    def test_library_message_is_redacted(self, library_logger, stream):
        """`logger.warning("token=%s", secret)` from a library comes out as a redacted JSON line."""
        route_stdlib_logging(Redactor(), stream, logger=library_logger)
        library_logger.warning("token=%s", SECRET)
        [record] = lines(stream)
        assert [] == leaked_pieces(stream.getvalue())
        expected = ("token=[REDACTED:github_token]", "warning", "tests.zeroclaw.httpx")
        assert expected == (record["event"], record["level"], record["logger"])

    def test_library_exception_with_traceback_is_redacted(self, library_logger, stream):
        """A library's `logger.exception` has its message and traceback redacted."""
        route_stdlib_logging(Redactor(), stream, logger=library_logger)
        try:
            raise ValueError(f"bad credentials {SECRET}")
        except ValueError:
            library_logger.exception("request to %s failed", f"https://u:{SECRET}@h/")
        [record] = lines(stream)
        assert [] == leaked_pieces(stream.getvalue())
        assert "Traceback (most recent call last)" in record["exception"]
        assert "ValueError: bad credentials [REDACTED:github_token]" in record["exception"]

    def test_foreign_chain_ends_in_redaction(self, library_logger, stream):
        """The foreign pre-chain ends in `RedactingProcessor` and the time; nothing adds text."""
        handler = route_stdlib_logging(Redactor(), stream, logger=library_logger)
        formatter = handler.formatter
        assert isinstance(formatter, structlog.stdlib.ProcessorFormatter)
        assert isinstance(formatter.foreign_pre_chain[-2], RedactingProcessor)
        assert add_event_time is formatter.foreign_pre_chain[-1]
        assert structlog.processors.format_exc_info in formatter.foreign_pre_chain
        after = formatter.processors
        assert structlog.stdlib.ProcessorFormatter.remove_processors_meta == after[0]
        assert isinstance(after[1], structlog.processors.JSONRenderer)
        assert 2 == len(after)

    def test_handler_can_be_removed(self, library_logger, stream):
        """Removing the returned handler stops the routing; nothing else was changed."""
        before = list(library_logger.handlers)
        handler = route_stdlib_logging(Redactor(), stream, logger=library_logger)
        library_logger.removeHandler(handler)
        library_logger.warning("after removal")
        assert (before, "") == (library_logger.handlers, stream.getvalue())

    def test_default_is_the_root_logger(self, stream):
        """Without a logger the handler goes on the root logger, and can be taken off again."""
        root = logging.getLogger()
        handler = route_stdlib_logging(Redactor(), stream, level=logging.WARNING)
        try:
            assert handler in root.handlers
        finally:
            root.removeHandler(handler)
        assert handler not in root.handlers


class BlockingLogger:
    """A logger whose first `log` call waits for `release`: the worker is busy, lines pile up."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.events: list[str] = []

    def log(self, level: int, event: str, **fields: Any) -> None:
        self.entered.set()
        self.release.wait(10)
        self.events.append(event)


class TestQueuedLogger:
    def test_lines_are_processed_and_written_by_the_worker(self, stream):
        """Lines reach the stream through the redacting chain, in order, once flushed."""
        logger = build_logger(redactor=Redactor(), stream=stream)
        queued = QueuedLogger(logger, health=TelemetryHealth(), schedule_delay_s=3600)
        queued.log(logging.INFO, "first", token=SECRET)
        queued.log(logging.WARNING, "second")
        assert queued.force_flush(5)
        assert ["first", "second"] == [r["event"] for r in lines(stream)]
        assert [] == leaked_pieces(stream.getvalue())
        assert queued.shutdown(5)

    def test_the_timestamp_is_when_the_line_was_logged(self, stream):
        """The worker writes later, yet the line carries the moment `log` was called."""
        logger = build_logger(redactor=Redactor(), stream=stream)
        queued = QueuedLogger(logger, health=TelemetryHealth(), schedule_delay_s=3600)
        before = time.time()
        queued.log(logging.INFO, "hello")
        after = time.time()
        time.sleep(0.05)  # the write happens well after `after`
        assert queued.shutdown(5)
        [record] = lines(stream)
        written = record["timestamp"].replace("Z", "+00:00")
        moment = datetime.datetime.fromisoformat(written).timestamp()
        assert before - 1e-6 <= moment <= after + 1e-6

    def test_a_full_queue_drops_and_counts_without_blocking(self):
        """With the worker stuck, lines beyond the bound are dropped and counted as logs."""
        blocking, health = BlockingLogger(), TelemetryHealth()
        queued = QueuedLogger(
            blocking,
            health=health,
            max_queue_size=2,
            max_export_batch_size=1,
            schedule_delay_s=3600,
        )
        queued.log(logging.INFO, "taken")  # a full batch: the worker takes it and blocks
        assert blocking.entered.wait(5)
        for i in range(5):
            queued.log(logging.INFO, f"queued-{i}")
        assert 3 == health.snapshot().dropped[Signal.LOGS.value]
        blocking.release.set()
        assert queued.shutdown(5)
        assert ["taken", "queued-0", "queued-1"] == blocking.events

    def test_a_burst_waits_for_the_turn_to_end(self, stream):
        """A turn's burst of lines (here 600: more than a batch, under half the queue) does
        not wake the worker while the turn runs; `wake` at the turn's end writes them all."""
        logger = build_logger(redactor=Redactor(), stream=stream)
        queued = QueuedLogger(logger, health=TelemetryHealth(), schedule_delay_s=3600)
        for i in range(600):
            queued.log(logging.INFO, f"line-{i}")
        time.sleep(0.3)
        assert "" == stream.getvalue()
        queued.wake()
        assert queued.force_flush(5)
        assert 600 == len(lines(stream))
        assert queued.shutdown(5)

    def test_lines_below_the_level_are_not_queued(self, stream):
        """A debug line costs nothing when the level is info."""
        blocking, health = BlockingLogger(), TelemetryHealth()
        blocking.release.set()
        queued = QueuedLogger(blocking, health=health, level=logging.INFO)
        queued.log(logging.DEBUG, "quiet")
        queued.log(logging.INFO, "loud")
        assert queued.shutdown(5)
        assert ["loud"] == blocking.events

    def test_a_line_that_fails_costs_only_that_line(self, stream):
        """An unencodable field drops its line (counted); the batch's other lines are written."""

        class Unprintable:
            def __repr__(self) -> str:
                raise RuntimeError("no repr")

        health = TelemetryHealth()
        logger = build_logger(redactor=Redactor(), stream=stream)
        queued = QueuedLogger(logger, health=health, schedule_delay_s=3600)
        queued.log(logging.INFO, "bad", value=Unprintable())
        queued.log(logging.INFO, "good")
        assert queued.shutdown(5)
        assert ["good"] == [r["event"] for r in lines(stream)]
        assert 1 == health.snapshot().dropped[Signal.LOGS.value]
