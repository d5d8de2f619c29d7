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

from typing import Any

from ..errors import (
    ProviderConnectionError,
    ProviderContextOverflowError,
    ProviderError,
    ProviderHTTPError,
    ProviderResponseError,
)
from ._anthropic_wire import (
    InBandError,
    StreamAssembler,
    WireFormatError,
    parse_message,
    request_body,
    to_messages,
    to_tools,
)
from ._http import HttpProvider
from .base import ProviderRequest, ProviderResponse

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
            max_tokens=max_tokens,
        )

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Send one Messages request and return the model's response.

        Raises:
            ProviderHTTPError: an error status, or an error the API sent inside a 200.
            ProviderContextOverflowError: the same, saying the prompt is too long (a 400
                `invalid_request_error` whose message says so).
            ProviderTimeoutError: connecting or reading passed `timeout_s`.
            ProviderConnectionError: no connection, the stream ended before `message_stop`,
                or it sent an error event of a type outside the API's vocabulary
                (`stream_error`).
            ProviderResponseError: the answer is not the documented Messages shape.
        """
        body = request_body(
            request,
            model=self.model,
            max_tokens=self.max_tokens,
            native_tools=self.native_tools,
            stream=self.stream,
        )
        try:
            if self.stream:
                return await self._streamed(body, request)
            answer = await self._endpoint.post_json(_PATH, body)
            if isinstance(answer, dict) and answer.get("type") == "error":
                raise InBandError.of(answer)
            return parse_message(answer)
        except WireFormatError as exc:
            raise ProviderResponseError(self.name, "invalid_response") from exc
        except InBandError as exc:
            raise self._in_band_error(exc) from exc

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

    def _in_band_error(self, error: InBandError) -> ProviderError:
        error_type = error.error_type
        status = ERROR_STATUS.get(error_type or "")
        if error.overflow:
            return ProviderContextOverflowError(self.name, status=status or 400)
        if error_type is None or status is None:
            # Not a word of the API's vocabulary: the stream broke for a reason we cannot name.
            return ProviderConnectionError(self.name, "stream_error")
        return ProviderHTTPError(self.name, error_type, status=status)


_PATH = "v1/messages"
