"""Scenario files: a scripted turn that replays a model deterministically (DESIGN §4, §7).

This module owns the file format (pydantic models that forbid unknown fields), loading JSON or
YAML with one-line errors that name the file and the field, and building the runtime a scenario
describes. A scenario is the developer's way to replay a recorded turn: the same file gives the
same slots, events and history every time. The same format with a real `provider:` section
(`kind: openai | anthropic`) and no `responses:` is an agent file: the model is real,
everything else (scripted tools, `python_tools`, config, approval) keeps its meaning.

Keys never live in a file: the provider section names the variable that holds the key
(`api_key_env`), and any key-like field written there is refused at load without quoting it.
The same holds for MCP servers (`ScenarioMcpServer`): an entry is scripted (`tools`), stdio
(`command`) or streamable HTTP (`url`); a stdio server's secret-looking variables come from
`env_from`, an HTTP server's headers from `headers_env`, both naming environment variables.
This module only validates them: connecting a server belongs to the wiring.

Tool assembly (`bundles:`, `agent.bundles`, `agent.risk_profile`) is checked here as far as the
file alone can tell (a bundle the agent names exists, a server a bundle names is declared);
whether each bundle pattern matches a tool needs the tools themselves (Python tools, real MCP
servers) and is checked by the wiring (`replay.py`). `Scenario.tool_policy()` is the
`ToolPolicy` the file describes.

Sub-agents (`agents:`, `ScenarioSubagent`) are the agents the file's agent may hand a task to
with the `delegate` tool (`turn/delegation.py`): each names its bundles, risk profile and
prompt, and optionally its own provider; a scripted one may have its own `responses`.

Risky part: a scenario file is untrusted input, and loading it must end in a `Scenario` or in
one `ConfigError` line, whatever the bytes. Decoding is bounded (`_scenario_decoding.py`:
nesting, alias expansion, integer size), before anything is built from it. A name the runtime
registers (tools, MCP servers) is checked here, so building the runtime never fails on a name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ._scenario_base import (
    TOOL_SEARCH,
    Name,
    ScenarioAgent,
    ScenarioBundle,
    ScenarioTool,
    ScriptedOutcome,
    ScriptedRule,
    StrictModel,
)
from ._scenario_decoding import decode_json, decode_yaml
from ._scenario_real import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_BASE_URLS,
    ENV_FROM_HINT,
    KEY_IN_FILE,
    McpTransport,
    ProviderKind,
    ScenarioMcpServer,
    ScenarioProvider,
    names_a_secret,
    reject_keys_in_file,
)
from .config import (
    MAX_COUNT,
    FieldProblem,
    RuntimeConfig,
    check_input_shape,
    load_error_line,
    register_field_names,
)
from .errors import ConfigError
from .tools.delegate import DELEGATE
from .tools.registry import RiskProfile, ToolBundle, ToolPolicy

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_BASE_URLS",
    "ENV_FROM_HINT",
    "KEY_IN_FILE",
    "McpTransport",
    "ProviderKind",
    "Scenario",
    "ScenarioAgent",
    "ScenarioBundle",
    "ScenarioMcpServer",
    "ScenarioProvider",
    "ScenarioProviderError",
    "ScenarioResponse",
    "ScenarioSubagent",
    "ScenarioTool",
    "ScenarioToolCall",
    "ScenarioUsage",
    "ScriptedOutcome",
    "ScriptedRule",
    "load_scenario",
    "names_a_secret",
    "parse_scenario",
    "reject_keys_in_file",
]


_TOOL_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


def _tool_paths(paths: list[str]) -> list[str]:
    for index, path in enumerate(paths):
        if not _TOOL_PATH.fullmatch(path):
            raise FieldProblem((index,), "expected `package.module:function`")
    return paths


class ScenarioToolCall(StrictModel):
    """A native tool call in a scripted response."""

    id: str | None = None
    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class ScenarioUsage(StrictModel):
    """Token usage reported with a scripted response."""

    input_tokens: int = Field(default=0, ge=0, le=MAX_COUNT)
    output_tokens: int = Field(default=0, ge=0, le=MAX_COUNT)


class ScenarioProviderError(StrictModel):
    """A provider failure a recording ends with: replay raises it as the backend did."""

    error_type: Name
    """The error's machine word (`http_500`, `rate_limit_error`, `timeout`, …)."""
    status: int | None = Field(default=None, ge=100, le=599)
    """The HTTP status, when the backend answered with one."""


