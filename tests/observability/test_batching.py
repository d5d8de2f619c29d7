"""The bounded batching in front of every exporter: drops counted, deadlines kept."""

from __future__ import annotations

import threading
import time

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from zeroclaw_obs.observability.batching import BoundedBatcher, BoundedBatchSpanProcessor
from zeroclaw_obs.observability.health import Signal, TelemetryHealth

from ..builders import RaisingExporter


class Gate:
    """An export callable that blocks until released, and records what it shipped."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.shipped: list[int] = []

    def __call__(self, batch: list[int]) -> bool:
        self.entered.set()
        self.release.wait(10)
        self.shipped.extend(batch)
        return True


class TestBoundedBatcher:
    def test_a_full_queue_drops_and_counts_without_blocking(self):
        """With the worker stuck in an export, `emit` beyond the bound drops and counts."""
        gate, health = Gate(), TelemetryHealth()
        batcher = BoundedBatcher(
            gate, signal=Signal.TRACES, health=health, max_queue_size=2,
            max_export_batch_size=2, schedule_delay_s=60,
        )  # fmt: skip
        batcher.emit(1)
        batcher.emit(2)
        assert gate.entered.wait(5)  # the worker holds [1, 2] and is blocked
        started = time.perf_counter()
        for item in range(3, 8):
            batcher.emit(item)
        assert time.perf_counter() - started < 0.5
        assert {"traces": 3} == dict(health.snapshot().dropped)  # 3 and 4 queued, 5..7 dropped
        gate.release.set()
        assert batcher.force_flush(5)
        assert [1, 2, 3, 4] == gate.shipped
        batcher.shutdown(5)

    @pytest.mark.parametrize("sidecar", [False, True])
    def test_a_burst_below_the_wake_mark_waits_for_a_wake(self, sidecar):
        """Below `wake_at` a burst does not wake the worker (it runs when the turn is done);
        reaching the mark does, and it still ships in batches of `max_export_batch_size`.
        A `sidecar` batcher's mark is `half_queue`: 4 of 8 here, as given to the plain one."""
        batches: list[list[int]] = []
        shipped = threading.Event()

        def export(batch: list[int]) -> bool:
            batches.append(batch)
            shipped.set()
            return True

        if sidecar:
            batcher = BoundedBatcher.sidecar(
                export, signal=Signal.LOGS, health=TelemetryHealth(), max_queue_size=8,
                max_export_batch_size=2, schedule_delay_s=60,
            )  # fmt: skip
        else:
            batcher = BoundedBatcher(
                export, signal=Signal.LOGS, health=TelemetryHealth(), max_queue_size=8,
                max_export_batch_size=2, schedule_delay_s=60, wake_at=4,
            )  # fmt: skip
        for item in range(3):
            batcher.emit(item)
        assert not shipped.wait(0.3)
        batcher.emit(3)
        assert shipped.wait(5)
        assert batcher.force_flush(5)
        assert [[0, 1], [2, 3]] == batches
        batcher.shutdown(5)

    def test_a_sidecar_at_its_mark_ships_only_what_is_over_it(self):
        """Mid-burst, the mark costs one batch, not the queue: the rest waits for the turn's
        end (`wake`), which ships everything."""
        batches: list[list[int]] = []
        shipped = threading.Semaphore(0)

        def export(batch: list[int]) -> bool:
            batches.append(batch)
            shipped.release()
            return True

        batcher = BoundedBatcher.sidecar(
            export, signal=Signal.LOGS, health=TelemetryHealth(), max_queue_size=8,
            max_export_batch_size=2, schedule_delay_s=60,
        )  # fmt: skip
        for item in range(4):
            batcher.emit(item)
        assert shipped.acquire(timeout=5)
        assert not shipped.acquire(timeout=0.3)
        assert [[0, 1]] == batches
        batcher.wake()
        assert shipped.acquire(timeout=5)
        assert [[0, 1], [2, 3]] == batches
        batcher.shutdown(5)

    @pytest.mark.parametrize("sidecar", [False, True])
    def test_a_sidecar_waits_out_a_burst_past_its_delay(self, sidecar):
        """While a whole batch comes in every delay, a sidecar's delay does not ship (the turn
        is busy); one delay after the burst it ships everything. A plain batcher with the
        same mark ships at its delay, burst or not."""
        shipped = threading.Event()
        delay, batch, queue = 0.2, 2, 1024

        def export(items: list[int]) -> bool:
            shipped.set()
            return True

        health = TelemetryHealth()
        if sidecar:
            batcher = BoundedBatcher.sidecar(
                export, signal=Signal.LOGS, health=health, max_queue_size=queue,
                max_export_batch_size=batch, schedule_delay_s=delay,
            )  # fmt: skip
        else:
            batcher = BoundedBatcher(
                export, signal=Signal.LOGS, health=health, max_queue_size=queue,
                max_export_batch_size=batch, schedule_delay_s=delay, wake_at=queue // 2,
            )  # fmt: skip
        end = time.monotonic() + 5 * delay
        item = 0
        while time.monotonic() < end and not shipped.is_set():
            for _ in range(2 * batch):  # 4 items every quarter delay: 8 batches a delay
                batcher.emit(item)
                item += 1
            time.sleep(delay / 4)
        assert item < queue // 2  # the mark never woke it
        assert shipped.is_set() is not sidecar
        assert shipped.wait(10 * delay)  # the burst is over
        batcher.shutdown(5)

    @pytest.mark.parametrize("wake_at", [1, 9])
    def test_the_wake_mark_is_validated(self, wake_at):
        with pytest.raises(ValueError, match="wake_at must be between"):
            BoundedBatcher(
                lambda batch: True, signal=Signal.LOGS, health=TelemetryHealth(),
                max_queue_size=8, max_export_batch_size=2, wake_at=wake_at,
            )  # fmt: skip

    def test_failed_and_raising_exports_are_counted(self):
        """A batch whose export fails or raises counts one failure and its items as dropped."""
        results = iter([False, ConnectionError("down")])

        def export(batch):
            result = next(results)
            if isinstance(result, Exception):
                raise result
            return result

        health = TelemetryHealth()
        batcher = BoundedBatcher(export, signal=Signal.LOGS, health=health, max_export_batch_size=2)
        for item in range(4):
            batcher.emit(item)
        assert batcher.force_flush(5)
        snapshot = health.snapshot()
        assert ({"logs": 2}, {"logs": 4}) == (
            dict(snapshot.export_failures),
            dict(snapshot.dropped),
        )
        batcher.shutdown(5)

    def test_shutdown_has_a_deadline(self):
        """Shutdown returns at its deadline with the worker stuck; what is left is dropped."""
        gate, health = Gate(), TelemetryHealth()
        batcher = BoundedBatcher(
            gate, signal=Signal.TRACES, health=health, max_queue_size=4,
            max_export_batch_size=1, schedule_delay_s=60,
        )  # fmt: skip
        batcher.emit(1)
        assert gate.entered.wait(5)
        batcher.emit(2)
        started = time.perf_counter()
        assert not batcher.shutdown(0.1)
        assert time.perf_counter() - started < 1.0
        assert {"traces": 2} == dict(health.snapshot().dropped)  # the queued one and the stuck one
        batcher.emit(3)  # after shutdown: dropped and counted
        assert {"traces": 3} == dict(health.snapshot().dropped)
        gate.release.set()

    def test_an_export_that_never_returns_is_counted_as_timed_out(self):
        """Items in an export still running at the shutdown deadline are dropped and timed out,
        and counted once even when that export fails later."""
        health = TelemetryHealth()
        entered, release = threading.Event(), threading.Event()

        def stuck(batch: list[int]) -> bool:
            entered.set()
            release.wait(10)
            return False  # the collector finally gives up: must not be counted again

        batcher = BoundedBatcher(
            stuck, signal=Signal.TRACES, health=health, max_queue_size=8,
            max_export_batch_size=4, schedule_delay_s=60,
        )  # fmt: skip
        for item in range(3):
            batcher.emit(item)
        batcher.wake()
        assert entered.wait(5)
        assert not batcher.shutdown(0.05)
        release.set()
        batcher._worker.join(5)
        snapshot = health.snapshot()
        assert ({"traces": 3}, {"traces": 3}, {}) == (
            dict(snapshot.dropped),
            dict(snapshot.timed_out),
            dict(snapshot.export_failures),
        )

    def test_force_flush_has_a_deadline(self):
        """`force_flush` returns False at its timeout while an export hangs."""
        gate = Gate()
        batcher = BoundedBatcher(gate, signal=Signal.TRACES, health=TelemetryHealth())
        batcher.emit(1)
        assert not batcher.force_flush(0.05)
        gate.release.set()
        assert batcher.force_flush(5)
        batcher.shutdown(5)

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"max_queue_size": 0}, "max_queue_size must be a positive integer, got 0"),
            ({"max_export_batch_size": 0}, "max_export_batch_size must be a positive integer"),
            (
                {"max_queue_size": 2, "max_export_batch_size": 3},
                "max_export_batch_size must be less than or equal to max_queue_size",
            ),
            ({"schedule_delay_s": 0}, "schedule_delay_s must be positive"),
        ],
    )
    def test_settings_are_validated(self, kwargs, message):
        """A bad size or delay raises `ValueError` naming the rule."""
        with pytest.raises(ValueError, match=message):
            BoundedBatcher(lambda b: True, signal=Signal.TRACES, health=TelemetryHealth(), **kwargs)


