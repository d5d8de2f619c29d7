"""Tool assembly: the scoped registry and the rules that decide which tools a turn may offer.

This module owns the static half of LIFECYCLE §2. Each rule is one small piece with one
behaviour, tested on its own, and `turn/specs.py` composes them for a turn:

- `ToolRegistry` is a scoped name → tool map; it decides which static tools exist.
- `excluded_tools` is applied twice, with two different matchers: `visible_after_exclusion`
  (exact names, before tools are shown to the model) and `ExcludedNames` / `is_excluded`
  (trimmed and case-insensitive, when a call executes).
- `McpToolFilter` (behind `mcp_tool_visible` and `filter_mcp_tools`) applies
  `tool_filter_groups` to MCP tool names; `always_group_matches` selects deferred stubs to
  pre-activate.

Risky part: the two exclusion matchers differ on purpose. Display removes exactly the names the
operator listed; execution folds whitespace and case and is checked on both the called and the
resolved name, so no spelling of a call reaches an excluded tool. Merging them into one helper
would weaken one of the two checks. Filter groups only ever hide MCP tools: they grant nothing
and never touch built-ins, so callers apply them to MCP wrappers only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol, TypeVar

from ..config import FilterMode, ToolFilterGroup
from .base import Tool

__all__ = [
    "ExcludedNames",
    "McpToolFilter",
    "Named",
    "ToolRegistry",
    "always_group_matches",
    "filter_mcp_tools",
    "is_excluded",
    "mcp_tool_visible",
    "pattern_matches",
    "visible_after_exclusion",
]


class Named(Protocol):
    """Anything the rules can filter by name: a `Tool`, a `DeferredStub`, a `ToolSpec`."""

    @property
    def name(self) -> str:
        """The name the model calls it by."""
        ...


_NamedT = TypeVar("_NamedT", bound=Named)


class ToolRegistry:
    """The static tools of one scope (an agent, a channel runtime), by name.

    Registration order is kept: it is the order in which the tools are offered to the model.
    The registry only says which tools exist; exclusion and filtering are separate rules.

    Args:
        tools: tools to register now, in order.
        scope: a label for the scope this registry serves (for logs and debugging).

    Raises:
        ValueError: two of `tools` share a name, or a name is blank.
    """

    def __init__(self, tools: Iterable[Tool] = (), *, scope: str = "default") -> None:
        self._scope = scope
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.register(item)

    @property
    def scope(self) -> str:
        """The scope label given at construction."""
        return self._scope

    def register(self, tool: Tool) -> Tool:
        """Add `tool` under its name and return it (so it can be used as a decorator).

        Raises:
            ValueError: the name is blank, or a tool with that name is already registered.
        """
        if not tool.name or not tool.name.strip():
            raise ValueError(f"tool name must not be blank (scope {self._scope!r})")
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered in scope {self._scope!r}")
        self._tools[tool.name] = tool
        return tool

    def get(self, name: str) -> Tool | None:
        """The tool registered under exactly `name`, or None."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry(scope={self._scope!r}, names={self.names()!r})"


def _fold(name: str) -> str:
    return name.strip().lower()


class ExcludedNames:
    """The execution-time `excluded_tools` check, with the names folded once.

    A name is excluded when, trimmed and lowercased, it equals a trimmed and lowercased entry of
    `excluded`. The dispatcher checks both the name the model called and the resolved tool's
    real name; building this once per turn keeps each check one set lookup.
    """

    __slots__ = ("_folded",)

    def __init__(self, excluded: Iterable[str]) -> None:
        self._folded = frozenset(_fold(name) for name in excluded)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _fold(name) in self._folded

    def __bool__(self) -> bool:
        return bool(self._folded)


