"""CPU µs of redacting one tool call's ~1 KB arguments and result, content never seen before.

The telemetry bench's tool call (`benchmarks/telemetry_workload.py`: `make_workload`) hands
the redactor a ~1 KB argument dict (`redact_value`) and a ~1 KB result (`redact_text`) of
clean code-like text, distinct every call. This measures exactly that: a fresh `Redactor`
warmed on other content (the gate's automata built for this kind of text), then `--calls`
new argument dicts and results, each redacted once; CPU time (`time.process_time`) per call,
min over `--rounds`.

    .venv/bin/python benchmarks/redaction_call.py                      # this tree
    .venv/bin/python benchmarks/redaction_call.py --compare /tmp/head  # alternated with a
                                                                       # worktree of HEAD

`--compare DIR` runs this script alternately on DIR's package and this tree's, and prints
both, so the two are measured in the same machine state.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _measure(calls: int, rounds: int, tree: str) -> dict[str, float]:
    sys.path.insert(0, tree)
    from benchmarks.telemetry_workload import make_workload
    from zeroclaw_obs.redaction import Redactor

    work = make_workload(calls * (2 * rounds + 1), with_secret=False)
    args, results = work.arguments, work.results
    best = {"redact_value": float("inf"), "redact_text": float("inf")}
    for r in range(rounds):
        redactor = Redactor()
        warm = (2 * r + 1) * calls  # warm on other content, then time content never seen
        for a, t in zip(args[warm : warm + calls], results[warm : warm + calls], strict=True):
            redactor.redact_value(a)
            redactor.redact_text(t)
        timed = warm + calls
        batch = args[timed : timed + calls]
        start = time.process_time()
        for a in batch:
            redactor.redact_value(a)
        best["redact_value"] = min(best["redact_value"], (time.process_time() - start) / calls)
        batch_t = results[timed : timed + calls]
        start = time.process_time()
        for t in batch_t:
            redactor.redact_text(t)
        best["redact_text"] = min(best["redact_text"], (time.process_time() - start) / calls)
    return {k: v * 1e6 for k, v in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare", metavar="DIR", help="a tree to alternate with this one")
    parser.add_argument("--pairs", type=int, default=4, help="alternations with --compare")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tree", default=_HERE, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if not opts.compare:
        result = _measure(opts.calls, opts.rounds, opts.tree)
        if opts.json:
            print(json.dumps(result))
        else:
            for name, us in result.items():
                print(f"{name:13s} {us:7.2f} µs a call")
        return
    trees = {"base": os.path.abspath(opts.compare), "this": _HERE}
    best: dict[str, dict[str, float]] = {}
    for _ in range(opts.pairs):
        for label, tree in trees.items():
            cmd = [sys.executable, os.path.abspath(__file__), "--json", "--tree", tree]
            cmd += ["--calls", str(opts.calls), "--rounds", str(opts.rounds)]
            out = json.loads(subprocess.run(cmd, check=True, capture_output=True).stdout)
            for name, us in out.items():
                mins = best.setdefault(label, {})
                mins[name] = min(mins.get(name, us), us)
    for name in best["base"]:
        base, this = best["base"][name], best["this"][name]
        print(f"{name:13s} base {base:7.2f}  this {this:7.2f} µs a call ({this / base - 1:+.0%})")


if __name__ == "__main__":
    main()
