"""Tests for `zeroclaw_obs.turn.specs`: the effective tools of a turn (LIFECYCLE §2)."""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_obs.config import FilterMode, RuntimeConfig, ToolFilterGroup
from zeroclaw_obs.tools.base import Tool, ToolResult
from zeroclaw_obs.tools.deferred import ActivatedToolSet, DeferredCatalog
from zeroclaw_obs.tools.mcp import McpServer
from zeroclaw_obs.tools.registry import RiskProfile, ToolBundle, ToolPolicy, ToolRegistry
from zeroclaw_obs.turn.specs import EffectiveTools, Resolution


class CountingTool(Tool):
    """A tool that counts how often its schema is read."""

    def __init__(self, name: str, description: str = "", *, read_only: bool = False) -> None:
        self.name = name
        self.description = description
        self.read_only = read_only
        self.schema_reads = 0

    def parameters_schema(self) -> dict[str, Any]:
        self.schema_reads += 1
        return {"type": "object", "properties": {}}

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        return ToolResult.ok(self.name)


def build(
    *,
    static: tuple[str, ...] = ("shell", "file_read"),
    servers: list[McpServer] | None = None,
    message: str = "",
    activated: ActivatedToolSet | None = None,
    policy: ToolPolicy | None = None,
    read_only: tuple[str, ...] = (),
    **config: Any,
) -> EffectiveTools:
    tools = [CountingTool(name, read_only=name in read_only) for name in static]
    return EffectiveTools.build(
        registry=ToolRegistry(tools, policy=policy),
        mcp_servers=servers if servers is not None else [],
        config=RuntimeConfig(**config),
        user_message=message,
        activated=activated if activated is not None else ActivatedToolSet(),
    )


def server(
    name: str, *tools: str, deferred: bool = False, read_only: tuple[str, ...] = ()
) -> McpServer:
    return McpServer(
        name=name,
        tools=[
            CountingTool(t, f"{t.replace('_', ' ')} via {name}", read_only=t in read_only)
            for t in tools
        ],
        deferred=deferred,
    )


def spec_names(effective: EffectiveTools) -> list[str]:
    return [spec.name for spec in effective.specs()]


def group(mode: str, tools: list[str], keywords: tuple[str, ...] = ()) -> ToolFilterGroup:
    return ToolFilterGroup(mode=FilterMode(mode), tools=tools, keywords=list(keywords))


class TestResolution:
    def test_is_frozen(self) -> None:
        """A resolution cannot be changed after the fact."""
        resolution = Resolution(tool=None, status="unknown", resolved_name="x")

        with pytest.raises(AttributeError):
            resolution.status = "ok"  # type: ignore[misc]


