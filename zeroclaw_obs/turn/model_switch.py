"""Model switch: a turn goes on with another provider/model, its history and budget kept.

Who may ask:
- **A tool, while it runs**: `request_model_switch(model, provider=None)` reaches the running
  turn's `TurnModelSwitch` through the context the tool runs in (`current_model_switch`; the
  loop binds it for the turn, nested turns bind their own). The request is resolved at once
  and waits on the turn state; at the top of the next iteration the loop stops with it and
  `run_tool_call_loop` continues the turn on the new provider. Several requests before then:
  the last one wins; a request for the model in use withdraws a waiting one.
- **A `before_llm_call` hook**: `hooks.SwitchModel(model, provider=None)`. The request the hook
  saw is not sent; the loop stops with the switch and the same iteration is sent on the new
  model (the hooks run again and see it; a second switch of that one request is ignored).

Who resolves: the agent's `ResolvedAgentExecution.switch_model` callback,
`(ModelSwitch, current provider) -> Provider`. The entry point supplies it and owns what it
builds (`model_targets.ModelTargets` serves an agent file's `provider.models`); None refuses
every request.

Continuing: the turn's root span (`invoke_agent`) stays one span and keeps the model the turn
started on; each `chat` span names the model it asked (`gen_ai.request.model`); the switch is
a `ModelSwitched` event (a `zeroclaw.model.switch` span event on the root, a `model_switched`
log line), names redacted like every operator name. The iteration budget goes on counting
across switches: a switch never resets it.

An unknown provider or model is refused back to whoever asked and never ends the turn on
its own: `request_model_switch` raises `ModelSwitchRefused` in the tool (let through, the
slot reads `Error executing {tool}: model switch refused: unknown model`; a tool may catch it
and answer its own way); a hook's refused request ends the turn as a hook's cancel does
(fail closed: `LLM call cancelled by hook: model switch refused: unknown model`).

Risky part: a sync tool runs in a worker thread, so `request` may run there. It only calls
the callback and replaces one attribute; a callback that builds and caches providers must
tolerate being called from a worker thread (`ModelTargets` locks its cache).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..observability.events import ModelSwitched, ModelSwitchSource

if TYPE_CHECKING:
    from ..providers.base import Provider
    from .context import ResolvedAgentExecution, TurnState

__all__ = [
    "ModelSwitch",
    "ModelSwitchCallback",
    "ModelSwitchRefused",
    "ModelSwitchRequested",
    "PendingModelSwitch",
    "TurnModelSwitch",
    "continue_on",
    "current_model_switch",
    "model_switch_scope",
    "request_model_switch",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSwitch:
    """A request to continue the turn on another model."""

    model: str
    """The model to ask from now on (a name the callback knows)."""
    provider: str | None = None
    """The provider to ask it from, by name; None: the provider in use."""


ModelSwitchCallback = Callable[[ModelSwitch, "Provider"], "Provider"]
"""Resolves a request into the provider that serves it, given the provider in use.

Returns the provider (it may return the one in use, or one it built before). Raises
`ModelSwitchRefused` for a provider or model it does not know. Sync, and called on the
turn's path (from a sync tool's worker thread too): a lookup, not a network round trip.
"""


class ModelSwitchRefused(ValueError):
    """Raised by a `ModelSwitchCallback` (and so by `request_model_switch`) for a provider or
    model it does not serve. The message reaches the model (redacted): fixed words that name
    what was wrong, never the name that was asked."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"model switch refused: {reason}")
        self.reason = reason


class ModelSwitchRequested(Exception):
    """Control flow inside the turn: a `before_llm_call` hook switched the request it saw.

    Raised by the provider-request step before anything was sent; the loop catches it, takes
    the waiting switch and sends the same iteration on the new model. It never leaves
    `run_tool_call_loop`.
    """


@dataclass(frozen=True, kw_only=True, slots=True)
class PendingModelSwitch:
    """A resolved request waiting for the loop: what was asked, who asked, what serves it."""

    request: ModelSwitch
    provider: Provider
    source: ModelSwitchSource


