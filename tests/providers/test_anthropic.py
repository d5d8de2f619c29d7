"""Tests for `zeroclaw_obs.providers.anthropic`: the Messages API, both ways, over real HTTP.

Wire fixtures have the exact shapes the API sends (the Anthropic SDK's recorded streams and
pydantic-ai's cassettes were read for them): named events, a `ping` after the first block
start, `input_json_delta` fragments that split keys and values anywhere, cumulative usage in
`message_delta`, cache counters beside `input_tokens`.
"""

from __future__ import annotations

import asyncio
import copy
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
from zeroclaw_obs.providers.anthropic import (
    AnthropicProvider,
    InBandError,
    StreamAssembler,
    WireFormatError,
    parse_message,
    request_body,
    to_messages,
)
from zeroclaw_obs.providers.base import NativeToolCall, ProviderRequest, Usage
from zeroclaw_obs.tools.base import ToolSpec

from .wire import Reply, WireServer, sse

KEY = "sk-ant-api03-TESTKEY-never-shown-0123456789"
MODEL = "claude-sonnet-4-20250514"
WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
TIME = ToolSpec(name="get_time", description="Local time.", parameters={"type": "object"})

# --- wire fixtures: the API's own shapes -----------------------------------------------------


def message(content: list[dict[str, Any]], stop_reason: str = "end_turn") -> dict[str, Any]:
    """A non-streamed `message` object as the API returns it."""
    return {
        "id": "msg_014qNMmxefjUvuPTSkMMHjWE",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 711,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 23,
            "service_tier": "standard",
        },
    }


def ev(event: str, **data: Any) -> bytes:
    """One event, its `type` repeated in the data as the API does."""
    return sse({"type": event, **data}, event)


def start(input_tokens: int = 377) -> bytes:
    return ev(
        "message_start",
        message={
            "id": "msg_019Q1hrJbZG26Fb9BQhrkHEr",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 1,
                "service_tier": "standard",
            },
        },
    )


def text_block(index: int, *deltas: str) -> list[bytes]:
    return [
        ev("content_block_start", index=index, content_block={"type": "text", "text": ""}),
        *(
            ev("content_block_delta", index=index, delta={"type": "text_delta", "text": d})
            for d in deltas
        ),
        ev("content_block_stop", index=index),
    ]


def tool_block(index: int, call_id: str, name: str, *fragments: str) -> list[bytes]:
    return [
        ev(
            "content_block_start",
            index=index,
            content_block={"type": "tool_use", "id": call_id, "name": name, "input": {}},
        ),
        *(
            ev(
                "content_block_delta",
                index=index,
                delta={"type": "input_json_delta", "partial_json": f},
            )
            for f in fragments
        ),
        ev("content_block_stop", index=index),
    ]


