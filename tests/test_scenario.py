"""Scenario files: the format of DESIGN §4, loaded from JSON or YAML with one-line errors."""

from __future__ import annotations

import json

import pytest

from zeroclaw_obs.config import ApprovalMode, MaxIterationBehavior, ReplaceWith, RuntimeConfig
from zeroclaw_obs.errors import ConfigError
from zeroclaw_obs.replay import build_replay
from zeroclaw_obs.scenario import load_scenario, parse_scenario

TOKEN = "ghp_" + "aB3dE5fG7h" * 3 + "iJ1kL2"
"""A synthetic GitHub token: the payload an error line must never repeat."""

MINIMAL = "user: hi\nresponses: [{text: ok}]\n"


def json_scenario(field: str, value: str) -> str:
    """A minimal JSON scenario with one more field, its value as raw JSON text."""
    return '{"user": "x", "responses": [{"text": "x"}], "' + field + '": ' + value + "}"


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
            ({"user": "x", "responses": []}, "s: responses: a scripted provider needs"),
            (
                {"user": "x", "responses": [{"text": "x"}], "extra": 1},
                "s: (top level): unknown field (key 3)",
            ),
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
        """Two tools with one name are rejected, pointing at both places, not naming it."""
        tool = {"name": TOKEN, "responses": [{"default": {"output": "x"}}]}
        data = {"user": "x", "responses": [{"text": "x"}], "tools": [tool, {"name": "b"}, tool]}
        with pytest.raises(ConfigError) as info:
            parse_scenario(data, "s")
        assert "s: tools.2.name: duplicate tool name (the same as tools.0.name)" == str(info.value)

    def test_duplicate_of_an_mcp_wrapper(self):
        """A scripted tool named like an MCP wrapper (`server__tool`) is a duplicate."""
        data = {
            "user": "x",
            "responses": [{"text": "x"}],
            "tools": [{"name": "wx__f"}],
            "mcp_servers": [{"name": "wx", "tools": [{"name": "f"}]}],
        }
        with pytest.raises(ConfigError) as info:
            parse_scenario(data, "s")
        assert "s: mcp_servers.0.tools.0.name: duplicate tool name (the same as tools.0.name)" == (
            str(info.value)
        )

    def test_tool_search_beside_a_deferred_server(self):
        """`tool_search` is the built-in beside a deferred MCP server: a scripted one is refused."""
        data = {
            "user": "x",
            "responses": [{"text": "x"}],
            "tools": [{"name": "tool_search"}],
            "mcp_servers": [{"name": "wx", "deferred": True, "tools": [{"name": "f"}]}],
        }
        with pytest.raises(ConfigError, match=r"^s: tools\.0\.name: `tool_search` is the built-in"):
            parse_scenario(data, "s")
        data["mcp_servers"][0]["deferred"] = False
        assert "tool_search" == parse_scenario(data, "s").tools[0].name

    @pytest.mark.parametrize(
        ("mutate", "where"),
        [
            (lambda d: d.update(tools=[{"name": ""}]), "tools.0.name"),
            (lambda d: d.update(tools=[{"name": " \t\n"}]), "tools.0.name"),
            (lambda d: d.update(mcp_servers=[{"name": "  ", "tools": [{"name": "f"}]}]), None),
            (lambda d: d.update(mcp_servers=[{"name": "s", "tools": [{"name": " "}]}]), None),
            (lambda d: d.update(agent={"alias": " "}), "agent.alias"),
            (lambda d: d.update(agent={"channel": ""}), "agent.channel"),
            (lambda d: d.update(provider={"name": "\t"}), "provider.name"),
            (lambda d: d.update(provider={"model": " "}), "provider.model"),
            (lambda d: d.update(config={"model": " "}), "config.model"),
            (lambda d: d.update(config={"approval": {"auto_approve": [""]}}), None),
        ],
    )
    def test_blank_names(self, mutate, where):
        """An empty or whitespace-only name is refused at load, so building never fails on it."""
        data = {"user": "x", "responses": [{"text": "x"}]}
        mutate(data)
        with pytest.raises(ConfigError) as info:
            parse_scenario(data, "s")
        assert "blank" in str(info.value)
        if where is not None:
            assert str(info.value).startswith(f"s: {where}: ")

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


