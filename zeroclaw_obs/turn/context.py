"""Resolved context: what is stable per agent vs what belongs to one message.

`ResolvedAgentExecution` is built once per agent and shared by its turns; `TurnState` is built
for each user message and dies with the turn. There is no global mutable state: everything a
step needs reaches it through one of these two objects.

Risky part: cancellation. `TurnCancellation` is a scope bound to the task running the turn;
`cancel()` cancels that task, and the steps that own an await (provider call, approval,
dispatch) catch the `CancelledError`, record what must be recorded, and end the turn as
cancelled. A `CancelledError` that did not come from this token is never swallowed. A turn
delegated to a sub-agent (`turn/delegation.py`) runs under a scope `linked` to its parent's,
so cancelling the parent cancels the nested turn too; the parent's `IterationBudget` is shared
the same way.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..config import RuntimeConfig
from ..observability.events import Correlation
from ..observability.observer import NoopObserver, Observer
from .events import EventSink, TurnEventLog
from .hooks import Hooks
from .model_switch import ModelSwitchCallback, TurnModelSwitch
from .provider_call import RetryPolicy
from .steering import SteeringQueue

if TYPE_CHECKING:
    from ..approval import ApprovalManager
    from ..providers.base import Provider
    from ..receipts import ReceiptGenerator
    from ..redaction import Redactor
    from ..tools.deferred import ActivatedToolSet
    from ..tools.mcp import McpServer
    from ..tools.registry import ToolRegistry
    from .delegation import Subagent
    from .loop_detection import LoopDetector

__all__ = [
    "CONVERSATION_ID",
    "IterationBudget",
    "ResolvedAgentExecution",
    "ShownNames",
    "TurnCancellation",
    "TurnState",
    "new_turn_id",
]


CONVERSATION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""What a client may name a conversation (`run --conversation-id`, `serve`'s
`conversation_id`): it reaches spans (redacted) and URLs."""


def new_turn_id() -> str:
    """A fresh turn id (UUID4 hex); it correlates every span, log, event and audit entry."""
    return uuid.uuid4().hex


class ShownNames:
    """The redacted forms of the operator's names, computed once per agent.

    Registry and MCP tool names, the agent alias, the provider and the model are chosen by an
    operator, and an operator can paste a token into any of them: they are payloads like any
    other. Every outward surface (observer events and so the spans, metric labels, logs and
    progress lines built from them; TurnEvents; history with `redact_history` on) shows these
    forms. The tool specs offered to the model keep the real names, or it could not call them.

    Risky part: `tool` sits on the per-call path, so a registry name is redacted the first
    time it is shown and then costs one dict lookup. The memo holds only names the turn's
    tools resolved (bounded by the tools the agent has), never a name the model invented.
    """

    __slots__ = ("_models", "_redactor", "_tools", "alias", "model", "provider", "server_address")

    MODEL_MEMO_LIMIT = 64
    """Distinct reported words (response models, finish reasons) remembered; the memo starts
    over beyond it."""

    def __init__(
        self,
        redactor: Redactor,
        *,
        alias: str,
        provider: str,
        model: str,
        server_address: str | None = None,
    ) -> None:
        self._redactor = redactor
        self._tools: dict[str, str] = {}
        self._models: dict[str, str] = {}
        self.alias = redactor.redact_text(alias)
        """`gen_ai.agent.name`, the `invoke_agent {agent}` span name, the log field."""
        self.provider = redactor.redact_text(provider)
        """`gen_ai.provider.name`, the `provider` metric label."""
        self.model = self.response_model(model)
        """The requested model: `chat {model}`, the `model` metric label. Metrics label by it,
        never by the model a response reports: that one is the backend's text, and a
        backend that routes or versions models would grow the label set without bound."""
        self.server_address = (
            redactor.redact_text(server_address) if server_address is not None else None
        )
        """`server.address` on `chat` spans (operator configuration, so a payload too)."""

    def tool(self, name: str) -> str:
        """The shown form of a tool name the registry resolved (not of an invented one)."""
        shown = self._tools.get(name)
        if shown is None:
            shown = self._tools[name] = self._redactor.redact_text(name)
        return shown

    def response_model(self, model: str) -> str:
        """The shown form of a short word a response reported: its model, a finish reason."""
        shown = self._models.get(model)
        if shown is None:
            if len(self._models) >= self.MODEL_MEMO_LIMIT:
                self._models.clear()
            shown = self._models[model] = self._redactor.redact_text(model)
        return shown


