"""Where a record spends its time in `Redactor.redact_text` (issue 15, item 3).

Run: `.venv/bin/python benchmarks/redaction_profile.py [--size-mb 2] [--mix dense|clean]
[--cprofile]`. Prints MB/s of the dense and clean mixes (on records the redactor has not
seen, and on records seen before: see `benchmarks/redaction.py`), then per-stage times on
one mix (`--mix`, the dense one by default), by a redactor warmed on another seed's mix of
the same kind: the gate (top-level texts, and inner scans of decoded or joined text), each
rule's `find`, the fold, JSON reading, and the first pass against the idempotency rescans.
On the clean mix it first splits the records by what the redactor does with them (`_kinds`):
shut out by the gate, let through but left unchanged, changed; most of its time per line is
the first kind's, the rest the changed lines'.

Last, the floor (`_floor`): µs per dense record of Logfire's whole scrub, against single RE2
passes that find nothing yet (our gate; one set of every rule's trigger; one set of four
keywords) and our whole `redact_text`. 2× Logfire's dense throughput (issue 15 item 3) is
half its time per record: a design that runs this rule set over a record as RE2 patterns
meets it only if one pass over the triggers fits in that half.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import re2

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
    gate, inner_gate, short_gate = scanner.gate, scanner._inner_gate, scanner.short_gate
    scanner.gate = timed("gate", gate)
    scanner.short_gate = timed("gate", short_gate)  # `redact_text`'s own call, short texts
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
        scanner.gate, scanner._inner_gate, scanner.short_gate = gate, inner_gate, short_gate
        scanner._rules = rules
    return spent


def _per_record_us(fn: Callable[[Any], Any], items: list[Any], repeats: int = 3) -> float:
    """Best CPU µs per item of `fn` over `items`."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for item in items:
            fn(item)
        best = min(best, time.process_time() - start)
    return best / len(items) * 1e6


def _kinds(records: list[str], warm: list[str]) -> None:
    """CPU µs per record of each kind (gate shut, let through but unchanged, changed), each
    kind timed on its own by new redactors warmed on `warm` (best of 3), and its share of
    the mix's time per record."""
    reference = _warmed(warm)
    gate = reference._scanner.gate
    kinds: dict[str, list[str]] = defaultdict(list)
    for record in records:
        if not gate(record.encode()):
            kinds["shut by the gate"].append(record)
        elif Redactor().redact_text(record) == record:
            kinds["through the gate, unchanged"].append(record)
        else:
            kinds["changed"].append(record)
    print(f"clean mix by kind ({len(records):,} records), µs per record (CPU, unseen):")
    for kind, items in kinds.items():
        best = float("inf")
        for _ in range(3):
            redact = _warmed(warm).redact_text
            start = time.process_time()
            for item in items:
                redact(item)
            best = min(best, time.process_time() - start)
        print(
            f"  {kind:30} {len(items):7,} records {best / len(items) * 1e6:8.2f} µs each, "
            f"{best / len(records) * 1e6:6.2f} µs per mix record"
        )


def _floor(records: list[str], warm: list[str]) -> None:
    """Whole scrubs against single passes over the dense records (see the module docstring)."""
    data = [r.encode() for r in records]
    rows: list[tuple[str, float]] = []
    try:
        from logfire._internal.scrubbing import Scrubber
    except ImportError:
        Scrubber = None  # the bench extra is not installed
    if Scrubber is not None:
        scrubber = Scrubber(None)
        path = ("attributes", "message")
        rows.append(
            (
                "Logfire scrubber, whole scrub",
                _per_record_us(lambda r: scrubber.scrub_value(path, r), records),
            )
        )
    redactor = _warmed(warm)
    scanner = redactor._scanner
    rows.append(
        (
            "ours: the gate alone (split sets), finds nothing yet",
            _per_record_us(scanner._inner_gate, data),
        )
    )
    options = re2.Options()
    options.max_mem = 512 << 20
    for label, patterns in (
        ("one RE2 set of every rule's trigger, one pass", [r.trigger for r in scanner._rules]),
        ("one RE2 set of four keywords, one pass", ["password", "secret", "token", "key"]),
    ):
        one_set = re2.Set.SearchSet(options)
        for pattern in patterns:
            one_set.Add(pattern)
        one_set.Compile()
        rows.append((label, _per_record_us(one_set.Match, data)))
    unseen = unseen_mbps(lambda: Redactor().redact_text, records, warm)
    mean = sum(len(d) for d in data) / len(data)
    rows.append(("ours: redact_text, unseen", mean / unseen))
    print(f"floor, µs per dense record (mean {mean:,.0f} B), best of 3 (CPU):")
    for label, us in rows:
        print(f"  {label:56} {us:8.1f}")
    if Scrubber is not None:
        print(f"  {'2x Logfire (issue 15 item 3): the budget':56} {rows[0][1] / 2:8.1f}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mix", choices=("dense", "clean"), default="dense")
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
    chosen, warm = mixes[args.mix]
    if args.mix == "clean":
        _kinds(chosen, warm)
    spent = _stages(_warmed(warm), chosen)
    total = spent["total"]
    per = total / len(chosen) * 1e6
    print(
        f"stage times over {len(chosen):,} {args.mix} records ({per:.1f} µs a record), inclusive:"
    )
    for name, seconds in sorted(spent.items(), key=lambda kv: -kv[1])[:40]:
        print(f"  {name:50} {seconds:7.3f} s  {100 * seconds / total:5.1f}%")
    if args.cprofile:
        redactor = _warmed(warm)
        profile = cProfile.Profile()
        profile.enable()
        for record in chosen:
            redactor.redact_text(record)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
    _floor(*mixes["dense"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
