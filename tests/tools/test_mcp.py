"""Tests for `zeroclaw_obs.tools.mcp`: MCP tools wrapped under `server__tool` names."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from zeroclaw_obs.tools.base import ArgumentError, Provenance, ToolResult, tool
from zeroclaw_obs.tools.mcp import McpServer, McpToolWrapper, read_only_hint
from zeroclaw_obs.tools.mcp_client import StdioParams
from zeroclaw_obs.tools.mcp_session import McpConnection

TOOLBOX = StdioParams(
    command=sys.executable, args=[str(Path(__file__).parent / "mcp_servers" / "toolbox.py")]
)


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
            ({"readOnlyHint": True, "destructiveHint": True}, False),  # contradiction: destructive
            ({"readOnlyHint": False}, False),
            ({"readOnlyHint": "true"}, False),
            ({"readOnlyHint": 1}, False),
            ({"destructiveHint": False}, False),
            ({}, False),
            (None, False),
        ],
    )
    def test_only_a_boolean_true_read_only_hint_counts(self, annotations, expected) -> None:
        """`readOnlyHint: true` (without `destructiveHint: true`) declares a tool read-only."""
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

    async def test_a_scripted_server_never_changes(self) -> None:
        """A server without a connection has no catalog to refresh."""
        server = McpServer(name="wx", tools=[forecast])

        assert not server.catalog_changed
        assert not await server.refresh()
        assert [forecast] == server.tools


class TestMcpServerConnected:
    async def test_connect_wraps_the_live_catalog(self) -> None:
        """`McpServer.connect` offers a real server's tools as `server__tool` wrappers."""
        async with McpConnection("box", TOOLBOX) as connection:
            server = await McpServer.connect(connection, deferred=True)
            wrappers = {w.name: w for w in server.wrappers()}
            echo = await wrappers["box__echo"].execute({"text": "hi"})

        assert server.deferred and connection is server.connection
        assert {"box__echo", "box__fail", "box__slow"} <= set(wrappers)
        assert wrappers["box__echo"].read_only
        assert {"destructiveHint": True} == wrappers["box__fail"].annotations
        assert ToolResult.ok("hi") == echo

    async def test_refresh_follows_list_changed(self) -> None:
        """After `notifications/tools/list_changed`, `refresh()` replaces the tools once."""
        async with McpConnection("box", TOOLBOX) as connection:
            server = await McpServer.connect(connection)
            assert not await server.refresh()
            await connection.call_tool("grow", {})
            for _ in range(100):  # the notification may trail the result by a loop turn
                if server.catalog_changed:
                    break
                await asyncio.sleep(0.01)

            assert await server.refresh()
            assert not server.catalog_changed
            names = [w.name for w in server.wrappers()]

        assert "box__extra" in names


class TestNoSdkOnTheScriptedPath:
    def test_wrapper_modules_do_not_import_the_sdk(self) -> None:
        """Importing the wrapper and client-data modules leaves the `mcp` SDK unimported."""
        code = (
            "import sys, zeroclaw_obs.tools.mcp, zeroclaw_obs.tools.mcp_client;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout

        assert "[]" == out.strip()


class TestSpanAttributes:
    def test_an_in_process_server_adds_none(self) -> None:
        """A scripted server's wrapper adds no `mcp.*` attributes (there is no session)."""
        assert {} == McpToolWrapper("wx", forecast).span_attributes()
