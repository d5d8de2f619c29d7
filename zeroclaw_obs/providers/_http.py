"""The HTTP half of the real providers: one pooled `httpx.AsyncClient` and one error mapping.

Both real providers (`openai.py`, `anthropic.py`) send JSON over httpx and read either a JSON
body or a Server-Sent Events stream. What they share lives here, so backend failures are
translated ONCE, at the seam, into our `ProviderError` subclasses (httpx's own
`map_httpcore_exceptions` is the shape):

    httpx.TimeoutException (connect, read, write, pool)  → ProviderTimeoutError   `timeout`
    httpx.ConnectError                                   → ProviderConnectionError `connect_error`
    any other transport error (peer closed, read error)  → ProviderConnectionError
                                                           `connection_dropped`
    an HTTP status outside 2xx                           → ProviderHTTPError  (error type below)
    … whose body says the prompt is over the context window → ProviderContextOverflowError
                                                           `context_length_exceeded`
    a body that is not JSON, or an event too large       → ProviderResponseError

Risky part: everything here reads bytes from a network peer, and the error line is printed and
exported as is. So no error ever carries a response body, a request body or a header value:
an HTTP error's type is the body's own error type only when it is one word of `KNOWN_ERROR_TYPES`
(else `http_<status>`), `Retry-After` becomes a bounded number, and bodies are read with a cap.
The API key travels only in the client's default headers, which nothing here prints; `repr()`
shows the provider name and the server, never headers.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing, asynccontextmanager, contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..errors import (
    CONTEXT_LENGTH_EXCEEDED,
    ProviderConnectionError,
    ProviderContextOverflowError,
    ProviderHTTPError,
    ProviderResponseError,
    ProviderTimeoutError,
)
from ._sse import EventTooLarge, ServerSentEvent, aiter_sse
from .base import Provider

__all__ = [
    "DRAIN_MAX_LINES",
    "DRAIN_S",
    "KNOWN_ERROR_TYPES",
    "MAX_BODY_BYTES",
    "MAX_ERROR_BODY_BYTES",
    "MAX_RETRY_AFTER_S",
    "Endpoint",
    "HttpProvider",
    "context_overflow_in",
    "error_type_in",
    "error_type_of",
    "retry_after_of",
    "server_of",
]

KNOWN_ERROR_TYPES = frozenset(
    {
        # Anthropic `error.type`
        "api_error",
        "authentication_error",
        "billing_error",
        "invalid_request_error",
        "not_found_error",
        "overloaded_error",
        "permission_error",
        "rate_limit_error",
        "request_too_large",
        "timeout_error",
        # OpenAI `error.type` / `error.code`
        "context_length_exceeded",
        "insufficient_quota",
        "invalid_api_key",
        "model_not_found",
        "rate_limit_exceeded",
        "server_error",
    }
)
"""Error types a backend body may name in our error line; anything else is `http_<status>`."""

MAX_RETRY_AFTER_S = 60.0
"""The longest `Retry-After` we pass on; a larger value is cut to this."""

MAX_ERROR_BODY_BYTES = 64 * 1024
"""The most bytes of an error body read to find its error type (the rest is discarded)."""

DRAIN_S = 0.5
"""How long a finished stream's remaining bytes are read, so its connection can be reused."""

DRAIN_MAX_LINES = 64
"""The most lines read after a stream's end marker before the connection is closed instead."""

MAX_BODY_BYTES = 16 * 1024 * 1024
"""The most bytes of a non-streamed response body; past it: `response_too_large`."""


