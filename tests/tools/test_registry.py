"""Tests for `zeroclaw_obs.tools.registry`: the registry, exclusion and filter-group rules, and
the tool policy (bundles, risk profile, narrowing)."""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_obs.config import ApprovalAutonomy, ApprovalConfig, FilterMode, ToolFilterGroup
from zeroclaw_obs.tools.base import Tool, ToolResult
from zeroclaw_obs.tools.mcp import McpToolWrapper
from zeroclaw_obs.tools.registry import (
    ExcludedNames,
    McpToolFilter,
    RiskProfile,
    ToolBundle,
    ToolPolicy,
    ToolRegistry,
    always_group_matches,
    declares_read_only,
    filter_mcp_tools,
    is_excluded,
    mcp_tool_visible,
    pattern_matches,
    pattern_reaches_server,
    profile_approval,
    visible_after_exclusion,
)


class NamedTool(Tool):
    """A do-nothing tool with a given name."""

    def __init__(self, name: str, *, read_only: bool = False) -> None:
        self.name = name
        self.read_only = read_only

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


def mcp(server: str, name: str, **annotations: Any) -> McpToolWrapper:
    return McpToolWrapper(server, NamedTool(name), annotations=annotations)


class TestToolRegistryPolicy:
    def test_admits_everything_by_default(self) -> None:
        """A registry built without a policy grants and keeps every tool (no bundles)."""
        registry = ToolRegistry([NamedTool("a")])

        assert ToolPolicy() == registry.policy
        assert registry.policy.admits(NamedTool("anything"))

    def test_narrowed_shares_the_tools_and_leaves_the_original(self) -> None:
        """`narrowed` is a view with one more allow list; the registry it came from is unchanged."""
        tool = NamedTool("a")
        registry = ToolRegistry([tool, NamedTool("b")], scope="s")

        narrowed = registry.narrowed(["a"])

        assert narrowed.get("a") is tool and "s" == narrowed.scope
        assert (("a",),) == narrowed.policy.narrowings
        assert () == registry.policy.narrowings


class TestDeclaresReadOnly:
    def test_follows_the_tool_declaration(self) -> None:
        """A tool is read-only when it says so, and only then."""
        assert declares_read_only(NamedTool("a", read_only=True))
        assert not declares_read_only(NamedTool("a"))

    def test_mcp_read_only_hint(self) -> None:
        """An MCP tool is read-only by `readOnlyHint: true`; claiming destructive as well is not."""
        assert declares_read_only(mcp("fs", "read", readOnlyHint=True))
        assert not declares_read_only(mcp("fs", "write"))
        assert not declares_read_only(mcp("fs", "odd", readOnlyHint=True, destructiveHint=True))


class TestProfileApproval:
    def test_no_profile_keeps_the_config(self) -> None:
        """Without a risk profile the approval config is used as written."""
        config = ApprovalConfig(autonomy=ApprovalAutonomy.FULL)

        assert config is profile_approval(config, None)

    def test_read_only_sets_read_only_autonomy_whatever_the_config(self) -> None:
        """`read_only` is a ceiling: a config asking for `full` is lowered to `read_only`."""
        for autonomy in ApprovalAutonomy:
            config = ApprovalConfig(autonomy=autonomy, auto_approve=["x"])

            approval = profile_approval(config, RiskProfile.READ_ONLY)

            assert ApprovalAutonomy.READ_ONLY == approval.autonomy
            assert ["x"] == approval.auto_approve

    def test_supervised_lowers_full_only(self) -> None:
        """`supervised` lowers `autonomy: full`; a stricter `read_only` config stays."""
        full = ApprovalConfig(autonomy=ApprovalAutonomy.FULL)
        strict = ApprovalConfig(autonomy=ApprovalAutonomy.READ_ONLY)
        default = ApprovalConfig()

        assert (
            ApprovalAutonomy.SUPERVISED == profile_approval(full, RiskProfile.SUPERVISED).autonomy
        )
        assert strict is profile_approval(strict, RiskProfile.SUPERVISED)
        assert default is profile_approval(default, RiskProfile.SUPERVISED)

    def test_full_auto_approves_everything_but_keeps_what_the_config_requires(self) -> None:
        """`full` adds `*` to `auto_approve` under supervised autonomy; `always_ask` is kept."""
        config = ApprovalConfig(always_ask=["deploy"])

        approval = profile_approval(config, RiskProfile.FULL)

        assert ApprovalAutonomy.SUPERVISED == approval.autonomy
        assert ["tool_search", "*"] == approval.auto_approve
        assert ["deploy"] == approval.always_ask

    def test_full_never_loosens_a_stricter_autonomy(self) -> None:
        """A config at `read_only` stays there under `full`, and one at `full` is unchanged."""
        strict = ApprovalConfig(autonomy=ApprovalAutonomy.READ_ONLY)
        full = ApprovalConfig(autonomy=ApprovalAutonomy.FULL)

        assert strict is profile_approval(strict, RiskProfile.FULL)
        assert full is profile_approval(full, RiskProfile.FULL)