def end(stop_reason: str = "end_turn", output_tokens: int = 6) -> list[bytes]:
    return [
        ev(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        ev("message_stop"),
    ]


PING = sse({"type": "ping"}, "ping")

TEXT_STREAM = [start(11), *text_block(0, "Hello", " there", "!"), *end("end_turn", 6)]
TEXT_STREAM.insert(2, PING)  # the API pings after the first block start

TOOLS_STREAM = [
    start(),
    *text_block(0, "I", "'ll check both."),
    # Fragments split keys and values anywhere, and the first one is empty, as recorded.
    *tool_block(
        1, "toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", "", '{"ci', 'ty": "P', "ar", 'is"}'
    ),
    *tool_block(2, "toolu_01A09q90qw90lq917835lq9", "get_time"),
    *end("tool_use", 65),
]

CHAT = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Weather and time in Paris?"},
    {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {
                "id": "toolu_A",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            },
            {
                "id": "toolu_B",
                "type": "function",
                "function": {"name": "get_time", "arguments": "{}"},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "toolu_A", "content": "18C"},
    {"role": "tool", "tool_call_id": "toolu_B", "content": "14:02"},
]


@pytest.fixture
async def provider(wire: WireServer):
    """A streaming, native provider aimed at the loopback server."""
    made = AnthropicProvider(base_url=wire.url, model=MODEL, api_key=KEY)
    yield made
    await made.aclose()


def ask(*, tools: list[ToolSpec] | None = None, on_text=None, messages=None) -> ProviderRequest:
    return ProviderRequest(
        messages=messages or [{"role": "user", "content": "hi"}],
        tools=tools or [],
        on_text=on_text,
    )


# --- out: the request ------------------------------------------------------------------------


class TestToMessages:
    def test_system_is_top_level_and_text_is_blocks(self):
        """System messages join into the top-level string; the rest become text blocks."""
        system, messages = to_messages(CHAT[:2], tool_blocks=True)
        assert "You are terse." == system
        expected = [
            {"role": "user", "content": [{"type": "text", "text": "Weather and time in Paris?"}]}
        ]
        assert expected == messages

    def test_tool_calls_and_grouped_results(self):
        """Calls become `tool_use` after the text; consecutive results ONE user message."""
        _, messages = to_messages(CHAT, tool_blocks=True)
        expected = [
            {"role": "user", "content": [{"type": "text", "text": "Weather and time in Paris?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "toolu_A",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                    {"type": "tool_use", "id": "toolu_B", "name": "get_time", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_A", "content": "18C"},
                    {"type": "tool_result", "tool_use_id": "toolu_B", "content": "14:02"},
                ],
            },
        ]
        assert expected == messages

    def test_roles_alternate_and_results_open_the_merged_message(self):
        """A user message after results merges behind them; adjacent users merge too."""
        history = [
            *CHAT,
            {"role": "user", "content": "Thanks."},
            {"role": "user", "content": "More?"},
        ]
        _, messages = to_messages(history, tool_blocks=True)
        assert ["user", "assistant", "user"] == [m["role"] for m in messages]
        kinds = [b["type"] for b in messages[-1]["content"]]
        assert ["tool_result", "tool_result", "text", "text"] == kinds

    def test_empty_text_is_dropped(self):
        """The API refuses empty text blocks: a call-only assistant has only `tool_use`."""
        call = {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        history = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "t1", "content": "ok"},
            {"role": "assistant", "content": ""},
        ]
        _, messages = to_messages(history, tool_blocks=True)
        assert [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}] == messages[1][
            "content"
        ]
        assert 3 == len(messages)

    def test_without_tools_past_calls_travel_as_text(self):
        """No tool blocks in a request without tools: calls and results become text."""
        _, messages = to_messages(CHAT, tool_blocks=False)
        assert ["user", "assistant", "user"] == [m["role"] for m in messages]
        assert {"text"} == {b["type"] for m in messages for b in m["content"]}
        calls = messages[1]["content"][1]["text"]
        assert '[Tool calls]\nget_weather {"city":"Paris"}\nget_time {}' == calls
        results = messages[2]["content"][0]["text"]
        assert results.startswith('[Tool results]\n<tool_result name="get_weather">\n18C\n')

    def test_arguments_that_are_not_an_object_become_empty_input(self):
        """`input` must be an object; a broken call's arguments go back as `{}`."""
        call = {"id": "t1", "type": "function", "function": {"name": "f", "arguments": '"x"'}}
        _, messages = to_messages(
            [{"role": "assistant", "content": "", "tool_calls": [call]}], tool_blocks=True
        )
        assert {} == messages[0]["content"][0]["input"]

    def test_the_history_is_not_mutated(self):
        """Merging builds new messages; the loop's history is left as it was."""
        history = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}, *CHAT]
        before = copy.deepcopy(history)
        to_messages(history, tool_blocks=True)
        assert before == history


class TestRequestBody:
    def test_native_with_tools(self):
        """Tools travel as `{name, description, input_schema}`; `max_tokens` is always set."""
        body = request_body(
            ask(tools=[WEATHER]), model=MODEL, max_tokens=512, native_tools=True, stream=True
        )
        assert {"model", "max_tokens", "messages", "tools", "stream"} == set(body)
        assert 512 == body["max_tokens"]
        assert [
            {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "input_schema": WEATHER.parameters,
            }
        ] == body["tools"]

    def test_text_protocol_sends_no_tools(self):
        """A text-protocol provider never sends `tools`, whatever the request holds."""
        body = request_body(
            ask(tools=[WEATHER]), model=MODEL, max_tokens=512, native_tools=False, stream=False
        )
        assert "tools" not in body
        assert False is body["stream"]


# --- in: a message object and an event stream ------------------------------------------------