class TestBadInputIsOneLine:
    """Item 14: any bad input is one ConfigError line; none quotes the input."""

    def load(self, tmp_path, text: str, name: str = "s.yaml") -> str:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError) as info:
            load_scenario(path)
        line = str(info.value)
        assert line.startswith(f"{path}: ")
        assert "\n" not in line
        assert TOKEN[4:14] not in line
        return line[len(str(path)) + 2 :]

    @pytest.mark.parametrize(
        ("text", "where"),
        [
            (MINIMAL + "cancel_after_ms: .inf\n", "cancel_after_ms"),
            (MINIMAL + "cancel_after_ms: .nan\n", "cancel_after_ms"),
            ("user: hi\nresponses: [{text: ok, delay_ms: .inf}]\n", "responses.0.delay_ms"),
            ("user: hi\nresponses: [{text: ok, delay_ms: 1e999}]\n", "responses.0.delay_ms"),
            (
                MINIMAL + "tools: [{name: t, responses: [{default: {output: x, delay_ms: .inf}}]}]",
                "tools.0.responses.0.default.delay_ms",
            ),
            (
                MINIMAL + "tools: [{name: t, responses: [{when: {}, output: x, jitter_ms: .nan}]}]",
                "tools.0.responses.0.jitter_ms",
            ),
            (MINIMAL + "config: {tool_timeout_s: .inf}\n", "config.tool_timeout_s"),
            (
                MINIMAL + "config: {approval: {backchannel_timeout_s: -.inf}}\n",
                "config.approval.backchannel_timeout_s",
            ),
        ],
    )
    def test_durations_must_be_finite(self, tmp_path, text, where):
        """`.inf`, NaN or an overflowing float where a duration is read is refused, naming it."""
        assert f"{where}: Input should be a finite number" == self.load(tmp_path, text)

    @pytest.mark.parametrize(
        ("text", "where"),
        [
            ("user: hi\nresponses: [{text: ok, usage: {input_tokens: 1" + "0" * 400 + "}}]\n",
             "responses.0.usage.input_tokens"),
            (MINIMAL + "config: {max_tool_iterations: 1" + "0" * 30 + "}\n",
             "config.max_tool_iterations"),
        ],
    )  # fmt: skip
    def test_counts_fit_64_bits(self, tmp_path, text, where):
        """A count past a signed 64-bit integer is refused: metrics and OTLP could not carry it."""
        assert self.load(tmp_path, text).startswith(f"{where}: Input should be less than or equal")

    def test_json_nan_and_infinity(self, tmp_path):
        """JSON's non-standard NaN and Infinity are refused where a duration is read."""
        for token in ("NaN", "Infinity", "-Infinity"):
            text = json_scenario("cancel_after_ms", token)
            assert "cancel_after_ms: Input should be a finite number" == self.load(
                tmp_path, text, "s.json"
            )

    @pytest.mark.parametrize(
        ("name", "text", "expected"),
        [
            (
                "s.json",
                json_scenario("cancel_after_ms", "9" * 5000),
                "malformed JSON: an integer has more than 4300 digits",
            ),
            (
                "s.yaml",
                MINIMAL + "cancel_after_ms: " + "9" * 5000 + "\n",
                "malformed YAML: line 3 column 18: an integer of more than 4300 characters",
            ),
            (
                "s.yaml",
                MINIMAL + "cancel_after_ms: 0x" + "f" * 4000 + "\n",
                "malformed YAML: line 3 column 18: an integer of more than 4300 digits",
            ),
            (
                "s.json",
                json_scenario("description", "[" * 10_000 + "]" * 10_000),
                "malformed JSON: nested deeper than 64 levels",
            ),
            (
                "s.json",
                json_scenario("description", "[" * 100 + "]" * 100),
                "description.0.0.0: nested deeper than 64 levels",
            ),
            (
                "s.yaml",
                MINIMAL + "description: " + "[" * 10_000 + "]" * 10_000 + "\n",
                "malformed YAML: line 3 column 77: nested deeper than 64 levels",
            ),
            (
                "s.yaml",
                MINIMAL + "description: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n",
                "malformed YAML: line 3 column 263: nested deeper than 64 levels",
            ),
            (
                "s.yaml",
                MINIMAL + "".join(f"{' ' * i}- \n" for i in range(0, 20_000, 2)),
                None,
            ),
        ],
    )
    def test_huge_numbers_and_deep_nesting(self, tmp_path, name, text, expected):
        """5,000-digit integers and 10,000-deep nesting are one line, never a traceback."""
        line = self.load(tmp_path, text, name)
        if expected is not None:
            assert expected == line

    def test_alias_bomb_is_refused_while_composing(self, tmp_path):
        """A billion-laughs file is refused once its expanded size passes the bound."""
        lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
        lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
        text = "\n".join(lines) + "\n" + MINIMAL
        assert self.load(tmp_path, text).endswith(
            "more than 100000 values (after expanding aliases)"
        )

    def test_merge_key_bomb_is_refused(self, tmp_path):
        """Merge keys that double a mapping at each level are bounded like aliases."""
        lines = ["m0: &m0 {a: 1, b: 2}"]
        lines += [f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}" for i in range(1, 40)]
        text = "\n".join(lines) + "\n" + MINIMAL
        assert "more than 100000 values" in self.load(tmp_path, text)

    def test_a_node_containing_itself_is_refused(self, tmp_path):
        """An alias inside its own anchor (a structure containing itself) is refused."""
        text = MINIMAL + "description: &a [1, *a]\n"
        assert "an alias refers to a node that contains it" in self.load(tmp_path, text)

    def test_shared_aliases_within_bounds_load(self, tmp_path):
        """Aliases are fine while the expanded file stays within the bounds."""
        text = "user: hi\nresponses: [&r {text: ok}, *r, *r]\n"
        path = tmp_path / "s.yaml"
        path.write_text(text)
        assert 3 == len(load_scenario(path).responses)

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (MINIMAL + f"description: *{TOKEN}\n", "malformed YAML: line 3 column 14: found "),
            (MINIMAL + f"description: !{TOKEN} x\n", "malformed YAML: line 3 column 14: could not"),
            (MINIMAL + f"description: &{TOKEN} [&{TOKEN} 1]\n", "malformed YAML: line 3 column"),
            (MINIMAL + f"{TOKEN}: 1\n", "(top level): unknown field (key 3)"),
            (MINIMAL + f"agent: {{alias: a, {TOKEN}: 1}}\n", "agent: unknown field (key 2)"),
            (MINIMAL + f"config: {{redaction: {{{TOKEN}: 1}}}}\n", "config.redaction: unknown"),
            (
                MINIMAL + f"tools: [{{name: t, responses: [{{when: {{{TOKEN}: !!binary aGk=}}, "
                "output: x}]}]\n",
                "tools.0.responses.0.when.<key 1>: bytes values are not allowed (JSON data only)",
            ),
            (MINIMAL + "description: {1: a}\n", "description.<key 1>: keys must be strings"),
            (MINIMAL + "description: a\x00b\n", "malformed YAML: character 48: a control"),
        ],
    )
    def test_lines_never_quote_the_input(self, tmp_path, text, expected):
        """Parser and validation lines name the place and the problem, never a key or value."""
        assert self.load(tmp_path, text).startswith(expected)

    def test_unreadable_files(self, tmp_path):
        """Bytes that are not UTF-8, a directory or a NUL in the path are ConfigErrors too."""
        binary = tmp_path / "s.yaml"
        binary.write_bytes(b"user: \xff\xfe\n")
        for path in (binary, tmp_path, tmp_path / "a\0b.yaml"):
            with pytest.raises(ConfigError):
                load_scenario(path)

    def test_yaml_dates_stay_text(self, tmp_path):
        """A YAML date is read as its text: model arguments are JSON, where a date is a string."""
        path = tmp_path / "s.yaml"
        path.write_text(
            MINIMAL + "tools: [{name: t, responses: [{when: {day: 2026-12-03}, output: x}]}]\n"
        )
        assert {"day": "2026-12-03"} == load_scenario(path).tools[0].responses[0].when

    def test_a_loaded_scenario_always_builds(self, tmp_path):
        """What loads builds: names are checked at load, so the runtime never refuses one."""
        path = tmp_path / "s.yaml"
        path.write_text(
            MINIMAL
            + "tools: [{name: tool_search}, {name: wx__g}]\n"
            + "mcp_servers: [{name: wx, deferred: false, tools: [{name: f}]}]\n"
        )
        build_replay(load_scenario(path))


