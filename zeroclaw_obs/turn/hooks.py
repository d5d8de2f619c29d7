"""`before_tool_call`, `after_tool_call` and `before_llm_call` hooks.

A before-hook sees each call in the model's order and may let it continue, cancel it (its slot
reads `Cancelled by hook: {reason}`) or rewrite its name and arguments for the rest of the
pipeline. A `before_llm_call` hook sees each provider request just before it is sent (a copy
of its messages, its native tool specs, the provider and model) and may let it go, cancel it
(the turn ends as aborted: `LLM call cancelled by hook: {reason}`), rewrite its messages and
tools, or send it and the rest of the turn to another model (`SwitchModel`, see
`turn/model_switch.py`). Hooks of each kind run by descending priority; equal priorities keep
registration order.

Risky part: hooks are user code on the turn's path. A before-hook that raises cancels the call
(fail closed: a policy hook that crashed must not let the call through); an after-hook that
raises is logged by type and ignored, because the call already ran. A `before_llm_call` hook
that raises, or returns a rewrite that is not a list of messages / tool specs, cancels the
request the same way, and is logged by exception type only. A hook's reason is user text:
every surface that shows it redacts it first (the loop redacts the turn's end text).
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..tools.base import ToolResult, ToolSpec

__all__ = [
    "LLM_CALL_CANCELLED",
    "AfterToolCall",
    "BeforeLlmCall",
    "BeforeToolCall",
    "CancelCall",
    "Continue",
    "HookCall",
    "HookDecision",
    "HookLlmCall",
    "Hooks",
    "LlmHookDecision",
    "RewriteCall",
    "RewriteLlmCall",
    "SwitchModel",
]

LLM_CALL_CANCELLED = "LLM call cancelled by hook: {reason}"
"""The turn's end text (outcome `aborted`) when a `before_llm_call` hook cancels a request."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True, slots=True)
class HookCall:
    """The call a hook sees. Arguments are a copy: mutate them through `RewriteCall`."""

    name: str
    arguments: dict[str, Any]
    call_id: str
    turn_id: str


@dataclass(frozen=True, slots=True)
class Continue:
    """Let the call go on unchanged."""


