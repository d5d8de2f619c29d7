"""The worker threads of blocking tool code (`tools/_workers.py`)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from zeroclaw_obs.tools._workers import run_blocking


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """An event blocking calls wait on; set at teardown so no worker is left parked."""
    event = threading.Event()
    yield event
    event.set()


def worker() -> threading.Thread:
    return threading.current_thread()


class TestRunBlocking:
    async def test_returns_what_the_function_returns(self):
        """Positional and keyword arguments reach the function; its value comes back."""
        assert "a-b" == await run_blocking("{}-{sep}".format, "a", sep="b")

    async def test_runs_in_a_daemon_worker(self):
        """The call runs in a daemon thread, so a hung tool never holds up interpreter exit."""
        thread = await run_blocking(worker)
        assert (True, "zeroclaw-tool-worker") == (thread.daemon, thread.name)
        assert threading.current_thread() is not thread

    async def test_an_idle_worker_is_reused(self):
        """A call that follows a finished one runs in the same, now idle, thread."""
        first = await run_blocking(worker)
        second = await run_blocking(worker)
        assert first is second

    async def test_blocked_calls_run_side_by_side(self, gate):
        """Two calls that wait for each other both finish: a busy pool grows, it never queues."""
        barrier = threading.Barrier(2, timeout=5)

        def meet() -> threading.Thread:
            barrier.wait()
            return threading.current_thread()

        threads = await asyncio.gather(run_blocking(meet), run_blocking(meet))
        assert threads[0] is not threads[1]

    async def test_cancelling_returns_at_once_and_drops_the_result(self, gate):
        """A cancelled wait returns while the function is still blocked; the pool still works."""
        started = threading.Event()

        def blocked() -> str:
            started.set()
            gate.wait(timeout=5)
            return "late"

        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await run_blocking(blocked)
        assert started.is_set() and not gate.is_set()
        gate.set()
        assert 2 == await run_blocking(len, "ab")

    async def test_exceptions_are_raised_in_the_awaiting_task(self):
        """What the function raises is raised by `run_blocking`."""
        with pytest.raises(ZeroDivisionError):
            await run_blocking(divmod, 1, 0)


class TestProcessExit:
    def test_a_hung_call_does_not_keep_the_process_alive(self):
        """A program whose blocking call timed out exits when its event loop is done, although
        the call never returns (the loop's default executor would be joined at exit)."""
        code = (
            "import asyncio, threading\n"
            "from zeroclaw_obs.tools._workers import run_blocking\n"
            "async def main():\n"
            "    try:\n"
            "        async with asyncio.timeout(0.05):\n"
            "            await run_blocking(threading.Event().wait)\n"
            "    except TimeoutError:\n"
            "        print('timed out')\n"
            "asyncio.run(main())\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
        assert (0, "timed out\n") == (done.returncode, done.stdout)
