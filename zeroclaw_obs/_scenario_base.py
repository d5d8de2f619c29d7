"""The scenario file's building blocks: the strict model base, the agent and its bundles,
scripted tools and their rules (`scenario.py` assembles the file from them)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    model_validator,
)

from .tools.registry import RiskProfile

TOOL_SEARCH = "tool_search"
"""The built-in tool offered beside deferred MCP servers; no scripted tool may take its name."""


class StrictModel(BaseModel):
    # allow_inf_nan=False: delays and deadlines must be finite (`.inf` would hang the turn).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def not_blank(name: str) -> str:
    if not name.strip():
        raise ValueError("must not be blank")
    return name


Name = Annotated[str, AfterValidator(not_blank)]
"""A name the runtime shows or registers: empty or whitespace-only is refused."""


class ScenarioAgent(StrictModel):
    """Who runs the turn, with which tools and how much it may do unasked."""

    alias: Name = "agent"
    channel: Name = "cli"
    bundles: list[Name] | None = None
    """Keys of the file's `bundles` this agent is granted. None (absent): every tool of the
    file, as before bundles existed; `[]`: no tool at all."""
    risk_profile: RiskProfile | None = None
    """`full | supervised | read_only`: a ceiling on the approval config, and `read_only`
    removes every tool that is not read-only (`tools/registry.py`, `profile_approval`).
    None: the approval config as written."""


class ScenarioBundle(StrictModel):
    """A named set of tools (`bundles: {name: {tools: [...], mcp_servers: [...]}}`).

    `tools` are names or `pattern_matches` patterns (`fs_*`, `*_read`, `wx__*`), matched
    against every tool of the file, an MCP tool by its `server__tool` name; `mcp_servers`
    grants every tool of the servers it names, including tools a server lists later. A bundle
    only grants: the agent's risk profile and per-run narrowing can still remove its tools.
    """

    tools: list[Name] = Field(default_factory=list)
    mcp_servers: list[Name] = Field(default_factory=list)

    @model_validator(mode="after")
    def _not_empty(self) -> ScenarioBundle:
        if not self.tools and not self.mcp_servers:
            raise ValueError("a bundle needs `tools` or `mcp_servers`")
        return self


def _chosen_outcomes(
    output: str | None, error: str | None, raise_: str | None, hang: bool
) -> list[str]:
    """The outcome fields a scripted rule sets (a valid outcome sets exactly one)."""
    given = (("output", output), ("error", error), ("raise", raise_), ("hang", hang or None))
    return [name for name, value in given if value is not None]


class ScriptedOutcome(StrictModel):
    """What a scripted tool does: exactly one of output / error / raise / hang."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )

    output: str | None = None
    error: str | None = None
    raise_: str | None = Field(default=None, alias="raise")
    hang: bool = False
    delay_ms: float = Field(default=0, ge=0)
    jitter_ms: float = Field(default=0, ge=0)
    """Up to this much more delay, drawn uniformly per call (0: always exactly `delay_ms`)."""
    switch_model: str | None = Field(default=None, min_length=1)
    """The tool asks the turn to continue on this model (`request_model_switch`), as a Python
    tool does while it runs; how `--record` keeps a tool's model switch."""

    @model_validator(mode="after")
    def _exactly_one(self) -> ScriptedOutcome:
        chosen = _chosen_outcomes(self.output, self.error, self.raise_, self.hang)
        if len(chosen) != 1:
            raise ValueError(
                "needs exactly one of output, error, raise, hang"
                + (f" (got {', '.join(chosen)})" if chosen else "")
            )
        return self


class ScriptedRule(StrictModel):
    """`{when: {...}, output: ...}` or `{default: {...}}`; first matching rule wins."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )

    when: dict[str, Any] | None = None
    default: ScriptedOutcome | None = None
    output: str | None = None
    error: str | None = None
    raise_: str | None = Field(default=None, alias="raise")
    hang: bool = False
    delay_ms: float = Field(default=0, ge=0)
    jitter_ms: float = Field(default=0, ge=0)
    switch_model: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_form(self) -> ScriptedRule:
        chosen = _chosen_outcomes(self.output, self.error, self.raise_, self.hang)
        if self.default is not None:
            if self.when is not None or chosen or self.switch_model is not None:
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
            switch_model=self.switch_model,
        )

    def matches(self, args: dict[str, Any]) -> bool:
        """True when every `when` key equals the dispatched argument (a default always matches)."""
        if self.when is None:
            return True
        return all(key in args and args[key] == value for key, value in self.when.items())


class ScenarioTool(StrictModel):
    """A scripted tool: a name, a schema and its rules."""

    name: Name
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    responses: list[ScriptedRule] = Field(default_factory=list)
    read_only: bool = False
    """Declares the tool read-only: it may run under `autonomy: read_only` (LIFECYCLE §5)."""
    annotations: dict[str, Any] = Field(default_factory=dict)
    """MCP tool annotations as a server lists them; `readOnlyHint: true` declares it read-only."""
