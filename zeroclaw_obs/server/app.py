"""The HTTP face of `ServerRuntime`: Starlette routes, bearer auth, limits, JSON errors, SSE.

Every error is one line of JSON, `{"error": CODE, "message": TEXT}`, whose text names the
field and never a value the client sent. Every JSON body leaves with `ensure_ascii=True`, so a
lone surrogate a model produced is sent as its `\\udXXX` escape instead of failing to encode.

SSE is framed here (`_sse`) over `StreamingResponse`: `id:` + one `data:` line per event,
`: ping` comments while idle. Starlette ends the generator when the client disconnects.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..approval import Decision
from .command import token_matches
from .runtime import ServerError, ServerRuntime

__all__ = ["build_app"]

PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
_OPEN_PATHS = frozenset({"/", "/page.js", "/healthz", "/metrics", "/favicon.ico"})
"""Paths served without the token: the static page, health, metrics, and the favicon a
browser asks for on its own (a plain 404, rather than a 401 in the operator's console)."""
_STATUS_CODES = {400: "bad_request", 401: "unauthorized", 404: "not_found", 405: "bad_request"}
_ERROR_TEXTS = {404: "no such resource", 405: "method not allowed"}


def _json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """`body` as JSON (ASCII-escaped: any string the engine holds can be sent)."""
    return Response(
        json.dumps(body, ensure_ascii=True, separators=(",", ":")),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


def _error_response(status: int, code: str, message: str) -> Response:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return _json_response({"error": code, "message": message}, status, headers)


class _BearerAuth:
    """Pure ASGI: every path but the open ones needs the token (checked in constant time)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in _OPEN_PATHS:
            header = None
            for name, value in scope.get("headers", ()):
                if name == b"authorization":
                    header = value.decode("latin-1")
                    break
            if not token_matches(self._token, header):
                response = _error_response(401, "unauthorized", "a valid bearer token is required")
                await response(scope, receive, send)
                return
        await self._app(scope, receive, send)


def build_app(runtime: ServerRuntime, token: str) -> ASGIApp:
    """The ASGI application serving `runtime` (routes in `docs/server.md`)."""
    page = _asset("page.html")
    script = _asset("page.js")
    limit = runtime.settings.max_body_bytes

    async def read_json(request: Request, allowed: dict[str, type | tuple[type, ...]]) -> dict:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            raise ServerError(413, "too_large", f"body: larger than {limit} bytes")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise ServerError(413, "too_large", f"body: larger than {limit} bytes")
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise ServerError(400, "bad_request", "body: not valid JSON") from None
        if not isinstance(data, dict):
            raise ServerError(400, "bad_request", "body: must be a JSON object")
        names = ", ".join(allowed)
        for position, key in enumerate(data, 1):
            if key not in allowed:
                raise ServerError(
                    400, "bad_request", f"body: unknown field <key {position}> (allowed: {names})"
                )
        for key, kind in allowed.items():
            if key in data and data[key] is not None and not isinstance(data[key], kind):
                raise ServerError(400, "bad_request", f"{key}: wrong type")
        return data

    async def post_turn(request: Request) -> Response:
        data = await read_json(
            request, {"message": str, "conversation_id": str, "allowed_tools": list}
        )
        message = data.get("message")
        if not isinstance(message, str) or not message.strip():
            raise ServerError(400, "bad_request", "message: required, a non-empty string")
        allowed = _allowed_tools(data.get("allowed_tools"))
        handle = runtime.start_turn(message, data.get("conversation_id"), allowed)
        return _json_response(
            {"turn_id": handle.turn_id, "conversation_id": handle.conversation_id}, 202
        )

    async def steer_turn(request: Request) -> Response:
        turn_id = request.path_params["turn_id"]
        data = await read_json(request, {"message": str})
        message = data.get("message")
        if not isinstance(message, str) or not message.strip():
            raise ServerError(400, "bad_request", "message: required, a non-empty string")
        pending = runtime.steer(turn_id, message)
        return _json_response({"turn_id": turn_id, "pending": pending}, 202)

    async def get_turn(request: Request) -> Response:
        return _json_response(_turn(request).status())

    async def turn_events(request: Request) -> Response:
        handle = _turn(request)
        after = request.headers.get("last-event-id", "0")
        start = int(after) if after.isdigit() else 0
        return _sse(handle.follow(start))

    async def operator_events(request: Request) -> Response:
        return _sse(_numbered(runtime.feed.follow(runtime.running())))

    async def list_approvals(request: Request) -> Response:
        return _json_response(runtime.approvals.pending())

    async def decide(request: Request) -> Response:
        approval_id = request.path_params["approval_id"]
        data = await read_json(request, {"decision": str, "replace_with": str, "operator": str})
        try:
            decision = Decision(data.get("decision"))
        except ValueError:
            raise ServerError(
                400, "bad_request", "decision: must be yes, no, always or replace"
            ) from None
        replacement = data.get("replace_with")
        if decision is Decision.REPLACE and not replacement:
            raise ServerError(400, "bad_request", "replace_with: required with replace")
        if decision is not Decision.REPLACE and replacement is not None:
            raise ServerError(400, "bad_request", "replace_with: only with replace")
        operator = data.get("operator")
        if operator is not None and (
            len(operator) > 128 or not operator.isprintable() or not operator.strip()
        ):
            raise ServerError(400, "bad_request", "operator: 1-128 printable characters")
        if not runtime.approvals.decide(
            approval_id, decision, replacement=replacement, operator=operator
        ):
            raise ServerError(404, "not_found", "no pending approval with this id")
        return _json_response({"approval_id": approval_id, "decision": decision.value})

    async def healthz(request: Request) -> Response:
        status = "draining" if runtime.draining else "ok"
        return _json_response({"status": status, "running_turns": runtime.running_turns})

    async def metrics(request: Request) -> Response:
        if runtime.metrics is None:
            raise ServerError(404, "not_found", "metrics are off")
        openmetrics = "application/openmetrics-text" in request.headers.get("accept", "")
        media = (
            "application/openmetrics-text; version=1.0.0; charset=utf-8"
            if openmetrics
            else "text/plain; version=0.0.4; charset=utf-8"
        )
        return Response(runtime.metrics(openmetrics), media_type=media)

    async def index(request: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8", headers=_page_headers())

    async def page_js(request: Request) -> Response:
        return Response(
            script, media_type="text/javascript; charset=utf-8", headers=_page_headers()
        )

    def _turn(request: Request) -> Any:
        handle = runtime.turn(request.path_params["turn_id"])
        if handle is None:
            raise ServerError(404, "not_found", "no turn with this id")
        return handle

    routes = [
        Route("/", index),
        Route("/page.js", page_js),
        Route("/healthz", healthz),
        Route("/metrics", metrics),
        Route("/v1/turns", _guarded(post_turn), methods=["POST"]),
        Route("/v1/turns/{turn_id}", _guarded(get_turn)),
        Route("/v1/turns/{turn_id}/steer", _guarded(steer_turn), methods=["POST"]),
        Route("/v1/turns/{turn_id}/events", _guarded(turn_events)),
        Route("/v1/approvals", _guarded(list_approvals)),
        Route("/v1/approvals/{approval_id}", _guarded(decide), methods=["POST"]),
        Route("/v1/events", _guarded(operator_events)),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error})
    return _BearerAuth(app, token)


MAX_ALLOWED_TOOLS = 256
"""Most entries a turn's `allowed_tools` may hold."""


MAX_TOOL_PATTERN_CHARS = 256
"""Longest entry of `allowed_tools`."""


def _allowed_tools(value: list[Any] | None) -> list[str] | None:
    """A turn's `allowed_tools`: names or patterns (`fs_*`), each a non-blank string.

    Raises:
        ServerError: 400 naming the field or the entry's index, never its text.
    """
    if value is None:
        return None
    if len(value) > MAX_ALLOWED_TOOLS:
        raise ServerError(400, "bad_request", f"allowed_tools: at most {MAX_ALLOWED_TOOLS} entries")
    for index, entry in enumerate(value):
        if not isinstance(entry, str) or not entry.strip() or len(entry) > MAX_TOOL_PATTERN_CHARS:
            raise ServerError(
                400,
                "bad_request",
                f"allowed_tools.{index}: a tool name or pattern, 1-{MAX_TOOL_PATTERN_CHARS} "
                "characters, not blank",
            )
    return value


def _guarded(
    handler: Callable[[Request], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """`ServerError` becomes its one-line JSON error."""

    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except ServerError as exc:
            return _error_response(exc.status, exc.code, exc.message)

    return endpoint


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    code = _STATUS_CODES.get(status, "error")
    return _error_response(status, code, _ERROR_TEXTS.get(status, "request refused"))


def _sse(events: AsyncIterator[tuple[int, dict[str, Any]] | None]) -> Response:
    async def body() -> AsyncIterator[str]:
        yield ": stream open\n\n"
        async for item in events:
            if item is None:
                yield ": ping\n\n"
                continue
            number, event = item
            data = json.dumps(event, ensure_ascii=True, separators=(",", ":"))
            yield f"id: {number}\ndata: {data}\n\n"

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _numbered(
    events: AsyncIterator[dict[str, Any] | None],
) -> AsyncIterator[tuple[int, dict[str, Any]] | None]:
    count = 0
    async for event in events:
        if event is None:
            yield None
        else:
            count += 1
            yield count, event


def _page_headers() -> dict[str, str]:
    return {
        "Content-Security-Policy": PAGE_CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def _asset(name: str) -> bytes:
    path = resources.files("zeroclaw_obs.server").joinpath(name)
    return path.read_bytes() if path.is_file() else b""
