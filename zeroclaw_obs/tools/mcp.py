"""MCP tools as engine tools: a server's tools wrapped under `server__tool` names.

This module owns how an MCP server's tools enter a turn. `McpToolWrapper` is a thin delegating
`Tool` that only renames (the way pydantic-ai's prefixed toolset does) and marks the tool as
`extension`; schema, validation and execution all belong to the wrapped tool. Whether a wrapper
is offered directly or only through `tool_search` is the server's `deferred` flag, read by
`turn/specs.py`.

The seam: an `McpServer` is given `Tool` objects. Scripted scenario tools and test tools are
in-process; a real server's are `McpRemoteTool`s (`tools/mcp_client.py`), one per remote tool,
whose `execute` calls the server's `McpConnection` (`tools/mcp_session.py`). Such a server keeps
its `connection`, so `catalog_changed` and `refresh()` follow `notifications/tools/list_changed`.
Nothing else in the engine changes, and this module never imports the `mcp` SDK.

A server's tool annotations (MCP `ToolAnnotations`: `readOnlyHint`, `destructiveHint`, …) are
kept on the wrapper. `readOnlyHint: true` makes the wrapper `read_only`, so it may run under
`autonomy: read_only`; any other value, or none, leaves it not read-only. Annotations are the
server's own claim: an operator who does not trust a server's hints should not connect it to
a read-only agent.

Risky part: the `__` separator is what short-name resolution (`ActivatedToolSet`) and filter
patterns such as `srv__*` rely on, so the wrapper name is always exactly `f"{server}__{name}"`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .base import ArgumentError, Provenance, Tool, ToolResult

if TYPE_CHECKING:
    from .mcp_session import McpConnection

__all__ = ["McpServer", "McpToolWrapper", "read_only_hint"]


def read_only_hint(annotations: Mapping[str, Any] | None) -> bool:
    """Whether MCP tool annotations declare the tool read-only.

    Args:
        annotations: the tool's `annotations` as the server listed them, or None.

    Returns:
        True only for `readOnlyHint` set to the boolean `true` without `destructiveHint`
        set to `true` (a tool that claims both is destructive, as approval reads it); a
        string, a number or a missing hint is not a declaration.
    """
    return (
        isinstance(annotations, Mapping)
        and annotations.get("readOnlyHint") is True
        and annotations.get("destructiveHint") is not True
    )


class McpToolWrapper(Tool):
    """A server's tool under the name `f"{server}__{tool.name}"`, attributed as `extension`.

    Args:
        server: the MCP server's name.
        tool: the tool as the server describes it; everything but the name is delegated to it.
        annotations: the tool's MCP annotations as the server listed them; when None, the
            wrapped tool's own `annotations` attribute, if it has one.

    Raises:
        ValueError: `server` is blank.
    """

    provenance = Provenance.EXTENSION

    def __init__(
        self, server: str, tool: Tool, *, annotations: Mapping[str, Any] | None = None
    ) -> None:
        if not server.strip():
            raise ValueError("MCP server name must not be blank")
        self.server = server
        """The server this tool belongs to."""
        self.wrapped = tool
        """The tool as the server names it; calls are delegated to it."""
        self.name = f"{server}__{tool.name}"
        self.description = tool.description
        if annotations is None:
            annotations = getattr(tool, "annotations", None)
        self.annotations: Mapping[str, Any] = dict(annotations or {})
        """The server's annotations of this tool (empty when it sent none)."""
        self.read_only = tool.read_only or read_only_hint(self.annotations)

    def parameters_schema(self) -> dict[str, Any]:
        return self.wrapped.parameters_schema()

    def validate_arguments(self, args: dict[str, Any]) -> dict[str, Any] | ArgumentError:
        return self.wrapped.validate_arguments(args)

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        return await self.wrapped.execute(args)

    def span_attributes(self) -> dict[str, Any]:
        """The MCP semantic-convention attributes of a call's `execute_tool` span (DESIGN §3).

        Empty for an in-process (scripted) server. For a real one: `mcp.method.name`,
        `network.transport`, and `mcp.protocol.version` / `mcp.session.id` once the server
        has said them (the session id only over streamable HTTP).
        """
        connection = getattr(self.wrapped, "connection", None)
        if connection is None:
            return {}
        attributes: dict[str, Any] = {
            "mcp.method.name": "tools/call",
            "network.transport": connection.network_transport,
        }
        if connection.protocol_version:
            attributes["mcp.protocol.version"] = connection.protocol_version
        if connection.session_id:
            attributes["mcp.session.id"] = connection.session_id
        return attributes

    def __repr__(self) -> str:
        return f"McpToolWrapper({self.server!r}, {self.wrapped.name!r})"


@dataclass(slots=True)
class McpServer:
    """An MCP server as the turn sees it: a name, its tools, and how they are offered."""

    name: str
    """Prefix of every tool name (`{name}__{tool}`); read by `wrappers`."""

    tools: list[Tool]
    """The server's tools under their own names; a real session provides one `Tool` each."""

    deferred: bool = False
    """True: reachable only through `tool_search`; False: offered directly (subject to
    `tool_filter_groups`). Read by `EffectiveTools.build`."""

    connection: McpConnection | None = None
    """The live connection of a real server; None for scripted and in-process tools."""

    tool_timeout_s: float | None = None
    """A per-call timeout for a real server's tools; None leaves it to `tool_timeout_s`."""

    @classmethod
    async def connect(
        cls,
        connection: McpConnection,
        *,
        deferred: bool = False,
        tool_timeout_s: float | None = None,
    ) -> McpServer:
        """A real server's `McpServer`: its live catalog as `McpRemoteTool`s.

        The connection must be started (`await connection.start()`); it is named like the
        server, so the wrappers are `{connection.name}__{tool}`.

        Raises:
            McpConnectError: the server is not available.
        """
        server = cls(
            connection.name,
            [],
            deferred=deferred,
            connection=connection,
            tool_timeout_s=tool_timeout_s,
        )
        await connection.list_tools()
        server.tools = list(connection.remote_tools(timeout_s=tool_timeout_s))
        return server

    @property
    def catalog_changed(self) -> bool:
        """True when a real server announced a new tool list that `refresh()` has not read."""
        return self.connection is not None and self.connection.catalog_changed

    async def refresh(self) -> bool:
        """Re-list a real server's tools if it announced a change.

        Returns:
            True when `tools` was replaced (rebuild the turn's effective tools); False for a
            scripted server or an unchanged catalog.

        Raises:
            McpConnectError: the server is not available.
        """
        if self.connection is None or not self.connection.catalog_changed:
            return False
        await self.connection.list_tools()
        self.tools = list(self.connection.remote_tools(timeout_s=self.tool_timeout_s))
        return True

    def wrappers(self) -> list[McpToolWrapper]:
        """One `McpToolWrapper` per tool, in the server's order.

        Raises:
            ValueError: the server name is blank.
        """
        return [McpToolWrapper(self.name, item) for item in self.tools]
