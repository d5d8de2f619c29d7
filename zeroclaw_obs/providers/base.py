"""The provider seam: one async method from a request to a response, plus `aclose()`.

Policy lives above this seam, in `turn/` (spans, metrics, retries, parse-error feedback); a
provider only translates to its backend and back. Whether tool calls travel natively or as
text is a provider *property* (`native_tools`) that the loop reads, never a branch on a name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..tools.base import ToolSpec

__all__ = ["NativeToolCall", "Provider", "ProviderRequest", "ProviderResponse", "Usage"]


@dataclass(frozen=True, kw_only=True, slots=True)
class NativeToolCall:
    """A structured tool call as a native provider returns it."""

    id: str | None
    """The provider's call id; None gets a fresh UUID4 at parse. An id the redactor changes
    is replaced by its redacted form plus a per-turn suffix (`turn.parse.CallIds`)."""

    name: str
    """The name the model called; may be unknown, excluded or a short MCP name."""

    arguments: dict[str, Any] | str
    """Arguments as an object, or as the JSON string some backends send."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """Token counts of one provider call."""

    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderRequest:
    """What the loop sends for one iteration."""

    messages: list[dict[str, Any]]
    """OpenAI-style chat messages, system prompt first. The provider must not mutate them."""

    tools: list[ToolSpec] = field(default_factory=list)
    """Native tool specs; empty for text-protocol providers and for the final no-tools call."""

    iteration: int = 0
    """1-based iteration number, for providers that log or script by position."""

    on_text: Callable[[str], None] | None = None
    """A streaming provider calls this with each text delta as it arrives, in order, on the
    loop (raw model text: the loop redacts before anything leaves). It must not block or
    raise. The full text still comes back in `ProviderResponse.text`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderResponse:
    """What the provider returns: text, native tool calls, or both."""

    text: str = ""
    tool_calls: list[NativeToolCall] = field(default_factory=list)
    usage: Usage | None = None
    model: str | None = None
    """The model that answered, when the backend says; else the request's model is used."""

    response_id: str | None = None
    """The backend's id of this response (`gen_ai.response.id`), when it sends one."""

    finish_reasons: tuple[str, ...] = ()
    """Why generation stopped, as the backend says it (`stop`, `tool_calls`, `end_turn`, …):
    `gen_ai.response.finish_reasons`."""


class Provider(ABC):
    """Base of every provider. The contract:

    - `complete` is called by `turn/loop.py` once per iteration, never concurrently for one turn.
    - It returns a `ProviderResponse` or raises a `ProviderError` subclass (backend errors are
      translated once, here at the seam, with `raise … from exc`, into the most specific one:
      `ProviderHTTPError`, `ProviderTimeoutError`, `ProviderConnectionError`,
      `ProviderResponseError`); `ScenarioExhaustedError` for scripts. It sends one request
      and never retries: the retry policy lives in `turn/` and reads the error's `retryable`
      and `retry_after`.
    - Cancellation (the task is cancelled) closes the HTTP request in flight.
    - `aclose` releases connections and is safe to call twice.
    """

    name: str = "provider"
    """`gen_ai.provider.name` on spans and the `provider` metric label, in its redacted form
    (`turn.context.ShownNames`): an operator's name is a payload like any other."""

    model: str = "unknown"
    """`gen_ai.request.model` (redacted the same way)."""

    native_tools: bool = True
    """True: tool specs travel natively. False: the text protocol in the system prompt."""

    max_retries: int = 0
    """How many times `turn/` may send a request again after a retryable `ProviderError`
    (the agent file's `max_retries`; 0 for in-process providers)."""

    server_address: str | None = None
    """`server.address` on `chat` spans: the host the provider talks to (None: in process)."""

    server_port: int | None = None
    """`server.port` on `chat` spans."""

    @abstractmethod
    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Send one request and return the model's response.

        Raises:
            ProviderError: the backend failed.
            ScenarioExhaustedError: a scripted provider has no response left.
        """

    async def aclose(self) -> None:  # noqa: B027 - optional hook, no-op by default
        """Release what the provider holds."""
