"""Provider-request step: one provider call of an iteration, its retries and its streamed text.

Policy above the seam (STYLE §3): a provider sends one request and raises a typed
`ProviderError`; this step decides whether to send it again (the error's `retryable`, at most
`Provider.max_retries` times), how long to wait first (`RetryPolicy`: exponential backoff with
full jitter, at least the backend's `Retry-After`), and reports it all to the observer: one
`LlmRequest` and one `LlmResponse` per call (one `chat` span), one `ProviderAttempt` per retry
between them (a span event, an `llm_retry` log line). Text a streaming provider hands over
(`ProviderRequest.on_text`) leaves as redacted `chunk` TurnEvents through a `ChunkRedactor`.
Before each call the `before_llm_call` hooks may cancel it (the turn ends aborted), rewrite
its messages and tools, or switch its model (nothing is sent: the loop goes on with the new
model, `turn/model_switch.py`). A context-window overflow (`ProviderContextOverflowError`)
leaves the oldest whole turns out (`context_window`) and sends the call once more, as a new
call.
A stream a provider error or the turn's cancel cuts after text arrived is kept: the history
gets `{partial}\n\n[stream interrupted]` / `[interrupted by user]`, and the client the rest
of the partial and the marker as chunks.

Risky parts:
- A retry after text went out would show a client that text twice: an attempt that already
  sent a chunk is not retried (the SDKs do not retry a broken stream either). Text an attempt
  held back and never sent is dropped with it.
- The backoff sleep is an await of the turn like any other: a cancel during it ends the turn as
  cancelled, and no request is sent after it. A call the cancel stops still gets its
  `LlmResponse` (`error_type` `cancelled`), so its `chat` span ends as what it was.
- Everything the events carry is redacted here: the response's model and id and finish reasons
  are the backend's text, the server address the operator's; the error line names only the
  provider, the status and the error type.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import ProviderContextOverflowError, ProviderError, TurnAborted
from ..observability.events import (
    CALL_CANCELLED,
    ContextTrimmed,
    LlmRequest,
    LlmResponse,
    ModelSwitchSource,
    ProviderAttempt,
)
from ..providers.base import ProviderRequest, ProviderResponse
from .events import EventSink, TurnEvent
from .history import INTERRUPTED_BY_USER, STREAM_INTERRUPTED, append_interrupted
from .hooks import LLM_CALL_CANCELLED, CancelCall, HookLlmCall, SwitchModel
from .model_switch import ModelSwitch, ModelSwitchRefused, ModelSwitchRequested
from .streaming import ChunkRedactor

if TYPE_CHECKING:
    from ..tools.base import ToolSpec
    from .context import ResolvedAgentExecution, TurnState
    from .context_window import ContextWindow, Trim

__all__ = ["RetryPolicy", "report_trim", "request_model"]


@dataclass(frozen=True, kw_only=True, slots=True)
class RetryPolicy:
    """How long to wait before sending a failed provider request again.

    The wait before retry `n` (1-based) is drawn uniformly from `[0, min(cap_s, base_s·2ⁿ⁻¹)]`
    ("full jitter": many clients rate-limited together do not come back together), and is at
    least the backend's `Retry-After`, itself bounded by `retry_after_limit_s` (a backend that
    asks for an hour gets a minute, then the last error if it still refuses). How many retries
    is the provider's `max_retries`, not a policy knob.

    `sleep` and `jitter` are injectable so tests neither sleep nor guess.
    """

    base_s: float = 0.5
    cap_s: float = 20.0
    retry_after_limit_s: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    """Awaited with each wait; cancelling it cancels the turn."""
    jitter: Callable[[], float] = random.random
    """A number in [0, 1) that scales the backoff."""

    def wait_s(self, retry: int, error: ProviderError) -> float:
        """Seconds to wait before retry `retry` (1-based) after `error`."""
        backoff = self.jitter() * min(self.cap_s, self.base_s * 2 ** (retry - 1))
        after = error.retry_after
        if after is not None and math.isfinite(after) and after > 0:
            return max(backoff, min(after, self.retry_after_limit_s))
        return backoff


async def request_model(
    execution: ResolvedAgentExecution,
    state: TurnState,
    specs: list[ToolSpec],
    *,
    tool_count: int,
    window: ContextWindow,
) -> ProviderResponse:
    """Send this iteration's request, retrying what may be retried; stream its text out.

    Sends `window.messages()` (the history, less the turns context limits left out). When
    the provider reports a context-window overflow, the window leaves out the oldest whole
    turns down to two thirds of the estimate, the cut is reported (`ContextTrimmed`), and the
    request is sent once more: a second overflow, or one with no earlier turn left to cut,
    ends the turn as the provider error does.

    Raises:
        ProviderError: the last attempt failed, or an attempt failed that may not be retried.
        TurnAborted: a `before_llm_call` hook cancelled the request.
        ModelSwitchRequested: a `before_llm_call` hook switched the request's model.
        ScenarioExhaustedError: a scripted provider ran out of responses.
        asyncio.CancelledError: the turn was cancelled during a request or a backoff.
    """
    try:
        return await _call(execution, state, window.messages(), specs, tool_count=tool_count)
    except ProviderContextOverflowError:
        trim = window.after_overflow()
        if trim is None:
            raise
        report_trim(execution, state, trim)
        return await _call(execution, state, window.messages(), specs, tool_count=tool_count)


def report_trim(execution: ResolvedAgentExecution, state: TurnState, trim: Trim) -> None:
    """Tell the observer what a cut left out (a span event on the turn, a log line)."""
    assert state.correlation is not None
    execution.observer.on_event(
        ContextTrimmed(
            correlation=state.correlation,
            iteration=state.iteration,
            reason=trim.reason,
            messages_dropped=trim.messages_dropped,
            turns_dropped=trim.turns_dropped,
            tokens_before=trim.tokens_before,
            tokens_after=trim.tokens_after,
            token_budget=trim.token_budget,
            time_ns=time.time_ns(),
        )
    )


async def _before_llm_call(
    execution: ResolvedAgentExecution,
    state: TurnState,
    messages: list[dict[str, Any]],
    specs: list[ToolSpec],
) -> tuple[list[dict[str, Any]], list[ToolSpec]]:
    """The messages and specs to send, as the `before_llm_call` hooks leave them.

    Raises:
        TurnAborted: a hook cancelled the request (`LLM call cancelled by hook: {reason}`;
            the loop redacts that text before it reaches any surface), or asked for a model
            the agent's `switch_model` callback refused.
        ModelSwitchRequested: a hook switched the request to another model; nothing was
            sent, the switch waits on the turn state (`turn/model_switch.py`).
    """
    hooks = execution.hooks
    if not hooks.has_before_llm:
        return messages, specs
    switch = state.model_switch
    decided = await hooks.run_before_llm(
        HookLlmCall(
            messages=messages,
            tools=specs,
            model=execution.model,
            iteration=state.iteration,
            turn_id=state.turn_id,
            provider=execution.provider.name,
        ),
        allow_switch=switch.hook_switched_at != state.iteration,
    )
    if isinstance(decided, CancelCall):
        raise TurnAborted(LLM_CALL_CANCELLED.format(reason=decided.reason))
    if isinstance(decided, SwitchModel):
        request = ModelSwitch(model=decided.model, provider=decided.provider)
        try:
            switched = switch.request(request, source=ModelSwitchSource.HOOK)
        except ModelSwitchRefused as exc:
            raise TurnAborted(LLM_CALL_CANCELLED.format(reason=str(exc))) from None
        if switched:
            switch.hook_switched_at = state.iteration
            raise ModelSwitchRequested
    return decided.messages, decided.tools


async def _call(
    execution: ResolvedAgentExecution,
    state: TurnState,
    messages: list[dict[str, Any]],
    specs: list[ToolSpec],
    *,
    tool_count: int,
) -> ProviderResponse:
    """One provider call: hooks, then attempts until one answers or may not be retried."""
    messages, specs = await _before_llm_call(execution, state, messages, specs)
    provider = execution.provider
    shown = execution.shown
    correlation = state.correlation
    assert correlation is not None
    emit = execution.observer.on_event
    emit(
        LlmRequest(
            correlation=correlation,
            iteration=state.iteration,
            provider=shown.provider,
            model=shown.model,
            message_count=len(messages),
            tool_count=tool_count,
            time_ns=time.time_ns(),
            input_messages=_messages_json(execution, messages),
        )
    )
    start = time.perf_counter()
    send = partial(_send_chunk, state.events)
    attempt = 0
    in_flight = False
    try:
        while True:
            attempt += 1
            stream = ChunkRedactor(execution.redactor, send)
            request = ProviderRequest(
                messages=messages, tools=specs, iteration=state.iteration, on_text=stream.feed
            )
            try:
                in_flight = True
                response = await provider.complete(request)
                break
            except ProviderError as exc:
                in_flight = False
                if not exc.retryable or attempt > provider.max_retries or stream.sent:
                    _keep_partial(execution, state, stream, STREAM_INTERRUPTED)
                    emit(_failure(execution, state, start, exc, attempts=attempt))
                    raise
                wait = execution.retry.wait_s(attempt, exc)
                emit(
                    ProviderAttempt(
                        correlation=correlation,
                        iteration=state.iteration,
                        provider=shown.provider,
                        model=shown.model,
                        attempt=attempt,
                        error_type=execution.redactor.redact_text(exc.error_type),
                        status=exc.status,
                        wait_s=wait,
                        time_ns=time.time_ns(),
                    )
                )
                await execution.retry.sleep(wait)
    except asyncio.CancelledError:
        if in_flight:  # a cancel during a backoff leaves no partial: its attempt failed
            _keep_partial(execution, state, stream, INTERRUPTED_BY_USER)
        # The call ends with the turn: its chat span closes as cancelled, not as unfinished.
        emit(_failure(execution, state, start, None, attempts=attempt))
        raise
    state.streamed = bool(stream.raw)
    if state.streamed:
        stream.finish(response.text)
    emit(_success(execution, state, start, response, attempts=attempt))
    if response.usage is not None:
        state.events(
            TurnEvent(
                type="usage",
                data={
                    "input_tokens": response.usage.input_tokens,
                    "output_tokens": response.usage.output_tokens,
                },
            )
        )
    return response


def _keep_partial(
    execution: ResolvedAgentExecution, state: TurnState, stream: ChunkRedactor, marker: str
) -> None:
    """Keep the text a cut stream delivered: in the history with `marker` after it, and to
    the client, whose chunks then end with the same text (the held-back rest, the marker)."""
    partial = stream.raw
    if not partial:
        return
    redactor = execution.redactor if execution.config.redact_history else None
    append_interrupted(state.messages, partial, marker, redactor=redactor)
    stream.finish()
    if not stream.diverged:
        _send_chunk(state.events, f"\n\n{marker}")


def _send_chunk(events: EventSink, text: str) -> None:
    events(TurnEvent(type="chunk", data={"text": text}))


def _success(
    execution: ResolvedAgentExecution,
    state: TurnState,
    start: float,
    response: ProviderResponse,
    *,
    attempts: int,
) -> LlmResponse:
    shown = execution.shown
    redact = execution.redactor.redact_text
    usage = response.usage
    return LlmResponse(
        **_call_fields(execution, state, start, attempts=attempts),
        success=True,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        tool_call_count=len(response.tool_calls),
        response_model=shown.response_model(response.model) if response.model else None,
        response_id=redact(response.response_id) if response.response_id else None,
        finish_reasons=tuple(shown.response_model(r) for r in response.finish_reasons),
        output_messages=_messages_json(execution, _output_messages(response)),
    )


def _messages_json(execution: ResolvedAgentExecution, messages: list[Any]) -> str | None:
    """Messages as redacted compact JSON, only for an observer that asks for message content
    (`wants_messages`, opt-in: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`)."""
    if not getattr(execution.observer, "wants_messages", False):
        return None
    redacted = execution.redactor.redact_value(messages)
    return json.dumps(redacted, ensure_ascii=False, separators=(",", ":"))


def _output_messages(response: ProviderResponse) -> list[dict[str, Any]]:
    """The response as one assistant message (OpenAI-style), like the history records it."""
    message: dict[str, Any] = {"role": "assistant", "content": response.text}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "name": call.name, "arguments": call.arguments}
            for call in response.tool_calls
        ]
    return [message]


def _failure(
    execution: ResolvedAgentExecution,
    state: TurnState,
    start: float,
    error: ProviderError | None,
    *,
    attempts: int,
) -> LlmResponse:
    """The failed call's event; `error` None: the turn was cancelled during it."""
    redact = execution.redactor.redact_text
    if error is None:
        line, error_type = None, CALL_CANCELLED
    else:
        line = redact(error.line())
        error_type = redact(error.error_type or type(error).__name__)
    return LlmResponse(
        **_call_fields(execution, state, start, attempts=attempts),
        success=False,
        error=line,
        error_type=error_type,
    )


def _call_fields(
    execution: ResolvedAgentExecution, state: TurnState, start: float, *, attempts: int
) -> dict[str, Any]:
    """What every `LlmResponse` of this call carries, succeeded or not (names shown redacted)."""
    shown = execution.shown
    assert state.correlation is not None
    return {
        "correlation": state.correlation,
        "iteration": state.iteration,
        "provider": shown.provider,
        "model": shown.model,
        "time_ns": time.time_ns(),
        "duration_s": time.perf_counter() - start,
        "server_address": shown.server_address,
        "server_port": execution.provider.server_port,
        "attempts": attempts,
    }