class TestParseMessage:
    def test_text_and_parallel_tool_use(self):
        """Text blocks join; each `tool_use` is a call with its id, name and input."""
        body = message(
            [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
            ],
            "tool_use",
        )
        response = parse_message(body)
        assert "Checking." == response.text
        assert [
            NativeToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"}),
            NativeToolCall(id="toolu_2", name="get_time", arguments={}),
        ] == response.tool_calls
        assert ("tool_use",) == response.finish_reasons
        assert (MODEL, "msg_014qNMmxefjUvuPTSkMMHjWE") == (response.model, response.response_id)
        assert Usage(input_tokens=711, output_tokens=23) == response.usage

    def test_cached_prompt_tokens_count_as_input(self):
        """`input_tokens` excludes cache reads and writes; the prompt's size adds them."""
        body = message([{"type": "text", "text": "x"}])
        body["usage"].update(cache_creation_input_tokens=100, cache_read_input_tokens=1000)
        assert 1811 == parse_message(body).usage.input_tokens

    @pytest.mark.parametrize("stop_reason", ["end_turn", "max_tokens", "stop_sequence"])
    def test_stop_reasons(self, stop_reason):
        """`stop_reason` is reported as the API says it."""
        body = message([{"type": "text", "text": "x"}], stop_reason)
        assert (stop_reason,) == parse_message(body).finish_reasons

    def test_unknown_blocks_are_skipped(self):
        """A `thinking` block is not text and not a call."""
        body = message(
            [
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "text", "text": "ok"},
            ]
        )
        assert ("ok", []) == (parse_message(body).text, parse_message(body).tool_calls)

    @pytest.mark.parametrize(
        "body",
        [
            [],
            {"content": "x"},
            {"content": [1]},
            {"content": [{"type": "text", "text": 1}]},
            {"content": [{"type": "tool_use", "id": "t", "name": "f", "input": "[]"}]},
            {"content": [], "usage": {"input_tokens": "9"}},
        ],
    )
    def test_a_wrong_shape_is_a_wire_format_error(self, body):
        """Every field is type-checked; nothing but `WireFormatError` escapes."""
        with pytest.raises(WireFormatError):
            parse_message(body)


def assemble(chunks: list[bytes]) -> tuple[StreamAssembler, list[str]]:
    """Feed framed events (as the server sends them) to a fresh assembler."""
    assembler, deltas = StreamAssembler(), []
    for chunk in chunks:
        head, data = chunk.decode().strip().split("\n")
        deltas.append(assembler.feed(head.removeprefix("event: "), data.removeprefix("data: ")))
    return assembler, [d for d in deltas if d]


