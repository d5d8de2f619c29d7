"""Issue 17's target 1 in instructions: what telemetry adds per call, counted, not timed.

The µs figures of `telemetry.py` move by 20–40% from one hour to the next on a shared VM
(another tenant's load slows every instruction), so a change worth a few percent cannot be
seen in them. Instructions executed do not depend on the hour: each case's turn runs once
under valgrind's cachegrind (`--cache-sim=no`, the instruction count only), at two lengths,
and the difference between them, per call, is what a call costs with the process's start,
the imports and the turn's fixed cost left out; a run that only makes the workload's texts is
subtracted from each. "Added" is on − off.
With `PYTHONHASHSEED=0` a process's count repeats to ~0.01%, the added instructions a call to
~0.3%.

What they do not show: the cost of an instruction (cache misses, the GIL handed across CPUs,
a slower hour); valgrind runs one thread at a time. Use them to compare two trees or the two
sides; use `telemetry.py` for the µs targets.

    .venv/bin/python benchmarks/telemetry_icount.py [--before TREE] [--after .]
                                                    [--calls 100,600] [--jobs 2]

Needs valgrind (Debian package `valgrind`); ~4 minutes on 2 cores for one tree and the peer.
Two trees compare fairly only at paths of the same length (two `git worktree`s such as
`/tmp/wt_base` and `/tmp/wt_head`): the file names are part of what a process hashes and
copies, and trees at paths of different lengths count ~1% apart.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

WORK = "workload"
"""The case that only makes the workload's texts (and starts the receiver): subtracted from
every other, so 'off' and 'on' are the calls' own instructions."""
OURS = ("zc_off", "zc_on")
PEER = ("pai_off", "pai_on")
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


async def _child(case: str, calls: int) -> None:
    """One turn of `calls` calls for `case`, its flush and close: what is counted."""
    from telemetry_receiver import OtlpReceiver
    from telemetry_workload import (
        Export,
        Workspace,
        make_workload,
        pydantic_ai_off,
        pydantic_ai_on,
        zeroclaw_off,
        zeroclaw_on,
    )

    from zeroclaw_obs.config import RedactionSettings, build_redactor

    work = make_workload(calls, with_secret=False)
    redactor = build_redactor(RedactionSettings(), "benchmark")
    with OtlpReceiver() as receiver:
        space = Workspace(receiver.traces_endpoint)
        try:
            if case == WORK:
                return
            builders = {
                "zc_off": lambda: zeroclaw_off(redactor),
                "zc_on": lambda: zeroclaw_on(redactor, space, Export.PROTO),
                "pai_off": pydantic_ai_off,
                "pai_on": lambda: pydantic_ai_on(space, Export.PROTO),
            }
            prepared = builders[case]()(work)
            gc.disable()  # as `telemetry.py` times a turn
            await prepared.run()
            prepared.flush()
            prepared.close()
        finally:
            space.remove()


def count(tree: str, case: str, calls: int) -> int:
    """Instructions the process executed: one turn of `case` with `calls` calls."""
    env = {**os.environ, "PYTHONPATH": os.path.abspath(tree), "PYTHONHASHSEED": "0"}
    argv = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--branch-sim=no",
        "--cachegrind-out-file=/dev/null",
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        case,
        str(calls),
    ]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    found = _REFS.search(done.stderr)
    if done.returncode != 0 or found is None:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"{case} at {calls} calls failed: {tail[0]}")
    return int(found.group(1).replace(",", ""))


def per_call(
    counts: dict[tuple[str, str, int], int], tree: str, case: str, lengths: list[int]
) -> float:
    """Instructions per call: the slope between the two lengths."""
    short, long = lengths
    return (counts[tree, case, long] - counts[tree, case, short]) / (long - short)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="a tree to compare with (a git worktree)")
    parser.add_argument("--after", default=".", help="the tree measured (default: .)")
    parser.add_argument("--calls", default="100,600", help="the two turn lengths")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="valgrinds at once")
    parser.add_argument("--no-peer", action="store_true", help="leave pydantic-ai out")
    parser.add_argument("--child", nargs=2, metavar=("CASE", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(_child(args.child[0], int(args.child[1])))
        return 0
    lengths = sorted(int(n) for n in args.calls.split(","))
    if len(lengths) != 2 or lengths[0] == lengths[1] or lengths[0] < 1:
        parser.error("--calls: two different turn lengths, e.g. 100,600")
    if shutil.which("valgrind") is None:
        print("telemetry_icount: valgrind not found (Debian package valgrind)", file=sys.stderr)
        return 2
    trees = [("after", args.after)] + ([("before", args.before)] if args.before else [])
    for option, tree in trees:
        if not os.path.isfile(os.path.join(tree, "zeroclaw_obs", "__init__.py")):
            parser.error(f"--{option}: not a source tree (no zeroclaw_obs package in it)")
    from telemetry_workload import pydantic_ai_version

    version = None if args.no_peer else pydantic_ai_version()
    peer = version is not None
    runs = [(args.after, WORK, n) for n in lengths]
    runs += [(tree, case, n) for _, tree in trees for case in OURS for n in lengths]
    runs += [(args.after, case, n) for case in PEER for n in lengths] if peer else []
    try:
        with ThreadPoolExecutor(max(args.jobs, 1)) as pool:
            counted = list(pool.map(lambda run: count(*run), runs))
    except RuntimeError as error:
        print(f"telemetry_icount: {error}", file=sys.stderr)
        return 1
    counts = dict(zip(runs, counted, strict=True))
    print(f"Instructions per call (slope from {lengths[0]:,} to {lengths[1]:,} calls), thousands")
    print(f"{'':<24} {'off':>9} {'on':>9} {'added':>9}")
    added: dict[str, float] = {}
    whole: dict[str, float] = {}
    base = per_call(counts, args.after, WORK, lengths)
    for name, tree in trees:
        off, on = (per_call(counts, tree, case, lengths) - base for case in OURS)
        whole[name] = on
        added[name] = on - off
        label = f"zeroclaw-obs, {name}"
        print(f"{label:<24} {off / 1e3:9.1f} {on / 1e3:9.1f} {added[name] / 1e3:9.1f}")
    if peer:
        off, on = (per_call(counts, args.after, case, lengths) - base for case in PEER)
        label = f"pydantic-ai {version}"
        print(f"{label:<24} {off / 1e3:9.1f} {on / 1e3:9.1f} {(on - off) / 1e3:9.1f}")
        # Not the targets' ratios: those compare time, and an instruction of the peer's (which
        # allocates more and walks a growing history) takes longer on average than one of ours.
        print(
            f"zeroclaw-obs / pydantic-ai, instructions: added {added['after'] / (on - off):.3f}, "
            f"whole call {whole['after'] / on:.3f}"
        )
    if args.before:
        print(f"after / before, added: {added['after'] / added['before']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
