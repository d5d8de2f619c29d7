"""A small MCP server written with the SDK, for the MCP client tests.

Run as `python toolbox.py` (stdio) or `python toolbox.py --http PORT` (streamable HTTP on
127.0.0.1). Each tool stages one case the client must handle: plain text, `isError`, structured
content, image/audio/resource content, a call that hangs (and records that the client cancelled
it), slow progress, a crash mid-call, a tool list that changes, and lines on stderr.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import BaseModel

server = MCPServer("toolbox")
cancelled: list[str] = []


class Weather(BaseModel):
    city: str
    celsius: float


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def fail(reason: str) -> str:
    """Always fails with the reason (an isError result)."""
    raise ToolError(reason)


@server.tool()
def weather(city: str) -> Weather:
    """Structured output."""
    return Weather(city=city, celsius=21.5)


@server.tool()
def bare_structured() -> CallToolResult:
    """Structured content with no text block."""
    return CallToolResult(content=[], structured_content={"rows": [1, 2], "ok": True})


@server.tool()
def media() -> list:
    """Image, audio, a resource link and an embedded text resource."""
    return [
        TextContent(text="here you go"),
        ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
        AudioContent(data="UklGRg==", mime_type="audio/wav"),
        ResourceLink(uri="file:///tmp/report.txt", name="report"),
        EmbeddedResource(resource=TextResourceContents(uri="mem://note", text="a note")),
    ]


@server.tool()
async def hang(tag: str, ctx: Context) -> str:
    """Never returns; reports progress 0 once started, records the tag when cancelled."""
    await ctx.report_progress(0, None, "started")
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        cancelled.append(tag)
        raise
    return "unreachable"


@server.tool()
def cancellations() -> str:
    """The tags of the calls cancelled so far, comma-separated."""
    return ",".join(cancelled)


@server.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Reports progress `steps` times, then returns."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        await anyio.sleep(0.01)
    return f"done after {steps} steps"


@server.tool()
def crash() -> str:
    """Exits the server process in the middle of the call."""
    os._exit(3)


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `extra` and tells the client its tool list changed."""
    server.add_tool(_extra, name="extra", description="Added at run time.")
    await ctx.session.send_tool_list_changed()
    return "grown"


def _extra() -> str:
    return "extra"


@server.tool()
def shout(text: str) -> str:
    """Writes the text to stderr, then returns."""
    print(text, file=sys.stderr, flush=True)
    return "said"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
