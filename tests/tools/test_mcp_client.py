"""Tests for `zeroclaw_obs.tools.mcp_client` and `mcp_session`: real MCP servers, real processes.

The servers are `mcp-server-time` (PyPI, from the venv) and `mcp_servers/toolbox.py`, a small
SDK server run with this interpreter. Every test closes its connection and checks that the
server process it started is gone.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp_types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.tools.base import Provenance, ToolResult
from zeroclaw_obs.tools.mcp import McpServer
from zeroclaw_obs.tools.mcp_client import (
    Backoff,
    HttpParams,
    McpConnectError,
    StdioParams,
    current_progress,
    render_call_result,
    unavailable_text,
)
from zeroclaw_obs.tools.mcp_session import McpConnection

from ..system import alive

SERVERS = Path(__file__).parent / "mcp_servers"
TOOLBOX = StdioParams(command=sys.executable, args=[str(SERVERS / "toolbox.py")])
TIME_SERVER = StdioParams(
    command=str(Path(sys.executable).parent / "mcp-server-time"), args=["--local-timezone", "UTC"]
)
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


class Reports:
    """Collects `on_unavailable` and `on_stderr` callbacks."""

    def __init__(self) -> None:
        self.lost: list[tuple[str, str]] = []
        self.lost_event = asyncio.Event()
        self.stderr: list[str] = []

    def on_unavailable(self, server: str, reason: str) -> None:
        self.lost.append((server, reason))
        self.lost_event.set()

    def on_stderr(self, server: str, line: str) -> None:
        self.stderr.append(line)


@pytest.fixture
def reports() -> Reports:
    return Reports()


@pytest.fixture
async def box(reports: Reports) -> AsyncIterator[McpConnection]:
    connection = McpConnection(
        "box",
        TOOLBOX,
        redactor=Redactor(),
        on_stderr=reports.on_stderr,
        on_unavailable=reports.on_unavailable,
    )
    await connection.start()
    pid = int((await connection.call_tool("pid", {})).output)
    try:
        yield connection
    finally:
        await connection.aclose()
        assert not alive(pid)


async def server_pid(connection: McpConnection) -> int:
    return int((await connection.call_tool("pid", {})).output)


async def cancelled_tags(connection: McpConnection, expected: str) -> str:
    """The server's record of cancelled calls, once it shows `expected` (bounded polling)."""
    tags = ""
    for _ in range(100):
        tags = (await connection.call_tool("cancellations", {})).output
        if expected in tags.split(","):
            break
        await asyncio.sleep(0.02)
    return tags


class TestRenderCallResult:
    def test_text_blocks_are_joined(self) -> None:
        """Text blocks are joined with newlines into a successful result."""
        result = CallToolResult(content=[TextContent(text="a"), TextContent(text="b")])

        assert ToolResult.ok("a\nb") == render_call_result(result)

    def test_is_error_is_a_failed_result(self) -> None:
        """`isError: true` makes a failed result carrying the text."""
        result = CallToolResult(content=[TextContent(text="bad city")], is_error=True)

        assert ToolResult.fail("bad city") == render_call_result(result)

    def test_structured_without_text_is_json(self) -> None:
        """Structured content with no text block is rendered as JSON text."""
        result = CallToolResult(content=[], structured_content={"ok": True, "n": [1]})

        assert ToolResult.ok('{"ok": true, "n": [1]}') == render_call_result(result)

    def test_text_wins_over_structured(self) -> None:
        """A server that sends text and structured content is read through its text."""
        result = CallToolResult(content=[TextContent(text="7")], structured_content={"r": 7})

        assert ToolResult.ok("7") == render_call_result(result)

    def test_binary_and_resources_become_markers(self) -> None:
        """Images, audio and resources become short markers; embedded text follows its marker."""
        result = CallToolResult(
            content=[
                ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
                AudioContent(data="UklGRg==", mime_type="audio/wav"),
                ResourceLink(uri="file:///r.txt", name="r"),
                EmbeddedResource(resource=TextResourceContents(uri="mem://n", text="note")),
            ]
        )

        expected = (
            "[image: image/png, 8 bytes]\n[audio: audio/wav, 4 bytes]\n"
            "[resource: file:///r.txt]\n[resource: mem://n]\nnote"
        )
        assert ToolResult.ok(expected) == render_call_result(result)


