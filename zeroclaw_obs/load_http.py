"""Load over HTTP: drive a running `zeroclaw-obs serve` at a rate (`load --target URL`).

The same schedule as the in-process load (`load.py`: rate, duration, concurrency cap with
skipped ticks, seeded or round-robin picks, grace period, progress line, `LoadStop`), but a
turn is a request to a server (`docs/server.md`) instead of a replay in this process:

1. `POST {URL}/v1/turns` with the picked scenario's `user` message and no `conversation_id`:
   every turn starts a fresh conversation, like the in-process load's fresh replay per turn.
   So no turn waits on another (a conversation runs one turn at a time), the server's scripted
   approval answers replay from the start for every turn, and the server's idle eviction
   (`--conversation-idle-s`, `--max-conversations`) bounds what the run leaves behind.
2. `GET {URL}/v1/turns/{id}/events` (Server-Sent Events) until `turn_end`: the turn's outcome
   comes from `turn_end`, each tool outcome from a `tool_result`. A stream cut short is resumed
   once or twice with `Last-Event-ID`, so no event is counted twice.
3. An `approval_request` is decided `yes` (`POST /v1/approvals/{id}`, operator `load`) only when
   the run was started with `approve`; otherwise the driver waits and the server's timeout
   (`approval.backchannel_timeout_s`) decides, a runtime denial. A `404` (already decided or
   timed out) is not an error.

One pooled `httpx.AsyncClient` carries every request, with the bearer token on each.
`check_target` runs before the first turn: an unreachable server, a refused token or a
draining server is one `TargetError` line (the CLI exits 2).

Risky parts:
- The API has no cancel. A turn still running when the grace period ends (or at once on an
  interrupt) is *abandoned*: the driver stops following it and counts it under
  `ABANDONED`, but it runs on in the server until it ends or the server drains.
- Nothing here is kept per turn: a turn's task holds its id and the last event id only, and
  failures are counted by a fixed reason text (a status code and the server's error code at
  most, never a body or a message the server chose).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from .errors import BadInputError
from .load import (
    LoadOptions,
    LoadProgress,
    LoadReport,
    LoadScenario,
    LoadSchedule,
    LoadStop,
)
from .observability.events import ToolOutcome, TurnOutcomeKind
from .server.command import read_token_file

__all__ = [
    "ABANDONED",
    "TOKEN_ENV",
    "HttpTarget",
    "TargetError",
    "check_target",
    "parse_target",
    "read_token",
    "run_http_load",
    "target_client",
]

TOKEN_ENV = "ZEROCLAW_TOKEN"
"""The variable that holds the bearer token when `--token-file` is not given."""

ABANDONED = "abandoned at stop (still running on the server: the API has no cancel)"
"""The failure reason of a turn the driver stopped following when the run stopped."""

OPERATOR = "load"
"""The `operator` of the approvals the driver decides (audited as `decided_by`)."""

RESUME_ATTEMPTS = 2
"""How many times a cut event stream is resumed with `Last-Event-ID` before the turn is lost."""

CANCEL_WAIT_S = 1.0
"""How long abandoned turns get to close their streams before the run returns."""

_SERVER_ERRORS = frozenset(
    {
        "bad_request", "unauthorized", "not_found", "conversation_busy", "too_large",
        "too_many_turns", "draining",
    }
)  # fmt: skip
"""The `error` codes `serve` sends (docs/server.md); any other word is the server's text and is
never printed."""


class TargetError(BadInputError):
    """The target cannot be driven: unreachable, not a server, the token refused, or draining.

    The message is one line that names the flag to fix, never the token.
    """


@dataclass(frozen=True, kw_only=True)
class HttpTarget:
    """A running `serve` to drive, and how."""

    url: str
    """The base URL, `http(s)://host[:port][/prefix]`, without a trailing slash."""
    token: str = field(repr=False)
    """The bearer token; never printed."""
    token_source: str
    """Where the token came from, as the error line names it: `--token-file` or the variable."""
    shown: str
    """`url` as output lines show it: the caller passes it through its redactor (the URL is
    operator text; `parse_target` already refused credentials in it)."""
    approve: bool = False
    """Decide every `approval_request` `yes`; when False the server's timeout decides."""


