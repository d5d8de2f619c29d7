"""`make bench`: the performance figures of DESIGN §6, each next to its target.

Figures are reported, not asserted: the script always exits 0. A figure that misses its
target is followed by a cProfile of the turn that produced it. Run with `--profile` to print
those profiles whatever the result, and `--quick` for fewer repeats.

    .venv/bin/python benchmarks/run.py [--quick] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import itertools
import os
import pstats
import sys
import time
import traceback
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (
    FastProvider,
    NoopTool,
    SleepTool,
    TurnShape,
    WideOutputTool,
    build_turn,
    median,
    run_turn,
    script,
    timed_turn,
)

from zeroclaw_obs.providers.base import ProviderRequest
from zeroclaw_obs.replay import Replay
from zeroclaw_obs.tools.base import Tool, ToolResult, tool

US = 1e6
MS = 1e3


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------


@dataclass
class Row:
    """One line of the table; `ok` is None for an informational figure (no target)."""

    section: str
    label: str
    value: str
    target: str = "—"
    ok: bool | None = None

    @property
    def result(self) -> str:
        if self.label.startswith("ERROR"):
            return "ERROR"
        if self.ok is None:
            return "info"
        return "PASS" if self.ok else "MISS"


@dataclass
class Report:
    """The table's rows, notes printed under it, and the profiles of missed figures."""

    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    profiles: list[tuple[str, Callable[[], None], int]] = field(default_factory=list)

    def add(
        self, row: Row, profile: tuple[str, tuple[Callable[[], None], int]] | None = None
    ) -> None:
        """Add a row; when it missed its target, queue a profile of the turn behind it."""
        self.rows.append(row)
        if profile is not None and row.ok is False:
            title, (run, calls) = profile
            self.profiles.append((title, run, calls))

    def table(self) -> str:
        headers = ("#", "Figure", "Measured", "Target", "Result")
        body = [(r.section, r.label, r.value, r.target, r.result) for r in self.rows]
        widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(headers)]

        def line(cells: tuple[str, ...]) -> str:
            return "  ".join(
                c.rjust(w) if i in (2, 3) else c.ljust(w)
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            ).rstrip()

        rule = "  ".join("-" * w for w in widths)
        out = [line(headers), rule]
        previous = None
        for cells in body:
            if previous is not None and cells[0] != previous:
                out.append(rule)
            previous = cells[0]
            out.append(line(cells))
        return "\n".join(out)


def verdict(value: float, limit: float) -> bool:
    return value <= limit


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """The median and the best of repeated measurements, in seconds (or any unit)."""

    median: float
    best: float

    @classmethod
    def of(cls, values: list[float]) -> Timing:
        return cls(median(values), min(values))

    def __sub__(self, other: Timing | float) -> Timing:
        o = other if isinstance(other, Timing) else Timing(other, other)
        return Timing(self.median - o.median, self.best - o.best)

    def __truediv__(self, n: float) -> Timing:
        return Timing(self.median / n, self.best / n)

    def __mul__(self, n: float) -> Timing:
        return Timing(self.median * n, self.best * n)

    def show(self, unit: str, digits: int = 1, *, best: bool = True) -> str:
        """`median unit (best b)`; `best=False` for figures fitted across cases."""
        text = f"{self.median:.{digits}f} {unit}"
        return f"{text} (best {self.best:.{digits}f})" if best else text


@dataclass(frozen=True)
class Case:
    """One kind of turn to time: how to build a fresh one, and whether gc stays off."""

    build: Callable[[], Replay]
    gc_off: bool = True


def case(
    shape: TurnShape, make_tool: Callable[[], Tool], *, gc_off: bool = True, **kw: Any
) -> Case:
    return Case(lambda: build_turn(shape, make_tool(), **kw), gc_off)


