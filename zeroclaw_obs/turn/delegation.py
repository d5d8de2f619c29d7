"""Delegation: a sub-agent runs the task of a `delegate` call as a nested turn.

The agent file's `agents:` are the sub-agents (`Subagent`); the loop offers `delegate`
(`tools/delegate.py`) when there is one (`turn_tools`), bound to a `Delegation` for the turn.
A call runs the named sub-agent through the same `run_tool_call_loop`, with:

- **tools**: its bundles inside its parent's policy (`ToolPolicy.for_subagent`): never a tool
  the parent's bundles, risk profile, narrowing or `excluded_tools` leave out. Deferred tools:
  only those the parent has activated and the sub-agent's policy admits
  (`ActivatedToolSet.granted`), with no `tool_search` of its own, so it never reaches more
  deferred tools than its parent had when it delegated. No `delegate` either: a sub-agent
  does not delegate further.
- **approval**: the parent's manager (its scripted answers, surfaces, audit log and session
  allowlist) under the sub-agent's risk profile as a ceiling (`subagent_approval`); a
  profile never loosens the parent's policy.
- **budget**: the parent's `IterationBudget`; each of its iterations reserves one.
- **cancellation**: a scope linked to the parent's; cancelling the parent interrupts the
  sub-agent's calls, and the `delegate` call itself is then `interrupted`.
- **telemetry**: the parent's observer, redactor and receipt generator; the nested turn's
  events carry `parent_agent_alias`, and its `invoke_agent` span starts inside the `delegate`
  call's tool scope, so its parent is the `execute_tool delegate` span (same trace).
- **conversation**: its own history (its system prompt, then the task as the user message),
  on channel `agent`, in the parent's conversation. Its TurnEvents are not streamed: a client
  sees the `delegate` card, whose result is the sub-agent's final text.

Risky part: cancellation when the nested turn runs in the parent's own task (sequential
dispatch). Both scopes cancel that one task, and the nested turn absorbs the request while it
records its interrupted calls; the runner then raises `CancelledError` again, which the
dispatcher reads as the parent's cancellation (it was requested) and records the `delegate`
slot as interrupted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..config import ApprovalConfig
from ..observability.events import TurnOutcomeKind
from ..providers.base import Provider
from ..tools.base import Tool, ToolResult
from ..tools.delegate import DelegateTool
from ..tools.registry import RiskProfile, ToolBundle, ToolRegistry, profile_approval
from .context import ResolvedAgentExecution, TurnState
from .events import TurnEvent

if TYPE_CHECKING:
    from .loop import TurnOutcome

__all__ = ["SUBAGENT_CHANNEL", "Delegation", "Subagent", "subagent_approval", "turn_tools"]

SUBAGENT_CHANNEL = "agent"
"""The channel of a delegated turn: an agent asked, not a person (no delivery defaults)."""

TurnRunner = Callable[[ResolvedAgentExecution, TurnState], Awaitable["TurnOutcome"]]
"""Runs one turn to its end: `run_tool_call_loop`."""


@dataclass(frozen=True, kw_only=True)
class Subagent:
    """A sub-agent of the agent file (`agents: {name: …}`), as the runtime holds it."""

    name: str
    """Its key in the file: the `agent` argument of `delegate`, its `gen_ai.agent.name`."""

    description: str = ""
    """What it is for; listed in `delegate`'s description so the model can choose."""

    system_prompt: str | None = None
    """Its own operator prompt (the parent's is not inherited)."""

    bundles: tuple[ToolBundle, ...] | None = None
    """The bundles it is granted, inside its parent's tools; None: every tool the parent has."""

    risk_profile: RiskProfile | None = None
    """A ceiling on the parent's approval policy and, for `read_only`, on its tools."""

    provider: Callable[[], Provider] | None = None
    """Builds its own provider for one delegation (closed when the nested turn ends); None:
    the delegating agent's provider."""


def subagent_approval(parent: ApprovalConfig, profile: RiskProfile | None) -> ApprovalConfig:
    """The approval policy a sub-agent runs under: its parent's, lowered by its profile.

    `read_only` and `supervised` lower the policy as they do for an agent
    (`profile_approval`); `full` (or no profile) keeps the parent's, since it would add `*`
    to `auto_approve` and so loosen it.

    Returns:
        `parent` itself when nothing changes, else a copy.
    """
    if profile is None or profile is RiskProfile.FULL:
        return parent
    return profile_approval(parent, profile)


