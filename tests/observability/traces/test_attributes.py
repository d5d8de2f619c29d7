"""Tests for `observability/traces/attributes.py`: what a span carries."""

from __future__ import annotations

import pytest

from zeroclaw_obs.observability.events import Correlation, ToolCall, ToolOutcome
from zeroclaw_obs.observability.traces.attributes import tool_end_attributes


def tool_call(outcome: ToolOutcome) -> ToolCall:
    return ToolCall(
        correlation=Correlation(turn_id="t1", channel="cli", agent_alias="a"),
        iteration=1,
        tool_call_id="c1",
        tool="echo",
        known_tool=True,
        provenance="native",
        outcome=outcome,
        success=outcome is ToolOutcome.SUCCESS,
        arguments="{}",
        result="ok",
        start_time_ns=1,
        time_ns=2,
        duration_s=0.1,
    )


class TestToolEndAttributes:
    @pytest.mark.parametrize("outcome", list(ToolOutcome))
    def test_the_outcome_is_its_value_as_a_plain_string(self, outcome):
        """`zeroclaw.tool.outcome` is the outcome's value, a `str` and not the enum member:
        a plain value lets the build worker build the span directly."""
        value = tool_end_attributes(tool_call(outcome), capture=True)["zeroclaw.tool.outcome"]
        assert str is type(value)
        assert outcome.value == value
