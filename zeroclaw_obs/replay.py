"""Replay: build the runtime a scenario describes and run its turn.

This is the seam between the file format (`scenario.py`) and the engine (`turn/`): it turns
scripted tools, Python tools, MCP servers and the provider section into a
`ResolvedAgentExecution` and a `TurnState`, and arms `cancel_after_ms` as a timer on the turn's
cancel scope. The CLI, the demo, the benchmarks and the end-to-end tests all run turns through
here.

The provider is built by kind (`build_provider`): the scripted one replays `responses`; a real
one (`openai`, `anthropic`) is imported only when built, so a scripted run (`demo`) never
imports httpx. Its key is read from the environment variable `api_key_env` names
(`resolve_api_key`), never from the file. Whoever runs the turn awaits `provider.aclose()`.
The execution's model-switch callback serves the file's `provider.models`
(`model_targets.ModelTargets`); `Replay.run` closes the providers it built.

Tool assembly is wired here too: the registry carries the file's `ToolPolicy` (bundles, risk
profile) narrowed by the run's `allowed_tools`, the approval config is the risk profile's
(`profile_approval`), a real MCP server no granted bundle can reach is never started, and a
bundle pattern or an allow-list entry that matches nothing is bad input
(`assembly.check_tool_patterns`: before the run for the tools the file and Python give, again
once real servers have listed theirs). The file's sub-agents (`agents:`) join the execution
through `subagents.build_subagents`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import random
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .approval import ApprovalManager, AuditLog, TerminalPrompter
from .assembly import check_tool_patterns, checked_agent_tools, reachable_real_servers
from .config import build_redactor
from .errors import BadInputError, ConfigError
from .model_targets import ModelTargets
from .observability.observer import NoopObserver, Observer
from .providers.base import Provider
from .providers.scripted import ScriptedProvider
from .receipts import ReceiptGenerator
from .record import TurnRecorder
from .redaction import Redactor
from .scenario import Scenario, ScenarioProvider, ScenarioResponse
from .subagents import build_subagents
from .tools.base import Tool
from .tools.deferred import ActivatedToolSet
from .tools.mcp import McpServer
from .tools.registry import profile_approval
from .turn.context import ResolvedAgentExecution, TurnState
from .turn.events import TurnEventLog
from .turn.hooks import Hooks
from .turn.loop import TurnOutcome, run_tool_call_loop

__all__ = [
    "Replay",
    "build_provider",
    "build_replay",
    "connected_mcp_servers",
    "resolve_api_key",
]


@dataclass(kw_only=True)
class Replay:
    """A scenario's runtime, ready to run once."""

    scenario: Scenario
    execution: ResolvedAgentExecution
    state: TurnState
    provider: Provider
    """The provider the turn talks to (wrapped by the recorder when recording)."""
    events: TurnEventLog
    audit: AuditLog
    extra_tools: list[Tool] = field(default_factory=list)
    recorder: TurnRecorder | None = None
    """Set when the run is recorded (`--record`): see `recording()`."""
    source: str = "scenario"
    """The scenario's file name, for error lines."""
    allowed_tools: tuple[str, ...] | None = None
    """The run's narrowing (`run --allow-tool`), None for none; the registry already carries
    it, this copy is for `check_tool_patterns`."""
    allowed_tools_field: str = "allowed_tools"
    """How an error names the narrowing (`--allow-tool` on the command line)."""
    model_targets: ModelTargets | None = None
    """The execution's `switch_model` callback (`provider.models`); `run` closes what it
    built when the turn ends, a server when it stops."""

    def check_tool_patterns(self, pending: Sequence[str] = ()) -> None:
        """`check_tool_patterns` on this replay's tools (the registry and the MCP servers
        connected so far).

        Raises:
            ConfigError: a pattern or an entry matches nothing.
        """
        check_tool_patterns(
            self.scenario,
            list(self.execution.registry),
            self.execution.mcp_servers,
            source=self.source,
            allowed_tools=self.allowed_tools,
            allowed_tools_field=self.allowed_tools_field,
            pending=pending,
        )

    def recording(self) -> dict[str, Any]:
        """What the run saw, as scenario data that replays it offline (`record.py`).

        Raises:
            RuntimeError: the replay was built without a recorder.
        """
        if self.recorder is None:
            raise RuntimeError("this replay was built without a recorder")
        provider = self.provider
        return self.recorder.scenario(
            self.scenario,
            user_message=self.state.user_message,
            provider=provider,
            tools=list(self.execution.registry),
            servers=self.execution.mcp_servers,
            policy=self.execution.registry.policy,
        )

    async def run(self) -> TurnOutcome:
        """Run the turn; `cancel_after_ms` cancels it that long after it starts.

        Real MCP servers (stdio, streamable HTTP) are connected first and closed when the turn
        ends, whatever way it ends (`connected_mcp_servers`).

        Raises:
            ScenarioExhaustedError: the script has fewer responses than the turn asked for.
            BadInputError: a real MCP server could not be started or initialized in time.
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
            async with connected_mcp_servers(self) as servers:
                self.execution.mcp_servers.extend(servers)
                if servers:
                    self.check_tool_patterns()
                if self.recorder is not None:
                    # `--record` keeps real servers' results as scripted MCP tools.
                    self.recorder.track_tools([], servers)
                return await run_tool_call_loop(self.execution, self.state)
        finally:
            if timer is not None:
                timer.cancel()
            if self.model_targets is not None:
                await self.model_targets.aclose()


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
    env: Mapping[str, str] | None = None,
    recorder: TurnRecorder | None = None,
    conversation_id: str | None = None,
    allowed_tools: Sequence[str] | None = None,
    allowed_tools_field: str = "allowed_tools",
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
        env: where a real provider's key variable is read (`os.environ` when None).
        recorder: records the run (`--record`): wraps the provider, registers an
            after-hook on `hooks` for tool results, and records approval answers.
        conversation_id: the conversation the turn continues (`run --conversation-id`):
            spans name it as `gen_ai.conversation.id` / `session.id` instead of the turn.
        allowed_tools: narrow this run to the tools these names or patterns match
            (`run --allow-tool`); it only removes tools (`ToolPolicy.narrowed`).
        allowed_tools_field: how an error names `allowed_tools`.

    Raises:
        ConfigError: a Python tool cannot be imported, a real provider's key variable
            is not set, or a bundle pattern or `allowed_tools` entry matches nothing (one line
            naming the file and the field).
    """
    policy = scenario.tool_policy()
    config = scenario.config
    approval_config = profile_approval(config.approval, policy.profile)
    if approval_config is not config.approval:
        config = config.model_copy(update={"approval": approval_config})
    # Before the provider is built: a refused file must leave no client to close.
    registry, servers = checked_agent_tools(
        scenario,
        policy,
        source=source,
        extra=extra_tools or [],
        allowed_tools=allowed_tools,
        allowed_tools_field=allowed_tools_field,
    )
    if allowed_tools is not None:
        registry = registry.narrowed(allowed_tools)
    provider = build_provider(scenario.provider, scenario.responses, source=source, env=env)
    targets = ModelTargets(
        scenario.provider,
        build=functools.partial(build_provider, source=source, env=env),
        wrap=None if recorder is None else recorder.provider,
    )
    audit = audit if audit is not None else AuditLog()
    terminal = terminal or TerminalPrompter()
    hooks = hooks if hooks is not None else Hooks()
    if recorder is None:
        approval = ApprovalManager(config.approval, audit=audit, terminal=terminal)
    else:
        provider = recorder.provider(provider)
        approval = recorder.approvals(config.approval, audit=audit, terminal=terminal)
        hooks.add_after(recorder.record_tool_result)
        recorder.track_tools(list(registry), servers)
    targets.primary = provider
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
        hooks=hooks,
        subagents=build_subagents(
            scenario,
            build_provider=build_provider,
            check_key=resolve_api_key,
            source=source,
            env=env,
            wrap=None if recorder is None else recorder.provider,
        ),
        system_prompt=scenario.system_prompt,
        switch_model=targets,
    )
    state = TurnState(
        user_message=user_message or scenario.user,
        channel=scenario.agent.channel,
        events=events,
        conversation_id=conversation_id,
    )
    return Replay(
        scenario=scenario,
        execution=execution,
        state=state,
        provider=provider,
        events=events,
        audit=audit,
        extra_tools=list(extra_tools or []),
        recorder=recorder,
        source=source,
        allowed_tools=None if allowed_tools is None else tuple(allowed_tools),
        allowed_tools_field=allowed_tools_field,
        model_targets=targets,
    )


