"""`make bench`, part 2: our Redactor against detect-secrets and the Logfire scrubber.

Side by side, in one run, on the same inputs:
- recall: the share of corpus secrets (tests/redaction/corpus.py, seeded) that are gone from the
  output (no piece of 12+ characters left);
- look-alikes lost: the share of must-keep strings that did not survive verbatim;
- throughput: MB/s on one core over the same ~10 MB mixed payload, one record (line) at a time,
  which is how every one of them is used on telemetry.

Fairness notes, printed with the table:
- Each peer runs with its default configuration, as a user would install it.
- detect-secrets finds secrets but does not redact; its adapter replaces every secret value it
  reports. It is ~100× slower, so its throughput is measured on a 1 MB slice of the payload.
- The Logfire scrubber replaces a whole string value when a sensitive pattern appears in it (or
  in its key); that counts as a catch for every secret in the value, and as a loss for every
  look-alike in it.
Figures are reported, not asserted: the script exits 0.

    .venv/bin/python benchmarks/redaction.py [--size-mb 10] [--seed 0]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.redaction.corpus import Case, caught, generate, kept, mixed_payload
from zeroclaw_obs.redaction import Redactor

Redact = Callable[[Any], Any]
_KEEP_ALIVE: list[Any] = []


@dataclass
class Contender:
    """A redactor under test: how to redact a text record and a structured value."""

    name: str
    text: Callable[[str], str]
    value: Callable[[Any], Any]
    throughput_slice_mb: float | None = None
    """Measure throughput on this many MB only (for very slow peers)."""


def ours() -> Contender:
    redactor = Redactor()
    return Contender("zeroclaw-obs Redactor", redactor.redact_text, redactor.redact_value)


def detect_secrets() -> Contender | None:
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    settings = default_settings()
    settings.__enter__()  # all default plugins and filters, for the whole run
    # The context manager must stay referenced: when it is collected, its generator closes and
    # detect-secrets silently resets to no plugins at all.
    _KEEP_ALIVE.append(settings)

    def text(line: str) -> str:
        out = line
        for found in scan_line(line):
            if found.secret_value:
                out = out.replace(found.secret_value, "[REDACTED]")
        return out

    def value(data: Any) -> Any:
        rendered = json.dumps(data, ensure_ascii=False, indent=1)
        return "\n".join(text(line) for line in rendered.splitlines())

    return Contender("detect-secrets 1.x (default plugins)", text, value, 1.0)


def logfire_scrubber() -> Contender | None:
    try:
        from logfire._internal.scrubbing import Scrubber
    except ImportError:
        return None
    scrubber = Scrubber(None)

    def text(line: str) -> str:
        return scrubber.scrub_value(("attributes", "message"), line)[0]

    def value(data: Any) -> Any:
        return scrubber.scrub_value(("attributes", "value"), data)[0]

    return Contender("Logfire scrubber (default patterns)", text, value)


@dataclass
class Quality:
    secrets: int = 0
    caught: int = 0
    keeps: int = 0
    lost: int = 0

    @property
    def recall(self) -> float:
        return self.caught / self.secrets if self.secrets else 1.0

    @property
    def lost_share(self) -> float:
        return self.lost / self.keeps if self.keeps else 0.0


def quality(contender: Contender, cases: list[Case]) -> Quality:
    """Recall and look-alikes lost over the corpus (PII on: every peer at its default)."""
    result = Quality()
    for case in cases:
        payload = case.payload
        output = contender.text(payload) if isinstance(payload, str) else contender.value(payload)
        for secret in case.secrets:
            result.secrets += 1
            result.caught += caught(secret, output)
        for lookalike in case.keep:
            result.keeps += 1
            result.lost += not kept(lookalike, output)
    return result


def throughput(contender: Contender, lines: list[str]) -> float:
    """MB/s over the records, one record at a time, gc off, best of 3 (1 for slow peers)."""
    if contender.throughput_slice_mb is not None:
        budget, sliced = contender.throughput_slice_mb * 1e6, []
        for line in lines:
            budget -= len(line.encode())
            if budget < 0:
                break
            sliced.append(line)
        lines = sliced
    size_mb = sum(len(line.encode()) for line in lines) / 1e6
    redact = contender.text
    best = float("inf")
    repeats = 1 if contender.throughput_slice_mb else 3
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        for line in lines:
            redact(line)
        best = min(best, time.perf_counter() - start)
        gc.enable()
    return size_mb / best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    began = time.perf_counter()
    cases = generate(seed=args.seed)
    lines, _ = mixed_payload(args.seed, int(args.size_mb * 1e6))
    size = sum(len(line.encode()) for line in lines) / 1e6
    print(
        f"\nRedaction: {len(cases)} corpus cases (seed {args.seed}), "
        f"{size:.1f} MB mixed payload in {len(lines):,} records, one core"
    )
    contenders = [c for c in (ours(), detect_secrets(), logfire_scrubber()) if c is not None]
    rows = []
    for contender in contenders:
        q = quality(contender, cases)
        rows.append((contender, q, throughput(contender, lines)))
    header = f"{'redactor':40} {'recall':>8} {'look-alikes lost':>17} {'MB/s':>8}"
    print(header)
    print("-" * len(header))
    for contender, q, speed in rows:
        print(
            f"{contender.name:40} {q.recall:8.2%} {q.lost_share:17.2%} {speed:8.2f}"
            + ("  (1 MB slice)" if contender.throughput_slice_mb else "")
        )
    ours_row, peers = rows[0], rows[1:]
    fastest_peer = max((speed for _, _, speed in peers), default=0.0)
    q = ours_row[1]
    checks = [
        ("recall ≥ 99%", q.recall >= 0.99, f"{q.recall:.2%}"),
        ("look-alikes lost ≤ 1%", q.lost_share <= 0.01, f"{q.lost_share:.2%}"),
        (
            "throughput ≥ 2× the fastest peer",
            fastest_peer == 0 or ours_row[2] >= 2 * fastest_peer,
            f"{ours_row[2]:.1f} MB/s vs {fastest_peer:.1f} MB/s "
            f"({ours_row[2] / fastest_peer if fastest_peer else float('inf'):.1f}×)",
        ),
    ]
    print()
    for label, ok, figure in checks:
        print(f"{'PASS' if ok else 'MISS'}  {label}: {figure}")
    missing = {"detect-secrets", "logfire"} - {
        "detect-secrets" if "detect" in c.name else "logfire" for c in contenders
    }
    if missing:
        print(f"(peers not installed: {', '.join(sorted(missing))}; `make bench` installs them)")
    print(f"({time.perf_counter() - began:.1f} s; figures are reported, not asserted)")
    while _KEEP_ALIVE:
        _KEEP_ALIVE.pop().__exit__(None, None, None)  # leave detect-secrets' settings cleanly
    return 0


if __name__ == "__main__":
    sys.exit(main())