class TurnModelSwitch:
    """One turn's side of model switching: the request waiting for the next iteration.

    Lives on the turn's `TurnState` (`model_switch`). The loop binds it to the execution in
    use (`bind`, again after each switch) and takes the waiting request at the top of each
    iteration (`take`).
    """

    __slots__ = ("_execution", "hook_switched_at", "pending")

    def __init__(self) -> None:
        self._execution: ResolvedAgentExecution | None = None
        self.pending: PendingModelSwitch | None = None
        """The resolved request the next iteration starts with; None: no switch."""
        self.hook_switched_at = 0
        """The iteration a hook last switched (its request is sent again on the new model,
        where a second switch is ignored); 0: none."""

    def bind(self, execution: ResolvedAgentExecution) -> None:
        """Resolve requests against `execution` (its provider and `switch_model` callback)."""
        self._execution = execution

    def request(self, switch: ModelSwitch, *, source: ModelSwitchSource) -> bool:
        """Resolve `switch` and keep it for the next iteration (the last request wins).

        Returns:
            True when a switch now waits; False when it names the model in use (a waiting
            request, if any, is withdrawn: the turn stays where it is).

        Raises:
            ModelSwitchRefused: no callback, or it does not know the provider or model.
            RuntimeError: the turn is not running (nothing is bound).
        """
        execution = self._execution
        if execution is None:
            raise RuntimeError("model switch: no turn is running")
        if not isinstance(switch.model, str) or not switch.model.strip():
            raise ModelSwitchRefused("model must be a non-empty string")
        if switch.provider is not None and not isinstance(switch.provider, str):
            raise ModelSwitchRefused("provider must be a string")
        current = execution.provider
        if _names(switch, current):
            self.pending = None
            return False
        if execution.switch_model is None:
            raise ModelSwitchRefused("model switching is not configured for this agent")
        provider = execution.switch_model(switch, current)
        if provider is current:
            self.pending = None
            return False
        self.pending = PendingModelSwitch(request=switch, provider=provider, source=source)
        return True

    def take(self) -> PendingModelSwitch | None:
        """The waiting switch, if any; nothing waits afterwards."""
        pending, self.pending = self.pending, None
        return pending


def _names(switch: ModelSwitch, provider: Provider) -> bool:
    """Whether `switch` names `provider` and the model it asks."""
    return switch.model == provider.model and switch.provider in (None, provider.name)


_current: ContextVar[TurnModelSwitch | None] = ContextVar("zeroclaw_model_switch", default=None)
"""The model switch of the turn running in this context (a tool's call runs in a copy)."""


def current_model_switch() -> TurnModelSwitch | None:
    """The running turn's `TurnModelSwitch`, or None outside a turn."""
    return _current.get()


@contextmanager
def model_switch_scope(switch: TurnModelSwitch) -> Iterator[None]:
    """Make `switch` the current one for the block (the loop, around one turn)."""
    token = _current.set(switch)
    try:
        yield
    finally:
        _current.reset(token)


def request_model_switch(model: str, *, provider: str | None = None) -> bool:
    """Ask the running turn to continue on `model` (of `provider`, default: the one in use)
    from its next iteration. For tools; call it while the tool runs.

    Returns:
        True when the switch will happen; False when `model` is already in use.

    Raises:
        ModelSwitchRefused: the agent does not serve that provider or model (no switch).
        RuntimeError: called outside a running turn.
    """
    switch = current_model_switch()
    if switch is None:
        raise RuntimeError("request_model_switch: no turn is running in this context")
    return switch.request(
        ModelSwitch(model=model, provider=provider), source=ModelSwitchSource.TOOL
    )


def continue_on(
    execution: ResolvedAgentExecution,
    state: TurnState,
    pending: PendingModelSwitch,
    *,
    iteration: int,
) -> ResolvedAgentExecution:
    """The execution the turn goes on with after `pending`, and the switch reported.

    The agent's execution is shared by its turns and stays as it is: the turn continues on a
    copy with the new provider (and no `config.model` override, so every surface names the
    model the new provider asks). Everything else (registry, approval, observer, hooks,
    callback) is the same object.

    Args:
        iteration: the first provider call made on the new model.
    """
    config = execution.config
    if config.model is not None:
        config = config.model_copy(update={"model": None})
    switched = dataclasses.replace(execution, provider=pending.provider, config=config)
    before, after = execution.shown, switched.shown
    assert state.correlation is not None
    execution.observer.on_event(
        ModelSwitched(
            correlation=state.correlation,
            iteration=iteration,
            from_provider=before.provider,
            from_model=before.model,
            to_provider=after.provider,
            to_model=after.model,
            source=pending.source,
            time_ns=time.time_ns(),
        )
    )
    state.model_switch.bind(switched)
    return switched
