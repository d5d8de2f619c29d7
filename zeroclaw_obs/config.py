"""Runtime configuration: pydantic models, loaded from a scenario, a TOML file or code.

Every model forbids unknown fields, so a typo is a load error that names the field rather than
a silently ignored setting. `load_error_line` turns a pydantic `ValidationError` into the one
line the CLI prints (`FILE: a.b.0.c: problem`).

Risky parts: config and scenario files are operator input and may hold payloads anywhere, keys
included (a token pasted as a key, a secret in a regex). So an error line names the file, the
field path and the problem and never quotes the input: a key that is not one of our field names
is shown by its position (`<key 2>`), pydantic messages are used only for error types whose
text is built from the schema, and parser messages have their quoted fragments removed. Input
is bounded before pydantic sees it (`check_input_shape`): at most `MAX_NESTING_DEPTH` levels and
`MAX_INPUT_VALUES` values, so deep nesting or an alias bomb is one clear error, not a
RecursionError or a hang later in the turn.
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
    model_validator,
)

from ._input_errors import (
    MAX_COUNT,
    MAX_INPUT_VALUES,
    MAX_NESTING_DEPTH,
    FieldProblem,
    check_input_shape,
    load_error_line,
    register_field_names,
    scrub_parser_message,
)
from .errors import ConfigError
from .redaction import Redactor

__all__ = [
    "MAX_COUNT",
    "MAX_INPUT_VALUES",
    "MAX_NESTING_DEPTH",
    "ApprovalAnswer",
    "ApprovalAutonomy",
    "ApprovalConfig",
    "ApprovalMode",
    "FieldProblem",
    "FilterMode",
    "MaxIterationBehavior",
    "ReceiptsConfig",
    "RedactionSettings",
    "ReplaceWith",
    "RuntimeConfig",
    "ToolFilterGroup",
    "build_redactor",
    "check_input_shape",
    "load_config_file",
    "load_error_line",
    "register_field_names",
    "scrub_parser_message",
]


class _Model(BaseModel):
    # allow_inf_nan=False: every number we read is a count, a duration or a timeout, and
    # `.inf` / NaN there would hang a timer or disable a bound.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _no_blank(names: list[str]) -> list[str]:
    for index, name in enumerate(names):
        if not name.strip():
            raise FieldProblem((index,), "names must not be blank")
    return names


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
    auto_approve_read_only: bool = False
    """Auto-approve MCP tools whose annotations say `readOnlyHint: true` (and not
    `destructiveHint: true`), as a group; built-in tools are unaffected (DESIGN §7)."""
    answers: list[ApprovalAnswer] = Field(default_factory=list)
    """Scripted answers, replayed in order before any terminal is read."""
    backchannel_timeout_s: Annotated[float, Field(gt=0)] = 300.0
    """How long a back-channel operator (`serve`'s web surface included) may take before the
    runtime denies (finite). `timeout_s`, DESIGN §7's name for it, is accepted as a synonym."""

    @model_validator(mode="before")
    @classmethod
    def _timeout_synonym(cls, data: Any) -> Any:
        if isinstance(data, dict) and "timeout_s" in data:
            data = dict(data)
            if "backchannel_timeout_s" in data:
                raise ValueError("give timeout_s or backchannel_timeout_s, not both")
            data["backchannel_timeout_s"] = data.pop("timeout_s")
        return data

    @field_validator("auto_approve", "always_ask")
    @classmethod
    def _no_blank_names(cls, names: list[str]) -> list[str]:
        return _no_blank(names)


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
    max_tool_iterations: Annotated[int, Field(ge=1, le=MAX_COUNT)] = 10
    max_iteration_behavior: MaxIterationBehavior = MaxIterationBehavior.GRACEFUL_SUMMARY
    max_tool_result_chars: Annotated[int, Field(ge=0, le=MAX_COUNT)] = 50000
    strict_tool_parsing: bool = False
    dedup_exempt_tools: list[str] = Field(default_factory=list)
    excluded_tools: list[str] = Field(default_factory=list)
    tool_filter_groups: list[ToolFilterGroup] = Field(default_factory=list)
    receipts: ReceiptsConfig = Field(default_factory=ReceiptsConfig)
    redact_history: bool = True
    redaction: RedactionSettings = Field(default_factory=RedactionSettings)
    approval: ApprovalConfig = Field(default_factory=ApprovalConfig)
    tool_timeout_s: Annotated[float, Field(gt=0)] = 120.0
    """Per-call deadline in seconds (finite)."""
    max_parallel_tools: Annotated[int, Field(ge=1, le=MAX_COUNT)] | None = None
    loop_ignore_tools: list[str] = Field(default_factory=list)
    model: str | None = None
    """Overrides the provider's model name when set."""
    context_token_budget: Annotated[int, Field(ge=1, le=MAX_COUNT)] | None = None
    """Estimated tokens the history sent with a turn's requests may hold: before the first
    request of a turn the oldest whole turns are left out until it fits (the system message
    and the turn itself always stay). None: no budget. The estimate is characters / 4 + 4 per
    message (`turn/context_window.py`); a provider's own overflow is handled either way."""
    capture_message_content: bool = False
    """Put the redacted request and response messages on `chat` spans
    (`gen_ai.input.messages` / `gen_ai.output.messages`), like
    `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`. Off by default: it costs
    a redaction of the whole history per provider call. Nothing under content capture `none`."""

    @field_validator("excluded_tools", "dedup_exempt_tools", "loop_ignore_tools")
    @classmethod
    def _no_blank_names(cls, names: list[str]) -> list[str]:
        return _no_blank(names)

    @field_validator("model")
    @classmethod
    def _no_blank_model(cls, model: str | None) -> str | None:
        if model is not None and not model.strip():
            raise ValueError("must not be blank")
        return model


def build_redactor(
    settings: RedactionSettings, source: str, *, field: str = "config.redaction"
) -> Redactor:
    """The runtime's one `Redactor`, built from settings.

    Args:
        settings: the validated settings.
        source: the file they come from, printed first in an error.
        field: where the settings sit in that file: `config.redaction` in a scenario,
            `redaction` in a TOML config.

    Raises:
        ConfigError: a rule, allowlist entry or key is invalid. The line names `source`, the
            field and the entry's position (`config.redaction.allow_patterns.2: invalid
            regex ...`), never the rule id, the pattern or the entry itself.
    """
    try:
        return _redactor(settings)
    except ValueError:  # RedactionConfigError, or anything else the redactor refuses
        # `from None`: the redactor's own message may quote the entry; it must not travel.
        raise ConfigError(f"{source}: {field}.{_redaction_problem(settings)}") from None


def _redactor(settings: RedactionSettings, **only: Any) -> Redactor:
    if only:
        return Redactor.from_config(pii=False, **only)
    return Redactor.from_config(
        extra_rules=dict(settings.extra_rules),
        allow=list(settings.allow),
        allow_patterns=list(settings.allow_patterns),
        extra_sensitive_keys=list(settings.extra_sensitive_keys),
        pii=settings.pii,
    )


# What the redactor's refusal means, by a word of its message; the message itself is not shown.
_REDACTION_PROBLEMS = (
    ("snake_case", "rule id must be snake_case ([a-z][a-z0-9_]*, at most 64 characters)"),
    ("default rule", "rule id is already a default rule"),
    ("empty", "pattern matches empty text"),
    ("blank", "must not be blank"),
    ("regex", "invalid regex (RE2 syntax: no lookaround or backreferences)"),
    ("compile", "cannot be compiled (RE2)"),
)


def _redaction_problem(settings: RedactionSettings) -> str:
    """`entry.path: problem` for the first entry the redactor refuses on its own."""
    entries: list[tuple[str, dict[str, Any]]] = [
        (f"extra_rules.<key {n}>", {"extra_rules": {rule_id: pattern}})
        for n, (rule_id, pattern) in enumerate(settings.extra_rules.items(), 1)
    ]
    for field in ("allow", "allow_patterns", "extra_sensitive_keys"):
        values = getattr(settings, field)
        entries.extend((f"{field}.{i}", {field: [value]}) for i, value in enumerate(values))
    for where, only in entries:
        try:
            _redactor(settings, **only)
        except ValueError as exc:
            text = str(exc)
            problem = next((p for word, p in _REDACTION_PROBLEMS if word in text), "refused")
            return f"{where}: {problem}"
    return "extra_rules: the rules cannot be compiled together (RE2 limits)"


def load_config_file(path: Path) -> RuntimeConfig:
    """Load a `RuntimeConfig` from a TOML file (the top-level table is the config).

    Raises:
        ConfigError: unreadable file, malformed TOML, input past the bounds (nesting deeper
            than `MAX_NESTING_DEPTH`, more than `MAX_INPUT_VALUES` values, an integer of more
            than 4300 digits), or an invalid field. One line naming the file, never a value.
            Nothing else, whatever the file holds.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except ValueError:  # an embedded NUL in the path
        raise ConfigError(f"{path}: cannot read: invalid path") from None
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: malformed TOML: {scrub_parser_message(str(exc))}") from None
    except ValueError:  # int() past Python's 4300-digit conversion limit
        raise ConfigError(f"{path}: malformed TOML: an integer has more than 4300 digits") from None
    except RecursionError:
        raise ConfigError(
            f"{path}: malformed TOML: nested deeper than {MAX_NESTING_DEPTH} levels"
        ) from None
    problem = check_input_shape(data)
    if problem is not None:
        raise ConfigError(f"{path}: {problem}")
    try:
        return RuntimeConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(load_error_line(str(path), exc, data, RuntimeConfig)) from None


register_field_names(RuntimeConfig)