class TestBackoff:
    def test_doubles_up_to_the_cap(self) -> None:
        """Each failure waits the current delay, then doubles it up to `max_s`."""
        backoff = Backoff(initial_s=1, max_s=3)
        backoff.failed(10)
        assert (11, 2) == (backoff.next_at, backoff.delay)
        backoff.failed(11)
        backoff.failed(13)
        assert (16, 3) == (backoff.next_at, backoff.delay)

    def test_reset_allows_an_attempt_at_once(self) -> None:
        """After `reset` an attempt may be made immediately with the initial delay."""
        backoff = Backoff(initial_s=1)
        backoff.failed(0)
        assert not backoff.ready(0.5)
        backoff.reset()
        assert (True, 1) == (backoff.ready(0.5), backoff.delay)


class TestCatalog:
    async def test_lists_names_schema_and_annotations(self, box: McpConnection) -> None:
        """The live catalog carries each tool's description, inputSchema and wire annotations."""
        tools = {info.name: info for info in await box.list_tools()}

        assert {"readOnlyHint": True} == tools["echo"].annotations
        assert {"destructiveHint": True} == tools["fail"].annotations
        assert {} == tools["pid"].annotations
        assert "Echo the text back." == tools["echo"].description
        assert ["text"] == tools["echo"].input_schema["required"]

    async def test_list_changed_flags_the_catalog(self, box: McpConnection) -> None:
        """`notifications/tools/list_changed` sets `catalog_changed`; `refresh` re-lists once."""
        await box.list_tools()
        assert not box.catalog_changed
        assert None is await box.refresh()

        assert ToolResult.ok("grown") == await box.call_tool("grow", {})
        for _ in range(100):  # the notification may trail the result by a loop turn
            if box.catalog_changed:
                break
            await asyncio.sleep(0.01)

        assert box.catalog_changed
        refreshed = await box.refresh()
        assert refreshed is not None and "extra" in [info.name for info in refreshed]
        assert not box.catalog_changed
        assert ToolResult.ok("extra") == await box.call_tool("extra", {})