def parse_target(url: str) -> str:
    """`url` as a base URL: http or https, a host, no credentials, query or fragment.

    Raises:
        BadInputError: the URL is not one; the line starts with `--target`.
    """
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise BadInputError("--target: not a URL (http://HOST:PORT)") from None
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise BadInputError("--target: must be an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        raise BadInputError("--target: no credentials in the URL (use --token-file)")
    if parts.query or parts.fragment:
        raise BadInputError("--target: no query or fragment (the base URL of the server)")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


def read_token(path: Path | None, environ: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """(token, where it came from): the first line of `path`, else the `ZEROCLAW_TOKEN` variable.

    Raises:
        BadInputError: no token, an unreadable file, or a token that cannot be a header value
            (the line names the file flag or the variable, never the content).
    """
    if path is not None:
        source = "--token-file"
        token = read_token_file(path, source)
    elif environ.get(TOKEN_ENV):
        source, token = TOKEN_ENV, environ[TOKEN_ENV].strip()
    else:
        raise BadInputError(f"--target: needs a token: --token-file FILE or {TOKEN_ENV}")
    if not token or not all(c.isascii() and c.isprintable() and not c.isspace() for c in token):
        raise BadInputError(f"{source}: the token must be one line of printable ASCII, no spaces")
    return token, source


def target_client(target: HttpTarget, concurrency: int) -> httpx.AsyncClient:
    """The one pooled client of a run: the base URL, the token on every request.

    Each turn in flight holds a connection for its event stream and may open a second one to
    start or to approve, so the pool holds two per turn plus a few. Reads wait up to 45 s: the
    server pings an idle stream every 15 s.
    """
    size = 2 * concurrency + 4
    return httpx.AsyncClient(
        base_url=target.url,
        headers={"Authorization": f"Bearer {target.token}"},
        timeout=httpx.Timeout(10.0, read=45.0, pool=None),
        limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
    )


async def check_target(client: httpx.AsyncClient, target: HttpTarget) -> None:
    """Make sure the target serves, takes the token and is not draining, before any turn.

    Raises:
        TargetError: one line: cannot connect, not a zeroclaw-obs server, the token refused
            (401), or draining.
    """
    try:
        health = await client.get("/healthz")
        if health.status_code != 200:
            raise TargetError(
                f"--target {target.shown}: GET /healthz answered HTTP {health.status_code} "
                "(not a zeroclaw-obs serve?)"
            )
        status = _json_object(health).get("status")
        if status == "draining":
            raise TargetError(f"--target {target.shown}: the server is draining (shutting down)")
        if status != "ok":
            raise TargetError(
                f"--target {target.shown}: GET /healthz is not a zeroclaw-obs serve's answer"
            )
        authorized = await client.get("/v1/approvals")
    except httpx.TransportError as exc:
        raise TargetError(
            f"--target {target.shown}: cannot connect: {_transport_reason(exc)}"
        ) from None
    if authorized.status_code == 401:
        raise TargetError(
            f"{target.token_source}: the server at {target.shown} refused the token (401)"
        )
    if authorized.status_code != 200:
        raise TargetError(
            f"--target {target.shown}: GET /v1/approvals answered HTTP {authorized.status_code}"
        )


async def run_http_load(
    scenarios: Sequence[LoadScenario],
    options: LoadOptions,
    *,
    client: httpx.AsyncClient,
    approve: bool = False,
    progress: LoadProgress | None = None,
    stop: LoadStop | None = None,
) -> LoadReport:
    """Start turns of `scenarios` on the server behind `client` at `options.rate`, until the
    duration ends or `stop` is requested; follow each to its `turn_end`.

    Args:
        scenarios: validated scenarios (`load_scenario_dir`); only their `user` messages are
            sent: the server runs its own agent.
        options: rate, duration, concurrency, pick order and grace period.
        client: `target_client(...)`, checked with `check_target`.
        approve: decide every approval the server asks for `yes`.
        progress: where the progress line goes; None writes none.
        stop: how the caller stops an endless run (or one before its duration).

    Returns:
        The counts: `turns` by the outcome each `turn_end` named, `tools` by each
        `tool_result`'s outcome, and `failures` by reason (a start refused, a turn lost, or
        `ABANDONED`) instead of by file.

    Raises:
        ValueError: `scenarios` is empty.
    """
    if not scenarios:
        raise ValueError("run_http_load needs at least one scenario")
    driver = _HttpLoadDriver(
        scenarios, options, client=client, approve=approve, progress=progress, stop=stop
    )
    return await driver.run()


class _TurnLost(Exception):
    """A turn that did not reach `turn_end`; `reason` is its fixed failure text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _HttpLoadDriver(LoadSchedule):
    """One load run against a server: each turn posted and followed to `turn_end`."""

    def __init__(
        self,
        scenarios: Sequence[LoadScenario],
        options: LoadOptions,
        *,
        client: httpx.AsyncClient,
        approve: bool,
        progress: LoadProgress | None,
        stop: LoadStop | None,
    ) -> None:
        super().__init__(scenarios, options, progress=progress, stop=stop or LoadStop())
        self._client = client
        self._approve = approve
        self._turns: set[asyncio.Task[TurnOutcomeKind]] = set()

    def _in_flight(self) -> set[asyncio.Task[Any]]:
        return set(self._turns)

    def _start_one(self, item: LoadScenario) -> None:
        task = asyncio.create_task(self._turn(item), name=f"load-turn {item.source}")
        self._turns.add(task)
        task.add_done_callback(self._turn_done)

    def _turn_done(self, task: asyncio.Task[TurnOutcomeKind]) -> None:
        # A done callback: a task cancelled before its first step never runs its body.
        self._turns.discard(task)
        self._slots.release()
        if task.cancelled():
            self._tally.turn_ended(None, ABANDONED)
        elif isinstance(error := task.exception(), _TurnLost):
            self._tally.turn_ended(None, error.reason)
        elif error is not None:
            self._tally.turn_ended(None, f"lost: {type(error).__name__}")
        else:
            self._tally.turn_ended(task.result(), "")

    async def _turn(self, item: LoadScenario) -> TurnOutcomeKind:
        """Start one turn and follow it to `turn_end`; `_TurnLost` when it cannot."""
        assert item.scenario.user is not None  # a scenario file always has one
        try:
            started = await self._client.post("/v1/turns", json={"message": item.scenario.user})
        except httpx.TransportError as exc:
            raise _TurnLost(f"not started: {_transport_reason(exc)}") from None
        if started.status_code != 202:
            raise _TurnLost(f"refused: {_status_reason(started)}")
        turn_id = _json_object(started).get("turn_id")
        if not isinstance(turn_id, str) or not turn_id:
            raise _TurnLost("refused: the 202 answer has no turn_id")
        return await self._follow(turn_id)

    async def _follow(self, turn_id: str) -> TurnOutcomeKind:
        """Count the turn's events until `turn_end`, resuming a cut stream from its last id."""
        last_id: str | None = None
        path = f"/v1/turns/{quote(turn_id, safe='')}/events"
        for attempt in range(RESUME_ATTEMPTS + 1):
            headers = {"Last-Event-ID": last_id} if last_id is not None else {}
            try:
                async with self._client.stream("GET", path, headers=headers) as response:
                    if response.status_code != 200:
                        await response.aread()
                        raise _TurnLost(f"stream refused: {_status_reason(response)}")
                    async for event_id, data in _sse_events(response):
                        last_id = event_id or last_id
                        outcome = await self._on_event(data)
                        if outcome is not None:
                            return outcome
            except httpx.TransportError as exc:
                if attempt == RESUME_ATTEMPTS:
                    raise _TurnLost(f"stream lost: {_transport_reason(exc)}") from None
        raise _TurnLost("stream lost: it ended before turn_end")

    async def _on_event(self, data: str) -> TurnOutcomeKind | None:
        """Count one event; the turn's outcome when it is `turn_end`."""
        try:
            event = json.loads(data)
        except ValueError:
            return None
        if not isinstance(event, dict):
            return None
        kind = event.get("type")
        if kind == "tool_result":
            # An outcome this driver does not know is not counted.
            with contextlib.suppress(ValueError):
                self._tally.tools[ToolOutcome(event.get("outcome"))] += 1
        elif kind == "approval_request" and self._approve:
            await self._decide(event.get("approval_id"))
        elif kind == "turn_end":
            try:
                return TurnOutcomeKind(event.get("outcome"))
            except ValueError:
                raise _TurnLost("ended: turn_end names an unknown outcome") from None
        return None

    async def _decide(self, approval_id: Any) -> None:
        """Approve; a `404` (decided or timed out meanwhile) or a lost request is no error."""
        if not isinstance(approval_id, str) or not approval_id:
            return
        with contextlib.suppress(httpx.TransportError):  # the server's timeout decides instead
            await self._client.post(
                f"/v1/approvals/{quote(approval_id, safe='')}",
                json={"decision": "yes", "operator": OPERATOR},
            )

    async def _drain(self) -> None:
        """Let the turns followed finish within `grace`, then abandon the rest (the API has no
        cancel: they go on on the server)."""
        await self._wait_for_grace()
        for task in list(self._turns):
            task.cancel()
        if self._turns:
            await asyncio.wait(set(self._turns), timeout=CANCEL_WAIT_S)


async def _sse_events(response: httpx.Response) -> AsyncIterator[tuple[str | None, str]]:
    """(id, data) of each Server-Sent Event of `response`; comments (`: ping`) are skipped."""
    event_id: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if not line:
            if data:
                yield event_id, "\n".join(data)
            event_id, data = None, []
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "id":
            event_id = value
    if data:
        yield event_id, "\n".join(data)


def _json_object(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _status_reason(response: httpx.Response) -> str:
    """`HTTP 429 too_many_turns`: the status and the server's error code, never its message."""
    code = _json_object(response).get("error")
    if code in _SERVER_ERRORS:
        return f"HTTP {response.status_code} {code}"
    return f"HTTP {response.status_code}"


def _transport_reason(exc: httpx.TransportError) -> str:
    """A fixed text for a transport failure (httpx's message may quote the URL)."""
    if isinstance(exc, httpx.ConnectError):
        return "connection refused or unreachable"
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "the server closed the connection"
    return type(exc).__name__