async def measure(cases: dict[str, Case], rounds: int) -> dict[str, Timing]:
    """Seconds per turn of each case, interleaved round by round.

    Each round runs every case once, so a burst of load from elsewhere on the machine lands
    on all cases alike instead of skewing one of them (their differences are what we report).
    One untimed warm-up turn per case comes first.
    """
    for item in cases.values():
        await run_turn(item.build())
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, item in cases.items():
            times[name].append(await timed_turn(item.build(), gc_off=item.gc_off))
    return {name: Timing.of(values) for name, values in times.items()}


async def provider_call_seconds(n: int = 20_000) -> float:
    """The benchmark provider's own `complete` cost (it must not be the bottleneck)."""
    responses = script(TurnShape(n, 1), "noop")
    provider = FastProvider(responses)
    request = ProviderRequest(messages=[], tools=[], iteration=1)
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(n):
            await provider.complete(request)
        return (time.perf_counter() - start) / n
    finally:
        gc.enable()


async def tool_call_seconds(item: Tool, n: int = 20_000) -> float:
    """The tool's own `execute` cost, awaited directly."""
    args = [{"i": k} for k in range(n)]
    gc.disable()
    try:
        start = time.perf_counter()
        for a in args:
            await item.execute(a)
        return (time.perf_counter() - start) / n
    finally:
        gc.enable()


def linear_fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope and intercept."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return slope, my - slope * mx


_FN_RESULTS = tuple(ToolResult.ok(f"ok {n}") for n in range(64))


def make_function_tool() -> Tool:
    """The same no-op as a `@tool` function (arguments validated by pydantic)."""

    @tool(name="noop")
    async def noop(i: int) -> ToolResult:
        """Does nothing, immediately."""
        return _FN_RESULTS[i & 63]

    return noop


def profile_turn(
    shape: TurnShape, make_tool: Callable[[], Tool], **kwargs: Any
) -> tuple[Callable[[], None], int]:
    """A runnable of one fresh turn of `shape` for cProfile, and its number of calls."""

    def run() -> None:
        replay = build_turn(shape, make_tool(), **kwargs)
        asyncio.run(run_turn(replay))

    return run, shape.total_calls


# --------------------------------------------------------------------------------------------
# 1. Engine overhead per tool call, sequential path, no-op tool
# --------------------------------------------------------------------------------------------


async def bench_overhead(report: Report, repeats: int) -> None:
    n = 1000
    iterations = 500
    ks = [1, 2, 4, 8]
    cases = {
        "empty": case(TurnShape(0, 0), NoopTool),
        "batch": case(TurnShape(1, n), NoopTool),
        "function": case(TurnShape(1, n), make_function_tool),
        **{f"k{k}": case(TurnShape(iterations, k), NoopTool) for k in ks},
    }
    timed = await measure(cases, repeats)
    tool_own = await tool_call_seconds(NoopTool())
    fn_own = await tool_call_seconds(make_function_tool())
    provider_own = await provider_call_seconds()
    empty, batch = timed["empty"], timed["batch"]

    per_call = ((batch - empty) / n - tool_own) * US
    row = Row(
        "1",
        f"µs/call: 1 response × {n:,} calls",
        per_call.show("µs"),
        "≤ 60 µs",
        verdict(per_call.median, 60),
    )
    report.add(row, ("1 response × 2000 no-op calls", profile_turn(TurnShape(1, 2000), NoopTool)))

    # Iterations of k calls each: time per iteration = bare iteration + k × per call.
    per_iteration = [(timed[f"k{k}"] - empty) / iterations - k * tool_own for k in ks]
    xs = [float(k) for k in ks]
    slope_m, intercept_m = linear_fit(xs, [t.median for t in per_iteration])
    slope_b, intercept_b = linear_fit(xs, [t.best for t in per_iteration])
    slope, intercept = Timing(slope_m, slope_b) * US, Timing(intercept_m, intercept_b) * US
    one_each = per_iteration[0] * US - intercept
    row = Row(
        "1",
        f"µs/call: {iterations} iterations × 1 call, bare iteration subtracted",
        one_each.show("µs", best=False),
        "≤ 60 µs",
        verdict(one_each.median, 60),
    )
    report.add(row, ("1000 iterations × 1 no-op call", profile_turn(TurnShape(1000, 1), NoopTool)))
    row = Row(
        "1",
        "µs/call: slope of iteration time vs calls/iteration (k = 1, 2, 4, 8)",
        slope.show("µs", best=False),
        "≤ 60 µs",
        verdict(slope.median, 60),
    )
    report.add(row, ("250 iterations × 8 no-op calls", profile_turn(TurnShape(250, 8), NoopTool)))
    report.add(
        Row(
            "1",
            "µs: bare loop iteration (fit intercept, incl. provider)",
            intercept.show("µs", best=False),
        )
    )
    report.add(
        Row(
            "1",
            "µs/call: 1 call per iteration, all-in (call + its own iteration)",
            (per_iteration[0] * US).show("µs"),
        )
    )

    per_call_fn = ((timed["function"] - empty) / n - fn_own) * US
    row = Row(
        "1",
        f"µs/call: 1 response × {n:,} calls, @tool function (pydantic args)",
        per_call_fn.show("µs"),
        "≤ 60 µs",
        verdict(per_call_fn.median, 60),
    )
    report.add(
        row, ("1 response × 2000 @tool calls", profile_turn(TurnShape(1, 2000), make_function_tool))
    )
    report.add(Row("1", "µs: empty turn (final text only)", (empty * US).show("µs")))
    report.add(
        Row(
            "1",
            "µs: benchmark provider complete() / no-op tool execute() own cost",
            f"{provider_own * US:.2f} / {tool_own * US:.2f} µs",
        )
    )


