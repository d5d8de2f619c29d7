"""Tests for `zeroclaw_obs.turn.loop_detection`: repeat, ping-pong and no-progress (§7)."""

from __future__ import annotations

import random

from zeroclaw_obs.observability.events import LoopDetection, ToolCall, ToolOutcome, TurnOutcomeKind
from zeroclaw_obs.turn.loop_detection import (
    TEXT_LIMIT,
    LoopDetector,
    LoopKind,
    LoopSeverity,
    LoopSignal,
)
from zeroclaw_obs.turn.results import canonical_key

WARN, BLOCK, ABORT = LoopSeverity.WARNING, LoopSeverity.BLOCK, LoopSeverity.ABORT
ECHO = {
    "name": "echo",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    "responses": [{"when": {"q": "bad"}, "error": "nope"}, {"default": {"output": "same"}}],
}
PING = {"name": "ping", "responses": [{"default": {"output": "pong"}}]}


def record(detector: LoopDetector, tool: str, result: str = "r", **args: object):
    return detector.record(tool, canonical_key(tool, args), result)


def summary(signal: LoopSignal | None) -> tuple[LoopKind, LoopSeverity, int] | None:
    return None if signal is None else (signal.kind, signal.severity, signal.count)


def rounds(*calls: tuple[str, dict], config: dict | None = None) -> dict:
    """One response per call, then a final answer."""
    responses = [
        {"tool_calls": [{"id": f"c{i}", "name": name, "arguments": args}]}
        for i, (name, args) in enumerate(calls)
    ]
    return {
        "user": "go",
        "config": {"approval": {"autonomy": "full"}, **(config or {})},
        "tools": [ECHO, PING],
        "responses": [*responses, {"text": "done"}],
    }


def tool_messages(replay) -> list[str]:
    return [m["content"] for m in replay.state.messages if m["role"] == "tool"]


class TestLoopDetector:
    def test_identical_calls_warn_block_abort_at_3_4_5(self):
        """Identical calls in a row warn at 3, block at 4 and abort at 5."""
        detector = LoopDetector()
        signals = [summary(record(detector, "echo", q="x")) for _ in range(5)]
        expected = [
            None,
            None,
            (LoopKind.REPEAT, WARN, 3),
            (LoopKind.REPEAT, BLOCK, 4),
            (LoopKind.REPEAT, ABORT, 5),
        ]
        assert expected == signals

    def test_a_different_call_resets_the_repeat_run(self):
        """A different call between identical ones starts the count again."""
        detector = LoopDetector()
        for _ in range(2):
            record(detector, "echo", q="x")
        record(detector, "echo", "other", q="y")
        signals = [summary(record(detector, "echo", q="x")) for _ in range(3)]
        assert [None, None, (LoopKind.REPEAT, WARN, 3)] == signals

    def test_ping_pong_warns_at_4_cycles_blocks_at_5_aborts_at_6(self):
        """Two tools alternating warn at 4 full cycles, block at 5 and abort at 6."""
        detector = LoopDetector()
        signals = [
            summary(record(detector, "a" if i % 2 == 0 else "b", f"r{i}")) for i in range(12)
        ]
        assert [None] * 7 == signals[:7]
        expected = [
            (LoopKind.PING_PONG, WARN, 4),
            (LoopKind.PING_PONG, WARN, 4),
            (LoopKind.PING_PONG, BLOCK, 5),
            (LoopKind.PING_PONG, BLOCK, 5),
            (LoopKind.PING_PONG, ABORT, 6),
        ]
        assert expected == signals[7:]

    def test_a_third_tool_breaks_the_ping_pong(self):
        """A third tool inside the alternation resets the cycle count."""
        detector = LoopDetector()
        for i in range(6):
            record(detector, "a" if i % 2 == 0 else "b", f"r{i}")
        record(detector, "c")
        signals = [summary(record(detector, "a" if i % 2 == 0 else "b", f"s{i}")) for i in range(7)]
        assert [None] * 7 == signals

    def test_same_result_for_different_arguments_warn_block_abort_at_5_6_7(self):
        """The same result for different arguments warns at 5, blocks at 6 and aborts at 7."""
        detector = LoopDetector()
        signals = [summary(record(detector, "search", "nothing", q=str(i))) for i in range(7)]
        expected = [
            None,
            None,
            None,
            None,
            (LoopKind.NO_PROGRESS, WARN, 5),
            (LoopKind.NO_PROGRESS, BLOCK, 6),
            (LoopKind.NO_PROGRESS, ABORT, 7),
        ]
        assert expected == signals

    def test_different_results_are_progress(self):
        """Different arguments with different results never fire."""
        detector = LoopDetector()
        signals = [record(detector, "search", f"hit {i}", q=str(i)) for i in range(10)]
        assert [None] * 10 == signals

    def test_strongest_pattern_wins(self):
        """When two patterns fire at once the more severe one is reported."""
        detector = LoopDetector()
        record(detector, "echo", q="b")
        signals = [summary(record(detector, "echo", q="a")) for _ in range(4)]
        # After b,a,a,a,a: repeat counts 4 (block), no-progress counts 5 (warning).
        assert (LoopKind.REPEAT, BLOCK, 4) == signals[-1]

    def test_long_results_are_compared_whole(self):
        """Results longer than TEXT_LIMIT count as the same only when their whole text is."""
        long = "x" * (TEXT_LIMIT + 10)
        detector = LoopDetector()
        signals = [summary(record(detector, "search", long, q=str(i))) for i in range(5)]
        assert (LoopKind.NO_PROGRESS, WARN, 5) == signals[-1]
        detector = LoopDetector()
        results = [long[:-1] + str(i) for i in range(5)]  # same length, last character differs
        assert [None] * 5 == [
            record(detector, "search", r, q=str(i)) for i, r in enumerate(results)
        ]

    def test_ignored_tools_never_fire(self):
        """Tools in `loop_ignore_tools` (trimmed, case-insensitive) are never recorded."""
        detector = LoopDetector([" Poll "])
        signals = [record(detector, " POLL", q="x") for _ in range(10)]
        assert [None] * 10 == signals

    def test_ignored_tools_do_not_hide_other_tools(self):
        """Ignoring one tool still detects repeats of another."""
        detector = LoopDetector(["poll"])
        signals = [summary(record(detector, "echo", q="x")) for _ in range(3)]
        assert (LoopKind.REPEAT, WARN, 3) == signals[-1]

    def test_repeat_count_is_bounded_by_the_window(self):
        """Only the last 20 calls are looked at: 25 identical calls count as 20."""
        detector = LoopDetector()
        signals = [record(detector, "echo", q="x") for _ in range(25)]
        assert (LoopKind.REPEAT, ABORT, 20) == summary(signals[-1])

    def test_ping_pong_count_is_bounded_by_the_window(self):
        """Thirty alternating calls count as the 10 cycles that fit in the window."""
        detector = LoopDetector()
        signals = [record(detector, "a" if i % 2 == 0 else "b", f"r{i}") for i in range(30)]
        assert (LoopKind.PING_PONG, ABORT, 10) == summary(signals[-1])


