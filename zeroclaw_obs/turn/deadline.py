"""Per-call deadlines: one timer for the calls one task runs one after another.

`asyncio.timeout` arms a timer when a call starts and cancels it when the call ends: a new
`TimerHandle` (with a copy of the context) pushed on the loop's heap, then left there cancelled
by a call that ended in time, which is nearly every call. That cost ~4 µs a call, more than the
rest of dispatch's own bookkeeping. `CallDeadline` keeps one timer for a task's successive calls:
a call that starts only moves the deadline, and the timer, should it fire for a call that has
ended, re-arms itself for the deadline of the call now running. A call that outlives its
deadline is cancelled and its `CancelledError` becomes `TimeoutError`, as under
`asyncio.timeout`.

Risky part: the cancel accounting mirrors `asyncio.Timeout` (CPython 3.11 `timeouts.py`): the
scope remembers the task's `cancelling()` count on entry and, after its own cancel, raises
`TimeoutError` only when `uncancel()` brings the count back to it. A cancel of the turn that
arrived meanwhile keeps the count above, so that `CancelledError` still reaches the turn.
`close` must run when the task is done with the scope (the dispatcher's `finally`): an armed
timer holds the scope, and through it the running call's task, until it fires.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

__all__ = ["CallDeadline"]


class CallDeadline:
    """A deadline scope reused for the successive calls of one task.

    `with deadline:` wraps one call; a call still running `seconds` after it entered is
    cancelled and the `with` raises `TimeoutError`. Never nest it or share it between tasks
    running at once (give each parallel task its own); call `close` when the task is done.

    Args:
        seconds: each call's budget (`tool_timeout_s`, positive and finite).
    """

    __slots__ = (
        "_armed_for",
        "_cancelling",
        "_expired",
        "_handle",
        "_loop",
        "_seconds",
        "_task",
        "_when",
    )

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[object] | None = None
        """The task whose call is running; None between calls."""
        self._handle: asyncio.TimerHandle | None = None
        self._when = 0.0
        """The loop time the running call's deadline falls at."""
        self._armed_for = 0.0
        """The loop time the timer fires at: the deadline of the running call, or of an
        earlier one (then it re-arms when it fires)."""
        self._cancelling = 0
        self._expired = False

    def __enter__(self) -> None:
        """Start one call's clock.

        Raises:
            RuntimeError: not inside a task.
        """
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("CallDeadline should be used inside a task")
        loop = self._loop
        if loop is None:
            loop = self._loop = task.get_loop()
        self._task = task
        self._cancelling = task.cancelling()
        self._expired = False
        when = self._when = loop.time() + self._seconds
        if self._handle is None:
            self._arm(when)
        # Otherwise the timer, armed for an earlier call, fires first and re-arms for this one.

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """End the call; turn the scope's own cancel into `TimeoutError`.

        Raises:
            TimeoutError: the call outlived its deadline and no other cancel is pending.
        """
        task, self._task = self._task, None
        if not self._expired:
            return
        self._expired = False
        assert task is not None
        if task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc

    def close(self) -> None:
        """Cancel the timer (the task runs no more calls under this scope)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _arm(self, when: float) -> None:
        assert self._loop is not None
        self._armed_for = when
        self._handle = self._loop.call_at(when, self._fire)

    def _fire(self) -> None:
        self._handle = None
        task = self._task
        if task is None:
            return  # between calls: the next call arms the timer again
        if self._armed_for < self._when:
            self._arm(self._when)  # armed for a call that has ended
            return
        self._expired = True
        task.cancel()