def build_provider(
    settings: ScenarioProvider,
    responses: Sequence[ScenarioResponse] = (),
    *,
    source: str = "scenario",
    env: Mapping[str, str] | None = None,
) -> Provider:
    """The provider a scenario's `provider:` section describes.

    `scripted` replays `responses`; `openai` and `anthropic` build the real provider (imported
    here, so nothing on a scripted path imports httpx), with the key from `resolve_api_key`.

    Raises:
        ConfigError: the key variable a real provider needs is not set.
    """
    if not settings.real:
        return ScriptedProvider(
            responses,
            native_tools=settings.native_tools,
            name=settings.name,
            model=settings.model or "scripted-model",
            source=source,
        )
    key = resolve_api_key(settings, source=source, env=env)
    options: dict[str, Any] = {
        "base_url": settings.url,
        "model": settings.model,
        "api_key": key,
        "native_tools": settings.native_tools,
        "stream": settings.stream,
        "timeout_s": settings.timeout_s,
        "max_retries": settings.max_retries,
        "name": settings.name,
    }
    if settings.max_tokens is not None:
        options["max_tokens"] = settings.max_tokens
    if settings.kind == "anthropic":
        from .providers.anthropic import AnthropicProvider

        return AnthropicProvider(**options)
    from .providers.openai import OpenAIProvider

    return OpenAIProvider(**options)


