"""The `mcp` SDK side of one MCP connection: transports, the stderr pipe, SDK objects to ours.

`tools/mcp_session.McpConnection` decides when a server is started, used and stopped; this
module is what it calls to reach the SDK: entering a stdio or streamable-HTTP transport on the
owner's `AsyncExitStack`, reading a stdio server's stderr pipe line by line, paging through
`tools/list`, and turning the SDK's objects and errors into ours (`RemoteToolInfo`, the
`MCP error {code}: {message}` text, whether an exception means the connection is lost). The
SDK is imported inside each function, so importing this module costs nothing.

Nothing here holds state or redacts: every line, reason and text it returns is raw, and the
connection passes it through its `Redactor` before it leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
from collections.abc import Awaitable, Callable
from typing import Any

from .mcp_client import HttpParams, ProgressCallback, RemoteToolInfo, StdioParams

__all__ = [
    "enter_http",
    "enter_stdio",
    "is_connection_loss",
    "list_all_tools",
    "mcp_error_text",
    "progress_adapter",
    "read_stderr",
    "tool_info",
]


# -- transports -------------------------------------------------------------------------------


async def enter_stdio(
    stack: contextlib.AsyncExitStack, params: StdioParams
) -> tuple[Any, Any, int]:
    """Start a stdio server inside `stack`; its stderr goes to a pipe the caller reads.

    The server gets the SDK's minimal environment with `params.env` merged over it.

    Returns:
        The transport's `(read, write)` streams and the read end of the stderr pipe, which the
        caller owns from here on (hand it to `read_stderr`, which closes it).
    """
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(
        command=params.command,
        args=list(params.args),
        env=dict(params.env) if params.env is not None else None,
        cwd=params.cwd,
    )
    read_fd, write_fd = os.pipe()
    errlog = os.fdopen(write_fd, "w")
    try:
        read, write = await stack.enter_async_context(stdio_client(server, errlog=errlog))
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        # The child holds its own copy; ours must go so the pipe ends when the child does.
        errlog.close()
    return read, write, read_fd


async def enter_http(
    stack: contextlib.AsyncExitStack,
    params: HttpParams,
    on_response: Callable[[Any], Awaitable[None]],
) -> tuple[Any, Any]:
    """Open a streamable-HTTP session inside `stack`; `on_response` sees every HTTP response.

    Returns:
        The transport's `(read, write)` streams.
    """
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    client = create_mcp_http_client(
        headers=dict(params.headers),
        timeout=httpx2.Timeout(params.timeout_s, read=300.0),
    )
    client.event_hooks["response"].append(on_response)
    await stack.enter_async_context(client)
    read, write = await stack.enter_async_context(
        streamable_http_client(params.url, http_client=client)
    )
    return read, write


async def read_stderr(fd: int, on_line: Callable[[str], None]) -> None:
    """Hand each line written to the pipe `fd` to `on_line` (raw); return at EOF.

    EOF means the process closed stderr, which in practice means it exited. A line over the
    reader's limit is handed on in pieces. Closes `fd`.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    pipe = os.fdopen(fd, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    try:
        while True:
            try:
                raw = await reader.readline()
            except ValueError:  # a line over the StreamReader limit: take what is there
                raw = await reader.read(65536)
            if not raw:
                break
            on_line(raw.decode("utf-8", "replace").rstrip("\r\n"))
    finally:
        transport.close()


# -- requests and their results ---------------------------------------------------------------


async def list_all_tools(session: Any) -> list[RemoteToolInfo]:
    """Every page of `tools/list` on the live `ClientSession`, in the server's order."""
    tools: list[RemoteToolInfo] = []
    cursor: str | None = None
    while True:
        params = None
        if cursor is not None:
            import mcp_types

            params = mcp_types.PaginatedRequestParams(cursor=cursor)
        page = await session.list_tools(params=params)
        tools.extend(tool_info(item) for item in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools


def tool_info(tool: Any) -> RemoteToolInfo:
    """One catalog entry from the SDK's `Tool` (annotations in their wire spelling)."""
    annotations = tool.annotations
    wire = annotations.model_dump(by_alias=True, exclude_none=True) if annotations else {}
    return RemoteToolInfo(
        name=tool.name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        annotations=wire,
    )


def progress_adapter(on_progress: ProgressCallback) -> Callable[..., Awaitable[None]]:
    """The SDK's async progress callback around ours, which may be sync or async."""

    async def report(progress: float, total: float | None, message: str | None) -> None:
        outcome = on_progress(progress, total, message)
        if inspect.isawaitable(outcome):
            await outcome

    return report


# -- errors -----------------------------------------------------------------------------------


def is_connection_loss(exc: BaseException) -> bool:
    """True when `exc` means the server is gone (closed connection, broken stream, OS or
    HTTP transport error), not that one request failed."""
    import anyio
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(exc, MCPError):
        return exc.code == CONNECTION_CLOSED
    if isinstance(exc, anyio.BrokenResourceError | anyio.ClosedResourceError | OSError):
        return True
    return type(exc).__module__.startswith("httpx")


def mcp_error_text(exc: BaseException) -> str | None:
    """`MCP error {code}: {message}` (raw) for a protocol error; None for anything else."""
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, MCPError):
        return f"MCP error {exc.code}: {exc.message}"
    return None
