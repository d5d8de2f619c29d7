"""Where a case's CPU goes, on every thread: the turn's, the span builder's, the exporters',
the log writer's. `telemetry.py --profile` prints it (and does when a target is missed).

yappi (the `bench` extra) profiles every thread with a CPU clock; each thread is named as
`threading` names it, so `zeroclaw-traces-build` and `zeroclaw-traces-export` show apart from
`MainThread`. Without yappi, cProfile sees the main thread only, and the table says so.
Profilers inflate small calls: compare shares, not absolute microseconds.
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import io
import pstats
import threading
from collections import defaultdict
from typing import Any

from telemetry_timing import US
from telemetry_workload import Builder, Workload

_AREAS = (
    ("zeroclaw traces", "zeroclaw_obs/observability/traces"),
    ("zeroclaw metrics", "zeroclaw_obs/observability/metrics"),
    ("zeroclaw logs", "zeroclaw_obs/observability/logs"),
    ("zeroclaw observability (other)", "zeroclaw_obs/observability"),
    ("zeroclaw redaction", "zeroclaw_obs/redaction"),
    ("zeroclaw receipts", "zeroclaw_obs/receipts"),
    ("zeroclaw engine", "zeroclaw_obs"),
    ("pydantic-ai", "pydantic_ai"),
    ("opentelemetry exporter (encoders, http)", "opentelemetry/exporter"),
    ("opentelemetry sdk", "opentelemetry/sdk"),
    ("opentelemetry api", "opentelemetry"),
    ("protobuf", "google/protobuf"),
    ("requests / urllib3 / http.client / socket", ("requests", "urllib3", "http/client", "socket")),
    ("structlog", "structlog"),
    ("prometheus_client", "prometheus_client"),
    ("json", "/json/"),
    ("threading, queue", ("threading", "queue")),
    ("asyncio", "asyncio"),
)


def _area(module: str) -> str:
    for label, needles in _AREAS:
        if any(n in module for n in ((needles,) if isinstance(needles, str) else needles)):
            return label
    return "builtins and other"


def print_profile(title: str, build: Builder, work: Workload, top: int = 12) -> None:
    """Run one turn of `build` and its flush under the profiler; print CPU per thread, the
    time by area per thread, and each thread's top functions by own time."""
    try:
        import yappi
    except ImportError:
        _print_cprofile(title, build, work, top)
        return
    prepared_box: list[Any] = []
    yappi.clear_stats()
    yappi.set_clock_type("cpu")
    yappi.set_context_name_callback(lambda: threading.current_thread().name)
    gc.collect()
    gc.disable()
    yappi.start(builtins=True, profile_threads=True)
    try:
        prepared = build(work)
        prepared_box.append(prepared)
        asyncio.run(prepared.run())
        prepared.flush()
    finally:
        yappi.stop()
        gc.enable()
        for prepared in prepared_box:
            prepared.close()
    calls = work.calls
    threads = [t for t in yappi.get_thread_stats() if t.ttot > 0]
    total = sum(t.ttot for t in threads)
    print(f"\n--- {title}: yappi CPU profile of one turn + flush, {calls} calls ---")
    print(f"    all threads: {total / calls * US:.1f} µs/call under the profiler")
    for thread in sorted(threads, key=lambda t: -t.ttot):
        stats = yappi.get_func_stats(filter={"ctx_id": thread.id})
        areas: dict[str, float] = defaultdict(float)
        for entry in stats:
            areas[_area(entry.module)] += entry.tsub
        print(
            f"\n    thread {thread.name}: {thread.ttot / calls * US:.1f} µs/call "
            f"({thread.ttot / total:.0%}), {thread.sched_count} switches in"
        )
        for area, seconds in sorted(areas.items(), key=lambda kv: -kv[1]):
            if seconds / calls * US >= 0.5:
                print(f"      {area:<46} {seconds / calls * US:7.1f} µs/call")
        stats.sort("tsub")
        print(f"      {'top functions by own time':<46} {'µs/call':>7} {'calls':>8}")
        for entry in list(stats)[:top]:
            where = f"{entry.module.rsplit('/', 1)[-1]}:{entry.lineno}({entry.name})"
            print(f"      {where[-46:]:<46} {entry.tsub / calls * US:7.1f} {entry.ncall:8d}")
    yappi.clear_stats()


def _print_cprofile(title: str, build: Builder, work: Workload, top: int) -> None:
    prepared = build(work)
    profiler = cProfile.Profile()
    gc.disable()
    try:
        profiler.enable()
        asyncio.run(prepared.run())
        prepared.flush()
        profiler.disable()
    finally:
        gc.enable()
        prepared.close()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    print(f"\n--- {title}: cProfile, main thread only (pip install yappi for every thread) ---")
    print(out.getvalue().rstrip())
