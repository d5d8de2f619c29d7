"""`ServerRuntime` in-process: conversations, bounds and cancellation, without HTTP."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_obs.approval import AuditLog, Decision
from zeroclaw_obs.errors import ConfigError
from zeroclaw_obs.observability.events import LlmRequest
from zeroclaw_obs.observability.observer import NoopObserver
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.scenario import parse_scenario
from zeroclaw_obs.server.runtime import ServerError, ServerRuntime, ServeSettings
from zeroclaw_obs.server.streams import FEED_LAG_LIMIT, OperatorFeed, TurnHandle

from ..conftest import RecordingObserver

ANSWER = {
    "user": "hello",
    "agent": {"alias": "ops"},
    "system_prompt": "You are terse.",
    "tools": [
        {
            "name": "lookup",
            "description": "Look a word up",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            "responses": [{"default": {"output": "found"}}],
        }
    ],
    "config": {"approval": {"auto_approve": ["lookup"]}},
    "responses": [
        {"tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]},
        {"text": "done"},
    ],
}


def runtime(data: dict[str, Any] = ANSWER, **settings: Any) -> ServerRuntime:
    return ServerRuntime(
        parse_scenario(data, "agent.yaml"),
        ServeSettings(**settings),
        source="agent.yaml",
        observer=NoopObserver(),
        redactor=Redactor(),
        audit=AuditLog(keep_last=10),
    )


async def finish(handle: TurnHandle) -> TurnHandle:
    assert handle.task is not None
    await handle.task
    return handle


class TestConversations:
    async def test_history_carries_over_and_stays_bounded(self):
        """A conversation's turns share one history; the oldest whole turns go first and the
        system message stays."""
        server = runtime(max_history_messages=8)
        first = await finish(server.start_turn("one", "c1"))
        after_one = server.history("c1")
        for message in ("two", "three"):
            await finish(server.start_turn(message, "c1"))
        history = server.history("c1")

        assert first.done and after_one is not None and history is not None
        assert 5 == len(after_one)  # system, user, assistant call, tool result, answer
        assert len(history) <= 8
        assert "system" == history[0]["role"]
        assert ["three"] == [m["content"] for m in history if m["role"] == "user"]
        assert 1 == sum(m["role"] == "system" for m in history)

    async def test_conversations_never_share_history(self):
        server = runtime()
        await finish(server.start_turn("alpha", "a"))
        await finish(server.start_turn("beta", "b"))

        users = {
            cid: [m["content"] for m in server.history(cid) or [] if m["role"] == "user"]
            for cid in ("a", "b")
        }
        assert {"a": ["alpha"], "b": ["beta"]} == users

    async def test_idle_conversations_are_evicted(self):
        server = runtime(conversation_idle_s=0.05)
        await finish(server.start_turn("one", "old"))
        await asyncio.sleep(0.1)
        await finish(server.start_turn("two", "new"))

        assert None is server.history("old")
        assert 1 == server.conversation_count

    async def test_beyond_the_bound_the_least_recent_idle_one_goes(self):
        server = runtime(max_conversations=2)
        for cid in ("a", "b", "c"):
            await finish(server.start_turn("hi", cid))

        assert [None, True, True] == [server.history(cid) and True for cid in ("a", "b", "c")]

    async def test_a_malformed_conversation_id_is_refused(self):
        server = runtime()
        with pytest.raises(ServerError) as info:
            server.start_turn("hi", "has space")
        assert (400, "bad_request") == (info.value.status, info.value.code)


class TestTurns:
    async def test_too_many_running_turns_is_429(self):
        server = runtime(max_running_turns=1)
        running = server.start_turn("one", None)
        with pytest.raises(ServerError) as info:
            server.start_turn("two", None)
        await finish(running)

        assert (429, "too_many_turns") == (info.value.status, info.value.code)

    async def test_a_draining_server_takes_no_turn(self):
        server = runtime()
        await server.drain(1.0)
        with pytest.raises(ServerError) as info:
            server.start_turn("hi", None)
        assert (503, "draining") == (info.value.status, info.value.code)

    async def test_finished_turns_are_kept_up_to_the_bound(self):
        server = runtime(keep_finished_turns=2)
        handles = [await finish(server.start_turn("hi", None)) for _ in range(3)]

        assert [None, "final", "final"] == [
            (server.turn(h.turn_id) or TurnHandle("", "", OperatorFeed())).outcome for h in handles
        ]

    async def test_cancel_all_closes_every_open_card(self):
        """A turn waiting for an operator is cancelled: its card closes, the approval leaves."""
        data = {**ANSWER, "config": {"approval": {"mode": "backchannel"}}}
        server = runtime(data)
        handle = server.start_turn("hi", None)
        while not server.approvals.pending():
            await asyncio.sleep(0.01)
        server.cancel_all()
        await finish(handle)

        kinds = [e["type"] for e in handle.events]
        assert "cancelled" == handle.outcome
        assert kinds.count("tool_call") == kinds.count("tool_result")
        assert [] == server.approvals.pending()
        assert (
            "runtime"
            == next(e for e in handle.events if e["type"] == "approval_decided")["surface"]
        )

    async def test_an_operator_name_is_redacted(self):
        data = {**ANSWER, "config": {"approval": {"mode": "backchannel"}}}
        server = runtime(data)
        handle = server.start_turn("hi", None)
        while not (pending := server.approvals.pending()):
            await asyncio.sleep(0.01)
        token = "ghp_" + "a1B2c3D4e5" * 4
        server.approvals.decide(pending[0]["approval_id"], Decision.YES, operator=token)
        await finish(handle)

        decided = next(e for e in handle.events if e["type"] == "approval_decided")
        assert token not in decided["decided_by"]
        assert token not in str([entry for entry in server.audit.entries])


class TestOperatorFeed:
    async def test_a_subscriber_that_falls_behind_is_dropped(self):
        feed = OperatorFeed()
        turn = TurnHandle("t", "c", feed)
        stream = feed.follow([])
        first = asyncio.ensure_future(stream.__anext__())
        await asyncio.sleep(0)
        for n in range(FEED_LAG_LIMIT + 5):
            turn.publish({"type": "chunk", "text": str(n)})
        received = [await first]
        received += [event async for event in stream]

        assert FEED_LAG_LIMIT >= len(received)
        assert {"type": "chunk", "text": "0", "turn_id": "t"} == received[0]

    async def test_a_new_subscriber_replays_running_turns(self):
        feed = OperatorFeed()
        turn = TurnHandle("t", "c", feed)
        turn.publish({"type": "turn_start"})
        stream = feed.follow([turn])

        assert {"type": "turn_start", "turn_id": "t"} == await stream.__anext__()
        await stream.aclose()


class TestSweeper:
    async def test_idle_conversations_go_without_new_traffic(self):
        """An idle server gives memory back on its own timer, not only at the next turn."""
        server = runtime(conversation_idle_s=0.1)
        await server.start()
        try:
            await finish(server.start_turn("one", "old"))
            assert 1 == server.conversation_count
            await asyncio.sleep(0.4)
            count = server.conversation_count
        finally:
            await server.aclose()

        assert 0 == count


DEFERRED = {
    "user": "storms?",
    "config": {"approval": {"auto_approve": ["tool_search", "wx__storm_warnings"]}},
    "mcp_servers": [
        {
            "name": "wx",
            "deferred": True,
            "tools": [
                {
                    "name": "storm_warnings",
                    "description": "Storm warnings for a region",
                    "parameters": {"type": "object", "properties": {"region": {"type": "string"}}},
                    "responses": [{"default": {"output": "gale"}}],
                }
            ],
        }
    ],
    "responses": [
        {"tool_calls": [{"name": "storm_warnings", "arguments": {"region": "N"}}]},
        {"tool_calls": [{"name": "tool_search", "arguments": {"query": "storm"}}]},
        {"text": "done"},
    ],
}


class TestActivatedTools:
    async def test_tools_activated_in_a_conversation_stay_in_it_only(self):
        """`tool_search` activates for its conversation's later turns, never for another's."""
        server = runtime(DEFERRED)

        def first_outcome(handle: TurnHandle) -> str:
            return next(e for e in handle.events if e["type"] == "tool_result")["outcome"]

        first = await finish(server.start_turn("one", "a"))
        again = await finish(server.start_turn("two", "a"))
        other = await finish(server.start_turn("one", "b"))

        assert ["unknown", "success", "unknown"] == [
            first_outcome(h) for h in (first, again, other)
        ]

    async def test_a_narrowed_turn_cannot_reach_what_the_conversation_activated(self):
        """A turn's `allowed_tools` also removes deferred tools activated by earlier turns of
        its conversation; the next turn without it has them back."""
        server = runtime({**DEFERRED, "tools": ANSWER["tools"]})

        def first_outcome(handle: TurnHandle) -> str:
            return next(e for e in handle.events if e["type"] == "tool_result")["outcome"]

        first = await finish(server.start_turn("one", "a"))
        narrowed = await finish(server.start_turn("two", "a", allowed_tools=["lookup"]))
        again = await finish(server.start_turn("three", "a"))

        assert ["unknown", "excluded", "success"] == [
            first_outcome(h) for h in (first, narrowed, again)
        ]


READ_ONLY_AGENT = {
    "user": "hello",
    "agent": {"risk_profile": "read_only"},
    "tools": [
        {"name": "lookup", "read_only": True, "responses": [{"default": {"output": "found"}}]},
        {"name": "deploy", "responses": [{"default": {"output": "deployed"}}]},
    ],
    # Without the profile the session would ask about `lookup` and time out.
    "config": {"approval": {"auto_approve": [], "backchannel_timeout_s": 0.2}},
    "responses": [
        {"tool_calls": [{"id": "l", "name": "lookup"}, {"id": "d", "name": "deploy"}]},
        {"text": "done"},
    ],
}


class TestRiskProfile:
    async def test_every_conversation_runs_under_the_profile(self):
        """The agent's risk profile reaches each conversation's approval session: a read-only
        tool runs unasked (the config alone would ask), any other is not available."""
        server = runtime(READ_ONLY_AGENT)

        handle = await finish(server.start_turn("go", None))

        results = {e["id"]: e["output"] for e in handle.events if e["type"] == "tool_result"}
        assert {"l": "found", "d": "Tool not available in this turn: deploy"} == results

    async def test_allowed_tools_cannot_bring_back_what_the_profile_removed(self):
        """Narrowing only removes: a tool the profile excluded is not one the agent may use."""
        server = runtime(READ_ONLY_AGENT)

        with pytest.raises(ServerError) as info:
            server.start_turn("go", None, allowed_tools=["deploy"])

        assert (400, "allowed_tools.0: matches no tool this agent may use") == (
            info.value.status,
            info.value.message,
        )
        assert 0 == server.conversation_count

    async def test_allowed_tools_may_keep_delegate_where_there_are_sub_agents(self):
        """`delegate` is a tool the agent may use when its file has `agents`, and only then."""
        lead = runtime({**READ_ONLY_AGENT, "agents": {"helper": {"description": "Helps"}}})
        plain = runtime(READ_ONLY_AGENT)

        await finish(lead.start_turn("go", None, allowed_tools=["lookup", "delegate"]))
        with pytest.raises(ServerError) as info:
            plain.start_turn("go", None, allowed_tools=["lookup", "delegate"])

        assert 1 == lead.conversation_count
        assert "allowed_tools.1: matches no tool this agent may use" == info.value.message


TOOLBOX = Path(__file__).parents[1] / "tools" / "mcp_servers" / "toolbox.py"


class TestBundles:
    async def test_a_pattern_no_tool_of_a_real_server_matches_stops_the_start(self):
        """Judged once the server has listed its tools: `serve` does not start (exit 2)."""
        data = {
            **ANSWER,
            "mcp_servers": [{"name": "box", "command": sys.executable, "args": [str(TOOLBOX)]}],
            "bundles": {"b": {"tools": ["lookup", "box__nope"]}},
            "agent": {"bundles": ["b"]},
        }
        server = runtime(data)

        with pytest.raises(ConfigError, match=r"bundles.<key 1>.tools.1: matches no tool"):
            await server.start()
        await server.aclose()


SWITCHING = {
    **ANSWER,
    "provider": {"model": "small", "models": ["big"]},
    "python_tools": ["tests.server.switch_tools:use_model"],
    "config": {"approval": {"auto_approve": ["use_model"]}},
    "responses": [
        {"tool_calls": [{"name": "use_model", "arguments": {"model": "big"}}]},
        {"text": "done"},
    ],
}


class TestModelSwitchAndSteering:
    async def test_each_turn_switches_on_its_own_script(self):
        """The runtime's turn runner goes on with the switched model: each turn replays its
        script from the start, on the file's model first, then on the one it switched to;
        the agent itself never changes."""
        recording = RecordingObserver()
        server = ServerRuntime(
            parse_scenario(SWITCHING, "agent.yaml"),
            ServeSettings(),
            source="agent.yaml",
            observer=recording,
            redactor=Redactor(),
            audit=AuditLog(keep_last=10),
        )
        first = await finish(server.start_turn("one", "c1"))
        second = await finish(server.start_turn("two", "c2"))
        assert ("final", "final") == (first.outcome, second.outcome)
        assert ["small", "big", "small", "big"] == [e.model for e in recording.of(LlmRequest)]
        assert "small" == server._agent.provider.model
        await server.aclose()

    async def test_steering_a_running_turn(self):
        """`steer` queues for the running turn, which reads it at its next iteration; a
        finished or unknown turn is refused with its status."""
        slow = {
            **ANSWER,
            "tools": [
                {
                    **ANSWER["tools"][0],
                    "responses": [{"default": {"output": "found", "delay_ms": 300}}],
                }
            ],
        }
        server = runtime(slow)
        handle = server.start_turn("one", "c1")
        await asyncio.sleep(0.1)
        assert 1 == server.steer(handle.turn_id, "also check y")
        await finish(handle)
        users = [m["content"] for m in server.history("c1") or [] if m["role"] == "user"]
        assert ["one", "also check y"] == users
        with pytest.raises(ServerError) as finished:
            server.steer(handle.turn_id, "late")
        with pytest.raises(ServerError) as unknown:
            server.steer("nope", "hi")
        assert [(409, "turn_finished"), (404, "not_found")] == [
            (e.value.status, e.value.code) for e in (finished, unknown)
        ]


DELEGATING = {
    "user": "hello",
    "agent": {"alias": "lead"},
    "tools": [{"name": "deploy", "responses": [{"default": {"output": "deployed"}}]}],
    "config": {"approval": {"mode": "backchannel", "auto_approve": ["delegate"]}},
    "agents": {"ops": {"description": "Deploys"}},
    "responses": [
        {
            "tool_calls": [
                {"id": "d1", "name": "delegate", "arguments": {"agent": "ops", "task": "go"}}
            ]
        },
        {"tool_calls": [{"id": "s1", "name": "deploy", "arguments": {}}]},
        {"text": "ops done"},
        {"text": "lead done"},
    ],
}


async def pending_of(server: ServerRuntime, handle: TurnHandle) -> list[dict[str, Any]]:
    """The pending approvals once one is listed; fails if the turn ends first."""
    while not (pending := server.approvals.pending()):
        assert not handle.done, f"the turn ended without an approval listed: {handle.events}"
        await asyncio.sleep(0.01)
    return pending


class TestSubAgentApprovals:
    async def test_listed_and_decided_under_the_top_level_turn(self):
        """A sub-agent's call that waits for an operator is listed under the turn the client
        started (the one `/v1/turns` knows), with the nested turn and the sub-agent as extra
        fields; its `approval_request` is on that turn's stream; a yes runs the call."""
        server = runtime(DELEGATING)
        handle = server.start_turn("go", None)
        pending = await pending_of(server, handle)
        entry = pending[0]
        assert server.approvals.decide(entry["approval_id"], Decision.YES, operator="alice")
        await finish(handle)

        assert handle.turn_id == entry["turn_id"]
        assert server.turn(entry["turn_id"]) is handle
        assert ("deploy", "ops") == (entry["tool"], entry["agent"])
        assert entry["nested_turn_id"] not in (None, handle.turn_id)
        requests = [e for e in handle.events if e["type"] == "approval_request"]
        assert [entry["approval_id"]] == [e["approval_id"] for e in requests]
        assert ("ops", entry["nested_turn_id"]) == (
            requests[0]["agent"],
            requests[0]["nested_turn_id"],
        )
        decided = next(e for e in handle.events if e["type"] == "approval_decided")
        assert ("yes", "web") == (decided["decision"], decided["surface"])
        assert ("final", "lead done") == (handle.outcome, handle.text)
        results = {e["id"]: e["output"] for e in handle.events if e["type"] == "tool_result"}
        assert "ops done" == results["d1"]

    async def test_a_top_level_call_has_no_nested_fields(self):
        data = {**ANSWER, "config": {"approval": {"mode": "backchannel"}}}
        server = runtime(data)
        handle = server.start_turn("hi", None)
        pending = await pending_of(server, handle)
        server.approvals.decide(pending[0]["approval_id"], Decision.YES)
        await finish(handle)

        assert handle.turn_id == pending[0]["turn_id"]
        assert (None, None) == (pending[0]["nested_turn_id"], pending[0]["agent"])