class TestWaitForRoom:
    def batcher(self, gate: Gate) -> BoundedBatcher:
        return BoundedBatcher(
            gate, signal=Signal.TRACES, health=TelemetryHealth(), max_queue_size=4,
            max_export_batch_size=2, schedule_delay_s=60,
        )  # fmt: skip

    def test_room_is_answered_at_once(self):
        """With room for `count` more items, it returns True without waiting."""
        gate = Gate()
        batcher = self.batcher(gate)
        batcher.emit(1)
        started = time.perf_counter()
        assert batcher.wait_for_room(3, 5.0)
        assert time.perf_counter() - started < 0.5
        gate.release.set()
        batcher.shutdown(5)

    def test_it_waits_for_the_worker_to_take_a_batch(self):
        """A full queue: it wakes the worker and returns once the worker has taken a batch."""
        gate = Gate()
        gate.release.set()
        batcher = self.batcher(gate)
        for item in range(4):
            batcher.emit(item)  # full: the worker may already be taking a batch
        assert batcher.wait_for_room(4, 5.0)
        assert batcher.force_flush(5)
        assert [0, 1, 2, 3] == gate.shipped
        batcher.shutdown(5)

    def test_a_stuck_exporter_times_out(self):
        """The worker is stuck in an export and the queue is full: False after the timeout."""
        gate = Gate()
        batcher = self.batcher(gate)
        batcher.emit(1)
        batcher.emit(2)
        assert gate.entered.wait(5)  # the worker holds [1, 2]
        for item in range(3, 7):
            batcher.emit(item)
        started = time.perf_counter()
        assert not batcher.wait_for_room(1, 0.2)
        assert 0.15 < time.perf_counter() - started < 2.0
        gate.release.set()
        batcher.shutdown(5)

    def test_closing_ends_the_wait(self):
        """A shutdown while a producer waits lets it go at once."""
        gate = Gate()
        batcher = self.batcher(gate)
        for item in range(6):
            batcher.emit(item)
        assert gate.entered.wait(5)
        outcome: list[bool] = []
        waiter = threading.Thread(target=lambda: outcome.append(batcher.wait_for_room(4, 30)))
        waiter.start()
        time.sleep(0.1)
        batcher.shutdown(0.1)
        waiter.join(5)
        assert not waiter.is_alive()
        gate.release.set()


