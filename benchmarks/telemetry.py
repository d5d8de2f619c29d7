"""`make bench`, part 3: what everything-on telemetry adds per tool call, next to a peer's.

Side by side, in one run, interleaved round by round, on the same scripted turn (one model
response of N sequential calls to one auto-approved tool, ~1 KB of distinct JSON arguments and
~1 KB of distinct result text per call, then a final answer):

- zeroclaw-obs, telemetry off: the default `NoopObserver`, receipts off, `redact_history` on;
- zeroclaw-obs, everything on: `setup_telemetry` with spans to an OTLP/JSON file (bounded batch
  processor, export guard), Prometheus metrics, structlog JSON lines to a file, receipts on,
  `redact_history` on; with clean results, then with one AWS access key id in every result;
- pydantic-ai, instrumentation off, then on: a `FunctionModel` that returns the same N tool
  calls in one response (run one at a time, like ours) and a plain function tool, with
  `InstrumentationSettings(tracer_provider=…, meter_provider=…)`; its spans go through the
  SDK's stock `BatchSpanProcessor` to the same OTLP/JSON file exporter ours uses.

Each turn is timed by wall clock and by process CPU time (`time.process_time`, every thread,
so the export worker's share shows), then its telemetry is flushed and shut down and that is
timed separately. Figures are medians over the rounds; `added` is the median of the per-round
differences on − off. Figures are reported, not asserted: the script exits 0.

    .venv/bin/python benchmarks/telemetry.py [--quick] [--calls 500] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import pstats
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import FINAL_TEXT, FastProvider, run_turn
from run import Report, Row, verdict

from zeroclaw_obs.config import (
    ApprovalConfig,
    ApprovalMode,
    ReceiptsConfig,
    RedactionSettings,
    RuntimeConfig,
    build_redactor,
)
from zeroclaw_obs.observability.telemetry import Telemetry, TelemetryOptions, setup_telemetry
from zeroclaw_obs.observability.traces.otlp_json import OtlpJsonFileExporter, read_otlp_json
from zeroclaw_obs.providers.base import NativeToolCall, ProviderResponse, Usage
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.replay import Replay, build_replay
from zeroclaw_obs.scenario import Scenario, ScenarioResponse
from zeroclaw_obs.tools.base import Tool, ToolResult

US = 1e6
MS = 1e3
TARGET_US = 150.0
TOOL_NAME = "edit_file"
RECEIPT_KEY = bytes(range(32))
SEED = 20_240_601

# --------------------------------------------------------------------------------------------
# The workload: ~1 KB of distinct arguments and of distinct result text per call
# --------------------------------------------------------------------------------------------

_VOCABULARY = """
request body buffer config value result module parse render update client record filter source
target index handler worker queue batch offset layout widget column border cursor schema table
report chart series window signal status format encode decode merge split reader writer stream
packet frame header footer banner label button canvas shader
"""
_WORDS = _VOCABULARY.split()
_AWS_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def text_block(rng: random.Random, size: int) -> str:
    """Code-like lines of plain words, `size` characters: nothing a redactor should touch."""
    lines: list[str] = []
    length = 0
    while length < size:
        a, b, c, d = (rng.choice(_WORDS) for _ in range(4))
        line = f"    {a}_{b} = {c}.{d}({a}, {b}_{c})\n"
        lines.append(line)
        length += len(line)
    return "".join(lines)[:size]


@dataclass(frozen=True)
class Workload:
    """The arguments and results of one turn's N calls (the same every turn)."""

    arguments: tuple[dict[str, Any], ...]
    results: tuple[str, ...]
    secrets: tuple[str, ...] = ()

    @property
    def calls(self) -> int:
        return len(self.arguments)

    def mean_sizes(self) -> tuple[float, float]:
        """Mean bytes of the arguments (as compact JSON) and of the results."""
        args = statistics.mean(
            len(json.dumps(a, separators=(",", ":")).encode()) for a in self.arguments
        )
        results = statistics.mean(len(r.encode()) for r in self.results)
        return args, results


def make_workload(calls: int, *, with_secret: bool) -> Workload:
    rng = random.Random(SEED)
    arguments = tuple(
        {"i": k, "path": f"src/app/{rng.choice(_WORDS)}_{k}.py", "content": text_block(rng, 960)}
        for k in range(calls)
    )
    results: list[str] = []
    secrets: list[str] = []
    for k in range(calls):
        body = text_block(rng, 1000)
        if with_secret:
            key = "AKIA" + "".join(rng.choice(_AWS_ALPHABET) for _ in range(16))
            secrets.append(key)
            middle = len(body) // 2
            body = f"{body[:middle]}\n    uploaded with {key} to the bucket\n{body[middle:]}"
            body = body[: 1000 + 48]
        results.append(f"call {k} wrote:\n{body}")
    return Workload(arguments, tuple(results), tuple(secrets))


