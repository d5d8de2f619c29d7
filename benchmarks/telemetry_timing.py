"""How `telemetry.py` times a case, and how it checks that a case emitted what it claims.

A sample is one turn timed by wall clock and by process CPU (`time.process_time`: every
thread, so the workers' share shows), then its flush and shutdown timed apart, with the
voluntary context switches of the turn (`ru_nvcsw`). Per-call figures are the turn's total
over its N calls; `added` is the median of the per-round differences on − off.
"""

from __future__ import annotations

import gc
import json
import resource
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from report import MS, US, Timing
from telemetry_receiver import OtlpReceiver
from telemetry_workload import TOOL_NAME, Builder, Export, Prepared, Workload

from zeroclaw_obs.observability.telemetry import Telemetry
from zeroclaw_obs.observability.traces.otlp_json import read_otlp_json

__all__ = [
    "MS",
    "US",
    "Sample",
    "Timing",
    "added",
    "check_pydantic_ai",
    "check_zeroclaw",
    "cpu",
    "cpu_all",
    "exported_bytes",
    "median_of",
    "per_call",
    "timed",
    "wall",
]

T = TypeVar("T")


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
    flush_switches: int = 0

    @property
    def cpu_all(self) -> float:
        """All the CPU the process spent on the turn and its telemetry (export included)."""
        return self.cpu + self.flush_cpu


def wall(s: Sample) -> float:
    return s.wall


def cpu(s: Sample) -> float:
    return s.cpu


def cpu_all(s: Sample) -> float:
    return s.cpu_all


async def warmed(build: Builder, work: Workload) -> Prepared:
    """`gc.collect()`, a 2-call warm-up of the same case, then the turn to time, built.

    The warm-up comes after the collection because a full collection leaves the CPU caches
    cold. `timed` and `telemetry_ab.py` time what this returns.
    """
    gc.collect()
    warm = build(work.head(2))
    try:
        await warm.run()
        warm.flush()
    finally:
        warm.close()
    return build(work)


async def timed(build: Builder, work: Workload) -> Sample:
    """One turn after `warmed`, timed; the garbage collector stays off through the turn and
    its flush."""
    prepared = await warmed(build, work)
    gc.disable()
    try:
        s0 = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
        w0, c0 = time.perf_counter(), time.process_time()
        await prepared.run()
        w1, c1 = time.perf_counter(), time.process_time()
        s1 = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
        prepared.flush()
        w2, c2 = time.perf_counter(), time.process_time()
        s2 = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
    finally:
        gc.enable()
        prepared.close()
    return Sample(w1 - w0, c1 - c0, w2 - w1, c2 - c1, s1 - s0, s2 - s1)


def per_call(samples: Sequence[Sample], calls: int, pick: Callable[[Sample], float]) -> Timing:
    """Median and best of the per-call figure, in µs."""
    return Timing.of([pick(s) / calls * US for s in samples])


def added(
    on: Sequence[Sample], off: Sequence[Sample], calls: int, pick: Callable[[Sample], float]
) -> Timing:
    """Median over rounds of (on − off) per call; best = best on − best off (µs)."""
    paired = [(pick(a) - pick(b)) / calls * US for a, b in zip(on, off, strict=True)]
    best = (min(pick(a) for a in on) - min(pick(b) for b in off)) / calls * US
    return Timing(statistics.median(paired), best)


def median_of(samples: Sequence[Sample], pick: Callable[[Sample], float]) -> float:
    return statistics.median(pick(s) for s in samples)


# --------------------------------------------------------------------------------------------
# Checks: an untimed turn per telemetry case proves it really emitted what it claims
# --------------------------------------------------------------------------------------------


def decode_bodies(bodies: Sequence[bytes]) -> list[dict[str, Any]]:
    """Every span of some `ExportTraceServiceRequest` bodies: its name and string-valued
    attributes (what the checks read)."""
    spans = []
    for body in bodies:
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes = {}
                    for pair in span.attributes:
                        kind = pair.value.WhichOneof("value")
                        attributes[pair.key] = getattr(pair.value, kind) if kind else None
                    spans.append({"name": span.name, "attributes": attributes})
    return spans


async def untimed(
    build: Builder, work: Workload, receiver: OtlpReceiver, read: Callable[[Prepared], T]
) -> T:
    """One untimed turn of `build` on a reset receiver: run, flush, `read` what it left (its
    files, the receiver's bodies), then close."""
    receiver.reset()
    prepared = build(work)
    try:
        await prepared.run()
        prepared.flush()
        return read(prepared)
    finally:
        prepared.close()


def exported(
    prepared: Prepared, export: Export, receiver: OtlpReceiver
) -> tuple[list[dict[str, Any]], str]:
    """The spans a flushed turn exported, and their raw text (to look for leaks in): its
    OTLP/JSON file, or the receiver's bodies."""
    if export is Export.JSON:
        path = prepared.artefacts["spans"]
        return read_otlp_json(path), path.read_text(encoding="utf-8")
    bodies = receiver.bodies()
    return decode_bodies(bodies), b"".join(bodies).decode("utf-8", "replace")


async def check_zeroclaw(
    build: Builder, work: Workload, export: Export, receiver: OtlpReceiver
) -> str:
    def read(prepared: Prepared) -> tuple[list[dict[str, Any]], str, str, str, str]:
        telemetry: Telemetry = prepared.artefacts["telemetry"]
        return (
            *exported(prepared, export, receiver),
            prepared.artefacts["logs"].read_text(encoding="utf-8"),
            telemetry.metrics_text().decode(),
            json.dumps(prepared.artefacts["replay"].state.messages),
        )

    spans, span_text, log_text, metrics, history = await untimed(build, work, receiver, read)
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


async def check_pydantic_ai(
    build: Builder, work: Workload, export: Export, receiver: OtlpReceiver
) -> str:
    spans, _ = await untimed(
        build, work, receiver, lambda prepared: exported(prepared, export, receiver)
    )
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


async def exported_bytes(build: Builder, work: Workload, receiver: OtlpReceiver) -> tuple[int, int]:
    """(requests, bytes) one untimed turn of `build` sent to the receiver's `/v1/traces`."""
    traces = await untimed(build, work, receiver, lambda _: receiver.stats()["/v1/traces"])
    return traces["requests"], traces["bytes"]
