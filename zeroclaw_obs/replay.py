"""Replay: build the runtime a scenario describes and run its turn.

This is the seam between the file format (`scenario.py`) and the engine (`turn/`): it turns
scripted tools, MCP servers and responses into a `ResolvedAgentExecution` and a `TurnState`,
and arms `cancel_after_ms` as a timer on the turn's cancel scope. The CLI, the demo, the
benchmarks and the end-to-end tests all run turns through here.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from .approval import ApprovalManager, AuditLog, TerminalPrompter
from .config import build_redactor
from .observability.observer import NoopObserver, Observer
from .providers.scripted import ScriptedProvider
from .receipts import ReceiptGenerator
from .redaction import Redactor
from .scenario import Scenario
from .tools.base import Provenance, Tool
from .tools.deferred import ActivatedToolSet
from .tools.mcp import McpServer
from .tools.registry import ToolRegistry
from .tools.scripted import ScriptedTool
from .turn.context import ResolvedAgentExecution, TurnState
from .turn.events import TurnEventLog
from .turn.hooks import Hooks
from .turn.loop import TurnOutcome, run_tool_call_loop

__all__ = ["Replay", "build_replay"]


@dataclass(kw_only=True)
class Replay:
    """A scenario's runtime, ready to run once."""

    scenario: Scenario
    execution: ResolvedAgentExecution
    state: TurnState
    provider: ScriptedProvider
    events: TurnEventLog
    audit: AuditLog
    extra_tools: list[Tool] = field(default_factory=list)

    async def run(self) -> TurnOutcome:
        """Run the turn; `cancel_after_ms` cancels it that long after it starts.

        Raises:
            ScenarioExhaustedError: the script has fewer responses than the turn asked for.
        """
        timer = None
        if self.scenario.cancel_after_ms == 0:
            self.state.cancellation.cancel()  # cancelled before it starts: no provider call
        elif self.scenario.cancel_after_ms is not None:
            loop = asyncio.get_running_loop()
            timer = loop.call_later(
                self.scenario.cancel_after_ms / 1000, self.state.cancellation.cancel
            )
        try:
            return await run_tool_call_loop(self.execution, self.state)
        finally:
            if timer is not None:
                timer.cancel()


def build_replay(
    scenario: Scenario,
    *,
    source: str = "scenario",
    user_message: str | None = None,
    observer: Observer | None = None,
    redactor: Redactor | None = None,
    receipt_key: bytes | None = None,
    terminal: TerminalPrompter | None = None,
    hooks: Hooks | None = None,
    extra_tools: list[Tool] | None = None,
    audit: AuditLog | None = None,
) -> Replay:
    """Build the runtime of one scenario.

    Args:
        scenario: the validated scenario.
        source: the file name, used in error messages.
        user_message: overrides the scenario's `user`.
        observer: telemetry; a no-op by default.
        redactor: the runtime's one redactor; built from `config.redaction` when None.
        receipt_key: the operator's 32-byte key; a fresh random key per turn when None.
        terminal: the interactive prompt; None builds one on stdin/stderr.
        hooks: before/after tool-call hooks.
        extra_tools: programmatic tools registered beside the scripted ones.
        audit: where approval decisions go (e.g. `AuditLog.streaming_to` a file); a fresh
            in-memory log when None.
    """
    config = scenario.config
    registry = ToolRegistry(scope=scenario.agent.alias)
    for spec in scenario.tools:
        registry.register(ScriptedTool(spec))
    for tool in extra_tools or []:
        registry.register(tool)
    servers = [
        McpServer(
            name=server.name,
            tools=[ScriptedTool(t, provenance=Provenance.EXTENSION) for t in server.tools],
            deferred=server.deferred,
        )
        for server in scenario.mcp_servers
    ]
    provider = ScriptedProvider(
        scenario.responses,
        native_tools=scenario.provider.native_tools,
        name=scenario.provider.name,
        model=scenario.provider.model,
        source=source,
    )
    audit = audit if audit is not None else AuditLog()
    approval = ApprovalManager(
        config.approval, audit=audit, terminal=terminal or TerminalPrompter()
    )
    events = TurnEventLog()
    execution = ResolvedAgentExecution(
        alias=scenario.agent.alias,
        provider=provider,
        registry=registry,
        mcp_servers=servers,
        activated=ActivatedToolSet(),
        approval=approval,
        config=config,
        redactor=redactor or build_redactor(config.redaction, source),
        observer=observer or NoopObserver(),
        receipts=ReceiptGenerator(receipt_key) if config.receipts.enabled else None,
        hooks=hooks or Hooks(),
        system_prompt=scenario.system_prompt,
    )
    state = TurnState(
        user_message=user_message or scenario.user,
        channel=scenario.agent.channel,
        events=events,
    )
    return Replay(
        scenario=scenario,
        execution=execution,
        state=state,
        provider=provider,
        events=events,
        audit=audit,
        extra_tools=list(extra_tools or []),
    )
