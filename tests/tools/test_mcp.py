"""Tests for `zeroclaw_obs.tools.mcp`: MCP tools wrapped under `server__tool` names."""

from __future__ import annotations

import pytest

from zeroclaw_obs.tools.base import ArgumentError, Provenance, ToolResult, tool
from zeroclaw_obs.tools.mcp import McpServer, McpToolWrapper, read_only_hint


@tool
async def forecast(city: str, days: int = 1) -> str:
    """Forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


@tool
def alerts() -> ToolResult:
    """Weather alerts."""
    return ToolResult.fail("no feed")


class TestMcpToolWrapper:
    def test_name_is_server_prefixed(self) -> None:
        """The wrapper is named `server__tool`."""
        assert "wx__forecast" == McpToolWrapper("wx", forecast).name

    def test_provenance_is_extension(self) -> None:
        """MCP tools are attributed as `extension`, whatever the wrapped tool says."""
        assert Provenance.NATIVE == forecast.provenance
        assert Provenance.EXTENSION == McpToolWrapper("wx", forecast).provenance

    def test_delegates_description_and_schema(self) -> None:
        """Description and schema are the wrapped tool's; only the name changes in the spec."""
        spec = McpToolWrapper("wx", forecast).spec

        assert "wx__forecast" == spec.name
        assert "Forecast for a city." == spec.description
        assert forecast.parameters_schema() == spec.parameters

    def test_delegates_validation(self) -> None:
        """Arguments are validated by the wrapped tool."""
        wrapper = McpToolWrapper("wx", forecast)

        assert {"city": "Oslo", "days": 1} == wrapper.validate_arguments({"city": "Oslo"})
        assert isinstance(wrapper.validate_arguments({}), ArgumentError)

    async def test_delegates_execution(self) -> None:
        """Execution runs the wrapped tool and returns its result unchanged."""
        assert ToolResult.ok("Oslo: sunny for 2 day(s)") == await McpToolWrapper(
            "wx", forecast
        ).execute({"city": "Oslo", "days": 2})
        assert ToolResult.fail("no feed") == await McpToolWrapper("wx", alerts).execute({})

    def test_blank_server_is_rejected(self) -> None:
        """A blank server name raises ValueError."""
        with pytest.raises(ValueError, match="blank"):
            McpToolWrapper(" ", forecast)

    def test_keeps_server_and_wrapped_tool(self) -> None:
        """The wrapper exposes its server and the tool it wraps."""
        wrapper = McpToolWrapper("wx", forecast)

        assert "wx" == wrapper.server
        assert forecast is wrapper.wrapped


class TestReadOnly:
    @pytest.mark.parametrize(
        ("annotations", "expected"),
        [
            ({"readOnlyHint": True}, True),
            ({"readOnlyHint": True, "destructiveHint": True}, True),
            ({"readOnlyHint": False}, False),
            ({"readOnlyHint": "true"}, False),
            ({"readOnlyHint": 1}, False),
            ({"destructiveHint": False}, False),
            ({}, False),
            (None, False),
        ],
    )
    def test_only_a_boolean_true_read_only_hint_counts(self, annotations, expected) -> None:
        """`readOnlyHint: true` declares an MCP tool read-only; nothing else does."""
        assert expected == read_only_hint(annotations)
        assert expected == McpToolWrapper("wx", forecast, annotations=annotations).read_only

    def test_annotations_come_from_the_wrapped_tool(self) -> None:
        """Without explicit annotations the wrapper reads the wrapped tool's `annotations`."""
        remote = tool(forecast.function, name="remote")
        remote.annotations = {"readOnlyHint": True}  # type: ignore[attr-defined]

        wrapper = McpToolWrapper("wx", remote)

        assert ({"readOnlyHint": True}, True) == (wrapper.annotations, wrapper.read_only)

    def test_a_read_only_wrapped_tool_stays_read_only(self) -> None:
        """A wrapped tool that declares `read_only` keeps it behind the wrapper."""
        lookup = tool(forecast.function, name="lookup", read_only=True)

        assert McpToolWrapper("wx", lookup).read_only
        assert not McpToolWrapper("wx", forecast).read_only


class TestMcpServer:
    def test_wrappers_in_server_order(self) -> None:
        """`wrappers()` wraps every tool, in the server's order."""
        server = McpServer(name="wx", tools=[forecast, alerts])

        assert ["wx__forecast", "wx__alerts"] == [w.name for w in server.wrappers()]

    def test_not_deferred_by_default(self) -> None:
        """A server is offered directly unless marked deferred."""
        assert not McpServer(name="wx", tools=[]).deferred
        assert McpServer(name="wx", tools=[], deferred=True).deferred