@dataclass(kw_only=True)
class ResolvedAgentExecution:
    """Everything stable for one agent, built once and shared by its turns."""

    alias: str
    """Agent alias: `gen_ai.agent.name`, the `invoke_agent {agent}` span name, log field."""

    provider: Provider
    """The provider binding; `turn/loop.py` calls `complete` once per iteration."""

    registry: ToolRegistry
    """The scoped registry of static tools; `turn/specs.py` builds each turn's view from it."""

    mcp_servers: list[McpServer] = field(default_factory=list)
    """MCP servers whose wrappers are offered directly or deferred behind `tool_search`."""

    activated: ActivatedToolSet
    """Deferred tools activated by `tool_search`; read by `turn/specs.py`, written by the tool."""

    approval: ApprovalManager
    """Decides prompt-required calls (`turn/approval_gate.py`); owns the session allowlist."""

    config: RuntimeConfig = field(default_factory=RuntimeConfig)
    """Runtime knobs read by every step."""

    redactor: Redactor
    """The one redactor of every outward surface (events, history, progress, audit, telemetry)."""

    observer: Observer = field(default_factory=NoopObserver)
    """Receives typed observer events; exporters sit behind it."""

    receipts: ReceiptGenerator | None = None
    """Signs successful executions when `config.receipts.enabled`; read by `turn/results.py`."""

    hooks: Hooks = field(default_factory=Hooks)
    """`before_tool_call` / `after_tool_call` hooks; read by `turn/prep.py` and dispatch."""

    system_prompt: str | None = None
    """Optional operator system prompt; the loop appends the tool sections to it."""

    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Backoff before a failed provider request is sent again (`turn/provider_call.py`); how
    many times is the provider's `max_retries`."""

    subagents: Mapping[str, Subagent] = field(default_factory=dict)
    """The agents this one may hand a task to (the `delegate` tool, `turn/delegation.py`), by
    name; the loop offers `delegate` only when there is one. A sub-agent's own execution has
    none: it may not delegate further."""

    switch_model: ModelSwitchCallback | None = None
    """Resolves a model-switch request into the provider that serves it (`turn/model_switch.py`);
    the entry point supplies it and owns what it builds. None: every switch is refused."""

    shown: ShownNames = field(init=False, repr=False)
    """The redacted alias, provider, model and tool names every outward surface shows."""

    def __post_init__(self) -> None:
        self.shown = ShownNames(
            self.redactor,
            alias=self.alias,
            provider=self.provider.name,
            model=self.model,
            server_address=self.provider.server_address,
        )

    @property
    def model(self) -> str:
        """The requested model: the config's `model`, else the provider's."""
        return self.config.model or self.provider.model


class TurnCancellation:
    """A cancel scope for one turn, bound to the task that runs it.

    `cancel()` may be called from any coroutine or from `loop.call_soon_threadsafe`. It marks
    the scope and cancels the bound task; the step that was awaiting converts the resulting
    `CancelledError` into `interrupted` slots (parallel siblings that already finished keep
    their results) and the loop ends the turn as cancelled.
    """

    def __init__(self) -> None:
        self._task: asyncio.Task[Any] | None = None
        self._linked: list[TurnCancellation] = []
        self.requested = False
        """True once `cancel()` was called; sequential dispatch checks it before each call."""

    def bind(self, task: asyncio.Task[Any] | None) -> None:
        """Bind the scope to the task running the turn (done by `run_tool_call_loop`)."""
        self._task = task
        if self.requested and task is not None:
            task.cancel()

    def cancel(self) -> None:
        """Request cancellation of the turn, and of every turn it delegated that still runs."""
        if self.requested:
            return
        self.requested = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
        for nested in tuple(self._linked):
            nested.cancel()

    @contextmanager
    def linked(self) -> Iterator[TurnCancellation]:
        """A scope for a nested (delegated) turn: cancelled whenever this one is.

        Cancelling the nested scope leaves this one alone. The link lasts for the block, so a
        finished sub-agent is not kept. When the nested turn runs in this turn's own task
        (sequential dispatch) both scopes cancel that task; `absorb` consumes both requests.
        """
        nested = TurnCancellation()
        self._linked.append(nested)
        if self.requested:
            nested.cancel()
        try:
            yield nested
        finally:
            self._linked.remove(nested)

    def owns(self, exc: BaseException) -> bool:
        """True when `exc` is the CancelledError this scope caused."""
        return self.requested and isinstance(exc, asyncio.CancelledError)

    def absorb(self) -> None:
        """Consume our cancellation so shielded cleanup and the turn's end can await again."""
        task = asyncio.current_task()
        if task is not None:
            while task.cancelling():
                task.uncancel()

    @contextmanager
    def scope(self) -> Iterator[None]:
        """Bind to the current task for the duration of the block."""
        self.bind(asyncio.current_task())
        try:
            yield
        finally:
            self._task = None