_SCHEMA = {
    "type": "object",
    "properties": {
        "i": {"type": "integer"},
        "path": {"type": "string"},
        "content": {"type": "string"},
    },
    "required": ["i", "path", "content"],
    "additionalProperties": False,
}


class EditTool(Tool):
    """Returns call `i`'s prebuilt ~1 KB result at once (its own cost is ~0)."""

    name = TOOL_NAME
    description = "Writes a file and reports what it wrote."

    def __init__(self, results: Sequence[str]) -> None:
        self._results = tuple(ToolResult.ok(r) for r in results)

    def parameters_schema(self) -> dict[str, Any]:
        return _SCHEMA

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        return self._results[args["i"]]


# --------------------------------------------------------------------------------------------
# Cases: how to build one turn, run it (timed), flush its telemetry (timed apart), clean up
# --------------------------------------------------------------------------------------------


@dataclass
class Prepared:
    """One ready turn. `run` is timed; `flush` is timed apart; `close` is not timed."""

    run: Callable[[], Awaitable[None]]
    flush: Callable[[], None] = lambda: None
    close: Callable[[], None] = lambda: None
    artefacts: dict[str, Any] = field(default_factory=dict)


Builder = Callable[[Workload], Prepared]


class _NoTerminal:
    def is_available(self) -> bool:
        return False

    async def ask(self, request: Any) -> None:  # pragma: no cover - never asked
        raise AssertionError("no terminal in benchmarks")


_USAGE = Usage(input_tokens=1200, output_tokens=300)


def zeroclaw_replay(work: Workload, *, observer: Any, redactor: Redactor, receipts: bool) -> Replay:
    config = RuntimeConfig(
        max_tool_iterations=2,
        receipts=ReceiptsConfig(enabled=receipts),
        approval=ApprovalConfig(mode=ApprovalMode.NON_INTERACTIVE, auto_approve=[TOOL_NAME]),
    )
    scenario = Scenario(
        user="benchmark", config=config, responses=[ScenarioResponse(text=FINAL_TEXT)]
    )
    replay = build_replay(
        scenario,
        source="benchmark",
        observer=observer,
        redactor=redactor,
        receipt_key=RECEIPT_KEY if receipts else None,
        extra_tools=[EditTool(work.results)],
        terminal=_NoTerminal(),
    )
    calls = [
        NativeToolCall(id=f"call_{k}", name=TOOL_NAME, arguments=dict(a))
        for k, a in enumerate(work.arguments)
    ]
    replay.execution.provider = FastProvider(
        [
            ProviderResponse(tool_calls=calls, usage=_USAGE),
            ProviderResponse(text=FINAL_TEXT, usage=_USAGE),
        ]
    )
    return replay


