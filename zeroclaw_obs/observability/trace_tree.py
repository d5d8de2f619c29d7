"""The terminal trace view: a turn as a tree, readable without any backend.

`TraceTreeObserver` keeps a small model of each turn from observer events (no OpenTelemetry
needed) and `render()` prints it after the answer:

    invoke_agent demo  2.41s  final  4 iterations  trace 5b8e…
    ├── iteration 1
    │   ├── chat scripted-model  0.00s  64→73 tokens
    │   ├── execute_tool get_weather  0.45s  success  [receipt]
    │   └── execute_tool read_config  0.12s  success  [receipt]  3 redactions
    └── iteration 2
        ├── await_approval shell  0.00s  yes (scenario)
        └── execute_tool shell  0.80s  success  [receipt]

The ids shown are those of the exported spans (when a span observer is given), so a developer
can jump from the terminal to the same trace in Jaeger. Everything shown comes from observer
events, whose payloads are already redacted; the tree shows no payloads at all. Names in it
(the agent, the model, a tool the model invented) are still chosen by someone else, so each
line is passed through `_terminal.printable`: terminal and bidi controls show as escapes.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._terminal import printable
from .events import (
    NO_IDS,
    AgentEnd,
    AgentStart,
    ApprovalDecision,
    EventIds,
    LlmResponse,
    LoopDetection,
    ObserverEvent,
    ToolCall,
)

if TYPE_CHECKING:
    from .signal_queue import Queued, SignalQueue

__all__ = ["TraceTreeObserver"]

MAX_TURNS = 64
MAX_PENDING = 256
"""Events queued before they are applied even though nobody draws the tree yet."""
APPLY_WAIT_S = 1.0
"""The longest drawing waits for a signal queue to apply what it holds."""

ToolFacts = tuple[str, float, str, bool, int, int]
"""A tool call's line before it is drawn: tool, seconds, outcome, receipt, redactions, chars
cut (`_tool_line`)."""


@dataclass
class _Iteration:
    number: int
    lines: list[tuple[int, str | ToolFacts]] = field(default_factory=list)
    """(start time ns, text or a tool call's facts) so lines print in the order they started."""


@dataclass
class _Turn:
    agent: str
    start_ns: int
    iterations: dict[int, _Iteration] = field(default_factory=dict)
    header: str = ""
    trace_id: str | None = None
    parent: str | None = None
    """The agent that delegated this turn (`parent_agent_alias`); None for a top-level turn."""

    def iteration(self, number: int) -> _Iteration:
        if number not in self.iterations:
            self.iterations[number] = _Iteration(number)
        return self.iterations[number]


class TraceTreeObserver:
    """Collects turns from observer events; `render()` draws them. Never raises.

    The turn's path only queues each event the tree draws with its ids (one append); they are
    applied, in order and in one go, when the tree is drawn or when `MAX_PENDING` wait (the
    events hold their payloads: a memory bound).

    Args:
        queue: the queue that metrics, log lines and the trace tree share
            (`signal_queue.SignalQueue`): the tree joins it, its worker applies the events,
            and drawing applies what it holds first; then the queue, not this observer, is
            the chain's signal.
    """

    lost_as = None
    """A terminal view: events the signal queue loses are counted for the other signals."""

    def __init__(self, queue: SignalQueue | None = None) -> None:
        self._turns: dict[str, _Turn] = {}
        # By exact type, like the other observers: the events the tree ignores (a tool call's
        # start, a provider request) cost one lookup.
        self._handlers: dict[type, Callable[[Any, _Turn, EventIds], None]] = {
            LlmResponse: self._on_llm_response,
            ToolCall: self._on_tool_call,
            ApprovalDecision: self._on_approval,
            LoopDetection: self._on_loop_detection,
            AgentEnd: self._on_agent_end,
        }
        self._drawn = (AgentStart, *self._handlers)
        self._pending: deque[tuple[ObserverEvent, EventIds]] = deque()
        self._applying = threading.Lock()
        self._queue = queue
        if queue is not None:
            queue.add(self)

    def kinds(self) -> Iterable[type]:
        """The event types it draws (`QueuedSignal`)."""
        return self._drawn

    def apply(self, batch: Sequence[Queued]) -> None:
        """Apply the events of a signal queue's batch that it draws (`QueuedSignal`)."""
        drawn = self._drawn
        with self._applying:
            for _, event, ids in batch:
                if type(event) in drawn:
                    try:
                        self._record(event, ids)
                    except Exception:  # a view must never break a turn
                        continue

    def on_event(self, event: ObserverEvent) -> None:
        """Draw `event` (without the trace id: that comes with `record`)."""
        self.record(event, NO_IDS)

    def record(self, event: ObserverEvent, ids: EventIds) -> None:
        """Draw `event`; the turn's header shows the trace id in `ids` (the chain's span step)."""
        if type(event) in self._drawn:
            pending = self._pending
            pending.append((event, ids))  # events are read-only, ids are strings
            if len(pending) >= MAX_PENDING:
                self._apply()

    def _apply(self) -> None:
        """Apply the queued events, in order (one thread at a time)."""
        with self._applying:
            pending = self._pending
            while pending:
                event, ids = pending.popleft()
                try:
                    self._record(event, ids)
                except Exception:  # a view must never break a turn
                    continue

    def _record(self, event: ObserverEvent, ids: EventIds) -> None:
        turn_id = event.correlation.turn_id
        if isinstance(event, AgentStart):
            if len(self._turns) >= MAX_TURNS:
                self._turns.pop(next(iter(self._turns)))
            c = event.correlation
            self._turns[turn_id] = _Turn(c.agent_alias, event.time_ns, parent=c.parent_agent_alias)
            return
        handler = self._handlers.get(type(event))
        turn = self._turns.get(turn_id) if handler is not None else None
        if handler is not None and turn is not None:
            handler(event, turn, ids)

    def _on_llm_response(self, event: LlmResponse, turn: _Turn, ids: EventIds) -> None:
        tokens = f"  {event.input_tokens}→{event.output_tokens} tokens"
        status = "" if event.success else f"  failed ({event.error_type or 'provider_error'})"
        retries = event.attempts - 1
        if retries > 0:
            status += f"  {retries} retr{'ies' if retries != 1 else 'y'}"
        turn.iteration(event.iteration).lines.append(
            (
                event.time_ns - int(event.duration_s * 1e9),
                f"chat {event.model}  {event.duration_s:.2f}s{tokens}{status}",
            )
        )

    def _on_tool_call(self, event: ToolCall, turn: _Turn, ids: EventIds) -> None:
        # The facts only (formatted when drawn): one on every call of the turn.
        facts = (
            event.tool,
            event.duration_s,
            event.outcome.value,
            bool(event.receipt),
            sum(event.redaction_counts.values()) if event.redaction_counts else 0,
            event.truncated_chars,
        )
        turn.iteration(event.iteration).lines.append((event.start_time_ns, facts))

    def _on_approval(self, event: ApprovalDecision, turn: _Turn, ids: EventIds) -> None:
        turn.iteration(event.iteration).lines.append(
            (
                event.wait_start_ns,
                f"await_approval {event.tool}  {event.wait_s:.2f}s  "
                f"{event.decision} ({event.surface})",
            )
        )

    def _on_loop_detection(self, event: LoopDetection, turn: _Turn, ids: EventIds) -> None:
        turn.iteration(event.iteration).lines.append(
            (event.time_ns, f"loop detection {event.kind} ({event.severity})")
        )

    def _on_agent_end(self, event: AgentEnd, turn: _Turn, ids: EventIds) -> None:
        turn_id = event.correlation.turn_id
        turn.trace_id = ids.root[0] if ids.root else None
        trace = f"  trace {turn.trace_id}" if turn.trace_id else f"  turn {turn_id}"
        delegated = f"  delegated by {turn.parent}" if turn.parent is not None else ""
        turn.header = (
            f"invoke_agent {turn.agent}  {event.duration_s:.2f}s  {event.outcome.value}  "
            f"{event.iterations} iteration{'s' if event.iterations != 1 else ''}{trace}"
            f"{delegated}"
        )

    def render(self, turn_id: str | None = None) -> str:
        """The tree of one turn, or "" when there is none.

        By default the latest top-level turn, followed (indented) by the sub-agent turns it
        delegated, which started after it.
        """
        if self._queue is not None:
            self._queue.force_flush(APPLY_WAIT_S)
        self._apply()
        if not self._turns:
            return ""
        if turn_id:
            return self._draw(self._turns[turn_id])
        turns = list(self._turns.values())
        top = max((i for i, t in enumerate(turns) if t.parent is None), default=len(turns) - 1)
        nested = [t for t in turns[top + 1 :] if t.parent is not None]
        drawn = [self._draw(turns[top])]
        drawn += ["\n".join("    " + line for line in self._draw(t).split("\n")) for t in nested]
        return "\n".join(drawn)

    def _draw(self, turn: _Turn) -> str:
        out = [turn.header or f"invoke_agent {turn.agent}  (running)"]
        iterations = [turn.iterations[n] for n in sorted(turn.iterations)]
        for i, iteration in enumerate(iterations):
            last = i == len(iterations) - 1
            out.append(("└── " if last else "├── ") + f"iteration {iteration.number}")
            lines = [
                text if type(text) is str else _tool_line(*text)
                for _, text in sorted(iteration.lines, key=lambda item: item[0])
            ]
            for j, text in enumerate(lines):
                stem = "    " if last else "│   "
                out.append(stem + ("└── " if j == len(lines) - 1 else "├── ") + text)
        return "\n".join(printable(line) for line in out)


def _tool_line(
    tool: str, duration_s: float, outcome: str, receipt: bool, redactions: int, truncated: int
) -> str:
    parts = [f"execute_tool {tool}", f"{duration_s:.2f}s", outcome]
    if receipt:
        parts.append("[receipt]")
    if redactions:
        parts.append(f"{redactions} redaction{'s' if redactions != 1 else ''}")
    if truncated:
        parts.append(f"truncated {truncated} chars")
    return "  ".join(parts)