class IterationBudget:
    """The provider calls a turn may still make, shared with the turns it delegates.

    Each iteration of `run_tool_call_loop` reserves one before its provider request (the
    graceful summary at the cap does not). A sub-agent's turn reserves from its parent's
    budget, so the parent and its sub-agents together make at most `total` iterations; when
    the budget runs out, every turn that wants another iteration ends with the max-iteration
    finish (the sub-agent first, then its parent at its next iteration).

    Args:
        total: the cap (`max_tool_iterations` of the turn that made the budget).

    Raises:
        ValueError: `total` is below 1.
    """

    __slots__ = ("total", "used")

    def __init__(self, total: int) -> None:
        if total < 1:
            raise ValueError("an iteration budget needs at least one iteration")
        self.total = total
        """The cap: the number the max-iteration finish quotes."""
        self.used = 0
        """Iterations reserved so far, by every turn that shares the budget."""

    @property
    def remaining(self) -> int:
        """Iterations left to reserve."""
        return self.total - self.used

    def reserve(self) -> bool:
        """Take one iteration; False (and nothing taken) when none is left."""
        if self.used >= self.total:
            return False
        self.used += 1
        return True

    def __repr__(self) -> str:
        return f"IterationBudget(used={self.used}, total={self.total})"


@dataclass(kw_only=True)
class TurnState:
    """Everything that belongs to one user message, built per turn."""

    user_message: str
    """The user's message; `tool_filter_groups` keywords match against it (lowercased)."""

    turn_id: str = field(default_factory=new_turn_id)
    """Correlates spans, logs, events, audit entries and the turn's receipts."""

    channel: str = "cli"
    """The channel the message came in on; delivery defaults and spans read it."""
    conversation_id: str | None = None
    """The conversation this turn continues (server mode); None for a one-off turn. Spans carry
    it, redacted, as `gen_ai.conversation.id` and `session.id`."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    """The provider-visible history (OpenAI-style), system message first when there is one.
    Appended to in place; never copied on the per-call path."""

    cancellation: TurnCancellation = field(default_factory=TurnCancellation)
    """The turn's cancel scope."""

    events: EventSink = field(default_factory=TurnEventLog)
    """Receives TurnEvents (`tool_call`, `tool_result`, `chunk`, `usage`)."""

    iteration: int = 0
    """1-based number of the current provider call."""

    budget: IterationBudget | None = None
    """The iterations this turn may still reserve. None: the loop makes one from
    `max_tool_iterations` when the turn starts; a delegated turn is given its parent's."""

    parent_agent_alias: str | None = None
    """The shown alias of the agent that delegated this turn (None for a top-level turn);
    the loop puts it on the turn's `Correlation`, so every event of the turn carries it."""

    top_turn_id: str | None = None
    """For a delegated turn: the top-level turn it runs inside (the one a client started);
    None for a top-level turn. Approval surfaces list a sub-agent's calls under it."""

    streamed: bool = False
    """Whether the latest provider response's text went out as `chunk` TurnEvents while it
    streamed; the loop then does not send that text again as the answer."""

    prompted_calls: set[str] = field(default_factory=set)
    """Canonical keys of prompt-required `shell` calls already asked in an earlier iteration."""

    loop_detector: LoopDetector | None = None
    """Built by the loop at turn start; records successful calls."""

    correlation: Correlation | None = None
    """Built by the loop at turn start from the turn id, channel and agent alias."""

    steering: SteeringQueue = field(default_factory=SteeringQueue)
    """Messages the user sends while the turn runs (`steer`); the loop appends them as user
    messages at the top of the next iteration (`turn/steering.py`)."""

    model_switch: TurnModelSwitch = field(default_factory=TurnModelSwitch)
    """A model switch a tool or hook asked for, waiting for the next iteration
    (`turn/model_switch.py`)."""

    @property
    def root_turn_id(self) -> str:
        """The top-level turn this turn belongs to: `top_turn_id`, else its own id."""
        return self.top_turn_id or self.turn_id
