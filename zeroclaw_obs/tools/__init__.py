"""Tool definition and assembly: `Tool`, `@tool`, the registry, MCP wrappers, deferred tools."""

from .base import ArgumentError, FunctionTool, Provenance, Tool, ToolResult, ToolSpec, tool
from .deferred import ActivatedToolSet, DeferredCatalog, DeferredStub, ToolSearchTool
from .mcp import McpServer, McpToolWrapper
from .registry import ToolRegistry

__all__ = [
    "ActivatedToolSet",
    "ArgumentError",
    "DeferredCatalog",
    "DeferredStub",
    "FunctionTool",
    "McpServer",
    "McpToolWrapper",
    "Provenance",
    "Tool",
    "ToolRegistry",
    "ToolResult",
    "ToolSearchTool",
    "ToolSpec",
    "tool",
]
