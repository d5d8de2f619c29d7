"""`AnthropicProvider`: the Anthropic Messages API (`POST {base_url}/v1/messages`) over httpx.

This module owns the translation both ways and nothing else (no retries, no logging, no
spans: `turn/` does those). Out: the loop's OpenAI-style history becomes a Messages request
(`to_messages`, `to_tools`, `request_body`). In: a `message` object (`parse_message`) or its
event stream (`StreamAssembler`) becomes a `ProviderResponse`. Transport failures and HTTP
error statuses are translated once, by the shared `_http` helper, into `ProviderError`s.

What is risky here:

- The API is strict about history shape, and the loop's history is OpenAI's. Roles must
  alternate, so adjacent same-role messages are merged; the system prompt is a top-level
  field; every `tool_result` answering an assistant's `tool_use` blocks must open the very next
  user message, so consecutive `tool` messages become ONE user message of `tool_result`
  blocks; empty text blocks are refused, so they are dropped; and a request whose history
  holds `tool_use` / `tool_result` blocks must define tools ("Requests which include
  `tool_use` or `tool_result` blocks must define tools"). A request that sends no tools (the
  loop's final no-tools call, a text-protocol provider) therefore carries past calls as plain
  text: the calls as a `[Tool calls]` note, the results in the text protocol's
  `[Tool results]` form.
- The response is a network peer's bytes. Every field is type-checked before use; a body that
  is not the documented shape is a `ProviderResponseError` (`invalid_response`), never a
  `KeyError` escaping the seam. Block kinds and event types we do not use (`thinking`,
  `ping`, future ones) are skipped, as the API's versioning policy asks.
- A stream may stop anywhere. Tool input arrives as `input_json_delta` fragments that only
  decode once the block stops; a stream that ends before `message_stop` is a dropped
  connection (retryable), never a short answer, and an `event: error` mid-stream (typically
  `overloaded_error` after the 200) is the same error the status would have been.
- The API key travels only in the `x-api-key` header of the shared client: it is in no
  attribute that a repr shows and in no error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderResponseError,
)
from ..tools.base import ToolSpec
from ._http import HttpProvider, error_type_in
from .base import NativeToolCall, ProviderRequest, ProviderResponse, Usage
from .text_protocol import format_tool_results

__all__ = [
    "ANTHROPIC_VERSION",
    "ERROR_STATUS",
    "AnthropicProvider",
    "InBandError",
    "StreamAssembler",
    "WireFormatError",
    "parse_message",
    "request_body",
    "to_messages",
    "to_tools",
]

ANTHROPIC_VERSION = "2023-06-01"
"""The `anthropic-version` header every request carries."""

_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


class WireFormatError(ValueError):
    """Raised when the backend's answer is not the documented Messages shape.

    The message names the place (`content[1].input`), never a value: the provider turns it
    into a `ProviderResponseError` whose line holds only `invalid_response`.
    """


class InBandError(Exception):
    """Raised when the backend sends an error inside a 200 response.

    That is an `event: error` mid-stream (typically `overloaded_error`) or an error object as
    a non-streamed body. `error_type` is the known word it names (`_http.error_type_in`), or
    None; the message never holds anything the backend sent.
    """

    def __init__(self, error_type: str | None) -> None:
        super().__init__("the backend sent an error inside a 200 response")
        self.error_type = error_type


ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status the API documents for each error type; an error that arrives inside a
200 (an `event: error` mid-stream, or an error object as the body) is reported with it, so it
reads, and is retried, exactly as the same error sent as a status would be."""


