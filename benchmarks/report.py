"""The table every `make bench` part prints: rows, their verdicts, and repeated timings.

A figure function measures, then adds `Row`s to a `Report`; `Report.table()` lays them out
with a rule between sections. A row with a target carries `verdict(value, limit)`; one
without is informational. `Timing` keeps the median and the best of repeated measurements
through the arithmetic that turns turn times into per-call figures.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["MS", "US", "Report", "Row", "Timing", "verdict"]

US = 1e6
"""Seconds to microseconds."""
MS = 1e3
"""Seconds to milliseconds."""


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


@dataclass(frozen=True)
class Timing:
    """The median and the best of repeated measurements, in seconds (or any unit)."""

    median: float
    best: float

    @classmethod
    def of(cls, values: list[float]) -> Timing:
        return cls(statistics.median(values), min(values))

    def __sub__(self, other: Timing | float) -> Timing:
        o = other if isinstance(other, Timing) else Timing(other, other)
        return Timing(self.median - o.median, self.best - o.best)

    def __truediv__(self, n: float) -> Timing:
        return Timing(self.median / n, self.best / n)

    def __mul__(self, n: float) -> Timing:
        return Timing(self.median * n, self.best * n)

    def show(self, unit: str = "µs", digits: int = 1, *, best: bool = True) -> str:
        """`median unit (best b)`; `best=False` for figures fitted across cases."""
        text = f"{self.median:.{digits}f} {unit}"
        return f"{text} (best {self.best:.{digits}f})" if best else text
