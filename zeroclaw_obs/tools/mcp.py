"""MCP tools as engine tools: a server's tools wrapped under `server__tool` names.

This module owns how an MCP server's tools enter a turn. `McpToolWrapper` is a thin delegating
`Tool` that only renames (the way pydantic-ai's prefixed toolset does) and marks the tool as
`extension`; schema, validation and execution all belong to the wrapped tool. Whether a wrapper
is offered directly or only through `tool_search` is the server's `deferred` flag, read by
`turn/specs.py`.

The seam: an `McpServer` is given `Tool` objects. Here they are in-process tools (scripted
scenario tools, test tools); a real MCP client session plugs in by providing one `Tool` per
remote tool whose `execute` calls the session. Nothing else in the engine changes.

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
from typing import Any

from .base import ArgumentError, Provenance, Tool, ToolResult

__all__ = ["McpServer", "McpToolWrapper", "read_only_hint"]


def read_only_hint(annotations: Mapping[str, Any] | None) -> bool:
    """Whether MCP tool annotations declare the tool read-only.

    Args:
        annotations: the tool's `annotations` as the server listed them, or None.

    Returns:
        True only for `readOnlyHint` set to the boolean `true`; a string, a number or a
        missing hint is not a declaration.
    """
    return isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True


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

    def wrappers(self) -> list[McpToolWrapper]:
        """One `McpToolWrapper` per tool, in the server's order.

        Raises:
            ValueError: the server name is blank.
        """
        return [McpToolWrapper(self.name, item) for item in self.tools]
