"""Scenario files: the format of DESIGN §4, loaded from JSON or YAML with one-line errors."""

from __future__ import annotations

import json

import pytest

from zeroclaw_obs.config import ApprovalMode, MaxIterationBehavior, ReplaceWith, RuntimeConfig
from zeroclaw_obs.errors import ConfigError
from zeroclaw_obs.scenario import load_scenario, parse_scenario

DESIGN_EXAMPLE = """
agent: {alias: demo, channel: cli}
user: "what is the weather in Paris and Oslo?"
config:
  parallel_tools: false
  max_tool_iterations: 10
  max_iteration_behavior: graceful_summary
  max_tool_result_chars: 50000
  strict_tool_parsing: false
  dedup_exempt_tools: []
  excluded_tools: []
  tool_filter_groups: [{mode: always, tools: ["srv__*"], keywords: ["weather"]}]
  receipts: {enabled: false}
  redact_history: true
  approval:
    mode: interactive
    autonomy: supervised
    auto_approve: [tool_search]
    always_ask: []
    non_interactive_shell_requires_approval: true
    answers: [yes, no, always, {replace_with: "text"}]
provider: {native_tools: true}
tools:
  - name: get_weather
    description: Current weather for a city
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    responses:
      - when: {city: Paris}
        output: "18C, clear"
        delay_ms: 40
      - default: {error: "city not found"}
mcp_servers:
  - name: wx
    deferred: true
    tools: []
responses:
  - tool_calls: [{id: call_1, name: get_weather, arguments: {city: Paris}}]
  - text: '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
  - text: "Paris is 18C and clear."
cancel_after_ms: null
"""


class TestLoadScenario:
    def test_the_design_example_loads(self, tmp_path):
        """The example scenario of DESIGN §4 loads with every field as written."""
        path = tmp_path / "example.yaml"
        path.write_text(DESIGN_EXAMPLE)
        scenario = load_scenario(path)
        assert ("demo", "cli") == (scenario.agent.alias, scenario.agent.channel)
        assert ApprovalMode.INTERACTIVE == scenario.config.approval.mode
        assert ["yes", "no", "always", ReplaceWith(replace_with="text")] == list(
            scenario.config.approval.answers
        )
        assert MaxIterationBehavior.GRACEFUL_SUMMARY == scenario.config.max_iteration_behavior
        assert 3 == len(scenario.responses)
        rule = scenario.tools[0].responses[0]
        assert (True, False) == (rule.matches({"city": "Paris"}), rule.matches({"city": "Oslo"}))
        assert "city not found" == scenario.tools[0].responses[1].inline_outcome().error

    def test_json_loads_the_same(self, tmp_path):
        """A `.json` scenario is read as JSON."""
        path = tmp_path / "s.json"
        path.write_text(json.dumps({"user": "hi", "responses": [{"text": "hello"}]}))
        assert "hi" == load_scenario(path).user

    def test_defaults_are_the_lifecycle_defaults(self):
        """An empty config gets LIFECYCLE's defaults."""
        config = RuntimeConfig()
        assert (False, 10, 50000, True, 120.0) == (
            config.parallel_tools,
            config.max_tool_iterations,
            config.max_tool_result_chars,
            config.redact_history,
            config.tool_timeout_s,
        )
        assert ["tool_search"] == config.approval.auto_approve


class TestScenarioErrors:
    @pytest.mark.parametrize(
        ("data", "expected"),
        [
            ({"responses": [{"text": "x"}]}, "s: user: Field required"),
            ({"user": "x", "responses": []}, "s: responses: List should have at least 1 item"),
            ({"user": "x", "responses": [{"text": "x"}], "extra": 1}, "s: extra: unknown field"),
            (
                {"user": "x", "responses": [{"text": "x"}], "config": {"approval": {"mode": "x"}}},
                "s: config.approval.mode: Input should be",
            ),
            (
                {"user": "x", "responses": [{"tool_calls": [{"arguments": {}}]}]},
                "s: responses.0.tool_calls.0.name: Field required",
            ),
        ],
    )
    def test_one_line_naming_the_field(self, data, expected):
        """Each invalid field is reported as `source: path: problem` on one line."""
        with pytest.raises(ConfigError) as info:
            parse_scenario(data, "s")
        assert str(info.value).startswith(expected)
        assert "\n" not in str(info.value)

    def test_duplicate_tool_names(self):
        """Two tools with one name are rejected, naming it."""
        tool = {"name": "t", "responses": [{"default": {"output": "x"}}]}
        with pytest.raises(ConfigError, match="duplicate tool names: t"):
            parse_scenario({"user": "x", "responses": [{"text": "x"}], "tools": [tool, tool]}, "s")

    @pytest.mark.parametrize(
        "rule",
        [
            {"when": {"a": 1}},
            {"when": {"a": 1}, "output": "x", "error": "y"},
            {"default": {"output": "x"}, "when": {"a": 1}},
            {"default": {}},
        ],
    )
    def test_rules_need_exactly_one_outcome(self, rule):
        """A tool rule needs `default`, or `when` with exactly one outcome."""
        tool = {"name": "t", "responses": [rule]}
        with pytest.raises(ConfigError, match=r"tools\.0\.responses\.0"):
            parse_scenario({"user": "x", "responses": [{"text": "x"}], "tools": [tool]}, "s")


class TestJitter:
    def scenario(self, rule: dict) -> dict:
        return {
            "user": "x",
            "responses": [{"text": "x"}],
            "tools": [{"name": "t", "responses": [rule]}],
        }

    @pytest.mark.parametrize(
        "rule",
        [
            {"when": {"a": 1}, "output": "x", "delay_ms": 20, "jitter_ms": 60},
            {"default": {"output": "x", "delay_ms": 20, "jitter_ms": 60}},
        ],
    )
    def test_jitter_beside_the_outcome(self, rule):
        """`jitter_ms` sits beside `delay_ms` in a `when` rule or inside `default`."""
        scenario = parse_scenario(self.scenario(rule), "s")
        assert (20, 60) == (
            scenario.tools[0].responses[0].inline_outcome().delay_ms,
            scenario.tools[0].responses[0].inline_outcome().jitter_ms,
        )

    def test_no_jitter_by_default(self):
        """Files written before `jitter_ms` existed load with no jitter."""
        scenario = parse_scenario(self.scenario({"default": {"output": "x", "delay_ms": 5}}), "s")
        assert 0 == scenario.tools[0].responses[0].inline_outcome().jitter_ms

    @pytest.mark.parametrize(
        ("rule", "fragment"),
        [
            ({"default": {"output": "x", "jitter_ms": -1}}, "jitter_ms: Input should be greater"),
            ({"default": {"output": "x"}, "jitter_ms": 10}, "put `jitter_ms` inside `default`"),
        ],
    )
    def test_invalid_jitter_is_named(self, rule, fragment):
        """A negative jitter, or one outside a `default` it cannot apply to, is rejected."""
        with pytest.raises(ConfigError, match=r"tools\.0\.responses\.0") as info:
            parse_scenario(self.scenario(rule), "s")
        assert fragment in str(info.value)