class TestStreamAssembler:
    def test_text(self):
        """Text deltas come back one by one and join into the text; usage is cumulative."""
        assembler, deltas = assemble(TEXT_STREAM)
        response = assembler.response()
        assert ["Hello", " there", "!"] == deltas
        assert (True, "Hello there!") == (assembler.done, response.text)
        assert Usage(input_tokens=11, output_tokens=6) == response.usage
        assert ("end_turn",) == response.finish_reasons

    def test_parallel_tool_use_with_split_input(self):
        """`partial_json` fragments join per block index and decode at the block's stop."""
        response = assemble(TOOLS_STREAM)[0].response()
        assert [
            NativeToolCall(
                id="toolu_01NRLabsLyVHZPKxbKvkfSMn", name="get_weather", arguments={"city": "Paris"}
            ),
            NativeToolCall(id="toolu_01A09q90qw90lq917835lq9", name="get_time", arguments={}),
        ] == response.tool_calls
        assert "I'll check both." == response.text
        assert ("tool_use",) == response.finish_reasons

    def test_usage_is_cumulative(self):
        """Counts repeated in `message_delta` (a proxy's zero among them) never go down."""
        delta = ev(
            "message_delta",
            delta={"stop_reason": "end_turn", "stop_sequence": None},
            usage={"input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 9},
        )
        chunks = [start(50), *text_block(0, "x"), delta, ev("message_stop")]
        assert Usage(input_tokens=50, output_tokens=9) == assemble(chunks)[0].response().usage

    def test_input_that_does_not_decode_is_kept_as_a_string(self):
        """Broken input reaches the loop as its string, which reports it as bad arguments."""
        chunks = [start(), *tool_block(0, "toolu_X", "f", '{"a": '), *end("tool_use")]
        assert '{"a": ' == assemble(chunks)[0].response().tool_calls[0].arguments

    def test_hostile_nesting_is_handled(self):
        """Input nested past the decoder's depth stays a string; such event data is refused."""
        deep = "[" * 100_000
        chunks = [start(), *tool_block(0, "toolu_X", "f", deep), *end("tool_use")]
        assert deep == assemble(chunks)[0].response().tool_calls[0].arguments
        with pytest.raises(WireFormatError):
            StreamAssembler().feed("message_start", deep)

    def test_error_event(self):
        """`event: error` raises with the backend's error type."""
        with pytest.raises(InBandError) as info:
            assemble(
                [start(), ev("error", error={"type": "overloaded_error", "message": "Overloaded"})]
            )
        assert "overloaded_error" == info.value.error_type

    def test_unknown_events_and_blocks_are_skipped(self):
        """A thinking block and its deltas, and event types from the future, change nothing."""
        chunks = [
            start(),
            ev("content_block_start", index=0, content_block={"type": "thinking", "thinking": ""}),
            ev("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "hm"}),
            ev("content_block_stop", index=0),
            ev("brand_new_event", anything=1),
            *text_block(1, "ok"),
            *end(),
        ]
        assembler, deltas = assemble(chunks)
        assert (["ok"], "ok") == (deltas, assembler.response().text)

    @pytest.mark.parametrize(
        "event, data",
        [
            ("message_start", "{not json"),
            ("content_block_delta", '{"type": "content_block_delta"}'),
            ("content_block_delta", '{"type":"content_block_delta","index":5,"delta":{}}'),
        ],
    )
    def test_a_wrong_shape_is_a_wire_format_error(self, event, data):
        """Bad JSON, a missing index, a delta for a block that never started."""
        with pytest.raises(WireFormatError):
            StreamAssembler().feed(event, data)


# --- the provider over real HTTP --------------------------------------------------------------


class TestAnthropicProvider:
    async def test_non_streaming_text(self, wire: WireServer):
        """`POST /v1/messages` with the key, the version and JSON; the message comes back."""
        wire.script(Reply.json(message([{"type": "text", "text": "Hi!"}])))
        provider = AnthropicProvider(
            base_url=wire.url + "/", model=MODEL, api_key=KEY, stream=False, max_tokens=100
        )
        try:
            response = await provider.complete(ask())
        finally:
            await provider.aclose()
        sent = wire.requests[0]
        assert ("POST", "/v1/messages") == (sent.method, sent.path)
        assert KEY == sent.headers["x-api-key"]
        assert "2023-06-01" == sent.headers["anthropic-version"]
        assert "application/json" == sent.headers["content-type"]
        assert {
            "model": MODEL,
            "max_tokens": 100,
            "stream": False,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        } == sent.json
        assert ("Hi!", ("end_turn",)) == (response.text, response.finish_reasons)

    async def test_streaming_text_reaches_on_text_progressively(self, wire, provider):
        """Each text delta is handed to `on_text` in order; the whole text comes back too."""
        wire.script(Reply.stream(TEXT_STREAM))
        seen: list[str] = []
        response = await provider.complete(ask(on_text=seen.append))
        assert ["Hello", " there", "!"] == seen
        assert ("Hello there!", "msg_019Q1hrJbZG26Fb9BQhrkHEr") == (
            response.text,
            response.response_id,
        )
        assert Usage(input_tokens=11, output_tokens=6) == response.usage
        assert True is wire.requests[0].json["stream"]

    async def test_streaming_parallel_tool_use(self, wire, provider):
        """Two `tool_use` blocks, input split across many chunks, the second input empty."""
        wire.script(Reply.stream(TOOLS_STREAM))
        response = await provider.complete(ask(tools=[WEATHER, TIME]))
        assert [{"city": "Paris"}, {}] == [c.arguments for c in response.tool_calls]
        assert ["get_weather", "get_time"] == [c.name for c in response.tool_calls]
        assert ["get_weather", "get_time"] == [t["name"] for t in wire.requests[0].json["tools"]]

    async def test_input_json_delta_one_character_per_chunk(self, wire, provider):
        """A long input streamed one character per event still decodes once, whole."""
        raw = '{"city": "São Paulo", "units": ["c", "f"], "days": 3}'
        wire.script(
            Reply.stream(
                [start(), *tool_block(0, "toolu_Z", "get_weather", *raw), *end("tool_use")]
            )
        )
        response = await provider.complete(ask(tools=[WEATHER]))
        assert {"city": "São Paulo", "units": ["c", "f"], "days": 3} == response.tool_calls[
            0
        ].arguments

    async def test_request_translation_on_the_wire(self, wire, provider):
        """System top-level, tool results grouped into one user message, roles alternating."""
        wire.script(Reply.stream(TEXT_STREAM))
        await provider.complete(ask(tools=[WEATHER, TIME], messages=CHAT))
        sent = wire.requests[0].json
        assert "You are terse." == sent["system"]
        assert ["user", "assistant", "user"] == [m["role"] for m in sent["messages"]]
        assert ["toolu_A", "toolu_B"] == [b["tool_use_id"] for b in sent["messages"][2]["content"]]

    async def test_events_split_across_http_chunks(self, wire, provider):
        """Event framing does not follow HTTP chunks: 7-byte chunks assemble the same."""
        raw = b"".join(TOOLS_STREAM)
        wire.script(Reply.stream([raw[i : i + 7] for i in range(0, len(raw), 7)]))
        response = await provider.complete(ask(tools=[WEATHER, TIME]))
        assert assemble(TOOLS_STREAM)[0].response() == response

    async def test_the_final_no_tools_call_carries_tool_history_as_text(self, wire, provider):
        """A native request without tools sends no tool blocks, which the API would refuse."""
        wire.script(Reply.stream(TEXT_STREAM))
        await provider.complete(ask(messages=CHAT))
        sent = wire.requests[0].json
        assert "tools" not in sent
        kinds = {block["type"] for m in sent["messages"] for block in m["content"]}
        assert {"text"} == kinds

    async def test_text_protocol_sends_no_tools(self, wire: WireServer):
        """`native_tools=False`: no `tools` field; the model's text comes back as text."""
        wire.script(Reply.stream(TEXT_STREAM))
        provider = AnthropicProvider(
            base_url=wire.url, model=MODEL, api_key=KEY, native_tools=False
        )
        try:
            history = [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": '<tool_call>{"name":"f"}</tool_call>'},
                {
                    "role": "user",
                    "content": '[Tool results]\n<tool_result name="f">\nok\n</tool_result>',
                },
            ]
            response = await provider.complete(ask(tools=[WEATHER], messages=history))
        finally:
            await provider.aclose()
        assert "tools" not in wire.requests[0].json
        assert ["user", "assistant", "user"] == [
            m["role"] for m in wire.requests[0].json["messages"]
        ]
        assert ([], "Hello there!") == (response.tool_calls, response.text)

    def test_server_address_and_repr(self):
        """`server.address`/`server.port` from the base URL; the repr never shows the key."""
        provider = AnthropicProvider(base_url="https://api.anthropic.com", model=MODEL, api_key=KEY)
        assert ("api.anthropic.com", 443) == (provider.server_address, provider.server_port)
        assert KEY not in repr(provider)
        assert KEY not in repr(vars(provider))  # the endpoint's repr neither

    async def test_aclose_twice_is_safe(self, wire, provider):
        """`aclose` after use, then again, raises nothing."""
        wire.script(Reply.stream(TEXT_STREAM))
        await provider.complete(ask())
        await provider.aclose()
        await provider.aclose()


class TestAnthropicErrors:
    async def test_429_with_retry_after_is_retryable(self, wire, provider):
        """A rate limit names its type and carries `Retry-After`."""
        wire.script(
            Reply.json(
                {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
                status=429,
                headers={"retry-after": "7"},
            )
        )
        with pytest.raises(ProviderHTTPError) as info:
            await provider.complete(ask())
        assert (True, 7.0, 429) == (info.value.retryable, info.value.retry_after, info.value.status)
        assert "provider 'anthropic': HTTP 429 rate_limit_error" == str(info.value)

    async def test_529_overloaded_is_retryable(self, wire, provider):
        """Anthropic's own overload status is a retryable HTTP error."""
        wire.script(
            Reply.json(
                {
                    "type": "error",
                    "error": {"type": "overloaded_error", "message": "Overloaded"},
                    "request_id": "req_011CX7J5ZXp3npD8nY7VYZvm",
                },
                status=529,
            )
        )
        with pytest.raises(ProviderHTTPError) as info:
            await provider.complete(ask())
        assert (True, "overloaded_error") == (info.value.retryable, info.value.error_type)

    async def test_400_is_not_retryable(self, wire, provider):
        """A refused request is final, and its message (which may quote input) is not shown."""
        wire.script(
            Reply.json(
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": "messages.1: quoted user text",
                    },
                },
                status=400,
            )
        )
        with pytest.raises(ProviderHTTPError) as info:
            await provider.complete(ask())
        assert False is info.value.retryable
        assert "provider 'anthropic': HTTP 400 invalid_request_error" == str(info.value)

    async def test_prompt_too_long_is_an_overflow(self, wire, provider):
        """Anthropic's 400 `invalid_request_error` saying `prompt is too long` is the typed
        overflow; the line names our word for it, never the message."""
        wire.script(
            Reply.json(
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": "prompt is too long: 208310 tokens > 200000 maximum",
                    },
                    "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
                },
                status=400,
            )
        )
        with pytest.raises(ProviderContextOverflowError) as info:
            await provider.complete(ask())
        assert "provider 'anthropic': HTTP 400 context_length_exceeded" == str(info.value)
        assert False is info.value.retryable

    async def test_prompt_too_long_inside_a_200(self, wire, provider):
        """The same error as an `event: error` after the 200 is the same overflow."""
        error = ev(
            "error",
            error={"type": "invalid_request_error", "message": "Prompt is too long"},
        )
        wire.script(Reply.stream([start(), error]))
        with pytest.raises(ProviderContextOverflowError) as info:
            await provider.complete(ask())
        assert 400 == info.value.status

    async def test_error_event_mid_stream(self, wire, provider):
        """`event: error` after the 200 is the error the status would have been: retryable."""
        error = ev("error", error={"type": "overloaded_error", "message": "Overloaded"})
        wire.script(Reply.stream([start(), *text_block(0, "Hel"), error]))
        seen: list[str] = []
        with pytest.raises(ProviderHTTPError) as info:
            await provider.complete(ask(on_text=seen.append))
        assert (True, 529, "overloaded_error") == (
            info.value.retryable,
            info.value.status,
            info.value.error_type,
        )
        assert ["Hel"] == seen

    async def test_an_unknown_error_event_is_a_retryable_stream_error(self, wire, provider):
        """An error type outside the known words is never quoted: `stream_error`."""
        error = ev("error", error={"type": "secret sauce", "message": "x"})
        wire.script(Reply.stream([start(), error]))
        with pytest.raises(ProviderConnectionError) as info:
            await provider.complete(ask())
        assert "provider 'anthropic': stream_error" == str(info.value)

    async def test_an_error_object_inside_a_200_body(self, wire: WireServer):
        """A non-streamed 200 whose body is an error object is that error."""
        wire.script(Reply.json({"type": "error", "error": {"type": "api_error", "message": "x"}}))
        provider = AnthropicProvider(base_url=wire.url, model=MODEL, api_key=KEY, stream=False)
        try:
            with pytest.raises(ProviderHTTPError) as info:
                await provider.complete(ask())
        finally:
            await provider.aclose()
        assert (True, 500, "api_error") == (
            info.value.retryable,
            info.value.status,
            info.value.error_type,
        )

    async def test_dropped_connection_mid_stream(self, wire, provider):
        """The peer closing mid-body is a retryable connection error, never a short answer."""
        wire.script(Reply.stream(TOOLS_STREAM, drop_after=6))
        with pytest.raises(ProviderConnectionError) as info:
            await provider.complete(ask(tools=[WEATHER]))
        assert info.value.retryable

    async def test_a_stream_that_ends_before_message_stop(self, wire, provider):
        """A body that ends cleanly but without `message_stop` is a dropped connection."""
        wire.script(Reply.stream(TEXT_STREAM[:-2]))
        with pytest.raises(ProviderConnectionError) as info:
            await provider.complete(ask())
        assert "provider 'anthropic': connection_dropped" == str(info.value)

    async def test_a_malformed_event_is_an_invalid_response(self, wire, provider):
        """An event whose data is not JSON is `invalid_response`, not retried."""
        wire.script(Reply.stream([start(), sse("{oops", "content_block_start"), *end()]))
        with pytest.raises(ProviderResponseError) as info:
            await provider.complete(ask())
        assert (False, "invalid_response") == (info.value.retryable, info.value.error_type)

    async def test_a_malformed_body_is_an_invalid_response(self, wire: WireServer):
        """A non-streamed body that is not a message object is `invalid_response`."""
        wire.script(Reply.json({"content": "not a list"}))
        provider = AnthropicProvider(base_url=wire.url, model=MODEL, api_key=KEY, stream=False)
        try:
            with pytest.raises(ProviderResponseError):
                await provider.complete(ask())
        finally:
            await provider.aclose()

    async def test_a_slow_server_times_out(self, wire: WireServer):
        """No answer within `timeout_s` is a retryable timeout."""
        wire.script(Reply.stream(TEXT_STREAM, delay_s=2.0))
        provider = AnthropicProvider(base_url=wire.url, model=MODEL, api_key=KEY, timeout_s=0.2)
        try:
            with pytest.raises(ProviderTimeoutError) as info:
                await provider.complete(ask())
        finally:
            await provider.aclose()
        assert info.value.retryable

    async def test_cancellation_mid_stream_closes_the_request(self, wire, provider):
        """Cancelling the task while the stream runs closes the HTTP connection."""
        wire.script(Reply.stream(TEXT_STREAM, chunk_delay_s=0.3))
        first = asyncio.Event()
        task = asyncio.create_task(provider.complete(ask(on_text=lambda _: first.set())))
        await asyncio.wait_for(first.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(wire.requests[0].disconnected.wait, 5)

    async def test_no_key_in_any_error(self, wire: WireServer):
        """Whatever fails, neither the key nor the prompt is in the error, its repr or cause."""
        prompt = "my secret question 4242"
        replies = [
            Reply.json(
                {
                    "type": "error",
                    "error": {"type": "authentication_error", "message": f"bad key {KEY}"},
                },
                status=401,
            ),
            Reply.json({"error": {"type": KEY}}, status=500),
            Reply.stream([start(), ev("error", error={"type": KEY, "message": prompt})]),
            Reply.stream(TEXT_STREAM, drop_after=2),
            Reply.stream([start(), sse(KEY, "message_delta")]),
        ]
        wire.script(*replies)
        provider = AnthropicProvider(base_url=wire.url, model=MODEL, api_key=KEY)
        errors: list[ProviderError] = []
        try:
            for _ in replies:
                with pytest.raises(ProviderError) as info:
                    await provider.complete(ask(messages=[{"role": "user", "content": prompt}]))
                errors.append(info.value)
        finally:
            await provider.aclose()
        for error in errors:
            shown = [repr(provider), error.line()]
            cause: BaseException | None = error
            while cause is not None:  # the whole chain a traceback would print
                shown += [str(cause), repr(cause)]
                cause = cause.__cause__ or cause.__context__
            assert not [s for s in shown if KEY in s or prompt in s]
        assert "provider 'anthropic': HTTP 401 authentication_error" == str(errors[0])
        assert "provider 'anthropic': HTTP 500 http_500" == str(errors[1])


class TestAnthropicTurn:
    async def test_a_whole_turn_over_the_wire(self, wire, run_scenario):
        """An agent file with `kind: anthropic` runs a tool round and a final answer."""
        wire.script(
            Reply.stream(
                [
                    start(),
                    *text_block(0, "Checking."),
                    *tool_block(1, "toolu_01W", "get_weather", '{"city":', ' "Oslo"}'),
                    *end("tool_use", 40),
                ]
            ),
            Reply.stream([start(90), *text_block(0, "Oslo is ", "18C."), *end("end_turn", 8)]),
        )
        agent = {
            "user": "Weather in Oslo?",
            "config": {"approval": {"auto_approve": ["get_weather"]}},
            "provider": {
                "kind": "anthropic",
                "base_url": wire.url,
                "model": MODEL,
                "api_key_env": "MY_ANTHROPIC_KEY",
            },
            "tools": [
                {
                    "name": "get_weather",
                    "parameters": WEATHER.parameters,
                    "responses": [{"default": {"output": "18C"}}],
                }
            ],
        }
        outcome, replay = await run_scenario(agent, env={"MY_ANTHROPIC_KEY": KEY})
        await replay.provider.aclose()
        assert (True, "Oslo is 18C.") == (outcome.ok, outcome.text)
        second = wire.requests[1].json
        assert ["user", "assistant", "user"] == [m["role"] for m in second["messages"]]
        assert {
            "type": "tool_use",
            "id": "toolu_01W",
            "name": "get_weather",
            "input": {"city": "Oslo"},
        } == second["messages"][1]["content"][-1]
        result = second["messages"][2]["content"][0]
        assert ("tool_result", "toolu_01W") == (result["type"], result["tool_use_id"])
        assert "18C" in result["content"]
        assert ["get_weather"] == [t["name"] for t in second["tools"]]