def is_excluded(name: str, excluded: Iterable[str]) -> bool:
    """Whether a call to `name` is refused at execution time (trimmed, case-insensitive).

    Args:
        name: the called name or the resolved tool's real name; callers check both.
        excluded: the configured `excluded_tools`.

    Returns:
        True when `name` matches an entry after trimming and lowercasing both.
    """
    return name in ExcludedNames(excluded)


def visible_after_exclusion(tools: Iterable[_NamedT], excluded: Iterable[str]) -> list[_NamedT]:
    """Drop the items whose name is exactly in `excluded`, before they are shown to the model.

    Display-time exclusion is an exact match; execution-time exclusion (`is_excluded`) is the
    looser check that catches every other spelling.

    Returns:
        The remaining items, in their original order.
    """
    hidden = frozenset(excluded)
    return [item for item in tools if item.name not in hidden]


def pattern_matches(pattern: str, name: str) -> bool:
    """Whether a `tool_filter_groups` pattern matches a tool name.

    A pattern without `*` must equal the name. Otherwise it is split at the first `*`: the name
    must start with the text before it and end with the text after it. Any further `*` in that
    suffix is removed rather than matched literally (there is no multi-wildcard matching: `a*b*c`
    matches `axbc` but not `axbxc`), and prefix and suffix may not overlap, so `ab*ba` does not
    match `aba`.

    Examples: `srv__*` matches `srv__read`; `*_read` matches `fs_read`; `a*b` matches `ab` and
    `axyzb`; `*` matches everything.
    """
    star = pattern.find("*")
    if star < 0:
        return pattern == name
    prefix = pattern[:star]
    suffix = pattern[star + 1 :].replace("*", "")
    return (
        len(name) >= len(prefix) + len(suffix) and name.startswith(prefix) and name.endswith(suffix)
    )


class McpToolFilter:
    """`tool_filter_groups` compiled for one user message; call it with an MCP tool name.

    With no groups every MCP tool is visible. Otherwise a tool is visible when some group
    includes it: one of the group's patterns matches the name, and the group is `always` or the
    lowercased user message contains one of its lowercased keywords. Which groups are active
    depends only on the message, so that is decided once here and each call only matches
    patterns.

    Apply it to MCP tools only: built-in tools are never excluded by groups.
    """

    __slots__ = ("_active_patterns", "_has_groups")

    def __init__(self, groups: Iterable[ToolFilterGroup], user_message: str) -> None:
        groups = tuple(groups)
        message = user_message.lower()
        self._has_groups = bool(groups)
        self._active_patterns = tuple(
            pattern
            for group in groups
            if group.mode == FilterMode.ALWAYS
            or any(keyword.lower() in message for keyword in group.keywords)
            for pattern in group.tools
        )

    def __call__(self, name: str) -> bool:
        if not self._has_groups:
            return True
        return any(pattern_matches(pattern, name) for pattern in self._active_patterns)


def mcp_tool_visible(name: str, groups: Iterable[ToolFilterGroup], user_message: str) -> bool:
    """Whether the MCP tool `name` is shown to the model this turn (see `McpToolFilter`)."""
    return McpToolFilter(groups, user_message)(name)


def filter_mcp_tools(
    tools: Iterable[_NamedT], groups: Iterable[ToolFilterGroup], user_message: str
) -> list[_NamedT]:
    """The MCP tools whose schemas are visible this turn, in their original order.

    Args:
        tools: MCP tool wrappers (never built-ins: groups do not apply to them).
        groups: the configured `tool_filter_groups`.
        user_message: the message that started the turn; dynamic groups look for keywords in it.
    """
    visible = McpToolFilter(groups, user_message)
    return [item for item in tools if visible(item.name)]


def always_group_matches(name: str, groups: Iterable[ToolFilterGroup]) -> bool:
    """Whether an `always` group has a pattern matching `name` (deferred stubs to pre-activate)."""
    return any(
        pattern_matches(pattern, name)
        for group in groups
        if group.mode == FilterMode.ALWAYS
        for pattern in group.tools
    )
