"""Scenario files: a scripted turn that replays a model deterministically (DESIGN §4).

This module owns the file format (pydantic models that forbid unknown fields), loading JSON or
YAML with one-line errors that name the file and the field, and building the runtime a scenario
describes. A scenario is the developer's way to replay a recorded turn: the same file gives the
same slots, events and history every time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .config import RuntimeConfig, load_error_line
from .errors import ConfigError

__all__ = [
    "Scenario",
    "ScenarioAgent",
    "ScenarioMcpServer",
    "ScenarioProvider",
    "ScenarioResponse",
    "ScenarioTool",
    "ScenarioToolCall",
    "ScenarioUsage",
    "ScriptedOutcome",
    "ScriptedRule",
    "load_scenario",
    "parse_scenario",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScenarioAgent(_Model):
    """Who runs the turn."""

    alias: str = "agent"
    channel: str = "cli"


def _chosen_outcomes(
    output: str | None, error: str | None, raise_: str | None, hang: bool
) -> list[str]:
    """The outcome fields a scripted rule sets (a valid outcome sets exactly one)."""
    given = (("output", output), ("error", error), ("raise", raise_), ("hang", hang or None))
    return [name for name, value in given if value is not None]


class ScriptedOutcome(_Model):
    """What a scripted tool does: exactly one of output / error / raise / hang."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    output: str | None = None
    error: str | None = None
    raise_: str | None = Field(default=None, alias="raise")
    hang: bool = False
    delay_ms: float = Field(default=0, ge=0)
    jitter_ms: float = Field(default=0, ge=0)
    """Up to this much more delay, drawn uniformly per call (0: always exactly `delay_ms`)."""

    @model_validator(mode="after")
    def _exactly_one(self) -> ScriptedOutcome:
        chosen = _chosen_outcomes(self.output, self.error, self.raise_, self.hang)
        if len(chosen) != 1:
            raise ValueError(
                "needs exactly one of output, error, raise, hang"
                + (f" (got {', '.join(chosen)})" if chosen else "")
            )
        return self


class ScriptedRule(_Model):
    """`{when: {...}, output: ...}` or `{default: {...}}`; first matching rule wins."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    when: dict[str, Any] | None = None
    default: ScriptedOutcome | None = None
    output: str | None = None
    error: str | None = None
    raise_: str | None = Field(default=None, alias="raise")
    hang: bool = False
    delay_ms: float = Field(default=0, ge=0)
    jitter_ms: float = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _one_form(self) -> ScriptedRule:
        chosen = _chosen_outcomes(self.output, self.error, self.raise_, self.hang)
        if self.default is not None:
            if self.when is not None or chosen:
                raise ValueError("a `default` rule takes no `when` and no inline outcome")
            if self.jitter_ms:
                raise ValueError("put `jitter_ms` inside `default`, beside its outcome")
            return self
        if len(chosen) != 1:
            raise ValueError(
                "a rule needs `default`, or `when` with exactly one of output, error, raise, hang"
            )
        return self

    def inline_outcome(self) -> ScriptedOutcome:
        """The outcome of a `when` rule (or of the default)."""
        if self.default is not None:
            return self.default
        return ScriptedOutcome(
            output=self.output,
            error=self.error,
            raise_=self.raise_,
            hang=self.hang,
            delay_ms=self.delay_ms,
            jitter_ms=self.jitter_ms,
        )

    def matches(self, args: dict[str, Any]) -> bool:
        """True when every `when` key equals the dispatched argument (a default always matches)."""
        if self.when is None:
            return True
        return all(key in args and args[key] == value for key, value in self.when.items())


class ScenarioTool(_Model):
    """A scripted tool: a name, a schema and its rules."""

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    responses: list[ScriptedRule] = Field(default_factory=list)


class ScenarioMcpServer(_Model):
    """A scripted MCP server; tool `t` of server `s` is offered as `s__t`."""

    name: str = Field(min_length=1)
    deferred: bool = False
    tools: list[ScenarioTool] = Field(default_factory=list)


class ScenarioProvider(_Model):
    """The scripted provider's capabilities."""

    native_tools: bool = True
    name: str = "scripted"
    model: str = "scripted-model"


class ScenarioToolCall(_Model):
    """A native tool call in a scripted response."""

    id: str | None = None
    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class ScenarioUsage(_Model):
    """Token usage reported with a scripted response."""

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)


class ScenarioResponse(_Model):
    """One reply of the model: text, native tool calls, or both."""

    text: str | None = None
    tool_calls: list[ScenarioToolCall] | None = None
    usage: ScenarioUsage | None = None
    delay_ms: float = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _not_empty(self) -> ScenarioResponse:
        if self.text is None and not self.tool_calls:
            raise ValueError("a response needs `text` or `tool_calls`")
        return self


class Scenario(_Model):
    """A whole scripted turn."""

    agent: ScenarioAgent = Field(default_factory=ScenarioAgent)
    user: str = Field(min_length=1)
    config: RuntimeConfig = Field(default_factory=RuntimeConfig)
    provider: ScenarioProvider = Field(default_factory=ScenarioProvider)
    tools: list[ScenarioTool] = Field(default_factory=list)
    mcp_servers: list[ScenarioMcpServer] = Field(default_factory=list)
    responses: list[ScenarioResponse] = Field(min_length=1)
    cancel_after_ms: float | None = Field(default=None, ge=0)
    system_prompt: str | None = None
    description: str | None = None
    """Free text for humans; the engine ignores it."""

    @model_validator(mode="after")
    def _unique_tool_names(self) -> Scenario:
        names = [t.name for t in self.tools]
        for server in self.mcp_servers:
            names.extend(f"{server.name}__{t.name}" for t in server.tools)
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate tool names: {', '.join(duplicates)}")
        return self


def parse_scenario(data: Any, source: str) -> Scenario:
    """Validate already-decoded scenario data.

    Raises:
        ConfigError: one line naming `source` and the first invalid field.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: (top level): expected a mapping, got {type(data).__name__}")
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(load_error_line(source, exc)) from exc


def load_scenario(path: Path | str, *, kind: Literal["auto", "json", "yaml"] = "auto") -> Scenario:
    """Load a scenario from a JSON or YAML file (`.json` is JSON, anything else YAML).

    Raises:
        ConfigError: unreadable file, malformed JSON/YAML, or an invalid field (named).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text") from exc
    use_json = kind == "json" or (kind == "auto" and path.suffix.lower() == ".json")
    try:
        data = json.loads(text) if use_json else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: malformed JSON: line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"{path}: malformed YAML: {where}{problem}") from exc
    return parse_scenario(data, str(path))
