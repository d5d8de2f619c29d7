"""The console script's first code: SIGINT and SIGTERM are ours before anything is imported.

Importing the command (OpenTelemetry, pydantic, RE2, asyncio) takes a few hundred
milliseconds. A signal in that window used to get Python's defaults: a `KeyboardInterrupt`
traceback, or death by SIGTERM with no line at all. Here a signal that arrives before
`cli.main` installs its `SignalGuard` ends the process at once with the same one line and exit
code (130 / 143) as any interrupt before the turn: nothing has been staged or written yet, so
`os._exit` loses nothing and leaves no temp file.

The command's last code too (`leave`): when it returns while a daemon thread still runs (a
telemetry worker the exit flush gave up on: a signal during the flush, a collector that never
answers), the process ends with `os._exit` once stdout and stderr are flushed, instead of
through the interpreter's finalization. Finalization stops such a thread with `pthread_exit`
when it next takes the GIL; inside native code that released the GIL (RE2's match, called by
the log and export workers' redaction) that unwinds through a C++ `noexcept` frame, and the
C++ runtime aborts the process: `terminate called without an active exception`, exit -6
instead of the exit code the command chose. Everything the command writes is written (or
discarded) before it returns, and its telemetry was shut down with a deadline, so the
finalization skipped here has nothing of ours left to do.

Risky part: this module must stay import-light (only `contextlib`, `os`, `signal`, `sys`,
`threading`), and
the package's `__init__.py` must not import the heavy modules eagerly, or the window comes
back.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from types import FrameType

__all__ = ["leave", "main", "own_signals", "restore_default_signals"]


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    name = signal.Signals(signum).name
    line = f"zeroclaw-obs: interrupted by {name} before the turn started; no output file written\n"
    try:
        os.write(2, line.encode())
    finally:
        os._exit(128 + signum)


def own_signals() -> None:
    """Until `cli.main` installs its guard, SIGINT / SIGTERM exit at once with one line."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _exit_at_once)


def main() -> int:
    """Own both signals, then import and run the command (`cli.main`)."""
    own_signals()
    from .cli import main as run_command

    code = run_command(sys.argv[1:])
    leave(code)
    return code


def leave(code: int) -> None:
    """End the process now with `code` if a daemon thread is still running (see the module
    docstring); otherwise return, and the interpreter exits as usual."""
    current = threading.current_thread()
    if not any(t.daemon and t is not current for t in threading.enumerate()):
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed or broken: nothing reaches it
            stream.flush()
    os._exit(code)


def restore_default_signals() -> None:
    """Give back Python's own handling where `main` installed the early exit.

    For commands that write nothing (`redact scan`): a `KeyboardInterrupt` is right for them.
    Handlers set by anyone else (a test runner, an embedding program) are left alone.
    """
    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    for signum, default in defaults.items():
        if signal.getsignal(signum) is _exit_at_once:
            signal.signal(signum, default)