AGENT = {"provider": {"kind": "openai", "model": "gpt-4.1-mini"}}


class TestAgentFile:
    def test_a_real_provider_without_responses_is_an_agent_file(self):
        """`kind: openai` with no `responses` loads, with the documented defaults."""
        provider = parse_scenario(AGENT, "a.yaml").provider
        assert ("openai", "openai", "gpt-4.1-mini") == (
            provider.kind,
            provider.name,
            provider.model,
        )
        assert "https://api.openai.com/v1" == provider.url
        assert (True, True, 60.0, 2) == (
            provider.native_tools,
            provider.stream,
            provider.timeout_s,
            provider.max_retries,
        )
        assert "OPENAI_API_KEY" == provider.key_variable

    def test_anthropic_defaults(self):
        """`kind: anthropic` reads ANTHROPIC_API_KEY and talks to the API root without /v1."""
        data = {"provider": {"kind": "anthropic", "model": "claude-sonnet-4-5"}}
        provider = parse_scenario(data, "a.yaml").provider
        assert ("https://api.anthropic.com", "ANTHROPIC_API_KEY") == (
            provider.url,
            provider.key_variable,
        )

    def test_scripted_is_the_default_kind(self):
        """A scenario without `kind` is scripted, named `scripted`, model `scripted-model`."""
        provider = parse_scenario({"user": "x", "responses": [{"text": "x"}]}, "s").provider
        assert ("scripted", "scripted", "scripted-model") == (
            provider.kind,
            provider.name,
            provider.model,
        )

    @pytest.mark.parametrize(
        ("data", "expected"),
        [
            ({"provider": {"kind": "openai"}}, "a.yaml: provider.model: required when kind is"),
            ({"provider": {"kind": "scripted"}, "user": "x"}, "a.yaml: responses: a scripted"),
            (
                {**AGENT, "responses": [{"text": "x"}]},
                "a.yaml: responses: a real provider (kind: openai) replays nothing",
            ),
            (
                {"provider": {**AGENT["provider"], "timeout_s": 0}},
                "a.yaml: provider.timeout_s: Input should be greater than 0",
            ),
            (
                {"provider": {**AGENT["provider"], "timeout_s": float("inf")}},
                "a.yaml: provider.timeout_s:",
            ),
            (
                {"provider": {**AGENT["provider"], "max_retries": 11}},
                "a.yaml: provider.max_retries: Input should be less than or equal to 10",
            ),
            (
                {"provider": {**AGENT["provider"], "kind": "gemini"}},
                "a.yaml: provider.kind:",
            ),
            (
                {"provider": {**AGENT["provider"], "base_url": "ftp://host/x"}},
                "a.yaml: provider.base_url: must be an http:// or https:// URL with a host",
            ),
            (
                {"provider": {**AGENT["provider"], "api_key_env": "sk-proj-abc"}},
                "a.yaml: provider.api_key_env: must be the NAME of an environment variable",
            ),
            ({**AGENT, "python_tools": ["nocolon"]}, "a.yaml: python_tools.0: expected"),
            (
                {"user": "x", "responses": [{"text": "x", "error": {"error_type": "timeout"}}]},
                "a.yaml: responses.0: a response with `error` takes no `text` or `tool_calls`",
            ),
        ],
    )
    def test_invalid_agent_files_are_one_line(self, data, expected):
        """Each invalid provider field is named on one line."""
        with pytest.raises(ConfigError) as info:
            parse_scenario(data, "a.yaml")
        assert str(info.value).startswith(expected)
        assert "\n" not in str(info.value)

    def test_a_key_in_the_query_is_refused(self):
        """`?api-key=…` in the base URL is a key in the file too; never echoed."""
        url = f"https://example.openai.azure.com/openai/v1?api-version=1&api-key={TOKEN}"
        with pytest.raises(ConfigError) as info:
            parse_scenario({"provider": {**AGENT["provider"], "base_url": url}}, "a.yaml")
        assert str(info.value).startswith("a.yaml: provider.base_url: a key in the URL's query")
        assert TOKEN not in str(info.value)

    def test_credentials_in_the_base_url_are_refused(self):
        """A URL with user:password is a key in the file; the URL is never echoed."""
        url = f"https://user:{TOKEN}@api.example.com/v1"
        with pytest.raises(ConfigError) as info:
            parse_scenario({"provider": {**AGENT["provider"], "base_url": url}}, "a.yaml")
        assert str(info.value).startswith("a.yaml: provider.base_url: credentials in the URL")
        assert TOKEN not in str(info.value)
        assert "api.example.com" not in str(info.value)


