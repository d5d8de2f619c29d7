"""Receipts through a whole turn: appended, verifiable, and only for successful runs (§7)."""

from __future__ import annotations

import datetime
import re
from typing import Any

import pytest

from zeroclaw_obs.observability.events import ToolCall, ToolOutcome
from zeroclaw_obs.receipts import ReceiptGenerator, compact_json
from zeroclaw_obs.tools.base import Tool, ToolResult, tool
from zeroclaw_obs.turn.hooks import CancelCall, Hooks, RewriteCall

KEY = bytes(range(32))
LONG = "".join(chr(ord("a") + i % 26) for i in range(120))
WEATHER = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "responses": [
        {"when": {"city": "Paris"}, "output": "18C"},
        {"when": {"city": "Long"}, "output": LONG},
        {"when": {"city": "Empty"}, "output": ""},
        {"when": {"city": "Nowhere"}, "error": "city not found"},
        {"when": {"city": "Crash"}, "raise": "kaput"},
        {"when": {"city": "Slow"}, "output": "late", "delay_ms": 2000},
        {"default": {"output": "other"}},
    ],
}
SHELL = {
    "name": "shell",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    "responses": [{"default": {"output": "file.txt"}}],
}
RECEIPT_SUFFIX = re.compile(r"\n\n\[receipt: (zc-receipt-\d+-[A-Za-z0-9_-]{43})\]\Z")


@tool
async def day_of(when: datetime.date) -> str:
    """The weekday of a date."""
    return when.strftime("%A")


def call(name: str, cid: str, **arguments: object) -> dict:
    return {"id": cid, "name": name, "arguments": arguments}


def scenario(calls: list[dict], *, receipts: bool = True, **config: object) -> dict:
    config.setdefault("approval", {"auto_approve": ["get_weather", "shell", "day_of"]})
    return {
        "user": "go",
        "config": {"receipts": {"enabled": receipts}, **config},
        "tools": [WEATHER, SHELL],
        "responses": [{"tool_calls": calls}, {"text": "done"}],
    }


def tool_messages(replay) -> list[str]:
    return [m["content"] for m in replay.state.messages if m["role"] == "tool"]


def split_receipt(content: str) -> tuple[str, str | None]:
    match = RECEIPT_SUFFIX.search(content)
    if match is None:
        return content, None
    return content[: match.start()], match.group(1)


