"""Typed observer events: the facts a turn reports, with correlation ids.

This module imports no telemetry library; `turn/` depends on it and nothing heavier. Every
payload in an event (arguments, results, errors) is already redacted by the engine with the
runtime's one `Redactor` before the event is built: observers never see raw content.
Times are `time.time_ns()` wall-clock stamps so exporters can give spans their real start and
end, and `perf_counter` durations in seconds for metrics.

Events are read-only by contract: the engine builds one, hands the same object to every
observer, and the workers read it later on their own threads, so nothing may set a field after
it is made. They are not `frozen=True`: a frozen dataclass's `__init__` sets each field through
`object.__setattr__`, and with ~4 events a tool call that check cost ~6% of telemetry's
instructions a call (issue 17, eighth pass, `benchmarks/telemetry_icount.py`). `unsafe_hash=True`
keeps the hashing a frozen dataclass had; `tests/observability/test_events.py` holds the
read-only contract (no observer sets a field).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "CALL_CANCELLED",
    "NO_IDS",
    "AgentEnd",
    "AgentStart",
    "ApprovalDecision",
    "ApprovalSurface",
    "ContextTrimReason",
    "ContextTrimmed",
    "Correlation",
    "Decision",
    "EventIds",
    "Ids",
    "LlmRequest",
    "LlmResponse",
    "LoopDetection",
    "LoopKind",
    "LoopSeverity",
    "ModelSwitchSource",
    "ModelSwitched",
    "ObserverEvent",
    "ProviderAttempt",
    "SteeringMessages",
    "ToolCall",
    "ToolCallStart",
    "ToolOutcome",
    "ToolProgress",
    "TurnOutcomeKind",
]


class ToolOutcome(StrEnum):
    """The one outcome of a result slot, shared by spans, metrics, events and history."""

    SUCCESS = "success"
    ERROR = "error"
    DENIED = "denied"
    REPLACED = "replaced"
    DEDUPLICATED = "deduplicated"
    CANCELLED_BY_HOOK = "cancelled_by_hook"
    INTERRUPTED = "interrupted"
    UNKNOWN = "unknown"
    EXCLUDED = "excluded"


class TurnOutcomeKind(StrEnum):
    """How a turn ended (`zeroclaw.turn.outcome`)."""

    FINAL = "final"
    CANCELLED = "cancelled"
    ABORTED = "aborted"
    MAX_ITERATIONS = "max_iterations"
    ERROR = "error"


Ids = tuple[str, str]
"""(trace_id as 32 lowercase hex, span_id as 16 lowercase hex) of one exported span."""


@dataclass(slots=True, unsafe_hash=True)
class EventIds:
    """Which spans an observer event belongs to, as the span step of the telemetry chain
    (`observability/chain.py`) says: metrics exemplars and log lines carry these ids."""

    root: Ids | None = None
    """The turn's root span (`invoke_agent`); None when unknown or not sampled."""
    span: Ids | None = None
    """The span the event describes: its `chat` (`llm_*`), `execute_tool` (tool events, a
    loop detection on a call), `await_approval` (a decision), else the root."""

    @property
    def own(self) -> Ids | None:
        """The event's own span, else the root."""
        return self.span if self.span is not None else self.root


NO_IDS = EventIds()
"""No tracing side, or nothing known."""


class Decision(StrEnum):
    """What an operator (or a script) answered; a runtime denial is `no`."""

    YES = "yes"
    NO = "no"
    ALWAYS = "always"
    REPLACE = "replace"


class ApprovalSurface(StrEnum):
    """Who was asked: the audit log's and the metrics' `surface`."""

    CLI = "cli"
    SCENARIO = "scenario"
    BACKCHANNEL = "backchannel"
    WEB = "web"
    RUNTIME = "runtime"
    """Nobody decided: the runtime denied by policy."""


class LoopKind(StrEnum):
    """Which loop-detection pattern fired."""

    REPEAT = "repeat"
    PING_PONG = "ping_pong"
    NO_PROGRESS = "no_progress"


class LoopSeverity(StrEnum):
    """How hard it fired."""

    WARNING = "warning"
    BLOCK = "block"
    ABORT = "abort"


class ContextTrimReason(StrEnum):
    """Why the oldest turns were left out of a request (`turn/context_window.py`)."""

    BUDGET = "budget"
    """`context_token_budget`, before the first request of a turn."""
    OVERFLOW = "overflow"
    """The provider said the prompt exceeds its context window; the request is sent again."""


class ModelSwitchSource(StrEnum):
    """Who asked a turn to continue on another model (`turn/model_switch.py`)."""

    TOOL = "tool"
    """A tool, through `request_model_switch` while it ran; effective from the next iteration."""
    HOOK = "hook"
    """A `before_llm_call` hook (`SwitchModel`); effective for the request it saw."""