class TestKeysInTheFile:
    def test_api_key_is_refused_with_the_documented_line(self):
        """`api_key:` in provider is refused at load, naming the field, never the key."""
        data = {"provider": {**AGENT["provider"], "api_key": TOKEN}}
        with pytest.raises(ConfigError) as info:
            parse_scenario(data, "agent.yaml")
        expected = (
            "agent.yaml: provider.api_key: keys are read from the variable api_key_env names, "
            "never from the file"
        )
        assert expected == str(info.value)

    @pytest.mark.parametrize(
        ("field", "shown"),
        [
            ("token", "token"),
            ("Authorization", "authorization"),
            ("client_secret", "client_secret"),
            ("OPENAI_API_KEY", "<key 3>"),
            ("my_bearer", "<key 3>"),
        ],
    )
    def test_any_key_like_field_is_refused(self, field, shown):
        """Any field named like a key, token or secret is refused (odd names by position)."""
        data = {"provider": {**AGENT["provider"], field: TOKEN}}
        with pytest.raises(ConfigError) as info:
            parse_scenario(data, "agent.yaml")
        assert f"agent.yaml: provider.{shown}: keys are read from" in str(info.value)
        assert TOKEN not in str(info.value)

    def test_refused_before_other_problems(self):
        """The key is refused even when the rest of the file is invalid too."""
        data = {"provider": {"kind": "nope", "api_key": TOKEN}, "colour": 1}
        with pytest.raises(ConfigError, match=r"provider\.api_key: keys are read"):
            parse_scenario(data, "agent.yaml")

    def test_refused_when_loading_a_file(self, tmp_path):
        """`load_scenario` refuses a key in a YAML file the same way."""
        path = tmp_path / "agent.yaml"
        path.write_text(f"provider: {{kind: openai, model: m, api_key: {TOKEN}}}\n")
        with pytest.raises(ConfigError) as info:
            load_scenario(path)
        assert f"{path}: provider.api_key: keys are read" in str(info.value)
        assert TOKEN not in str(info.value)

    def test_the_variable_name_is_allowed(self):
        """`api_key_env` names a variable: it is not a key."""
        data = {"provider": {**AGENT["provider"], "api_key_env": "MY_KEY"}}
        assert "MY_KEY" == parse_scenario(data, "a.yaml").provider.key_variable


