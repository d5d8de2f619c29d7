"""Conversations, turns and their event streams: server mode without the HTTP.

One `ServerRuntime` serves one agent. The agent's stable parts (registry, MCP servers, provider
binding, redactor, observer, receipts) are built once, like `run` builds them
(`replay.build_replay`). What belongs to a conversation lives in its `Conversation`: the
history, the approval session (`always` allowlist, scripted answers) and the deferred tools
`tool_search` activated; each turn gets a `ResolvedAgentExecution` that is the agent's with
those three swapped in, so nothing of one conversation is seen by another. A turn that brings
`allowed_tools` also gets the agent's registry narrowed to them (`ToolRegistry.narrowed`): for
that turn only, and it can only remove tools.

A running turn can be steered (`steer`): the message waits on the turn's state and the
model reads it from the turn's next iteration (`turn/steering.py`). A turn's model switch
resolves through the agent's `provider.models` (`model_targets.ModelTargets`, real providers
built once per model and closed with the runtime).

A `TurnHandle` keeps a turn's events (TurnEvents as `--events-out` writes them, plus
`approval_request`, `approval_decided` and a last `turn_end`) so a client that connects late
still gets the turn from its start; `OperatorFeed` fans every event out to the operator page.

Risky part: memory in a process that lives for weeks. Conversations are evicted when idle and
beyond `max_conversations`; a conversation's history keeps at most `max_history_messages`
(oldest whole turns first); finished turns are kept for `keep_finished_turns`; the operator
feed drops a subscriber that falls 1,000 events behind; the audit log keeps the newest entries
in memory (the file has them all).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..approval import ApprovalManager, AuditLog, Backchannel
from ..assembly import unmatched_allowed
from ..config import ApprovalMode
from ..errors import BadInputError
from ..observability.observer import Observer
from ..redaction import Redactor
from ..replay import Replay, build_provider, build_replay, connected_mcp_servers
from ..scenario import Scenario
from ..tools.deferred import ActivatedToolSet
from ..tools.delegate import DELEGATE
from ..tools.registry import ToolRegistry
from ..turn.context import CONVERSATION_ID, ResolvedAgentExecution, TurnState, new_turn_id
from ..turn.loop import run_tool_call_loop
from ..turn.steering import Steered
from .approvals import ApprovalBroker
from .streams import OperatorFeed, TurnHandle

__all__ = [
    "CONVERSATION_ID",
    "Conversation",
    "OperatorFeed",
    "ServeSettings",
    "ServerError",
    "ServerRuntime",
    "TurnHandle",
]


_log = logging.getLogger("zeroclaw_obs.server")


class ServeSettings(BaseModel):
    """The bounds and timeouts of one server (`serve` flags)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_conversations: int = Field(1000, ge=1)
    conversation_idle_s: float = Field(3600.0, gt=0, allow_inf_nan=False)
    max_history_messages: int = Field(200, ge=4)
    max_running_turns: int = Field(256, ge=1)
    max_body_bytes: int = Field(1_048_576, ge=1024)
    drain_timeout_s: float = Field(30.0, ge=0, allow_inf_nan=False)
    keep_finished_turns: int = Field(1000, ge=1)


class ServerError(Exception):
    """A request the runtime refuses: HTTP status, error code, one line naming the field."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclasses.dataclass(eq=False)
class Conversation:
    """What one conversation keeps between its turns; never shared with another."""

    id: str
    approval: ApprovalManager
    activated: ActivatedToolSet = dataclasses.field(default_factory=ActivatedToolSet)
    messages: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """The provider-visible history across turns (the system message first)."""
    turn_starts: list[int] = dataclasses.field(default_factory=list)
    """Where each kept turn's messages begin in `messages`."""
    running: TurnHandle | None = None
    last_used: float = dataclasses.field(default_factory=time.monotonic)

    def trim(self, limit: int) -> None:
        """Drop the oldest whole turns until at most `limit` messages remain (the latest turn
        and the system message always stay)."""
        while len(self.messages) > limit and len(self.turn_starts) > 1:
            start, end = self.turn_starts[0], self.turn_starts[1]
            if start == 0 and self.messages[0].get("role") == "system":
                start = 1  # the first turn installed it before its own messages
            del self.messages[start:end]
            removed = end - start
            self.turn_starts = [start] + [s - removed for s in self.turn_starts[2:]]


