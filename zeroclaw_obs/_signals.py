"""SIGINT and SIGTERM for a whole command: one mechanism for `run`, `demo` and `load`.

`SignalGuard` owns both signals from the start of `main` to its return. Outside an event
loop (input validation, set-up, the exit flush, writing the outputs) a signal raises
`Interrupted` in the main thread, so the command unwinds through its `finally` blocks: staged
files are removed and it exits 128 + the signal number (130 for SIGINT, 143 for SIGTERM) with
one line. While a turn (or a load run) runs, the first signal is handed to the loop as a
request (cancel the turn, stop the load), so what the turn produced so far is still written;
a second signal cancels the loop's main task at once.

Risky parts: handlers are process-wide and only the main thread can set them (elsewhere the
guard does nothing and signals act as they always do). asyncio's `remove_signal_handler`
restores the *default* handlers, not ours, so `in_loop` puts ours back with both signals
blocked, leaving no moment in which a SIGTERM would kill the process unseen.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType

__all__ = ["HANDLED", "Interrupted", "SignalGuard", "deferred_signals"]

HANDLED = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """Raised in the main thread by SIGINT or SIGTERM; the command exits `exit_code`.

    A `BaseException`, like `KeyboardInterrupt`: it is not an error, and `except Exception`
    blocks on the way out must not swallow it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """128 + the signal number: 130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signum

    @property
    def name(self) -> str:
        """`SIGINT` or `SIGTERM`."""
        return signal.Signals(self.signum).name


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for a short critical section; they arrive at its end."""
    if not _main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class SignalGuard:
    """SIGINT and SIGTERM raise `Interrupted` while the guard is entered (main thread only).

    `received` is the last signal received, so the exit code names the signal that ended
    the run.
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self._previous: dict[int, object] = {}

    def __enter__(self) -> SignalGuard:
        if _main_thread():
            for signum in HANDLED:
                self._previous[signum] = signal.signal(signum, self._raise)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with deferred_signals():
            for signum, handler in self._previous.items():
                signal.signal(signum, handler)  # type: ignore[arg-type]
        self._previous.clear()

    @property
    def exit_code(self) -> int | None:
        """128 + the last signal received, or None when none was."""
        return None if self.received is None else 128 + self.received

    def _raise(self, signum: int, frame: FrameType | None) -> None:
        self.received = signum
        raise Interrupted(signum)

    @contextlib.contextmanager
    def in_loop(self, on_signal: Callable[[int], None], *, patience: int = 1) -> Iterator[None]:
        """While the running loop's current task runs, signals are requests to `on_signal`.

        The first `patience` signals call `on_signal`; one more cancels the current task at
        once, and the caller turns that `CancelledError` into `Interrupted` with
        `interrupted_by`.

        Args:
            on_signal: asks the work to end (cancel the turn; stop the load gracefully, then
                at once); called on the loop, so it may touch asyncio objects.
            patience: how many signals `on_signal` takes before one cancels the task.
        """
        if not self._previous:  # not entered, or not the main thread
            yield
            return
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()

        count = 0

        def handle(signum: int) -> None:
            nonlocal count
            count += 1
            self.received = signum
            if count <= patience:
                on_signal(signum)
            elif task is not None:
                task.cancel()

        with deferred_signals():
            for signum in HANDLED:
                loop.add_signal_handler(signum, handle, signum)
        try:
            yield
        finally:
            with deferred_signals():
                for signum in HANDLED:
                    loop.remove_signal_handler(signum)
                    signal.signal(signum, self._raise)

    def interrupted_by(self, exc: BaseException) -> Interrupted | None:
        """The `Interrupted` a signal-cancelled task stands for, or None for any other error."""
        if isinstance(exc, Interrupted):
            return exc
        if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt) and self.received:
            return Interrupted(self.received)
        if isinstance(exc, KeyboardInterrupt):
            return Interrupted(signal.SIGINT)
        return None
