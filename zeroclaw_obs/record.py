"""Recording: what one real turn saw, written as a scenario that replays it offline (`--record`).

`replay.py` runs a scenario; this module is its inverse. A `TurnRecorder` is handed to
`build_replay` and listens at three seams, none of them new:

- the provider: `RecordingProvider` wraps the real one and keeps each response (text, native
  tool calls with ids, names and arguments, usage, the answering model, response id and
  finish reasons) in order; a failed call that was retried is dropped, and the failure that
  ended the turn is kept as a last `error:` response, which replay raises again (exit 3);
- the tools: an `after_tool_call` hook keeps each executed call's dispatched arguments and its
  result (`when:` = the arguments, then `output`, `error` or `raise`, matching how the slot text
  was made), so a tool that hung until its timeout replays as that error, at once; a model
  switch the call asked for (`request_model_switch`) is kept on its rule as `switch_model`;
- the approvals: `approvals()` builds an `ApprovalManager` that keeps each answer someone gave
  (`yes`, `no`, `always`, `{replace_with: …}`), in order; runtime denials are not answers, and
  recur on replay because the recorded approval mode never reads a terminal.

`scenario()` then writes the run as a scenario: the user message, the agent, the config as run
(approval answers replaced by the recorded ones, an `interactive` mode made `non_interactive`,
the tools the run's narrowing (`--allow-tool`) removed added to `excluded_tools`, which removes
them the same way), a scripted provider under the real one's name and model (with the file's
`provider.models`, so a recorded switch is allowed again), every registered tool as a scripted
tool with the recorded rules (Python tools included, so replay imports nothing), the MCP servers
likewise, and the responses. `run --scenario FILE` replays it offline to the same result slots
and final answer.

Risky part: a recording is an output like any other, so every payload in it (the user message,
the system prompt, model texts and arguments, call ids, tool outputs, rule arguments,
replacement texts, tool descriptions) passes through the runtime's one `Redactor`. Replay then
meets the redacted values on both sides: a tool rule's `when` is the dispatched arguments
redacted as a native call's arguments are (as a value) and, when that differs, as a
text-protocol call's are (as JSON text), so the call matches its rule either way. Limits: a
tool called twice with the same arguments replays its first result (and its switch) both
times; a redacted argument a tool's schema refuses (a pattern, an enum) fails validation on
replay; in a parallel batch a switch is kept on a call of the same round, not necessarily the
one that asked (the replayed switch is the same).
"""

from __future__ import annotations

import json
from typing import Any

from .approval import ApprovalManager, ApprovalOutcome, ApprovalRequest, AuditLog
from .approval.surfaces import Decision, TerminalPrompter
from .config import ApprovalConfig, ApprovalMode
from .errors import ProviderError
from .providers.base import Provider, ProviderRequest, ProviderResponse
from .redaction import Redactor
from .scenario import Scenario
from .tools.base import Tool, ToolResult
from .tools.delegate import DELEGATE
from .tools.mcp import McpServer
from .tools.registry import ToolPolicy, pattern_matches
from .turn.approval_gate import shown_annotations
from .turn.hooks import HookCall
from .turn.model_switch import PendingModelSwitch, current_model_switch
from .turn.parse import CallIds
from .turn.results import NO_OUTPUT

__all__ = ["RecordingProvider", "TurnRecorder"]


class RecordingProvider(Provider):
    """Wraps a provider and hands each response it returns to a `TurnRecorder`.

    Every property the loop reads (`name`, `model`, `native_tools`, `max_retries`,
    `server_address`, `server_port`) is the wrapped provider's; `aclose` closes it.
    """

    def __init__(self, inner: Provider, recorder: TurnRecorder) -> None:
        self.inner = inner
        """The provider that answers."""
        self._recorder = recorder
        self.name = inner.name
        self.model = inner.model
        self.native_tools = inner.native_tools
        self.max_retries = inner.max_retries
        self.server_address = inner.server_address
        self.server_port = inner.server_port

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """The wrapped provider's response, recorded.

        Raises:
            ProviderError: as the wrapped provider does (kept as the run's last failure).
        """
        try:
            response = await self.inner.complete(request)
        except ProviderError as exc:
            self._recorder.record_failure(exc)
            raise
        self._recorder.record_response(response)
        return response

    async def aclose(self) -> None:
        """Close the wrapped provider."""
        await self.inner.aclose()