class AnthropicProvider(HttpProvider):
    """The Anthropic Messages API: native `tool_use` / `tool_result` blocks or the text protocol.

    One pooled `httpx.AsyncClient` (built on first use, closed by `aclose()`). Each `complete`
    sends one `POST {base_url}/v1/messages` and never retries (`turn/` does, reading the
    error's `retryable` and `retry_after`). Streamed text reaches `ProviderRequest.on_text`
    delta by delta; cancelling the task closes the HTTP request.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        native_tools: bool = True,
        stream: bool = True,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        name: str = "anthropic",
        max_tokens: int = 4096,
    ) -> None:
        """
        Args:
            base_url: the API root WITHOUT `/v1`, as the Anthropic SDK takes it
                (`https://api.anthropic.com`).
            model: the model name sent with every request.
            api_key: sent as `x-api-key`; None sends no key (a local proxy). Never shown.
            native_tools: False: the text protocol, and no `tools` in the request.
            stream: True: `"stream": true` and Server-Sent Events.
            timeout_s: connect, read, write and pool timeout, each.
            max_retries: how often `turn/` may resend after a retryable error.
            name: the provider's shown name (spans, metric labels, error lines).
            max_tokens: the Messages API's required output cap.
        """
        headers = {"anthropic-version": ANTHROPIC_VERSION, "content-type": "application/json"}
        if api_key:
            headers["x-api-key"] = api_key
        super().__init__(
            name=name,
            model=model,
            base_url=base_url,
            headers=headers,
            native_tools=native_tools,
            stream=stream,
            timeout_s=timeout_s,
            max_retries=max_retries,
        )
        self._max_tokens = max_tokens

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Send one Messages request and return the model's response.

        Raises:
            ProviderHTTPError: an error status, or an error the API sent inside a 200.
            ProviderTimeoutError: connecting or reading passed `timeout_s`.
            ProviderConnectionError: no connection, the stream ended before `message_stop`,
                or it sent an error event of a type outside the API's vocabulary
                (`stream_error`).
            ProviderResponseError: the answer is not the documented Messages shape.
        """
        body = request_body(
            request,
            model=self.model,
            max_tokens=self._max_tokens,
            native_tools=self.native_tools,
            stream=self.stream,
        )
        try:
            if self.stream:
                return await self._streamed(body, request)
            answer = await self._endpoint.post_json(_PATH, body)
            if isinstance(answer, dict) and answer.get("type") == "error":
                raise InBandError(error_type_in(answer))
            return parse_message(answer)
        except WireFormatError as exc:
            raise ProviderResponseError(self.name, "invalid_response") from exc
        except InBandError as exc:
            raise self._in_band_error(exc.error_type) from exc

    async def _streamed(self, body: dict[str, Any], request: ProviderRequest) -> ProviderResponse:
        assembler = StreamAssembler()
        async with self._endpoint.stream_events(_PATH, body) as events:
            async for event in events:
                delta = assembler.feed(event.event, event.data)
                if delta and request.on_text is not None:
                    request.on_text(delta)
                if assembler.done:
                    break
        if not assembler.done:
            # The body ended cleanly but early (a proxy cut it at an event boundary).
            raise ProviderConnectionError(self.name, "connection_dropped")
        return assembler.response()

    def _in_band_error(self, error_type: str | None) -> ProviderError:
        status = ERROR_STATUS.get(error_type or "")
        if error_type is None or status is None:
            # Not a word of the API's vocabulary: the stream broke for a reason we cannot name.
            return ProviderConnectionError(self.name, "stream_error")
        return ProviderHTTPError(self.name, error_type, status=status)

_PATH = "v1/messages"


# --- out: the loop's history → a Messages request -------------------------------------------


