"""Real MCP servers: what a connection is given and what it gives back.

This module owns the plain parts of the MCP client: the server parameters (`StdioParams`,
`HttpParams`), the live catalog entry (`RemoteToolInfo`), the restart schedule (`Backoff`), how a
`CallToolResult` becomes a `ToolResult` (`render_call_result`), the exact unavailable text, and
`McpRemoteTool`: one engine `Tool` per remote tool, so `McpServer`/`McpToolWrapper`
(`server__tool`) work unchanged. The connection itself, owned by one task, is
`tools/mcp_session.McpConnection`.

Nothing here imports the `mcp` SDK: the scripted/demo path may import this module freely; only
`mcp_session` and its `_mcp_wire` import the SDK, and only inside the code that connects a real
server.

Risky part: rendering is lossy on purpose. Binary content (images, audio, blob resources) never
reaches the model, only a marker with its size; a server that sends both text and structured
content is read through its text (the spec asks servers to put the JSON there).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .base import Provenance, Tool, ToolResult
from .mcp import read_only_hint

if TYPE_CHECKING:
    from .mcp_session import McpConnection

__all__ = [
    "Backoff",
    "HttpParams",
    "McpConnectError",
    "McpRemoteTool",
    "ProgressCallback",
    "RemoteToolInfo",
    "StdioParams",
    "current_progress",
    "format_seconds",
    "render_call_result",
    "unavailable_text",
]

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]
"""`(progress, total, message)` for each `notifications/progress` of a call; may be async."""

current_progress: ContextVar[ProgressCallback | None] = ContextVar(
    "zeroclaw_mcp_progress", default=None
)
"""The progress callback of the tool call running in this context. The dispatcher sets it
around `execute` so an `McpRemoteTool` reports progress without a new `Tool` signature."""


class McpConnectError(ConnectionError):
    """Raised by `McpConnection.start()` when a server cannot be started or initialized in time."""


def unavailable_text(server: str) -> str:
    """`MCP server '{server}' is not available` (the slot reads `Error: …`)."""
    return f"MCP server '{server}' is not available"


@dataclass(frozen=True, kw_only=True, slots=True)
class StdioParams:
    """A stdio server: a command the runtime starts, owns and stops."""

    command: str
    """The executable (looked up on PATH)."""

    args: Sequence[str] = ()
    """Its arguments."""

    env: Mapping[str, str] | None = None
    """Variables merged over the SDK's minimal environment; nothing else is inherited."""

    cwd: str | None = None
    """Working directory; the runtime's own when None."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HttpParams:
    """A streamable-HTTP server the runtime connects to but does not own."""

    url: str
    """The MCP endpoint, e.g. `http://127.0.0.1:8931/mcp`."""

    headers: Mapping[str, str] = field(default_factory=dict)
    """Request headers; the caller reads their values from the env vars the agent file names."""

    timeout_s: float = 30.0
    """HTTP connect/write timeout (the SDK's default)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RemoteToolInfo:
    """One tool of the live catalog, as the server listed it."""

    name: str
    """The server's own name of the tool (no `server__` prefix)."""

    description: str
    """Its description ('' when the server gave none)."""

    input_schema: dict[str, Any]
    """`inputSchema`: the JSON schema of its arguments."""

    annotations: Mapping[str, Any]
    """`annotations` in wire spelling (`readOnlyHint`, `destructiveHint`, …); empty when none."""


@dataclass(slots=True)
class Backoff:
    """Exponential backoff state for restarting a dead server.

    `ready(now)` says whether an attempt may be made; `failed(now)` schedules the next one
    `delay` seconds later and doubles `delay` up to `max_s`; `reset()` after a success.
    """

    initial_s: float = 1.0
    max_s: float = 60.0
    delay: float = field(init=False)
    next_at: float = field(init=False, default=float("-inf"))

    def __post_init__(self) -> None:
        self.delay = self.initial_s

    def ready(self, now: float) -> bool:
        """Whether an attempt may be made at `now`."""
        return now >= self.next_at

    def failed(self, now: float) -> None:
        """Record a failed attempt at `now`: wait `delay`, then double it (capped)."""
        self.next_at = now + self.delay
        self.delay = min(self.delay * 2, self.max_s)

    def reset(self) -> None:
        """Forget past failures: the next attempt may be made at once."""
        self.delay = self.initial_s
        self.next_at = float("-inf")


def format_seconds(seconds: float) -> str:
    """`120` for whole seconds, `0.05` otherwise."""
    # Same spelling as turn/results.format_seconds (tools never import the turn package).
    if seconds == int(seconds):
        return str(int(seconds))
    return f"{seconds:.6f}".rstrip("0").rstrip(".")


def _b64_size(data: str) -> int:
    data = data.strip()
    return max(0, len(data) * 3 // 4 - (len(data) - len(data.rstrip("="))))


def render_call_result(result: Any) -> ToolResult:
    """Turn a `CallToolResult` into the `ToolResult` the model reads.

    Text blocks are joined with newlines. Structured content is rendered as JSON text when the
    result has no text block (a server that sends both already put the JSON in its text, as the
    spec asks). Images and audio become `[image: image/png, 8 bytes]`, resource links and
    embedded resources `[resource: uri]` (an embedded text resource's text follows its marker).
    `isError: true` makes a failed result carrying the same text.
    """
    parts: list[str] = []
    has_text = False
    for block in result.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            has_text = True
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {block.mime_type}, {_b64_size(block.data)} bytes]")
        elif kind == "resource_link":
            parts.append(f"[resource: {block.uri}]")
        elif kind == "resource":
            inner = block.resource
            text = getattr(inner, "text", None)
            marker = f"[resource: {inner.uri}]"
            parts.append(marker if text is None else f"{marker}\n{text}")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    if result.structured_content is not None and not has_text:
        structured = json.dumps(result.structured_content, ensure_ascii=False, default=str)
        parts.insert(0, structured)
    text = "\n".join(parts)
    if result.is_error:
        return ToolResult.fail(text or "the tool reported an error")
    return ToolResult.ok(text)


class McpRemoteTool(Tool):
    """One remote tool as an engine `Tool`, under the server's own name.

    `McpServer(name, tools=connection.remote_tools())` then wraps each under `server__tool`.
    `read_only` comes from `readOnlyHint: true` (see `tools/mcp.read_only_hint`); the
    annotations are kept for approval and audit. Progress goes to `current_progress`, the
    callback the dispatcher sets for the running call.

    Args:
        connection: the server's connection; calls go through it.
        info: the tool as last listed.
        timeout_s: a per-call timeout of its own; None leaves it to the dispatcher's
            `tool_timeout_s` (whose cancellation still reaches the server).
    """

    provenance = Provenance.EXTENSION

    def __init__(
        self, connection: McpConnection, info: RemoteToolInfo, *, timeout_s: float | None = None
    ) -> None:
        self.connection = connection
        """The connection calls go through."""
        self.info = info
        """The tool as the server listed it."""
        self.name = info.name
        self.description = info.description
        self.annotations: Mapping[str, Any] = dict(info.annotations)
        """The server's annotations in wire spelling; read by `McpToolWrapper`."""
        self.read_only = read_only_hint(self.annotations)
        self.timeout_s = timeout_s

    def parameters_schema(self) -> dict[str, Any]:
        return self.info.input_schema

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        return await self.connection.call_tool(
            self.name, args, timeout_s=self.timeout_s, on_progress=current_progress.get()
        )

    def __repr__(self) -> str:
        return f"McpRemoteTool({self.connection.name!r}, {self.name!r})"
