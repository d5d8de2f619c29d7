"""Tests for `zeroclaw_obs.tools.deferred`: stubs, the catalog, `tool_search`, activation."""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_obs.tools.base import Tool, ToolResult
from zeroclaw_obs.tools.deferred import (
    ActivatedToolSet,
    DeferredCatalog,
    DeferredStub,
    ToolSearchTool,
    deferred_prompt_section,
)


class StubTool(Tool):
    """A do-nothing tool with a given name and description."""

    def __init__(self, name: str, description: str = "") -> None:
        self.name = name
        self.description = description

    def parameters_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {}}

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        return ToolResult.ok(self.name)


def stub(name: str, description: str = "") -> DeferredStub:
    return DeferredStub.for_tool(StubTool(name, description))


def weather_catalog() -> DeferredCatalog:
    return DeferredCatalog(
        [
            stub("wx__forecast", "Weather forecast for a city"),
            stub("wx__alerts", "Severe weather alerts"),
            stub("db__query", "Run a SQL query"),
            stub("wx__radar", "Radar images of weather over a city"),
        ]
    )


def search_tool() -> tuple[ToolSearchTool, ActivatedToolSet]:
    activated = ActivatedToolSet()
    return ToolSearchTool(weather_catalog(), activated), activated


class TestDeferredStub:
    def test_for_tool_copies_name_and_description(self) -> None:
        """A stub made for a tool carries its name, description and the tool itself."""
        tool = StubTool("wx__forecast", "Forecast")
        made = DeferredStub.for_tool(tool)

        assert ("wx__forecast", "Forecast") == (made.name, made.description)
        assert tool is made.tool

    def test_name_must_match_tool(self) -> None:
        """A stub whose name differs from its tool's name is rejected."""
        with pytest.raises(ValueError, match="differs"):
            DeferredStub(name="wx__other", description="", tool=StubTool("wx__forecast"))

    def test_line_is_name_dash_description(self) -> None:
        """The listed line is `server__tool - description`, on one line."""
        assert (
            "wx__forecast - Forecast for a city"
            == stub("wx__forecast", "Forecast\n  for a city").line()
        )


class TestDeferredCatalog:
    def test_lookup_and_order(self) -> None:
        """Stubs are found by exact name and iterate in catalog order."""
        catalog = weather_catalog()

        assert ["wx__forecast", "wx__alerts", "db__query", "wx__radar"] == [s.name for s in catalog]
        assert "db__query" == catalog.get("db__query").name  # type: ignore[union-attr]
        assert "query" not in catalog
        assert 4 == len(catalog)

    def test_duplicate_stub_is_rejected(self) -> None:
        """Two stubs with one name raise ValueError."""
        with pytest.raises(ValueError, match="twice"):
            DeferredCatalog([stub("a__b"), stub("a__b")])

    def test_search_scores_by_terms_best_first(self) -> None:
        """More matching terms rank higher; ties keep catalog order."""
        found = weather_catalog().search("weather city", 5)

        assert ["wx__forecast", "wx__radar", "wx__alerts"] == [s.name for s in found]

    def test_search_is_case_insensitive_over_name_and_description(self) -> None:
        """Terms are lowercased and matched in `name description`."""
        assert ["db__query"] == [s.name for s in weather_catalog().search("SQL", 5)]
        assert ["db__query"] == [s.name for s in weather_catalog().search("DB__", 5)]

    def test_search_caps_results(self) -> None:
        """At most `max_results` stubs are returned."""
        assert ["wx__forecast", "wx__radar"] == [
            s.name for s in weather_catalog().search("weather city", 2)
        ]

    def test_search_drops_zero_scores(self) -> None:
        """A stub that contains no term is not a result."""
        assert [] == weather_catalog().search("calendar", 5)


class TestDeferredPromptSection:
    def test_lists_stubs_under_heading(self) -> None:
        """The section names `tool_search` and lists `server__tool - description` lines."""
        section = deferred_prompt_section(weather_catalog())
        heading, *lines = section.split("\n- ")

        assert "tool_search" in heading
        assert [
            "wx__forecast - Weather forecast for a city",
            "wx__alerts - Severe weather alerts",
            "db__query - Run a SQL query",
            "wx__radar - Radar images of weather over a city",
        ] == lines

    def test_empty_without_stubs(self) -> None:
        """No stubs means no section."""
        assert "" == deferred_prompt_section([])