def to_tools(tools: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """The `tools` array: one `{name, description, input_schema}` per spec, in order."""
    return [
        {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}
        for spec in tools
    ]


def to_messages(
    messages: Iterable[dict[str, Any]], *, tool_blocks: bool
) -> tuple[str, list[dict[str, Any]]]:
    """Translate OpenAI-style chat messages into the Messages API's `system` and `messages`.

    The input is never mutated. `system` messages (the loop sends one, first) join into the
    top-level system string; `assistant` `tool_calls` become `tool_use` blocks after the
    message's text; consecutive `tool` messages become one user message of `tool_result`
    blocks; adjacent messages of one role merge into one, so roles alternate; empty text is
    dropped, and a message left with no block at all disappears.

    Args:
        messages: the history as `turn/history.py` builds it.
        tool_blocks: False when the request defines no tools: past calls and results then
            travel as text (the API refuses tool blocks in a request without tools).

    Returns:
        `(system, messages)`; `system` is `""` when there is none.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # call id → tool name, for results flattened to text
    pending_results: list[tuple[str, str]] = []  # flattened results not yet emitted

    def emit(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    def flush_results() -> None:
        if pending_results:
            emit("user", [_text(format_tool_results(pending_results))])
            pending_results.clear()

    for message in messages:
        role = message.get("role")
        if role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            content = _content_text(message.get("content"))
            if tool_blocks:
                emit("user", [{"type": "tool_result", "tool_use_id": call_id, "content": content}])
            else:
                pending_results.append((names.get(call_id, "tool"), content))
            continue
        flush_results()
        text = _content_text(message.get("content"))
        if role == "system":
            if text:
                system.append(text)
            continue
        if role == "assistant":
            blocks = [_text(text)] if text else []
            calls = message.get("tool_calls") or []
            for call in calls:
                function = call.get("function") or {}
                call_id, name = str(call.get("id") or ""), str(function.get("name") or "")
                names[call_id] = name
                arguments = function.get("arguments")
                if tool_blocks:
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": call_id,
                            "name": name,
                            "input": _input_object(arguments),
                        }
                    )
            if calls and not tool_blocks:
                lines = [f"{_call_name(c)} {_arguments_text(c)}" for c in calls]
                blocks.append(_text("[Tool calls]\n" + "\n".join(lines)))
            emit("assistant", blocks)
            continue
        # `user`, and any role the API does not know, is the user speaking.
        emit("user", [_text(text)] if text else [])
    flush_results()
    return "\n\n".join(system), out


def request_body(
    request: ProviderRequest,
    *,
    model: str,
    max_tokens: int,
    native_tools: bool,
    stream: bool,
) -> dict[str, Any]:
    """The JSON body of one `POST /v1/messages`.

    `tools` is sent only when the provider is native and the request has tools; without it,
    past calls travel as text (see `to_messages`).
    """
    send_tools = native_tools and bool(request.tools)
    system, messages = to_messages(request.messages, tool_blocks=send_tools)
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    if system:
        body["system"] = system
    if send_tools:
        body["tools"] = to_tools(request.tools)
    body["stream"] = stream
    return body


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _content_text(content: Any) -> str:
    # The loop sends strings (or None beside tool calls); OpenAI's list-of-parts form is
    # accepted too, keeping its text parts.
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text") or "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return str(content)


def _input_object(arguments: Any) -> dict[str, Any]:
    # `input` must be an object. The history holds the arguments as a JSON string; arguments
    # that were never an object (a model's broken call, already answered with an error
    # result) go back as `{}`: the result block tells the model what went wrong.
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            decoded = json.loads(arguments)
        except (ValueError, RecursionError):
            return {}
        return decoded if isinstance(decoded, dict) else {}
    return {}


def _call_name(call: dict[str, Any]) -> str:
    return str((call.get("function") or {}).get("name") or "")


def _arguments_text(call: dict[str, Any]) -> str:
    arguments = (call.get("function") or {}).get("arguments")
    return arguments if isinstance(arguments, str) else _JSON.encode(arguments or {})


# --- in: a `message` object or its event stream → a ProviderResponse ------------------------


def parse_message(body: Any) -> ProviderResponse:
    """Translate a non-streamed `message` object into a `ProviderResponse`.

    `text` blocks join into `text`; `tool_use` blocks become `NativeToolCall`s in order;
    other block kinds (`thinking`, server tools) are skipped.

    Raises:
        WireFormatError: the body is not a Messages `message` object.
    """
    if not isinstance(body, dict):
        raise WireFormatError("the body is not an object")
    content = body.get("content")
    if not isinstance(content, list):
        raise WireFormatError("content is not a list")
    text: list[str] = []
    calls: list[NativeToolCall] = []
    for index, block in enumerate(content):
        if not isinstance(block, dict):
            raise WireFormatError(f"content[{index}] is not an object")
        kind = block.get("type")
        if kind == "text":
            text.append(_str(block.get("text"), f"content[{index}].text"))
        elif kind == "tool_use":
            arguments = block.get("input")
            if arguments is None:
                arguments = {}
            if not isinstance(arguments, dict):
                raise WireFormatError(f"content[{index}].input is not an object")
            calls.append(
                NativeToolCall(
                    id=_optional_str(block.get("id"), f"content[{index}].id"),
                    name=_str(block.get("name"), f"content[{index}].name"),
                    arguments=arguments,
                )
            )
    stop_reason = _optional_str(body.get("stop_reason"), "stop_reason")
    return ProviderResponse(
        text="".join(text),
        tool_calls=calls,
        usage=_usage(body.get("usage"), "usage"),
        model=_optional_str(body.get("model"), "model"),
        response_id=_optional_str(body.get("id"), "id"),
        finish_reasons=(stop_reason,) if stop_reason else (),
    )


@dataclass(slots=True)
class _Block:
    kind: str
    """`text`, `tool_use`, or `other` (a block kind we skip)."""
    id: str | None = None
    name: str = ""
    start_input: dict[str, Any] = field(default_factory=dict)
    parts: list[str] = field(default_factory=list)
    """Text deltas, or `partial_json` fragments."""
    arguments: dict[str, Any] | str | None = None
    """Decoded at `content_block_stop`."""


class StreamAssembler:
    """Builds one `ProviderResponse` from the events of a streamed message, in order.

    Feed every event (`ServerSentEvent.event`, `.data`) to `feed`; it returns the text delta
    the event carried (for `ProviderRequest.on_text`), or `""`. `done` turns True at
    `message_stop`; `response()` then returns the whole message. Tool input fragments
    accumulate per block index and decode at `content_block_stop` (an empty input is `{}`;
    input that does not decode is kept as its string, for the loop to report to the model as
    bad arguments, as it does for any backend).
    """

    def __init__(self) -> None:
        self._blocks: dict[int, _Block] = {}
        self._response_id: str | None = None
        self._model: str | None = None
        self._input_tokens: int | None = None
        self._output_tokens: int | None = None
        self._stop_reason: str | None = None
        self.done = False
        """True once `message_stop` arrived."""

    def feed(self, event: str, data: str) -> str:
        """Apply one event; return the text delta it carried (else `""`).

        Raises:
            WireFormatError: the event's data is not the documented shape.
            InBandError: the event is an `error` event.
        """
        if event == "ping":
            return ""
        try:
            payload = json.loads(data)
        except (ValueError, RecursionError):
            raise WireFormatError("an event's data is not JSON") from None
        if not isinstance(payload, dict):
            raise WireFormatError("an event's data is not an object")
        kind = payload.get("type", event)
        if event == "error" or kind == "error":
            raise InBandError(error_type_in(payload))
        if kind == "message_start":
            self._message_start(payload.get("message"))
        elif kind == "content_block_start":
            self._block_start(payload)
        elif kind == "content_block_delta":
            return self._block_delta(payload)
        elif kind == "content_block_stop":
            block = self._blocks.get(_index(payload, "content_block_stop"))
            if block is not None:
                self._finish(block)
        elif kind == "message_delta":
            delta = payload.get("delta")
            if not isinstance(delta, dict):
                raise WireFormatError("message_delta: delta is not an object")
            stop_reason = _optional_str(delta.get("stop_reason"), "message_delta.stop_reason")
            self._stop_reason = stop_reason or self._stop_reason
            self._take_usage(payload.get("usage"), "message_delta.usage")
        elif kind == "message_stop":
            self.done = True
        return ""

    def response(self) -> ProviderResponse:
        """The assembled message (blocks in index order)."""
        text: list[str] = []
        calls: list[NativeToolCall] = []
        for _, block in sorted(self._blocks.items()):
            if block.kind == "text":
                text.append("".join(block.parts))
            elif block.kind == "tool_use":
                self._finish(block)
                assert block.arguments is not None
                calls.append(
                    NativeToolCall(id=block.id, name=block.name, arguments=block.arguments)
                )
        usage = None
        if self._input_tokens is not None or self._output_tokens is not None:
            usage = Usage(
                input_tokens=self._input_tokens or 0, output_tokens=self._output_tokens or 0
            )
        return ProviderResponse(
            text="".join(text),
            tool_calls=calls,
            usage=usage,
            model=self._model,
            response_id=self._response_id,
            finish_reasons=(self._stop_reason,) if self._stop_reason else (),
        )

    def _message_start(self, message: Any) -> None:
        if not isinstance(message, dict):
            raise WireFormatError("message_start: message is not an object")
        self._response_id = _optional_str(message.get("id"), "message_start.message.id")
        self._model = _optional_str(message.get("model"), "message_start.message.model")
        self._take_usage(message.get("usage"), "message_start.message.usage")

    def _take_usage(self, usage: Any, where: str) -> None:
        # The counts are cumulative (message_delta repeats them), so the larger one wins: a
        # proxy that sends `input_tokens: 0` in message_delta does not erase message_start's.
        if usage is None:
            return
        if not isinstance(usage, dict):
            raise WireFormatError(f"{where} is not an object")
        if usage.get("input_tokens") is not None:
            self._input_tokens = max(self._input_tokens or 0, _input_tokens(usage, where))
        output = _optional_int(usage.get("output_tokens"), f"{where}.output_tokens")
        if output is not None:
            self._output_tokens = max(self._output_tokens or 0, output)

    def _block_start(self, payload: dict[str, Any]) -> None:
        index = _index(payload, "content_block_start")
        start = payload.get("content_block")
        if not isinstance(start, dict):
            raise WireFormatError("content_block_start: content_block is not an object")
        where = f"content_block_start[{index}]"
        kind = start.get("type")
        if kind == "text":
            block = _Block("text")
            first = _optional_str(start.get("text"), f"{where}.text")
            if first:
                block.parts.append(first)
        elif kind == "tool_use":
            start_input = start.get("input")
            if start_input is not None and not isinstance(start_input, dict):
                raise WireFormatError(f"{where}.input is not an object")
            block = _Block(
                "tool_use",
                id=_optional_str(start.get("id"), f"{where}.id"),
                name=_str(start.get("name"), f"{where}.name"),
                start_input=start_input or {},
            )
        else:
            block = _Block("other")
        self._blocks[index] = block

    def _block_delta(self, payload: dict[str, Any]) -> str:
        index = _index(payload, "content_block_delta")
        block = self._blocks.get(index)
        delta = payload.get("delta")
        if not isinstance(delta, dict):
            raise WireFormatError(f"content_block_delta[{index}]: delta is not an object")
        if block is None:
            raise WireFormatError(f"content_block_delta[{index}]: the block never started")
        kind = delta.get("type")
        if kind == "text_delta" and block.kind == "text":
            text = _str(delta.get("text"), f"content_block_delta[{index}].text")
            block.parts.append(text)
            return text
        if kind == "input_json_delta" and block.kind == "tool_use":
            block.parts.append(
                _str(delta.get("partial_json"), f"content_block_delta[{index}].partial_json")
            )
        return ""

    @staticmethod
    def _finish(block: _Block) -> None:
        if block.kind != "tool_use" or block.arguments is not None:
            return
        raw = "".join(block.parts)
        if not raw.strip():
            block.arguments = block.start_input
            return
        try:
            decoded = json.loads(raw)
        except (ValueError, RecursionError):
            block.arguments = raw
            return
        block.arguments = decoded if isinstance(decoded, dict) else raw


def _index(payload: dict[str, Any], where: str) -> int:
    index = payload.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        raise WireFormatError(f"{where}: index is not an integer")
    return index


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise WireFormatError(f"{where} is not a string")
    return value


def _optional_str(value: Any, where: str) -> str | None:
    return None if value is None else _str(value, where)


def _optional_int(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise WireFormatError(f"{where} is not an integer")
    return value


def _input_tokens(usage: dict[str, Any], where: str) -> int:
    # `input_tokens` excludes prompt-cache reads and writes; the prompt's whole size
    # (`gen_ai.usage.input_tokens`) is the sum of the three.
    return sum(
        _optional_int(usage.get(key), f"{where}.{key}") or 0
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )


def _usage(usage: Any, where: str) -> Usage | None:
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise WireFormatError(f"{where} is not an object")
    return Usage(
        input_tokens=_input_tokens(usage, where),
        output_tokens=_optional_int(usage.get("output_tokens"), f"{where}.output_tokens") or 0,
    )
