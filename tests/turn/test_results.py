"""Tests for `zeroclaw_obs.turn.results`: slot texts, truncation and slot recording (§7)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from zeroclaw_obs.observability.events import ToolCall, ToolCallStart, ToolOutcome
from zeroclaw_obs.receipts import compact_json
from zeroclaw_obs.tools.base import ToolResult
from zeroclaw_obs.turn.hooks import CancelCall, Hooks
from zeroclaw_obs.turn.results import (
    Slot,
    call_key,
    canonical_json,
    canonical_json_of,
    canonical_key,
    executed_text,
    format_seconds,
    raised_text,
    truncate,
)

DIGITS = "".join(str(i % 10) for i in range(90))
TOOL = {
    "name": "t",
    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "responses": [
        {"when": {"n": 1}, "output": "fine"},
        {"when": {"n": 2}, "output": ""},
        {"when": {"n": 3}, "error": "city not found"},
        {"when": {"n": 4}, "raise": "kaput"},
        {"when": {"n": 5}, "output": DIGITS},
        {"when": {"n": 6}, "output": "slow", "delay_ms": 2000},
        {"default": {"output": "other"}},
    ],
}
RUNTIME_DENIAL = (
    "Tool call not executed: 't' requires approval and no operator decision was available, "
    "so the runtime denied it by policy. This was not a user's decision."
)
DUPLICATE = "Skipped duplicate tool call 't' with identical arguments in this turn."
INTERRUPTED = "[interrupted by user before this tool produced a result]"


def call(name: str, cid: str, **arguments: object) -> dict:
    return {"id": cid, "name": name, "arguments": arguments}


def scenario(calls: list[dict], **config: Any) -> dict:
    config.setdefault("approval", {"auto_approve": ["t"]})
    return {
        "user": "go",
        "config": config,
        "tools": [TOOL],
        "responses": [{"tool_calls": calls}, {"text": "done"}],
    }


def tool_messages(replay) -> list[str]:
    return [m["content"] for m in replay.state.messages if m["role"] == "tool"]


def cancel_hook(call) -> CancelCall | None:
    return CancelCall("policy says no") if call.arguments.get("n") == 9 else None


class TestExecutedText:
    def test_success_is_the_output(self):
        """A successful result reads its output."""
        assert ("ok", True) == executed_text(ToolResult.ok("ok"))

    def test_empty_success_reads_no_output(self):
        """A successful empty result reads `(no output)`."""
        assert ("(no output)", True) == executed_text(ToolResult.ok(""))

    def test_failure_prefers_the_error(self):
        """A failed result reads `Error: {error}` when it has an error."""
        result = ToolResult(success=False, output="partial", error="bad")
        assert ("Error: bad", False) == executed_text(result)

    def test_failure_falls_back_to_the_output(self):
        """A failed result without an error reads `Error: {output}`."""
        result = ToolResult(success=False, output="x", error=None)
        assert ("Error: x", False) == executed_text(result)


class TestRaisedText:
    def test_names_tool_and_message(self):
        """A raised exception reads `Error executing {name}: {message}`."""
        assert "Error executing shell: disk full" == raised_text("shell", OSError("disk full"))


class TestTruncate:
    def test_keeps_two_thirds_head_and_one_third_tail(self):
        """Over the limit: the first 2/3 and last 1/3 joined by the exact marker."""
        text = "abcdefghijklmnopqrstuvwxyz"
        expected = ("abcdef\n\n[... 17 characters truncated ...]\n\nxyz", 17)
        assert expected == truncate(text, 9)

    def test_limit_not_divisible_by_three(self):
        """A limit of 10 keeps 6 head characters and 4 tail characters."""
        text = "0123456789abcdef"
        expected = ("012345\n\n[... 6 characters truncated ...]\n\ncdef", 6)
        assert expected == truncate(text, 10)

    def test_text_at_the_limit_is_untouched(self):
        """A text exactly at the limit is returned as is, with nothing dropped."""
        assert ("abcdefghi", 0) == truncate("abcdefghi", 9)

    def test_zero_disables(self):
        """`max_tool_result_chars: 0` disables truncation."""
        text = "x" * 100_000
        assert (text, 0) == truncate(text, 0)


class TestCanonicalKey:
    def test_key_order_does_not_matter(self):
        """Arguments in a different key order, nested too, give the same key."""
        first = canonical_key("t", {"a": 1, "b": {"y": 2, "x": 1}})
        assert first == canonical_key("t", {"b": {"x": 1, "y": 2}, "a": 1})

    def test_name_is_trimmed_and_lowercased(self):
        """The name part is trimmed and lowercased."""
        assert canonical_key("t", {"a": 1}) == canonical_key("  T ", {"a": 1})

    def test_different_arguments_differ(self):
        """Different argument values give different keys."""
        assert canonical_key("t", {"a": 1}) != canonical_key("t", {"a": 2})

    def test_non_json_arguments_do_not_raise(self):
        """Arguments JSON cannot encode still give a stable key instead of an error."""
        args = {"when": datetime.date(2024, 1, 2)}
        assert canonical_key("t", args) == canonical_key("t", dict(args))


class TestCanonicalJson:
    def test_is_compact_json(self):
        """The canonical JSON is `compact_json` of the arguments; None when JSON cannot encode."""
        arguments = {"b": [1.5, 2**64], "a": "Zürich"}
        assert compact_json(arguments) == canonical_json(arguments)
        assert canonical_json({"when": datetime.date(2024, 1, 2)}) is None

    def test_call_key_from_it_is_the_canonical_key(self):
        """The key made from the canonical JSON equals `canonical_key`, JSON or not."""
        for arguments in ({"a": 1, "b": {"y": 2}}, {"when": datetime.date(2024, 1, 2)}):
            made = call_key("T ", arguments, canonical_json(arguments))
            assert canonical_key("T ", arguments) == made

    def test_holds_only_for_the_very_arguments_it_was_made_for(self):
        """Replaced arguments (a rewrite makes a new dict) make the remembered JSON stale."""
        slot = Slot(index=0, call_id="c1", name="t", arguments={"n": 1})
        assert canonical_json_of(slot) is None
        slot.canonical = (slot.arguments, canonical_json(slot.arguments))
        assert '{"n":1}' == canonical_json_of(slot)
        slot.arguments = {"n": 1, "approved": True}
        assert canonical_json_of(slot) is None


class TestSlotRecorder:
    @pytest.mark.parametrize(
        ("n", "expected", "outcome", "success"),
        [
            (1, "fine", ToolOutcome.SUCCESS, True),
            (2, "(no output)", ToolOutcome.SUCCESS, True),
            (3, "Error: city not found", ToolOutcome.ERROR, False),
            (4, "Error executing t: kaput", ToolOutcome.ERROR, False),
        ],
        ids=["success", "empty", "failed", "raised"],
    )
    async def test_executed_slot_texts(self, run_scenario, observer, n, expected, outcome, success):
        """Executed calls read their output, `(no output)`, `Error: …` or `Error executing …`."""
        _, replay = await run_scenario(scenario([call("t", "c1", n=n)]))
        assert [expected] == tool_messages(replay)
        (closed,) = observer.of(ToolCall)
        assert (outcome, success) == (closed.outcome, closed.success)
        (result,) = [e for e in replay.events.events if e.type == "tool_result"]
        assert (outcome.value, success, expected) == (
            result.data["outcome"],
            result.data["success"],
            result.data["output"],
        )

    async def test_unknown_tool(self, run_scenario, observer):
        """A call to a name no tool has reads `Unknown tool: {name}`."""
        _, replay = await run_scenario(scenario([call("nope", "c1")]))
        assert ["Unknown tool: nope"] == tool_messages(replay)
        assert [ToolOutcome.UNKNOWN] == [e.outcome for e in observer.of(ToolCall)]

    async def test_excluded_tool(self, run_scenario, observer):
        """A call to an excluded tool reads `Tool not available in this turn: {name}`."""
        _, replay = await run_scenario(scenario([call("t", "c1", n=1)], excluded_tools=["t"]))
        assert ["Tool not available in this turn: t"] == tool_messages(replay)
        assert [ToolOutcome.EXCLUDED] == [e.outcome for e in observer.of(ToolCall)]

    async def test_hook_cancelled(self, run_scenario, observer):
        """A before-hook's cancel reads `Cancelled by hook: {reason}`."""
        hooks = Hooks()
        hooks.add_before(cancel_hook)
        _, replay = await run_scenario(scenario([call("t", "c1", n=9)]), hooks=hooks)
        assert ["Cancelled by hook: policy says no"] == tool_messages(replay)
        assert [ToolOutcome.CANCELLED_BY_HOOK] == [e.outcome for e in observer.of(ToolCall)]

    async def test_denied_by_user(self, run_scenario, observer):
        """An operator's No reads `Denied by user.`"""
        data = scenario([call("t", "c1", n=1)], approval={"answers": ["no"]})
        _, replay = await run_scenario(data)
        assert ["Denied by user."] == tool_messages(replay)
        assert [(ToolOutcome.DENIED, False)] == [
            (e.outcome, e.success) for e in observer.of(ToolCall)
        ]

    async def test_denied_by_the_runtime(self, run_scenario, observer):
        """With nobody to ask the model reads the runtime-denial text, naming the tool."""
        data = scenario([call("t", "c1", n=1)], approval={"mode": "non_interactive"})
        _, replay = await run_scenario(data)
        assert [RUNTIME_DENIAL] == tool_messages(replay)
        assert [ToolOutcome.DENIED] == [e.outcome for e in observer.of(ToolCall)]

    async def test_replaced(self, run_scenario, observer):
        """A deny-with-edit reads the sanitised replacement as a successful result."""
        answer = {"replace_with": "synthetic\x07 answer\x7f\n"}
        data = scenario([call("t", "c1", n=1)], approval={"answers": [answer]})
        _, replay = await run_scenario(data)
        assert ["synthetic answer\n"] == tool_messages(replay)
        assert [(ToolOutcome.REPLACED, True)] == [
            (e.outcome, e.success) for e in observer.of(ToolCall)
        ]

    async def test_deduplicated(self, run_scenario, observer):
        """A repeat inside one response reads the exact duplicate text and does not run."""
        _, replay = await run_scenario(scenario([call("t", "c1", n=1), call("t", "c2", n=1)]))
        assert ["fine", DUPLICATE] == tool_messages(replay)
        assert [ToolOutcome.SUCCESS, ToolOutcome.DEDUPLICATED] == [
            e.outcome for e in observer.of(ToolCall)
        ]

    async def test_interrupted(self, run_scenario, observer):
        """A call cancelled while it runs reads the exact interrupted text."""
        data = scenario([call("t", "c1", n=6)])
        data["cancel_after_ms"] = 30
        _, replay = await run_scenario(data)
        assert [INTERRUPTED] == tool_messages(replay)
        assert [(ToolOutcome.INTERRUPTED, False)] == [
            (e.outcome, e.success) for e in observer.of(ToolCall)
        ]

    async def test_never_run_slots_get_one_start_and_one_end(self, run_scenario, observer):
        """Unknown, duplicate and hook-cancelled slots each get one ToolCallStart and ToolCall."""
        hooks = Hooks()
        hooks.add_before(cancel_hook)
        calls = [
            call("nope", "c1"),
            call("t", "c2", n=1),
            call("t", "c3", n=1),
            call("t", "c4", n=9),
        ]
        await run_scenario(scenario(calls), hooks=hooks)
        ids = ["c1", "c2", "c3", "c4"]
        assert ids == [e.tool_call_id for e in observer.of(ToolCallStart)]
        assert ids == [e.tool_call_id for e in observer.of(ToolCall)]

    async def test_truncates_before_history(self, run_scenario, observer):
        """A long result keeps its first 2/3 and last 1/3 around the exact marker."""
        data = scenario([call("t", "c1", n=5)], max_tool_result_chars=30)
        _, replay = await run_scenario(data)
        expected = DIGITS[:20] + "\n\n[... 60 characters truncated ...]\n\n" + DIGITS[-10:]
        assert [expected] == tool_messages(replay)
        (closed,) = observer.of(ToolCall)
        assert (60, expected) == (closed.truncated_chars, closed.result)

    async def test_zero_limit_disables_truncation(self, run_scenario, observer):
        """`max_tool_result_chars: 0` keeps the whole result and reports nothing truncated."""
        data = scenario([call("t", "c1", n=5)], max_tool_result_chars=0)
        _, replay = await run_scenario(data)
        assert [DIGITS] == tool_messages(replay)
        assert [0] == [e.truncated_chars for e in observer.of(ToolCall)]

    async def test_tool_result_event_is_truncated_too(self, run_scenario):
        """The `tool_result` TurnEvent carries the truncated text, as history does."""
        data = scenario([call("t", "c1", n=5)], max_tool_result_chars=30)
        _, replay = await run_scenario(data)
        (result,) = [e for e in replay.events.events if e.type == "tool_result"]
        assert tool_messages(replay)[0] == result.data["output"]