class TestToolBundle:
    def test_grants_by_name_and_pattern(self) -> None:
        """Entries are exact names or `pattern_matches` patterns."""
        bundle = ToolBundle("b", tools=("get_weather", "fs_*"))

        assert bundle.grants(NamedTool("get_weather"))
        assert bundle.grants(NamedTool("fs_read"))
        assert not bundle.grants(NamedTool("get_weather2"))
        assert not bundle.grants(NamedTool("shell"))

    def test_grants_every_tool_of_a_listed_server(self) -> None:
        """`mcp_servers` grants the server's MCP tools, never a static tool named alike."""
        bundle = ToolBundle("b", mcp_servers=("wx",))

        assert bundle.grants(mcp("wx", "forecast"))
        assert not bundle.grants(mcp("db", "query"))
        assert not bundle.grants(NamedTool("wx__forecast"))

    def test_patterns_match_mcp_tools_by_full_name(self) -> None:
        """An MCP tool is matched by its `server__tool` name."""
        bundle = ToolBundle("b", tools=("wx__*",))

        assert bundle.grants(mcp("wx", "forecast"))
        assert not bundle.grants(mcp("db", "forecast"))

    def test_may_reach_server(self) -> None:
        """A bundle reaches a server it lists, or one whose tools a pattern could match."""
        assert ToolBundle("b", mcp_servers=("wx",)).may_reach_server("wx")
        assert ToolBundle("b", tools=("wx__forecast",)).may_reach_server("wx")
        assert not ToolBundle("b", tools=("shell",)).may_reach_server("wx")


class TestPatternReachesServer:
    @pytest.mark.parametrize(
        ("pattern", "expected"),
        [
            ("wx__forecast", True),
            ("wx__", False),
            ("wx__*", True),
            ("wx*", True),
            ("*", True),
            ("*_read", True),
            ("wxy__*", False),
            ("db__*", False),
            ("w*__read", True),
            ("get_weather", False),
        ],
    )
    def test_some_name_of_the_server_could_match(self, pattern: str, expected: bool) -> None:
        """True when some `wx__…` name matches the pattern."""
        assert expected == pattern_reaches_server(pattern, "wx")


