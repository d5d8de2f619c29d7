"""Tests for `zeroclaw_obs.providers.openai` against a real loopback server (`wire`).

The bodies are written in the exact shapes the Chat Completions API sends (lowercase keys,
`object`, `created`, `system_fingerprint`, `logprobs: null`, a last chunk with empty
`choices` carrying usage), as recorded real responses in public SDK repositories show them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from zeroclaw_obs.errors import (
    ProviderConnectionError,
    ProviderContextOverflowError,
    ProviderError,
    ProviderHTTPError,
    ProviderResponseError,
    ProviderTimeoutError,
)
from zeroclaw_obs.providers import NativeToolCall, ProviderRequest, Usage
from zeroclaw_obs.providers.openai import OpenAIProvider
from zeroclaw_obs.tools.base import ToolSpec

from .wire import DONE, Reply, WireServer, sse

KEY = "sk-proj-DO-NOT-LEAK-abcdef0123456789"
PROMPT = "my bank password is hunter2"
ID = "chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl"
MODEL = "gpt-4o-mini-2024-07-18"
USAGE = {
    "prompt_tokens": 53,
    "completion_tokens": 15,
    "total_tokens": 68,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {
        "reasoning_tokens": 0,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    },
}
WEATHER = ToolSpec(
    name="get_weather",
    description="Weather of a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": PROMPT},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
]


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> bytes:
    """One `chat.completion.chunk` event; `choices=[]` and `usage=…` via keywords."""
    body: dict[str, Any] = {
        "id": ID,
        "object": "chat.completion.chunk",
        "created": 1782955817,
        "model": MODEL,
        "service_tier": "default",
        "system_fingerprint": "fp_d0469e1700",
        "choices": [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}],
        "usage": None,
    }
    body.update(top)
    return sse(body)


def usage_chunk() -> bytes:
    """The last chunk under `stream_options.include_usage`: no choices, the usage."""
    return chunk(choices=[], usage=USAGE)


def call_delta(index: int, call_id: str | None, name: str | None, arguments: Any) -> dict:
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
        call["type"] = "function"
    if name is not None:
        call["function"]["name"] = name
    return {"tool_calls": [call]}


def completion(message: dict[str, Any], finish: str, usage: Any = USAGE) -> dict[str, Any]:
    """A non-streamed `chat.completion` body."""
    body: dict[str, Any] = {
        "id": ID,
        "object": "chat.completion",
        "created": 1748496646,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "annotations": [],
                    **message,
                },
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "service_tier": "default",
        "system_fingerprint": "fp_76544d79cb",
    }
    if usage is not None:
        body["usage"] = usage
    return body


def tool_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


async def complete(
    wire: WireServer, *replies: Reply, tools: list[ToolSpec] | None = None, **kwargs: Any
) -> Any:
    """Script `replies`, send one request with a fresh provider, close it; the response."""
    wire.script(*replies)
    on_text = kwargs.pop("on_text", None)
    provider = make(wire, **kwargs)
    try:
        request = ProviderRequest(messages=MESSAGES, tools=tools or [], on_text=on_text)
        return await provider.complete(request)
    finally:
        await provider.aclose()


def make(wire: WireServer, **kwargs: Any) -> OpenAIProvider:
    kwargs.setdefault("timeout_s", 5.0)
    return OpenAIProvider(base_url=wire.url + "/v1", model="gpt-4o-mini", api_key=KEY, **kwargs)


def streamed(*chunks: bytes, **kwargs: Any) -> Reply:
    return Reply.stream(chunks, **kwargs)


class TestRequestBody:
    async def test_streaming_request(self, wire: WireServer):
        """Model, messages as they are, function tools, stream options and the bearer key."""
        await complete(wire, streamed(chunk({"content": "ok"}, "stop"), DONE), tools=[WEATHER])
        (sent,) = wire.requests
        assert ("POST", "/v1/chat/completions") == (sent.method, sent.path)
        assert f"Bearer {KEY}" == sent.headers["authorization"]
        assert {
            "model": "gpt-4o-mini",
            "messages": MESSAGES,
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "description": "Weather of a city.",
                        "parameters": WEATHER.parameters,
                    },
                }
            ],
            "stream": True,
            "stream_options": {"include_usage": True},
        } == sent.json

    async def test_non_streaming_request(self, wire: WireServer):
        """Without streaming neither `stream` nor `stream_options` travel."""
        reply = Reply.json(completion({"content": "ok"}, "stop"))
        await complete(wire, reply, tools=[WEATHER], stream=False)
        assert {"model", "messages", "tools"} == set(wire.requests[0].json)

    async def test_text_protocol_sends_no_tools(self, wire: WireServer):
        """`native_tools: false`: no `tools` in the body; tags come back as plain text."""
        tags = '<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>'
        response = await complete(
            wire,
            streamed(chunk({"content": tags}, "stop"), DONE),
            tools=[WEATHER],
            native_tools=False,
        )
        assert "tools" not in wire.requests[0].json
        assert (tags, []) == (response.text, response.tool_calls)

    async def test_no_tools_no_tools_key(self, wire: WireServer):
        """An empty tool list (the final no-tools call) sends no `tools` key."""
        await complete(wire, streamed(chunk({"content": "ok"}, "stop"), DONE))
        assert "tools" not in wire.requests[0].json

    async def test_no_key_no_header(self, wire: WireServer):
        """A local server needing no key gets no Authorization header."""
        wire.script(streamed(chunk({"content": "ok"}, "stop"), DONE))
        provider = OpenAIProvider(base_url=wire.url + "/v1", model="m", api_key=None)
        await provider.complete(ProviderRequest(messages=MESSAGES))
        await provider.aclose()
        assert "authorization" not in wire.requests[0].headers


class TestNonStreaming:
    async def test_text_answer(self, wire: WireServer):
        """Text, usage, id, model and finish reason come from the body."""
        reply = Reply.json(completion({"content": "Why don't skeletons fight?"}, "stop"))
        response = await complete(wire, reply, stream=False)
        assert "Why don't skeletons fight?" == response.text
        assert Usage(input_tokens=53, output_tokens=15) == response.usage
        assert (ID, MODEL, ("stop",)) == (
            response.response_id,
            response.model,
            response.finish_reasons,
        )

    async def test_parallel_tool_calls(self, wire: WireServer):
        """Every call in `tool_calls`, in order, arguments as the JSON string sent."""
        message = {
            "tool_calls": [
                tool_call("call_qOf", "get_weather", '{"location":"Shanghai"}'),
                tool_call("call_Zr5", "get_weather", '{"location":"Tokyo"}'),
            ]
        }
        response = await complete(wire, Reply.json(completion(message, "tool_calls")), stream=False)
        assert [
            NativeToolCall(id="call_qOf", name="get_weather", arguments='{"location":"Shanghai"}'),
            NativeToolCall(id="call_Zr5", name="get_weather", arguments='{"location":"Tokyo"}'),
        ] == response.tool_calls
        assert ("", ("tool_calls",)) == (response.text, response.finish_reasons)

    async def test_missing_and_empty_ids(self, wire: WireServer):
        """A call without an id, or with `""`, has id None (the loop gives it a UUID)."""
        no_id = {"type": "function", "function": {"name": "now", "arguments": "{}"}}
        message = {"tool_calls": [no_id, tool_call("", "now", "{}")]}
        response = await complete(wire, Reply.json(completion(message, "tool_calls")), stream=False)
        assert [None, None] == [call.id for call in response.tool_calls]

    async def test_arguments_pass_through(self, wire: WireServer):
        """Arguments as `""`, `"{}"`, an object, or absent, reach the loop as sent (absent: "")."""
        absent = {"id": "c4", "type": "function", "function": {"name": "f"}}
        message = {
            "tool_calls": [
                tool_call("c1", "f", ""),
                tool_call("c2", "f", "{}"),
                tool_call("c3", "f", {"city": "Paris"}),
                absent,
            ]
        }
        response = await complete(wire, Reply.json(completion(message, "tool_calls")), stream=False)
        assert ["", "{}", {"city": "Paris"}, ""] == [c.arguments for c in response.tool_calls]

    async def test_legacy_function_call(self, wire: WireServer):
        """The legacy `function_call` field is one call; finish reason `function_call`."""
        message = {"function_call": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}
        response = await complete(
            wire, Reply.json(completion(message, "function_call")), stream=False
        )
        assert [
            NativeToolCall(id=None, name="get_weather", arguments='{"city":"Oslo"}')
        ] == response.tool_calls
        assert ("function_call",) == response.finish_reasons

    async def test_no_usage(self, wire: WireServer):
        """A server that reports no usage gives `usage` None."""
        reply = Reply.json(completion({"content": "hi"}, "stop", usage=None))
        assert None is (await complete(wire, reply, stream=False)).usage

    @pytest.mark.parametrize(
        "body",
        [
            b"<html>502</html>",
            b'{"choices": []}',
            b'{"choices": [{"message": {"content": 42}}]}',
            b'{"choices": [{"message": {"tool_calls": [{"function": {"arguments": "{}"}}]}}]}',
            b"[]",
        ],
    )
    async def test_malformed_body(self, wire: WireServer, body: bytes):
        """A body not in the documented shape is `ProviderResponseError('invalid_response')`."""
        with pytest.raises(ProviderResponseError) as caught:
            await complete(wire, Reply(body=body), stream=False)
        assert ("invalid_response", False) == (caught.value.error_type, caught.value.retryable)


class TestStreaming:
    async def test_text_stream(self, wire: WireServer):
        """Deltas go to `on_text` in order; text, usage (last chunk), id, model, finish reason."""
        deltas: list[str] = []
        response = await complete(
            wire,
            streamed(
                chunk({"role": "assistant", "content": "", "refusal": None}),
                chunk({"content": "The"}),
                chunk({"content": " capital"}),
                chunk({"content": " is London."}),
                chunk({}, "stop"),
                usage_chunk(),
                DONE,
            ),
            on_text=deltas.append,
        )
        assert ["The", " capital", " is London."] == deltas
        assert "The capital is London." == response.text
        assert Usage(input_tokens=53, output_tokens=15) == response.usage
        assert (ID, MODEL, ("stop",)) == (
            response.response_id,
            response.model,
            response.finish_reasons,
        )

    async def test_on_text_called_before_the_stream_ends(self, wire: WireServer):
        """Text reaches `on_text` while the server is still sending the rest."""
        wire.script(
            streamed(
                chunk({"content": "first"}),
                chunk({"content": " second"}),
                chunk({}, "stop"),
                DONE,
                chunk_delay_s=0.2,
            )
        )
        provider = make(wire)
        first = asyncio.Event()
        got: list[str] = []

        def on_text(delta: str) -> None:
            got.append(delta)
            first.set()

        task = asyncio.create_task(
            provider.complete(ProviderRequest(messages=MESSAGES, on_text=on_text))
        )
        await first.wait()
        still_streaming = not task.done()
        response = await task
        await provider.aclose()
        assert (True, ["first"]) == (still_streaming, got[:1])
        assert "first second" == response.text

    async def test_parallel_calls_interleaved_by_index(self, wire: WireServer):
        """Calls are assembled by index; argument pieces interleave; order of first sight."""
        response = await complete(
            wire,
            streamed(
                chunk(
                    {
                        "role": "assistant",
                        "content": None,
                        **call_delta(0, "call_a", "get_weather", ""),
                    }
                ),
                chunk(call_delta(1, "call_b", "get_time", "")),
                chunk(call_delta(0, None, None, '{"city"')),
                chunk(call_delta(1, None, None, '{"tz"')),
                chunk(call_delta(0, None, None, ':"Paris"}')),
                chunk(call_delta(1, None, None, ':"UTC"}')),
                chunk({}, "tool_calls"),
                usage_chunk(),
                DONE,
            ),
            tools=[WEATHER],
        )
        assert [
            NativeToolCall(id="call_a", name="get_weather", arguments='{"city":"Paris"}'),
            NativeToolCall(id="call_b", name="get_time", arguments='{"tz":"UTC"}'),
        ] == response.tool_calls
        assert ("tool_calls",) == response.finish_reasons

    async def test_every_call_at_index_zero_with_ids(self, wire: WireServer):
        """A new id at an index in use starts a new call."""
        response = await complete(
            wire,
            streamed(
                chunk(call_delta(0, "call_a", "get_weather", '{"city":')),
                chunk(call_delta(0, None, None, '"Paris"}')),
                chunk(call_delta(0, "call_b", "get_weather", '{"city":"Rome"}')),
                chunk({}, "tool_calls"),
                DONE,
            ),
        )
        assert [("call_a", '{"city":"Paris"}'), ("call_b", '{"city":"Rome"}')] == [
            (c.id, c.arguments) for c in response.tool_calls
        ]

    async def test_every_call_at_index_zero_without_ids(self, wire: WireServer):
        """No ids: a new name, or the same name after whole arguments, starts a new call."""
        response = await complete(
            wire,
            streamed(
                chunk(call_delta(0, None, "get_weather", '{"city":"Paris"}')),
                chunk(call_delta(0, None, "get_weather", '{"city":"Rome"}')),
                chunk(call_delta(0, None, "get_time", "")),
                chunk(call_delta(0, None, None, "{}")),
                chunk({}, "tool_calls"),
                DONE,
            ),
        )
        assert [
            NativeToolCall(id=None, name="get_weather", arguments='{"city":"Paris"}'),
            NativeToolCall(id=None, name="get_weather", arguments='{"city":"Rome"}'),
            NativeToolCall(id=None, name="get_time", arguments="{}"),
        ] == response.tool_calls

    async def test_name_repeated_in_every_piece(self, wire: WireServer):
        """A server repeating the name with each argument piece still gives one call."""
        response = await complete(
            wire,
            streamed(
                chunk(call_delta(0, "call_a", "get_weather", '{"ci')),
                chunk(call_delta(0, "call_a", "get_weather", 'ty":"Oslo"}')),
                chunk({}, "tool_calls"),
                DONE,
            ),
        )
        assert [
            NativeToolCall(id="call_a", name="get_weather", arguments='{"city":"Oslo"}')
        ] == response.tool_calls

    async def test_missing_and_empty_ids(self, wire: WireServer):
        """A streamed call without an id, or with `""`, has id None."""
        response = await complete(
            wire,
            streamed(
                chunk(call_delta(0, "", "now", "{}")),
                chunk(call_delta(1, None, "now", "{}")),
                chunk({}, "tool_calls"),
                DONE,
            ),
        )
        assert [None, None] == [call.id for call in response.tool_calls]

    async def test_arguments_pass_through(self, wire: WireServer):
        """Streamed arguments `""`, `"{}"` and an object reach the loop as sent."""
        response = await complete(
            wire,
            streamed(
                chunk(call_delta(0, "c1", "f", "")),
                chunk(call_delta(1, "c2", "f", "{}")),
                chunk(call_delta(2, "c3", "f", {"city": "Paris"})),
                chunk({}, "tool_calls"),
                DONE,
            ),
        )
        assert ["", "{}", {"city": "Paris"}] == [c.arguments for c in response.tool_calls]

    async def test_no_usage(self, wire: WireServer):
        """A server that ignores `include_usage` gives `usage` None."""
        response = await complete(wire, streamed(chunk({"content": "hi"}, "stop"), DONE))
        assert None is response.usage

    async def test_legacy_function_call(self, wire: WireServer):
        """Streamed `function_call` deltas make one call; finish reason `function_call`."""
        response = await complete(
            wire,
            streamed(
                chunk({"function_call": {"name": "get_weather", "arguments": ""}}),
                chunk({"function_call": {"arguments": '{"city":"Oslo"}'}}),
                chunk({}, "function_call"),
                DONE,
            ),
        )
        assert [
            NativeToolCall(id=None, name="get_weather", arguments='{"city":"Oslo"}')
        ] == response.tool_calls
        assert ("function_call",) == response.finish_reasons

    async def test_finish_reason_without_done(self, wire: WireServer):
        """A server that closes cleanly after the finish reason, with no `[DONE]`, is fine."""
        response = await complete(wire, streamed(chunk({"content": "hi"}, "stop")))
        assert ("hi", ("stop",)) == (response.text, response.finish_reasons)

    async def test_done_then_the_body_stays_open(self, wire: WireServer):
        """After `[DONE]` the answer is complete, even if the server keeps the body open."""
        reply = streamed(chunk({"content": "hi"}, "stop") + DONE, b": ping\n\n", chunk_delay_s=3)
        response = await complete(wire, reply, timeout_s=10)
        assert "hi" == response.text

    async def test_cut_off_without_done_or_finish(self, wire: WireServer):
        """A stream that ends with neither `[DONE]` nor a finish reason was cut off."""
        with pytest.raises(ProviderConnectionError) as caught:
            await complete(wire, streamed(chunk({"content": "hi"})))
        assert "connection_dropped" == caught.value.error_type

    async def test_json_instead_of_events(self, wire: WireServer):
        """A server that answers a streamed request with one JSON body: `invalid_response`."""
        with pytest.raises(ProviderResponseError) as caught:
            await complete(wire, Reply.json(completion({"content": "hi"}, "stop")))
        assert "invalid_response" == caught.value.error_type

    async def test_malformed_chunk(self, wire: WireServer):
        """A chunk that is not JSON is `ProviderResponseError('invalid_response')`."""
        with pytest.raises(ProviderResponseError) as caught:
            await complete(wire, streamed(chunk({"content": "a"}), b"data: {nope\n\n", DONE))
        assert "invalid_response" == caught.value.error_type

    async def test_error_event_mid_stream(self, wire: WireServer):
        """An error object mid-stream is a `ProviderResponseError` naming its known type only."""
        error = sse({"error": {"message": PROMPT, "type": "server_error", "code": None}})
        with pytest.raises(ProviderResponseError) as caught:
            await complete(wire, streamed(chunk({"content": "a"}), error))
        assert "provider 'openai': server_error" == str(caught.value)


class TestErrors:
    async def test_429_with_retry_after(self, wire: WireServer):
        """429 is retryable and carries Retry-After and the body's known error code."""
        body = {"error": {"message": KEY, "type": "requests", "code": "rate_limit_exceeded"}}
        with pytest.raises(ProviderHTTPError) as caught:
            await complete(wire, Reply.json(body, 429, {"retry-after": "2"}))
        error = caught.value
        assert (429, "rate_limit_exceeded", 2.0, True) == (
            error.status,
            error.error_type,
            error.retry_after,
            error.retryable,
        )

    async def test_500_is_retryable(self, wire: WireServer):
        """500 with OpenAI's `server_error` body is retryable."""
        body = {"error": {"message": "The server had an error", "type": "server_error"}}
        with pytest.raises(ProviderHTTPError) as caught:
            await complete(wire, Reply.json(body, 500))
        assert ("server_error", True) == (caught.value.error_type, caught.value.retryable)

    async def test_400_is_not_retryable(self, wire: WireServer):
        """400 `invalid_request_error` is final."""
        body = {"error": {"message": PROMPT, "type": "invalid_request_error", "param": "tools"}}
        with pytest.raises(ProviderHTTPError) as caught:
            await complete(wire, Reply.json(body, 400))
        assert "provider 'openai': HTTP 400 invalid_request_error" == str(caught.value)
        assert False is caught.value.retryable

    async def test_context_length_exceeded_is_an_overflow(self, wire: WireServer):
        """400 with OpenAI's `context_length_exceeded` code is the typed overflow, not retried;
        its message (which quotes the request's size) is not in the line."""
        body = {
            "error": {
                "message": f"This model's maximum context length is 128000 tokens. {PROMPT}",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }
        with pytest.raises(ProviderContextOverflowError) as caught:
            await complete(wire, Reply.json(body, 400))
        assert "provider 'openai': HTTP 400 context_length_exceeded" == str(caught.value)
        assert (False, 400) == (caught.value.retryable, caught.value.status)

    async def test_a_compatible_servers_overflow_is_read_from_its_message(self, wire: WireServer):
        """vLLM's 400 names no code: its `maximum context length` message marks the overflow."""
        body = {
            "object": "error",
            "message": "This model's maximum context length is 4096 tokens. However, you "
            "requested 5000 tokens (4900 in the messages, 100 in the completion).",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
        with pytest.raises(ProviderContextOverflowError):
            await complete(wire, Reply.json(body, 400), stream=False)

    async def test_an_overflow_event_mid_stream(self, wire: WireServer):
        """An error event naming `context_length_exceeded` after the 200 is the same overflow."""
        error = sse(
            {
                "error": {
                    "message": PROMPT,
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            }
        )
        with pytest.raises(ProviderContextOverflowError) as caught:
            await complete(wire, streamed(error))
        assert "provider 'openai': HTTP 400 context_length_exceeded" == str(caught.value)

    async def test_another_400_is_not_an_overflow(self, wire: WireServer):
        """A refused request that does not speak of the context window stays a plain 400."""
        body = {"error": {"message": "Invalid 'tools'", "type": "invalid_request_error"}}
        with pytest.raises(ProviderHTTPError) as caught:
            await complete(wire, Reply.json(body, 400))
        assert not isinstance(caught.value, ProviderContextOverflowError)

    async def test_slow_server_times_out(self, wire: WireServer):
        """A server slower than `timeout_s` is `ProviderTimeoutError`."""
        with pytest.raises(ProviderTimeoutError):
            await complete(wire, Reply(body=b"{}", delay_s=2.0), timeout_s=0.2)

    async def test_stalled_stream_times_out(self, wire: WireServer):
        """A stream that stops sending for longer than `timeout_s` is `ProviderTimeoutError`."""
        reply = streamed(chunk({"content": "a"}), chunk({}, "stop"), DONE, chunk_delay_s=2.0)
        with pytest.raises(ProviderTimeoutError):
            await complete(wire, reply, timeout_s=0.2)

    async def test_dropped_mid_stream(self, wire: WireServer):
        """A connection dropped mid-stream is `ProviderConnectionError`, retryable."""
        reply = streamed(
            chunk({"content": "a"}), chunk({"content": "b"}), chunk({}, "stop"), DONE, drop_after=2
        )
        seen: list[str] = []
        with pytest.raises(ProviderConnectionError) as caught:
            await complete(wire, reply, on_text=seen.append)
        assert ("connection_dropped", True, ["a", "b"]) == (
            caught.value.error_type,
            caught.value.retryable,
            seen,
        )

    async def test_cancellation_closes_the_request(self, wire: WireServer):
        """Cancelling mid-stream closes the HTTP request: the server sees the connection close."""
        chunks = [chunk({"content": str(n)}) for n in range(100)]
        wire.script(streamed(*chunks, DONE, chunk_delay_s=0.05))
        provider = make(wire)
        first = asyncio.Event()
        task = asyncio.create_task(
            provider.complete(ProviderRequest(messages=MESSAGES, on_text=lambda _: first.set()))
        )
        await first.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await provider.aclose()
        assert await asyncio.to_thread(wire.requests[0].disconnected.wait, 5)


class TestSecrets:
    async def test_no_key_or_prompt_in_any_error(self, wire: WireServer):
        """Whatever fails, neither the key nor the prompt is in the error or the provider repr."""
        echo = {"error": {"message": f"{KEY} {PROMPT}", "type": KEY, "code": PROMPT}}
        replies = [
            Reply.json(echo, 401),
            Reply.json(echo, 500),
            Reply(body=f"{KEY} {PROMPT}".encode()),
            streamed(sse(echo)),
        ]
        errors: list[ProviderError] = []
        for reply, stream in zip(replies, [True, False, False, True], strict=True):
            with pytest.raises(ProviderError) as caught:
                await complete(wire, reply, stream=stream)
            errors.append(caught.value)
        provider = make(wire)
        shown = [str(e) for e in errors] + [repr(e) for e in errors] + [repr(provider)]
        await provider.aclose()
        assert [] == [s for s in shown if KEY in s or "hunter2" in s]
        assert [
            "provider 'openai': HTTP 401 http_401",
            "provider 'openai': HTTP 500 http_500",
            "provider 'openai': invalid_response",
            "provider 'openai': stream_error",
        ] == [str(e) for e in errors]


class TestLifecycle:
    async def test_aclose_twice(self, wire: WireServer):
        """`aclose()` twice is safe, used or not."""
        unused = make(wire)
        await unused.aclose()
        await unused.aclose()
        used = make(wire)
        wire.script(streamed(chunk({"content": "hi"}, "stop"), DONE))
        await used.complete(ProviderRequest(messages=MESSAGES))
        await used.aclose()
        await used.aclose()

    async def test_server_and_properties(self):
        """`server.address`/`server.port` from the base URL; the constructor's properties."""
        provider = OpenAIProvider(
            base_url="http://localhost:11434/v1",
            model="llama3.1",
            api_key=None,
            native_tools=False,
            max_retries=4,
            name="ollama",
        )
        assert ("localhost", 11434, "llama3.1", False, 4, "ollama") == (
            provider.server_address,
            provider.server_port,
            provider.model,
            provider.native_tools,
            provider.max_retries,
            provider.name,
        )
        await provider.aclose()

    async def test_connection_reused(self, wire: WireServer):
        """Two streamed requests on one provider share one pooled connection."""
        wire.script(
            streamed(chunk({"content": "a"}, "stop"), DONE),
            streamed(chunk({"content": "b"}, "stop"), DONE),
        )
        provider = make(wire)
        texts = [
            (await provider.complete(ProviderRequest(messages=MESSAGES))).text for _ in range(2)
        ]
        await provider.aclose()
        assert ["a", "b"] == texts
        assert 1 == len({r.client_port for r in wire.requests})


class TestMaxTokens:
    async def test_the_cap_is_sent_only_when_set(self, wire: WireServer):
        """`max_tokens` from the agent file reaches the body; without it nothing is sent."""
        wire.script(Reply.json({"choices": [{"message": {"content": "hi"}}]}))
        wire.script(Reply.json({"choices": [{"message": {"content": "hi"}}]}))
        for cap in (256, None):
            provider = OpenAIProvider(
                base_url=wire.url, model="m", api_key=None, stream=False, max_tokens=cap
            )
            await provider.complete(ProviderRequest(messages=[{"role": "user", "content": "x"}]))
            await provider.aclose()

        assert [256, None] == [r.json.get("max_tokens") for r in wire.requests]
