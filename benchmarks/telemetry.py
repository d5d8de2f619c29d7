"""`make bench`, part 3: what everything-on telemetry costs per tool call, next to a peer's.

Side by side, in one run, interleaved round by round, on the same scripted turn (one model
response of N sequential calls, ~1 KB of distinct arguments and results per call; the turn and
its cases are in `telemetry_workload.py`): zeroclaw-obs off and with everything on (spans,
metrics, logs, redaction, receipts), pydantic-ai off and with its instrumentation on. Spans
go over OTLP/HTTP protobuf to a receiver on loopback in another process
(`telemetry_receiver.py`, so its CPU is not ours), or to an OTLP/JSON file (kept for
comparison). Each turn is timed by wall clock and by process CPU over every thread, then its
flush and shutdown apart (`telemetry_timing.py`). Each figure below is one function.

Targets (issue 17): with everything on over OTLP/HTTP protobuf, ≤ 100 µs of process CPU added
per call, export included, and ≤ 1/2 of what pydantic-ai's instrumentation adds on the same
exporter; a whole call ≤ 1/4 of pydantic-ai's; the same added CPU per call at 500, 3,000 and
10,000 calls (≤ 1.2×, pydantic-ai measured beside at each length, with the voluntary context
switches of each turn); ≤ 50 µs added on the turn's own path. Figures are reported, not
asserted: the script exits 0.

    .venv/bin/python benchmarks/telemetry.py [--quick] [--calls 500] [--scale 3000,10000]
                                              [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from report import Report, Row, verdict
from telemetry_profile import print_profile
from telemetry_receiver import OtlpReceiver
from telemetry_timing import (
    MS,
    Sample,
    Timing,
    added,
    check_pydantic_ai,
    check_zeroclaw,
    cpu,
    cpu_all,
    exported_bytes,
    median_of,
    per_call,
    timed,
    wall,
)
from telemetry_workload import (
    Builder,
    Export,
    Workload,
    Workspace,
    make_workload,
    pydantic_ai_off,
    pydantic_ai_on,
    pydantic_ai_version,
    zeroclaw_off,
    zeroclaw_on,
)

from zeroclaw_obs.config import RedactionSettings, build_redactor

ADDED_CPU_US = 100.0
PEER_SHARE = 0.5
WHOLE_SHARE = 0.25
FLAT_RATIO = 1.2
ON_TURN_US = 50.0


_SCALE_CASES = ("zc_off", "zc_on", "pai_off", "pai_on")
"""The cases measured again at the longer turn lengths (`--scale`)."""


@dataclass
class Measured:
    """The samples of every case, by name, and what the run knows about itself."""

    calls: int
    samples: dict[str, list[Sample]] = field(default_factory=dict)
    scale: dict[int, dict[str, list[Sample]]] = field(default_factory=dict)
    """Samples per turn length, by case: `zc_off`, `zc_on` (OTLP/HTTP protobuf) and, when
    installed, `pai_off`, `pai_on` (the same exporter)."""
    fixed: dict[str, list[Sample]] = field(default_factory=dict)
    """Samples of a 1-call turn, by case (the cases of `scale`): the cost a turn pays
    whatever its length (first use of each cache, the exporter's connection, shutdown)."""
    pai_version: str | None = None
    bytes: dict[str, tuple[int, int]] = field(default_factory=dict)

    def has(self, *names: str) -> bool:
        return all(name in self.samples for name in names)

    def added(self, on: str, off: str, pick: Callable[[Sample], float]) -> Timing:
        return added(self.samples[on], self.samples[off], self.calls, pick)


async def interleaved(
    cases: dict[str, tuple[Builder, Workload]], rounds: int
) -> dict[str, list[Sample]]:
    """One untimed turn per case, then `rounds` rounds of one timed turn per case."""
    for build, work in cases.values():
        warm = build(work)
        await warm.run()
        warm.flush()
        warm.close()
    samples: dict[str, list[Sample]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (build, work) in cases.items():
            samples[name].append(await timed(build, work))
    return samples


async def collect(
    args: argparse.Namespace, report: Report, space: Workspace, receiver: OtlpReceiver
) -> Measured:
    """Check each case once, then measure every case interleaved, then the longer turns."""
    redactor = build_redactor(RedactionSettings(), "benchmark")
    calls = args.calls
    clean = make_workload(calls, with_secret=False)
    secret = make_workload(calls, with_secret=True)
    proto, json_ = Export.PROTO, Export.JSON
    cases: dict[str, tuple[Builder, Workload]] = {
        "zc_off": (zeroclaw_off(redactor), clean),
        "zc_on": (zeroclaw_on(redactor, space, proto), clean),
        "zc_on_json": (zeroclaw_on(redactor, space, json_), clean),
        "zc_on_sdk": (zeroclaw_on(redactor, space, proto, sdk_path=True), clean),
        "zc_off_secret": (zeroclaw_off(redactor), secret),
        "zc_on_secret": (zeroclaw_on(redactor, space, proto), secret),
        "zc_receipts": (zeroclaw_off(redactor, receipts=True), clean),
        "zc_on_nologs": (zeroclaw_on(redactor, space, proto, logs_on=False), clean),
    }
    measured = Measured(calls, pai_version=pydantic_ai_version())
    if measured.pai_version is not None:
        cases["pai_off"] = (pydantic_ai_off(), clean)
        cases["pai_on"] = (pydantic_ai_on(space, proto), clean)
        cases["pai_on_json"] = (pydantic_ai_on(space, json_), clean)
    leftover = clean.results + tuple(a["content"] for a in clean.arguments)
    flagged = sum(1 for text in leftover if redactor.redact_text(text) != text)
    arg_bytes, result_bytes = clean.mean_sizes()
    report.notes.append(
        f"Workload: 1 model response × {calls} sequential calls, then a final answer; "
        f"arguments {arg_bytes:,.0f} B (compact JSON), results {result_bytes:,.0f} B, distinct "
        f"per call; {flagged} of the clean texts trip the redactor (should be 0). Secret "
        f"variant: one AWS access key id per result ({secret.mean_sizes()[1]:,.0f} B)."
    )
    checks = [
        (f"zeroclaw-obs on, {proto}", check_zeroclaw(cases["zc_on"][0], clean, proto, receiver)),
        (
            f"zeroclaw-obs on, {json_}",
            check_zeroclaw(cases["zc_on_json"][0], clean, json_, receiver),
        ),
        (
            "zeroclaw-obs on, secrets",
            check_zeroclaw(cases["zc_on_secret"][0], secret, proto, receiver),
        ),
    ]
    if measured.pai_version is not None:
        checks.append(
            (
                f"pydantic-ai on, {proto}",
                check_pydantic_ai(cases["pai_on"][0], clean, proto, receiver),
            )
        )
    lines = [f"{name}: {await check}" for name, check in checks]
    report.notes.append("Checks (one untimed turn per case):\n    " + "\n    ".join(lines))
    for name in ("zc_on", "pai_on"):
        if name in cases:
            measured.bytes[name] = await exported_bytes(*cases[name], receiver)

    measured.samples = await interleaved(cases, args.rounds)
    one = clean.head(1)
    fixed = {name: (cases[name][0], one) for name in _SCALE_CASES if name in cases}
    measured.fixed = await interleaved(fixed, args.rounds)
    for length in args.scale:
        work = make_workload(length, with_secret=False)
        longer = {name: (cases[name][0], work) for name in _SCALE_CASES if name in cases}
        measured.scale[length] = await interleaved(longer, args.scale_rounds)
    return measured


# --------------------------------------------------------------------------------------------
# The figures, one function each
# --------------------------------------------------------------------------------------------


def figure_added_cpu(report: Report, m: Measured) -> None:
    """Process CPU added per call by telemetry, turn + flush (export included), on OTLP/HTTP
    protobuf: ours against the target and against pydantic-ai's on the same exporter."""
    ours = m.added("zc_on", "zc_off", cpu_all)
    report.add(
        Row(
            "1",
            f"µs/call ADDED, process CPU incl. export ({Export.PROTO}): zeroclaw-obs",
            ours.show(),
            f"≤ {ADDED_CPU_US:.0f} µs",
            verdict(ours.median, ADDED_CPU_US),
        )
    )
    report.add(
        Row(
            "1",
            "  of which during the turn (all threads)",
            m.added("zc_on", "zc_off", cpu).show(),
        )
    )
    before = m.added("zc_on_sdk", "zc_off", cpu_all)
    report.add(
        Row("1", "  same, spans built and encoded by the SDK (before issue 17)", before.show())
    )
    if not m.has("pai_on", "pai_off"):
        report.add(Row("1", "pydantic-ai not installed (pip install pydantic-ai-slim)", "—"))
        return
    theirs = m.added("pai_on", "pai_off", cpu_all)
    report.add(Row("1", f"  pydantic-ai {m.pai_version}, same exporter", theirs.show()))
    report.add(Row("1", "  of which during the turn", m.added("pai_on", "pai_off", cpu).show()))
    share = ours.median / theirs.median if theirs.median > 0 else float("inf")
    report.add(
        Row(
            "1",
            "  zeroclaw-obs / pydantic-ai, added CPU",
            f"{share:.2f}",
            f"≤ {PEER_SHARE:.2f}",
            verdict(share, PEER_SHARE),
        )
    )


def figure_fixed_cost(report: Report, m: Measured) -> None:
    """How much of target 1's figure the turn pays whatever its length: a 1-call turn's added
    CPU (turn + flush + shutdown), spread over the N calls, and what is left per call. A
    process that runs many turns on one telemetry (`serve`) pays most of it once."""
    sides = [("zeroclaw-obs", "zc_on", "zc_off"), ("pydantic-ai", "pai_on", "pai_off")]
    for who, on, off in sides:
        if not m.has(on, off) or on not in m.fixed:
            continue
        turn = added(m.fixed[on], m.fixed[off], 1, cpu_all).median  # µs a turn
        spread = turn / m.calls
        rest = m.added(on, off, cpu_all).median - spread
        report.add(
            Row(
                "1",
                f"  {who}: fixed cost a turn (1-call turn, added) ÷ {m.calls:,}; the rest a call",
                f"{spread:.1f} µs ({turn * 1e-3:.1f} ms a turn); {rest:.1f} µs",
            )
        )


def figure_whole_cost(report: Report, m: Measured) -> None:
    """A whole tool call with telemetry on, all the process's CPU: ours against pydantic-ai's."""
    ours = per_call(m.samples["zc_on"], m.calls, cpu_all)
    report.add(Row("2", f"µs/call, whole process CPU, everything on ({Export.PROTO})", ours.show()))
    if not m.has("pai_on"):
        return
    theirs = per_call(m.samples["pai_on"], m.calls, cpu_all)
    report.add(Row("2", "  pydantic-ai, instrumentation on, same exporter", theirs.show()))
    share = ours.median / theirs.median
    report.add(
        Row(
            "2",
            "  zeroclaw-obs / pydantic-ai, whole call",
            f"{share:.2f}",
            f"≤ {WHOLE_SHARE:.2f}",
            verdict(share, WHOLE_SHARE),
        )
    )


def figure_turn_length(report: Report, m: Measured) -> None:
    """Added CPU per call as the turn grows, beside pydantic-ai's, and the GIL hand-offs
    (voluntary context switches during the turn, and during the flush after it)."""
    lengths = {m.calls: m.samples, **m.scale}
    figures = {}
    for length, samples in sorted(lengths.items()):
        off, on = samples["zc_off"], samples["zc_on"]
        stat = added(on, off, length, cpu_all)
        figures[length] = stat.median
        switches = median_of(on, lambda s: s.switches) - median_of(off, lambda s: s.switches)
        flush = median_of(on, lambda s: s.flush_switches)
        report.add(
            Row(
                "3",
                f"µs/call ADDED, process CPU incl. export, {length:,} calls; switches turn/flush",
                f"{stat.median:.1f} µs; {switches:+.0f} / {flush:.0f}",
            )
        )
        if "pai_on" in samples and "pai_off" in samples:
            theirs = added(samples["pai_on"], samples["pai_off"], length, cpu_all).median
            whole = per_call(samples["pai_on"], length, cpu_all).median
            ours_whole = per_call(on, length, cpu_all).median
            report.add(
                Row(
                    "3",
                    f"  pydantic-ai, {length:,} calls: added / whole µs/call; ours ÷ theirs",
                    f"{theirs:.1f} / {whole:.1f}; {stat.median / theirs:.2f} / "
                    f"{ours_whole / whole:.2f}",
                )
            )
    if len(figures) > 1:
        first, last = min(figures), max(figures)
        ratio = figures[last] / figures[first]
        report.add(
            Row(
                "3",
                f"  {last:,} calls / {first:,} calls, added CPU per call",
                f"{ratio:.2f}×",
                f"≤ {FLAT_RATIO:.1f}×",
                verdict(ratio, FLAT_RATIO),
            )
        )


def figure_on_turn(report: Report, m: Measured) -> None:
    """What a call waits for: the turn's wall time, on − off."""
    off = per_call(m.samples["zc_off"], m.calls, wall)
    report.add(Row("4", "µs/call, telemetry off, turn wall", off.show()))
    report.add(
        Row(
            "4",
            "µs/call, everything on, turn wall",
            per_call(m.samples["zc_on"], m.calls, wall).show(),
        )
    )
    ours = m.added("zc_on", "zc_off", wall)
    report.add(
        Row(
            "4",
            "µs/call ADDED on the turn's path (turn wall, on − off)",
            ours.show(),
            f"≤ {ON_TURN_US:.0f} µs",
            verdict(ours.median, ON_TURN_US),
        )
    )
    if m.has("pai_on", "pai_off"):
        pai_off = per_call(m.samples["pai_off"], m.calls, wall)
        report.add(Row("4", "  pydantic-ai: µs/call, instrumentation off", pai_off.show()))
        theirs = m.added("pai_on", "pai_off", wall)
        report.add(Row("4", "  pydantic-ai: µs/call added on the turn's path", theirs.show()))


def figure_secrets(report: Report, m: Measured) -> None:
    """The same with one AWS key in every result (redaction on the turn and in the guard)."""
    report.add(
        Row(
            "5",
            "1 AWS key per result: µs/call ADDED, process CPU incl. export",
            m.added("zc_on_secret", "zc_off_secret", cpu_all).show(),
        )
    )
    report.add(Row("5", "  turn wall added", m.added("zc_on_secret", "zc_off_secret", wall).show()))


def figure_otlp_json(report: Report, m: Measured) -> None:
    """The OTLP/JSON file rows, kept for comparison with earlier runs."""
    report.add(
        Row(
            "6",
            f"{Export.JSON}: µs/call ADDED, process CPU incl. export",
            m.added("zc_on_json", "zc_off", cpu_all).show(),
        )
    )
    if m.has("pai_on_json"):
        report.add(
            Row(
                "6",
                "  pydantic-ai, same exporter",
                m.added("pai_on_json", "pai_off", cpu_all).show(),
            )
        )


def figure_ablation(report: Report, m: Measured) -> None:
    """What each part adds (OTLP/HTTP protobuf): receipts, spans and metrics, log lines."""
    s = m.samples
    for label, on_case, off_case in (
        ("receipts alone (NoopObserver + receipts)", "zc_receipts", "zc_off"),
        ("spans + metrics + trace tree (no logs), over receipts", "zc_on_nologs", "zc_receipts"),
        ("structlog lines (everything on − on without logs)", "zc_on", "zc_on_nologs"),
    ):
        w = added(s[on_case], s[off_case], m.calls, wall).median
        c = added(s[on_case], s[off_case], m.calls, cpu_all).median
        report.add(
            Row("7", f"µs/call added by {label}: wall / CPU incl. flush", f"{w:.1f} / {c:.1f} µs")
        )
    for name, who in (("zc_on", "zeroclaw-obs"), ("pai_on", "pydantic-ai")):
        if name in m.bytes:
            requests, size = m.bytes[name]
            report.add(
                Row(
                    "7",
                    f"{who}: bytes exported per call (requests per turn)",
                    f"{size / m.calls:,.0f} B ({requests})",
                )
            )
    flush = median_of(m.samples["zc_on"], lambda x: x.flush_cpu) * MS
    report.add(
        Row("7", "ms of CPU in flush + shutdown after the turn (zeroclaw-obs)", f"{flush:.1f} ms")
    )


FIGURES = (
    figure_added_cpu,
    figure_fixed_cost,
    figure_whole_cost,
    figure_turn_length,
    figure_on_turn,
    figure_secrets,
    figure_otlp_json,
    figure_ablation,
)

FAIRNESS = """\
What each side does when on (same turn, same payloads, same exporter):
    zeroclaw-obs: invoke_agent + chat + one execute_tool span per call with redacted arguments
      and result, receipt, outcome; Prometheus counters/histograms with trace exemplars; one
      structlog JSON line per lifecycle fact (tool_call_start/result, …) to a file; HMAC receipt
      per call; the export guard re-scans every span string on the export thread.
    pydantic-ai: its own spans (agent run, model requests, one per tool call) with arguments,
      results and messages as attributes; token metrics to an SDK MeterProvider; no logs, no
      redaction, no receipts. Stock BatchSpanProcessor and the SDK's OTLPSpanExporter. Tools run
      one at a time (parallel_execution_mode('sequential')), all N calls from one response.
Per-call figures are the whole turn / N (the turn's fixed cost and its 2 model calls included);
'added' is the median over rounds of (on − off), best is best-on − best-off. Process CPU is
`time.process_time` (every thread of this process; the receiver runs in another)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 7")
    parser.add_argument("--calls", type=int, default=500, help="tool calls per turn")
    parser.add_argument(
        "--scale", default="3000,10000", help="longer turns to compare (comma list; '' for none)"
    )
    parser.add_argument("--profile", action="store_true", help="profile whatever the result")
    args = parser.parse_args()
    args.rounds = 3 if args.quick else 7
    args.scale_rounds = 1 if args.quick else 3
    args.scale = [int(n) for n in args.scale.split(",") if n.strip()]
    began = time.perf_counter()
    print(
        f"zeroclaw-obs telemetry cost — Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"{args.calls} calls per turn (median of {args.rounds} interleaved rounds), "
        f"{', '.join(f'{n:,}' for n in args.scale) or 'no'} calls ({args.scale_rounds} rounds), "
        "gc off while timing"
    )
    report = Report()
    with OtlpReceiver() as receiver:
        space = Workspace(receiver.traces_endpoint)
        try:
            measured = asyncio.run(collect(args, report, space, receiver))
            for figure in FIGURES:
                figure(report, measured)
        except Exception as exc:
            traceback.print_exc()
            report.rows.append(Row("!", f"ERROR: {type(exc).__name__}: {exc}"[:90], "—"))
        print()
        print(report.table())
        for note in report.notes:
            print(f"\n{note}")
        print(f"\n{FAIRNESS}")
        missed = any(r.ok is False for r in report.rows)
        try:
            if missed or args.profile:
                redactor = build_redactor(RedactionSettings(), "benchmark")
                work = make_workload(args.calls, with_secret=False)
                build = zeroclaw_on(redactor, space, Export.PROTO)
                print_profile(f"zeroclaw-obs, everything on, {Export.PROTO}", build, work)
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