class ServerRuntime:
    """Runs the turns of one agent for many conversations (see the module docstring)."""

    def __init__(
        self,
        scenario: Scenario,
        settings: ServeSettings,
        *,
        source: str,
        observer: Observer,
        redactor: Redactor,
        audit: AuditLog,
        receipt_key: bytes | None = None,
        metrics: Callable[[bool], bytes] | None = None,
    ) -> None:
        """Build the agent once.

        Raises:
            ConfigError: a Python tool cannot be imported or a provider key is missing.
        """
        approval = scenario.config.approval
        if approval.mode is ApprovalMode.INTERACTIVE:
            # No terminal in a server: whoever would have been asked is asked on the web.
            approval = approval.model_copy(update={"mode": ApprovalMode.BACKCHANNEL})
            config = scenario.config.model_copy(update={"approval": approval})
            scenario = scenario.model_copy(update={"config": config})
        self.scenario = scenario
        self.settings = settings
        self.source = source
        self.redactor = redactor
        self.audit = audit
        self.metrics = metrics
        self.feed = OperatorFeed()
        self.approvals = ApprovalBroker(redactor, self.turn, self.feed)
        self._replay: Replay = build_replay(
            scenario,
            source=source,
            observer=observer,
            redactor=redactor,
            receipt_key=receipt_key,
            audit=audit,
        )
        self._agent: ResolvedAgentExecution = self._replay.execution
        self._conversations: collections.OrderedDict[str, Conversation] = collections.OrderedDict()
        self._turns: collections.OrderedDict[str, TurnHandle] = collections.OrderedDict()
        self._running: set[TurnHandle] = set()
        self._mcp: contextlib.AsyncExitStack | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self.draining = False

    # -- life ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect the real MCP servers, kept for the process (closed by `aclose`).

        Raises:
            BadInputError: a server could not be started (one line, as `run` says it).
        """
        stack = contextlib.AsyncExitStack()
        servers = await stack.enter_async_context(connected_mcp_servers(self._replay))
        self._agent.mcp_servers.extend(servers)
        if servers:
            try:
                # Bundle patterns for real servers are judged once they list their tools.
                self._replay.check_tool_patterns()
            except BadInputError:
                await stack.aclose()
                raise
        self._mcp = stack
        self._sweeper = asyncio.create_task(self._sweep())

    async def _sweep(self) -> None:
        """Evict idle conversations on a timer too, so an idle server gives memory back
        without waiting for the next turn."""
        period = min(60.0, self.settings.conversation_idle_s / 2)
        while True:
            await asyncio.sleep(period)
            self._evict()

    async def aclose(self) -> None:
        """Cancel what still runs, end every stream, close MCP servers and the provider."""
        self.draining = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        self.cancel_all()
        await self._wait_running(5.0)
        self.feed.close()
        if self._mcp is not None:
            stack, self._mcp = self._mcp, None
            await stack.aclose()
        await self._agent.provider.aclose()
        if self._replay.model_targets is not None:
            await self._replay.model_targets.aclose()

    def cancel_all(self) -> None:
        """Cancel every running turn (each ends as `cancelled`, its open cards closed)."""
        for handle in list(self._running):
            if handle.state is not None:
                handle.state.cancellation.cancel()

    async def drain(self, timeout_s: float) -> None:
        """Take no new turn; give running ones `timeout_s`, then cancel them."""
        self.draining = True
        if not await self._wait_running(timeout_s):
            self.cancel_all()
            await self._wait_running(5.0)
        self.feed.close()

    async def _wait_running(self, timeout_s: float) -> bool:
        tasks = [h.task for h in self._running if h.task is not None]
        if not tasks:
            return True
        _, pending = await asyncio.wait(tasks, timeout=timeout_s)
        return not pending

    # -- turns -----------------------------------------------------------------------------

    @property
    def running_turns(self) -> int:
        return len(self._running)

    def turn(self, turn_id: str) -> TurnHandle | None:
        """A running or recently finished turn."""
        return self._turns.get(turn_id)

    def running(self) -> list[TurnHandle]:
        """The running turns, oldest first."""
        return [h for h in self._turns.values() if not h.done]

    def start_turn(
        self,
        message: str,
        conversation_id: str | None,
        allowed_tools: Sequence[str] | None = None,
    ) -> TurnHandle:
        """Start a turn of `conversation_id` (a new conversation when None).

        Args:
            message: the user message.
            conversation_id: the conversation to continue, None for a new one.
            allowed_tools: narrow this turn to the tools these names or patterns match
                (`ToolPolicy.narrowed`); None leaves the agent's tools as they are.

        Raises:
            ServerError: draining (503), too many running turns (429), a malformed id or an
                `allowed_tools` entry that matches no tool the agent may use (400), or a turn
                of that conversation still running (409).
        """
        if self.draining:
            raise ServerError(503, "draining", "the server is shutting down")
        if len(self._running) >= self.settings.max_running_turns:
            raise ServerError(429, "too_many_turns", "too many turns are running; retry later")
        registry = self._narrowed_registry(allowed_tools)
        conversation = self._conversation(conversation_id)
        if conversation.running is not None:
            raise ServerError(409, "conversation_busy", "a turn of this conversation is running")
        handle = TurnHandle(new_turn_id(), conversation.id, self.feed)
        execution = dataclasses.replace(
            self._agent,
            provider=self._turn_provider(),
            approval=conversation.approval,
            activated=conversation.activated,
            registry=registry,
        )
        conversation.turn_starts.append(len(conversation.messages))
        state = TurnState(
            user_message=message,
            turn_id=handle.turn_id,
            channel=self._channel(),
            conversation_id=conversation.id,
            messages=conversation.messages,
            events=handle.on_turn_event,
        )
        handle.state = state
        conversation.running = handle
        self._remember(handle)
        self._running.add(handle)
        handle.publish(
            {
                "type": "turn_start",
                "conversation_id": conversation.id,
                "message": self.redactor.redact_text(message),
            }
        )
        handle.task = asyncio.create_task(self._run(handle, conversation, execution, state))
        return handle

    async def _run(
        self,
        handle: TurnHandle,
        conversation: Conversation,
        execution: ResolvedAgentExecution,
        state: TurnState,
    ) -> None:
        outcome, text = "error", "Turn failed."
        try:
            await self._reconnect_lost_servers()
            result = await run_tool_call_loop(execution, state)
            outcome, text = result.kind.value, self.redactor.redact_text(result.text)
        except BadInputError as exc:  # a scripted provider ran out of responses
            text = self.redactor.redact_text(str(exc).splitlines()[0])
        except asyncio.CancelledError:
            outcome, text = "cancelled", "Turn cancelled."
        except Exception as exc:
            # The type only: a message may quote a payload.
            _log.error("turn %s failed: %s", handle.turn_id, type(exc).__name__)
        finally:
            if execution.provider is not self._agent.provider:
                with contextlib.suppress(Exception):
                    await execution.provider.aclose()
            handle.finish(outcome, text)
            handle.state = None
            conversation.running = None
            conversation.last_used = time.monotonic()
            conversation.trim(self.settings.max_history_messages)
            self._running.discard(handle)

    def steer(self, turn_id: str, message: str) -> int:
        """Queue `message` for the running turn `turn_id`: the model reads it, as a user
        message, from the turn's next iteration (`turn/steering.py`).

        Returns:
            How many messages of the turn now wait for its next iteration.

        Raises:
            ServerError: no such turn (404), the turn has finished (409), or too many
                messages already wait for it (429).
        """
        handle = self.turn(turn_id)
        if handle is None:
            raise ServerError(404, "not_found", "no turn with this id")
        state = handle.state
        steered = (
            Steered.TURN_ENDED if handle.done or state is None else state.steering.steer(message)
        )
        if steered is Steered.TURN_ENDED:
            raise ServerError(409, "turn_finished", "the turn has finished")
        if steered is Steered.QUEUE_FULL:
            raise ServerError(
                429, "too_many_steering", "too many steering messages wait for this turn"
            )
        assert state is not None
        return state.steering.pending

    def _narrowed_registry(self, allowed_tools: Sequence[str] | None) -> ToolRegistry:
        """The agent's registry, narrowed for one turn when it brings `allowed_tools`.

        Raises:
            ServerError: an entry matches no tool the agent may use (400, named by position).
        """
        registry = self._agent.registry
        if allowed_tools is None:
            return registry
        index = unmatched_allowed(
            registry.policy,
            list(registry),
            self._agent.mcp_servers,
            allowed_tools,
            turn_tools=[DELEGATE] if self._agent.subagents else [],
        )
        if index is not None:
            raise ServerError(
                400, "bad_request", f"allowed_tools.{index}: matches no tool this agent may use"
            )
        return registry.narrowed(allowed_tools)

    async def _reconnect_lost_servers(self) -> None:
        for server in self._agent.mcp_servers:
            connection = server.connection
            if connection is not None and not connection.available:
                await connection.ensure_connected()

    def _turn_provider(self) -> Any:
        """A scripted provider replays its responses from the start for every turn; a real
        one is shared (one pooled client)."""
        if self.scenario.provider.real:
            return self._agent.provider
        return build_provider(self.scenario.provider, self.scenario.responses, source=self.source)

    def _channel(self) -> str:
        channel = self.scenario.agent.channel
        return "http" if channel == "cli" else channel

    def _remember(self, handle: TurnHandle) -> None:
        self._turns[handle.turn_id] = handle
        while len(self._turns) > self.settings.keep_finished_turns:
            oldest = next(iter(self._turns.values()))
            if not oldest.done:
                break  # running turns are never forgotten; the bound holds once they end
            self._turns.popitem(last=False)

    # -- conversations ---------------------------------------------------------------------

    @property
    def conversation_count(self) -> int:
        return len(self._conversations)

    def _conversation(self, conversation_id: str | None) -> Conversation:
        if conversation_id is not None and not CONVERSATION_ID.fullmatch(conversation_id):
            raise ServerError(
                400,
                "bad_request",
                "conversation_id: must be 1-128 characters of A-Z a-z 0-9 . _ : -",
            )
        self._evict()
        cid = conversation_id or new_turn_id()
        conversation = self._conversations.get(cid)
        if conversation is None:
            conversation = Conversation(cid, approval=self._approval_session())
            self._conversations[cid] = conversation
        self._conversations.move_to_end(cid)
        conversation.last_used = time.monotonic()
        return conversation

    def _approval_session(self) -> ApprovalManager:
        config = self._agent.config.approval  # the risk profile's (`profile_approval`)
        backchannel = Backchannel(self.approvals.ask, config.backchannel_timeout_s, surface="web")
        return ApprovalManager(config, audit=self.audit, backchannel=backchannel)

    def _evict(self) -> None:
        """Drop idle conversations, then the least recently used idle ones beyond the bound."""
        now = time.monotonic()
        idle_s = self.settings.conversation_idle_s
        for cid, conversation in list(self._conversations.items()):
            if conversation.running is None and now - conversation.last_used > idle_s:
                del self._conversations[cid]
        # Room for the one a caller is about to add (the timer asks for none, but one spare
        # slot below the bound costs nothing).
        excess = len(self._conversations) - self.settings.max_conversations + 1
        for cid, conversation in list(self._conversations.items()):
            if excess <= 0:
                break
            if conversation.running is None:
                del self._conversations[cid]
                excess -= 1

    def history(self, conversation_id: str) -> list[dict[str, Any]] | None:
        """A conversation's history (tests and debugging); None when unknown or evicted."""
        conversation = self._conversations.get(conversation_id)
        return None if conversation is None else json.loads(json.dumps(conversation.messages))
