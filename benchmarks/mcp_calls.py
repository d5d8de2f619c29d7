"""`make bench`, MCP part: a tool call through our wrapper against the bare SDK `call_tool`.

Side by side, in one run, on the same stdio server process (`mcp-server-time`, its
`get_current_time`):
- *bare SDK*: `ClientSession.call_tool` on the very session our connection owns;
- *ours*: `McpToolWrapper("time", McpRemoteTool).execute`, i.e. `McpConnection.call_tool` plus
  rendering the `CallToolResult` into a `ToolResult`.
Sharing one process and one session keeps the server's and the pipe's own time identical.
The two run interleaved in rounds of 10 calls, so load from elsewhere lands on both alike. Each
figure is the median per-call time; the server's own work is in both alike.

Target (issue 12): ours ≤ 1.1× the bare call. Figures are reported, not asserted: exit 0.

    .venv/bin/python benchmarks/mcp_calls.py [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from zeroclaw_obs.tools.mcp import McpServer
from zeroclaw_obs.tools.mcp_client import StdioParams
from zeroclaw_obs.tools.mcp_session import McpConnection

SERVER = str(Path(sys.executable).parent / "mcp-server-time")
ARGS = ["--local-timezone", "UTC"]
CALL = {"timezone": "UTC"}
ROUND = 10
WARMUP = 20


async def main(calls: int) -> None:
    bare_times: list[float] = []
    ours_times: list[float] = []
    async with McpConnection("time", StdioParams(command=SERVER, args=ARGS)) as connection:
        await connection.list_tools()
        # The benchmark alone reaches into the owned session: the bare SDK call on it.
        session = connection._session
        server = McpServer("time", tools=list(connection.remote_tools()))
        wrapper = next(w for w in server.wrappers() if w.name == "time__get_current_time")
        for _ in range(WARMUP):
            await session.call_tool("get_current_time", CALL)
            await wrapper.execute(CALL)
        while len(bare_times) < calls:
            for _ in range(ROUND):
                start = time.perf_counter()
                await session.call_tool("get_current_time", CALL)
                bare_times.append(time.perf_counter() - start)
            for _ in range(ROUND):
                start = time.perf_counter()
                result = await wrapper.execute(CALL)
                ours_times.append(time.perf_counter() - start)
            assert result.success, result
    bare = statistics.median(bare_times) * 1e6
    ours = statistics.median(ours_times) * 1e6
    ratio = ours / bare
    verdict = "PASS" if ratio <= 1.1 else "MISS"
    print(f"MCP tool call, stdio mcp-server-time get_current_time, median of {calls} calls each")
    print(f"  bare SDK ClientSession.call_tool      {bare:8.1f} µs")
    print(f"  ours McpToolWrapper → McpRemoteTool   {ours:8.1f} µs")
    print(f"  ratio {ratio:.3f}× (target ≤ 1.1×)  {verdict}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    asyncio.run(main(parser.parse_args().calls))