class TestToolPolicy:
    def test_without_bundles_every_tool_is_granted(self) -> None:
        """No `agent.bundles`: everything, as before bundles existed."""
        assert ToolPolicy().grants(NamedTool("shell"))
        assert ToolPolicy().grants(mcp("wx", "forecast"))

    def test_bundles_grant_their_union(self) -> None:
        """A tool is granted when any granted bundle has it; `()` grants nothing."""
        policy = ToolPolicy(
            bundles=(ToolBundle("a", tools=("shell",)), ToolBundle("b", mcp_servers=("wx",)))
        )

        assert policy.grants(NamedTool("shell"))
        assert policy.grants(mcp("wx", "forecast"))
        assert not policy.grants(NamedTool("deploy"))
        assert not ToolPolicy(bundles=()).grants(NamedTool("shell"))

    def test_read_only_profile_keeps_read_only_tools(self) -> None:
        """The `read_only` profile removes every tool that is not read-only."""
        policy = ToolPolicy(profile=RiskProfile.READ_ONLY)

        assert policy.keeps(NamedTool("lookup", read_only=True))
        assert policy.keeps(mcp("fs", "read", readOnlyHint=True))
        assert not policy.keeps(NamedTool("shell"))
        assert not policy.keeps(mcp("fs", "write", destructiveHint=True))

    @pytest.mark.parametrize("profile", [None, RiskProfile.FULL, RiskProfile.SUPERVISED])
    def test_other_profiles_remove_nothing(self, profile: RiskProfile | None) -> None:
        """Only `read_only` removes tools."""
        assert ToolPolicy(profile=profile).keeps(NamedTool("shell"))

    def test_narrowing_keeps_only_what_it_names(self) -> None:
        """An allow list keeps the tools its names or patterns match."""
        policy = ToolPolicy().narrowed(["get_weather", "fs_*"])

        assert policy.keeps(NamedTool("get_weather"))
        assert policy.keeps(NamedTool("fs_read"))
        assert not policy.keeps(NamedTool("shell"))

    def test_narrowing_never_grants(self) -> None:
        """Naming a tool no bundle grants does not add it."""
        policy = ToolPolicy(bundles=(ToolBundle("a", tools=("get_weather",)),))

        narrowed = policy.narrowed(["get_weather", "shell"])

        assert narrowed.admits(NamedTool("get_weather"))
        assert not narrowed.admits(NamedTool("shell"))

    def test_narrowings_intersect(self) -> None:
        """A second narrowing only removes more: a tool must match every allow list."""
        policy = ToolPolicy().narrowed(["a", "b"]).narrowed(["b", "c"])

        assert [False, True, False] == [policy.keeps(NamedTool(n)) for n in "abc"]

    def test_an_empty_narrowing_keeps_nothing(self) -> None:
        """`allowed_tools: []` leaves the turn no tool."""
        assert not ToolPolicy().narrowed([]).keeps(NamedTool("a"))

    def test_narrowing_keeps_bundles_and_profile(self) -> None:
        """`narrowed` adds a narrowing and changes nothing else."""
        bundles = (ToolBundle("a", tools=("x",)),)
        policy = ToolPolicy(bundles=bundles, profile=RiskProfile.FULL)

        narrowed = policy.narrowed(["x"])

        assert bundles == narrowed.bundles and RiskProfile.FULL == narrowed.profile

    def test_excluded_names_lists_what_is_removed(self) -> None:
        """The names the profile or a narrowing removes, in order; kept tools are not listed."""
        tools = [NamedTool("a"), NamedTool("b", read_only=True), NamedTool("c")]
        policy = ToolPolicy(profile=RiskProfile.READ_ONLY)

        assert ["a", "c"] == policy.excluded_names(tools)
        assert [] == ToolPolicy().excluded_names(tools)

    def test_excluded_names_follow_the_execution_fold(self) -> None:
        """A kept tool whose name folds onto a removed one is removed too (display agrees with
        the trimmed, case-insensitive execution check)."""
        tools = [NamedTool("Deploy"), NamedTool("deploy", read_only=True), NamedTool("x")]
        policy = ToolPolicy().narrowed(["deploy", "x"])

        assert ["Deploy", "deploy"] == policy.excluded_names(tools)

    def test_may_reach_server(self) -> None:
        """Without bundles every server is reachable; with them, only what a bundle reaches."""
        policy = ToolPolicy(bundles=(ToolBundle("a", tools=("wx__*",)),))

        assert ToolPolicy().may_reach_server("db")
        assert policy.may_reach_server("wx")
        assert not policy.may_reach_server("db")
        assert not ToolPolicy(bundles=()).may_reach_server("wx")


class TestSubagentPolicy:
    """`ToolPolicy.for_subagent`: a sub-agent's policy sits inside its parent's."""

    PARENT = ToolPolicy(bundles=(ToolBundle("look", tools=("get_*", "shell")),))

    def test_it_grants_only_what_both_grant(self) -> None:
        """The sub-agent's own bundle naming `deploy` grants nothing the parent lacks."""
        child = self.PARENT.for_subagent((ToolBundle("ops", tools=("deploy", "get_*")),), None)

        assert child.grants(NamedTool("get_weather"))
        assert not child.grants(NamedTool("deploy"))
        assert not child.grants(NamedTool("shell"))

    def test_without_bundles_it_has_what_the_parent_has(self) -> None:
        child = self.PARENT.for_subagent(None, None)

        assert child.grants(NamedTool("shell"))
        assert not child.grants(NamedTool("deploy"))

    def test_it_keeps_only_what_both_keep(self) -> None:
        """The parent's narrowing and read-only profile hold for the sub-agent, whose `full`
        profile cannot bring a tool back; its own `read_only` removes more."""
        parent = ToolPolicy(profile=RiskProfile.READ_ONLY).narrowed(["get_*", "lookup"])
        child = parent.for_subagent(None, RiskProfile.FULL)
        strict = ToolPolicy().for_subagent(None, RiskProfile.READ_ONLY)

        assert child.keeps(NamedTool("get_weather", read_only=True))
        assert not child.keeps(NamedTool("get_ticket"))
        assert not child.keeps(NamedTool("shell", read_only=True))
        assert not strict.keeps(NamedTool("shell"))
        assert ToolPolicy().keeps(NamedTool("shell"))

    def test_a_narrowed_sub_agent_policy_stays_inside(self) -> None:
        child = self.PARENT.for_subagent(None, None).narrowed(["*"])

        assert not child.grants(NamedTool("deploy"))
        assert child.keeps(NamedTool("shell"))

    def test_it_reaches_only_servers_both_reach(self) -> None:
        child = self.PARENT.for_subagent((ToolBundle("wx", mcp_servers=("wx",)),), None)

        assert not child.may_reach_server("wx")
        assert ToolPolicy().for_subagent(None, None).may_reach_server("wx")
