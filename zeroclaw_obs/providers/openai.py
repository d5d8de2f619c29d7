"""`OpenAIProvider`: the Chat Completions API of OpenAI and of every compatible server.

One request per `complete()`: `POST {base_url}/chat/completions` with `Authorization: Bearer`,
the loop's messages as they are (they are OpenAI-style already: `tool_calls` on assistant
messages, `tool` messages with `tool_call_id`), and the tool specs as `tools` when the
provider speaks native tools. With `native_tools=False` no `tools` travel and the text
protocol's tags come back as plain text for the loop to parse. Streamed (the default) or not;
the HTTP half and every error mapping live in `_http.Endpoint`.

Risky part: compatible servers (vLLM, Ollama, LiteLLM, LM Studio, Gemini's endpoint) bend the
stream format, and this module absorbs it once, here, so the loop sees one shape:

- a call id missing or empty: the call's id is None and the loop gives it a fresh UUID;
- every parallel call sent at index 0: a new `id`, or a new function name (or the same name
  once the arguments so far are a whole JSON object), at an index already in use starts a
  new call;
- arguments as `""`, `"{}"`, a JSON string in pieces or an object: passed through (the loop
  decodes strings, `""` meaning `{}`);
- no usage at all: `usage` is None; usage in a last chunk whose `choices` is empty: read;
- `finish_reason` `tool_calls`, `stop` or the legacy `function_call`, whose `function_call`
  message field becomes one call.

A body or chunk that is not this shape is a `ProviderResponseError`, never a KeyError.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import ProviderConnectionError, ProviderContextOverflowError, ProviderResponseError
from ._http import HttpProvider, context_overflow_in, error_type_in
from .base import NativeToolCall, ProviderRequest, ProviderResponse, Usage

__all__ = ["OpenAIProvider"]

_PATH = "chat/completions"


class OpenAIProvider(HttpProvider):
    """A Chat Completions backend over one pooled httpx client."""

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
        name: str = "openai",
        max_tokens: int | None = None,
    ) -> None:
        """Build the provider; no connection is made until the first request.

        Args:
            base_url: the API root, `/v1` included (`https://api.openai.com/v1`).
            model: sent as `model`.
            api_key: sent as `Authorization: Bearer …`; None for local servers that need none.
                Held only in the client's headers: never in an error, a log or `repr()`.
            native_tools: True: `tools` + `tool_calls`; False: the text protocol.
            stream: True: Server-Sent Events with text deltas passed to `on_text`.
            timeout_s: connect and read timeout (each), seconds.
            max_retries: how often `turn/` may resend after a retryable error.
            max_tokens: the output cap sent as `max_tokens`; None sends none.
            name: the provider's name on spans, metrics and error lines.
        """
        headers = {"accept": "application/json"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        super().__init__(
            name=name,
            model=model,
            base_url=base_url,
            headers=headers,
            native_tools=native_tools,
            stream=stream,
            timeout_s=timeout_s,
            max_retries=max_retries,
            max_tokens=max_tokens,
        )
        """The output cap each request carries (`max_tokens`); None: the server's default."""

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Send one Chat Completions request and return the model's response.

        Raises:
            ProviderError: the backend failed (`_http` maps which subclass).
        """
        body = self.request_body(request)
        if not self.stream:
            return _completion(await self._endpoint.post_json(_PATH, body), self.name)
        stream = _Stream(self.name, request)
        async with self._endpoint.stream_events(_PATH, body) as events:
            async for event in events:
                if event.data == "[DONE]":
                    stream.done = True
                    break
                stream.add(_decoded(event.data, self.name))
        return stream.response()

    def request_body(self, request: ProviderRequest) -> dict[str, Any]:
        """The JSON body of one request (the messages list is shared, never mutated)."""
        body: dict[str, Any] = {"model": self.model, "messages": request.messages}
        if self.native_tools and request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": spec.name,
                        "description": spec.description,
                        "parameters": spec.parameters,
                    },
                }
                for spec in request.tools
            ]
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body


def _invalid(provider: str) -> ProviderResponseError:
    return ProviderResponseError(provider, "invalid_response")


def _decoded(data: str, provider: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise _invalid(provider) from exc
    if not isinstance(chunk, dict):
        raise _invalid(provider)
    if "error" in chunk:
        # An error event mid-stream: its type only when it is a known word. An overflow
        # reads as the 400 the API would have answered before streaming.
        if context_overflow_in(chunk):
            raise ProviderContextOverflowError(provider)
        raise ProviderResponseError(provider, error_type_in(chunk) or "stream_error")
    return chunk


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=_count(raw.get("prompt_tokens")),
        output_tokens=_count(raw.get("completion_tokens")),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _completion(data: Any, provider: str) -> ProviderResponse:
    """A non-streamed `chat.completion` body as a `ProviderResponse`."""
    if not isinstance(data, dict):
        raise _invalid(provider)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _invalid(provider)
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise _invalid(provider)
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise _invalid(provider)
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise _invalid(provider)
    calls = [_call(raw.get("id"), raw.get("function"), provider) for raw in _dicts(raw_calls)]
    if not calls and isinstance(message.get("function_call"), dict):
        calls = [_call(None, message["function_call"], provider)]
    finish = _str_or_none(choices[0].get("finish_reason"))
    return ProviderResponse(
        text=content or "",
        tool_calls=calls,
        usage=_usage(data.get("usage")),
        model=_str_or_none(data.get("model")),
        response_id=_str_or_none(data.get("id")),
        finish_reasons=(finish,) if finish else (),
    )


def _dicts(items: list[Any]) -> list[dict[str, Any]]:
    return [item for item in items if isinstance(item, dict)]


def _call(call_id: Any, function: Any, provider: str) -> NativeToolCall:
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise _invalid(provider)
    arguments = function.get("arguments")
    if arguments is None:
        arguments = ""
    if not isinstance(arguments, str | dict):
        raise _invalid(provider)
    return NativeToolCall(id=_str_or_none(call_id), name=function["name"], arguments=arguments)


@dataclass
class _PartialCall:
    """One tool call being assembled from stream deltas."""

    id: str | None = None
    name: str | None = None
    parts: list[str] = field(default_factory=list)
    object: dict[str, Any] | None = None

    def add(self, call_id: str | None, name: str | None, arguments: Any) -> None:
        self.id = self.id or call_id
        self.name = self.name or name
        if isinstance(arguments, dict):
            self.object = arguments
        elif isinstance(arguments, str):
            self.parts.append(arguments)

    def starts_new(self, call_id: str | None, name: str | None) -> bool:
        """Whether a delta carrying this id or name at our index is another call."""
        if call_id:
            return call_id != self.id if self.id else self.name is not None and self.whole()
        if name and self.name is not None:
            return name != self.name or self.whole()
        return False

    def whole(self) -> bool:
        """Whether the arguments so far are a complete JSON object."""
        if self.object is not None:
            return True
        text = "".join(self.parts).rstrip()
        if not text.endswith("}"):
            return False  # cheap: most pieces end mid-object, no parse needed
        try:
            return isinstance(json.loads(text), dict)
        except (ValueError, RecursionError):
            return False

    def call(self, provider: str) -> NativeToolCall:
        if not self.name:
            raise _invalid(provider)
        arguments = self.object if self.object is not None else "".join(self.parts)
        return NativeToolCall(id=self.id, name=self.name, arguments=arguments)


class _Stream:
    """Assembles `chat.completion.chunk`s into one response, passing text on as it comes."""

    def __init__(self, provider: str, request: ProviderRequest) -> None:
        self.provider = provider
        self.on_text = request.on_text
        self.done = False
        """True once `[DONE]` arrived."""
        self.seen = False
        self.text: list[str] = []
        self.calls: list[_PartialCall] = []
        self.at: dict[Any, _PartialCall] = {}
        self.finish: str | None = None
        self.usage: Usage | None = None
        self.id: str | None = None
        self.model: str | None = None

    def add(self, chunk: dict[str, Any]) -> None:
        self.seen = True
        self.id = self.id or _str_or_none(chunk.get("id"))
        self.model = self.model or _str_or_none(chunk.get("model"))
        if chunk.get("usage") is not None:
            self.usage = _usage(chunk["usage"])
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise _invalid(self.provider)
        for choice in _dicts(choices):
            if choice.get("index", 0) == 0:
                self._choice(choice)

    def _choice(self, choice: dict[str, Any]) -> None:
        self.finish = _str_or_none(choice.get("finish_reason")) or self.finish
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text.append(content)
            if self.on_text is not None:
                self.on_text(content)
        tool_calls = delta.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise _invalid(self.provider)
        for position, raw in enumerate(_dicts(tool_calls)):
            index = raw.get("index")
            self._delta(
                index if isinstance(index, int) else position, raw.get("id"), raw.get("function")
            )
        if isinstance(delta.get("function_call"), dict):
            self._delta("function_call", None, delta["function_call"])

    def _delta(self, index: Any, raw_id: Any, function: Any) -> None:
        function = function if isinstance(function, dict) else {}
        call_id = _str_or_none(raw_id)
        name = _str_or_none(function.get("name"))
        current = self.at.get(index)
        if current is None or current.starts_new(call_id, name):
            current = self.at[index] = _PartialCall()
            self.calls.append(current)
        current.add(call_id, name, function.get("arguments"))

    def response(self) -> ProviderResponse:
        """The assembled response.

        Raises:
            ProviderResponseError: the stream held no chunk at all (not an event stream).
            ProviderConnectionError: it ended without `[DONE]` or a finish reason (cut off).
        """
        if not self.seen:
            raise _invalid(self.provider)
        if not self.done and self.finish is None:
            raise ProviderConnectionError(self.provider, "connection_dropped")
        return ProviderResponse(
            text="".join(self.text),
            tool_calls=[call.call(self.provider) for call in self.calls],
            usage=self.usage,
            model=self.model,
            response_id=self.id,
            finish_reasons=(self.finish,) if self.finish else (),
        )