class _RecordingApprovals(ApprovalManager):
    """An `ApprovalManager` that reports each outcome to the recorder."""

    def __init__(self, config: ApprovalConfig, recorder: TurnRecorder, **surfaces: Any) -> None:
        super().__init__(config, **surfaces)
        self._recorder = recorder

    async def decide(self, request: ApprovalRequest) -> ApprovalOutcome:
        outcome = await super().decide(request)
        self._recorder.record_approval(outcome)
        return outcome


class TurnRecorder:
    """Collects one turn's responses, tool results and approval answers, redacted.

    Args:
        redactor: the runtime's one redactor; every payload kept passes through it.
    """

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._call_ids = CallIds(redactor)
        self.responses: list[dict[str, Any]] = []
        """The model's responses in order, as scenario `responses` entries."""
        self.rules: dict[str, list[dict[str, Any]]] = {}
        """Registered tool name → its recorded rules, in the order the calls ran."""
        self.answers: list[Any] = []
        """Approval answers in the order they were given, as `config.approval.answers`."""
        self._short: dict[str, str] = {}
        self._failure: dict[str, Any] | None = None
        self._switches: list[PendingModelSwitch] = []
        """The model switches already kept (each request is a new object)."""

    def provider(self, inner: Provider) -> RecordingProvider:
        """`inner`, wrapped so that each response it returns is recorded."""
        return RecordingProvider(inner, self)

    def approvals(
        self,
        config: ApprovalConfig,
        *,
        audit: AuditLog,
        terminal: TerminalPrompter | None,
    ) -> ApprovalManager:
        """An `ApprovalManager` for `config` that records each answer given."""
        return _RecordingApprovals(config, self, audit=audit, terminal=terminal)

    def record_failure(self, exc: ProviderError) -> None:
        """Keep a provider failure; the next response (a successful retry) drops it, so only
        a failure that ended the turn is written (`{error: {error_type, status}}`)."""
        failure: dict[str, Any] = {"error_type": self._redactor.redact_text(exc.error_type)}
        if exc.status is not None:
            failure["status"] = exc.status
        self._failure = {"error": failure}

    def record_response(self, response: ProviderResponse) -> None:
        """Keep one provider response (text, calls, usage), redacted."""
        self._failure = None
        redact = self._redactor
        entry: dict[str, Any] = {}
        if response.text or not response.tool_calls:
            entry["text"] = redact.redact_text(response.text)
        if response.tool_calls:
            entry["tool_calls"] = [
                {
                    "id": self._call_ids.assign(call.id) if call.id else None,
                    "name": call.name,
                    "arguments": redact.redact_value(call.arguments)
                    if isinstance(call.arguments, dict)
                    else redact.redact_text(call.arguments),
                }
                for call in response.tool_calls
            ]
        if response.model:
            entry["model"] = redact.redact_text(response.model)
        if response.response_id:
            entry["response_id"] = redact.redact_text(response.response_id)
        if response.finish_reasons:
            entry["finish_reasons"] = [redact.redact_text(r) for r in response.finish_reasons]
        if response.usage is not None:
            entry["usage"] = {
                "input_tokens": response.usage.input_tokens,
                "output_tokens": response.usage.output_tokens,
            }
        self.responses.append(entry)

    def record_tool_result(self, call: HookCall, result: ToolResult) -> None:
        """Keep one executed call as a rule of its tool (an `after_tool_call` hook).

        The result is the slot's normalised text (`turn/dispatch.py`): output on success,
        `Error: …`, `Error executing {name}: …` or a timeout's `Error: …` on failure; the rule
        is chosen so that replay makes the same text. The first result for given arguments wins.
        """
        name = call.name if call.name in self.rules else self._short.get(call.name)
        if not name:
            return  # a built-in such as tool_search: replay runs it again
        redact = self._redactor
        outcome: dict[str, Any]
        if result.success:
            output = "" if result.output == NO_OUTPUT else redact.redact_text(result.output)
            outcome = {"output": output}
        else:
            text = result.error or result.output
            raised = f"Error executing {call.name}: "
            if text.startswith(raised):
                outcome = {"raise": redact.redact_text(text[len(raised) :])}
            else:
                outcome = {"error": redact.redact_text(text.removeprefix("Error: "))}
        switched = self._switch_requested()
        if switched is not None:
            outcome["switch_model"] = redact.redact_text(switched)
        rules = self.rules[name]
        for when in self._whens(call.arguments):
            if all(existing["when"] != when for existing in rules):
                rules.append({"when": when, **outcome})

    def _switch_requested(self) -> str | None:
        """The model a switch waiting on the running turn names, when it is one this recorder
        has not kept yet: the call whose result is being recorded asked for it (calls of a
        sequential batch run one at a time; in a parallel batch the switch goes to a call of
        the same round, which replays to the same switch)."""
        switch = current_model_switch()
        pending = switch.pending if switch is not None else None
        if pending is None or any(pending is kept for kept in self._switches):
            return None
        self._switches.append(pending)
        return pending.request.model

    def _whens(self, arguments: dict[str, Any]) -> list[Any]:
        """The arguments as replay will dispatch them: redacted as a value (a native call's
        arguments are recorded so), and, when that differs, as the JSON text of a text-protocol
        call is redacted (a secret under a key such as `token` is masked whole by one and by
        its own rule by the other); a rule for each, so either form matches."""
        as_value = self._redactor.redact_value(arguments)
        try:
            as_text = json.loads(
                self._redactor.redact_text(json.dumps(arguments, ensure_ascii=False))
            )
        except (TypeError, ValueError):
            return [as_value]
        return [as_value] if as_text == as_value else [as_value, as_text]

    def record_approval(self, outcome: ApprovalOutcome) -> None:
        """Keep an answer someone gave; a runtime denial is nobody's answer."""
        if outcome.runtime_denied:
            return
        if outcome.decision is Decision.REPLACE:
            self.answers.append(
                {"replace_with": self._redactor.redact_text(outcome.replacement or "")}
            )
        else:
            self.answers.append(str(outcome.decision))

    def track_tools(self, tools: list[Tool], servers: list[McpServer]) -> None:
        """Name the tools whose results are kept: the registry's and the MCP servers'."""
        for item in tools:
            self.rules.setdefault(item.name, [])
        for server in servers:
            for wrapper in server.wrappers():
                self.rules.setdefault(wrapper.name, [])
                short = wrapper.wrapped.name
                # A short name reaches the one activated tool with that suffix (LIFECYCLE §2).
                self._short[short] = wrapper.name if short not in self._short else ""

    def scenario(
        self,
        scenario: Scenario,
        *,
        user_message: str,
        provider: Provider,
        tools: list[Tool],
        servers: list[McpServer],
        policy: ToolPolicy | None = None,
    ) -> dict[str, Any]:
        """The recorded run as scenario data (what `--record` writes as YAML).

        Args:
            scenario: the scenario (or agent file) that ran.
            user_message: the message the turn answered.
            provider: the provider the turn started on (its name, model and protocol are
                kept, and the file's `provider.models`, so a recorded switch replays).
            tools: the registered tools, in registration order.
            servers: the MCP servers.
            policy: the run's tool policy; the tools its narrowing (`--allow-tool`) removed
                are written as `config.excluded_tools`, which removes them the same way.
        """
        redact = self._redactor
        name, model = redact.redact_text(provider.name), redact.redact_text(provider.model)
        data: dict[str, Any] = {
            "description": f"Recorded by zeroclaw-obs run --record ({name}, {model}); "
            "replays offline.",
            "agent": scenario.agent.model_dump(mode="json"),
            "user": redact.redact_text(user_message),
        }
        if scenario.system_prompt:
            data["system_prompt"] = redact.redact_text(scenario.system_prompt)
        data["config"] = self._config(scenario)
        narrowed = _narrowed_away(policy, tools, servers, delegate=bool(scenario.agents))
        if narrowed:
            excluded = data["config"]["excluded_tools"]
            excluded.extend(n for n in narrowed if n not in excluded)
        data["provider"] = {
            "kind": "scripted",
            "name": name,
            "model": model,
            "native_tools": provider.native_tools,
        }
        if scenario.provider.models:
            data["provider"]["models"] = [redact.redact_text(m) for m in scenario.provider.models]
        data["tools"] = [self._tool(item, item.name) for item in tools]
        data["mcp_servers"] = [
            {
                "name": server.name,
                "deferred": server.deferred,
                "tools": [self._tool(w.wrapped, w.name) for w in server.wrappers()],
            }
            for server in servers
        ]
        named = [
            *(scenario.agent.bundles or ()),
            *(key for agent in scenario.agents.values() for key in agent.bundles or ()),
        ]
        if named:
            # The bundles the agent and its sub-agents name, so the recording grants what
            # the run granted.
            data["bundles"] = {
                key: scenario.bundles[key].model_dump(mode="json") for key in dict.fromkeys(named)
            }
        if scenario.agents:
            data["agents"] = self._agents(scenario)
        data["responses"] = [*self.responses, *([self._failure] if self._failure else [])]
        if scenario.cancel_after_ms is not None:
            data["cancel_after_ms"] = scenario.cancel_after_ms
        return data

    def _agents(self, scenario: Scenario) -> dict[str, Any]:
        """The sub-agents without a provider or responses of their own: every provider a run
        used was recorded through this recorder, so their answers sit in `responses` in the
        order the calls happened, and a replayed sub-agent takes them from there."""
        redact = self._redactor.redact_text
        agents: dict[str, Any] = {}
        for name, spec in scenario.agents.items():
            entry: dict[str, Any] = {"description": redact(spec.description)}
            if spec.system_prompt:
                entry["system_prompt"] = redact(spec.system_prompt)
            if spec.bundles is not None:
                entry["bundles"] = list(spec.bundles)
            if spec.risk_profile is not None:
                entry["risk_profile"] = spec.risk_profile.value
            agents[name] = entry
        return agents

    def _config(self, scenario: Scenario) -> dict[str, Any]:
        config = scenario.config.model_dump(mode="json", by_alias=True)
        approval = config["approval"]
        approval["answers"] = self.answers
        if scenario.config.approval.mode is ApprovalMode.INTERACTIVE:
            # Replay must never wait for a terminal: a call nobody answered in the run is
            # denied by the runtime again. Requiring shell approval keeps the requirement
            # rules of interactive mode.
            approval["mode"] = ApprovalMode.NON_INTERACTIVE.value
            approval["non_interactive_shell_requires_approval"] = True
        return config

    def _tool(self, item: Tool, key: str) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "name": item.name,
            "description": self._redactor.redact_text(item.description),
            "parameters": item.parameters_schema(),
            "responses": self.rules.get(key, []),
        }
        if item.read_only:
            entry["read_only"] = True
        annotations = getattr(item, "annotations", None)
        if annotations:
            # Server text like any other payload: only the standard hints, `title` redacted.
            entry["annotations"] = shown_annotations(annotations, self._redactor.redact_text)
        return entry


def _narrowed_away(
    policy: ToolPolicy | None, tools: list[Tool], servers: list[McpServer], *, delegate: bool
) -> list[str]:
    """The names the run's narrowing removed: granted tools (MCP wrappers and `delegate`
    included) that no pattern of some narrowing matches. Written as `excluded_tools`, they
    read `Tool not available in this turn: …` on replay, as the narrowing made them
    (`ToolPolicy.excluded_names` turns a narrowing into exclusions the same way)."""
    if policy is None or not policy.narrowings:
        return []

    def kept(name: str) -> bool:
        return all(
            any(pattern_matches(pattern, name) for pattern in allowed)
            for allowed in policy.narrowings
        )

    granted = [*tools, *(w for server in servers for w in server.wrappers())]
    names = [item.name for item in granted if policy.grants(item) and not kept(item.name)]
    if delegate and not kept(DELEGATE):
        names.append(DELEGATE)
    return list(dict.fromkeys(names))