class TestSlotRecorderWithoutObserver:
    """With the no-op observer the recorder skips observer-only work, and nothing else."""

    AWS_KEY = "AKIAIOSFODNN7EXAMPLE"

    def data(self) -> dict:
        calls = [
            call("t", "c1", n=1, q=f"upload with {self.AWS_KEY}"),
            call("t", "c2", n=5),
            call("t", "c3", n=5),
            call("nope", "c4"),
            call("t", "c5", n=9),
            call("t", "c6", n=3),
        ]
        data = scenario(calls, max_tool_result_chars=30, receipts={"enabled": True})
        data["responses"].insert(1, {"tool_calls": [call("t", "c7", n=1)]})
        return data

    @staticmethod
    def shown(replay) -> tuple[list[dict], list[dict]]:
        events = []
        for event in replay.events.events:
            shape = event.to_json_dict()
            shape.pop("duration_ms", None)
            if "receipt" in shape:
                shape["receipt"] = shape["receipt"][:11]  # signed with a per-turn key
            events.append(shape)
        messages = [
            {**m, "content": m["content"].split("[receipt: ")[0]} if m["role"] == "tool" else m
            for m in replay.state.messages
        ]
        return events, messages

    async def test_events_and_history_match_an_observed_turn(self, run_scenario):
        """TurnEvents and history of an unobserved turn equal those of an observed one."""
        hooks = Hooks()
        hooks.add_before(cancel_hook)
        _, observed = await run_scenario(self.data(), hooks=hooks)
        hooks = Hooks()
        hooks.add_before(cancel_hook)
        _, quiet = await run_scenario(self.data(), hooks=hooks, observer=None)
        assert self.shown(observed) == self.shown(quiet)
        (first, *_) = [e for e in quiet.events.events if e.type == "tool_call"]
        assert self.AWS_KEY not in str(first.data["arguments"])
        assert 3 == sum("[receipt: zc-receipt-" in m for m in tool_messages(quiet))


