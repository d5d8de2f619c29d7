"""Loop control: `run_tool_call_loop` iterates until the turn reaches an end state.

Each iteration reads top-down as calls into the step modules:
tools (`specs`) → provider request with retries (`provider_call`) → parse → prepare (`prep`)
→ dispatch → record (`history`).
Before the first request the context budget may leave the oldest whole turns out of what
the turn's requests send (`context_window`); a provider's context-window overflow leaves
out more and sends the request again once (`provider_call`).
End states: final text, cancelled, aborted (shell repeat guard, loop detector, parse
failures, a `before_llm_call` hook's cancel), max iterations (graceful summary or error at
cap, when the turn's `IterationBudget` runs out: a delegated turn shares its parent's),
provider error (after the retries: the turn's text is the error's one line,
`ProviderError.line()`).

At the top of each iteration the loop takes what arrived while the last one ran: a model
switch a tool asked for stops the loop, and `run_tool_call_loop` continues the same turn on
the new provider with the history so far and the same iteration budget (`model_switch`;
a `before_llm_call` hook's switch stops it before its request is sent, and that iteration is
sent on the new model); steering messages are appended as user messages, in order
(`steering`). An answer with no tool call while steering messages wait does not end the
turn: the model reads them first.

The answer reaches a streaming client as `chunk` TurnEvents: while it streams when the
provider streams (`provider_call`), else as one chunk when the turn ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass

from ..config import MaxIterationBehavior
from ..errors import ProviderError, TurnAborted
from ..observability.events import AgentEnd, AgentStart, Correlation, TurnOutcomeKind
from ..providers.text_protocol import (
    MAX_PARSE_RETRIES,
    PARSE_ERROR_FEEDBACK,
    PARSE_FAILURE_FINAL,
    speaks_text_protocol,
)
from ..tools.mcp_client import McpConnectError
from .context import IterationBudget, ResolvedAgentExecution, TurnState
from .context_window import ContextWindow
from .delegation import turn_tools
from .dispatch import Dispatcher
from .events import TurnEvent
from .history import append_final, append_round, append_user
from .loop_detection import LoopDetector
from .model_switch import (
    ModelSwitchRequested,
    PendingModelSwitch,
    continue_on,
    model_switch_scope,
)
from .parse import CallIds, ParseResult, parse_response
from .prep import prepare_calls
from .provider_call import report_trim, request_model
from .results import SlotRecorder
from .specs import EffectiveTools
from .steering import append_steering, drop_steering
from .system_prompt import SystemPrompt

__all__ = ["TurnOutcome", "cap_error_text", "cap_summary_suffix", "run_tool_call_loop"]

SUMMARY_REQUEST = (
    "You have reached the maximum number of tool iterations for this turn. Do not call any "
    "more tools. Summarize what you found and what is still missing."
)


def cap_summary_suffix(cap: int) -> str:
    """The suffix a graceful summary gets at the iteration cap."""
    return f"\n\n*Turn stopped: reached maximum tool iterations ({cap}).*"


def cap_error_text(cap: int) -> str:
    """The error of `error_at_cap`."""
    return f"Agent exceeded maximum tool iterations ({cap})"


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnOutcome:
    """How a turn ended and what the user reads."""

    kind: TurnOutcomeKind
    text: str
    iterations: int
    turn_id: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True for a final answer or a graceful max-iteration summary."""
        return self.kind is TurnOutcomeKind.FINAL or (
            self.kind is TurnOutcomeKind.MAX_ITERATIONS and self.error is None
        )


