"""`QueuedLogger`: log lines leave the turn's path, and one worker renders and writes them."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..batching import BoundedBatcher
from ..health import HealthCounter, Signal, TelemetryHealth
from .chain import Line, LineWriter

__all__ = ["QueuedLogger"]


class QueuedLogger:
    """Log lines leave the turn's path: `log` queues them, a worker thread writes them.

    `log(level, event, **fields)` keeps the time (a float `timestamp`, see `add_event_time`)
    and appends the line to a `BoundedBatcher`; the worker calls the wrapped structlog logger,
    whose processors (redaction, JSON) and write then run on the worker thread, and flushes
    its stream after each batch. The fields dict becomes the queue's: don't reuse it.

    Args:
        logger: a structlog logger (see `build_logger`).
        health: where dropped lines are counted (`signal="logs"`).
        level: lines below this stdlib level are not queued at all.
        flush: called after each written batch (e.g. the stream's `flush`).
        max_queue_size: the most lines waiting; more are dropped and counted.
        max_export_batch_size: the most lines per batch; a full batch wakes the worker.
        schedule_delay_s: the longest a line waits while no batch fills.

    The batch size and delay are the OpenTelemetry log SDK's `BatchLogRecordProcessor`
    defaults (512 lines, 1 s); the queue is four times theirs, since a turn of 500 calls logs
    about 1,000 lines in a burst. Unlike theirs, a full batch does not wake the worker: only
    half a queue does (memory), besides the delay and the end of every turn (`wake`). The
    worker's redaction calls into RE2, which releases the GIL, so a worker rendering while a
    busy turn runs hands the GIL back and forth with it — a context switch per line — and
    slows the turn by more than the work itself.
    """

    def __init__(
        self,
        logger: Any,
        *,
        health: TelemetryHealth,
        level: int = logging.INFO,
        flush: Callable[[], None] | None = None,
        max_queue_size: int = 8192,
        max_export_batch_size: int = 512,
        schedule_delay_s: float = 1.0,
    ) -> None:
        self._logger = logger
        self._lines = logger if isinstance(logger, LineWriter) else None
        self._health = health
        self._level = level
        self._flush = flush
        self._writing = threading.Lock()
        """Held while a batch is written: by the worker, or by a `SignalQueue`'s (`write`)."""
        self._batcher: BoundedBatcher[_Queued] = BoundedBatcher.sidecar(
            self.write,
            signal=Signal.LOGS,
            health=health,
            max_queue_size=max_queue_size,
            max_export_batch_size=max_export_batch_size,
            schedule_delay_s=schedule_delay_s,
        )
        self._emit = self._batcher.emit

    def log(self, level: int, event: str, **fields: Any) -> None:
        """Queue one line (or drop and count it). Never blocks or raises."""
        if level < self._level:
            return
        fields["timestamp"] = time.time()
        self._batcher.emit((level, event, fields))

    def defer(self, make: Callable[..., list[Line]], *args: Any) -> None:
        """Queue `make(*args)`, called on the worker for the lines it returns, each stamped
        with the time of this call: the turn pays for a tuple, the worker builds the fields.
        `args` must not change afterwards (observer events are read-only). Never blocks or
        raises; `make` must not raise either (it counts its own failures)."""
        self._emit((_now(), make, args))

    def wake(self) -> None:
        """Have the worker write what is queued now (the end of a turn), without waiting."""
        self._batcher.wake()

    def force_flush(self, timeout_s: float) -> bool:
        """Write everything queued; wait at most `timeout_s`. True when done in time."""
        return self._batcher.force_flush(timeout_s)

    def shutdown(self, timeout_s: float) -> bool:
        """Write what is queued and stop the worker within `timeout_s`; the rest is counted."""
        return self._batcher.shutdown(timeout_s)

    def _lines_of(self, batch: list[_Queued]) -> Iterator[Line]:
        for first, second, third in batch:
            if type(first) is int:
                yield first, second, third
                continue
            for level, event, fields in second(*third):
                if level >= self._level:
                    fields["timestamp"] = first
                    yield level, event, fields

    def write(self, batch: list[_Queued]) -> bool:
        """Write `batch` now on the caller's thread, one batch at a time: the worker's step, and
        the log observer's on a `SignalQueue`'s worker, whose items are those `defer` queues."""
        with self._writing:
            return self._write(batch)

    def _write(self, batch: list[_Queued]) -> bool:
        if self._lines is not None:
            self._render_and_write(self._lines, batch)
        else:
            log = self._logger.log
            for level, event, fields in self._lines_of(batch):
                try:
                    log(level, event, **fields)
                except Exception:
                    # One bad line (an object whose repr raises, a closed stream) costs that line.
                    self._health.increment(HealthCounter.DROPPED, Signal.LOGS)
        if self._flush is not None:
            self._flush()
        return True

    def _render_and_write(self, writer: LineWriter, batch: list[_Queued]) -> None:
        """Every line of the batch rendered, then written in one go."""
        render, render_own = writer.render, writer.render_own
        least = self._level
        rendered: list[str] = []
        append = rendered.append
        urgent = False
        for first, second, third in batch:
            # A queued line through the whole chain; an observer's lines straight.
            own = type(first) is not int
            for level, event, fields in second(*third) if own else ((first, second, third),):
                if level < least:
                    continue
                try:
                    if own:
                        line = render_own(level, event, fields, first)
                    else:
                        line = render(level, event, fields)
                except Exception:
                    self._health.increment(HealthCounter.DROPPED, Signal.LOGS)
                    continue
                if line is not None:
                    append(line)
                    if level >= _WARNING:
                        urgent = True
        try:
            writer.write(rendered, urgent=urgent)
        except Exception:
            # A closed stream or a full disk: the batch's lines are lost, and counted.
            self._health.increment(HealthCounter.DROPPED, Signal.LOGS, len(rendered))


_now = time.time
_WARNING = logging.WARNING

_Queued = tuple[Any, Any, Any]
"""A queued line `(level, event, fields)`, or `(timestamp, make, args)` for `defer`."""
