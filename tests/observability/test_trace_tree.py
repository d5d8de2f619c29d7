"""The terminal trace view: provider calls in the tree, with their retries and failures."""

from __future__ import annotations

from zeroclaw_obs.observability.trace_tree import MAX_PENDING, TraceTreeObserver

from ..builders import PlayedProvider, answer, build, call, http
from ..conftest import make_replay


class TestChatLines:
    async def test_retries_are_counted_on_the_chat_line(self):
        """A call that needed retries says how many, after its tokens."""
        tree = TraceTreeObserver()
        provider = PlayedProvider(http(503), http(503), answer())
        await build(provider, observer=tree).run()
        (chat,) = [line for line in tree.render().splitlines() if "chat " in line]
        assert chat.endswith("10→5 tokens  2 retries")

    async def test_a_failed_call_names_its_error_type(self):
        """The last error's type is on the line of the call that failed."""
        tree = TraceTreeObserver()
        provider = PlayedProvider(http(429, "rate_limit_error"), max_retries=0)
        await build(provider, observer=tree).run()
        (chat,) = [line for line in tree.render().splitlines() if "chat " in line]
        assert chat.endswith("0→0 tokens  failed (rate_limit_error)")
        assert tree.render().splitlines()[0].startswith("invoke_agent ")


class TestDelegatedTurns:
    async def test_the_lead_turn_is_drawn_with_its_sub_agent_under_it(self):
        """By default the tree is the latest top-level turn, then, indented, the sub-agent
        turns it delegated (a sub-agent started later would otherwise be "the latest")."""
        tree = TraceTreeObserver()
        data = {
            "agent": {"alias": "lead"},
            "user": "go",
            "config": {"approval": {"autonomy": "full"}},
            "tools": [{"name": "echo", "responses": [{"default": {"output": "e"}}]}],
            "agents": {"researcher": {}},
            "responses": [
                {"tool_calls": [call("delegate", "d1", agent="researcher", task="t")]},
                {"tool_calls": [call("echo", "s1")]},
                {"text": "x"},
                {"text": "done"},
            ],
        }
        await make_replay(data, observer=tree).run()

        lines = tree.render().splitlines()
        assert lines[0].startswith("invoke_agent lead ")
        assert "execute_tool delegate" in lines[3]
        (nested,) = [i for i, line in enumerate(lines) if "invoke_agent researcher" in line]
        assert lines[nested].startswith("    invoke_agent researcher ")
        assert lines[nested].endswith("delegated by lead")
        assert any(line.startswith("    ") and "execute_tool echo" in line for line in lines)


class TestQueuedEvents:
    async def test_a_long_turn_is_drawn_whole(self):
        """The turn only queues what the tree draws; more than `MAX_PENDING` events are
        applied as they pile up, the rest when drawn: every call has its line, in order."""
        tree = TraceTreeObserver()
        calls = MAX_PENDING + 44
        data = {
            "user": "go",
            "config": {"approval": {"autonomy": "full"}, "max_tool_iterations": 2},
            "tools": [{"name": "echo", "responses": [{"default": {"output": "e"}}]}],
            "responses": [
                {"tool_calls": [call("echo", f"c{i}", q=str(i)) for i in range(calls)]},
                {"text": "done"},
            ],
        }
        await make_replay(data, observer=tree).run()
        lines = [line for line in tree.render().splitlines() if "execute_tool echo" in line]
        assert calls == len(lines)
        assert tree.render().splitlines()[0].startswith("invoke_agent ")
