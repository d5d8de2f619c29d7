"""Whole turns that delegate to a sub-agent (issue 18 item 2): what the sub-agent may use, the
shared iteration budget, cancellation, deduplication, attribution, spans and receipts."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from tests.builders import Traced, chained
from zeroclaw_obs.errors import ScenarioExhaustedError
from zeroclaw_obs.observability.events import (
    AgentEnd,
    AgentStart,
    LlmRequest,
    ToolCall,
    ToolOutcome,
    TurnOutcomeKind,
)
from zeroclaw_obs.observability.logs.logs import LogObserver, build_logger
from zeroclaw_obs.observability.metrics.metrics import MetricsObserver
from zeroclaw_obs.receipts import ReceiptGenerator
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.turn.loop import cap_summary_suffix

INTERRUPTED = "[interrupted by user before this tool produced a result]"


def scripted(name: str, output: str = "ok", *, read_only: bool = False) -> dict:
    return {
        "name": name,
        "read_only": read_only,
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        "responses": [{"default": {"output": output}}],
    }


def call(name: str, cid: str, **arguments: Any) -> dict:
    return {"id": cid, "name": name, "arguments": arguments}


def delegate(cid: str, task: str = "look it up", agent: str = "researcher") -> dict:
    return call("delegate", cid, agent=agent, task=task)


def turn(responses: list[dict], **extra: Any) -> dict:
    """A lead agent with a researcher sub-agent that continues the lead's script."""
    config = {"approval": {"autonomy": "full"}, **extra.pop("config", {})}
    return {
        "agent": {"alias": "lead"},
        "user": "What is the weather in Oslo?",
        "config": config,
        "tools": [scripted("get_weather", "4C", read_only=True), scripted("deploy", "deployed")],
        "agents": {
            "researcher": {
                "description": "Looks things up",
                "system_prompt": "You research.",
                **extra.pop("researcher", {}),
            }
        },
        "responses": responses,
        **extra,
    }


def offered(replay, index: int) -> list[str]:
    return [spec.name for spec in replay.provider.requests[index].tools]


def tool_messages(replay) -> list[str]:
    return [m["content"] for m in replay.state.messages if m["role"] == "tool"]


def nested_results(replay, request: int) -> list[str]:
    """The tool results in the history of the turn that sent provider request `request` (a
    request carries its turn's live history, so this is that turn's whole history)."""
    return [m["content"] for m in replay.provider.requests[request].messages if m["role"] == "tool"]


def slots(observer, alias: str) -> dict[str, ToolCall]:
    return {e.tool_call_id: e for e in observer.of(ToolCall) if e.correlation.agent_alias == alias}