def walked_signal(window: list[tuple[str, str, str]]) -> tuple[LoopKind, LoopSeverity, int] | None:
    """The strongest pattern found by walking back over the last 20 calls (the reference)."""
    window = window[-20:]
    thresholds = {
        LoopKind.REPEAT: (3, 4, 5),
        LoopKind.PING_PONG: (4, 5, 6),
        LoopKind.NO_PROGRESS: (5, 6, 7),
    }

    def severity(kind: LoopKind, count: int) -> LoopSeverity | None:
        warn, block, abort = thresholds[kind]
        return (
            ABORT
            if count >= abort
            else BLOCK
            if count >= block
            else WARN
            if count >= warn
            else None
        )

    found = []
    tool, key, result = window[-1]
    repeat = 0
    for entry in reversed(window):
        if entry[1] != key:
            break
        repeat += 1
    found.append((LoopKind.REPEAT, severity(LoopKind.REPEAT, repeat), repeat))
    if len(window) >= 4 and window[-2][0] != tool:
        pair = (tool, window[-2][0])
        run = 0
        for i, entry in enumerate(reversed(window)):
            if entry[0] != pair[i % 2]:
                break
            run += 1
        cycles = run // 2
        found.append((LoopKind.PING_PONG, severity(LoopKind.PING_PONG, cycles), cycles))
    keys, count = set(), 0
    for entry in reversed(window):
        if (entry[0], entry[2]) != (tool, result):
            break
        keys.add(entry[1])
        count += 1
    if len(keys) >= 2:
        found.append((LoopKind.NO_PROGRESS, severity(LoopKind.NO_PROGRESS, count), count))
    rank = {WARN: 0, BLOCK: 1, ABORT: 2}
    best = None
    for kind, level, count in found:
        if level is not None and (best is None or rank[level] > rank[best[1]]):
            best = (kind, level, count)
    return best