# --------------------------------------------------------------------------------------------
# 2. A parallel batch of 100 calls that each sleep 50 ms
# --------------------------------------------------------------------------------------------


async def bench_parallel(report: Report, repeats: int) -> None:
    shape = TurnShape(1, 100)

    def make() -> Tool:
        return SleepTool(0.050)

    wall = (await measure({"parallel": case(shape, make, parallel=True)}, repeats))["parallel"]
    wall = wall * MS
    report.add(
        Row(
            "2",
            "ms wall: parallel batch of 100 calls × asyncio.sleep(50 ms)",
            wall.show("ms"),
            "≤ 80 ms",
            verdict(wall.median, 80),
        ),
        ("parallel 100 × 50 ms", profile_turn(shape, make, parallel=True)),
    )
    report.add(
        Row("2", "ms: engine time above the 50 ms sleep, whole batch", (wall - 50).show("ms"))
    )


# --------------------------------------------------------------------------------------------
# 3. Per-call cost flat as the turn grows
# --------------------------------------------------------------------------------------------


def segments(stamps: list[float], calls_per_iteration: int, segment: int) -> tuple[float, float]:
    """Seconds per call over the first and over the last `segment` calls of one turn.

    The provider stamps `perf_counter` at each request, so each iteration's cost is the gap
    between two stamps. If anything on the per-call path walked the history, the late
    iterations would cost more than the early ones. The median gap of each stretch is used, so
    a burst of load from elsewhere on the machine does not count as growth.
    """
    span = segment // calls_per_iteration
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    return median(gaps[:span]) / calls_per_iteration, median(gaps[-span:]) / calls_per_iteration


