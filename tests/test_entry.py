"""The console script owns SIGINT and SIGTERM before the package's heavy imports run."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

HEAVY = ("opentelemetry", "pydantic", "re2", "structlog", "prometheus_client", "zeroclaw_obs.cli")


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


class TestEntry:
    def test_importing_the_entry_loads_nothing_heavy(self):
        """`zeroclaw_obs._entry` (and the package it sits in) imports no heavy module."""
        code = (
            "import sys, zeroclaw_obs._entry\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
        )
        done = _python(code)
        assert 0 == done.returncode, done.stderr
        assert "[]" == done.stdout.strip()

    @pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
    def test_a_signal_while_importing_exits_with_one_line(self, signum: int, code: int):
        """A signal before the command's guard exits 128+n with one line and no traceback."""
        script = (
            "import os, zeroclaw_obs._entry as e\n"
            "e.own_signals()\n"
            f"os.kill(os.getpid(), {int(signum)})\n"
            "import zeroclaw_obs.cli\n"
            "print('not reached')\n"
        )
        done = _python(script)
        name = signal.Signals(signum).name
        assert code == done.returncode
        assert "" == done.stdout
        assert [
            f"zeroclaw-obs: interrupted by {name} before the turn started; no output file written"
        ] == done.stderr.splitlines()

    def test_the_scan_gets_python_s_own_handling_back(self):
        """`restore_default_signals` undoes the early exit, and only that."""
        script = (
            "import signal, zeroclaw_obs._entry as e\n"
            "e.own_signals()\n"
            "e.restore_default_signals()\n"
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler,"
            " signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)\n"
        )
        done = _python(script)
        assert "True True" == done.stdout.strip(), done.stderr

    def test_leaving_with_a_worker_still_running_skips_finalization(self):
        """`leave` ends the process with the command's code, stdout flushed, without the
        interpreter's finalization (whose `pthread_exit` of a worker inside RE2 aborted the
        process), when a daemon thread still runs; the buffered line is not lost."""
        script = (
            "import atexit, sys, threading, time, zeroclaw_obs._entry as e\n"
            "atexit.register(lambda: print('finalized'))\n"
            "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
            "sys.stdout.write('answer')\n"
            "e.leave(7)\n"
            "print('not reached')\n"
        )
        done = _python(script)
        assert 7 == done.returncode, done.stderr
        assert "answer" == done.stdout

    def test_leaving_with_no_worker_left_exits_as_usual(self):
        """Without a daemon thread `leave` returns: the interpreter finalizes as usual."""
        script = (
            "import atexit, zeroclaw_obs._entry as e\n"
            "atexit.register(lambda: print('finalized'))\n"
            "e.leave(7)\n"
            "print('returned')\n"
        )
        done = _python(script)
        assert 0 == done.returncode, done.stderr
        assert ["returned", "finalized"] == done.stdout.splitlines()