class TestLoopDetectorAgainstTheWindow:
    def test_counters_agree_with_walking_the_window(self):
        """On random call sequences the detector reports what a walk over the window finds."""
        rng = random.Random(17)
        for _ in range(300):
            detector = LoopDetector()
            window: list[tuple[str, str, str]] = []
            tools = rng.choice([["a"], ["a", "b"], ["a", "b", "c"]])
            for _ in range(rng.randrange(1, 60)):
                tool = rng.choice(tools)
                args = {"q": rng.choice("xy")}
                result = rng.choice(["r", "s"])
                window.append((tool, canonical_key(tool, args), result))
                got = summary(detector.record(tool, window[-1][1], result))
                assert walked_signal(window) == got


class TestLoopSignal:
    def test_warning_note(self):
        """A warning reaches the model as `[Loop Detection] …`."""
        signal = LoopSignal(LoopKind.REPEAT, WARN, 3, "detail.")
        assert "[Loop Detection] detail. Try a different approach." == signal.note

    def test_block_note(self):
        """A block reaches the model as `[Loop Detection — BLOCKED] …`."""
        signal = LoopSignal(LoopKind.REPEAT, BLOCK, 4, "detail.")
        assert signal.note.startswith("[Loop Detection — BLOCKED] detail. ")

    def test_abort_message(self):
        """An abort ends the turn with `Agent loop aborted by loop detector: …`."""
        signal = LoopSignal(LoopKind.REPEAT, ABORT, 5, "detail.")
        assert "Agent loop aborted by loop detector: detail." == signal.abort_message


class TestLoopDetectionInTurn:
    async def test_warning_and_block_are_notes_that_do_not_stop_the_call(
        self, run_scenario, observer
    ):
        """The 3rd and 4th identical calls run and carry `[Loop Detection]` / `— BLOCKED` notes."""
        outcome, replay = await run_scenario(rounds(*[("echo", {"q": "x"})] * 4))
        assert "done" == outcome.text
        texts = tool_messages(replay)
        assert ["same", "same"] == texts[:2]
        detail = "'echo' was called 3 times in a row with identical arguments."
        assert f"same\n\n[Loop Detection] {detail} Try a different approach." == texts[2]
        assert texts[3].startswith("same\n\n[Loop Detection — BLOCKED] 'echo' was called 4 times")
        assert [ToolOutcome.SUCCESS] * 4 == [e.outcome for e in observer.of(ToolCall)]

    async def test_observer_sees_loop_detection_events(self, run_scenario, observer):
        """Each firing emits a LoopDetection event for the call that triggered it."""
        await run_scenario(rounds(*[("echo", {"q": "x"})] * 4))
        expected = [
            ("c2", "echo", "repeat", "warning"),
            ("c3", "echo", "repeat", "block"),
        ]
        assert expected == [
            (e.tool_call_id, e.tool, e.kind, e.severity) for e in observer.of(LoopDetection)
        ]

    async def test_abort_keeps_the_result_and_ends_the_turn(self, run_scenario, observer):
        """The fifth identical call still records its result, then the turn aborts."""
        outcome, replay = await run_scenario(rounds(*[("echo", {"q": "x"})] * 5))
        assert TurnOutcomeKind.ABORTED == outcome.kind
        detail = "'echo' was called 5 times in a row with identical arguments."
        assert f"Agent loop aborted by loop detector: {detail}" == outcome.text
        assert "same" == tool_messages(replay)[4]
        assert "abort" == observer.of(LoopDetection)[-1].severity

    async def test_ping_pong_in_a_turn(self, run_scenario, observer):
        """Alternating two tools for four cycles warns on the eighth call."""
        calls = [("echo", {"q": "x"}), ("ping", {})] * 4
        outcome, replay = await run_scenario(rounds(*calls))
        assert "done" == outcome.text
        assert [("c7", "ping_pong", "warning")] == [
            (e.tool_call_id, e.kind, e.severity) for e in observer.of(LoopDetection)
        ]
        assert "[Loop Detection] 'echo' and 'ping' have alternated" in tool_messages(replay)[7]

    async def test_ignored_tool_is_never_flagged(self, run_scenario, observer):
        """With `loop_ignore_tools: [echo]` five identical calls end normally, without notes."""
        data = rounds(*[("echo", {"q": "x"})] * 5, config={"loop_ignore_tools": ["echo"]})
        outcome, replay = await run_scenario(data)
        assert "done" == outcome.text
        assert ["same"] * 5 == tool_messages(replay)
        assert [] == observer.of(LoopDetection)

    async def test_failed_calls_are_not_recorded(self, run_scenario, observer):
        """Only successful calls count: five identical failing calls never fire."""
        outcome, _ = await run_scenario(rounds(*[("echo", {"q": "bad"})] * 5))
        assert "done" == outcome.text
        assert [] == observer.of(LoopDetection)
