"""Worker threads for blocking tool code: a synchronous `@tool` function never runs on the loop.

`run_blocking` runs one call in a daemon worker thread and awaits its result, so a tool that
blocks (a `time.sleep`, a synchronous HTTP client, a lock) stalls neither the event loop, nor
its parallel siblings, nor the per-tool timeout that the dispatcher wraps around it. The call
runs in a copy of the caller's `contextvars` context, so the span the dispatcher made current
for the call (`tool_scope`), and any other context variable, is what the tool's code sees.

Choice: our own daemon workers, not `asyncio.to_thread`. The loop's default executor has a few
non-daemon threads: a handful of hung tools would starve every later sync tool, and at exit
`asyncio.run` joins the executor, so one hung tool would keep the process alive after its turn
ended. Here an idle worker is reused (a thread start costs far more than a hand-off), a busy
pool grows by one thread instead of queueing, idle workers leave after `IDLE_SECONDS`, and no
worker ever holds up interpreter exit.

Risky part: Python cannot stop a thread. When the awaiting task is cancelled or times out,
`run_blocking` returns at once, but the function keeps running in its worker until it returns
on its own; its result is then dropped. A tool that must stop on cancellation has to be async.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["IDLE_SECONDS", "run_blocking"]

T = TypeVar("T")

IDLE_SECONDS = 30.0
"""How long an idle worker waits for its next call before its thread ends."""

_Job = Callable[[], Callable[[], None]]
"""Runs one call and returns how to report its outcome to the loop."""


class _Workers:
    """Daemon threads, each with its own inbox; an idle one is reused, else a new one starts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue[_Job]] = []
        # A forked child has none of the parent's threads: their inboxes would never be read.
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._idle = []

    def submit(self, job: _Job) -> None:
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            worker = threading.Thread(
                target=self._work, args=(inbox,), name="zeroclaw-tool-worker", daemon=True
            )
            worker.start()
        inbox.put(job)

    def _work(self, inbox: queue.SimpleQueue[_Job]) -> None:
        job = inbox.get()
        while True:
            report = job()
            with self._lock:
                self._idle.append(inbox)
            # Idle before the caller hears back, so the caller's next call reuses this thread.
            report()
            try:
                job = inbox.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:
                        self._idle.remove(inbox)
                        return
                # A caller took this inbox just as the wait ended: its job is on the way.
                job = inbox.get()


_WORKERS = _Workers()


async def run_blocking(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Call `function(*args, **kwargs)` in a worker thread and await what it returns or raises.

    The call runs in a copy of the current `contextvars` context (the current span included).

    Args:
        function: a synchronous callable; it may block for as long as it likes.
        *args: positional arguments for `function`.
        **kwargs: keyword arguments for `function`.

    Returns:
        What `function` returned.

    Raises:
        Exception: whatever `function` raised, re-raised in the awaiting task.
        asyncio.CancelledError: the awaiting task was cancelled; the function keeps running
            in its worker and its result is dropped.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    call = functools.partial(contextvars.copy_context().run, function, *args, **kwargs)

    def settle(value: Any, error: BaseException | None) -> None:
        if done.done():
            return  # the awaiting task was cancelled or timed out: nobody wants the result
        if error is None:
            done.set_result(value)
        else:
            done.set_exception(error)

    def job() -> Callable[[], None]:
        value: Any = None
        error: BaseException | None = None
        try:
            value = call()
        except BaseException as exc:  # delivered to the awaiting task, as an async tool's would
            error = exc

        def report() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
                loop.call_soon_threadsafe(settle, value, error)

        return report

    _WORKERS.submit(job)
    return await done
