"""Tests for `observability/traces/attributes.py`: what a span carries."""

from __future__ import annotations

import pytest

from zeroclaw_obs.observability.events import ToolOutcome
from zeroclaw_obs.observability.traces.attributes import tool_end_attributes

from ...builders import tool_call_event


class TestToolEndAttributes:
    @pytest.mark.parametrize("outcome", list(ToolOutcome))
    def test_the_outcome_is_its_value_as_a_plain_string(self, outcome):
        """`zeroclaw.tool.outcome` is the outcome's value, a `str` and not the enum member:
        a plain value lets the build worker build the span directly."""
        value = tool_end_attributes(tool_call_event(outcome), capture=True)["zeroclaw.tool.outcome"]
        assert str is type(value)
        assert outcome.value == value
