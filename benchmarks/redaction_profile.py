"""Where a secret-dense record spends its time in `Redactor.redact_text` (issue 15, item 3).

Run: `.venv/bin/python benchmarks/redaction_profile.py [--size-mb 2] [--cprofile]`.
Prints MB/s of the dense and clean mixes (on records the redactor has not seen, and on
records seen before: see `benchmarks/redaction.py`), then per-stage times on the dense mix,
by a redactor warmed on another seed's dense mix: the gate (top-level texts, and inner scans
of decoded or joined text), each rule's `find`, the fold, JSON reading, and the first pass
against the idempotency rescans.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.redaction import best_mbps, unseen_mbps
from tests.redaction import heldout
from tests.redaction.corpus import mixed_payload
from zeroclaw_obs.redaction import (
    Redactor,
    _redactor,
)


def _warmed(records: list[str]) -> Redactor:
    redactor = Redactor()
    for record in records:
        redactor.redact_text(record)
    return redactor


def _stages(redactor: Redactor, records: list[str]) -> dict[str, float]:
    """Seconds per stage, by wrapping the stage functions (inclusive times)."""
    spent: dict[str, float] = defaultdict(float)
    scanner = redactor._scanner

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - start

        return wrapper

    class Timed:
        def __init__(self, rule):
            self._rule = rule
            self.find = timed(f"find {type(rule).__name__}:{rule.rule_id}", rule.find)

        def __getattr__(self, name):
            return getattr(self._rule, name)

    rules = scanner._rules
    scanner._rules = tuple(Timed(rule) for rule in rules)
    gate, inner_gate = scanner.gate, scanner._inner_gate
    scanner.gate = timed("gate", gate)
    scanner._inner_gate = timed("gate (inner scans)", inner_gate)
    saved = (_redactor.fold, _redactor._splice, redactor._json)
    _redactor.fold = timed("fold", _redactor.fold)
    _redactor._splice = timed("splice", _redactor._splice)
    redactor._json = timed("json reader", redactor._json)
    passes = {"n": 0, "depth": 0}
    originals = {name: getattr(Redactor, name) for name in ("_text_once", "_plain_once")}

    def pass_of(original):
        """A pass is an outermost call of `_text_once` or `_plain_once` (the first of a
        record, then its rescans); `_text_once` calls `_plain_once` for plain ASCII."""

        def once(self, text, counts, *rest):
            passes["depth"] += 1
            outermost = passes["depth"] == 1
            if outermost:
                passes["n"] += 1
            name = "pass (first)" if passes["n"] == 1 else "pass (rescans)"
            start = time.perf_counter()
            try:
                return original(self, text, counts, *rest)
            finally:
                passes["depth"] -= 1
                if outermost:
                    spent[name] += time.perf_counter() - start

        return once

    for name, original in originals.items():
        setattr(Redactor, name, pass_of(original))
    try:
        start = time.perf_counter()
        for record in records:
            passes["n"] = 0
            redactor.redact_text(record)
        spent["total"] = time.perf_counter() - start
    finally:
        _redactor.fold, _redactor._splice, redactor._json = saved
        for name, original in originals.items():
            setattr(Redactor, name, original)
        scanner.gate, scanner._inner_gate = gate, inner_gate
        scanner._rules = rules
    return spent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cprofile", action="store_true")
    args = parser.parse_args()
    size, warm_size = int(args.size_mb * 1e6), min(int(args.size_mb * 1e6), 2_000_000)
    mixes = {
        "clean": (mixed_payload(args.seed, size)[0], mixed_payload(args.seed + 1, warm_size)[0]),
        "dense": (
            heldout.dense_payload(args.seed, size),
            heldout.dense_payload(args.seed + 1, warm_size),
        ),
    }
    for name, (records, warm) in mixes.items():
        unseen = unseen_mbps(lambda: Redactor().redact_text, records, warm)
        seen = best_mbps(_warmed(warm).redact_text, records)
        print(
            f"{name}: {len(records):,} records, {unseen:.2f} MB/s unseen, "
            f"{seen:.2f} MB/s seen before"
        )
    dense, warm = mixes["dense"]
    spent = _stages(_warmed(warm), dense)
    total = spent["total"]
    per = total / len(dense) * 1e6
    print(f"stage times over {len(dense):,} records ({per:.0f} µs a record), inclusive:")
    for name, seconds in sorted(spent.items(), key=lambda kv: -kv[1])[:40]:
        print(f"  {name:50} {seconds:7.3f} s  {100 * seconds / total:5.1f}%")
    if args.cprofile:
        redactor = _warmed(warm)
        profile = cProfile.Profile()
        profile.enable()
        for record in dense:
            redactor.redact_text(record)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