class ScenarioResponse(StrictModel):
    """One reply of the model: text, native tool calls, or both; or the provider's failure."""

    text: str | None = None
    tool_calls: list[ScenarioToolCall] | None = None
    usage: ScenarioUsage | None = None
    delay_ms: float = Field(default=0, ge=0)
    model: str | None = None
    """The model that answered (`gen_ai.response.model`); the provider's model when None."""
    response_id: str | None = None
    """The backend's response id (`gen_ai.response.id`), as a recording keeps it."""
    finish_reasons: list[str] = Field(default_factory=list)
    """Why generation stopped (`gen_ai.response.finish_reasons`), as a recording keeps it."""
    error: ScenarioProviderError | None = None
    """The provider failed instead of answering (a recorded run that ended on a provider
    error): the scripted provider raises it, and the turn ends as `error` (exit 3)."""

    @model_validator(mode="after")
    def _not_empty(self) -> ScenarioResponse:
        if self.error is not None:
            if self.text is not None or self.tool_calls:
                raise ValueError("a response with `error` takes no `text` or `tool_calls`")
            return self
        if self.text is None and not self.tool_calls:
            raise ValueError("a response needs `text` or `tool_calls`")
        return self


class ScenarioSubagent(StrictModel):
    """A sub-agent (`agents: {name: {...}}`): the `delegate` tool runs it as a nested turn.

    Its key is its name: the `agent` argument of `delegate` and its `gen_ai.agent.name`. Its
    tools are its bundles' tools among those its parent has (never more); its approval is its
    parent's under its risk profile as a ceiling (`full` cannot loosen it).
    """

    description: str = ""
    """What it is for: listed in `delegate`'s description so the model can choose."""
    system_prompt: str | None = None
    """Its own operator prompt; the parent's is not inherited."""
    bundles: list[Name] | None = None
    """Keys of the file's `bundles`; None (absent): every tool its parent has; `[]`: none."""
    risk_profile: RiskProfile | None = None
    """`full | supervised | read_only`, applied on top of the parent's."""
    provider: ScenarioProvider | None = None
    """Its own provider; None (absent): the parent's."""
    responses: list[ScenarioResponse] = Field(default_factory=list)
    """Its own scripted replies, replayed from the first for each delegation. Without them,
    a sub-agent of a scripted parent takes the next responses of the parent's script (the
    order the calls happen, as `--record` writes them)."""