class TestReceiptsFlow:
    async def test_receipt_is_appended_and_verifies(self, run_scenario):
        """A success reads `{output}\\n\\n[receipt: zc-receipt-…]`, valid for name, args, output."""
        _, replay = await run_scenario(
            scenario([call("get_weather", "c1", city="Paris")]), receipt_key=KEY
        )
        (content,) = tool_messages(replay)
        body, receipt = split_receipt(content)
        assert "18C" == body
        assert ReceiptGenerator(KEY).verify(receipt, "get_weather", {"city": "Paris"}, "18C")

    async def test_receipt_signs_the_output_before_truncation(self, run_scenario, observer):
        """The receipt is appended after truncation but signs the whole normalised output."""
        data = scenario([call("get_weather", "c1", city="Long")], max_tool_result_chars=30)
        _, replay = await run_scenario(data, receipt_key=KEY)
        body, receipt = split_receipt(tool_messages(replay)[0])
        assert LONG[:20] + "\n\n[... 90 characters truncated ...]\n\n" + LONG[-10:] == body
        generator = ReceiptGenerator(KEY)
        assert generator.verify(receipt, "get_weather", {"city": "Long"}, LONG)
        assert not generator.verify(receipt, "get_weather", {"city": "Long"}, body)

    async def test_empty_output_signs_no_output(self, run_scenario):
        """An empty success is signed as its normalised text `(no output)`."""
        _, replay = await run_scenario(
            scenario([call("get_weather", "c1", city="Empty")]), receipt_key=KEY
        )
        body, receipt = split_receipt(tool_messages(replay)[0])
        assert "(no output)" == body
        assert ReceiptGenerator(KEY).verify(receipt, "get_weather", {"city": "Empty"}, body)

    async def test_receipt_signs_the_dispatched_arguments(self, run_scenario):
        """A marker tool's receipt covers the dispatched `"approved": true` the runtime set."""
        data = scenario([call("shell", "c1", command="ls")])
        _, replay = await run_scenario(data, receipt_key=KEY)
        body, receipt = split_receipt(tool_messages(replay)[0])
        generator = ReceiptGenerator(KEY)
        assert generator.verify(receipt, "shell", {"command": "ls", "approved": True}, body)
        assert not generator.verify(receipt, "shell", {"command": "ls"}, body)

    @pytest.mark.parametrize(
        ("tool_name", "args", "result", "shift"),
        [
            ("get_weatheR", {"city": "Paris"}, "18C", 0),
            ("get_weather", {"city": "Parit"}, "18C", 0),
            ("get_weather", {"city": "Paris"}, "18D", 0),
            ("get_weather", {"city": "Paris"}, "18C", 1),
        ],
        ids=["tool", "args", "result", "timestamp"],
    )
    async def test_tampering_fails_verification(self, run_scenario, tool_name, args, result, shift):
        """Changing one byte of the tool, arguments, result or timestamp fails verification."""
        _, replay = await run_scenario(
            scenario([call("get_weather", "c1", city="Paris")]), receipt_key=KEY
        )
        _, receipt = split_receipt(tool_messages(replay)[0])
        generator = ReceiptGenerator(KEY)
        assert generator.verify(receipt, "get_weather", {"city": "Paris"}, "18C")
        stamp, digest = re.fullmatch(r"zc-receipt-(\d+)-(.+)", receipt).groups()
        tampered = f"zc-receipt-{int(stamp) + shift}-{digest}"
        assert not generator.verify(tampered, tool_name, args, result)

    async def test_observer_and_event_carry_the_receipt(self, run_scenario, observer):
        """The ToolCall observer event and the `tool_result` TurnEvent carry the same receipt."""
        _, replay = await run_scenario(
            scenario([call("get_weather", "c1", city="Paris")]), receipt_key=KEY
        )
        _, receipt = split_receipt(tool_messages(replay)[0])
        (closed,) = observer.of(ToolCall)
        (result,) = [e for e in replay.events.events if e.type == "tool_result"]
        assert (receipt, receipt) == (closed.receipt, result.data["receipt"])
        assert "18C" == closed.result

    async def test_receipts_off_gives_none(self, run_scenario, observer):
        """With receipts disabled no result, event or observer event carries a receipt."""
        data = scenario([call("get_weather", "c1", city="Paris")], receipts=False)
        _, replay = await run_scenario(data, receipt_key=KEY)
        assert ["18C"] == tool_messages(replay)
        assert [None] == [e.receipt for e in observer.of(ToolCall)]
        assert all("receipt" not in e.data for e in replay.events.events)

    async def test_typed_arguments_still_get_a_verifiable_receipt(self, run_scenario):
        """A `@tool` with a `date` argument gets a receipt over the JSON form history shows."""
        data = scenario([call("day_of", "c1", when="2024-01-02")])
        outcome, replay = await run_scenario(data, receipt_key=KEY, extra_tools=[day_of])
        assert "done" == outcome.text
        body, receipt = split_receipt(tool_messages(replay)[0])
        assert "Tuesday" == body
        assert ReceiptGenerator(KEY).verify(receipt, "day_of", {"when": "2024-01-02"}, body)

    @pytest.mark.parametrize(
        ("calls", "config", "outcome"),
        [
            ([call("get_weather", "c1", city="Nowhere")], {}, ToolOutcome.ERROR),
            ([call("get_weather", "c1", city="Crash")], {}, ToolOutcome.ERROR),
            (
                [call("get_weather", "c1", city="Paris")],
                {"approval": {"answers": ["no"]}},
                ToolOutcome.DENIED,
            ),
            (
                [call("get_weather", "c1", city="Paris")],
                {"approval": {"mode": "non_interactive"}},
                ToolOutcome.DENIED,
            ),
            (
                [call("get_weather", "c1", city="Paris")],
                {"approval": {"answers": [{"replace_with": "fake 18C"}]}},
                ToolOutcome.REPLACED,
            ),
            ([call("nope", "c1")], {}, ToolOutcome.UNKNOWN),
            (
                [call("get_weather", "c1", city="Paris")],
                {"excluded_tools": ["get_weather"]},
                ToolOutcome.EXCLUDED,
            ),
            ([call("get_weather", "c1", city="Hook")], {}, ToolOutcome.CANCELLED_BY_HOOK),
        ],
        ids=[
            "error",
            "raised",
            "denied",
            "runtime-denied",
            "replaced",
            "unknown",
            "excluded",
            "hook",
        ],
    )
    async def test_no_receipt_without_a_successful_run(
        self, run_scenario, observer, calls, config, outcome
    ):
        """Failed, raised, denied, replaced, unknown, excluded and hook-cancelled slots get none."""
        hooks = Hooks()
        hooks.add_before(lambda c: CancelCall("no") if c.arguments.get("city") == "Hook" else None)
        _, replay = await run_scenario(scenario(calls, **config), receipt_key=KEY, hooks=hooks)
        (closed,) = observer.of(ToolCall)
        assert (outcome, None) == (closed.outcome, closed.receipt)
        assert "[receipt:" not in tool_messages(replay)[0]
        assert all("receipt" not in e.data for e in replay.events.events)

    async def test_no_receipt_for_a_duplicate(self, run_scenario, observer):
        """The original call gets a receipt; its duplicate in the same response does not."""
        calls = [call("get_weather", "c1", city="Paris"), call("get_weather", "c2", city="Paris")]
        _, replay = await run_scenario(scenario(calls), receipt_key=KEY)
        receipts = [(e.outcome, e.receipt is not None) for e in observer.of(ToolCall)]
        assert [(ToolOutcome.SUCCESS, True), (ToolOutcome.DEDUPLICATED, False)] == receipts
        assert "[receipt:" not in tool_messages(replay)[1]

    async def test_no_receipt_for_an_interrupted_call(self, run_scenario, observer):
        """A call interrupted by cancellation gets no receipt."""
        data = scenario([call("get_weather", "c1", city="Slow")])
        data["cancel_after_ms"] = 30
        _, replay = await run_scenario(data, receipt_key=KEY)
        (closed,) = observer.of(ToolCall)
        assert (ToolOutcome.INTERRUPTED, None) == (closed.outcome, closed.receipt)
        assert (
            "[interrupted by user before this tool produced a result]" == tool_messages(replay)[0]
        )