class TestEffectiveTools:
    def test_static_then_mcp_then_tool_search(self) -> None:
        """Specs list static tools, visible MCP tools, then `tool_search`, in registration order."""
        effective = build(
            servers=[server("fs", "read", "write"), server("wx", "forecast", deferred=True)]
        )

        assert ["shell", "file_read", "fs__read", "fs__write", "tool_search"] == spec_names(
            effective
        )
        assert {"shell", "file_read", "fs__read", "fs__write", "tool_search"} == effective.names()

    def test_no_tool_search_without_deferred_tools(self) -> None:
        """`tool_search` and the prompt section exist only when there are deferred stubs."""
        effective = build(servers=[server("fs", "read")])

        assert "tool_search" not in effective.names()
        assert effective.prompt_section() is None

    def test_prompt_section_lists_deferred_stubs(self) -> None:
        """Deferred tools appear as `server__tool - description` lines, not as specs."""
        effective = build(servers=[server("wx", "forecast", "alerts", deferred=True)])
        section = effective.prompt_section()

        assert section is not None
        assert "tool_search" in section
        assert section.endswith("\n- wx__forecast - forecast via wx\n- wx__alerts - alerts via wx")
        assert "wx__forecast" not in effective.names()

    def test_display_exclusion_is_exact(self) -> None:
        """`excluded_tools` removes exact names from specs; `SHELL` does not hide `shell`."""
        assert ["file_read"] == spec_names(build(excluded_tools=["shell"]))
        assert ["shell", "file_read"] == spec_names(build(excluded_tools=["SHELL"]))

    def test_display_exclusion_applies_to_mcp_and_stubs(self) -> None:
        """An exactly excluded MCP tool or deferred stub is neither offered nor listed."""
        effective = build(
            servers=[server("fs", "read", "write"), server("wx", "a", "b", deferred=True)],
            excluded_tools=["fs__write", "wx__b"],
        )

        assert ["shell", "file_read", "fs__read", "tool_search"] == spec_names(effective)
        assert ["wx__a"] == [stub.name for stub in effective.catalog]

    def test_no_groups_all_mcp_visible(self) -> None:
        """With no groups every MCP tool is visible."""
        effective = build(servers=[server("fs", "read"), server("db", "query")])

        assert {"fs__read", "db__query"} <= effective.names()

    def test_dynamic_group_needs_keyword_case_insensitive(self) -> None:
        """A dynamic group shows its tools only when the lowercased message has a keyword."""
        groups = [group("dynamic", ["db__*"], ("Database",))]
        servers = [server("fs", "read"), server("db", "query")]

        hidden = build(servers=servers, tool_filter_groups=groups, message="read a file")
        shown = build(servers=servers, tool_filter_groups=groups, message="check the DATABASE")

        assert ["shell", "file_read"] == spec_names(hidden)
        assert ["shell", "file_read", "db__query"] == spec_names(shown)

    def test_always_group_shows_tools(self) -> None:
        """An `always` group shows matching MCP tools whatever the message."""
        effective = build(
            servers=[server("fs", "read"), server("db", "query")],
            tool_filter_groups=[group("always", ["fs__*"])],
        )

        assert ["shell", "file_read", "fs__read"] == spec_names(effective)

    def test_builtins_never_excluded_by_groups(self) -> None:
        """Built-in tools stay offered even when no group matches them."""
        effective = build(
            servers=[server("fs", "read")],
            tool_filter_groups=[group("dynamic", ["*"], ("never-said",))],
            message="hello",
        )

        assert ["shell", "file_read"] == spec_names(effective)

    def test_hidden_mcp_tool_is_unknown(self) -> None:
        """A call to an MCP tool hidden by filter groups resolves as `unknown`."""
        effective = build(
            servers=[server("db", "query")],
            tool_filter_groups=[group("dynamic", ["db__*"], ("sql",))],
        )

        assert Resolution(None, "unknown", "db__query") == effective.resolve("db__query")

    async def test_activation_shows_up_at_next_specs_call(self) -> None:
        """Tools activated by `tool_search` are offered from the next `specs()` call on."""
        effective = build(servers=[server("wx", "forecast", "alerts", deferred=True)])
        assert "wx__forecast" not in spec_names(effective)

        search = effective.resolve("tool_search").tool
        assert search is not None
        await search.execute({"query": "forecast"})

        assert ["shell", "file_read", "tool_search", "wx__forecast"] == spec_names(effective)
        assert "ok" == effective.resolve("wx__forecast").status

    def test_deferred_tool_not_activated_is_unknown(self) -> None:
        """A call to a deferred tool that has not been activated is `unknown`."""
        effective = build(servers=[server("wx", "forecast", deferred=True)])

        assert "unknown" == effective.resolve("wx__forecast").status
        assert "unknown" == effective.resolve("forecast").status

    def test_always_group_pre_activates_stubs(self) -> None:
        """`always` groups pre-activate matching stubs when the turn starts."""
        activated = ActivatedToolSet()
        effective = build(
            servers=[server("wx", "forecast", "alerts", deferred=True)],
            tool_filter_groups=[group("always", ["wx__forecast"])],
            activated=activated,
        )

        assert ["wx__forecast"] == activated.names()
        assert ["shell", "file_read", "tool_search", "wx__forecast"] == spec_names(effective)

    def test_dynamic_group_does_not_pre_activate(self) -> None:
        """A dynamic group whose keyword matched does not activate deferred stubs."""
        activated = ActivatedToolSet()
        build(
            servers=[server("wx", "forecast", deferred=True)],
            tool_filter_groups=[group("dynamic", ["wx__*"], ("weather",))],
            message="weather?",
            activated=activated,
        )

        assert [] == activated.names()

    def test_specs_are_cached_until_activation(self) -> None:
        """Repeated `specs()` calls reuse the composed offer; schemas are read once per tool."""
        registry_tool = CountingTool("shell")
        effective = EffectiveTools(
            tools=[registry_tool], catalog=DeferredCatalog(), activated=ActivatedToolSet()
        )
        for _ in range(5):
            effective.specs()

        assert 1 == registry_tool.schema_reads

    def test_specs_returns_a_copy(self) -> None:
        """Mutating the returned list does not change the offer."""
        effective = build()
        effective.specs().clear()

        assert ["shell", "file_read"] == spec_names(effective)

    def test_exact_resolution(self) -> None:
        """A call by exact name resolves to that tool, `ok`."""
        effective = build()
        resolution = effective.resolve("shell")

        assert ("ok", "shell") == (resolution.status, resolution.resolved_name)
        assert resolution.tool is not None and "shell" == resolution.tool.name

    def test_unknown_name(self) -> None:
        """A name no tool answers to is `unknown`, with the called name kept."""
        assert Resolution(None, "unknown", "nope") == build().resolve("nope")

    def test_display_excluded_tool_resolves_excluded(self) -> None:
        """A tool hidden by exact exclusion is `excluded` when called, not `unknown`."""
        resolution = build(excluded_tools=["shell"]).resolve("shell")

        assert ("excluded", "shell") == (resolution.status, resolution.resolved_name)

    def test_execution_exclusion_trimmed_case_insensitive(self) -> None:
        """Execution-time exclusion is trimmed and case-insensitive: ` SHELL ` excludes `shell`."""
        effective = build(excluded_tools=[" SHELL "])

        assert "shell" in effective.names()
        assert "excluded" == effective.resolve("shell").status

    def test_exclusion_is_checked_before_unknown(self) -> None:
        """`GET_SECRET` for an excluded `get_secret` is `excluded`, not `unknown` (LIFECYCLE §2)."""
        effective = build(excluded_tools=["get_secret"])

        assert Resolution(None, "excluded", "GET_SECRET") == effective.resolve("GET_SECRET")
        assert Resolution(None, "excluded", " get_secret ") == effective.resolve(" get_secret ")
        assert Resolution(None, "unknown", "get_secrets") == effective.resolve("get_secrets")

    def test_exclusion_checked_on_called_name(self) -> None:
        """A short-name call is excluded when the called name itself is excluded."""
        activated = ActivatedToolSet()
        effective = build(
            servers=[server("wx", "forecast", deferred=True)],
            tool_filter_groups=[group("always", ["wx__*"])],
            activated=activated,
            excluded_tools=["Forecast"],
        )
        resolution = effective.resolve("forecast")

        assert ("excluded", "wx__forecast") == (resolution.status, resolution.resolved_name)
        assert "ok" == effective.resolve("wx__forecast").status

    def test_exclusion_checked_on_resolved_name(self) -> None:
        """A short-name call is excluded when the resolved tool's real name is excluded."""
        effective = EffectiveTools(
            tools=[],
            catalog=DeferredCatalog(),
            activated=ActivatedToolSet([CountingTool("wx__forecast")]),
            excluded_tools=["WX__FORECAST"],
        )
        resolution = effective.resolve("forecast")

        assert ("excluded", "wx__forecast") == (resolution.status, resolution.resolved_name)

    def test_short_name_unique(self) -> None:
        """A short name resolves to the unique activated `server__name` with that suffix."""
        effective = build(
            servers=[server("wx", "forecast", "alerts", deferred=True)],
            tool_filter_groups=[group("always", ["wx__*"])],
        )
        resolution = effective.resolve("forecast")

        assert ("ok", "wx__forecast") == (resolution.status, resolution.resolved_name)

    def test_short_name_ambiguous(self) -> None:
        """A short name shared by two activated tools is `unknown`."""
        effective = build(
            servers=[server("wx", "search", deferred=True), server("db", "search", deferred=True)],
            tool_filter_groups=[group("always", ["*"])],
        )

        assert "unknown" == effective.resolve("search").status

    def test_short_names_only_for_activated_tools(self) -> None:
        """Short names do not resolve to directly offered MCP tools."""
        effective = build(servers=[server("fs", "read")])

        assert "unknown" == effective.resolve("read").status

    def test_granted_subset_for_sub_agent(self) -> None:
        """A sub-agent turn offers only the activated tools it was granted, never more."""
        parent = ActivatedToolSet()
        servers = [server("wx", "forecast", "alerts", deferred=True)]
        build(servers=servers, tool_filter_groups=[group("always", ["wx__*"])], activated=parent)

        child = build(servers=servers, activated=parent.granted(["wx__alerts"]))

        assert ["shell", "file_read", "tool_search", "wx__alerts"] == spec_names(child)
        assert "unknown" == child.resolve("wx__forecast").status

    def test_duplicate_names_rejected(self) -> None:
        """A registry tool named like an MCP wrapper makes the turn's tools ambiguous."""
        with pytest.raises(ValueError, match="fs__read"):
            build(static=("fs__read",), servers=[server("fs", "read")])