class TestCallTool:
    async def test_text_result(self, box: McpConnection) -> None:
        """A plain tool's text comes back as a successful result."""
        assert ToolResult.ok("hi") == await box.call_tool("echo", {"text": "hi"})

    async def test_is_error_result(self, box: McpConnection) -> None:
        """A tool error (`isError`) is a failed result with the server's text."""
        assert ToolResult.fail("Error executing tool fail: nope") == await box.call_tool(
            "fail", {"reason": "nope"}
        )

    async def test_structured_results(self, box: McpConnection) -> None:
        """Structured output reads as JSON text, with or without a text block."""
        assert ToolResult.ok('{"rows": [1, 2], "ok": true}') == await box.call_tool(
            "bare_structured", {}
        )
        weather = await box.call_tool("weather", {"city": "Oslo"})
        assert weather.success and '"celsius": 21.5' in weather.output

    async def test_media_markers(self, box: McpConnection) -> None:
        """Image, audio and resource content become markers in the text."""
        expected = (
            "here you go\n[image: image/png, 8 bytes]\n[audio: audio/wav, 4 bytes]\n"
            "[resource: file:///tmp/report.txt]\n[resource: mem://note]\na note"
        )
        assert ToolResult.ok(expected) == await box.call_tool("media", {})

    async def test_protocol_error_is_a_failed_result(self, box: McpConnection) -> None:
        """An unknown tool fails as a result, never as an exception."""
        result = await box.call_tool("no_such_tool", {})

        assert not result.success and "no_such_tool" in (result.error or "")

    async def test_progress_in_order(self, box: McpConnection) -> None:
        """Each progress notification reaches `on_progress` in order, before the result."""
        seen: list[tuple[float, float | None, str | None]] = []

        result = await box.call_tool(
            "slow", {"steps": 3}, on_progress=lambda p, t, m: seen.append((p, t, m))
        )

        assert ToolResult.ok("done after 3 steps") == result
        assert [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")] == seen

    async def test_async_progress_callback(self, box: McpConnection) -> None:
        """An async `on_progress` is awaited."""
        seen: list[float] = []

        async def record(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        await box.call_tool("slow", {"steps": 2}, on_progress=record)

        assert [1, 2] == seen

    async def test_timeout_is_a_failed_result_and_cancels(self, box: McpConnection) -> None:
        """A call past `timeout_s` fails with `tool timed out after {n}s` and is cancelled."""
        result = await box.call_tool("hang", {"tag": "t1"}, timeout_s=0.05)

        assert ToolResult.fail("tool timed out after 0.05s") == result
        assert "t1" in (await cancelled_tags(box, "t1")).split(",")
        assert ToolResult.ok("alive") == await box.call_tool("echo", {"text": "alive"})

    async def test_cancelled_task_sends_notifications_cancelled(self, box: McpConnection) -> None:
        """Cancelling the calling task sends `notifications/cancelled`; the server stops it."""
        started = asyncio.Event()
        call = asyncio.create_task(
            box.call_tool("hang", {"tag": "t2"}, on_progress=lambda p, t, m: started.set())
        )
        await asyncio.wait_for(started.wait(), 10)  # the server is inside the call
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

        assert "t2" in (await cancelled_tags(box, "t2")).split(",")

    async def test_engine_timeout_scope_cancels_on_the_server(self, box: McpConnection) -> None:
        """The dispatcher's own `asyncio.timeout` around `execute` also cancels on the server."""
        await box.list_tools()
        tool = next(t for t in box.remote_tools() if t.name == "hang")

        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await tool.execute({"tag": "t3"})

        assert "t3" in (await cancelled_tags(box, "t3")).split(",")


class TestStderr:
    async def test_lines_are_redacted(self, box: McpConnection, reports: Reports) -> None:
        """Each stderr line reaches `on_stderr` through the redactor, never raw."""
        await box.call_tool("shout", {"text": f"token {SECRET} here"})
        for _ in range(100):
            if any("here" in line for line in reports.stderr):
                break
            await asyncio.sleep(0.01)

        line = next(line for line in reports.stderr if "here" in line)
        assert SECRET not in line
        assert line.startswith("token ") and line.endswith(" here")


class TestServerLoss:
    async def test_crash_mid_call(self, reports: Reports) -> None:
        """A server that dies mid-call is reported once; its calls fail with the exact text."""
        connection = McpConnection("box", TOOLBOX, on_unavailable=reports.on_unavailable)
        await connection.start()
        pid = await server_pid(connection)
        try:
            first = await connection.call_tool("crash", {})
            second = await connection.call_tool("echo", {"text": "x"})
            await asyncio.sleep(0.05)
        finally:
            await connection.aclose()

        assert ToolResult.fail("MCP server 'box' is not available") == first
        assert ToolResult.fail(unavailable_text("box")) == second
        assert ["box"] == [server for server, _ in reports.lost]
        assert not connection.available
        assert not alive(pid)

    async def test_killed_between_turns_then_restarted(self, reports: Reports) -> None:
        """A server killed while idle is reported once and `ensure_connected` restarts it."""
        connection = McpConnection("box", TOOLBOX, on_unavailable=reports.on_unavailable)
        await connection.start()
        try:
            old = await server_pid(connection)
            os.kill(old, signal.SIGKILL)
            await asyncio.wait_for(reports.lost_event.wait(), 10)

            assert ToolResult.fail(unavailable_text("box")) == await connection.call_tool(
                "echo", {"text": "x"}
            )
            assert await connection.ensure_connected()
            new = await server_pid(connection)
            assert ToolResult.ok("back") == await connection.call_tool("echo", {"text": "back"})
        finally:
            await connection.aclose()

        assert 1 == len(reports.lost)
        assert old != new
        assert not alive(old) and not alive(new)

    async def test_restart_waits_for_the_backoff(self, reports: Reports) -> None:
        """A failing restart is retried only when the backoff allows, with doubling delays."""
        now = [100.0]
        dies = StdioParams(command=sys.executable, args=["-c", "import sys; sys.exit(1)"])
        connection = McpConnection(
            "gone", dies, on_unavailable=reports.on_unavailable, clock=lambda: now[0]
        )

        assert not await connection.ensure_connected()
        assert (101.0, 2.0) == (connection.backoff.next_at, connection.backoff.delay)
        now[0] = 100.5
        assert not await connection.ensure_connected()
        assert 2.0 == connection.backoff.delay  # no attempt was made
        now[0] = 101.0
        assert not await connection.ensure_connected()
        assert (103.0, 4.0) == (connection.backoff.next_at, connection.backoff.delay)
        assert [] == reports.lost  # never connected: nothing was lost
        await connection.aclose()

    async def test_unstarted_connection_is_unavailable(self) -> None:
        """Calls on a connection that never started fail with the unavailable text."""
        connection = McpConnection("idle", TOOLBOX)

        assert ToolResult.fail(unavailable_text("idle")) == await connection.call_tool("echo", {})


class TestStart:
    async def test_connect_timeout_stops_the_process(self, tmp_path: Path) -> None:
        """A server that never answers `initialize` fails `start` in time and is stopped."""
        pid_file = tmp_path / "pid"
        script = "import os,sys,time; open(sys.argv[1],'w').write(str(os.getpid())); time.sleep(60)"
        mute = StdioParams(command=sys.executable, args=["-c", script, str(pid_file)])
        connection = McpConnection("mute", mute, connect_timeout_s=0.5)

        with pytest.raises(McpConnectError, match=r"within 0\.5s"):
            await connection.start()

        assert not alive(int(pid_file.read_text()))
        assert not connection.available

    async def test_missing_command(self) -> None:
        """A command that does not exist fails `start` with an error naming the server."""
        connection = McpConnection("nope", StdioParams(command="/nonexistent/mcp-server"))

        with pytest.raises(McpConnectError, match="MCP server 'nope' could not be started"):
            await connection.start()


class TestShutdown:
    def run_holder(self, mode: str, interrupt: bool) -> tuple[int, int]:
        holder = subprocess.Popen(
            [sys.executable, str(SERVERS / "hold_connection.py"), mode],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None
            pid = int(holder.stdout.readline())
            if interrupt:
                holder.send_signal(signal.SIGINT)
            return holder.wait(30), pid
        finally:
            if holder.poll() is None:
                holder.kill()
                holder.wait()

    def test_ctrl_c_stops_the_server(self) -> None:
        """Ctrl-C in a runtime holding a connection stops its server process."""
        returncode, pid = self.run_holder("hold", interrupt=True)

        assert 130 == returncode
        assert not alive(pid)

    def test_exit_without_close_stops_the_server(self) -> None:
        """A runtime that exits without `aclose` still stops the server (the owner is cancelled)."""
        returncode, pid = self.run_holder("forget", interrupt=False)

        assert 0 == returncode
        assert not alive(pid)


class TestTimeServer:
    async def test_list_and_call(self) -> None:
        """mcp-server-time lists read-only tools and answers get_current_time."""
        async with McpConnection("time", TIME_SERVER) as connection:
            tools = {info.name: info for info in await connection.list_tools()}
            result = await connection.call_tool("get_current_time", {"timezone": "UTC"})

        assert tools["get_current_time"].annotations["readOnlyHint"] is True
        assert result.success and '"timezone": "UTC"' in result.output


class TestMcpRemoteTool:
    async def test_wrapped_as_server_tools(self) -> None:
        """Remote tools enter a turn through `McpServer` unchanged: `time__get_current_time`."""
        async with McpConnection("time", TIME_SERVER) as connection:
            await connection.list_tools()
            server = McpServer("time", tools=list(connection.remote_tools()))
            wrapper = next(w for w in server.wrappers() if w.name == "time__get_current_time")
            result = await wrapper.execute({"timezone": "Europe/Oslo"})

        assert Provenance.EXTENSION == wrapper.provenance
        assert wrapper.read_only
        assert True is wrapper.annotations["readOnlyHint"]
        assert ["timezone"] == wrapper.parameters_schema()["required"]
        assert result.success and "Europe/Oslo" in result.output

    async def test_progress_through_the_context(self, box: McpConnection) -> None:
        """`execute` reports progress to the callback set in `current_progress`."""
        await box.list_tools()
        slow = next(t for t in box.remote_tools() if t.name == "slow")
        seen: list[float] = []

        token = current_progress.set(lambda p, t, m: seen.append(p))
        try:
            result = await slow.execute({"steps": 2})
        finally:
            current_progress.reset(token)

        assert ToolResult.ok("done after 2 steps") == result
        assert [1, 2] == seen

    async def test_not_read_only_without_the_hint(self, box: McpConnection) -> None:
        """Tools without `readOnlyHint: true` are not read-only."""
        await box.list_tools()
        tools = {t.name: t for t in box.remote_tools()}

        assert tools["echo"].read_only
        assert not tools["fail"].read_only
        assert not tools["pid"].read_only


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
async def http_process() -> AsyncIterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS / "toolbox.py"), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                    break
            except OSError:
                assert process.poll() is None
                await asyncio.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        assert process.poll() is not None


class TestStreamableHttp:
    async def test_list_and_call(self, http_process: tuple[str, subprocess.Popen[bytes]]) -> None:
        """A streamable-HTTP server lists its tools and answers calls, with progress."""
        params = HttpParams(url=http_process[0], headers={"X-Test": "1"})
        seen: list[float] = []
        async with McpConnection("web", params) as connection:
            names = [info.name for info in await connection.list_tools()]
            echo = await connection.call_tool("echo", {"text": "over http"})
            slow = await connection.call_tool(
                "slow", {"steps": 2}, on_progress=lambda p, t, m: seen.append(p)
            )
            session_id = connection.session_id

        assert "echo" in names
        assert session_id
        assert ToolResult.ok("over http") == echo
        assert ToolResult.ok("done after 2 steps") == slow
        assert [1, 2] == seen
        assert not connection.available

    async def test_server_loss(
        self, http_process: tuple[str, subprocess.Popen[bytes]], reports: Reports
    ) -> None:
        """An HTTP server that goes away is reported once; its calls fail as unavailable."""
        url, process = http_process
        connection = McpConnection(
            "web", HttpParams(url=url), on_unavailable=reports.on_unavailable
        )
        await connection.start()
        try:
            assert ToolResult.ok("a") == await connection.call_tool("echo", {"text": "a"})
            process.kill()
            process.wait()
            first = await connection.call_tool("echo", {"text": "b"}, timeout_s=30)
            second = await connection.call_tool("echo", {"text": "c"}, timeout_s=30)
            reconnected = await connection.ensure_connected()
        finally:
            await connection.aclose()

        assert ToolResult.fail(unavailable_text("web")) == first == second
        assert ["web"] == [server for server, _ in reports.lost]
        assert not reconnected