def with_server(server: dict) -> dict:
    """A minimal scripted scenario with one MCP server entry."""
    return {"user": "x", "responses": [{"text": "x"}], "mcp_servers": [server]}


def server_error(server: dict) -> str:
    with pytest.raises(ConfigError) as info:
        parse_scenario(with_server(server), "agent.yaml")
    return str(info.value)


class TestMcpServerForms:
    def test_stdio(self):
        """`command` with `args`, `env` and `env_from` is a stdio server, connect timeout 10."""
        server = parse_scenario(
            with_server(
                {
                    "name": "git",
                    "command": "uvx",
                    "args": ["mcp-server-git", "--repository", "."],
                    "env": {"GIT_AUTHOR_NAME": "bot"},
                    "env_from": {"GITHUB_TOKEN": "GH_TOKEN"},
                    "call_timeout_s": 30,
                }
            ),
            "agent.yaml",
        ).mcp_servers[0]
        assert ("stdio", "uvx", ["mcp-server-git", "--repository", "."]) == (
            server.transport,
            server.command,
            server.args,
        )
        assert (10.0, 30.0, False) == (server.timeout_s, server.call_timeout_s, server.deferred)

    def test_streamable_http(self):
        """`url` with `headers_env` is a streamable-HTTP server."""
        server = parse_scenario(
            with_server(
                {
                    "name": "docs",
                    "url": "http://127.0.0.1:8931/mcp",
                    "headers_env": {"Authorization": "DOCS_MCP_AUTH"},
                    "deferred": True,
                    "timeout_s": 2.5,
                }
            ),
            "agent.yaml",
        ).mcp_servers[0]
        assert ("http", {"Authorization": "DOCS_MCP_AUTH"}, 2.5, None) == (
            server.transport,
            server.headers_env,
            server.timeout_s,
            server.call_timeout_s,
        )

    def test_scripted(self):
        """`tools:` is a scripted server, as before."""
        server = parse_scenario(with_server({"name": "wx", "tools": []}), "s").mcp_servers[0]
        assert "scripted" == server.transport

    def test_the_design_example_loads(self):
        """DESIGN §7's `mcp_servers` example is valid as written."""
        data = {
            **AGENT,
            "mcp_servers": [
                {"name": "git", "command": "uvx", "deferred": False,
                 "args": ["mcp-server-git", "--repository", "."]},
                {"name": "docs", "url": "http://127.0.0.1:8931/mcp",
                 "headers_env": {"Authorization": "DOCS_MCP_AUTH"}},
            ],
        }  # fmt: skip
        servers = parse_scenario(data, "agent.yaml").mcp_servers
        assert ["stdio", "http"] == [server.transport for server in servers]

    def test_a_deferred_connected_server_reserves_tool_search(self):
        """A deferred stdio server offers `tool_search`, so no scripted tool may take it."""
        data = {
            **with_server({"name": "git", "command": "uvx", "deferred": True}),
            "tools": [{"name": "tool_search"}],
        }
        with pytest.raises(ConfigError, match=r"tools\.0\.name: `tool_search` is the built-in"):
            parse_scenario(data, "agent.yaml")