class Workspace:
    """A temporary directory; each turn writes its own span and log files there."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="zeroclaw-bench-telemetry-"))
        self._n = 0

    def paths(self, *suffixes: str) -> list[Path]:
        self._n += 1
        return [self.root / f"turn{self._n}-{s}" for s in suffixes]

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def zeroclaw_off(redactor: Redactor, *, receipts: bool = False) -> Builder:
    """Telemetry off (`NoopObserver`); receipts off unless asked (the ablation row)."""

    def build(work: Workload) -> Prepared:
        replay = zeroclaw_replay(work, observer=None, redactor=redactor, receipts=receipts)

        async def run() -> None:
            await run_turn(replay)

        return Prepared(run, artefacts={"replay": replay})

    return build


def zeroclaw_on(redactor: Redactor, space: Workspace, *, logs_on: bool = True) -> Builder:
    """Everything on; `logs_on=False` leaves the structlog lines out (the ablation row)."""

    def build(work: Workload) -> Prepared:
        spans, logs = space.paths("spans.jsonl", "logs.jsonl")
        log_file = logs.open("w", encoding="utf-8")
        telemetry = setup_telemetry(
            TelemetryOptions(
                otlp_json=spans, logs=log_file if logs_on else None, progress=None, env={}
            ),
            redactor=redactor,
        )
        replay = zeroclaw_replay(
            work, observer=telemetry.observer, redactor=redactor, receipts=True
        )

        async def run() -> None:
            await run_turn(replay)

        def flush() -> None:
            if not telemetry.shutdown():
                raise RuntimeError("telemetry did not flush in time")
            log_file.flush()

        def close() -> None:
            log_file.close()
            spans.unlink(missing_ok=True)
            logs.unlink(missing_ok=True)

        return Prepared(
            run,
            flush,
            close,
            {"replay": replay, "telemetry": telemetry, "spans": spans, "logs": logs},
        )

    return build


def _pai_agent(work: Workload) -> Any:
    """A pydantic-ai agent whose `FunctionModel` returns all N calls in one response."""
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import RequestUsage

    usage = RequestUsage(input_tokens=1200, output_tokens=300)
    results = work.results
    step = [0]

    def model(messages: list[Any], info: Any) -> ModelResponse:
        # Usage is given so FunctionModel does not estimate it by walking every message.
        step[0] += 1
        if step[0] == 1:
            parts = [
                ToolCallPart(TOOL_NAME, dict(a), f"call_{k}") for k, a in enumerate(work.arguments)
            ]
            return ModelResponse(parts=parts, usage=usage)
        return ModelResponse(parts=[TextPart(FINAL_TEXT)], usage=usage)

    def edit_file(i: int, path: str, content: str) -> str:
        """Writes a file and reports what it wrote."""
        return results[i]

    return Agent(FunctionModel(model, model_name="bench-model"), tools=[Tool(edit_file)])


def _pai_run(agent: Any) -> Callable[[], Awaitable[None]]:
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.usage import UsageLimits

    async def run() -> None:
        # One call at a time, in order, like zeroclaw-obs's sequential path.
        with ToolManager.parallel_execution_mode("sequential"):
            result = await agent.run("benchmark", usage_limits=UsageLimits(request_limit=None))
        if result.output != FINAL_TEXT:
            raise RuntimeError(f"pydantic-ai turn did not finish cleanly: {result.output!r}")

    return run


def pydantic_ai_off() -> Builder:
    def build(work: Workload) -> Prepared:
        agent = _pai_agent(work)
        agent.instrument = False
        return Prepared(_pai_run(agent))

    return build


def pydantic_ai_on(space: Workspace) -> Builder:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic_ai.models.instrumented import InstrumentationSettings

    def build(work: Workload) -> Prepared:
        (spans,) = space.paths("pai-spans.jsonl")
        resource = Resource.create({"service.name": "pydantic-ai-bench"})
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(OtlpJsonFileExporter(spans)))
        meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()], resource=resource)
        agent = _pai_agent(work)
        agent.instrument = InstrumentationSettings(
            tracer_provider=tracer_provider, meter_provider=meter_provider
        )

        def flush() -> None:
            if not tracer_provider.force_flush(5000):
                raise RuntimeError("pydantic-ai spans did not flush in time")
            tracer_provider.shutdown()
            meter_provider.shutdown()

        def close() -> None:
            spans.unlink(missing_ok=True)

        return Prepared(_pai_run(agent), flush, close, {"spans": spans})

    return build


def pydantic_ai_version() -> str | None:
    try:
        import pydantic_ai
    except ImportError:
        return None
    return getattr(pydantic_ai, "__version__", "?")


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """Seconds of one turn: wall and process CPU of the turn, then of its flush."""

    wall: float
    cpu: float
    flush_wall: float
    flush_cpu: float
    switches: int = 0
    """Voluntary context switches of the process during the turn (`ru_nvcsw`): how often a
    thread gave up the CPU waiting, e.g. for the GIL while a worker held it."""

    @property
    def cpu_all(self) -> float:
        """All the CPU the process spent on the turn and its telemetry (export included)."""
        return self.cpu + self.flush_cpu


async def timed(build: Builder, work: Workload) -> Sample:
    """One turn: `gc.collect()`, a 2-call warm-up of the same case, then the timed turn.

    The warm-up comes after the collection because a full collection leaves the CPU caches
    cold. The garbage collector stays off through the turn and its flush.
    """
    gc.collect()
    warm = build(small(work))
    try:
        await warm.run()
        warm.flush()
    finally:
        warm.close()
    prepared = build(work)
    gc.disable()
    try:
        s0 = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
        w0, c0 = time.perf_counter(), time.process_time()
        await prepared.run()
        w1, c1 = time.perf_counter(), time.process_time()
        s1 = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
        prepared.flush()
        w2, c2 = time.perf_counter(), time.process_time()
    finally:
        gc.enable()
        prepared.close()
    return Sample(w1 - w0, c1 - c0, w2 - w1, c2 - c1, s1 - s0)


def small(work: Workload) -> Workload:
    return Workload(work.arguments[:2], work.results[:2])


@dataclass(frozen=True)
class Stat:
    """Median and best of per-call figures, in µs."""

    median: float
    best: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Stat:
        return cls(statistics.median(values), min(values))

    def show(self, unit: str = "µs") -> str:
        return f"{self.median:.1f} {unit} (best {self.best:.1f})"


def per_call(samples: Sequence[Sample], calls: int, pick: Callable[[Sample], float]) -> Stat:
    return Stat.of([pick(s) / calls * US for s in samples])


def added(
    on: Sequence[Sample], off: Sequence[Sample], calls: int, pick: Callable[[Sample], float]
) -> Stat:
    """Median over rounds of (on − off) per call; best = best on − best off."""
    paired = [(pick(a) - pick(b)) / calls * US for a, b in zip(on, off, strict=True)]
    best = (min(pick(a) for a in on) - min(pick(b) for b in off)) / calls * US
    return Stat(statistics.median(paired), best)


# --------------------------------------------------------------------------------------------
# Checks: an untimed turn per telemetry case proves it really emitted what it claims
# --------------------------------------------------------------------------------------------


async def check_zeroclaw(build: Builder, work: Workload) -> str:
    prepared = build(work)
    try:
        await prepared.run()
        prepared.flush()
        spans = read_otlp_json(prepared.artefacts["spans"])
        log_text = prepared.artefacts["logs"].read_text(encoding="utf-8")
        telemetry: Telemetry = prepared.artefacts["telemetry"]
        metrics = telemetry.metrics_text().decode()
        history = json.dumps(prepared.artefacts["replay"].state.messages)
        span_text = prepared.artefacts["spans"].read_text(encoding="utf-8")
    finally:
        prepared.close()
    tools = [s for s in spans if s["name"].startswith("execute_tool")]
    problems = []
    if len(tools) != work.calls:
        problems.append(f"{len(tools)} execute_tool spans, expected {work.calls}")
    if sum(1 for s in tools if s["attributes"].get("zeroclaw.tool.receipt")) != work.calls:
        problems.append("receipts missing on tool spans")
    if sum(1 for s in tools if "gen_ai.tool.call.result" in s["attributes"]) != work.calls:
        problems.append("results missing on tool spans")
    results_logged = log_text.count('"tool_call_result"')
    if results_logged != work.calls:
        problems.append(f"{results_logged} tool_call_result log lines, expected {work.calls}")
    counted = sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("zeroclaw_tool_calls_total{") and f'"{TOOL_NAME}"' in line
    )
    if counted != work.calls:
        problems.append(f"zeroclaw_tool_calls_total counts {counted:.0f} calls")
    redacted = sum(int(s["attributes"].get("zeroclaw.redaction.count", 0) or 0) for s in tools)
    leaked = [k for k in work.secrets if k in span_text or k in log_text or k in history]
    if leaked:
        problems.append(f"{len(leaked)} secrets leaked")
    if work.secrets and redacted < work.calls:
        problems.append(f"zeroclaw.redaction.count adds to {redacted}, expected ≥ {work.calls}")
    if problems:
        return "FAILED: " + "; ".join(problems)
    tail = f", {len(work.secrets)} secrets redacted, none leaked" if work.secrets else ""
    return (
        f"ok: {len(spans)} spans ({len(tools)} execute_tool with receipt, redacted args and "
        f"result), {log_text.count(chr(10))} log lines, metrics count {work.calls} calls{tail}"
    )


async def check_pydantic_ai(build: Builder, work: Workload) -> str:
    prepared = build(work)
    try:
        await prepared.run()
        prepared.flush()
        spans = read_otlp_json(prepared.artefacts["spans"])
    finally:
        prepared.close()
    tools = [s for s in spans if s["name"] == f"execute_tool {TOOL_NAME}"]
    content = sum(
        1
        for s in tools
        if {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} <= s["attributes"].keys()
    )
    names = sorted({s["name"] for s in spans})
    if len(tools) != work.calls or content != work.calls:
        return f"FAILED: {len(tools)} tool spans, {content} with content (span names: {names})"
    return (
        f"ok: {len(spans)} spans ({names}); {content} execute_tool spans with arguments and "
        "result; the chat and invoke_agent spans also carry the whole message history"
    )


# --------------------------------------------------------------------------------------------
# Profiles of the on-path
# --------------------------------------------------------------------------------------------

_AREAS = (
    ("zeroclaw observability/traces (span observer)", "zeroclaw_obs/observability/traces"),
    ("zeroclaw observability/metrics", "zeroclaw_obs/observability/metrics"),
    ("zeroclaw observability/logs", "zeroclaw_obs/observability/logs"),
    ("zeroclaw observability (other)", "zeroclaw_obs/observability"),
    ("zeroclaw redaction", "zeroclaw_obs/redaction"),
    ("zeroclaw receipts", "zeroclaw_obs/receipts"),
    ("zeroclaw engine (turn/, tools/, …)", "zeroclaw_obs"),
    ("opentelemetry api+sdk", "opentelemetry"),
    ("structlog", "structlog"),
    ("prometheus_client", "prometheus_client"),
    ("google.protobuf", "google/protobuf"),
    ("json", "/json/"),
    ("hmac / hashlib", "hmac"),
    ("re2", "re2"),
    ("threading", "threading"),
    ("builtins and other C functions", "~"),
)


Component = tuple[str, str, tuple[str, ...]]

# (label, end of the file's path, function names): where the time goes, cumulative.
_COMPONENTS: tuple[Component, ...] = (
    ("TelemetryChain.on_event (all observers)", "observability/chain.py", ("on_event",)),
    ("  SpanObserver.on_event", "observability/traces/tracing.py", ("on_event",)),
    ("  MetricsObserver.record", "observability/metrics/metrics.py", ("record",)),
    ("  LogObserver.record (structlog chain + write)", "observability/logs/logs.py", ("record",)),
    ("    RedactingProcessor (log redaction)", "observability/logs/chain.py", ("__call__",)),
    ("    JSONRenderer (log JSON)", "structlog/processors.py", ("__call__",)),
    ("  TraceTreeObserver.record", "observability/trace_tree.py", ("record",)),
    ("results.open: redact args, ToolCallStart", "turn/results.py", ("open",)),
    ("results.close: receipt, redact result, ToolCall", "turn/results.py", ("close",)),
    ("  receipt (HMAC)", "zeroclaw_obs/receipts.py", ("generate",)),
    ("Redactor.redact_value (args, log lines)", "redaction/_redactor.py", ("redact_value",)),
    (
        "Redactor.redact_text[_report] (results)",
        "redaction/_redactor.py",
        ("redact_text", "redact_text_report"),
    ),
)
_EXPORT_COMPONENTS: tuple[Component, ...] = (
    ("RedactingSpanExporter.guard (span → dict → scrub → span)", "export_guard.py", ("guard",)),
    ("  of which Redactor.redact_text", "redaction/_redactor.py", ("redact_text",)),
    ("encode_spans (ReadableSpan → protobuf)", "trace_encoder/__init__.py", ("encode_spans",)),
    ("MessageToDict (protobuf → dict, pure Python)", "json_format.py", ("MessageToDict",)),
    ("json.dumps", "json/__init__.py", ("dumps",)),
    ("file write + flush", "~", ("<method 'write' of '_io.TextIOWrapper' objects>",)),
)


def _components(stats: pstats.Stats, components: Sequence[Component]) -> dict[str, float]:
    table: dict[tuple[str, int, str], tuple] = stats.stats  # type: ignore[attr-defined]
    out = {}
    for label, path, functions in components:
        out[label] = sum(
            entry[3]
            for (filename, _, fn), entry in table.items()
            if filename.endswith(path) and fn in functions
        )
    return out


def _area(filename: str) -> str:
    for label, needle in _AREAS:
        if needle in filename:
            return label
    return "other"


def _profile(run: Callable[[], Any]) -> pstats.Stats:
    profiler = cProfile.Profile()
    gc.disable()
    try:
        profiler.enable()
        run()
        profiler.disable()
    finally:
        gc.enable()
    return pstats.Stats(profiler)


def _by_area(stats: pstats.Stats) -> dict[str, float]:
    areas: dict[str, float] = {}
    for (filename, _, _), entry in stats.stats.items():  # type: ignore[attr-defined]
        areas[_area(filename)] = areas.get(_area(filename), 0.0) + entry[2]
    return areas


def _top(stats: pstats.Stats, top: int) -> str:
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    lines = out.getvalue().splitlines()
    start = next((i for i, s in enumerate(lines) if "ncalls" in s), 0)
    return "\n".join(lines[start:]).rstrip()


def print_profiles(redactor: Redactor, space: Workspace, work: Workload, top: int = 25) -> None:
    """cProfile the on-turn and the off-turn, the added own time by area, then the export."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from zeroclaw_obs.observability.traces.export_guard import RedactingSpanExporter

    calls = work.calls

    def profiled(build: Builder) -> tuple[pstats.Stats, Prepared]:
        prepared = build(work)
        stats = _profile(lambda: asyncio.run(prepared.run()))
        return stats, prepared

    off_stats, _ = profiled(zeroclaw_off(redactor))
    on_stats, on = profiled(zeroclaw_on(redactor, space))
    on.flush()
    on.close()
    off_areas, on_areas = _by_area(off_stats), _by_area(on_stats)
    off_parts = _components(off_stats, _COMPONENTS)
    on_parts = _components(on_stats, _COMPONENTS)
    print(f"\n--- cProfile: zeroclaw-obs turn, everything on, {calls} calls (top {top}) ---")
    print(_top(on_stats, top))
    print(
        "\n    µs per call under cProfile (the profiler inflates small calls; compare shares)"
        f"\n    {'own time by area':<58} {'off':>7} {'on':>7} {'added':>7}"
    )
    rows = sorted(on_areas, key=lambda a: on_areas[a] - off_areas.get(a, 0.0), reverse=True)
    for area in rows:
        a_on, a_off = on_areas[area] / calls * US, off_areas.get(area, 0.0) / calls * US
        if abs(a_on - a_off) >= 0.5 or a_off >= 0.5:
            print(f"    {area:<58} {a_off:7.1f} {a_on:7.1f} {a_on - a_off:7.1f}")
    print(f"\n    {'cumulative time of a component (overlapping)':<58} {'off':>7} {'on':>7}")
    for label, _, _ in _COMPONENTS:
        c_off, c_on = off_parts[label] / calls * US, on_parts[label] / calls * US
        print(f"    {label:<58} {c_off:7.1f} {c_on:7.1f}")

    # The export worker is not seen by cProfile (another thread): profile the same export
    # (export guard → OTLP/JSON encoding → file) on the main thread, on the turn's spans.
    (spans_path,) = space.paths("profile-spans.jsonl")
    build = zeroclaw_on(redactor, space)
    prepared = build(work)
    memory = InMemorySpanExporter()
    prepared.artefacts["telemetry"].tracer_provider.add_span_processor(SimpleSpanProcessor(memory))
    asyncio.run(prepared.run())
    prepared.flush()
    prepared.close()
    finished = memory.get_finished_spans()
    exporter = RedactingSpanExporter(OtlpJsonFileExporter(spans_path), redactor)
    export_stats = _profile(lambda: exporter.export(finished))
    exporter.shutdown()
    spans_path.unlink(missing_ok=True)
    export_total = export_stats.total_tt  # type: ignore[attr-defined]
    export_parts = _components(export_stats, _EXPORT_COMPONENTS)
    print(
        f"\n--- cProfile: the export worker's job for that turn ({len(finished)} spans: "
        f"guard + OTLP/JSON encode + write), per call {export_total / calls * US:.1f} "
        "µs under cProfile (top 15) ---"
    )
    print(_top(export_stats, 15))
    print(f"\n    {'cumulative time of a step of the export':<58} {'µs/call':>7}  share")
    for label, _, _ in _EXPORT_COMPONENTS:
        part = export_parts[label]
        print(f"    {label:<58} {part / calls * US:7.1f}  {part / export_total:6.1%}")


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


