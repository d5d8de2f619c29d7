"""A runtime stand-in for the shutdown tests: connects to the toolbox and prints its pid.

`python hold_connection.py hold`: `async with McpConnection(...)`, then waits (for Ctrl-C).
`python hold_connection.py forget`: starts a connection and returns without closing it, so only
`asyncio.run`'s own teardown (cancelling the owner task) can stop the server.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from zeroclaw_obs.tools.mcp_client import StdioParams
from zeroclaw_obs.tools.mcp_session import McpConnection

TOOLBOX = StdioParams(command=sys.executable, args=[str(Path(__file__).parent / "toolbox.py")])


async def main(mode: str) -> None:
    connection = McpConnection("box", TOOLBOX)
    if mode == "forget":
        await connection.start()
        print((await connection.call_tool("pid", {})).output, flush=True)
        return
    async with connection:
        print((await connection.call_tool("pid", {})).output, flush=True)
        await asyncio.sleep(600)


if __name__ == "__main__":
    # Like the console script (`_entry.own_signals`), take SIGINT back even when the parent
    # started us with it ignored (CI runners start jobs in the background, where a
    # non-interactive shell sets SIGINT to SIG_IGN and every child inherits it).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        asyncio.run(main(sys.argv[1]))
    except KeyboardInterrupt:
        sys.exit(130)
