"""Digests of every output the redaction benchmark produces, to prove a speed change changes none.

A change made only for speed must leave every output as it was. This script redacts, each with
a fresh `Redactor()` per set or mix, what `benchmarks/redaction.py` redacts:
- every case of the three evaluation sets (corpus, held-out, blind), text through
  `redact_text` and structured values through `redact_value`, and text again through
  `redact_text_report` (its counts too);
- the clean and the dense mix (`mixed_payload`, `dense_payload`), one record at a time through
  `redact_text`, and each dense record that is a JSON document through `redact_value` as well;
for seeds 0-3 (`--seeds`), and stores one digest (BLAKE2b of the output's canonical JSON) per
record. Digests, never outputs: the file holds no piece of any text.

    .venv/bin/python benchmarks/redaction_outputs.py --write /tmp/outputs.json   # the baseline
    .venv/bin/python benchmarks/redaction_outputs.py --check /tmp/outputs.json   # after a change

`--check` exits 1 and names the first differing records (set, seed, index) when any differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.redaction import blind, heldout
from tests.redaction.corpus import generate, mixed_payload
from zeroclaw_obs.redaction import Redactor

Digests = dict[str, list[str]]


def digest(output: Any) -> str:
    """A short digest of an output (text, JSON-like value, or counts)."""
    text = json.dumps(output, ensure_ascii=False, sort_keys=True, default=repr)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _set_digests(name: str, cases: list[Any]) -> Iterator[tuple[str, list[str]]]:
    redactor, reporter = Redactor(), Redactor()
    plain: list[str] = []
    reported: list[str] = []
    for case in cases:
        payload = case.payload
        if isinstance(payload, str):
            plain.append(digest(redactor.redact_text(payload)))
            reported.append(digest(reporter.redact_text_report(payload)))
        else:
            plain.append(digest(redactor.redact_value(payload)))
            reported.append(digest(reporter.redact_value_report(payload)))
    yield name, plain
    yield f"{name} report", reported


def _mix_digests(name: str, records: list[str]) -> Iterator[tuple[str, list[str]]]:
    redactor = Redactor()
    yield name, [digest(redactor.redact_text(record)) for record in records]
    if name.startswith("dense"):
        walker, values = Redactor(), []
        for record in records:
            if record.startswith("{"):
                values.append(digest(walker.redact_value(json.loads(record))))
        yield f"{name} value", values


def collect(seeds: list[int], size: int) -> Digests:
    """Every digest, keyed by `<set or mix> <seed>`."""
    found: Digests = {}
    makers: dict[str, Callable[[int], Iterator[tuple[str, list[str]]]]] = {
        "corpus": lambda s: _set_digests("corpus", generate(seed=s)),
        "held-out": lambda s: _set_digests("held-out", heldout.generate(seed=s)),
        "blind": lambda s: _set_digests("blind", blind.generate(seed=s)),
        "clean": lambda s: _mix_digests("clean", mixed_payload(s, size)[0]),
        "dense": lambda s: _mix_digests("dense", heldout.dense_payload(s, size)),
    }
    for seed in seeds:
        for make in makers.values():
            for name, digests in make(seed):
                found[f"{name} {seed}"] = digests
    return found


def compare(baseline: Digests, now: Digests) -> list[str]:
    """The differences, as lines naming a set, a seed and record indexes (no text)."""
    problems = []
    for key in sorted(set(baseline) | set(now)):
        old, new = baseline.get(key), now.get(key)
        if old is None or new is None:
            problems.append(f"{key}: only in {'the baseline' if new is None else 'this run'}")
        elif len(old) != len(new):
            problems.append(f"{key}: {len(old)} records in the baseline, {len(new)} now")
        else:
            differ = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
            if differ:
                problems.append(f"{key}: {len(differ)} records differ, first {differ[:10]}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--size-mb", type=float, default=2.0)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", metavar="FILE")
    action.add_argument("--check", metavar="FILE")
    args = parser.parse_args()
    began = time.perf_counter()
    now = collect(args.seeds, int(args.size_mb * 1e6))
    records = sum(len(d) for d in now.values())
    took = f"{time.perf_counter() - began:.0f} s"
    if args.write:
        with open(args.write, "w") as f:
            json.dump(now, f)
        print(f"{records:,} digests in {len(now)} groups written ({took})")
        return 0
    with open(args.check) as f:
        baseline = json.load(f)
    problems = compare(baseline, now)
    for line in problems:
        print("DIFF", line)
    verdict = "identical" if not problems else "DIFFERENT"
    print(f"{records:,} digests in {len(now)} groups: {verdict} ({took})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