class Scenario(StrictModel):
    """A whole scripted turn."""

    agent: ScenarioAgent = Field(default_factory=ScenarioAgent)
    user: str | None = Field(default=None, min_length=1)
    """The user message; an agent file may leave it to the command line (`run … MESSAGE`)."""
    config: RuntimeConfig = Field(default_factory=RuntimeConfig)
    provider: ScenarioProvider = Field(default_factory=ScenarioProvider)
    tools: list[ScenarioTool] = Field(default_factory=list)
    python_tools: list[str] = Field(default_factory=list)
    """`@tool` functions imported by path, `package.module:function` (`tools/python_tools.py`)."""
    mcp_servers: list[ScenarioMcpServer] = Field(default_factory=list)
    bundles: dict[Name, ScenarioBundle] = Field(default_factory=dict)
    """Named tool sets an agent is granted by `agent.bundles` (`ScenarioBundle`)."""
    agents: dict[Name, ScenarioSubagent] = Field(default_factory=dict)
    """Sub-agents the agent may delegate to (`delegate`), by name (`ScenarioSubagent`)."""
    responses: list[ScenarioResponse] = Field(default_factory=list)
    """The scripted model's replies, in order: required for `kind: scripted`, refused for a
    real backend (a file without them is an agent file)."""
    cancel_after_ms: float | None = Field(default=None, ge=0)
    system_prompt: str | None = None
    description: str | None = None
    """Free text for humans; the engine ignores it."""

    @field_validator("python_tools")
    @classmethod
    def _python_tool_paths(cls, paths: list[str]) -> list[str]:
        return _tool_paths(paths)

    @model_validator(mode="after")
    def _responses_match_the_provider(self) -> Scenario:
        if self.provider.real:
            if self.responses:
                raise FieldProblem(
                    ("responses",),
                    f"a real provider (kind: {self.provider.kind}) replays nothing: remove "
                    "`responses`, or use kind: scripted",
                )
            return self
        if self.user is None:
            raise FieldProblem(("user",), "Field required")
        if not self.responses:
            raise FieldProblem(
                ("responses",),
                "a scripted provider needs at least one response (an agent file names a real "
                "provider: kind: openai or anthropic)",
            )
        return self

    @model_validator(mode="after")
    def _unique_server_names(self) -> Scenario:
        # A server's name is its identity (tool prefix, restarts, "not available" reports).
        seen: dict[str, int] = {}
        for index, server in enumerate(self.mcp_servers):
            first = seen.setdefault(server.name, index)
            if first != index:
                raise FieldProblem(
                    ("mcp_servers", index, "name"),
                    f"duplicate MCP server name (the same as mcp_servers.{first}.name)",
                )
        return self

    @model_validator(mode="after")
    def _bundles_resolve(self) -> Scenario:
        # Bundle keys and server names are operator words: problems name the place only.
        for index, name in enumerate(self.agent.bundles or ()):
            if name not in self.bundles:
                raise FieldProblem(("agent", "bundles", index), "not a key of `bundles`")
        servers = {server.name for server in self.mcp_servers}
        for key, bundle in self.bundles.items():
            for index, server in enumerate(bundle.mcp_servers):
                if server not in servers:
                    raise FieldProblem(
                        ("bundles", key, "mcp_servers", index),
                        "not the name of a server under `mcp_servers`",
                    )
        return self

    @model_validator(mode="after")
    def _subagents_resolve(self) -> Scenario:
        # Sub-agent names and bundle keys are operator words: problems name the place only.
        for key, agent in self.agents.items():
            for index, name in enumerate(agent.bundles or ()):
                if name not in self.bundles:
                    raise FieldProblem(("agents", key, "bundles", index), "not a key of `bundles`")
            real = (agent.provider or self.provider).real
            if real and agent.responses:
                raise FieldProblem(
                    ("agents", key, "responses"),
                    "a sub-agent on a real provider replays nothing: remove `responses`, or "
                    "give it `provider: {kind: scripted}`",
                )
            if agent.provider is not None and not real and not agent.responses:
                raise FieldProblem(
                    ("agents", key, "responses"),
                    "a sub-agent with its own scripted provider needs at least one response",
                )
        return self

    def subagent_bundles(self, name: str) -> tuple[ToolBundle, ...] | None:
        """The bundles sub-agent `name` names (None: every tool its parent has)."""
        names = self.agents[name].bundles
        if names is None:
            return None
        return tuple(self._bundle(key) for key in dict.fromkeys(names))

    def _bundle(self, key: str) -> ToolBundle:
        bundle = self.bundles[key]
        return ToolBundle(
            name=key, tools=tuple(bundle.tools), mcp_servers=tuple(bundle.mcp_servers)
        )

    def tool_policy(self) -> ToolPolicy:
        """The agent's `ToolPolicy`: its bundles (None without `agent.bundles`) and risk
        profile, with no narrowing."""
        granted = None
        if self.agent.bundles is not None:
            granted = tuple(self._bundle(name) for name in dict.fromkeys(self.agent.bundles))
        return ToolPolicy(bundles=granted, profile=self.agent.risk_profile)

    @model_validator(mode="after")
    def _unique_tool_names(self) -> Scenario:
        # Names are payloads too: the problem points at the two places, never at the name.
        seen: dict[str, tuple[str | int, ...]] = {}
        for path, name in self._tool_names():
            first = seen.setdefault(name, path)
            if first != path:
                where = ".".join(str(part) for part in first)
                raise FieldProblem(path, f"duplicate tool name (the same as {where})")
        if self._offers_tool_search():
            for path, name in self._tool_names():
                if name == TOOL_SEARCH:
                    raise FieldProblem(
                        path,
                        f"`{TOOL_SEARCH}` is the built-in tool offered beside deferred MCP "
                        "servers; choose another name",
                    )
        if self.agents:
            for path, name in self._tool_names():
                if name == DELEGATE:
                    raise FieldProblem(
                        path,
                        f"`{DELEGATE}` is the built-in tool offered when the file has `agents`; "
                        "choose another name",
                    )
        return self

    def _tool_names(self) -> list[tuple[tuple[str | int, ...], str]]:
        """Every name the runtime registers, with where it comes from in the file."""
        names: list[tuple[tuple[str | int, ...], str]] = [
            (("tools", i, "name"), tool.name) for i, tool in enumerate(self.tools)
        ]
        for s, server in enumerate(self.mcp_servers):
            names.extend(
                (("mcp_servers", s, "tools", t, "name"), f"{server.name}__{tool.name}")
                for t, tool in enumerate(server.tools)
            )
        return names

    def _offers_tool_search(self) -> bool:
        # A connected server's tools are known only at run time: assume it has some.
        return any(
            server.deferred and (server.tools or server.transport != "scripted")
            for server in self.mcp_servers
        )


