"""The Anthropic Messages API on the wire: the request body (tools, the loop's OpenAI-style
history translated to alternating `tool_use` / `tool_result` blocks), a whole message parsed,
and a stream assembled from its events. No I/O: `anthropic.py` sends and receives."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..tools.base import ToolSpec
from ._http import context_overflow_in, error_type_in
from .base import NativeToolCall, ProviderRequest, ProviderResponse, Usage
from .text_protocol import format_tool_results

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
    None; `overflow` whether it says the prompt is over the context window
    (`_http.context_overflow_in`); the message never holds anything the backend sent.
    """

    def __init__(self, error_type: str | None, *, overflow: bool = False) -> None:
        super().__init__("the backend sent an error inside a 200 response")
        self.error_type = error_type
        self.overflow = overflow

    @classmethod
    def of(cls, payload: Any) -> InBandError:
        """The error a decoded error object names."""
        return cls(error_type_in(payload), overflow=context_overflow_in(payload))


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
            raise InBandError.of(payload)
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