def bundles(*bundle: ToolBundle) -> ToolPolicy:
    return ToolPolicy(bundles=bundle)


class TestEffectiveToolsPolicy:
    """The registry's policy: bundles grant, the risk profile and narrowing only remove."""

    def test_without_bundles_everything_is_offered(self) -> None:
        """A policy with no bundles changes nothing (every existing scenario)."""
        servers = [server("fs", "read"), server("wx", "forecast", deferred=True)]

        assert spec_names(build(servers=servers)) == spec_names(
            build(servers=servers, policy=ToolPolicy())
        )

    def test_only_granted_tools_are_offered(self) -> None:
        """Bundles grant static tools by name, MCP tools by pattern or by server."""
        effective = build(
            servers=[server("fs", "read", "write"), server("db", "query")],
            policy=bundles(ToolBundle("a", tools=("shell", "fs__r*")), ToolBundle("b")),
        )

        assert ["shell", "fs__read"] == spec_names(effective)

    def test_a_tool_not_granted_is_unknown(self) -> None:
        """A tool no bundle grants does not exist for the agent: `Unknown tool`."""
        effective = build(policy=bundles(ToolBundle("a", tools=("shell",))))

        assert Resolution(None, "unknown", "file_read") == effective.resolve("file_read")

    def test_a_server_bundle_grants_its_deferred_tools(self) -> None:
        """Deferred tools of a granted server are stubs behind `tool_search`; others are not."""
        effective = build(
            servers=[
                server("wx", "forecast", deferred=True),
                server("db", "query", deferred=True),
            ],
            policy=bundles(ToolBundle("a", mcp_servers=("wx",))),
        )

        assert ["wx__forecast"] == [stub.name for stub in effective.catalog]
        assert ["tool_search"] == spec_names(effective)

    def test_no_tool_search_when_no_deferred_tool_is_granted(self) -> None:
        """`tool_search` follows the granted deferred tools, never a bundle entry of its own."""
        effective = build(
            servers=[server("wx", "forecast", deferred=True)],
            policy=bundles(ToolBundle("a", tools=("shell", "tool_search"))),
        )

        assert ["shell"] == spec_names(effective)
        assert effective.prompt_section() is None

    def test_read_only_profile_excludes_other_tools_everywhere(self) -> None:
        """Under `read_only` only read-only tools are offered or listed as stubs; a call to any
        other is `excluded` (trimmed, case-insensitive)."""
        effective = build(
            read_only=("file_read",),
            servers=[
                server("fs", "read", "write", read_only=("read",)),
                server("wx", "forecast", "alerts", deferred=True, read_only=("alerts",)),
            ],
            policy=ToolPolicy(profile=RiskProfile.READ_ONLY),
        )

        assert ["file_read", "fs__read", "tool_search"] == spec_names(effective)
        assert ["wx__alerts"] == [stub.name for stub in effective.catalog]
        for called in ("shell", " SHELL ", "fs__write", "wx__forecast"):
            assert "excluded" == effective.resolve(called).status

    async def test_a_narrowed_away_tool_is_not_offered_found_or_callable(self) -> None:
        """Narrowing hides a tool from the specs, the stubs and `tool_search`, and refuses it."""
        effective = build(
            servers=[server("wx", "forecast", "alerts", deferred=True)],
            policy=ToolPolicy().narrowed(["shell", "wx__alerts"]),
        )
        search = effective.resolve("tool_search").tool
        assert search is not None

        found = await search.execute({"query": "select:wx__forecast,wx__alerts"})
        keyword = await search.execute({"query": "forecast"})

        assert ["shell", "tool_search", "wx__alerts"] == spec_names(effective)
        assert "wx__forecast" not in (effective.prompt_section() or "")
        assert "Not found: wx__forecast" in found.output
        assert "No matching deferred tools found." == keyword.output
        assert ["wx__alerts"] == effective.activated.names()
        for called in ("file_read", "FILE_READ", "wx__forecast"):
            assert "excluded" == effective.resolve(called).status, called
        assert "unknown" == effective.resolve("forecast").status  # never activated

    def test_narrowing_adds_nothing(self) -> None:
        """An allow list naming a tool that is not granted does not offer it."""
        effective = build(
            policy=bundles(ToolBundle("a", tools=("shell",))).narrowed(["shell", "file_read"])
        )

        assert ["shell"] == spec_names(effective)
        assert "unknown" == effective.resolve("file_read").status

    def test_a_tool_activated_in_a_wider_turn_is_hidden_in_a_narrowed_one(self) -> None:
        """A conversation's activated set does not carry a tool past a later narrowing."""
        activated = ActivatedToolSet()
        servers = [server("wx", "forecast", deferred=True)]
        build(servers=servers, tool_filter_groups=[group("always", ["wx__*"])], activated=activated)
        assert ["wx__forecast"] == activated.names()

        narrowed = build(
            servers=servers, activated=activated, policy=ToolPolicy().narrowed(["shell"])
        )

        assert ["shell"] == spec_names(narrowed)
        assert "excluded" == narrowed.resolve("wx__forecast").status
        assert "excluded" == narrowed.resolve("forecast").status

    def test_config_exclusion_still_applies(self) -> None:
        """`excluded_tools` keeps working beside the policy."""
        effective = build(excluded_tools=["shell"], policy=ToolPolicy().narrowed(["*"]))

        assert ["file_read"] == spec_names(effective)
