"""The turn `telemetry.py` measures, and the cases it measures it in.

One scripted turn: one model response of N sequential calls to one auto-approved tool, ~1 KB
of distinct JSON arguments and ~1 KB of distinct result text per call, then a final answer.
A case (`Builder`) prepares that turn with some telemetry on or off:

- zeroclaw-obs off: the default `NoopObserver`, receipts off (or on: the ablation row),
  `redact_history` on;
- zeroclaw-obs on: `setup_telemetry` as `zeroclaw-obs run` builds it, spans to an OTLP/JSON
  file (`--otlp-json`) or over OTLP/HTTP protobuf to a loopback receiver (the exporter
  `tracer_setup` picks for `http/protobuf`), Prometheus metrics, structlog JSON lines to a
  file (or not: the ablation row), receipts on, `redact_history` on;
- pydantic-ai off and on: a `FunctionModel` that returns the same N calls in one response (run
  one at a time, like ours) and a plain function tool, with `InstrumentationSettings`; its
  spans go through the SDK's stock `BatchSpanProcessor` to the same OTLP/JSON file exporter
  ours uses, or to the SDK's own `OTLPSpanExporter` over HTTP to the same receiver.
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from harness import FINAL_TEXT, FastProvider, run_turn

from zeroclaw_obs.config import ApprovalConfig, ApprovalMode, ReceiptsConfig, RuntimeConfig
from zeroclaw_obs.observability.telemetry import TelemetryOptions, setup_telemetry
from zeroclaw_obs.observability.traces.otlp_json import OtlpJsonFileExporter
from zeroclaw_obs.observability.traces.otlp_proto_http import OtlpProtoSpanExporter
from zeroclaw_obs.providers.base import NativeToolCall, ProviderResponse, Usage
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.replay import Replay, build_replay
from zeroclaw_obs.scenario import Scenario, ScenarioResponse
from zeroclaw_obs.tools.base import Tool, ToolResult

TOOL_NAME = "edit_file"
RECEIPT_KEY = bytes(range(32))
SEED = 20_240_601


class Export(StrEnum):
    """Where the spans of an everything-on case go."""

    JSON = "OTLP/JSON file"
    PROTO = "OTLP/HTTP protobuf"


# --------------------------------------------------------------------------------------------
# The workload
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

    def head(self, calls: int) -> Workload:
        """The first `calls` calls (the warm-up turn)."""
        return Workload(self.arguments[:calls], self.results[:calls])


def make_workload(calls: int, *, with_secret: bool) -> Workload:
    """`calls` distinct ~1 KB arguments and results; `with_secret` puts an AWS access key id
    in the middle of every result."""
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


class Workspace:
    """A temporary directory for span and log files, and the loopback OTLP receiver's URL."""

    def __init__(self, traces_endpoint: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="zeroclaw-bench-telemetry-"))
        self.traces_endpoint = traces_endpoint
        self._n = 0

    def paths(self, *suffixes: str) -> list[Path]:
        self._n += 1
        return [self.root / f"turn{self._n}-{s}" for s in suffixes]

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


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


def zeroclaw_off(redactor: Redactor, *, receipts: bool = False) -> Builder:
    """Telemetry off (`NoopObserver`); receipts off unless asked (the ablation row)."""

    def build(work: Workload) -> Prepared:
        replay = zeroclaw_replay(work, observer=None, redactor=redactor, receipts=receipts)

        async def run() -> None:
            await run_turn(replay)

        return Prepared(run, artefacts={"replay": replay})

    return build


def zeroclaw_on(
    redactor: Redactor,
    space: Workspace,
    export: Export,
    *,
    logs_on: bool = True,
    sdk_path: bool = False,
) -> Builder:
    """Everything on, spans to `export`; `logs_on=False` leaves the structlog lines out;
    `sdk_path=True` builds every span through the SDK and encodes with the SDK's OTLP/HTTP
    exporter, as before issue 17 (the same-run comparison row)."""

    def build(work: Workload) -> Prepared:
        spans, logs = space.paths("spans.jsonl", "logs.jsonl")
        log_file = logs.open("w", encoding="utf-8")
        otlp_json, env = spans, {}
        if export is Export.PROTO:
            otlp_json, env = None, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": space.traces_endpoint}
        options = TelemetryOptions(
            otlp_json=otlp_json, logs=log_file if logs_on else None, progress=None, env=env
        )
        telemetry = setup_telemetry(options, redactor=redactor)
        if sdk_path:
            _use_the_sdk_path(telemetry)
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

        artefacts = {"replay": replay, "telemetry": telemetry, "spans": spans, "logs": logs}
        return Prepared(run, flush, close, artefacts)

    return build


def _use_the_sdk_path(telemetry: Any) -> None:
    """The span path before issue 17, for comparison: SDK-built spans, the SDK's encoder.

    Reaches into the runtime on purpose (a benchmark knob, not a product option).
    """
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from zeroclaw_obs.observability.traces import tracer_setup

    telemetry.span_observer._builder._direct = False
    for processor in tracer_setup._PROCESSORS.get(telemetry.tracer_provider, ()):
        guard = processor.exporter
        if isinstance(guard.inner, OtlpProtoSpanExporter):
            endpoint = guard.inner._endpoint
            guard.inner.shutdown()
            guard.inner = OTLPSpanExporter(endpoint=endpoint, timeout=5)


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


def pydantic_ai_on(space: Workspace, export: Export) -> Builder:
    """Instrumentation on, spans through the SDK's `BatchSpanProcessor` to `export`."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
    from pydantic_ai.models.instrumented import InstrumentationSettings

    def build(work: Workload) -> Prepared:
        (spans,) = space.paths("pai-spans.jsonl")
        resource = Resource.create({"service.name": "pydantic-ai-bench"})
        tracer_provider = TracerProvider(resource=resource)
        exporter: SpanExporter
        if export is Export.JSON:
            exporter = OtlpJsonFileExporter(spans)
        else:
            exporter = OTLPSpanExporter(endpoint=space.traces_endpoint)
        tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
        meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()], resource=resource)
        agent = _pai_agent(work)
        agent.instrument = InstrumentationSettings(
            tracer_provider=tracer_provider, meter_provider=meter_provider
        )

        def flush() -> None:
            if not tracer_provider.force_flush(30_000):
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