async def run_tool_call_loop(execution: ResolvedAgentExecution, state: TurnState) -> TurnOutcome:
    """Run one turn to an end state. Never raises for an expected end.

    Raises:
        ScenarioExhaustedError: a scripted provider ran out of responses (bad input).
        asyncio.CancelledError: a cancellation this turn's scope did not request.
    """
    shown = execution.shown
    # A client chose the conversation id: a payload like any other before a span shows it.
    conversation = state.conversation_id
    state.correlation = Correlation(
        turn_id=state.turn_id,
        channel=state.channel,
        agent_alias=shown.alias,
        conversation_id=(
            None if conversation is None else execution.redactor.redact_text(conversation)
        ),
        parent_agent_alias=state.parent_agent_alias,
    )
    state.loop_detector = LoopDetector(execution.config.loop_ignore_tools)
    start, start_ns = time.perf_counter(), time.time_ns()
    emit = execution.observer.on_event
    receipts = execution.receipts if execution.config.receipts.enabled else None
    emit(
        AgentStart(
            correlation=state.correlation,
            provider=shown.provider,
            model=shown.model,
            time_ns=start_ns,
            receipt_key_id=receipts.key_id if receipts else None,
            input=execution.redactor.redact_text(state.user_message),
        )
    )
    state.model_switch.bind(execution)
    with state.cancellation.scope(), model_switch_scope(state.model_switch):
        outcome = await _run_guarded(execution, state)
        drop_steering(execution, state)
        # Redacted once: the last chunk, the root span's output and (an error's text is the
        # outcome's text) its error.
        shown_text = execution.redactor.redact_text(outcome.text)
        if outcome.kind is TurnOutcomeKind.CANCELLED:
            await _drain_cancellation(state)
        else:
            _send_answer(execution, state, outcome, shown_text)
    if outcome.error is None:
        shown_error = None
    elif outcome.error == outcome.text:
        shown_error = shown_text
    else:
        shown_error = execution.redactor.redact_text(outcome.error)
    emit(
        AgentEnd(
            correlation=state.correlation,
            outcome=outcome.kind,
            iterations=outcome.iterations,
            time_ns=time.time_ns(),
            duration_s=time.perf_counter() - start,
            error=shown_error,
            output=shown_text,
        )
    )
    return outcome


async def _run_guarded(execution: ResolvedAgentExecution, state: TurnState) -> TurnOutcome:
    try:
        return await _drive(execution, state)
    except TurnAborted as abort:
        return _end(state, TurnOutcomeKind.ABORTED, abort.message, error=abort.message)
    except ProviderError as exc:
        # One line: provider, status, error type; never the request, the prompt or the key.
        message = exc.line()
        return _end(state, TurnOutcomeKind.ERROR, message, error=message)
    except asyncio.CancelledError as exc:
        if not state.cancellation.owns(exc):
            raise
        state.cancellation.absorb()
        return _end(state, TurnOutcomeKind.CANCELLED, "Turn cancelled.")


def _send_answer(
    execution: ResolvedAgentExecution, state: TurnState, outcome: TurnOutcome, shown_text: str
) -> None:
    """The answer as a `chunk` TurnEvent, redacted like every streaming event.

    An answer whose response streamed already went out chunk by chunk (`provider_call`);
    only what the loop adds to it is sent: nothing for a final answer, the cap's suffix for a
    graceful summary. Any other end (an error, an abort) is one chunk with its whole text.
    """
    answer = shown_text  # the whole text, redacted by the caller
    if state.streamed and outcome.error is None:
        if outcome.kind is TurnOutcomeKind.FINAL:
            return
        if outcome.kind is TurnOutcomeKind.MAX_ITERATIONS:
            suffix = cap_summary_suffix(_budget(execution, state).total)
            answer = execution.redactor.redact_text(suffix)
    state.events(TurnEvent(type="chunk", data={"text": answer}))


async def _drain_cancellation(state: TurnState) -> None:
    """Take delivery of our own cancel if it is still pending, so it cannot hit the caller."""
    try:
        await asyncio.sleep(0)
    except asyncio.CancelledError as exc:
        if not state.cancellation.owns(exc):
            raise
        state.cancellation.absorb()