class TestNestedTurn:
    async def test_the_result_is_the_sub_agents_final_text(self, run_scenario):
        """The sub-agent answers the task in its own conversation (its prompt, the task as the
        user message); its final text is the `delegate` result the lead reads."""
        outcome, replay = await run_scenario(
            turn(
                [
                    {"tool_calls": [delegate("d1", task="Weather in Oslo, please")]},
                    {"tool_calls": [call("get_weather", "s1", q="Oslo")]},
                    {"text": "Oslo: 4C"},
                    {"text": "It is 4C in Oslo."},
                ]
            )
        )

        assert (TurnOutcomeKind.FINAL, "It is 4C in Oslo.") == (outcome.kind, outcome.text)
        assert ["Oslo: 4C"] == tool_messages(replay)
        nested = replay.provider.requests[1].messages
        assert [("system", "You research."), ("user", "Weather in Oslo, please")] == [
            (m["role"], m["content"]) for m in nested[:2]
        ]
        assert "What is the weather in Oslo?" not in json.dumps(nested)

    async def test_its_own_responses_replay_from_the_first_for_each_delegation(self, run_scenario):
        """A sub-agent with `responses` has its own script, started again for each call."""
        outcome, replay = await run_scenario(
            turn(
                [
                    {"tool_calls": [delegate("d1", task="one")]},
                    {"tool_calls": [delegate("d2", task="two")]},
                    {"text": "done"},
                ],
                researcher={"responses": [{"text": "own answer"}]},
            )
        )

        assert TurnOutcomeKind.FINAL is outcome.kind
        assert ["own answer", "own answer"] == tool_messages(replay)
        assert 3 == len(replay.provider.requests)

    async def test_delegate_is_offered_only_where_there_are_sub_agents(self, run_scenario):
        """The lead is offered `delegate` with an enum of names; the sub-agent is not (it may
        not delegate further), and a call to it there is unknown."""
        _outcome, replay = await run_scenario(
            turn(
                [
                    {"tool_calls": [delegate("d1")]},
                    {"tool_calls": [delegate("s1")]},
                    {"text": "cannot"},
                    {"text": "done"},
                ]
            )
        )

        lead = {spec.name: spec for spec in replay.provider.requests[0].tools}
        assert ["researcher"] == lead["delegate"].parameters["properties"]["agent"]["enum"]
        assert "- researcher: Looks things up" in lead["delegate"].description
        assert "delegate" not in offered(replay, 1)
        assert ["Unknown tool: delegate"] == nested_results(replay, 1)

    async def test_an_unknown_sub_agent_name_is_refused_by_the_schema(self, run_scenario):
        _outcome, replay = await run_scenario(
            turn([{"tool_calls": [delegate("d1", agent="writer")]}, {"text": "done"}])
        )

        assert ["Error: invalid arguments: agent: must be one of ['researcher']"] == tool_messages(
            replay
        )

    async def test_a_sub_agent_failure_is_a_failed_result(self, run_scenario, observer):
        """An end other than a final answer (here an abort) reaches the lead as an error."""
        data = turn(
            [
                {"tool_calls": [delegate("d1")]},
                {"text": "<tool_call>{broken"},
                {"text": "<tool_call>{broken"},
                {"text": "<tool_call>{broken"},
                {"text": "that failed"},
            ]
        )
        outcome, replay = await run_scenario(data)

        (result,) = tool_messages(replay)
        assert result.startswith("Error: I generated an internal tool-call format error")
        assert ToolOutcome.ERROR is slots(observer, "lead")["d1"].outcome
        assert "that failed" == outcome.text

    async def test_a_sub_agent_that_runs_out_of_script_is_bad_input(self, run_scenario):
        """A scripted sub-agent with too few responses fails the run as the lead's would."""
        data = turn(
            [{"tool_calls": [delegate("d1")]}],
            researcher={"responses": [{"tool_calls": [call("get_weather", "s1")]}]},
        )

        with pytest.raises(ScenarioExhaustedError, match=r"agents\.<key 1>: responses"):
            await run_scenario(data)