def resolve_api_key(
    settings: ScenarioProvider, *, source: str = "scenario", env: Mapping[str, str] | None = None
) -> str | None:
    """The key a real provider sends, read from the variable `api_key_env` names.

    An empty variable counts as unset. With `api_key_env` not given, the kind's default
    variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) is read, and a loopback `base_url` may
    go without it (a local server without auth: no auth header is sent). `api_key_env: null`
    never sends a key.

    Returns:
        The key, or None when no key is sent.

    Raises:
        ConfigError: the variable is required and unset; the line names the variable (shown
            through the default redactor, in case a key was written where its name belongs),
            never a value.
    """
    variable = settings.key_variable
    if variable is None:
        return None
    value = (os.environ if env is None else env).get(variable)
    if value:
        return value
    if not settings.key_required:
        return None
    shown = Redactor().redact_text(variable)
    raise ConfigError(
        f"{source}: provider.api_key_env: the environment variable {shown} is not set "
        f"(it holds the {settings.kind} key)"
    )


@contextlib.asynccontextmanager
async def connected_mcp_servers(replay: Replay) -> AsyncIterator[list[McpServer]]:
    """Connect the scenario's real MCP servers for one run; close them when it ends.

    Each connection is started and closed by the task that runs the turn (the SDK's cancel
    scopes need that), stderr lines go to the `zeroclaw_obs.mcp` logger redacted, and a server
    lost mid-run is reported there once (its tools then answer
    `Error: MCP server '{name}' is not available`). The SDK is imported only when a real
    server exists, so scripted runs and `demo` never load it.

    TODO(#12): server mode keeps connections for the process and calls `ensure_connected()`
    before each turn; `tools/list_changed` refresh before each provider request; MCP span
    attributes and progress events.

    Raises:
        BadInputError: a server could not be started or initialized within its `timeout_s`
            (one line naming the file, the entry and the problem, never its command or URL).
    """
    # A server no granted bundle can reach offers the agent nothing: it is never started.
    reachable = set(reachable_real_servers(replay.scenario, replay.execution.registry.policy))
    real = [
        (index, spec)
        for index, spec in enumerate(replay.scenario.mcp_servers)
        if spec.name in reachable
    ]
    if not real:
        yield []
        return
    from .tools.mcp_client import HttpParams, McpConnectError, StdioParams
    from .tools.mcp_session import McpConnection

    redactor = replay.execution.redactor
    connections: list[McpConnection] = []
    servers: list[McpServer] = []
    try:
        for index, spec in real:
            params: StdioParams | HttpParams
            try:
                if spec.transport == "stdio":
                    env = spec.process_env(os.environ)
                    params = StdioParams(command=spec.command, args=list(spec.args), env=env)
                else:
                    params = HttpParams(url=spec.url, headers=spec.http_headers(os.environ))
            except ValueError as exc:
                raise BadInputError(f"{replay.source}: mcp_servers.{index}: {exc}") from None
            connection = McpConnection(
                spec.name, params, redactor=redactor, connect_timeout_s=spec.timeout_s
            )
            connections.append(connection)
            try:
                with _unsampled_spans():
                    await connection.start()
                    servers.append(
                        await McpServer.connect(
                            connection, deferred=spec.deferred, tool_timeout_s=spec.call_timeout_s
                        )
                    )
            except McpConnectError:
                raise BadInputError(
                    f"{replay.source}: mcp_servers.{index}: the server could not be started "
                    f"or did not initialize within {spec.timeout_s:g}s"
                ) from None
        yield servers
    finally:
        for connection in reversed(connections):
            await connection.aclose()


def _unsampled_spans() -> contextlib.AbstractContextManager[Any]:
    """A context in which spans that code starts are children of an unsampled parent.

    The `mcp` SDK starts its own spans through the global tracer provider. Its connection's
    owner task (and the `initialize` and `tools/list` it sends) is created here, outside any
    turn: without this, an application that installs a global provider would get those spans
    as orphan root traces. Under an unsampled parent the default `ParentBased` sampler drops
    them; a call's own SDK spans run in the call's task and nest under its `execute_tool` span.
    """
    from opentelemetry import trace

    parent = trace.SpanContext(
        random.getrandbits(128) or 1,
        random.getrandbits(64) or 1,
        is_remote=False,
        trace_flags=trace.TraceFlags(trace.TraceFlags.DEFAULT),
    )
    return trace.use_span(trace.NonRecordingSpan(parent), end_on_exit=False)