def _end(
    state: TurnState, kind: TurnOutcomeKind, text: str, *, error: str | None = None
) -> TurnOutcome:
    return TurnOutcome(
        kind=kind, text=text, iterations=state.iteration, turn_id=state.turn_id, error=error
    )


async def _drive(execution: ResolvedAgentExecution, state: TurnState) -> TurnOutcome:
    """The turn from its first request to its end, on each model it switches to."""
    turn = _Turn(execution, state)
    while True:
        ended = await turn.iterate()
        if isinstance(ended, TurnOutcome):
            return ended
        turn.switch(ended)


class _Turn:
    """One turn's loop: what its iterations share, kept across model switches."""

    def __init__(self, execution: ResolvedAgentExecution, state: TurnState) -> None:
        self.state = state
        # With `redact_history` on, every text the history carries goes through the
        # redactor: the user's message, the operator's system prompt, the model's own texts,
        # the results.
        self.history = execution.redactor if execution.config.redact_history else None
        self._bind(execution)
        self.system.install(state.messages, self.tools)
        append_user(state.messages, state.user_message, redactor=self.history)
        self.window = ContextWindow(
            state.messages, turn_start=len(state.messages) - 1, runtime_texts=(SUMMARY_REQUEST,)
        )
        self.call_ids = CallIds(execution.redactor)
        self.parse_retries = 0
        self.resend = False
        """A hook switched the last request before it was sent: send it again, as the same
        iteration, on the new model."""
        self.summary_asked = False
        """The graceful summary's request is in the history (and its iteration counted)."""

    def _bind(self, execution: ResolvedAgentExecution) -> None:
        """What depends on the provider in use: built at the start and after each switch."""
        self.execution = execution
        self.native = execution.provider.native_tools
        self.tools = _effective_tools(execution, self.state)
        text_protocol = speaks_text_protocol(
            native_tools=self.native, strict=execution.config.strict_tool_parsing
        )
        self.system = SystemPrompt(execution, text_protocol=text_protocol, redactor=self.history)
        self.recorder = SlotRecorder(execution, self.state)

    def switch(self, pending: PendingModelSwitch) -> None:
        """Go on with the provider `pending` resolved (reported as `ModelSwitched`)."""
        state = self.state
        again = self.resend or self.summary_asked  # that request's iteration is counted
        first = state.iteration if again else state.iteration + 1
        self._bind(continue_on(self.execution, state, pending, iteration=first))

    async def iterate(self) -> TurnOutcome | PendingModelSwitch:
        """Iterate to an end state, or to a model switch (the caller goes on with it)."""
        execution, state = self.execution, self.state
        config = execution.config
        budget = _budget(execution, state)
        while self.resend or budget.remaining > 0:
            if state.cancellation.requested:
                return _end(state, TurnOutcomeKind.CANCELLED, "Turn cancelled.")
            pending = state.model_switch.take()
            if pending is not None:
                return pending
            if self.resend:
                self.resend = False
            else:
                budget.reserve()
                state.iteration += 1
            append_steering(execution, state)
            if await _refresh_catalogs(execution):
                self.tools = _effective_tools(execution, state)
            tools = self.tools
            self.system.install(state.messages, tools)
            if state.iteration == 1 and config.context_token_budget is not None:
                _fit_budget(execution, state, self.window, config.context_token_budget)
            specs = tools.specs() if self.native else []
            try:
                response = await request_model(
                    execution, state, specs, tool_count=len(tools.names()), window=self.window
                )
            except ModelSwitchRequested:
                self.resend = True
                continue
            parsed = parse_response(
                response,
                tool_names=tools.names(),
                strict=config.strict_tool_parsing,
                native_provider=self.native,
                call_ids=self.call_ids,
                aliases=self.system.aliases,
            )
            if parsed.parse_failed:
                self.parse_retries += 1
                if self.parse_retries > MAX_PARSE_RETRIES:
                    return _end(
                        state,
                        TurnOutcomeKind.ERROR,
                        PARSE_FAILURE_FINAL,
                        error="tool call parse error",
                    )
                append_final(state.messages, response.text, redactor=self.history)
                append_user(state.messages, PARSE_ERROR_FEEDBACK)
                continue
            if not parsed.calls:
                append_final(state.messages, parsed.text, redactor=self.history)
                if state.steering.close_if_idle():
                    return _end(state, TurnOutcomeKind.FINAL, parsed.text)
                continue  # the user steered while the model answered: it reads that first
            await _tool_round(execution, state, tools, parsed, self.recorder)
        return await self._at_cap()

    async def _at_cap(self) -> TurnOutcome | PendingModelSwitch:
        """The max-iteration finish. A graceful summary reads the steering messages that
        wait, and is asked on the model a waiting switch names."""
        execution, state = self.execution, self.state
        cap = _budget(execution, state).total
        if execution.config.max_iteration_behavior is MaxIterationBehavior.ERROR_AT_CAP:
            message = cap_error_text(cap)
            return _end(state, TurnOutcomeKind.MAX_ITERATIONS, message, error=message)
        pending = state.model_switch.take()
        if pending is not None:
            return pending
        if not self.summary_asked:
            self.summary_asked = True
            state.iteration += 1
            append_steering(execution, state)
            append_user(state.messages, SUMMARY_REQUEST)
        try:
            response = await request_model(execution, state, [], tool_count=0, window=self.window)
        except ModelSwitchRequested:
            switched = state.model_switch.take()
            assert switched is not None
            return switched
        text = (response.text or "").strip() + cap_summary_suffix(cap)
        append_final(state.messages, text, redactor=self.history)
        return _end(state, TurnOutcomeKind.MAX_ITERATIONS, text)