class TestSlotRecorderRedactsBeforeTheCut:
    """Every surface shows `cut(redact(result))`: no cut separates a secret from its context."""

    SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"

    def long_result(self) -> str:
        # The kept tail (the last 1/3 of 50,000) starts right after `key = `.
        context = "aws_secret_access_key = "
        head = "x" * 100_000 + "\n" + context
        return head + self.SECRET + "\n" + "y" * (50_000 // 3 - len(self.SECRET) - 1)

    def data(self, **config: Any) -> dict:
        tool = {"name": "t", "responses": [{"default": {"output": self.long_result()}}]}
        return {
            "user": "go",
            "config": {"approval": {"auto_approve": ["t"]}, **config},
            "tools": [tool],
            "responses": [{"tool_calls": [call("t", "c1")]}, {"text": "done"}],
        }

    def surfaces(self, replay, observer) -> dict[str, str]:
        (closed,) = observer.of(ToolCall)
        (event,) = [e for e in replay.events.events if e.type == "tool_result"]
        return {"history": tool_messages(replay)[0], "event": event.data["output"]}, closed

    async def test_default_limit_tail_after_the_key_is_redacted(self, run_scenario, observer):
        """With the defaults no piece of the value reaches history, events or the observer."""
        _, replay = await run_scenario(self.data())
        texts, closed = self.surfaces(replay, observer)
        texts["observer"] = closed.result
        pieces = {self.SECRET[i : i + 8] for i in range(len(self.SECRET) - 7)}
        assert [] == [k for k, v in texts.items() if any(p in v for p in pieces)]
        assert "[REDACTED:" in texts["history"]

    async def test_history_off_shows_the_model_the_raw_cut(self, run_scenario, observer):
        """With `redact_history` off the model reads the raw cut; other surfaces stay redacted."""
        _, replay = await run_scenario(self.data(redact_history=False))
        texts, closed = self.surfaces(replay, observer)
        assert truncate(self.long_result(), 50_000)[0] == texts["history"]
        assert self.SECRET not in texts["event"]
        assert self.SECRET not in closed.result
        assert "[REDACTED:" in closed.result


class TestFormatSeconds:
    @pytest.mark.parametrize(
        ("seconds", "expected"),
        [(120.0, "120"), (0.05, "0.05"), (1234567.0, "1234567"), (2.5, "2.5")],
    )
    def test_plain_decimal(self, seconds, expected):
        """Timeouts read as plain decimals: `120`, `0.05`, never exponent notation."""
        assert expected == format_seconds(seconds)


class TestRaisedTextWithoutMessage:
    def test_class_name_stands_in(self):
        """An exception without a message reads as its class name."""
        assert "Error executing t: KeyError" == raised_text("t", KeyError())