class TestMcpServerResolution:
    def test_process_env_reads_env_from(self):
        """`env_from` values come from the runtime's environment, beside the literal `env`."""
        server = parse_scenario(
            with_server({"name": "g", "command": "x", "env": {"A": "1"}, "env_from": {"T": "S"}}),
            "s",
        ).mcp_servers[0]
        assert {"A": "1", "T": TOKEN} == server.process_env({"S": TOKEN})

    def test_a_missing_variable_is_named_never_a_value(self):
        """An unset variable is reported by its name and field."""
        server = parse_scenario(
            with_server({"name": "g", "command": "x", "env_from": {"T": "S"}}), "s"
        ).mcp_servers[0]
        with pytest.raises(ValueError, match=r"^mcp server g: env_from\.T: variable S is not set$"):
            server.process_env({})

    def test_http_headers_read_headers_env(self):
        """Header values come from the variables `headers_env` names."""
        server = parse_scenario(
            with_server({"name": "d", "url": "http://h/mcp", "headers_env": {"X-Key": "K"}}), "s"
        ).mcp_servers[0]
        assert {"X-Key": TOKEN} == server.http_headers({"K": TOKEN})
        with pytest.raises(ValueError, match=r"headers_env\.X-Key: variable K is not set"):
            server.http_headers({})


class TestMcpServerErrors:
    @pytest.mark.parametrize(
        ("server", "expected"),
        [
            ({"name": "x"}, "mcp_servers.0: needs exactly one of tools (scripted), command"),
            ({"name": "x", "tools": [], "command": "a"}, "mcp_servers.0.command: takes exactly"),
            ({"name": "x", "command": "a", "url": "http://h/"}, "mcp_servers.0.url: takes exactly"),
            ({"name": "x", "command": " "}, "mcp_servers.0.command: must not be blank"),
            ({"name": "x", "url": "ftp://h/"}, "mcp_servers.0.url: must be an http:// or https://"),
            ({"name": "x", "tools": [], "timeout_s": 5}, "mcp_servers.0.timeout_s: only for a"),
            ({"name": "x", "tools": [], "call_timeout_s": 5}, "0.call_timeout_s: only for a"),
            ({"name": "x", "url": "http://h/", "args": ["a"]}, "0.args: only for a server with"),
            ({"name": "x", "url": "http://h/", "env": {"A": "1"}}, "0.env: only for a server"),
            ({"name": "x", "command": "a", "headers_env": {"A": "B"}}, "0.headers_env: only for"),
            ({"name": "x", "command": "a", "timeout_s": 0}, "0.timeout_s: Input should be greater"),
            ({"name": "x", "command": "a", "timeout_s": float("inf")}, "0.timeout_s: Input should"),
            ({"name": "x", "command": "a", "call_timeout_s": -1}, "0.call_timeout_s: Input should"),
            ({"name": "x", "command": "a", "env": {"1A": "v"}}, "0.env.<key 1>: must be an env"),
            ({"name": "x", "command": "a", "env_from": {"T": "A", "U": "a-b"}}, "env_from.<key 2>"),
            ({"name": "x", "command": "a", "env": {"T": "1"}, "env_from": {"T": "A"}}, "also set"),
            ({"name": "x", "url": "http://h/", "headers_env": {"A B": "V"}}, "an HTTP header"),
        ],
    )  # fmt: skip
    def test_one_line_naming_the_field(self, server, expected):
        """Each problem is one line naming the file and the field."""
        line = server_error(server)
        assert "\n" not in line
        assert line.startswith("agent.yaml: ")
        assert expected in line

    def test_literal_headers_are_refused(self):
        """A literal `headers:` is refused, naming the field and not the value."""
        line = server_error(
            {"name": "d", "url": "http://h/", "headers": {"Authorization": f"Bearer {TOKEN}"}}
        )
        assert line.startswith("agent.yaml: mcp_servers.0.headers: literal header values")
        assert "headers_env" in line
        assert TOKEN not in line

    @pytest.mark.parametrize("name", ["GITHUB_TOKEN", "OPENAI_API_KEY", "DB_PASSWORD", "X_AUTH"])
    def test_a_secret_looking_env_name_takes_no_literal_value(self, name):
        """A variable named like a secret must come through `env_from`."""
        line = server_error({"name": "g", "command": "x", "env": {name: TOKEN}})
        assert "mcp_servers.0.env.<key 1>: a secret-looking variable" in line
        assert "env_from" in line
        assert TOKEN not in line and name not in line

    def test_a_secret_value_under_a_plain_name_is_refused(self):
        """A value the redactor recognises as a secret is refused whatever its name."""
        line = server_error({"name": "g", "command": "x", "env": {"GH_HOST": TOKEN}})
        assert "env.<key 1>: a secret-looking variable" in line
        assert TOKEN not in line

    def test_plain_variables_keep_their_literal_values(self):
        """`GIT_AUTHOR_NAME` is not AUTH: ordinary variables are allowed."""
        env = {"GIT_AUTHOR_NAME": "bot", "PATH": "/usr/bin", "LOG_LEVEL": "debug"}
        server = parse_scenario(with_server({"name": "g", "command": "x", "env": env}), "s")
        assert env == server.mcp_servers[0].env

    def test_a_value_in_env_from_is_refused(self):
        """`env_from` takes variable names; a value written there is refused unquoted."""
        line = server_error({"name": "g", "command": "x", "env_from": {"T": TOKEN + "-x"}})
        assert "env_from.<key 1>: must be the NAME of an environment variable" in line
        assert TOKEN not in line

    def test_a_value_in_headers_env_is_refused(self):
        """`headers_env` takes variable names, not `Bearer …` values."""
        line = server_error(
            {"name": "d", "url": "http://h/", "headers_env": {"Authorization": f"Bearer {TOKEN}"}}
        )
        assert "headers_env.<key 1>: must be the NAME of an environment variable" in line
        assert TOKEN not in line

    def test_credentials_in_the_url_are_refused(self):
        """User info or a key in the query of `url` is refused, unquoted."""
        for url in (f"https://u:{TOKEN}@h/mcp", f"https://h/mcp?token={TOKEN}"):
            line = server_error({"name": "d", "url": url})
            assert "mcp_servers.0.url: " in line and "headers_env" in line
            assert TOKEN not in line

    def test_duplicate_server_names_are_refused(self):
        """Two servers with one name are refused at the second one."""
        data = {
            "user": "x", "responses": [{"text": "x"}],
            "mcp_servers": [{"name": "a", "command": "x"}, {"name": "a", "tools": []}],
        }  # fmt: skip
        with pytest.raises(ConfigError, match=r"mcp_servers\.1\.name: duplicate MCP server name"):
            parse_scenario(data, "s")