class TestSubsetRule:
    async def test_a_bundle_cannot_grant_what_the_parent_lacks(self, run_scenario):
        """The lead's bundles leave out `deploy`; a sub-agent bundle naming it grants nothing:
        it is not offered and a call to it is `Unknown tool: deploy`."""
        data = turn(
            [
                {"tool_calls": [delegate("d1")]},
                {"tool_calls": [call("deploy", "s1"), call("get_weather", "s2")]},
                {"text": "only the weather"},
                {"text": "done"},
            ],
            bundles={"look": {"tools": ["get_*"]}, "ops": {"tools": ["deploy", "get_weather"]}},
            researcher={"bundles": ["ops"]},
        )
        data["agent"]["bundles"] = ["look"]
        _outcome, replay = await run_scenario(data)

        assert ["get_weather"] == offered(replay, 1)
        assert ["Unknown tool: deploy", "4C"] == nested_results(replay, 1)

    async def test_its_bundles_narrow_what_the_parent_has(self, run_scenario):
        data = turn(
            [{"tool_calls": [delegate("d1")]}, {"text": "x"}, {"text": "done"}],
            bundles={"look": {"tools": ["get_*"]}},
            researcher={"bundles": ["look"]},
        )
        _outcome, replay = await run_scenario(data)

        assert ["delegate", "deploy", "get_weather"] == sorted(offered(replay, 0))
        assert ["get_weather"] == offered(replay, 1)

    async def test_what_the_parent_removes_stays_removed(self, run_scenario):
        """A tool the lead's read-only profile (or a run's narrowing) removes is excluded for
        the sub-agent too, whatever its own bundles and profile say."""
        data = turn(
            [
                {"tool_calls": [delegate("d1")]},
                {"tool_calls": [call("deploy", "s1")]},
                {"text": "x"},
                {"text": "done"},
            ],
            researcher={"risk_profile": "full"},
        )
        data["agent"]["risk_profile"] = "read_only"
        _outcome, replay = await run_scenario(data)

        assert ["get_weather"] == offered(replay, 1)
        assert ["Tool not available in this turn: deploy"] == nested_results(replay, 1)

    async def test_a_run_narrowing_reaches_the_sub_agent(self, run_scenario):
        data = turn([{"tool_calls": [delegate("d1")]}, {"text": "x"}, {"text": "done"}])
        _outcome, replay = await run_scenario(data, allowed_tools=["deploy", "delegate"])

        assert ["delegate", "deploy"] == sorted(offered(replay, 0))
        assert ["deploy"] == offered(replay, 1)

    async def test_a_run_narrowing_that_omits_delegate_removes_it(self, run_scenario):
        """`delegate` is narrowed like any tool: not offered, and a call to it by name is
        refused before any sub-agent runs."""
        data = turn([{"tool_calls": [delegate("d1")]}, {"text": "done"}])
        _outcome, replay = await run_scenario(data, allowed_tools=["get_weather"])

        assert ["get_weather"] == offered(replay, 0)
        assert ["Tool not available in this turn: delegate"] == tool_messages(replay)
        assert 2 == len(replay.provider.requests)

    async def test_deferred_tools_are_the_parents_activations_and_no_more(self, run_scenario):
        """The sub-agent gets the deferred tools the lead activated (and its bundles admit),
        no `tool_search`, and cannot call a deferred tool the lead never activated."""
        data = turn(
            [
                {"tool_calls": [call("tool_search", "t1", query="select:wx__forecast")]},
                {"tool_calls": [delegate("d1")]},
                {"tool_calls": [call("wx__forecast", "s1"), call("wx__alerts", "s2")]},
                {"text": "sunny"},
                {"text": "done"},
            ]
        )
        data["mcp_servers"] = [
            {
                "name": "wx",
                "deferred": True,
                "tools": [scripted("forecast", "sunny"), scripted("alerts", "none")],
            }
        ]
        _outcome, replay = await run_scenario(data)

        assert ["deploy", "get_weather", "wx__forecast"] == sorted(offered(replay, 2))
        assert ["sunny", "Unknown tool: wx__alerts"] == nested_results(replay, 2)
        assert "Deferred tools" not in replay.provider.requests[2].messages[0]["content"]


class TestApproval:
    async def test_a_full_profile_does_not_loosen_the_parents_approval(
        self, run_scenario, observer
    ):
        """Under the lead's supervised policy a sub-agent with `risk_profile: full` still needs
        approval for `deploy`: with nobody to ask, the runtime denies it."""
        data = turn(
            [
                {"tool_calls": [delegate("d1")]},
                {"tool_calls": [call("deploy", "s1")]},
                {"text": "denied"},
                {"text": "done"},
            ],
            config={"approval": {"mode": "non_interactive", "auto_approve": ["delegate"]}},
            researcher={"risk_profile": "full"},
        )
        _outcome, replay = await run_scenario(data)

        assert ToolOutcome.DENIED is slots(observer, "researcher")["s1"].outcome
        (entry,) = replay.audit.entries
        assert ("deploy", "runtime") == (entry.tool, entry.surface)

    async def test_a_read_only_profile_lowers_it(self, run_scenario, observer):
        """A read-only sub-agent runs read-only tools unasked and loses the others."""
        data = turn(
            [
                {"tool_calls": [delegate("d1")]},
                {"tool_calls": [call("get_weather", "s1")]},
                {"text": "4C"},
                {"text": "done"},
            ],
            config={"approval": {"mode": "non_interactive", "auto_approve": ["delegate"]}},
            researcher={"risk_profile": "read_only"},
        )
        _outcome, replay = await run_scenario(data)

        assert ["get_weather"] == offered(replay, 1)
        assert ToolOutcome.SUCCESS is slots(observer, "researcher")["s1"].outcome
        assert [] == replay.audit.entries