def server_of(base_url: str) -> tuple[str | None, int | None]:
    """`server.address` and `server.port` from a base URL (the scheme's port when none given)."""
    parts = urlsplit(base_url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = {"https": 443, "http": 80}.get(parts.scheme)
    return parts.hostname, port


def error_type_of(status: int, body: bytes) -> str:
    """The error type for our line: the body's own type when it is a known word, else ours.

    Never returns text from the body that is not in `KNOWN_ERROR_TYPES`.
    """
    return error_type_in(_decoded_body(body)) or f"http_{status}"


def _decoded_body(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def error_type_in(data: Any) -> str | None:
    """The known error type a decoded error object names, else None.

    Reads OpenAI's `{"error": {"type", "code"}}`, Anthropic's `{"type": "error", "error":
    {"type"}}` and a bare top-level `type` (some compatible servers); also used for an error
    event in the middle of a stream.
    """
    candidates: list[Any] = []
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            candidates += [error.get("type"), error.get("code")]
        candidates.append(data.get("type"))
    for candidate in candidates:
        if isinstance(candidate, str) and candidate in KNOWN_ERROR_TYPES:
            return candidate
    return None


def retry_after_of(headers: httpx.Headers, *, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date).

    Bounded to [0, `MAX_RETRY_AFTER_S`]; None when absent or unreadable.
    """
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        seconds = _finite(raw_ms)
        if seconds is not None:
            return _bounded(seconds / 1000)
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _finite(raw)
    if seconds is None:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return _bounded(seconds)


def _finite(raw: str) -> float | None:
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _bounded(seconds: float) -> float:
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


_OVERFLOW_PHRASES = ("prompt is too long", "maximum context length")
"""Lowercased phrases of an error message that mean the context window overflowed:
Anthropic's `invalid_request_error` (`prompt is too long: 208310 tokens > 200000 maximum`)
and OpenAI's (`This model's maximum context length is 128000 tokens…`), which vLLM and
LiteLLM repeat without OpenAI's `code`, under a type of their own (`BadRequestError`)."""


def context_overflow_in(data: Any) -> bool:
    """Whether a decoded error body says the prompt exceeds the model's context window.

    True for OpenAI's `{"error": {"code": "context_length_exceeded"}}` (or that word as the
    `type`, as some compatible servers send it), and for an error whose message (`error.message`,
    or a top-level `message` as older vLLM sends it) holds one of `_OVERFLOW_PHRASES`. The
    message is only searched, and only its first 4 KiB: nothing of it leaves but this bool.
    """
    if not isinstance(data, dict):
        return False
    error = data.get("error")
    if isinstance(error, dict):
        if CONTEXT_LENGTH_EXCEEDED in (error.get("code"), error.get("type")):
            return True
        message = error.get("message")
    else:
        message = data.get("message")
    if not isinstance(message, str):
        return False
    lowered = message[:4096].lower()
    return any(phrase in lowered for phrase in _OVERFLOW_PHRASES)


class Endpoint:
    """One backend's base URL, its pooled client and the error mapping for every request.

    Created by a provider; the client is built on first use (so a provider can be built outside
    an event loop) and closed by `aclose()`, which is safe to call twice.
    """

    def __init__(
        self,
        *,
        provider: str,
        base_url: str,
        headers: dict[str, str],
        timeout_s: float,
    ) -> None:
        """Hold the settings; the client itself is built on the first request.

        Args:
            provider: the provider's shown name, the first word of every error line.
            base_url: the API root; request paths are joined to it.
            headers: sent with every request (the auth header among them: never printed).
            timeout_s: connect, read, write and pool timeout, each.
        """
        self.provider = provider
        self._base_url = base_url.rstrip("/") + "/"
        self._headers = headers
        self._timeout = httpx.Timeout(timeout_s)
        self._client: httpx.AsyncClient | None = None
        self._closed = False
        self.server_address, self.server_port = server_of(base_url)

    def __repr__(self) -> str:
        return f"Endpoint(provider={self.provider!r}, server={self.server_address!r})"

    def _http(self) -> httpx.AsyncClient:
        if self._closed:
            raise RuntimeError(f"provider {self.provider!r} is closed")
        if self._client is None:
            self._client = httpx.AsyncClient(
                base_url=self._base_url,
                headers=self._headers,
                timeout=self._timeout,
                limits=httpx.Limits(max_connections=20, max_keepalive_connections=10),
            )
        return self._client

    async def aclose(self) -> None:
        """Close the pooled connections; safe to call twice."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def post_json(self, path: str, body: dict[str, Any]) -> Any:
        """POST `body` as JSON and return the decoded JSON answer.

        Raises:
            ProviderError: a subclass, as the module docstring maps it.
        """
        with self._translated():
            async with self._http().stream("POST", path, json=body) as response:
                await self._raise_for_status(response)
                raw = await _read_capped(response, MAX_BODY_BYTES)
        if raw is None:
            raise ProviderResponseError(self.provider, "response_too_large")
        try:
            return json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ProviderResponseError(self.provider, "invalid_response") from exc

    @asynccontextmanager
    async def stream_events(
        self, path: str, body: dict[str, Any]
    ) -> AsyncIterator[AsyncIterator[ServerSentEvent]]:
        """POST `body` as JSON and yield the answer's Server-Sent Events.

        Used as `async with endpoint.stream_events(path, body) as events: async for e in
        events`. Leaving the block (normally, by an error, or by cancellation) closes the
        response, so a cancelled turn closes its HTTP request. Transport errors raised while
        iterating are translated like those of the request itself. A provider may leave the
        block as soon as it has read its end marker (`[DONE]`, `message_stop`): what the
        server still sends is drained for at most `DRAIN_S`, so the connection goes back to
        the pool instead of being closed.

        Raises:
            ProviderError: a subclass, as the module docstring maps it.
        """
        with self._translated():
            async with self._http().stream("POST", path, json=body) as response:
                await self._raise_for_status(response)
                lines = response.aiter_lines()
                async with aclosing(aiter_sse(lines)) as events:
                    yield events
                await _drain(lines)

    async def _raise_for_status(self, response: httpx.Response) -> None:
        if response.is_success:
            return
        data = _decoded_body(await _read_capped(response, MAX_ERROR_BODY_BYTES) or b"")
        if context_overflow_in(data):
            raise ProviderContextOverflowError(self.provider, status=response.status_code)
        raise ProviderHTTPError(
            self.provider,
            error_type_in(data) or f"http_{response.status_code}",
            status=response.status_code,
            retry_after=retry_after_of(response.headers),
        )

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except httpx.TimeoutException as exc:
            raise ProviderTimeoutError(self.provider, "timeout") from exc
        except httpx.ConnectError as exc:
            raise ProviderConnectionError(self.provider, "connect_error") from exc
        except httpx.TransportError as exc:
            # RemoteProtocolError ("peer closed connection…"), ReadError, WriteError, …
            raise ProviderConnectionError(self.provider, "connection_dropped") from exc
        except httpx.DecodingError as exc:
            raise ProviderResponseError(self.provider, "invalid_response") from exc
        except EventTooLarge as exc:
            raise ProviderResponseError(self.provider, "response_too_large") from exc


async def _drain(lines: AsyncIterator[str]) -> None:
    """Read what follows the end marker, briefly; a response left unread loses its connection."""
    # Only the pool is at stake here: the answer is complete, so a failure or a server that
    # keeps the body open just closes this connection.
    with suppress(TimeoutError, httpx.HTTPError):
        async with asyncio.timeout(DRAIN_S):
            count = 0
            async for _ in lines:
                count += 1
                if count > DRAIN_MAX_LINES:
                    return


async def _read_capped(response: httpx.Response, cap: int) -> bytes | None:
    """The body, or None when it passes `cap` bytes (the rest is left unread)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


class HttpProvider(Provider):
    """What every real (HTTP) provider shares: its identity, one `Endpoint`, `aclose`, `repr`.

    Subclasses build their headers (where the key goes) and implement `complete`; the key
    lives only in the endpoint's client headers, never in an error, a log or `repr()`.
    """

    def __init__(
        self,
        *,
        name: str,
        model: str,
        base_url: str,
        headers: dict[str, str],
        native_tools: bool,
        stream: bool,
        timeout_s: float,
        max_retries: int,
        max_tokens: int | None,
    ) -> None:
        self.name = name
        self.max_tokens = max_tokens
        """The output cap each request carries; None: the server's default (OpenAI-compatible)."""
        self.model = model
        self.native_tools = native_tools
        self.max_retries = max_retries
        self.stream = stream
        self._endpoint = Endpoint(
            provider=name, base_url=base_url, headers=headers, timeout_s=timeout_s
        )
        self.server_address = self._endpoint.server_address
        self.server_port = self._endpoint.server_port

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, model={self.model!r}, "
            f"server={self.server_address!r}, stream={self.stream})"
        )

    async def aclose(self) -> None:
        """Close the pooled connections; safe to call twice."""
        await self._endpoint.aclose()