def _fit_budget(
    execution: ResolvedAgentExecution, state: TurnState, window: ContextWindow, budget: int
) -> None:
    trim = window.fit_budget(budget)
    if trim is not None:
        report_trim(execution, state, trim)


def _budget(execution: ResolvedAgentExecution, state: TurnState) -> IterationBudget:
    """The turn's iteration budget: its parent's for a delegated turn, else a new one."""
    if state.budget is None:
        state.budget = IterationBudget(execution.config.max_tool_iterations)
    return state.budget


def _effective_tools(execution: ResolvedAgentExecution, state: TurnState) -> EffectiveTools:
    return EffectiveTools.build(
        registry=execution.registry,
        mcp_servers=execution.mcp_servers,
        config=execution.config,
        user_message=state.user_message,
        activated=execution.activated,
        turn_tools=turn_tools(execution, state, run_tool_call_loop),
    )


async def _refresh_catalogs(execution: ResolvedAgentExecution) -> bool:
    """Re-list the tools of every real MCP server that announced `tools/list_changed`.

    Runs before each provider request, so the model is offered the live catalog; filter groups,
    exclusions and deferral apply to it as to any other. A server that is gone keeps its last
    catalog (its calls answer that it is not available).

    Returns:
        True when some server's tools changed (the effective tools must be rebuilt).
    """
    changed = False
    for server in execution.mcp_servers:
        if server.catalog_changed:
            with contextlib.suppress(McpConnectError):
                changed = await server.refresh() or changed
    return changed


async def _tool_round(
    execution: ResolvedAgentExecution,
    state: TurnState,
    tools: EffectiveTools,
    parsed: ParseResult,
    recorder: SlotRecorder,
) -> None:
    dispatcher = Dispatcher(execution, state, recorder)
    prepared = await prepare_calls(execution, state, tools, parsed.calls)
    slots = await dispatcher.dispatch(prepared)
    redactor = execution.redactor if execution.config.redact_history else None
    append_round(state.messages, parsed, slots, redactor=redactor, names=execution.shown)
    if dispatcher.abort_message:
        raise TurnAborted(dispatcher.abort_message)
    if state.cancellation.requested:
        raise asyncio.CancelledError  # owned by the scope: ends the turn as cancelled