class TestBoundedBatchSpanProcessor:
    def test_spans_reach_the_exporter_on_flush(self):
        """Ended spans are exported by the worker; `force_flush` waits for them."""
        memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(BoundedBatchSpanProcessor(memory, health=TelemetryHealth()))
        provider.get_tracer("t").start_span("s").end()
        assert provider.force_flush(5000)
        assert ["s"] == [s.name for s in memory.get_finished_spans()]
        provider.shutdown()

    def test_unsampled_spans_are_not_queued(self):
        """A span the sampler dropped is never exported."""
        memory = InMemorySpanExporter()
        provider = TracerProvider(sampler=ALWAYS_OFF)
        provider.add_span_processor(BoundedBatchSpanProcessor(memory, health=TelemetryHealth()))
        provider.get_tracer("t").start_span("s").end()
        provider.force_flush(5000)
        assert () == memory.get_finished_spans()
        provider.shutdown()

    def test_exporter_failures_are_counted(self):
        """An exporter that raises is counted as a failure; its spans as dropped."""
        health = TelemetryHealth()
        provider = TracerProvider()
        provider.add_span_processor(BoundedBatchSpanProcessor(RaisingExporter(), health=health))
        for _ in range(3):
            provider.get_tracer("t").start_span("s").end()
        provider.force_flush(5000)
        snapshot = health.snapshot()
        assert ({"traces": 1}, {"traces": 3}) == (
            dict(snapshot.export_failures),
            dict(snapshot.dropped),
        )
        provider.shutdown()


class TestLikeTheSdk:
    def test_an_export_runs_with_instrumentation_suppressed(self):
        """An instrumented client inside an exporter sees the SDK's suppression key set, so it
        never traces the export itself; the caller's context is untouched."""
        from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY, get_value

        seen: list[object] = []

        def export(batch: list[int]) -> bool:
            seen.append(get_value(_SUPPRESS_INSTRUMENTATION_KEY))
            return True

        batcher = BoundedBatcher(export, signal=Signal.TRACES, health=TelemetryHealth())
        batcher.emit(1)
        assert batcher.force_flush(5.0)
        batcher.shutdown(1.0)

        assert [True] == seen
        assert get_value(_SUPPRESS_INSTRUMENTATION_KEY) is None

    def test_a_forked_child_exports_with_a_worker_of_its_own(self, tmp_path):
        """The parent's thread does not exist in a forked child: the child gets its own worker
        (what the child emits is exported there) and never ships the parent's queue."""
        import os

        shipped = tmp_path / "shipped"

        def export(batch: list[str]) -> bool:
            with shipped.open("a") as out:
                out.write("".join(f"{os.getpid()}:{item}\n" for item in batch))
            return True

        batcher = BoundedBatcher(
            export, signal=Signal.TRACES, health=TelemetryHealth(), schedule_delay_s=60.0
        )
        batcher.emit("parent-queued")
        pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                batcher.emit("child")
                code = 0 if batcher.force_flush(5.0) else 1
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert batcher.force_flush(5.0)
        batcher.shutdown(1.0)

        lines = sorted(shipped.read_text().splitlines())
        assert 0 == os.waitstatus_to_exitcode(status)
        assert sorted([f"{pid}:child", f"{os.getpid()}:parent-queued"]) == lines