@dataclass(frozen=True, slots=True)
class CancelCall:
    """Cancel the call: a tool call's slot reads `Cancelled by hook: {reason}`; a provider
    request ends the turn as aborted with `LLM call cancelled by hook: {reason}`."""

    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class RewriteCall:
    """Replace the name and/or arguments for the rest of the pipeline."""

    name: str | None = None
    arguments: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class HookLlmCall:
    """The provider request a `before_llm_call` hook sees, just before it is sent.

    `messages` is a deep copy for each hook (mutating it changes nothing): change what is
    sent through `RewriteLlmCall`. They are the messages this request sends, OpenAI-style,
    system message first: the history (redacted when `redact_history` is on) after any
    context trimming. `tools` are the native tool specs sent (empty for a text-protocol
    provider, whose tools are listed in the system message, and for the final no-tools call
    at the iteration cap).
    """

    messages: list[dict[str, Any]]
    tools: list[ToolSpec]
    model: str
    """The requested model (switch it with `SwitchModel`, not by rewriting this field)."""
    iteration: int
    """1-based number of the provider call in the turn."""
    turn_id: str
    provider: str = ""
    """The name of the provider the request goes to."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RewriteLlmCall:
    """Send other messages and/or tools with this one request (the history is unchanged)."""

    messages: list[dict[str, Any]] | None = None
    tools: list[ToolSpec] | None = None


HookDecision = Continue | CancelCall | RewriteCall | None


@dataclass(frozen=True, kw_only=True, slots=True)
class SwitchModel:
    """Send this request, and the rest of the turn, to another model (`turn/model_switch.py`).

    The request is not sent on the model in use: the turn goes on with the agent's
    `switch_model` callback's provider, from this same iteration, and the hooks run again for
    it. Naming the provider and model in use is the same as `Continue`; a second switch of one
    request is ignored (logged); one the callback refuses ends the turn as a cancel does.
    """

    model: str
    provider: str | None = None
    """The provider by name; None: the one in use."""


LlmHookDecision = Continue | CancelCall | RewriteLlmCall | SwitchModel | None
BeforeToolCall = Callable[[HookCall], HookDecision | Awaitable[HookDecision]]
AfterToolCall = Callable[[HookCall, ToolResult], Awaitable[None] | None]
BeforeLlmCall = Callable[[HookLlmCall], LlmHookDecision | Awaitable[LlmHookDecision]]


@dataclass(order=True, frozen=True, slots=True)
class _Registered:
    sort_key: tuple[int, int]
    hook: Any = field(compare=False)


class Hooks:
    """The hooks of one agent, kept sorted once at registration."""

    def __init__(self) -> None:
        self._before: list[_Registered] = []
        self._after: list[_Registered] = []
        self._before_llm: list[_Registered] = []
        self._count = 0

    def __bool__(self) -> bool:
        return bool(self._before or self._after or self._before_llm)

    def add_before(self, hook: BeforeToolCall, *, priority: int = 0) -> None:
        """Register a `before_tool_call` hook; higher priority runs first."""
        self._count += 1
        self._before.append(_Registered((-priority, self._count), hook))
        self._before.sort()

    def add_after(self, hook: AfterToolCall, *, priority: int = 0) -> None:
        """Register an `after_tool_call` hook, run for executed calls only."""
        self._count += 1
        self._after.append(_Registered((-priority, self._count), hook))
        self._after.sort()

    def add_before_llm(self, hook: BeforeLlmCall, *, priority: int = 0) -> None:
        """Register a `before_llm_call` hook; higher priority runs first."""
        self._count += 1
        self._before_llm.append(_Registered((-priority, self._count), hook))
        self._before_llm.sort()

    @property
    def has_before_llm(self) -> bool:
        """True when at least one `before_llm_call` hook is registered."""
        return bool(self._before_llm)

    @property
    def has_before(self) -> bool:
        """True when at least one before-hook is registered (skips work on the hot path)."""
        return bool(self._before)

    @property
    def has_after(self) -> bool:
        """True when at least one after-hook is registered."""
        return bool(self._after)

    async def run_before(self, call: HookCall) -> HookCall | CancelCall:
        """Run before-hooks in priority order; return the (rewritten) call or a cancellation."""
        for registered in self._before:
            try:
                decision = registered.hook(call)
                if inspect.isawaitable(decision):
                    decision = await decision
            except Exception as exc:
                return CancelCall(
                    f"hook {_hook_name(registered.hook)} failed ({type(exc).__name__})"
                )
            if isinstance(decision, CancelCall):
                return decision
            if isinstance(decision, RewriteCall):
                call = HookCall(
                    name=decision.name if decision.name is not None else call.name,
                    arguments=dict(decision.arguments)
                    if decision.arguments is not None
                    else call.arguments,
                    call_id=call.call_id,
                    turn_id=call.turn_id,
                )
        return call

    async def run_before_llm(
        self, call: HookLlmCall, *, allow_switch: bool = True
    ) -> HookLlmCall | CancelCall | SwitchModel:
        """Run `before_llm_call` hooks in priority order; return the (rewritten) request, a
        cancellation or a model switch (which stops the chain: the request is not sent).

        Each hook sees the request as the hooks before it left it, through a deep copy of its
        messages; a hook that raises or returns a malformed rewrite or switch cancels (fail
        closed), logged by exception type only. A `SwitchModel` naming the provider and model
        in use counts as `Continue`, and so does any with `allow_switch` False (logged: the
        request was already switched once)."""
        for registered in self._before_llm:
            name = _hook_name(registered.hook)
            try:
                decision = registered.hook(_copied(call))
                if inspect.isawaitable(decision):
                    decision = await decision
            except Exception as exc:
                _log.warning("before_llm_call hook %s failed: %s", name, type(exc).__name__)
                return CancelCall(f"hook {name} failed ({type(exc).__name__})")
            if isinstance(decision, CancelCall):
                return decision
            if isinstance(decision, SwitchModel):
                if not _valid_switch(decision):
                    _log.warning("before_llm_call hook %s returned an invalid switch", name)
                    return CancelCall(f"hook {name} returned an invalid model switch")
                if _names_in_use(decision, call):
                    continue
                if allow_switch:
                    return decision
                _log.warning("before_llm_call hook %s: a second switch of one request", name)
                continue
            if isinstance(decision, RewriteLlmCall):
                if not _valid_rewrite(decision):
                    _log.warning("before_llm_call hook %s returned an invalid rewrite", name)
                    return CancelCall(f"hook {name} returned an invalid rewrite")
                call = HookLlmCall(
                    messages=list(decision.messages)
                    if decision.messages is not None
                    else call.messages,
                    tools=list(decision.tools) if decision.tools is not None else call.tools,
                    model=call.model,
                    iteration=call.iteration,
                    turn_id=call.turn_id,
                    provider=call.provider,
                )
        return call

    async def run_after(self, call: HookCall, result: ToolResult) -> None:
        """Run after-hooks; failures are logged by type and never reach the turn."""
        for registered in self._after:
            try:
                outcome = registered.hook(call, result)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as exc:
                _log.warning(
                    "after_tool_call hook %s failed: %s",
                    _hook_name(registered.hook),
                    type(exc).__name__,
                )


def _copied(call: HookLlmCall) -> HookLlmCall:
    """The request with its own deep copy of the messages and list of specs."""
    return HookLlmCall(
        messages=copy.deepcopy(call.messages),
        tools=list(call.tools),
        model=call.model,
        iteration=call.iteration,
        turn_id=call.turn_id,
        provider=call.provider,
    )


def _valid_switch(switch: SwitchModel) -> bool:
    model, provider = switch.model, switch.provider
    return (
        isinstance(model, str)
        and bool(model.strip())
        and (provider is None or isinstance(provider, str))
    )


def _names_in_use(switch: SwitchModel, call: HookLlmCall) -> bool:
    return switch.model == call.model and switch.provider in (None, call.provider)


def _valid_rewrite(rewrite: RewriteLlmCall) -> bool:
    messages, tools = rewrite.messages, rewrite.tools
    if messages is not None and not (
        isinstance(messages, list)
        and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages)
    ):
        return False
    return tools is None or (
        isinstance(tools, list) and all(isinstance(t, ToolSpec) for t in tools)
    )


def _hook_name(hook: Any) -> str:
    return getattr(hook, "__qualname__", type(hook).__name__)
