"""The series side of the metrics: bounded label values, a metric's children by label values,
and the two collectors registered beside the metrics (`Pending`, which has queued events applied
before a read, and `DroppedTelemetryCollector`).

`metrics.py` decides what to count from each event; this module keeps what it counts on bounded
series: every label value is cut at `LABEL_LIMIT` (redacted first, with a redactor), free
strings that should be enums fall back to `OTHER`, and a child is looked up from its metric
once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from prometheus_client import Counter, Histogram
from prometheus_client.metrics_core import CounterMetricFamily, Metric

from ..._terminal import encodable

if TYPE_CHECKING:
    from ...redaction import Redactor

__all__ = [
    "APPLY_WAIT_S",
    "LABEL_LIMIT",
    "OTHER",
    "UNKNOWN_TOOL",
    "Children",
    "DroppedTelemetryCollector",
    "HealthSource",
    "Pending",
    "bounded",
    "label_shower",
    "one_of",
]

LABEL_LIMIT = 64
"""The longest label value written; longer names (models, rules, tools) are cut."""

UNKNOWN_TOOL = "unknown"
"""The `tool` label of a name the model invented."""


OTHER = "other"


@runtime_checkable
class HealthSource(Protocol):
    """Telemetry health counters, written by exporter threads and read at scrape time."""

    def snapshot(self) -> Any:
        """A consistent copy whose `dropped` (an attribute, or a key of a mapping) maps a
        signal name to its drop count."""
        ...


def bounded(value: str) -> str:
    # A lone surrogate (possible in a programmatic or MCP tool name) cannot be encoded by the
    # exposition and would fail every scrape: it is shown as its `\udXXX` escape instead.
    return encodable(value[:LABEL_LIMIT])


def label_shower(redactor: Redactor | None) -> Callable[[str], str]:
    """`value → cut(redact(value))`, or the cut alone without a redactor."""
    if redactor is None:
        return bounded
    redact = redactor.redact_text

    def shown(value: str) -> str:
        return bounded(redact(value))

    return shown


def one_of(value: str, allowed: frozenset[str]) -> str:
    return value if value in allowed else OTHER


class Pending:
    """A collector registered before the metrics: collected first, it has the queued events
    applied (within `APPLY_WAIT_S`) and yields nothing, so the samples collected after it count
    every event recorded before the read."""

    def __init__(self, apply: Callable[[float], bool]) -> None:
        self._apply = apply

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        self._apply(APPLY_WAIT_S)
        return iter(())


APPLY_WAIT_S = 1.0
"""The longest a read of the registry waits for queued events to be applied."""


class Children:
    """A labelled metric's children by label values, each looked up from the metric once.

    `labels()` validates the values and takes the metric's lock on every call; a child never
    changes once created (nothing here removes one), so the first answer is kept. The label
    values are bounded (see the module docstring), and with them this dict. The values a
    child is created with are `shown(value)`: redacted, then cut at `LABEL_LIMIT`.
    """

    __slots__ = ("_children", "_labels", "_shown")

    def __init__(self, metric: Counter | Histogram, shown: Callable[[str], str]) -> None:
        self._labels = metric.labels
        self._shown = shown
        self._children: dict[tuple[str, ...], Any] = {}

    def __call__(self, *values: str) -> Any:
        """The child for these label values (as `metric.labels(*map(shown, values))`)."""
        child = self._children.get(values)
        if child is None:
            shown = self._shown
            child = self._children[values] = self._labels(*(shown(v) for v in values))
        return child


class DroppedTelemetryCollector:
    """`zeroclaw_telemetry_dropped_total{signal}`, read from a `HealthSource` at scrape time.

    Drops are counted on exporter threads by the export side; reading its snapshot when
    Prometheus scrapes keeps the two sides uncoupled and never touches the turn's path. A
    source that fails is reported as no samples rather than failing the whole scrape.
    """

    NAME = "zeroclaw_telemetry_dropped"
    DOCUMENTATION = "Telemetry items (spans, logs, metrics) dropped before export, by signal."

    def __init__(self, health: HealthSource | None) -> None:
        self._health = health

    def describe(self) -> Iterator[Metric]:
        """The family without samples, so registering never calls the health source."""
        yield self._family()

    def collect(self) -> Iterator[Metric]:
        """The family with one sample per signal the health source has counted."""
        family = self._family()
        for signal, count in self._dropped().items():
            family.add_metric([bounded(str(signal))], float(count))
        yield family

    def _family(self) -> CounterMetricFamily:
        return CounterMetricFamily(self.NAME, self.DOCUMENTATION, labels=["signal"])

    def _dropped(self) -> Mapping[str, int]:
        if self._health is None:
            return {}
        try:
            snapshot = self._health.snapshot()
            if isinstance(snapshot, Mapping):
                return dict(snapshot.get("dropped", {}))
            return dict(getattr(snapshot, "dropped", {}))
        except Exception:
            return {}