class TestSharedBudget:
    async def test_exhaustion_ends_both_with_the_max_iteration_finish(self, run_scenario, observer):
        """With a cap of 3 the lead's first iteration and the sub-agent's two use the budget:
        the sub-agent ends with the graceful summary, then the lead does at its next one."""
        data = turn(
            [
                {"tool_calls": [delegate("d1")]},
                {"tool_calls": [call("get_weather", "s1", q="a")]},
                {"tool_calls": [call("get_weather", "s2", q="b")]},
                {"text": "partial weather"},
                {"text": "I only have partial weather."},
            ],
            config={"max_tool_iterations": 3},
        )
        outcome, replay = await run_scenario(data)

        suffix = cap_summary_suffix(3)
        assert "\n\n*Turn stopped: reached maximum tool iterations (3).*" == suffix
        assert TurnOutcomeKind.MAX_ITERATIONS is outcome.kind
        assert "I only have partial weather." + suffix == outcome.text
        assert ["partial weather" + suffix] == tool_messages(replay)
        ends = {e.correlation.agent_alias: e for e in observer.of(AgentEnd)}
        assert {"lead": "max_iterations", "researcher": "max_iterations"} == {
            alias: end.outcome for alias, end in ends.items()
        }
        # Provider calls, each summary included: the lead 1 + 1, the sub-agent 2 + 1.
        assert (2, 3) == (ends["lead"].iterations, ends["researcher"].iterations)
        assert 5 == len(replay.provider.requests)

    async def test_error_at_cap_fails_both(self, run_scenario):
        data = turn(
            [
                {"tool_calls": [delegate("d1")]},
                {"tool_calls": [call("get_weather", "s1")]},
            ],
            config={"max_tool_iterations": 2, "max_iteration_behavior": "error_at_cap"},
        )
        outcome, replay = await run_scenario(data)

        assert ["Error: Agent exceeded maximum tool iterations (2)"] == tool_messages(replay)
        assert (TurnOutcomeKind.MAX_ITERATIONS, "Agent exceeded maximum tool iterations (2)") == (
            outcome.kind,
            outcome.error,
        )


class TestCancellation:
    @pytest.mark.parametrize("parallel", [False, True])
    async def test_cancelling_the_parent_interrupts_the_sub_agents_calls(
        self, run_scenario, observer, parallel
    ):
        """The lead's cancel reaches the sub-agent's hanging call; the sub-agent's turn and the
        `delegate` call are interrupted and the lead ends cancelled (sequential dispatch runs
        the sub-agent in the lead's task, parallel in its own)."""
        data = turn(
            [
                {"tool_calls": [delegate("d1"), call("get_weather", "w1", q="Oslo")]},
                {"tool_calls": [call("crawl", "s1")]},
                {"text": "never"},
            ],
            config={"parallel_tools": parallel},
            cancel_after_ms=150,
        )
        data["tools"].append({"name": "crawl", "responses": [{"default": {"hang": True}}]})
        outcome, replay = await run_scenario(data)

        assert TurnOutcomeKind.CANCELLED is outcome.kind
        assert ToolOutcome.INTERRUPTED is slots(observer, "researcher")["s1"].outcome
        lead = slots(observer, "lead")
        assert ToolOutcome.INTERRUPTED is lead["d1"].outcome
        expected = ToolOutcome.SUCCESS if parallel else ToolOutcome.INTERRUPTED
        assert expected is lead["w1"].outcome
        ends = {e.correlation.agent_alias: e.outcome for e in observer.of(AgentEnd)}
        assert {"lead": "cancelled", "researcher": "cancelled"} == ends
        assert INTERRUPTED == tool_messages(replay)[0]


class TestDeduplication:
    async def test_identical_delegate_calls_both_run(self, run_scenario, observer):
        """`delegate` and `spawn_subagent` are exempt from the duplicate guard (LIFECYCLE §4
        step 7); an identical pair of any other tool is not."""
        data = turn(
            [
                {
                    "tool_calls": [
                        delegate("d1"),
                        delegate("d2"),
                        call("spawn_subagent", "p1", q="x"),
                        call("spawn_subagent", "p2", q="x"),
                        call("get_weather", "w1", q="x"),
                        call("get_weather", "w2", q="x"),
                    ]
                },
                {"text": "first"},
                {"text": "second"},
                {"text": "done"},
            ]
        )
        data["tools"].append(scripted("spawn_subagent", "spawned"))
        _outcome, replay = await run_scenario(data)

        assert [
            "first",
            "second",
            "spawned",
            "spawned",
            "4C",
            "Skipped duplicate tool call 'get_weather' with identical arguments in this turn.",
        ] == tool_messages(replay)
        assert 2 == sum(1 for e in observer.of(AgentStart) if e.correlation.agent_alias != "lead")


