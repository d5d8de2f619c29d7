"""Tests for `zeroclaw_obs.providers._http`: the pooled client and the one error mapping."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest

from zeroclaw_obs.errors import (
    ProviderConnectionError,
    ProviderHTTPError,
    ProviderResponseError,
    ProviderTimeoutError,
)
from zeroclaw_obs.providers import _http, _sse
from zeroclaw_obs.providers._http import (
    MAX_RETRY_AFTER_S,
    Endpoint,
    error_type_of,
    retry_after_of,
    server_of,
)
from zeroclaw_obs.providers._sse import ServerSentEvent

from .wire import DONE, Reply, WireServer, sse

KEY = "sk-test-DO-NOT-LEAK-0123456789"


def endpoint(wire: WireServer, timeout_s: float = 5.0) -> Endpoint:
    return Endpoint(
        provider="openai",
        base_url=wire.url + "/v1",
        headers={"authorization": f"Bearer {KEY}"},
        timeout_s=timeout_s,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TestServerOf:
    def test_host_and_explicit_port(self):
        """The host and the port written in the URL."""
        assert ("localhost", 11434) == server_of("http://localhost:11434/v1")

    def test_scheme_default_port(self):
        """No port: the scheme's (443 for https)."""
        assert ("api.openai.com", 443) == server_of("https://api.openai.com/v1")


class TestErrorTypeOf:
    def test_openai_error_type(self):
        """OpenAI's `error.type` when it is a known word."""
        body = b'{"error":{"message":"m","type":"insufficient_quota","param":null,"code":null}}'
        assert "insufficient_quota" == error_type_of(429, body)

    def test_openai_error_code(self):
        """OpenAI's `error.code` when its type is not a known word."""
        body = b'{"error":{"message":"m","type":"requests","code":"rate_limit_exceeded"}}'
        assert "rate_limit_exceeded" == error_type_of(429, body)

    def test_anthropic_error_type(self):
        """Anthropic's `{"type":"error","error":{"type":…}}`."""
        body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
        assert "overloaded_error" == error_type_of(529, body)

    def test_unknown_words_never_reach_the_line(self):
        """A type outside the vocabulary (it could carry anything) becomes `http_<status>`."""
        body = b'{"error":{"type":"sk-secret-smuggled","code":"my prompt"}}'
        assert "http_400" == error_type_of(400, body)

    def test_non_json_body(self):
        """An HTML error page is `http_<status>`."""
        assert "http_502" == error_type_of(502, b"<html>Bad gateway</html>")


class TestRetryAfterOf:
    def test_seconds(self):
        """`Retry-After: 2` is two seconds."""
        assert 2.0 == retry_after_of(httpx.Headers({"retry-after": "2"}))

    def test_milliseconds_win(self):
        """`retry-after-ms` (OpenAI) is preferred to `Retry-After`."""
        headers = httpx.Headers({"retry-after-ms": "1500", "retry-after": "9"})
        assert 1.5 == retry_after_of(headers)

    def test_http_date(self):
        """An HTTP date is the seconds from now until then."""
        headers = httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:05 GMT"})
        assert 5.0 == retry_after_of(headers, now=1445412480.0)

    def test_bounded(self):
        """A huge or negative value is cut to [0, MAX_RETRY_AFTER_S]."""
        assert MAX_RETRY_AFTER_S == retry_after_of(httpx.Headers({"retry-after": "86400"}))
        assert 0.0 == retry_after_of(httpx.Headers({"retry-after": "-3"}))

    def test_unreadable_or_absent(self):
        """Garbage, NaN or no header: None."""
        assert None is retry_after_of(httpx.Headers({"retry-after": "soon"}))
        assert None is retry_after_of(httpx.Headers({"retry-after": "nan"}))
        assert None is retry_after_of(httpx.Headers({}))