async def collect(calls: int, rounds: int, report: Report, space: Workspace) -> bool:
    """Measure every case interleaved; returns True when our added cost missed its target."""
    redactor = build_redactor(RedactionSettings(), "benchmark")
    clean = make_workload(calls, with_secret=False)
    secret = make_workload(calls, with_secret=True)
    leftover = [r for r in clean.results + tuple(a["content"] for a in clean.arguments)]
    flagged = sum(1 for text in leftover if redactor.redact_text(text) != text)
    cases: dict[str, tuple[Builder, Workload]] = {
        "zc_off": (zeroclaw_off(redactor), clean),
        "zc_on": (zeroclaw_on(redactor, space), clean),
        "zc_off_secret": (zeroclaw_off(redactor), secret),
        "zc_on_secret": (zeroclaw_on(redactor, space), secret),
        "zc_receipts": (zeroclaw_off(redactor, receipts=True), clean),
        "zc_on_nologs": (zeroclaw_on(redactor, space, logs_on=False), clean),
    }
    version = pydantic_ai_version()
    if version is not None:
        cases["pai_off"] = (pydantic_ai_off(), clean)
        cases["pai_on"] = (pydantic_ai_on(space), clean)
    arg_bytes, result_bytes = clean.mean_sizes()
    report.notes.append(
        "Targets: the issue's figure is the cost added per tool call, 'turn wall (on − off)': "
        "what a call waits for. The 'process CPU, turn + flush' row holds the same ≤ 150 µs to "
        "everything the process spends, the spans built, guarded and encoded and the log lines "
        "rendered after the turn included: a stricter reading, kept with its verdict in view."
    )
    report.notes.append(
        f"Workload: 1 model response × {calls} sequential calls, then a final answer; "
        f"arguments {arg_bytes:,.0f} B (compact JSON), results {result_bytes:,.0f} B, distinct "
        f"per call; {flagged} of the clean texts trip the redactor (should be 0). Secret "
        f"variant: one AWS access key id per result ({secret.mean_sizes()[1]:,.0f} B)."
    )

    checks = [
        ("zeroclaw-obs on", await check_zeroclaw(cases["zc_on"][0], clean)),
        ("zeroclaw-obs on, secrets", await check_zeroclaw(cases["zc_on_secret"][0], secret)),
    ]
    if version is not None:
        checks.append(("pydantic-ai on", await check_pydantic_ai(cases["pai_on"][0], clean)))
    report.notes.append(
        "Checks (one untimed turn per case):\n    "
        + "\n    ".join(f"{name}: {text}" for name, text in checks)
    )

    for build, work in cases.values():  # one untimed turn per case
        warm = build(work)
        await warm.run()
        warm.flush()
        warm.close()
    samples: dict[str, list[Sample]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (build, work) in cases.items():
            samples[name].append(await timed(build, work))

    missed = False
    for tag, off_name, on_name in (
        ("Z", "zc_off", "zc_on"),
        ("Z+s", "zc_off_secret", "zc_on_secret"),
    ):
        off, on = samples[off_name], samples[on_name]
        what = "clean results" if tag == "Z" else "1 AWS key per result"
        report.add(
            Row(
                tag,
                f"µs/call, telemetry off, turn wall ({what})",
                per_call(off, calls, _wall).show(),
            )
        )
        report.add(Row(tag, "µs/call, everything on, turn wall", per_call(on, calls, _wall).show()))
        wall = added(on, off, calls, _wall)
        report.add(
            Row(
                tag,
                "µs/call ADDED by everything on: turn wall (on − off)",
                wall.show(),
                f"≤ {TARGET_US:.0f} µs",
                verdict(wall.median, TARGET_US),
            )
        )
        cpu = added(on, off, calls, _cpu)
        report.add(Row(tag, "µs/call added: process CPU during the turn (all threads)", cpu.show()))
        switches = (
            statistics.median(x.switches for x in off),
            statistics.median(x.switches for x in on),
        )
        report.add(
            Row(
                tag,
                "voluntary context switches during the turn: off / on (GIL hand-offs)",
                f"{switches[0]:.0f} / {switches[1]:.0f}",
            )
        )
        flush_wall = Stat.of([s.flush_wall * MS for s in on])
        flush_cpu = Stat.of([s.flush_cpu * MS for s in on])
        report.add(
            Row(
                tag,
                "ms flush + shutdown after the turn: wall / CPU",
                f"{flush_wall.median:.1f} / {flush_cpu.median:.1f} ms",
            )
        )
        total = added(on, off, calls, _cpu_all)
        report.add(
            Row(
                tag,
                "µs/call ADDED: process CPU, turn + flush (export included)",
                total.show(),
                f"≤ {TARGET_US:.0f} µs",
                verdict(total.median, TARGET_US),
            )
        )
        missed = missed or wall.median > TARGET_US or total.median > TARGET_US

    off, receipts = samples["zc_off"], samples["zc_receipts"]
    nologs, full = samples["zc_on_nologs"], samples["zc_on"]
    for label, on_case, off_case in (
        ("receipts alone (NoopObserver + receipts)", receipts, off),
        ("spans + metrics + trace tree (no logs), over receipts", nologs, receipts),
        ("structlog lines (everything on − on without logs)", full, nologs),
    ):
        wall = added(on_case, off_case, calls, _wall)
        total = added(on_case, off_case, calls, _cpu_all)
        report.add(
            Row(
                "Z/",
                f"µs/call added by {label}: wall / CPU incl. flush",
                f"{wall.median:.1f} / {total.median:.1f} µs",
            )
        )

    if version is None:
        report.rows.append(
            Row("P", "pydantic-ai not installed (pip install pydantic-ai-slim)", "—")
        )
        return missed
    off, on = samples["pai_off"], samples["pai_on"]
    report.add(
        Row(
            "P",
            f"pydantic-ai {version}: µs/call, instrumentation off",
            per_call(off, calls, _wall).show(),
        )
    )
    report.add(
        Row("P", "µs/call, instrumentation on, turn wall", per_call(on, calls, _wall).show())
    )
    pai_wall = added(on, off, calls, _wall)
    report.add(Row("P", "µs/call ADDED by instrumentation: turn wall", pai_wall.show()))
    report.add(
        Row("P", "µs/call added: process CPU during the turn", added(on, off, calls, _cpu).show())
    )
    flush_wall = Stat.of([s.flush_wall * MS for s in on])
    flush_cpu = Stat.of([s.flush_cpu * MS for s in on])
    report.add(
        Row(
            "P",
            "ms flush + shutdown after the turn: wall / CPU",
            f"{flush_wall.median:.1f} / {flush_cpu.median:.1f} ms",
        )
    )
    pai_total = added(on, off, calls, _cpu_all)
    report.add(Row("P", "µs/call ADDED: process CPU, turn + flush", pai_total.show()))
    ours_on = per_call(samples["zc_on"], calls, _wall).median
    theirs_on = per_call(on, calls, _wall).median
    ours_added = added(samples["zc_on"], samples["zc_off"], calls, _wall).median
    report.add(
        Row(
            "=",
            "µs/call with telemetry on, turn wall: zeroclaw-obs vs pydantic-ai",
            f"{ours_on:.1f} vs {theirs_on:.1f} µs ({theirs_on / ours_on:.1f}×)",
        )
    )
    report.add(
        Row(
            "=",
            "µs/call added by telemetry, turn wall: zeroclaw-obs vs pydantic-ai",
            f"{ours_added:.1f} vs {pai_wall.median:.1f} µs",
        )
    )
    return missed


def _wall(s: Sample) -> float:
    return s.wall


def _cpu(s: Sample) -> float:
    return s.cpu


def _cpu_all(s: Sample) -> float:
    return s.cpu_all


FAIRNESS = """\
What each side does when on (same turn, same payloads, same OTLP/JSON file exporter):
    zeroclaw-obs: invoke_agent + chat + one execute_tool span per call with redacted arguments
      and result, receipt, outcome; Prometheus counters/histograms with trace exemplars; one
      structlog JSON line per lifecycle fact (tool_call_start/result, …) to a file; HMAC receipt
      per call; the export guard re-scans every span attribute on the worker thread.
    pydantic-ai: its own spans (agent run, model requests, one per tool call) with arguments,
      results and messages as attributes; token metrics to an SDK MeterProvider; no logs, no
      redaction, no receipts. Stock BatchSpanProcessor. Tools run one at a time
      (parallel_execution_mode('sequential')), all N calls from one model response.
Per-call figures are the whole turn / N (the turn's fixed cost and its 2 model calls included);
'added' is the median over rounds of (on − off), best is best-on − best-off. The log worker
and the span builder wake at the end of a turn, every second, or when half their queue is
used (8,192 lines, 2,048 spans), so below ~1,000 calls neither runs during this turn (which
lasts well under a second):
the turn's wall is the on-path cost, and the flush is the building, rendering and export.
With more calls (--calls 3000) they wake mid-turn and, under the GIL (RE2 releases it on every
match, so the turn and a worker trade it at each redaction), their CPU and context switches
land on the turn's wall too: this provider never waits, while a real one leaves the workers
its network waits. The span export queue keeps OTEL_BSP_* (a wake per 512 spans)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 7")
    parser.add_argument("--calls", type=int, default=500, help="tool calls per turn")
    parser.add_argument("--profile", action="store_true", help="profile whatever the result")
    args = parser.parse_args()
    rounds = 3 if args.quick else 7
    began = time.perf_counter()
    print(
        f"zeroclaw-obs telemetry overhead — Python {sys.version.split()[0]}, {os.cpu_count()} "
        f"CPUs, {args.calls} calls per turn, median of {rounds} interleaved rounds, gc off "
        "while timing"
    )
    report = Report()
    space = Workspace()
    missed = False
    try:
        try:
            missed = asyncio.run(collect(args.calls, rounds, report, space))
        except Exception as exc:
            traceback.print_exc()
            report.rows.append(Row("!", f"ERROR: {type(exc).__name__}: {exc}"[:90], "—"))
        print()
        print(report.table())
        for note in report.notes:
            print()
            print(note)
        print()
        print(FAIRNESS)
        if missed or args.profile:
            try:
                redactor = build_redactor(RedactionSettings(), "benchmark")
                print_profiles(redactor, space, make_workload(args.calls, with_secret=False))
            except Exception:
                traceback.print_exc()
    finally:
        space.remove()
    verdicts = [r.ok for r in report.rows if r.ok is not None]
    print(
        f"\n{sum(verdicts)} PASS, {len(verdicts) - sum(verdicts)} MISS "
        f"({time.perf_counter() - began:.1f} s). Figures are reported, not asserted: exit 0."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
