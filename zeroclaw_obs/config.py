"""Runtime configuration: pydantic models, loaded from a scenario, a TOML file or code.

Every model forbids unknown fields, so a typo is a load error that names the field rather than
a silently ignored setting. `load_error_line` turns a pydantic `ValidationError` into the one
line the CLI prints (`FILE: a.b.0.c: problem`).
"""

from __future__ import annotations

import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from .errors import ConfigError
from .redaction import RedactionConfigError, Redactor

__all__ = [
    "ApprovalAnswer",
    "ApprovalAutonomy",
    "ApprovalConfig",
    "ApprovalMode",
    "FilterMode",
    "MaxIterationBehavior",
    "ReceiptsConfig",
    "RedactionSettings",
    "ReplaceWith",
    "RuntimeConfig",
    "ToolFilterGroup",
    "build_redactor",
    "load_config_file",
    "load_error_line",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MaxIterationBehavior(StrEnum):
    """What happens when `max_tool_iterations` is reached."""

    GRACEFUL_SUMMARY = "graceful_summary"
    ERROR_AT_CAP = "error_at_cap"


class FilterMode(StrEnum):
    """`always` groups are visible (and pre-activated) every turn; `dynamic` need a keyword."""

    ALWAYS = "always"
    DYNAMIC = "dynamic"


class ToolFilterGroup(_Model):
    """Which MCP tool schemas are visible this turn (LIFECYCLE §2)."""

    mode: FilterMode = FilterMode.DYNAMIC
    tools: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)


class ReceiptsConfig(_Model):
    """HMAC receipts for successful executions."""

    enabled: bool = False


class ApprovalMode(StrEnum):
    """Which surface answers prompt-required calls."""

    INTERACTIVE = "interactive"
    NON_INTERACTIVE = "non_interactive"
    BACKCHANNEL = "backchannel"


class ApprovalAutonomy(StrEnum):
    """`full` approves everything, `read_only` requires nothing, `supervised` asks."""

    SUPERVISED = "supervised"
    FULL = "full"
    READ_ONLY = "read_only"


class ReplaceWith(_Model):
    """An operator's deny-with-edit: the text becomes a successful synthetic result."""

    replace_with: str


def _yaml_boolean_answer(value: Any) -> Any:
    # YAML 1.1 reads bare `yes` / `no` as booleans; an operator who wrote them meant the words.
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return value


ApprovalAnswer = Annotated[
    Literal["yes", "no", "always"] | ReplaceWith, BeforeValidator(_yaml_boolean_answer)
]


class ApprovalConfig(_Model):
    """The approval policy (LIFECYCLE §5)."""

    mode: ApprovalMode = ApprovalMode.INTERACTIVE
    autonomy: ApprovalAutonomy = ApprovalAutonomy.SUPERVISED
    auto_approve: list[str] = Field(default_factory=lambda: ["tool_search"])
    always_ask: list[str] = Field(default_factory=list)
    non_interactive_shell_requires_approval: bool = True
    answers: list[ApprovalAnswer] = Field(default_factory=list)
    """Scripted answers, replayed in order before any terminal is read."""
    backchannel_timeout_s: Annotated[float, Field(gt=0)] = 300.0
    """How long a back-channel operator may take before the runtime denies."""


class RedactionSettings(_Model):
    """The one redactor's configuration (`Redactor.from_config`)."""

    pii: bool = True
    """Personal data rules (email, card, IBAN, SSN, phone, IP)."""
    extra_rules: dict[str, str] = Field(default_factory=dict)
    """Extra rules: id (snake_case) → RE2 pattern."""
    allow: list[str] = Field(default_factory=list)
    """Exact values that are never redacted."""
    allow_patterns: list[str] = Field(default_factory=list)
    """RE2 patterns; a secret that matches one in full is never redacted."""
    extra_sensitive_keys: list[str] = Field(default_factory=list)
    """More key names whose values are masked whole."""


class RuntimeConfig(_Model):
    """Every knob of the turn engine. Defaults follow LIFECYCLE.md."""

    parallel_tools: bool = False
    max_tool_iterations: Annotated[int, Field(ge=1)] = 10
    max_iteration_behavior: MaxIterationBehavior = MaxIterationBehavior.GRACEFUL_SUMMARY
    max_tool_result_chars: Annotated[int, Field(ge=0)] = 50000
    strict_tool_parsing: bool = False
    dedup_exempt_tools: list[str] = Field(default_factory=list)
    excluded_tools: list[str] = Field(default_factory=list)
    tool_filter_groups: list[ToolFilterGroup] = Field(default_factory=list)
    receipts: ReceiptsConfig = Field(default_factory=ReceiptsConfig)
    redact_history: bool = True
    redaction: RedactionSettings = Field(default_factory=RedactionSettings)
    approval: ApprovalConfig = Field(default_factory=ApprovalConfig)
    tool_timeout_s: Annotated[float, Field(gt=0)] = 120.0
    max_parallel_tools: Annotated[int, Field(ge=1)] | None = None
    loop_ignore_tools: list[str] = Field(default_factory=list)
    model: str | None = None
    """Overrides the provider's model name when set."""

    @field_validator("excluded_tools", "dedup_exempt_tools", "loop_ignore_tools")
    @classmethod
    def _no_blank_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not name.strip():
                raise ValueError("tool names must not be blank")
        return names


def build_redactor(settings: RedactionSettings, source: str) -> Redactor:
    """The runtime's one `Redactor`, built from settings.

    Raises:
        ConfigError: a rule, allowlist entry or key is invalid; names `source` and the field.
    """
    try:
        return Redactor.from_config(
            extra_rules=dict(settings.extra_rules),
            allow=list(settings.allow),
            allow_patterns=list(settings.allow_patterns),
            extra_sensitive_keys=list(settings.extra_sensitive_keys),
            pii=settings.pii,
        )
    except RedactionConfigError as exc:
        raise ConfigError(f"{source}: config.redaction: {exc}") from exc


def load_error_line(source: str, exc: ValidationError) -> str:
    """The first validation problem as one line: `source: field.path: message`."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"]) or "(top level)"
    message = error["msg"]
    if error["type"] == "extra_forbidden":
        message = "unknown field"
    return f"{source}: {where}: {message}"


def load_config_file(path: Path) -> RuntimeConfig:
    """Load a `RuntimeConfig` from a TOML file (the top-level table is the config).

    Raises:
        ConfigError: unreadable file, malformed TOML, or an invalid field (named).
    """
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: malformed TOML: {exc}") from exc
    try:
        return RuntimeConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(load_error_line(str(path), exc)) from exc