async def bench_flat(report: Report, repeats: int) -> None:
    k = 4
    small, large = TurnShape(500 // k, k), TurnShape(10_000 // k, k)
    runs: list[list[float]] = []

    def stamped() -> Replay:
        stamps: list[float] = []
        runs.append(stamps)
        return build_turn(
            large, NoopTool(), on_request=lambda _: stamps.append(time.perf_counter())
        )

    timed = await measure(
        {
            "small": case(small, NoopTool),
            "large": Case(stamped),
            "small_gc": case(small, NoopTool, gc_off=False),
            "large_gc": case(large, NoopTool, gc_off=False),
        },
        max(3, repeats),
    )
    per_small = timed["small"] / small.total_calls * US
    per_large = timed["large"] / large.total_calls * US
    ratio = per_large.median / per_small.median
    best_ratio = per_large.best / per_small.best
    report.add(Row("3", f"µs/call: 500-call turn ({k} calls/iteration)", per_small.show("µs")))
    report.add(Row("3", f"µs/call: 10,000-call turn ({k} calls/iteration)", per_large.show("µs")))
    report.add(
        Row(
            "3",
            "ratio 10,000-call / 500-call per-call cost",
            f"{ratio:.2f}× (best {best_ratio:.2f}×)",
            "≤ 1.50×",
            verdict(ratio, 1.5),
        ),
        ("10,000-call turn", profile_turn(large, NoopTool)),
    )
    parts = [segments(stamps, k, 500) for stamps in runs[1:]]  # runs[0] is the warm-up
    first = median([f for f, _ in parts]) * US
    last = median([la for _, la in parts]) * US
    report.add(
        Row(
            "3",
            "µs/call inside the 10,000-call turn: calls 1–500 → 9,501–10,000 (median iteration)",
            f"{first:.1f} → {last:.1f} µs = {last / first:.2f}×",
            "≤ 1.50×",
            verdict(last / first, 1.5),
        )
    )
    g_small = timed["small_gc"] / small.total_calls * US
    g_large = timed["large_gc"] / large.total_calls * US
    report.add(
        Row(
            "3",
            "µs/call 500 → 10,000 calls with the garbage collector on (runtime cost)",
            f"{g_small.median:.1f} → {g_large.median:.1f} µs = "
            f"{g_large.median / g_small.median:.2f}×",
        )
    )


# --------------------------------------------------------------------------------------------
# 4. Memory across a 10,000-call turn with bounded results
# --------------------------------------------------------------------------------------------


def deep_size(root: Any) -> int:
    """Bytes of a JSON-like structure (dicts, lists, tuples, strings, numbers), shared once."""
    seen: set[int] = set()
    stack = [root]
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple):
            stack.extend(obj)
    return total