class TestEndpoint:
    async def test_post_json_sends_headers_and_body(self, wire: WireServer):
        """The JSON body reaches `{base_url}/path` with the default headers; JSON comes back."""
        wire.script(Reply.json({"ok": True}))
        ep = endpoint(wire)
        try:
            assert {"ok": True} == await ep.post_json("chat/completions", {"model": "m"})
        finally:
            await ep.aclose()
        (request,) = wire.requests
        assert ("POST", "/v1/chat/completions") == (request.method, request.path)
        assert {"model": "m"} == request.json
        assert f"Bearer {KEY}" == request.headers["authorization"]

    async def test_429_with_retry_after(self, wire: WireServer):
        """429 is a retryable HTTP error carrying Retry-After and the body's known type."""
        body = {"error": {"message": KEY, "type": "requests", "code": "rate_limit_exceeded"}}
        wire.script(Reply.json(body, status=429, headers={"retry-after": "3"}))
        ep = endpoint(wire)
        with pytest.raises(ProviderHTTPError) as caught:
            await ep.post_json("chat/completions", {})
        await ep.aclose()
        error = caught.value
        assert (429, "rate_limit_exceeded", 3.0, True) == (
            error.status,
            error.error_type,
            error.retry_after,
            error.retryable,
        )
        assert "provider 'openai': HTTP 429 rate_limit_exceeded" == str(error)

    async def test_500_retryable_400_not(self, wire: WireServer):
        """5xx may be retried; 4xx (but 429) may not."""
        wire.script(Reply(status=500, body=b"oops"), Reply(status=400, body=b"bad"))
        ep = endpoint(wire)
        errors = []
        for _ in range(2):
            with pytest.raises(ProviderHTTPError) as caught:
                await ep.post_json("x", {})
            errors.append((caught.value.error_type, caught.value.retryable))
        await ep.aclose()
        assert [("http_500", True), ("http_400", False)] == errors

    async def test_slow_server_times_out(self, wire: WireServer):
        """A server slower than `timeout_s` is `ProviderTimeoutError('timeout')`."""
        wire.script(Reply(body=b"{}", delay_s=2.0))
        ep = endpoint(wire, timeout_s=0.2)
        with pytest.raises(ProviderTimeoutError) as caught:
            await ep.post_json("x", {})
        await ep.aclose()
        assert ("timeout", True) == (caught.value.error_type, caught.value.retryable)
        assert isinstance(caught.value.__cause__, httpx.TimeoutException)

    async def test_nothing_listening(self):
        """A refused connection is `ProviderConnectionError('connect_error')`."""
        ep = Endpoint(
            provider="p", base_url=f"http://127.0.0.1:{free_port()}", headers={}, timeout_s=2
        )
        with pytest.raises(ProviderConnectionError) as caught:
            await ep.post_json("x", {})
        await ep.aclose()
        assert "connect_error" == caught.value.error_type

    async def test_malformed_body(self, wire: WireServer):
        """A 200 whose body is not JSON is `ProviderResponseError('invalid_response')`."""
        wire.script(Reply(body=b"<html>hello</html>"))
        ep = endpoint(wire)
        with pytest.raises(ProviderResponseError) as caught:
            await ep.post_json("x", {})
        await ep.aclose()
        assert ("invalid_response", False) == (caught.value.error_type, caught.value.retryable)

    async def test_body_too_large(self, wire: WireServer, monkeypatch):
        """A body past `MAX_BODY_BYTES` is `ProviderResponseError('response_too_large')`."""
        monkeypatch.setattr(_http, "MAX_BODY_BYTES", 10)
        wire.script(Reply.json({"text": "x" * 100}))
        ep = endpoint(wire)
        with pytest.raises(ProviderResponseError) as caught:
            await ep.post_json("x", {})
        await ep.aclose()
        assert "response_too_large" == caught.value.error_type

    async def test_event_too_large(self, wire: WireServer, monkeypatch):
        """An event past the SSE reader's cap is `ProviderResponseError('response_too_large')`."""
        monkeypatch.setattr(_sse, "MAX_EVENT_CHARS", 10)
        wire.script(Reply.stream([sse({"text": "x" * 100})]))
        ep = endpoint(wire)
        with pytest.raises(ProviderResponseError) as caught:
            async with ep.stream_events("x", {}) as events:
                _ = [e async for e in events]
        await ep.aclose()
        assert "response_too_large" == caught.value.error_type

    async def test_leaving_after_the_end_marker_keeps_the_connection(self, wire: WireServer):
        """A caller that stops at its end marker still leaves the connection in the pool."""
        wire.script(*[Reply.stream([sse({"n": 1}), DONE, sse({"late": True})])] * 2)
        ep = endpoint(wire)
        for _ in range(2):
            async with ep.stream_events("x", {}) as events:
                async for event in events:
                    if event.data == "[DONE]":
                        break
        await ep.aclose()
        assert 1 == len({r.client_port for r in wire.requests})

    async def test_stream_events(self, wire: WireServer):
        """A streamed answer comes back as events, in order."""
        wire.script(Reply.stream([sse({"a": 1}), sse({"b": 2}, event="delta"), DONE]))
        ep = endpoint(wire)
        async with ep.stream_events("x", {}) as events:
            got = [e async for e in events]
        await ep.aclose()
        assert [
            ServerSentEvent("message", '{"a":1}'),
            ServerSentEvent("delta", '{"b":2}'),
            ServerSentEvent("message", "[DONE]"),
        ] == got

    async def test_stream_error_status(self, wire: WireServer):
        """An error status on a streamed request raises before any event."""
        wire.script(Reply.json({"type": "error", "error": {"type": "overloaded_error"}}, 529))
        ep = endpoint(wire)
        with pytest.raises(ProviderHTTPError) as caught:
            async with ep.stream_events("x", {}):
                pass
        await ep.aclose()
        assert ("overloaded_error", True) == (caught.value.error_type, caught.value.retryable)

    async def test_dropped_mid_stream(self, wire: WireServer):
        """A connection closed mid-stream is `ProviderConnectionError('connection_dropped')`."""
        wire.script(Reply.stream([sse({"n": n}) for n in range(5)], drop_after=2))
        ep = endpoint(wire)
        seen = []
        with pytest.raises(ProviderConnectionError) as caught:
            async with ep.stream_events("x", {}) as events:
                async for event in events:
                    seen.append(event.data)
        await ep.aclose()
        assert ["connection_dropped", ['{"n":0}', '{"n":1}']] == [caught.value.error_type, seen]

    async def test_cancellation_closes_the_request(self, wire: WireServer):
        """Cancelling the task mid-stream closes the HTTP connection (the server sees it)."""
        wire.script(Reply.stream([sse({"n": n}) for n in range(100)], chunk_delay_s=0.05))
        ep = endpoint(wire)
        first = asyncio.Event()

        async def consume() -> None:
            async with ep.stream_events("x", {}) as events:
                async for _ in events:
                    first.set()

        task = asyncio.create_task(consume())
        await first.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await ep.aclose()
        assert await asyncio.to_thread(wire.requests[0].disconnected.wait, 5)

    async def test_aclose_twice_and_repr(self, wire: WireServer):
        """`aclose()` twice is safe; the repr names no key."""
        wire.script(Reply.json({}))
        ep = endpoint(wire)
        await ep.post_json("x", {})
        await ep.aclose()
        await ep.aclose()
        assert KEY not in repr(ep)
        with pytest.raises(RuntimeError):
            await ep.post_json("x", {})