def parse_scenario(data: Any, source: str) -> Scenario:
    """Validate already-decoded scenario data.

    Raises:
        ConfigError: one line naming `source` and the first invalid field, never a value;
            also for data past the input bounds (`check_input_shape`). Nothing else.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: (top level): expected a mapping, got {type(data).__name__}")
    problem = check_input_shape(data)
    if problem is not None:
        raise ConfigError(f"{source}: {problem}")
    reject_keys_in_file(data, source)
    agents = data.get("agents")
    if isinstance(agents, dict):
        for n, agent in enumerate(agents.values(), 1):
            reject_keys_in_file(agent, f"{source}: agents.<key {n}>")
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(load_error_line(source, exc, data, Scenario)) from None


def load_scenario(
    path: Path | str,
    *,
    kind: Literal["auto", "json", "yaml"] = "auto",
    default_user: str | None = None,
) -> Scenario:
    """Load a scenario from a JSON or YAML file (`.json` is JSON, anything else YAML).

    `default_user` stands in for a missing `user` (server mode: each turn brings its message,
    so a scripted scenario need not name one).

    Raises:
        ConfigError: unreadable file, malformed JSON/YAML, input past the bounds (nesting
            deeper than `MAX_NESTING_DEPTH`, more than `MAX_INPUT_VALUES` values after alias
            expansion, a recursive alias, an integer of more than 4300 digits), or an invalid
            field. One line naming the file, never a value. Nothing else, whatever the bytes.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except ValueError:  # an embedded NUL in the path
        raise ConfigError(f"{path}: cannot read: invalid path") from None
    use_json = kind == "json" or (kind == "auto" and path.suffix.lower() == ".json")
    data = decode_json(text, path) if use_json else decode_yaml(text, path)
    if default_user is not None and isinstance(data, dict) and "user" not in data:
        data = {**data, "user": default_user}
    return parse_scenario(data, str(path))


register_field_names(Scenario)