def short_path(filename: str) -> str:
    """`zeroclaw_obs/turn/x.py` inside the repo, `asyncio/x.py` for the standard library."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if filename.startswith(repo + os.sep):
        return os.path.relpath(filename, repo)
    return os.path.join(*filename.split(os.sep)[-2:])


@dataclass
class MemoryRun:
    calls: int
    first_half: float
    """Bytes of growth per 1,000 calls over calls 0 … n/2."""
    second_half: float
    """Bytes of growth per 1,000 calls over calls n/2 … n."""
    retained_per_call: float
    history_per_call: float
    final: int
    """Bytes traced when the turn ended (allocated since tracing started, turn set-up included)."""
    peak: int
    peak_over_final: int
    growth_sites: list[str]


async def memory_run(
    *,
    calls: int,
    per_iteration: int,
    output: int,
    cap: int,
    keep_events: bool,
    provider_yields: bool = False,
) -> MemoryRun:
    shape = TurnShape(calls // per_iteration, per_iteration)
    samples: dict[int, int] = {}

    def sample(request: ProviderRequest) -> None:
        done = (request.iteration - 1) * per_iteration
        samples[done] = tracemalloc.get_traced_memory()[0]

    gc.collect()
    tracemalloc.start(1)
    try:
        replay = build_turn(
            shape,
            WideOutputTool(output),
            max_tool_result_chars=cap,
            keep_events=keep_events,
            on_request=sample,
            provider_yields=provider_yields,
        )
        before = tracemalloc.take_snapshot()
        tracemalloc.reset_peak()
        gc.disable()
        try:
            await run_turn(replay)
        finally:
            gc.enable()
        final, peak = tracemalloc.get_traced_memory()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    half = calls // 2
    start, middle, end = samples[0], samples[half], samples[calls]
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
    diff = after.filter_traces(ignore).compare_to(before.filter_traces(ignore), "lineno")
    sites = []
    for stat in diff[:8]:
        if stat.size_diff <= 0:
            continue
        frame = stat.traceback[0]
        where = short_path(frame.filename)
        sites.append(
            f"{where}:{frame.lineno}  +{stat.size_diff / calls:,.0f} B/call "
            f"({stat.count_diff / calls:.1f} blocks/call)"
        )
    history = deep_size(replay.state.messages)
    return MemoryRun(
        calls=calls,
        first_half=(middle - start) / half * 1000,
        second_half=(end - middle) / (calls - half) * 1000,
        retained_per_call=(end - start) / calls,
        history_per_call=history / calls,
        final=final,
        peak=peak,
        peak_over_final=peak - final,
        growth_sites=sites,
    )


async def bench_memory(report: Report) -> None:
    calls, per_iteration, output, cap = 10_000, 10, 20_000, 2_000
    run = await memory_run(
        calls=calls, per_iteration=per_iteration, output=output, cap=cap, keep_events=False
    )
    kb = 1024
    report.add(
        Row(
            "4",
            "KB growth per 1,000 calls: first half → second half",
            f"{run.first_half / kb:,.0f} → {run.second_half / kb:,.0f} KB",
            "2nd ≤ 1.10 × 1st",
            verdict(run.second_half, 1.10 * run.first_half),
        )
    )
    # A bounded message is the cap plus a fixed envelope (ids, dicts, the truncation marker).
    bound = cap + 2 * kb
    report.add(
        Row(
            "4",
            f"B retained per call ({output // 1000} KB outputs, cap {cap:,} chars)",
            f"{run.retained_per_call:,.0f} B",
            f"≤ cap + 2 KB = {bound:,} B",
            verdict(run.retained_per_call, bound),
        )
    )
    report.add(
        Row(
            "4",
            "B per call held by the history list itself (deep size / calls)",
            f"{run.history_per_call:,.0f} B",
        )
    )
    report.add(
        Row(
            "4",
            "MB traced at the end / peak during the turn",
            f"{run.final / kb / kb:.1f} / {run.peak / kb / kb:.1f} MB",
        )
    )
    round_bytes = per_iteration * output
    report.add(
        Row(
            "4",
            f"KB peak above the end ≈ one round of raw outputs ({per_iteration} × 20 KB)",
            f"{run.peak_over_final / kb:,.0f} KB",
            f"≤ 1.5 × {round_bytes // 1000} KB",
            verdict(run.peak_over_final, 1.5 * round_bytes),
        )
    )
    small = await memory_run(
        calls=2_000, per_iteration=per_iteration, output=output, cap=cap // 2, keep_events=False
    )
    report.add(
        Row(
            "4",
            f"B retained per call with cap {cap // 2:,} (tracks the cap, not the output)",
            f"{small.retained_per_call:,.0f} B",
        )
    )
    events = await memory_run(
        calls=2_000, per_iteration=per_iteration, output=output, cap=cap, keep_events=True
    )
    report.add(
        Row(
            "4",
            "B retained per call if the in-memory TurnEventLog keeps every event",
            f"{events.retained_per_call:,.0f} B",
        )
    )
    yielding = await memory_run(
        calls=calls,
        per_iteration=per_iteration,
        output=output,
        cap=cap,
        keep_events=False,
        provider_yields=True,
    )
    report.add(
        Row(
            "4",
            "B retained per call if the provider yields to the loop (timers purged)",
            f"{yielding.retained_per_call:,.0f} B",
        )
    )
    report.notes.append(
        "Memory (4): what grows over the 10,000-call turn, by allocation site (tracemalloc, "
        "events streamed to a sink that keeps nothing). results.py is the truncated result "
        "text and history.py the messages that hold it; the asyncio lines are the cancelled "
        "per-call `asyncio.timeout` timers, which stay in the loop's heap only while the turn "
        "never yields to the event loop (see the provider-yields row):\n    "
        + "\n    ".join(run.growth_sites)
    )


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


# (label, files, functions) of the engine steps the per-call path goes through; `|` separates
# alternatives (cProfile names files by their base name).
STEPS = (
    ("provider request + retries + LlmRequest/LlmResponse", "provider_call.py", "request_model"),
    ("parse", "parse.py", "parse_response"),
    ("prepare: resolve, validate, gate, dedup key", "prep.py", "prepare_calls"),
    ("dispatch, per call (all of the below)", "dispatch.py", "_run"),
    ("  open: card, ToolCallStart, args redact+JSON", "results.py", "open"),
    ("  asyncio.timeout enter + exit", "timeouts.py", "__aenter__|__aexit__"),
    ("  the tool's own execute()", "harness.py|base.py", "execute"),
    ("  loop detection: key + record", "dispatch.py", "_detect_loop"),
    ("  close: truncate, redact, tool_result, ToolCall", "results.py", "close"),
    ("history append", "history.py", "append_round"),
)


def print_profile(title: str, run: Callable[[], Any], calls: int, top: int = 20) -> None:
    """cProfile `run`: the top functions by own time, then the time of each engine step."""
    profiler = cProfile.Profile()
    gc.disable()
    try:
        profiler.enable()
        run()
        profiler.disable()
    finally:
        gc.enable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    print(f"\n--- cProfile: {title} (top {top} by own time) ---")
    lines = out.getvalue().splitlines()
    start = next((i for i, s in enumerate(lines) if "ncalls" in s), 0)
    print("\n".join(lines[start:]).rstrip())
    total = stats.total_tt  # type: ignore[attr-defined]
    table: dict[tuple[str, int, str], tuple] = stats.stats  # type: ignore[attr-defined]
    print(
        f"\n    {'engine step (cumulative time under cProfile)':<50} {'µs/call':>7}  share of turn"
    )
    for label, filenames, functions in STEPS:
        files, wanted = filenames.split("|"), functions.split("|")
        cumulative = sum(
            entry[3] for (f, _, fn), entry in table.items() if f in files and fn in wanted
        )
        print(f"    {label:<50} {cumulative / calls * US:7.1f}  {cumulative / total:6.1%}")


async def collect(repeats: int) -> Report:
    """Run every benchmark; one that crashes becomes an ERROR row and the others still run."""
    report = Report()
    sections = (
        ("1", lambda: bench_overhead(report, repeats)),
        ("2", lambda: bench_parallel(report, repeats)),
        ("3", lambda: bench_flat(report, repeats)),
        ("4", lambda: bench_memory(report)),
    )
    for section, bench in sections:
        try:
            await bench()
        except Exception as exc:
            traceback.print_exc()
            report.rows.append(Row(section, f"ERROR: {type(exc).__name__}: {exc}"[:90], "—"))
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--profile", action="store_true", help="profile every figure's turn")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    began = time.perf_counter()
    print(
        f"zeroclaw-obs benchmarks — Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"telemetry off (NoopObserver), median of {repeats} runs, gc off while timing"
    )
    report = asyncio.run(collect(repeats))
    print()
    print(report.table())
    for note in report.notes:
        print()
        print(note)
    profiles = report.profiles
    if args.profile:
        profiles = [
            ("1 response × 2000 no-op calls", *profile_turn(TurnShape(1, 2000), NoopTool)),
            ("1000 iterations × 1 no-op call", *profile_turn(TurnShape(1000, 1), NoopTool)),
            (
                "1 response × 2000 @tool calls",
                *profile_turn(TurnShape(1, 2000), make_function_tool),
            ),
        ]
    for title, run, calls in profiles:
        print_profile(title, run, calls)
    missed = sum(1 for r in report.rows if r.ok is False)
    passed = sum(1 for r in report.rows if r.ok)
    print(
        f"\n{passed} PASS, {missed} MISS ({time.perf_counter() - began:.1f} s). "
        "Figures are reported, not asserted: exit status is 0."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
