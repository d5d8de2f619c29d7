"""Issue 17's targets 1 and 4, before and after a change: two source trees, paired runs.

On a shared machine the same tree measures 20–40 µs a call apart from one run to the next,
so a change is compared in pairs: one process per tree, alternated, each running the bench
turn (`telemetry_workload.py`, spans over OTLP/HTTP protobuf to a loopback receiver) with
telemetry off and everything on, round by round. Per call, each process reports:

- **on the turn** (target 4): the turn thread's CPU (`time.thread_time`), on − off;
- **in all** (target 1): the process's CPU (`time.process_time`) of the turn and its flush
  (every worker, the export included), on − off;

as the median of the rounds' differences and as best on − best off. The trees are given as
directories put first on `PYTHONPATH` (a `git worktree` of the commit before, and `.`); this
directory's workload and receiver serve both.

    .venv/bin/python benchmarks/telemetry_ab.py --before /tmp/wt [--after .] [--pairs 3]
                                                [--rounds 7] [--calls 500]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


async def _sample(build: Any, work: Any) -> tuple[float, float]:
    """(turn thread CPU, process CPU of the turn and its flush) of one turn, in seconds."""
    from telemetry_timing import warmed  # in the child, on the tree's PYTHONPATH

    prepared = await warmed(build, work)
    gc.disable()
    try:
        t0, c0 = time.thread_time(), time.process_time()
        await prepared.run()
        t1 = time.thread_time()
        prepared.flush()
        c2 = time.process_time()
    finally:
        gc.enable()
        prepared.close()
    return t1 - t0, c2 - c0


async def _child(calls: int, rounds: int) -> dict[str, Any]:
    """One process's figures, µs a call: off and on alternated round by round."""
    from telemetry_receiver import OtlpReceiver
    from telemetry_workload import Export, Workspace, make_workload, zeroclaw_off, zeroclaw_on

    import zeroclaw_obs
    from zeroclaw_obs.redaction import Redactor

    work = make_workload(calls, with_secret=False)
    redactor = Redactor()
    with OtlpReceiver() as receiver:
        space = Workspace(receiver.traces_endpoint)
        try:
            off, on = zeroclaw_off(redactor), zeroclaw_on(redactor, space, Export.PROTO)
            offs, ons = [], []
            for _ in range(rounds):
                offs.append(await _sample(off, work))
                ons.append(await _sample(on, work))
        finally:
            space.remove()
    us = 1e6 / calls

    def added(k: int) -> tuple[float, float]:
        median = statistics.median((a[k] - b[k]) * us for a, b in zip(ons, offs, strict=True))
        best = (min(a[k] for a in ons) - min(b[k] for b in offs)) * us
        return round(median, 1), round(best, 1)

    return {
        "tree": os.path.dirname(os.path.dirname(os.path.abspath(zeroclaw_obs.__file__))),
        "turn": added(0),
        "all": added(1),
        "off_turn": round(min(b[0] for b in offs) * us, 1),
    }


def _run(tree: str, calls: int, rounds: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(tree)}
    argv = [sys.executable, __file__, "--child", f"--calls={calls}", f"--rounds={rounds}"]
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="the tree before (a git worktree)")
    parser.add_argument("--after", default=".", help="the tree after (default: .)")
    parser.add_argument("--pairs", type=int, default=3, help="processes per tree, alternated")
    parser.add_argument("--rounds", type=int, default=7, help="off/on rounds per process")
    parser.add_argument("--calls", type=int, default=500, help="tool calls per turn")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(_child(args.calls, args.rounds))))
        return
    if not args.before:
        parser.error("--before is required")
    print(
        f"µs a call added, median of {args.rounds} rounds (best on − best off); {args.calls} calls"
    )
    print(
        f"{'pair':<5} {'tree':<8} {'on the turn (≤ 50)':>20} {'in all (≤ 100)':>18} {'off turn':>9}"
    )
    for pair in range(1, args.pairs + 1):
        for name, tree in (("before", args.before), ("after", args.after)):
            r = _run(tree, args.calls, args.rounds)
            turn = f"{r['turn'][0]} ({r['turn'][1]})"
            every = f"{r['all'][0]} ({r['all'][1]})"
            print(f"{pair:<5} {name:<8} {turn:>20} {every:>18} {r['off_turn']:>9}", flush=True)


if __name__ == "__main__":
    main()
