"""Tests for `zeroclaw_obs.turn.steering`: messages sent while a turn runs (issue 18 item 6),
on the scripted model and through the Python API."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest

from zeroclaw_obs.observability.events import (
    LlmRequest,
    SteeringMessages,
    TurnOutcomeKind,
)
from zeroclaw_obs.observability.logs.logs import LogObserver, build_logger
from zeroclaw_obs.observability.observer import MultiObserver
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.tools.base import tool
from zeroclaw_obs.turn.hooks import HookLlmCall, Hooks
from zeroclaw_obs.turn.loop import run_tool_call_loop
from zeroclaw_obs.turn.steering import MAX_PENDING_STEERING, Steered, SteeringQueue

from ..builders import SECRET, Traced, chained
from ..conftest import RecordingObserver, make_replay


def call(name: str, cid: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": cid, "name": name, "arguments": arguments}]}


def scenario(*responses: dict[str, Any], **config: Any) -> dict[str, Any]:
    return {
        "user": "plan the trip",
        "config": {"approval": {"auto_approve": ["*"]}, **config},
        "responses": list(responses),
    }


class Steerer:
    """Tools and hooks that steer the turn they run in, as a user typing meanwhile would."""

    def __init__(self) -> None:
        self.state: Any = None
        self.results: list[Steered] = []

    def steer(self, *texts: str) -> None:
        self.results += [self.state.steering.steer(text) for text in texts]

    def tool(self, *texts: str) -> Any:
        @tool(name="book")
        async def book(city: str) -> str:
            """Book a trip."""
            self.steer(*texts)
            return f"booked {city}"

        return book


async def run(data: dict[str, Any], steerer: Steerer, **kwargs: Any):
    observer = kwargs.pop("observer", None) or RecordingObserver()
    replay = make_replay(data, observer=observer, **kwargs)
    steerer.state = replay.state
    outcome = await replay.run()
    return outcome, replay, observer


def user_texts(replay) -> list[str]:
    return [m["content"] for m in replay.state.messages if m["role"] == "user"]


class TestSteeringQueue:
    def test_messages_come_out_in_order_once(self):
        """`take` returns every queued message, oldest first, and leaves none."""
        queue = SteeringQueue()
        results = [queue.steer(text) for text in ("a", "b", "c")]
        assert ([Steered.ACCEPTED] * 3, 3) == (results, queue.pending)
        assert (["a", "b", "c"], [], 0) == (queue.take(), queue.take(), queue.pending)

    def test_a_closed_queue_refuses(self):
        """Once the turn ended nothing is accepted; `close` hands back what was left."""
        queue = SteeringQueue()
        queue.steer("late")
        assert (["late"], True, Steered.TURN_ENDED) == (
            queue.close(),
            queue.closed,
            queue.steer("later"),
        )

    def test_close_if_idle_only_closes_an_empty_queue(self):
        """The loop may end the turn only when no message waits."""
        queue = SteeringQueue()
        queue.steer("wait")
        assert (False, False) == (queue.close_if_idle(), queue.closed)
        queue.take()
        assert (True, True) == (queue.close_if_idle(), queue.closed)

    def test_the_queue_is_bounded(self):
        """Past `max_pending` waiting messages, `steer` answers that the queue is full."""
        queue = SteeringQueue(max_pending=2)
        assert [Steered.ACCEPTED, Steered.ACCEPTED, Steered.QUEUE_FULL] == [
            queue.steer(t) for t in ("1", "2", "3")
        ]
        assert 64 == MAX_PENDING_STEERING

    @pytest.mark.parametrize(("text", "error"), [("  ", ValueError), (None, TypeError)])
    def test_nothing_to_read_is_refused(self, text: Any, error: type[Exception]):
        """A blank message or one that is not text is a programming error."""
        with pytest.raises(error, match="text: "):
            SteeringQueue().steer(text)


class TestLoop:
    async def test_appended_at_the_top_of_the_next_iteration_in_order(self):
        """Messages sent while a tool runs follow its result, in the order sent, and the
        next request carries them."""
        steerer = Steerer()
        outcome, replay, observer = await run(
            scenario(call("book", "c1", city="Oslo"), {"text": "booked, and by train"}),
            steerer,
            extra_tools=[steerer.tool("by train please", "and a window seat")],
        )
        assert (TurnOutcomeKind.FINAL, 2) == (outcome.kind, outcome.iterations)
        assert ["user", "assistant", "tool", "user", "user", "assistant"] == [
            m["role"] for m in replay.state.messages
        ]
        assert ["plan the trip", "by train please", "and a window seat"] == user_texts(replay)
        assert [1, 5] == [e.message_count for e in observer.of(LlmRequest)]
        (event,) = observer.of(SteeringMessages)
        assert (2, (15, 17), True, 2) == (
            event.iteration,
            event.lengths,
            event.applied,
            event.count,
        )
        steering = [e.data for e in replay.events.events if e.type == "steering"]
        assert [{"text": "by train please"}, {"text": "and a window seat"}] == steering

    async def test_an_answer_with_messages_waiting_does_not_end_the_turn(self):
        """Steered while the model wrote its answer: the answer stays in the history and the
        model answers again, having read the message."""
        steerer = Steerer()
        hooks = Hooks()

        def steer_once(call: HookLlmCall) -> None:
            if call.iteration == 1:
                steerer.steer("actually, Bergen")

        hooks.add_before_llm(steer_once)
        outcome, replay, _ = await run(
            scenario({"text": "Oslo it is"}, {"text": "Bergen it is"}), steerer, hooks=hooks
        )
        assert (TurnOutcomeKind.FINAL, "Bergen it is", 2) == (
            outcome.kind,
            outcome.text,
            outcome.iterations,
        )
        assert [
            ("user", "plan the trip"),
            ("assistant", "Oslo it is"),
            ("user", "actually, Bergen"),
            ("assistant", "Bergen it is"),
        ] == [(m["role"], m["content"]) for m in replay.state.messages]

    async def test_the_graceful_summary_reads_them(self):
        """At the cap the messages go before the summary request."""
        steerer = Steerer()
        outcome, replay, observer = await run(
            scenario(call("book", "c1", city="Oslo"), {"text": "summary"}, max_tool_iterations=1),
            steerer,
            extra_tools=[steerer.tool("keep it cheap")],
        )
        assert TurnOutcomeKind.MAX_ITERATIONS == outcome.kind
        texts = user_texts(replay)
        assert "keep it cheap" == texts[1]
        assert texts[2].startswith("You have reached the maximum number of tool iterations")
        assert [(2, True)] == [(e.iteration, e.applied) for e in observer.of(SteeringMessages)]

    async def test_error_at_cap_drops_them_and_says_so(self):
        """A turn that ends before any iteration took them reports them dropped."""
        steerer = Steerer()
        outcome, replay, observer = await run(
            scenario(
                call("book", "c1", city="Oslo"),
                max_tool_iterations=1,
                max_iteration_behavior="error_at_cap",
            ),
            steerer,
            extra_tools=[steerer.tool("too late", "also late")],
        )
        assert TurnOutcomeKind.MAX_ITERATIONS == outcome.kind
        assert [((8, 9), False)] == [(e.lengths, e.applied) for e in observer.of(SteeringMessages)]
        assert ["plan the trip"] == user_texts(replay)
        assert Steered.TURN_ENDED == replay.state.steering.steer("after the end")

    async def test_a_cancelled_turn_drops_them(self):
        """Cancelled with messages waiting: dropped, reported, and the queue closed."""
        steerer = Steerer()

        @tool(name="book")
        async def book(city: str) -> str:
            """Book, then the user cancels."""
            steerer.steer("wait")
            steerer.state.cancellation.cancel()
            await asyncio.sleep(0)
            return "never"

        outcome, _, observer = await run(
            scenario(call("book", "c1", city="Oslo"), {"text": "never"}),
            steerer,
            extra_tools=[book],
        )
        assert TurnOutcomeKind.CANCELLED == outcome.kind
        assert [((4,), False)] == [(e.lengths, e.applied) for e in observer.of(SteeringMessages)]

    async def test_a_finished_turn_refuses(self):
        """After a final answer the queue is closed: nothing can wait for a turn that is over."""
        steerer = Steerer()
        _, replay, observer = await run(scenario({"text": "done"}), steerer)
        assert (Steered.TURN_ENDED, []) == (
            replay.state.steering.steer("too late"),
            observer.of(SteeringMessages),
        )


class TestSurfaces:
    async def test_no_text_on_spans_or_logs_and_redacted_elsewhere(self):
        """Logs carry one `steering_message` line per message with its length, the span a
        `zeroclaw.steering` event with the count; the history and the stream see the text
        redacted; no surface sees the secret."""
        steerer = Steerer()
        message = f"use my token {SECRET}"
        stream = io.StringIO()
        traced = Traced()
        logs = LogObserver(build_logger(redactor=Redactor(), stream=stream))
        recording = RecordingObserver()
        observer = MultiObserver([chained(traced.observer, logs), recording])
        _, replay, _ = await run(
            scenario(call("book", "c1", city="Oslo"), {"text": "ok"}),
            steerer,
            observer=observer,
            extra_tools=[steerer.tool(message, "and hurry")],
        )
        lines = [json.loads(x) for x in stream.getvalue().splitlines()]
        steering = [line for line in lines if line["event"] == "steering_message"]
        assert [(1, 2, len(message), 2), (2, 2, 9, 2)] == [
            (line["position"], line["count"], line["length"], line["iteration"])
            for line in steering
        ]
        assert all(line["turn_id"] == replay.state.turn_id for line in steering)
        assert all("text" not in line and "message" not in line for line in steering)
        (event,) = [e for e in traced.root().events if e.name == "zeroclaw.steering"]
        assert {
            "zeroclaw.steering.count": 2,
            "zeroclaw.steering.applied": True,
            "zeroclaw.iteration": 2,
        } == dict(event.attributes)
        shown = "use my token [REDACTED:github_token]"
        assert shown == user_texts(replay)[1]
        (first, _) = [e.data["text"] for e in replay.events.events if e.type == "steering"]
        assert shown == first
        spans = [(dict(s.attributes), [dict(e.attributes) for e in s.events]) for s in traced.spans]
        assert SECRET not in stream.getvalue() + json.dumps(spans, default=str)
        assert "use my token" not in json.dumps(spans, default=str) + stream.getvalue()

    async def test_the_dropped_line(self):
        """Messages a turn ended before taking are one `steering_dropped` warning."""
        steerer = Steerer()
        stream = io.StringIO()
        logs = LogObserver(build_logger(redactor=Redactor(), stream=stream))
        await run(
            scenario(
                call("book", "c1", city="Oslo"),
                max_tool_iterations=1,
                max_iteration_behavior="error_at_cap",
            ),
            steerer,
            observer=logs,
            extra_tools=[steerer.tool("late")],
        )
        (line,) = [json.loads(x) for x in stream.getvalue().splitlines() if "steering" in x]
        assert ("steering_dropped", "warning", 1) == (line["event"], line["level"], line["count"])


class TestPythonApi:
    async def test_a_caller_steers_a_turn_it_runs_in_a_task(self):
        """A library user runs `run_tool_call_loop` in a task and steers through the turn's
        state while a tool runs; the next request carries the message."""
        started, release = asyncio.Event(), asyncio.Event()

        @tool(name="book")
        async def book(city: str) -> str:
            """Book a trip, slowly."""
            started.set()
            await release.wait()
            return f"booked {city}"

        observer = RecordingObserver()
        replay = make_replay(
            scenario(call("book", "c1", city="Oslo"), {"text": "booked, aisle seat"}),
            observer=observer,
            extra_tools=[book],
        )
        task = asyncio.create_task(run_tool_call_loop(replay.execution, replay.state))
        await started.wait()
        assert Steered.ACCEPTED == replay.state.steering.steer("aisle seat, please")
        release.set()
        outcome = await task
        assert (TurnOutcomeKind.FINAL, "booked, aisle seat") == (outcome.kind, outcome.text)
        assert ["plan the trip", "aisle seat, please"] == user_texts(replay)
        assert [1, 4] == [e.message_count for e in observer.of(LlmRequest)]
        assert Steered.TURN_ENDED == replay.state.steering.steer("thanks")
