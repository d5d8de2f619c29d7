"""A runtime stand-in for the shutdown tests: connects to the toolbox and prints its pid.

`python hold_connection.py hold`: `async with McpConnection(...)`, then waits (for Ctrl-C).
Signals are owned the way the console script owns them (`SignalGuard`, and `in_loop` while
the loop runs, which hands the signal to the loop through its wake-up fd): with a plain
`asyncio.run` a SIGINT taken by one of the subprocess machinery's threads only sets a flag,
and the loop sleeping in `epoll_wait` for the long wait below would never see it.
`python hold_connection.py forget`: starts a connection and returns without closing it, so only
`asyncio.run`'s own teardown (cancelling the owner task) can stop the server.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from zeroclaw_obs._signals import Interrupted, SignalGuard
from zeroclaw_obs.tools.mcp_client import StdioParams
from zeroclaw_obs.tools.mcp_session import McpConnection

TOOLBOX = StdioParams(command=sys.executable, args=[str(Path(__file__).parent / "toolbox.py")])


async def main(mode: str, guard: SignalGuard) -> None:
    task = asyncio.current_task()
    assert task is not None
    with guard.in_loop(lambda signum: task.cancel()):
        await hold(mode)


async def hold(mode: str) -> None:
    connection = McpConnection("box", TOOLBOX)
    if mode == "forget":
        await connection.start()
        print((await connection.call_tool("pid", {})).output, flush=True)
        return
    async with connection:
        print((await connection.call_tool("pid", {})).output, flush=True)
        await asyncio.sleep(600)


if __name__ == "__main__":
    # Like the console script (`_entry.own_signals`, then the guard), take SIGINT back even
    # when the parent started us with it ignored (CI runners start jobs in the background,
    # where a non-interactive shell sets SIGINT to SIG_IGN and every child inherits it).
    with SignalGuard() as guard:
        try:
            asyncio.run(main(sys.argv[1], guard))
        except (asyncio.CancelledError, KeyboardInterrupt, Interrupted) as exc:
            interrupted = guard.interrupted_by(exc)
            sys.exit(interrupted.exit_code if interrupted is not None else 1)
