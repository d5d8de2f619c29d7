"""Tests for `zeroclaw_obs.tools.registry`: the registry, exclusion and filter-group rules."""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_obs.config import FilterMode, ToolFilterGroup
from zeroclaw_obs.tools.base import Tool, ToolResult
from zeroclaw_obs.tools.registry import (
    ExcludedNames,
    McpToolFilter,
    ToolRegistry,
    always_group_matches,
    filter_mcp_tools,
    is_excluded,
    mcp_tool_visible,
    pattern_matches,
    visible_after_exclusion,
)


class NamedTool(Tool):
    """A do-nothing tool with a given name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def parameters_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {}}

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        return ToolResult.ok(self.name)


def names_of(tools: list[Any]) -> list[str]:
    return [t.name for t in tools]


def dynamic(tools: list[str], keywords: list[str]) -> ToolFilterGroup:
    return ToolFilterGroup(mode=FilterMode.DYNAMIC, tools=tools, keywords=keywords)


def always(tools: list[str]) -> ToolFilterGroup:
    return ToolFilterGroup(mode=FilterMode.ALWAYS, tools=tools)


class TestToolRegistry:
    def test_keeps_registration_order(self) -> None:
        """Tools iterate and list in the order they were registered."""
        registry = ToolRegistry([NamedTool("b"), NamedTool("a")])
        registry.register(NamedTool("c"))

        assert ["b", "a", "c"] == registry.names()
        assert ["b", "a", "c"] == names_of(list(registry))
        assert 3 == len(registry)

    def test_get_and_contains_use_exact_names(self) -> None:
        """`get` and `in` find a tool by its exact name only."""
        shell = NamedTool("shell")
        registry = ToolRegistry([shell])

        assert shell is registry.get("shell")
        assert registry.get("Shell") is None
        assert "shell" in registry
        assert "SHELL" not in registry

    def test_duplicate_name_is_rejected(self) -> None:
        """Registering a second tool under a taken name raises ValueError."""
        registry = ToolRegistry([NamedTool("shell")])

        with pytest.raises(ValueError, match="already registered"):
            registry.register(NamedTool("shell"))

    def test_blank_name_is_rejected(self) -> None:
        """A tool with a blank name cannot be registered."""
        with pytest.raises(ValueError, match="blank"):
            ToolRegistry([NamedTool("  ")])

    def test_scope_is_kept(self) -> None:
        """The registry remembers the scope it serves."""
        assert "channel:web" == ToolRegistry(scope="channel:web").scope
        assert "default" == ToolRegistry().scope

    def test_register_returns_the_tool(self) -> None:
        """`register` returns the tool it added."""
        tool = NamedTool("x")

        assert tool is ToolRegistry().register(tool)


class TestExcludedNames:
    def test_matches_trimmed_and_case_insensitive(self) -> None:
        """Execution-time exclusion trims and folds case on both sides."""
        excluded = ExcludedNames([" Shell "])

        assert "shell" in excluded
        assert "  SHELL\t" in excluded
        assert "shell2" not in excluded

    def test_is_falsy_when_empty(self) -> None:
        """An empty exclusion list excludes nothing and is falsy."""
        assert not ExcludedNames([])
        assert "shell" not in ExcludedNames([])


class TestIsExcluded:
    @pytest.mark.parametrize("called", ["shell", " shell", "SHELL ", "Shell"])
    def test_trimmed_case_insensitive(self, called: str) -> None:
        """Any spelling differing only in case or surrounding whitespace is excluded."""
        assert is_excluded(called, ["shell"])

    def test_other_names_pass(self) -> None:
        """A name not in `excluded_tools` is not excluded."""
        assert not is_excluded("file_read", ["shell"])


class TestVisibleAfterExclusion:
    def test_removes_exact_names_only(self) -> None:
        """Display-time exclusion removes exact names: `SHELL` does not hide `shell`."""
        tools = [NamedTool("shell"), NamedTool("file_read"), NamedTool("http")]

        assert ["file_read", "http"] == names_of(visible_after_exclusion(tools, ["shell"]))
        assert ["shell", "file_read", "http"] == names_of(
            visible_after_exclusion(tools, ["SHELL", " http"])
        )

    def test_keeps_order(self) -> None:
        """Remaining tools keep their original order."""
        tools = [NamedTool("c"), NamedTool("a"), NamedTool("b")]

        assert ["c", "b"] == names_of(visible_after_exclusion(tools, ["a"]))


class TestPatternMatches:
    @pytest.mark.parametrize(
        ("pattern", "name", "expected"),
        [
            ("srv__read", "srv__read", True),
            ("srv__read", "srv__read2", False),
            ("srv__read", "SRV__read", False),
            ("srv__*", "srv__read", True),
            ("srv__*", "srv__", True),
            ("srv__*", "other__read", False),
            ("*_read", "fs_read", True),
            ("*_read", "fs_write", False),
            ("a*b", "ab", True),
            ("a*b", "axyzb", True),
            ("a*b", "axyzc", False),
            ("*", "anything", True),
            ("ab*ba", "aba", False),
            ("ab*ba", "abba", True),
            ("a*b*c", "abc", True),
            ("a*b*c", "axbxc", False),
            ("a*b*c", "axbc", True),
            ("a*b*c", "a*b", False),
        ],
    )
    def test_glob_rule(self, pattern: str, name: str, expected: bool) -> None:
        """No `*` is exact; otherwise prefix before the first `*` and suffix after it must match."""
        assert expected == pattern_matches(pattern, name)

    def test_prefix_and_suffix_do_not_overlap(self) -> None:
        """A name shorter than prefix plus suffix never matches (`ab*ba` vs `aba`)."""
        assert not pattern_matches("ab*ba", "aba")


class TestMcpToolFilter:
    def test_no_groups_everything_visible(self) -> None:
        """With no groups every MCP tool is visible."""
        visible = McpToolFilter([], "anything")

        assert visible("srv__read")
        assert visible("other__write")

    def test_always_group_ignores_message(self) -> None:
        """An `always` group includes matching tools whatever the message says."""
        visible = McpToolFilter([always(["srv__*"])], "")

        assert visible("srv__read")
        assert not visible("other__read")

    def test_dynamic_group_needs_keyword(self) -> None:
        """A `dynamic` group includes tools only when the message contains one of its keywords."""
        group = dynamic(["wx__*"], ["weather", "forecast"])

        assert McpToolFilter([group], "what's the forecast?")("wx__today")
        assert not McpToolFilter([group], "book a flight")("wx__today")

    def test_keywords_are_case_insensitive(self) -> None:
        """Lowercased message and lowercased keywords are compared."""
        group = dynamic(["wx__*"], ["WeAtHeR"])

        assert McpToolFilter([group], "Is the WEATHER nice in Oslo?")("wx__today")

    def test_dynamic_group_without_keywords_includes_nothing(self) -> None:
        """A dynamic group with no keywords never makes a tool visible."""
        assert not McpToolFilter([dynamic(["wx__*"], [])], "weather")("wx__today")

    def test_unmatched_tool_hidden_when_groups_exist(self) -> None:
        """Once groups exist, a tool no group includes is hidden."""
        visible = McpToolFilter([always(["srv__*"])], "")

        assert not visible("db__query")

    def test_keyword_active_group_still_needs_pattern(self) -> None:
        """A group whose keyword matched still only includes tools its patterns match."""
        visible = McpToolFilter([dynamic(["wx__*"], ["weather"])], "weather")

        assert not visible("db__query")

    def test_mode_defaults_to_dynamic(self) -> None:
        """A group without `mode` is `dynamic`."""
        group = ToolFilterGroup(tools=["wx__*"], keywords=["rain"])

        assert not McpToolFilter([group], "hello")("wx__today")
        assert McpToolFilter([group], "Rain tomorrow?")("wx__today")


class TestMcpToolVisible:
    def test_delegates_to_filter(self) -> None:
        """`mcp_tool_visible` applies the same rule for a single name."""
        groups = [dynamic(["wx__*"], ["weather"])]

        assert mcp_tool_visible("wx__today", groups, "weather please")
        assert not mcp_tool_visible("wx__today", groups, "hello")
        assert mcp_tool_visible("anything", [], "hello")


class TestFilterMcpTools:
    def test_filters_in_order(self) -> None:
        """Only included tools remain, in their original order."""
        tools = [NamedTool("wx__a"), NamedTool("db__q"), NamedTool("wx__b")]

        assert ["wx__a", "wx__b"] == names_of(
            filter_mcp_tools(tools, [dynamic(["wx__*"], ["weather"])], "WEATHER")
        )

    def test_no_groups_keeps_all(self) -> None:
        """With no groups every MCP tool is kept."""
        tools = [NamedTool("wx__a"), NamedTool("db__q")]

        assert ["wx__a", "db__q"] == names_of(filter_mcp_tools(tools, [], ""))


class TestAlwaysGroupMatches:
    def test_only_always_groups_count(self) -> None:
        """Pre-activation follows `always` groups only, never dynamic ones."""
        groups = [always(["wx__*"]), dynamic(["db__*"], ["db"])]

        assert always_group_matches("wx__forecast", groups)
        assert not always_group_matches("db__query", groups)
        assert not always_group_matches("wx__forecast", [])