def with_bundles(bundles: dict, agent: dict | None = None, **fields: object) -> dict:
    """A minimal scripted scenario with `bundles` (and an agent naming some)."""
    data: dict = {"user": "x", "responses": [{"text": "x"}], "bundles": bundles, **fields}
    if agent is not None:
        data["agent"] = agent
    return data


def bundle_error(data: dict) -> str:
    with pytest.raises(ConfigError) as info:
        parse_scenario(data, "agent.yaml")
    return str(info.value)


class TestBundlesAndRiskProfile:
    def test_a_file_without_bundles_grants_everything(self):
        """No `agent.bundles`: the policy grants every tool and sets no profile."""
        policy = parse_scenario(json.loads(json_scenario("tools", "[]")), "a.json").tool_policy()

        assert (None, None, ()) == (policy.bundles, policy.profile, policy.narrowings)

    def test_the_agent_s_bundles_and_profile_make_its_policy(self):
        """`agent.bundles` picks bundles by key (each once), `risk_profile` is kept."""
        data = with_bundles(
            {"web": {"tools": ["fetch", "search_*"]}, "wx": {"mcp_servers": ["wx"]}},
            {"bundles": ["wx", "web", "wx"], "risk_profile": "read_only"},
            mcp_servers=[{"name": "wx", "tools": []}],
        )

        policy = parse_scenario(data, "a.yaml").tool_policy()

        assert ["wx", "web"] == [bundle.name for bundle in policy.bundles or ()]
        assert ("fetch", "search_*") == policy.bundles[1].tools  # type: ignore[index]
        assert ("wx",) == policy.bundles[0].mcp_servers  # type: ignore[index]
        assert "read_only" == policy.profile

    def test_an_empty_bundle_list_grants_nothing(self):
        """`agent.bundles: []` is an agent with no tools, not one with every tool."""
        policy = parse_scenario(with_bundles({}, {"bundles": []}), "a.yaml").tool_policy()

        assert () == policy.bundles

    @pytest.mark.parametrize(
        ("data", "line"),
        [
            (
                with_bundles({"b": {"tools": ["x"]}}, {"bundles": ["b", TOKEN]}),
                "agent.yaml: agent.bundles.1: not a key of `bundles`",
            ),
            (
                with_bundles({TOKEN: {"mcp_servers": [TOKEN]}}),
                "agent.yaml: bundles.<key 1>.mcp_servers.0: not the name of a server under "
                "`mcp_servers`",
            ),
            (
                with_bundles({"a": {"tools": ["x"]}, TOKEN: {}}),
                "agent.yaml: bundles.<key 2>: a bundle needs `tools` or `mcp_servers`",
            ),
            (
                with_bundles({TOKEN: {"tools": ["  "]}}),
                "agent.yaml: bundles.<key 1>.tools.0: must not be blank",
            ),
            (
                with_bundles({TOKEN: {"tools": ["x"], TOKEN: ["y"]}}),
                "agent.yaml: bundles.<key 1>: unknown field (key 2)",
            ),
            (
                with_bundles({"tools": {"toolz": ["x"]}}),
                "agent.yaml: bundles.<key 1>: unknown field (key 1; did you mean `tools`?)",
            ),
            (
                with_bundles({}, {"risk_profile": TOKEN}),
                "agent.yaml: agent.risk_profile: Input should be 'full', 'supervised' or "
                "'read_only'",
            ),
        ],
    )
    def test_bad_entries_are_one_line_naming_the_field(self, data: dict, line: str):
        """Bundle keys, server names and patterns are operator words: the line names the place
        (keys by position), never the word."""
        assert line == bundle_error(data)


