"""Operator names are payloads: every observer event and TurnEvent carries their shown form.

The alias, the provider and model names and registry tool names are redacted once per agent
(`ShownNames`); observers (and so spans, metric labels, logs and progress lines), TurnEvents
and the redacted history show those forms, while the tool runs and is approved under its real
name (issue 10, item 4).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from zeroclaw_obs.observability.events import (
    AgentStart,
    ApprovalDecision,
    LlmRequest,
    LlmResponse,
    LoopDetection,
    ToolCall,
    ToolCallStart,
)
from zeroclaw_obs.observability.metrics.exposition import render_metrics
from zeroclaw_obs.observability.metrics.metrics import MetricsObserver
from zeroclaw_obs.observability.observer import MultiObserver

GITHUB = "ghp_Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8"
SHOWN = "[REDACTED:github_token]"
TOOL = f"t.{GITHUB}"
SHOWN_TOOL = f"t.{SHOWN}"


def named_scenario(*responses: dict, **approval: object) -> dict:
    approval.setdefault("auto_approve", [TOOL])
    return {
        "agent": {"alias": f"bot.{GITHUB}", "channel": "cli"},
        "user": "go",
        "provider": {"name": f"p.{GITHUB}", "model": f"m.{GITHUB}"},
        "config": {"approval": approval},
        "tools": [{"name": TOOL, "responses": [{"default": {"output": "ok"}}]}],
        "responses": [*responses, {"text": "done"}],
    }


def tool_call(cid: str, **arguments: object) -> dict:
    return {"tool_calls": [{"id": cid, "name": TOOL, "arguments": arguments}]}


class TestShownNamesInATurn:
    async def test_events_carry_the_shown_alias_provider_model_and_tool(
        self, run_scenario, observer
    ):
        """Observer events and TurnEvents show redacted operator names; the tool still ran."""
        _, replay = await run_scenario(named_scenario(tool_call("c1")))
        (start,) = observer.of(AgentStart)
        assert (f"bot.{SHOWN}", f"p.{SHOWN}", f"m.{SHOWN}") == (
            start.correlation.agent_alias,
            start.provider,
            start.model,
        )
        llm = [*observer.of(LlmRequest), *observer.of(LlmResponse)]
        assert {(f"p.{SHOWN}", f"m.{SHOWN}")} == {(e.provider, e.model) for e in llm}
        tools = [*observer.of(ToolCallStart), *observer.of(ToolCall)]
        assert [SHOWN_TOOL, SHOWN_TOOL] == [e.tool for e in tools]
        assert ["success"] == [e.outcome.value for e in observer.of(ToolCall)]
        cards = [e.name for e in replay.events.events if e.type in ("tool_call", "tool_result")]
        assert [SHOWN_TOOL, SHOWN_TOOL] == cards

    async def test_metric_labels_are_the_shown_names(self, run_scenario, observer):
        """The `tool`, `provider` and `model` labels never hold the operator's secret."""
        registry = CollectorRegistry()
        metrics = MetricsObserver(registry)
        await run_scenario(
            named_scenario(tool_call("c1")), observer=MultiObserver([observer, metrics])
        )
        exposition = render_metrics(registry, openmetrics=True).decode()
        assert GITHUB not in exposition
        assert f'tool="{SHOWN_TOOL}"' in exposition
        assert f'model="m.{SHOWN}"' in exposition

    async def test_an_approval_reports_the_shown_name(self, run_scenario, observer):
        """The `ApprovalDecision` (the `await_approval` span) names the tool's shown form."""
        data = named_scenario(tool_call("c1"), auto_approve=[], answers=["yes"])
        await run_scenario(data)
        (decision,) = observer.of(ApprovalDecision)
        assert (SHOWN_TOOL, "yes") == (decision.tool, decision.decision)
        assert ["success"] == [e.outcome.value for e in observer.of(ToolCall)]

    async def test_loop_detection_names_the_shown_tool(self, run_scenario, observer):
        """The loop detector's event and its note quote the shown name, never the secret."""
        repeats = [tool_call(f"c{i}") for i in range(1, 4)]
        _, replay = await run_scenario(named_scenario(*repeats))
        (detection,) = observer.of(LoopDetection)
        assert SHOWN_TOOL == detection.tool
        assert GITHUB not in detection.message
        assert SHOWN_TOOL in detection.message
        notes = [m["content"] for m in replay.state.messages if m["role"] == "tool"]
        assert GITHUB not in notes[-1]
        assert "[Loop Detection]" in notes[-1]