class EditsItsArguments(Tool):
    """Changes the dict it was given while it runs (a tool may; the receipt must not follow)."""

    name = "edit_args"
    description = "Edits its own arguments."

    def parameters_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"path": {"type": "string"}}}

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        args["path"] = "elsewhere"
        args["added"] = 1.5
        return ToolResult.ok("edited")


def signed_json(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every arguments JSON a receipt is signed over, in order."""
    signed: list[str] = []
    sign = ReceiptGenerator.sign_canonical

    def spy(self, tool_name: str, args_json: str, result: str, timestamp: int) -> str:
        signed.append(args_json)
        return sign(self, tool_name, args_json, result, timestamp)

    monkeypatch.setattr(ReceiptGenerator, "sign_canonical", spy)
    return signed


class TestReceiptsSignTheDispatchedJson:
    """The receipt reuses the canonical JSON the engine made for the call's key; it must be
    byte for byte `compact_json` of the arguments actually dispatched (LIFECYCLE §7)."""

    @pytest.mark.parametrize(
        "arguments",
        [
            {"city": "Paris"},
            {"city": "Zürich", "when": {"z": 1e20, "a": [0.1, 2**64, -0.0]}, "n": 18},
        ],
        ids=["plain", "floats-and-big-ints"],
    )
    async def test_signed_json_is_compact_json_of_the_arguments(
        self, run_scenario, monkeypatch, arguments
    ):
        """The signed text equals `compact_json(args)`, floats and big integers included."""
        signed = signed_json(monkeypatch)
        _, replay = await run_scenario(
            scenario([call("get_weather", "c1", **arguments)]), receipt_key=KEY
        )
        body, receipt = split_receipt(tool_messages(replay)[0])
        assert [compact_json(arguments)] == signed
        assert ReceiptGenerator(KEY).verify(receipt, "get_weather", arguments, body)

    async def test_a_hook_rewrite_is_what_is_signed(self, run_scenario, monkeypatch):
        """A before-hook's rewritten arguments are dispatched, so they are what is signed."""
        signed = signed_json(monkeypatch)
        hooks = Hooks()
        hooks.add_before(lambda c: RewriteCall(arguments={"city": "Oslo"}))
        data = scenario([call("get_weather", "c1", city="Paris")])
        _, replay = await run_scenario(data, receipt_key=KEY, hooks=hooks)
        body, receipt = split_receipt(tool_messages(replay)[0])
        assert [compact_json({"city": "Oslo"})] == signed
        generator = ReceiptGenerator(KEY)
        assert generator.verify(receipt, "get_weather", {"city": "Oslo"}, body)
        assert not generator.verify(receipt, "get_weather", {"city": "Paris"}, body)

    async def test_the_marker_key_the_runtime_sets_is_signed(self, run_scenario, monkeypatch):
        """`"approved": true`, set by the gate after the model's call, is in the signed JSON."""
        signed = signed_json(monkeypatch)
        await run_scenario(scenario([call("shell", "c1", command="ls")]), receipt_key=KEY)
        assert [compact_json({"command": "ls", "approved": True})] == signed

    async def test_a_call_exempt_from_the_duplicate_guard_is_signed_too(
        self, run_scenario, monkeypatch
    ):
        """A call with no key (exempt from dedup) has its JSON made when it is dispatched."""
        signed = signed_json(monkeypatch)
        data = scenario(
            [call("get_weather", "c1", city="Paris"), call("get_weather", "c2", city="Paris")],
            dedup_exempt_tools=["get_weather"],
        )
        _, replay = await run_scenario(data, receipt_key=KEY)
        assert [compact_json({"city": "Paris"})] * 2 == signed
        generator = ReceiptGenerator(KEY)
        for content in tool_messages(replay):
            body, receipt = split_receipt(content)
            assert generator.verify(receipt, "get_weather", {"city": "Paris"}, body)

    @pytest.mark.parametrize("exempt", [False, True], ids=["keyed", "exempt"])
    async def test_a_tool_editing_its_arguments_does_not_change_the_receipt(
        self, run_scenario, exempt
    ):
        """The receipt covers the arguments as dispatched, not what the tool left in its dict."""
        data = scenario(
            [call("edit_args", "c1", path="a.txt")],
            approval={"auto_approve": ["edit_args"]},
            dedup_exempt_tools=["edit_args"] if exempt else [],
        )
        _, replay = await run_scenario(data, receipt_key=KEY, extra_tools=[EditsItsArguments()])
        body, receipt = split_receipt(tool_messages(replay)[0])
        assert "edited" == body
        generator = ReceiptGenerator(KEY)
        assert generator.verify(receipt, "edit_args", {"path": "a.txt"}, body)