def turn_tools(execution: ResolvedAgentExecution, state: TurnState, run: TurnRunner) -> list[Tool]:
    """The tools a turn provides itself: `delegate`, bound to this turn, when the agent has
    sub-agents; else none.

    Args:
        execution: the agent running the turn.
        state: the turn.
        run: runs a nested turn (`run_tool_call_loop`; passed in, as the loop imports this).
    """
    if not execution.subagents:
        return []
    agents = {name: agent.description for name, agent in execution.subagents.items()}
    return [DelegateTool(agents, Delegation(execution, state, run))]


def _dropped(event: TurnEvent) -> None:
    """The nested turn's TurnEvents: its answer reaches the client as the `delegate` result."""


class Delegation:
    """Runs sub-agents for one turn: the `DelegateTool`'s runner.

    Args:
        execution: the delegating agent.
        state: the delegating turn (its budget, cancellation, correlation).
        run: runs the nested turn.
    """

    def __init__(
        self, execution: ResolvedAgentExecution, state: TurnState, run: TurnRunner
    ) -> None:
        self._execution = execution
        self._state = state
        self._run = run

    async def __call__(self, name: str, task: str) -> ToolResult:
        """Run sub-agent `name` on `task`; its final text is the result.

        A final answer, or a graceful summary at the iteration cap, is a successful result;
        any other end (error at the cap, an abort, a provider error) a failed one with the
        nested turn's text.

        Raises:
            asyncio.CancelledError: the delegating turn was cancelled (before or while the
                sub-agent ran); the dispatcher records the call as interrupted.
            ScenarioExhaustedError: a scripted sub-agent ran out of responses (bad input).
        """
        parent, state = self._execution, self._state
        if state.cancellation.requested:
            raise asyncio.CancelledError
        subagent = parent.subagents[name]
        own = subagent.provider
        with state.cancellation.linked() as cancellation:
            provider = own() if own is not None else parent.provider
            try:
                nested = TurnState(
                    user_message=task,
                    channel=SUBAGENT_CHANNEL,
                    conversation_id=state.conversation_id,
                    cancellation=cancellation,
                    events=_dropped,
                    budget=state.budget,
                    parent_agent_alias=parent.shown.alias,
                    top_turn_id=state.root_turn_id,
                )
                outcome = await self._run(self._nested(subagent, provider), nested)
            finally:
                if own is not None:
                    await provider.aclose()
        if outcome.kind is TurnOutcomeKind.CANCELLED and state.cancellation.requested:
            raise asyncio.CancelledError
        return ToolResult.ok(outcome.text) if outcome.ok else ToolResult.fail(outcome.text)

    def _nested(self, subagent: Subagent, provider: Provider) -> ResolvedAgentExecution:
        """The sub-agent's execution for one delegation."""
        parent = self._execution
        policy = parent.registry.policy.for_subagent(subagent.bundles, subagent.risk_profile)
        config, manager = parent.config, parent.approval
        # The manager's policy is the one in force (a server conversation's, for example).
        approval = subagent_approval(manager.config, subagent.risk_profile)
        updates: dict[str, object] = {}
        if approval is not manager.config:
            manager = manager.under(approval)
            updates["approval"] = approval
        if subagent.provider is not None and config.model is not None:
            updates["model"] = None  # the parent's model override is not the sub-agent's
        if updates:
            config = config.model_copy(update=updates)
        granted = parent.activated.granted(
            item.name for item in parent.activated.tools() if policy.admits(item)
        )
        return ResolvedAgentExecution(
            alias=subagent.name,
            provider=provider,
            registry=ToolRegistry(parent.registry, scope=subagent.name, policy=policy),
            # Deferred servers stay out: the granted activations are all it gets of them.
            mcp_servers=[server for server in parent.mcp_servers if not server.deferred],
            activated=granted,
            approval=manager,
            config=config,
            redactor=parent.redactor,
            observer=parent.observer,
            receipts=parent.receipts,
            hooks=parent.hooks,
            system_prompt=subagent.system_prompt,
            retry=parent.retry,
        )