class TestAttribution:
    async def test_every_event_of_the_sub_agent_names_its_parent(self, run_scenario, observer):
        _outcome, _replay = await run_scenario(
            turn([{"tool_calls": [delegate("d1")]}, {"text": "x"}, {"text": "done"}])
        )

        by_agent: dict[str, set] = {}
        for event in observer.events:
            c = event.correlation
            by_agent.setdefault(c.agent_alias, set()).add((c.parent_agent_alias, c.channel))
        assert {"lead": {(None, "cli")}, "researcher": {("lead", "agent")}} == by_agent
        turns = {e.correlation.turn_id for e in observer.of(AgentStart)}
        assert 2 == len(turns)

    async def test_log_lines_carry_parent_agent_alias(self, run_scenario):
        """The sub-agent's lines have `parent_agent_alias`; the lead's have no such field."""
        stream = io.StringIO()
        logs = LogObserver(build_logger(redactor=Redactor(), stream=stream))
        await run_scenario(
            turn([{"tool_calls": [delegate("d1")]}, {"text": "x"}, {"text": "done"}]),
            observer=chained(None, logs),
        )

        records = [json.loads(line) for line in stream.getvalue().splitlines()]
        assert {("lead", None), ("researcher", "lead")} == {
            (r["agent"], r.get("parent_agent_alias", None)) for r in records
        }
        assert all("parent_agent_alias" not in r for r in records if r["agent"] == "lead")
        assert {"turn_start", "turn_end"} <= {
            r["event"] for r in records if r["agent"] == "researcher"
        }

    async def test_the_nested_root_is_a_child_of_the_delegate_span(self, run_scenario):
        traced = Traced()
        await run_scenario(
            turn([{"tool_calls": [delegate("d1")]}, {"text": "x"}, {"text": "done"}]),
            observer=traced.observer,
        )

        roots = {s.name: s for s in traced.named("invoke_agent")}
        lead, nested = roots["invoke_agent lead"], roots["invoke_agent researcher"]
        tool = traced.tool("d1")
        assert lead.parent is None
        assert lead.context.span_id == tool.parent.span_id
        assert tool.context.span_id == nested.parent.span_id
        assert {lead.context.trace_id} == {s.context.trace_id for s in traced.spans}
        assert "agent" == nested.attributes["zeroclaw.channel"]

    async def test_the_nested_root_names_its_parent_agent(self, run_scenario):
        """`invoke_agent researcher` carries `zeroclaw.parent_agent.name` (the lead's alias,
        as its log lines carry `parent_agent_alias`); the lead's root has no such attribute."""
        traced = Traced()
        await run_scenario(
            turn([{"tool_calls": [delegate("d1")]}, {"text": "x"}, {"text": "done"}]),
            observer=traced.observer,
        )

        roots = {s.name: s.attributes for s in traced.named("invoke_agent")}
        assert "lead" == roots["invoke_agent researcher"].get("zeroclaw.parent_agent.name")
        assert "zeroclaw.parent_agent.name" not in roots["invoke_agent lead"]

    async def test_turn_metrics_count_the_top_level_turn_only(self, run_scenario):
        """One user message is one turn in `zeroclaw_turns_total` and the turn histogram; the
        nested turn shows as the `delegate` call, and its requests count like the lead's."""
        registry = CollectorRegistry()
        await run_scenario(
            turn([{"tool_calls": [delegate("d1")]}, {"text": "x"}, {"text": "done"}]),
            observer=MetricsObserver(registry),
        )

        def sample(name: str, **labels: str) -> float | None:
            return registry.get_sample_value(name, labels)

        assert 1.0 == sample("zeroclaw_turns_total", outcome="final")
        assert 1.0 == sample("zeroclaw_turn_duration_seconds_count")
        assert 1.0 == sample("zeroclaw_tool_calls_total", tool="delegate", outcome="success")
        requests = [
            s.value
            for family in registry.collect()
            for s in family.samples
            if s.name == "zeroclaw_llm_requests_total"
        ]
        assert 3.0 == sum(requests)

    async def test_receipts_come_from_the_parents_generator(self, run_scenario, observer):
        key = bytes(range(32))
        data = turn(
            [
                {"tool_calls": [delegate("d1")]},
                {"tool_calls": [call("get_weather", "s1", q="Oslo")]},
                {"text": "x"},
                {"text": "done"},
            ],
            config={"receipts": {"enabled": True}},
        )
        await run_scenario(data, receipt_key=key)

        receipt = slots(observer, "researcher")["s1"].receipt
        assert ReceiptGenerator(key).verify(receipt, "get_weather", {"q": "Oslo"}, "4C")
        key_ids = {e.receipt_key_id for e in observer.of(AgentStart)}
        assert {ReceiptGenerator(key).key_id} == key_ids

    async def test_the_sub_agents_requests_count_in_its_own_iterations(
        self, run_scenario, observer
    ):
        await run_scenario(
            turn(
                [
                    {"tool_calls": [delegate("d1")]},
                    {"tool_calls": [call("get_weather", "s1")]},
                    {"text": "x"},
                    {"text": "done"},
                ]
            )
        )

        iterations = [(e.correlation.agent_alias, e.iteration) for e in observer.of(LlmRequest)]
        assert [("lead", 1), ("researcher", 1), ("researcher", 2), ("lead", 2)] == iterations


