"""Scripted tools: the first matching rule wins; output, error, raise, hang and delay."""

from __future__ import annotations

import asyncio
import random

import pytest
from pydantic import Field

from zeroclaw_obs.scenario import ScenarioTool
from zeroclaw_obs.tools.base import ToolResult
from zeroclaw_obs.tools.scripted import ScriptedTool, ScriptedToolError


class DeclaredTool(ScenarioTool):
    """A scenario tool with the declarations a scenario file may carry."""

    read_only: bool = False
    annotations: dict = Field(default_factory=dict)


def make(*rules: dict) -> ScriptedTool:
    return ScriptedTool(ScenarioTool(name="t", responses=list(rules)))


class TestReadOnly:
    @pytest.mark.parametrize(
        ("declared", "expected"),
        [
            ({"read_only": True}, True),
            ({"annotations": {"readOnlyHint": True}}, True),
            ({"annotations": {"readOnlyHint": False}}, False),
            ({}, False),
        ],
    )
    def test_declarations(self, declared: dict, expected: bool):
        """`read_only: true` or `annotations: {readOnlyHint: true}` make a scripted tool
        read-only; nothing else does."""
        assert expected == ScriptedTool(DeclaredTool(name="t", **declared)).read_only

    def test_a_scenario_tool_without_declarations_is_not_read_only(self):
        """A tool whose scenario entry declares nothing is not read-only."""
        assert (False, {}) == (make().read_only, make().annotations)


class TestScriptedTool:
    async def test_first_matching_rule_wins(self):
        """The first rule whose `when` keys all equal the arguments answers."""
        tool = make(
            {"when": {"city": "Paris"}, "output": "18C"},
            {"when": {"city": "Paris", "units": "f"}, "output": "64F"},
            {"default": {"error": "city not found"}},
        )
        assert ToolResult.ok("18C") == await tool.execute({"city": "Paris", "units": "f"})
        assert ToolResult.fail("city not found") == await tool.execute({"city": "Rome"})

    async def test_raise(self):
        """A `raise` rule raises with its message."""
        with pytest.raises(ScriptedToolError, match="boom"):
            await make({"default": {"raise": "boom"}}).execute({})

    async def test_hang_until_cancelled(self):
        """A `hang` rule never returns on its own."""
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.02):
                await make({"default": {"hang": True}}).execute({})

    async def test_no_matching_rule_is_a_failed_result(self):
        """With no rule matching and no default, the call fails readably."""
        result = await make({"when": {"a": 1}, "output": "x"}).execute({"a": 2})
        assert not result.success
        assert "no scripted response matches" in result.error


class TestJitter:
    async def test_delay_is_delay_plus_a_uniform_draw(self, monkeypatch):
        """Each call sleeps `delay_ms` plus a uniform draw in [0, `jitter_ms`] from its rng."""
        slept: list[float] = []

        async def record(seconds: float) -> None:
            slept.append(seconds)

        monkeypatch.setattr(asyncio, "sleep", record)
        spec = ScenarioTool(
            name="t", responses=[{"default": {"output": "x", "delay_ms": 100, "jitter_ms": 50}}]
        )
        tool = ScriptedTool(spec, rng=random.Random(7))
        for _ in range(20):
            assert ToolResult.ok("x") == await tool.execute({})
        expected = random.Random(7)
        assert [(100 + expected.uniform(0, 50)) / 1000 for _ in range(20)] == slept
        assert all(0.1 <= s <= 0.15 for s in slept)
        assert len(set(slept)) > 1

    async def test_no_jitter_sleeps_exactly_the_delay(self, monkeypatch):
        """Without `jitter_ms` the delay is the same on every call."""
        slept: list[float] = []

        async def record(seconds: float) -> None:
            slept.append(seconds)

        monkeypatch.setattr(asyncio, "sleep", record)
        tool = make({"default": {"output": "x", "delay_ms": 40}})
        await tool.execute({})
        await tool.execute({})
        assert [0.04, 0.04] == slept
