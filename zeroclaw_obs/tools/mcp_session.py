"""One real MCP server's session, owned by one task from `start()` to `aclose()`.

This module owns the connection to a real MCP server through the official `mcp` SDK (imported
lazily, inside the code that connects): starting it (a stdio process or a streamable-HTTP
endpoint), the live tool catalog and its `list_changed` version, tool calls, and what happens
when the server dies. What it calls in the SDK (entering a transport, reading the stderr pipe,
paging `tools/list`, reading the SDK's objects and errors) lives in `tools/_mcp_wire.py`.

Ownership (STYLE §10): `start()` creates ONE owner task that enters the transport
(`stdio_client` or `streamable_http_client`) and the `ClientSession` in one `AsyncExitStack`,
initializes, and then waits until it is told to stop or the transport is lost; only that task
ever enters or leaves those contexts, because the SDK's anyio cancel scopes break when a session
is closed from another task. Requests (`tools/list`, `tools/call`) are sent from the CALLER's
task on the live session: the SDK's request path is task-safe (it writes to a memory stream and
waits for its own reply), and running it in the caller's task is what makes the SDK's request
span nest under the caller's span and what makes a cancelled caller send
`notifications/cancelled` (the SDK does that when the awaiting task is cancelled).

stdio servers run with the SDK's minimal environment (`HOME LOGNAME PATH SHELL TERM USER` from
ours) with the configured `env` merged over it: nothing else of the runtime's environment (API
keys, tokens) reaches the server unless the agent file names it. Their stderr goes to a pipe the
owner reads line by line; each line passes through the `Redactor` before it reaches `on_stderr`
(default: the `zeroclaw_obs.mcp` logger at INFO), so it is never printed raw.

Risky parts: a dead server is noticed three ways (a request fails with CONNECTION_CLOSED, the
stdio server's stderr reaches EOF, or the transport hands an exception to the message handler),
and all of them lead to exactly one report (`on_unavailable`) until the server is back. Restarts
happen only in `ensure_connected()`, never behind a call's back, with exponential backoff on an
injectable clock. `aclose()` is bounded: the SDK's stdio shutdown (close stdin, SIGTERM, SIGKILL)
takes up to ~6 s for a server that ignores its stdin.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ._mcp_wire import (
    enter_http,
    enter_stdio,
    is_connection_loss,
    list_all_tools,
    mcp_error_text,
    progress_adapter,
    read_stderr,
)
from .base import ToolResult
from .mcp_client import (
    Backoff,
    HttpParams,
    McpConnectError,
    McpRemoteTool,
    ProgressCallback,
    RemoteToolInfo,
    StdioParams,
    format_seconds,
    render_call_result,
    unavailable_text,
)

if TYPE_CHECKING:
    from ..redaction import Redactor

__all__ = ["McpConnection"]

logger = logging.getLogger("zeroclaw_obs.mcp")


StderrCallback = Callable[[str, str], None]
"""`(server, redacted_line)` for each line a stdio server writes to stderr."""

UnavailableCallback = Callable[[str, str], None]
"""`(server, reason)`, called once each time a connected server is lost."""


def _log_stderr(server: str, line: str) -> None:
    logger.info("mcp server %s stderr: %s", server, line)


def _log_unavailable(server: str, reason: str) -> None:
    logger.warning("MCP server '%s' is not available: %s", server, reason)


class McpConnection:
    """One MCP server's session, owned by one task from `start()` to `aclose()`.

    Args:
        name: the server's name in the agent file (the `server__` prefix).
        params: `StdioParams` or `HttpParams`.
        redactor: applied to every stderr line and to error reasons before they leave.
        on_stderr: receives `(server, redacted line)`; default logs at INFO.
        on_unavailable: receives `(server, reason)` once per loss; default logs a warning.
        connect_timeout_s: bound on starting the transport plus `initialize`.
        close_timeout_s: bound on `aclose()` waiting for the owner to leave its block.
        backoff: restart schedule used by `ensure_connected()`.
        clock: monotonic seconds, injectable for tests.
    """

    def __init__(
        self,
        name: str,
        params: StdioParams | HttpParams,
        *,
        redactor: Redactor | None = None,
        on_stderr: StderrCallback | None = None,
        on_unavailable: UnavailableCallback | None = None,
        connect_timeout_s: float = 30.0,
        close_timeout_s: float = 10.0,
        backoff: Backoff | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.params = params
        self._redactor = redactor
        self._on_stderr = on_stderr or _log_stderr
        self._on_unavailable = on_unavailable or _log_unavailable
        self._connect_timeout_s = connect_timeout_s
        self._close_timeout_s = close_timeout_s
        self.backoff = backoff or Backoff()
        """Restart schedule; `ensure_connected()` reads and updates it."""
        self._clock = clock
        self._session: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lost: asyncio.Event | None = None
        self._reported = False
        self._tools: list[RemoteToolInfo] = []
        self.catalog_version = 0
        """Bumped by each `notifications/tools/list_changed`; compare to detect a change."""
        self._listed_version = -1
        self.protocol_version: str | None = None
        """The negotiated MCP protocol version while connected."""
        self.session_id: str | None = None
        """The streamable-HTTP `Mcp-Session-Id` the server assigned (None for stdio)."""
        self.last_error: str | None = None
        """The redacted reason of the last failed start or the last loss."""

    # -- state --------------------------------------------------------------------------

    @property
    def available(self) -> bool:
        """True while a session is initialized and not known to be lost."""
        return self._session is not None and not (self._lost and self._lost.is_set())

    @property
    def transport(self) -> str:
        """`stdio` or `http`: how this server is reached."""
        return "stdio" if isinstance(self.params, StdioParams) else "http"

    @property
    def network_transport(self) -> str:
        """The OTel `network.transport` of this server's calls: `pipe` (stdio) or `tcp`."""
        return "pipe" if isinstance(self.params, StdioParams) else "tcp"

    @property
    def catalog_changed(self) -> bool:
        """True when the server announced a new tool list since the last `list_tools()`."""
        return self._listed_version != self.catalog_version

    @property
    def tools(self) -> list[RemoteToolInfo]:
        """The catalog as last listed (empty before the first `list_tools()`)."""
        return list(self._tools)

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Start the owner task and wait until the session is initialized.

        Raises:
            McpConnectError: the server could not be started, did not initialize within
                `connect_timeout_s`, or failed the handshake; the owner task has ended and
                any process it started has been stopped.
        """
        if self._owner is not None and not self._owner.done():
            return
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        # start() may have given up on `ready` (timeout): retrieve a late failure silently.
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._stop = asyncio.Event()
        self._lost = asyncio.Event()
        self.session_id = None
        self._owner = asyncio.create_task(self._run(ready), name=f"mcp-server-{self.name}")
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                await asyncio.shield(ready)
        except TimeoutError:
            await self._end_owner(cancel=True)
            reason = f"no answer to initialize within {format_seconds(self._connect_timeout_s)}s"
            raise self._connect_error(reason) from None
        except asyncio.CancelledError:
            await asyncio.shield(self._end_owner(cancel=True))
            raise
        except Exception as exc:
            await self._end_owner(cancel=True)
            raise self._connect_error(str(exc) or type(exc).__name__) from exc
        self._reported = False
        self.last_error = None
        self.backoff.reset()

    async def aclose(self) -> None:
        """Ask the owner to leave its block and wait for it (bounded by `close_timeout_s`).

        Idempotent; safe to call while calls are in flight (they fail as unavailable).
        """
        if self._owner is None:
            return
        if self._stop is not None:
            self._stop.set()
        # Shutdown must finish even when our caller is being cancelled (Ctrl-C), or the
        # server process would outlive the runtime.
        await asyncio.shield(self._end_owner(self._close_timeout_s))

    async def ensure_connected(self) -> bool:
        """Connect (or reconnect a lost server) unless the backoff says wait.

        Call before a turn. A failed attempt is not reported again (the loss was) and pushes the
        next attempt out exponentially; the clock is `clock`, so nothing sleeps here.

        Returns:
            True when the server is available after the call.
        """
        if self.available:
            return True
        if self._owner is not None:
            await self._end_owner(self._close_timeout_s)
        now = self._clock()
        if not self.backoff.ready(now):
            return False
        try:
            await self.start()
        except McpConnectError:
            self.backoff.failed(now)
            return False
        return True

    async def __aenter__(self) -> McpConnection:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- requests -----------------------------------------------------------------------

    async def list_tools(self) -> list[RemoteToolInfo]:
        """Fetch the live catalog (every page) and remember it.

        Raises:
            McpConnectError: the server is not available.
        """
        session = self._session
        if session is None or not self.available:
            raise McpConnectError(unavailable_text(self.name))
        version = self.catalog_version
        try:
            tools = await list_all_tools(session)
        except Exception as exc:
            if is_connection_loss(exc):
                self._mark_lost(str(exc) or type(exc).__name__)
                raise McpConnectError(unavailable_text(self.name)) from exc
            raise
        self._tools = tools
        self._listed_version = version
        return list(tools)

    async def refresh(self) -> list[RemoteToolInfo] | None:
        """Re-list the tools if the server announced a change; None when nothing changed.

        Raises:
            McpConnectError: the server is not available.
        """
        if not self.catalog_changed:
            return None
        return await self.list_tools()

    async def call_tool(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        timeout_s: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> ToolResult:
        """Call a remote tool and render its result; never raises for expected failures.

        Cancelling the calling task sends `notifications/cancelled` to the server (the SDK
        does it) and re-raises `CancelledError`.

        Returns:
            The rendered result (`render_call_result`); `isError` makes it failed. A timeout is
            `tool timed out after {n}s`, a lost or absent server `MCP server '{name}' is not
            available`, a protocol error `MCP error {code}: {message}` (all failed results).
        """
        session = self._session
        if session is None or not self.available:
            return ToolResult.fail(unavailable_text(self.name))
        callback = progress_adapter(on_progress) if on_progress is not None else None
        try:
            if timeout_s is None:
                result = await session.call_tool(name, dict(args), progress_callback=callback)
            else:
                async with asyncio.timeout(timeout_s):
                    result = await session.call_tool(name, dict(args), progress_callback=callback)
        except TimeoutError:
            if timeout_s is None:
                raise
            return ToolResult.fail(f"tool timed out after {format_seconds(timeout_s)}s")
        except Exception as exc:
            if is_connection_loss(exc):
                self._mark_lost(str(exc) or type(exc).__name__)
                return ToolResult.fail(unavailable_text(self.name))
            text = mcp_error_text(exc)
            if text is not None:
                return ToolResult.fail(self._redact(text))
            raise
        return render_call_result(result)

    def remote_tools(self, *, timeout_s: float | None = None) -> list[McpRemoteTool]:
        """One `McpRemoteTool` per tool of the last listed catalog, in the server's order."""
        return [McpRemoteTool(self, info, timeout_s=timeout_s) for info in self._tools]

    # -- the owner ----------------------------------------------------------------------

    async def _run(self, ready: asyncio.Future[None]) -> None:
        from mcp import ClientSession

        assert self._stop is not None and self._lost is not None
        stop, lost = self._stop, self._lost
        stderr_task: asyncio.Task[None] | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                if isinstance(self.params, StdioParams):
                    read, write, stderr_fd = await enter_stdio(stack, self.params)
                    stderr_task = asyncio.create_task(self._watch_stderr(stderr_fd))
                else:
                    read, write = await enter_http(stack, self.params, self._note_session_id)
                session = await stack.enter_async_context(
                    ClientSession(read, write, message_handler=self._on_message)
                )
                result = await session.initialize()
                self.protocol_version = result.protocol_version
                self._session = session
                ready.set_result(None)
                stop_wait = asyncio.ensure_future(stop.wait())
                lost_wait = asyncio.ensure_future(lost.wait())
                try:
                    await asyncio.wait({stop_wait, lost_wait}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop_wait.cancel()
                    lost_wait.cancel()
                self._session = None
        except BaseException as exc:
            if not ready.done():
                failure = exc if isinstance(exc, Exception) else ConnectionError("start cancelled")
                ready.set_exception(failure)
            elif not stop.is_set() and not isinstance(exc, asyncio.CancelledError):
                self._mark_lost(str(exc) or type(exc).__name__)
            if not isinstance(exc, Exception):
                raise
        finally:
            self._session = None
            if stderr_task is not None:
                # The pipe reaches EOF once the process is gone; the shutdown above waited for it.
                with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(stderr_task), 1.0)
                stderr_task.cancel()

    async def _note_session_id(self, response: Any) -> None:
        session_id = response.headers.get("mcp-session-id")
        if session_id:
            self.session_id = session_id

    async def _watch_stderr(self, fd: int) -> None:
        await read_stderr(fd, self._stderr_line)
        # EOF: the process closed stderr, which in practice means it exited.
        if self._session is not None and self._stop is not None and not self._stop.is_set():
            self._mark_lost("the server process exited")

    def _stderr_line(self, line: str) -> None:
        try:
            self._on_stderr(self.name, self._redact(line))
        except Exception:
            logger.exception("on_stderr callback failed for MCP server %s", self.name)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            if is_connection_loss(message):
                self._mark_lost(str(message) or type(message).__name__)
            return
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.catalog_version += 1

    # -- helpers ------------------------------------------------------------------------

    async def _end_owner(self, timeout_s: float | None = None, *, cancel: bool = False) -> None:
        owner = self._owner
        if owner is None:
            return
        if self._stop is not None:
            self._stop.set()
        if cancel:
            owner.cancel()  # still connecting: it is not waiting on `stop` yet
        try:
            if timeout_s is not None:
                await asyncio.wait_for(asyncio.shield(owner), timeout_s)
            else:
                await asyncio.shield(owner)
        except TimeoutError:
            owner.cancel()
            with contextlib.suppress(BaseException):
                await owner
        except BaseException:
            if not owner.done():
                owner.cancel()
                with contextlib.suppress(BaseException):
                    await owner
        self._owner = None
        self._session = None

    def _mark_lost(self, reason: str) -> None:
        if self._lost is not None:
            self._lost.set()
        if self._stop is not None and self._stop.is_set():
            return  # we are closing it: not a loss
        self.last_error = self._redact(reason)
        if self._reported:
            return
        self._reported = True
        try:
            self._on_unavailable(self.name, self.last_error)
        except Exception:
            logger.exception("on_unavailable callback failed for MCP server %s", self.name)

    def _connect_error(self, reason: str) -> McpConnectError:
        self.last_error = self._redact(reason)
        return McpConnectError(f"MCP server '{self.name}' could not be started: {self.last_error}")

    def _redact(self, text: str) -> str:
        return self._redactor.redact_text(text) if self._redactor is not None else text

    def __repr__(self) -> str:
        state = "available" if self.available else "unavailable"
        return f"McpConnection({self.name!r}, {self.transport}, {state})"