SUBAGENT_BASE = {"user": "go", "responses": [{"text": "ok"}]}


class TestSubagents:
    """`agents:`: the sub-agents `delegate` runs (`ScenarioSubagent`)."""

    def test_a_sub_agent_loads_with_its_fields(self):
        scenario = parse_scenario(
            {
                **SUBAGENT_BASE,
                "bundles": {"look": {"tools": ["get_*"]}},
                "agents": {
                    "researcher": {
                        "description": "Looks things up",
                        "system_prompt": "You research.",
                        "bundles": ["look"],
                        "risk_profile": "read_only",
                        "responses": [{"text": "found"}],
                    }
                },
            },
            "s.yaml",
        )

        agent = scenario.agents["researcher"]
        assert ("Looks things up", "read_only", 1) == (
            agent.description,
            agent.risk_profile,
            len(agent.responses),
        )
        (bundle,) = scenario.subagent_bundles("researcher")
        assert ("look", ("get_*",)) == (bundle.name, bundle.tools)

    @pytest.mark.parametrize(
        ("agent", "expected"),
        [
            ({"bundles": ["nope"]}, "agents.<key 1>.bundles.0: not a key of `bundles`"),
            (
                {"provider": {"kind": "scripted"}},
                "agents.<key 1>.responses: a sub-agent with its own scripted provider needs at "
                "least one response",
            ),
            (
                {"provider": {"kind": "openai", "model": "m"}, "responses": [{"text": "x"}]},
                "agents.<key 1>.responses: a sub-agent on a real provider replays nothing",
            ),
            (
                {"provider": {"kind": "openai", "model": "m", "api_key": TOKEN}},
                "agents.<key 1>: provider.api_key: keys are read from the variable api_key_env "
                "names, never from the file",
            ),
            ({"risk_profile": "root"}, "agents.<key 1>.risk_profile: Input should be"),
        ],
    )
    def test_problems_are_one_line_naming_the_place(self, agent, expected):
        with pytest.raises(ConfigError) as raised:
            parse_scenario({**SUBAGENT_BASE, "agents": {TOKEN: agent}}, "s.yaml")

        assert str(raised.value).startswith(f"s.yaml: {expected}")
        assert TOKEN not in str(raised.value)

    def test_no_tool_may_be_named_delegate_beside_agents(self):
        data = {**SUBAGENT_BASE, "agents": {"r": {}}, "tools": [{"name": "delegate"}]}

        with pytest.raises(ConfigError, match=r"tools\.0\.name: `delegate` is the built-in tool"):
            parse_scenario(data, "s.yaml")
        parse_scenario({**SUBAGENT_BASE, "tools": [{"name": "delegate"}]}, "s.yaml")

    def test_a_sub_agent_of_a_real_provider_needs_its_key(self, monkeypatch):
        """A sub-agent's own real provider is checked when the runtime is built: bad input
        before the run, naming the sub-agent by position."""
        monkeypatch.delenv("SUB_KEY", raising=False)
        scenario = parse_scenario(
            {
                **SUBAGENT_BASE,
                "agents": {
                    "r": {
                        "provider": {
                            "kind": "openai",
                            "model": "m",
                            "base_url": "https://api.example.test/v1",
                            "api_key_env": "SUB_KEY",
                        }
                    }
                },
            },
            "s.yaml",
        )

        with pytest.raises(ConfigError, match=r"s\.yaml: agents\.<key 1>: provider\.api_key_env"):
            build_replay(scenario, source="s.yaml")
