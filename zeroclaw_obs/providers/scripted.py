"""`ScriptedProvider`: a first-class provider that replays a scenario's responses in order.

`demo` and most tests use it. It is not a mock: it sits behind the same seam as any backend,
reports usage like one (estimated from text length when the script gives none), the response
model, id and finish reasons a recording kept (`--record`), raises the provider error a
recording ended with (`error:`; never retried: `max_retries` is 0; `context_length_exceeded`
as the overflow the loop recovers from), and raises
`ScenarioExhaustedError` when the turn asks for more responses than the script has.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ..errors import (
    CONTEXT_LENGTH_EXCEEDED,
    ProviderContextOverflowError,
    ProviderError,
    ProviderHTTPError,
    ScenarioExhaustedError,
)
from ..scenario import ScenarioResponse
from .base import NativeToolCall, Provider, ProviderRequest, ProviderResponse, Usage

__all__ = ["ScriptedProvider"]


class ScriptedProvider(Provider):
    """Replays scripted responses, one per `complete` call."""

    def __init__(
        self,
        responses: Sequence[ScenarioResponse],
        *,
        native_tools: bool = True,
        name: str = "scripted",
        model: str = "scripted-model",
        source: str = "scenario",
    ) -> None:
        self._responses = list(responses)
        self._next = 0
        self._source = source
        self.native_tools = native_tools
        self.name = name
        self.model = model
        self.requests: list[ProviderRequest] = []
        """Every request received, for replay inspection (not copied: do not mutate)."""

    @property
    def remaining(self) -> int:
        """How many scripted responses are left."""
        return len(self._responses) - self._next

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Return the next scripted response.

        Raises:
            ScenarioExhaustedError: no scripted response is left.
            ProviderError: the scripted response is a recorded provider failure (`error:`);
                `ProviderHTTPError` when it has a status, `ProviderContextOverflowError` when
                its `error_type` is `context_length_exceeded` (the loop trims and retries).
        """
        if self._next >= len(self._responses):
            raise ScenarioExhaustedError(
                f"{self._source}: responses: no response left for provider call "
                f"{self._next + 1} (the script has {len(self._responses)})"
            )
        scripted = self._responses[self._next]
        self._next += 1
        self.requests.append(request)
        if scripted.delay_ms:
            await asyncio.sleep(scripted.delay_ms / 1000)
        if scripted.error is not None:
            failure = scripted.error
            if failure.error_type == CONTEXT_LENGTH_EXCEEDED:
                raise ProviderContextOverflowError(self.name, status=failure.status or 400)
            if failure.status is not None:
                raise ProviderHTTPError(self.name, failure.error_type, status=failure.status)
            raise ProviderError(self.name, failure.error_type)
        calls = [
            NativeToolCall(id=c.id, name=c.name, arguments=c.arguments)
            for c in scripted.tool_calls or []
        ]
        text = scripted.text or ""
        if scripted.usage is not None:
            usage = Usage(
                input_tokens=scripted.usage.input_tokens,
                output_tokens=scripted.usage.output_tokens,
            )
        else:
            usage = Usage(
                input_tokens=40 + 12 * len(request.messages),
                output_tokens=max(1, len(text) // 4) + 20 * len(calls),
            )
        return ProviderResponse(
            text=text,
            tool_calls=calls,
            usage=usage,
            model=scripted.model or self.model,
            response_id=scripted.response_id,
            finish_reasons=tuple(scripted.finish_reasons),
        )