CLI_SCENARIO = {
    "agent": {"alias": "lead"},
    "user": "What is the weather in Oslo?",
    "config": {"approval": {"auto_approve": ["delegate", "get_weather"]}},
    "tools": [scripted("get_weather", "4C", read_only=True)],
    "agents": {
        "researcher": {
            "description": "Looks things up",
            "responses": [
                {"tool_calls": [call("get_weather", "s1", q="Oslo")]},
                {"text": "Oslo: 4C"},
            ],
        }
    },
    "responses": [{"tool_calls": [delegate("d1")]}, {"text": "It is 4C in Oslo."}],
}


def otlp_spans(path) -> list[dict[str, Any]]:
    return [
        span
        for line in path.read_text().splitlines()
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


class TestThroughTheCli:
    def test_the_span_tree_and_logs_of_a_delegating_run(self, tmp_path):
        """`zeroclaw-obs run` (a real process) exports one trace: `invoke_agent researcher` is
        a child of `execute_tool delegate`, itself a child of `invoke_agent lead`; the
        sub-agent's log lines name the lead as `parent_agent_alias`."""
        scenario = tmp_path / "delegate.json"
        scenario.write_text(json.dumps(CLI_SCENARIO))
        spans_out, logs_out = tmp_path / "spans.jsonl", tmp_path / "logs.jsonl"
        command = Path(sys.executable).parent / "zeroclaw-obs"
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        done = subprocess.run(
            [
                str(command),
                "run",
                "--scenario",
                str(scenario),
                "--otlp-json",
                str(spans_out),
                "--logs-out",
                str(logs_out),
                "--quiet",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )

        assert 0 == done.returncode, done.stderr
        assert "It is 4C in Oslo." == done.stdout.strip()
        spans = otlp_spans(spans_out)
        named = {span["name"]: span for span in spans}
        lead = named["invoke_agent lead"]
        tool = named["execute_tool delegate"]
        nested = named["invoke_agent researcher"]
        assert "" == lead.get("parentSpanId", "")
        assert lead["spanId"] == tool["parentSpanId"]
        assert tool["spanId"] == nested["parentSpanId"]
        assert nested["spanId"] == named["execute_tool get_weather"]["parentSpanId"]
        attributes = {a["key"]: a["value"] for a in nested["attributes"]}
        assert {"stringValue": "lead"} == attributes["zeroclaw.parent_agent.name"]
        assert all(a["key"] != "zeroclaw.parent_agent.name" for a in lead["attributes"])
        assert {lead["traceId"]} == {span["traceId"] for span in spans}
        records = [json.loads(line) for line in logs_out.read_text().splitlines()]
        parents = {(r["agent"], r.get("parent_agent_alias")) for r in records}
        assert {("lead", None), ("researcher", "lead")} == parents