CALL_CANCELLED = "cancelled"
"""The `error_type` of a provider call the turn's cancellation stopped (a user's decision,
logged as a warning, not an error)."""


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class Correlation:
    """The ids every event of a turn carries."""

    turn_id: str
    channel: str
    agent_alias: str
    conversation_id: str | None = None
    """The conversation the turn belongs to, in its shown (redacted) form: a client chose it.
    None for a one-off turn, whose conversation is the turn itself."""
    parent_agent_alias: str | None = None
    """The shown (redacted) alias of the agent that delegated this turn (`delegate`), None for
    a turn nobody delegated. Log lines carry it as `parent_agent_alias`."""

    @property
    def conversation(self) -> str:
        """`gen_ai.conversation.id` / `session.id`: the conversation, else the turn."""
        return self.conversation_id if self.conversation_id is not None else self.turn_id


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class AgentStart:
    """A turn began (root span start)."""

    correlation: Correlation
    provider: str
    model: str
    time_ns: int
    receipt_key_id: str | None = None
    input: str | None = None
    """The user's message, redacted: the turn's `input.value` (OpenInference)."""


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class AgentEnd:
    """A turn ended, with its outcome and iteration count."""

    correlation: Correlation
    outcome: TurnOutcomeKind
    iterations: int
    time_ns: int
    duration_s: float
    error: str | None = None
    """Redacted reason for aborted/error outcomes."""
    output: str | None = None
    """The turn's answer (or its end text), redacted: the turn's `output.value`."""


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class LlmRequest:
    """A provider call is about to be made."""

    correlation: Correlation
    iteration: int
    provider: str
    model: str
    message_count: int
    tool_count: int
    time_ns: int
    input_messages: str | None = None
    """Only when an observer asks for message content (`wants_messages`): the request's
    messages as redacted JSON (`gen_ai.input.messages`)."""


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class LlmResponse:
    """A provider call finished (or failed, `success=False`), retries included.

    Every text field is in its redacted form: the response's model and id come from the
    backend, the server address from the operator's configuration.
    """

    correlation: Correlation
    iteration: int
    provider: str
    model: str
    """The *requested* model (`chat {model}`, the `model` metric label): a bounded set the
    operator chose. The model the backend reports is `response_model`."""
    success: bool
    time_ns: int
    duration_s: float
    input_tokens: int = 0
    output_tokens: int = 0
    tool_call_count: int = 0
    error: str | None = None
    """The failure's one line (`ProviderError.line()`: provider, status, error type)."""
    error_type: str | None = None
    """`error.type` of a failure: the `ProviderError`'s `error_type` (`rate_limit_error`,
    `http_500`, `timeout`), else the exception's class name; `CALL_CANCELLED` when the turn
    was cancelled during the call (or its backoff)."""
    response_model: str | None = None
    """`gen_ai.response.model`: the model that answered, when the backend said."""
    response_id: str | None = None
    """`gen_ai.response.id`, when the backend sent one."""
    finish_reasons: tuple[str, ...] = ()
    """`gen_ai.response.finish_reasons`, as the backend said them."""
    server_address: str | None = None
    """`server.address`: the host the provider talks to (None: in process)."""
    server_port: int | None = None
    """`server.port`."""
    attempts: int = 1
    """Requests sent for this call: 1 + the retries (`ProviderAttempt` events)."""
    output_messages: str | None = None
    """Only when an observer asks for message content: the response as a redacted JSON
    message list (`gen_ai.output.messages`)."""


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class ProviderAttempt:
    """A provider request failed with a retryable error and will be sent again.

    One per retry, between the call's `LlmRequest` and its `LlmResponse`: the span observer
    records it as a `zeroclaw.provider.attempt` event on the call's `chat` span (one span per
    call, DESIGN §3), the log observer as an `llm_retry` line.
    """

    correlation: Correlation
    iteration: int
    provider: str
    model: str
    attempt: int
    """The number of the request that failed: 1 for the first, so the retry is `attempt + 1`."""
    error_type: str
    """The failure's `error_type` (`rate_limit_error`, `http_503`, `timeout`, `connect_error`)."""
    status: int | None
    """The HTTP status, when the backend answered with one."""
    wait_s: float
    """Seconds the turn waits before the next request (backoff, at least `Retry-After`)."""
    time_ns: int


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class ToolCallStart:
    """A result slot was opened: the call is being dispatched (or recorded without running)."""

    correlation: Correlation
    iteration: int
    tool_call_id: str
    tool: str
    """The name the model used (bound it to the registry before using it as a label)."""
    provenance: str
    arguments: str
    """Redacted compact JSON of the arguments."""
    time_ns: int
    span_attributes: Mapping[str, Any] | None = None
    """Attributes the tool adds to its `execute_tool` span (MCP: `mcp.method.name`, …)."""


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class ToolCall:
    """A result slot was closed with its outcome."""

    correlation: Correlation
    iteration: int
    tool_call_id: str
    tool: str
    known_tool: bool
    """False when the model invented the name (label it `unknown`)."""
    provenance: str
    outcome: ToolOutcome
    success: bool
    arguments: str
    """Redacted compact JSON of the arguments."""
    result: str
    """The result redacted whole, then cut to `max_tool_result_chars` (without the receipt).
    It is the model-visible text when `redact_history` is on."""
    start_time_ns: int
    time_ns: int
    duration_s: float
    error_type: str | None = None
    receipt: str | None = None
    truncated_chars: int = 0
    """Characters of the *redacted* result that `result` leaves out (the marker's count; 0: not
    truncated). A result that redaction brings under the limit is not truncated."""
    truncated_bytes: int = 0
    """The UTF-8 size of those characters: `zeroclaw.tool.truncated_bytes` on the span."""
    redaction_counts: dict[str, int] = field(default_factory=dict)
    span_attributes: Mapping[str, Any] | None = None
    """Attributes the tool adds to its `execute_tool` span (see `ToolCallStart`)."""


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class ApprovalDecision:
    """An approval was decided; `wait_*` bound the human wait (`await_approval` span)."""

    correlation: Correlation
    iteration: int
    tool_call_id: str
    tool: str
    decision: str
    """`yes|no|always|replace` (and `approved` for auto-approvals, which are not audited)."""
    surface: str
    wait_start_ns: int
    wait_end_ns: int
    wait_s: float


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class LoopDetection:
    """The loop detector fired."""

    correlation: Correlation
    iteration: int
    tool_call_id: str
    tool: str
    kind: str
    """`repeat|ping_pong|no_progress`."""
    severity: str
    """`warning|block|abort`."""
    message: str
    time_ns: int


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class ToolProgress:
    """A running call reported progress (an MCP server's `notifications/progress`)."""

    correlation: Correlation
    iteration: int
    tool_call_id: str
    tool: str
    progress: float
    total: float | None
    message: str | None
    """The server's progress message, redacted."""
    time_ns: int


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class ContextTrimmed:
    """The oldest whole turns were left out of the turn's requests (counts only, no content).

    The span observer records it as a `zeroclaw.context.trimmed` event on the turn's root
    span, the log observer as a `context_trimmed` line.
    """

    correlation: Correlation
    iteration: int
    """The provider call the cut was made for."""
    reason: ContextTrimReason
    messages_dropped: int
    turns_dropped: int
    tokens_before: int
    """Estimated tokens of the request before the cut (chars/4 + 4 per message)."""
    tokens_after: int
    """Estimated tokens of the request after the cut."""
    token_budget: int
    """The target: `context_token_budget`, or two thirds of `tokens_before` after an overflow."""
    time_ns: int


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class ModelSwitched:
    """The turn goes on with another provider/model (`turn/model_switch.py`).

    Names are in their shown (redacted) form: an operator's model and provider names are
    payloads like any other. The span observer records it as a `zeroclaw.model.switch` event
    on the turn's root span, the log observer as a `model_switched` line.
    """

    correlation: Correlation
    iteration: int
    """The first provider call made on the new model."""
    from_provider: str
    from_model: str
    to_provider: str
    to_model: str
    source: ModelSwitchSource
    time_ns: int


@dataclass(kw_only=True, slots=True, unsafe_hash=True)
class SteeringMessages:
    """Steering messages (`turn/steering.py`): sizes only, never their text.

    `applied`: appended to the history as user messages before provider call `iteration`,
    in the order they were sent. Not applied: the turn ended (cancelled, aborted, failed, or
    at the iteration cap with `error_at_cap`) before they could be appended; they are
    dropped. The span observer records a `zeroclaw.steering` event on the turn's root span
    (the count), the log observer one `steering_message` line per applied message (its
    length) or one `steering_dropped` warning.
    """

    correlation: Correlation
    iteration: int
    lengths: tuple[int, ...]
    """Each message's length in characters, in order."""
    applied: bool
    time_ns: int

    @property
    def count(self) -> int:
        """How many messages."""
        return len(self.lengths)


ObserverEvent = (
    AgentStart
    | AgentEnd
    | LlmRequest
    | LlmResponse
    | ProviderAttempt
    | ToolCallStart
    | ToolCall
    | ToolProgress
    | ApprovalDecision
    | LoopDetection
    | ContextTrimmed
    | ModelSwitched
    | SteeringMessages
)