class TestActivatedToolSet:
    def test_activate_adds_tool_once(self) -> None:
        """Activating a stub adds its tool; a second activation changes nothing."""
        activated = ActivatedToolSet()
        forecast = stub("wx__forecast")

        assert activated.activate(forecast)
        assert not activated.activate(forecast)
        assert ["wx__forecast"] == activated.names()
        assert [forecast.tool] == activated.tools()
        assert forecast.tool is activated.get("wx__forecast")
        assert "wx__forecast" in activated

    def test_version_changes_only_on_new_activation(self) -> None:
        """`version` moves on each new activation and not on a repeat."""
        activated = ActivatedToolSet()
        activated.activate(stub("wx__forecast"))
        after_first = activated.version
        activated.activate(stub("wx__forecast"))

        assert after_first == activated.version
        activated.activate(stub("wx__alerts"))
        assert after_first + 1 == activated.version

    def test_resolve_short_name_unique(self) -> None:
        """A short name resolves to the unique activated `server__name` with that suffix."""
        activated = ActivatedToolSet()
        forecast = stub("wx__forecast")
        activated.activate(forecast)
        activated.activate(stub("wx__alerts"))

        assert forecast.tool is activated.resolve_short_name("forecast")

    def test_resolve_short_name_ambiguous(self) -> None:
        """Two activated tools with the same suffix make a short name resolve to nothing."""
        activated = ActivatedToolSet()
        activated.activate(stub("wx__search"))
        activated.activate(stub("db__search"))

        assert activated.resolve_short_name("search") is None

    def test_resolve_short_name_unknown(self) -> None:
        """A suffix no activated tool has resolves to nothing."""
        activated = ActivatedToolSet()
        activated.activate(stub("wx__forecast"))

        assert activated.resolve_short_name("cast") is None
        assert activated.resolve_short_name("") is None

    def test_granted_holds_only_granted_names(self) -> None:
        """A sub-agent's set holds only the granted names that are activated, never more."""
        parent = ActivatedToolSet()
        for name in ("wx__forecast", "wx__alerts", "db__query"):
            parent.activate(stub(name))

        child = parent.granted(["wx__alerts", "db__query", "never__activated"])

        assert ["wx__alerts", "db__query"] == child.names()

    def test_granted_is_independent(self) -> None:
        """Activations in the parent after granting do not reach the sub-agent's copy."""
        parent = ActivatedToolSet()
        parent.activate(stub("wx__forecast"))
        child = parent.granted(["wx__forecast", "wx__alerts"])
        parent.activate(stub("wx__alerts"))

        assert ["wx__forecast"] == child.names()

    def test_starts_with_given_tools(self) -> None:
        """Tools given at construction start activated."""
        assert ["a__b"] == ActivatedToolSet([StubTool("a__b")]).names()


class TestToolSearchTool:
    def test_is_read_only(self) -> None:
        """`tool_search` only changes the turn's tool set, so it is read-only."""
        tool, _ = search_tool()

        assert tool.read_only

    def test_schema(self) -> None:
        """`tool_search` types `query` as a string with no minimum length; `max_results` is 5."""
        tool, _ = search_tool()

        assert "tool_search" == tool.name
        assert {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "max_results": {"type": "integer", "default": 5},
            },
            "required": ["query"],
        } == tool.parameters_schema()

    def test_empty_query_passes_schema_validation(self) -> None:
        """An empty query reaches the tool, so the model reads the tool's own message."""
        tool, _ = search_tool()

        assert {"query": ""} == tool.validate_arguments({"query": ""})

    @pytest.mark.parametrize("args", [{"query": ""}, {"query": "   "}, {}])
    async def test_empty_query_fails(self, args: dict[str, Any]) -> None:
        """An empty query fails with `query parameter is required`."""
        tool, activated = search_tool()

        assert ToolResult.fail("query parameter is required") == await tool.execute(args)
        assert [] == activated.names()

    async def test_select_activates_exact_names(self) -> None:
        """`select:a,b` activates exactly those names (comma separated, trimmed)."""
        tool, activated = search_tool()

        result = await tool.execute({"query": "select: wx__alerts , db__query"})

        assert ["wx__alerts", "db__query"] == activated.names()
        assert result.success
        assert (
            "Activated tools (available from the next step):\n"
            "- wx__alerts - Severe weather alerts\n"
            "- db__query - Run a SQL query"
        ) == result.output

    async def test_select_reports_unknown_names(self) -> None:
        """Names not in the catalog are reported and nothing else is activated."""
        tool, activated = search_tool()

        result = await tool.execute({"query": "select:wx__alerts,forecast"})

        assert ["wx__alerts"] == activated.names()
        assert result.output.endswith("\nNot found: forecast")

    async def test_select_all_unknown(self) -> None:
        """A select with no catalog name activates nothing and says so."""
        tool, activated = search_tool()

        result = await tool.execute({"query": "select:nope"})

        assert ToolResult.ok("No matching deferred tools found.\nNot found: nope") == result
        assert [] == activated.names()

    async def test_keyword_search_activates_best_first(self) -> None:
        """Keyword matches are activated best first, ties in catalog order."""
        tool, activated = search_tool()

        result = await tool.execute({"query": "weather city"})

        assert ["wx__forecast", "wx__radar", "wx__alerts"] == activated.names()
        assert [
            "Activated tools (available from the next step):",
            "- wx__forecast - Weather forecast for a city",
            "- wx__radar - Radar images of weather over a city",
            "- wx__alerts - Severe weather alerts",
        ] == result.output.split("\n")

    async def test_keyword_search_caps_at_max_results(self) -> None:
        """No more than `max_results` tools are activated."""
        tool, activated = search_tool()

        await tool.execute({"query": "weather city", "max_results": 1})

        assert ["wx__forecast"] == activated.names()

    async def test_default_max_results_is_five(self) -> None:
        """Without `max_results` at most 5 tools are activated."""
        activated = ActivatedToolSet()
        catalog = DeferredCatalog([stub(f"s__t{i}", "common") for i in range(7)])

        await ToolSearchTool(catalog, activated).execute({"query": "common"})

        assert 5 == len(activated)

    async def test_no_match(self) -> None:
        """A query matching nothing returns `No matching deferred tools found.`"""
        tool, activated = search_tool()

        assert ToolResult.ok("No matching deferred tools found.") == await tool.execute(
            {"query": "calendar"}
        )
        assert [] == activated.names()
