"""`before_tool_call` and `after_tool_call` hooks.

A before-hook sees each call in the model's order and may let it continue, cancel it (its slot
reads `Cancelled by hook: {reason}`) or rewrite its name and arguments for the rest of the
pipeline. Hooks run by descending priority; equal priorities keep registration order.

Risky part: hooks are user code on the turn's path. A before-hook that raises cancels the call
(fail closed: a policy hook that crashed must not let the call through); an after-hook that
raises is logged by type and ignored, because the call already ran.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..tools.base import ToolResult

__all__ = [
    "AfterToolCall",
    "BeforeToolCall",
    "CancelCall",
    "Continue",
    "HookCall",
    "HookDecision",
    "Hooks",
    "RewriteCall",
]

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
    """Cancel the call; the model reads `Cancelled by hook: {reason}`."""

    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class RewriteCall:
    """Replace the name and/or arguments for the rest of the pipeline."""

    name: str | None = None
    arguments: dict[str, Any] | None = None


HookDecision = Continue | CancelCall | RewriteCall | None
BeforeToolCall = Callable[[HookCall], HookDecision | Awaitable[HookDecision]]
AfterToolCall = Callable[[HookCall, ToolResult], Awaitable[None] | None]


@dataclass(order=True, frozen=True, slots=True)
class _Registered:
    sort_key: tuple[int, int]
    hook: Any = field(compare=False)


class Hooks:
    """The hooks of one agent, kept sorted once at registration."""

    def __init__(self) -> None:
        self._before: list[_Registered] = []
        self._after: list[_Registered] = []
        self._count = 0

    def __bool__(self) -> bool:
        return bool(self._before or self._after)

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


def _hook_name(hook: Any) -> str:
    return getattr(hook, "__qualname__", type(hook).__name__)
