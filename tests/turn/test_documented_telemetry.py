"""docs/telemetry.md names every turn event and log line a turn emits, with every attribute
and field, exactly as the code writes them (issue 18: context limits, model switch, steering).

One scripted turn cuts its history (`context_token_budget`), switches model (a scripted
tool's `switch_model`) and takes a steering message; a second one ends at the cap while a
steering message waits (dropped). Real spans and JSON log lines are read back and each name
must appear in the doc in backticks: renaming an attribute without the doc fails here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from zeroclaw_obs.tools.base import tool
from zeroclaw_obs.turn.model_switch import current_model_switch

from ..builders import Traced
from ..conftest import make_replay
from .test_context_window import Watched, history

DOC = (Path(__file__).parents[2] / "docs" / "telemetry.md").read_text()
DOCUMENTED = set(re.findall(r"`([^`\s]+)`", DOC))
ROOT_EVENTS = {"zeroclaw.context.trimmed", "zeroclaw.model.switch", "zeroclaw.steering"}
LOG_EVENTS = {"context_trimmed", "model_switched", "steering_message", "steering_dropped"}
COMMON = {"event", "level", "timestamp", "trace_id", "span_id", "turn_id", "channel", "agent"}

_waiting: list[Any] = []


@tool
async def remind(note: str) -> str:
    """Steer the running turn (stands in for a user steering while the tool runs)."""
    assert current_model_switch() is not None  # runs inside the turn
    _waiting[-1].steering.steer(note)
    return "noted"


def scenario(**extra: Any) -> dict[str, Any]:
    return {
        "user": "And now?",
        "provider": {"model": "small", "models": ["big"]},
        "tools": [
            {
                "name": "escalate",
                "responses": [{"default": {"output": "up", "switch_model": "big"}}],
            }
        ],
        **extra,
    }


async def run(data: dict[str, Any], traced: Traced, prior: list[dict[str, Any]] | None = None):
    watched = Watched(traced)
    replay = make_replay(data, observer=watched.observer, extra_tools=[remind])
    if prior is not None:
        replay.state.messages[:] = prior
    _waiting.append(replay.state)
    await replay.run()
    events = [e for e in traced.root().events if e.name in ROOT_EVENTS]
    lines = [line for line in watched.lines() if line["event"] in LOG_EVENTS]
    return events, lines


async def test_turn_events_and_their_log_lines_are_documented(traced):
    data = scenario(
        config={"approval": {"autonomy": "full"}, "context_token_budget": 500},
        responses=[
            {"tool_calls": [{"id": "c1", "name": "escalate", "arguments": {}}]},
            {"tool_calls": [{"id": "c2", "name": "remind", "arguments": {"note": "be brief"}}]},
            {"text": "done"},
        ],
    )
    events, lines = await run(data, traced, history(3))

    assert ROOT_EVENTS == {e.name for e in events}
    assert LOG_EVENTS - {"steering_dropped"} == {line["event"] for line in lines}
    undocumented = {e.name for e in events} - DOCUMENTED
    undocumented |= {key for e in events for key in e.attributes} - DOCUMENTED
    undocumented |= {line["event"] for line in lines} - DOCUMENTED
    undocumented |= {key for line in lines for key in line} - COMMON - DOCUMENTED
    assert set() == undocumented


async def test_a_dropped_steering_message_is_documented(traced):
    data = scenario(
        config={
            "approval": {"autonomy": "full"},
            "max_tool_iterations": 1,
            "max_iteration_behavior": "error_at_cap",
        },
        responses=[{"tool_calls": [{"id": "c1", "name": "remind", "arguments": {"note": "x"}}]}],
    )
    events, lines = await run(data, traced)

    assert [("zeroclaw.steering", False)] == [
        (e.name, e.attributes["zeroclaw.steering.applied"]) for e in events
    ]
    assert ["steering_dropped"] == [line["event"] for line in lines]
    assert set() == {key for line in lines for key in line} - COMMON - DOCUMENTED
