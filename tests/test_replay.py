"""Replay: the provider a scenario's `provider:` section builds, where its key comes from, and
the tool assembly it wires (bundles, risk profile, per-run narrowing)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_obs.approval.manager import runtime_denial_text
from zeroclaw_obs.config import ApprovalAutonomy
from zeroclaw_obs.errors import ConfigError
from zeroclaw_obs.providers.scripted import ScriptedProvider
from zeroclaw_obs.record import TurnRecorder
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.replay import Replay, build_provider, resolve_api_key
from zeroclaw_obs.scenario import ScenarioProvider, parse_scenario
from zeroclaw_obs.turn.results import excluded_text, unknown_text

from .conftest import make_replay

TOOLBOX = Path(__file__).parent / "tools" / "mcp_servers" / "toolbox.py"

TOKEN = "sk-proj-" + "Zx81Qw" * 8


def openai(**fields: object) -> ScenarioProvider:
    return ScenarioProvider.model_validate({"kind": "openai", "model": "m", **fields})


class TestResolveApiKey:
    def test_reads_the_default_variable(self):
        """Without `api_key_env` the key comes from OPENAI_API_KEY."""
        assert TOKEN == resolve_api_key(openai(), env={"OPENAI_API_KEY": TOKEN})

    def test_reads_the_named_variable(self):
        """`api_key_env` names the variable that holds the key."""
        settings = openai(api_key_env="MY_KEY")
        assert TOKEN == resolve_api_key(settings, env={"MY_KEY": TOKEN, "OPENAI_API_KEY": "x"})

    def test_a_missing_variable_names_it_and_nothing_else(self):
        """A required variable that is unset (or empty) is one line naming the variable."""
        for env in ({}, {"OPENAI_API_KEY": ""}):
            with pytest.raises(ConfigError) as info:
                resolve_api_key(openai(), source="a.yaml", env=env)
            assert str(info.value).startswith(
                "a.yaml: provider.api_key_env: the environment variable OPENAI_API_KEY is not set"
            )

    def test_a_named_variable_is_required_even_on_loopback(self):
        """A variable the file names must be set, whatever the server."""
        settings = openai(api_key_env="LOCAL_KEY", base_url="http://127.0.0.1:8000/v1")
        with pytest.raises(ConfigError, match="LOCAL_KEY is not set"):
            resolve_api_key(settings, env={})

    @pytest.mark.parametrize(
        "url", ["http://127.0.0.1:11434/v1", "http://localhost:8000/v1", "http://[::1]:8000/v1"]
    )
    def test_a_loopback_server_may_go_without_the_default_key(self, url):
        """A local server (Ollama, vLLM) without auth: no key, no error, no auth header."""
        assert resolve_api_key(openai(base_url=url), env={}) is None

    def test_null_never_sends_a_key(self):
        """`api_key_env: null` sends no key even when the default variable is set."""
        assert resolve_api_key(openai(api_key_env=None), env={"OPENAI_API_KEY": TOKEN}) is None

    def test_a_key_written_as_the_name_is_not_echoed(self):
        """A token pasted where the variable's name belongs is shown redacted."""
        pasted = "ghp_" + "aB3dE5fG7h" * 3 + "iJ1kL2"
        with pytest.raises(ConfigError) as info:
            resolve_api_key(openai(api_key_env=pasted), env={})
        assert pasted not in str(info.value)


class TestBuildProvider:
    def test_scripted_builds_the_scripted_provider(self):
        """`kind: scripted` replays responses under its name and model."""
        provider = build_provider(ScenarioProvider(native_tools=False), [])
        assert isinstance(provider, ScriptedProvider)
        assert ("scripted", "scripted-model", False) == (
            provider.name,
            provider.model,
            provider.native_tools,
        )

    def test_a_real_provider_without_its_key_is_bad_input(self):
        """Building a real provider reads the key first: a missing one is a ConfigError."""
        with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
            build_provider(openai(), source="a.yaml", env={})


class TestMaxTokens:
    @pytest.mark.parametrize("kind", ["openai", "anthropic"])
    def test_the_agent_files_cap_reaches_the_provider(self, kind: str):
        """`provider.max_tokens` is each real provider's output cap; unset, OpenAI sends none
        and Anthropic (which requires one) uses 4,096."""
        capped = ScenarioProvider.model_validate({"kind": kind, "model": "m", "max_tokens": 512})
        default = ScenarioProvider.model_validate({"kind": kind, "model": "m"})
        env = {"OPENAI_API_KEY": TOKEN, "ANTHROPIC_API_KEY": TOKEN}

        built = [build_provider(s, env=env).max_tokens for s in (capped, default)]

        assert [512, None if kind == "openai" else 4096] == built

    def test_a_cap_below_one_is_refused(self):
        with pytest.raises(ValueError, match="max_tokens"):
            ScenarioProvider.model_validate({"kind": "openai", "model": "m", "max_tokens": 0})


def scripted(name: str, *, read_only: bool = False) -> dict[str, Any]:
    return {"name": name, "read_only": read_only, "responses": [{"default": {"output": name}}]}


def calls(*names: str, tag: str = "c") -> dict[str, Any]:
    """One response calling each name, ids `{tag}0`, `{tag}1`, … (`tool_search=QUERY` passes
    a query)."""
    found = []
    for n, name in enumerate(names):
        tool, _, query = name.partition("=")
        arguments = {"query": query} if query else {}
        found.append({"id": f"{tag}{n}", "name": tool, "arguments": arguments})
    return {"tool_calls": found}


def turn(*responses: dict[str, Any], **fields: Any) -> dict[str, Any]:
    data = {
        "user": "go",
        "tools": [scripted("get_weather", read_only=True), scripted("delete_file")],
        "config": {"approval": {"mode": "non_interactive", "auto_approve": ["*"]}},
        "responses": [*responses, {"text": "done"}],
    }
    return {**data, **fields}


def offered(replay: Replay, request: int = 0) -> list[str]:
    provider = replay.execution.provider
    assert isinstance(provider, ScriptedProvider)
    return [spec.name for spec in provider.requests[request].tools]


def results(replay: Replay) -> dict[str, str]:
    """Each tool message's text by call id."""
    return {m["tool_call_id"]: m["content"] for m in replay.state.messages if m["role"] == "tool"}


WEATHER_SERVER = {
    "name": "wx",
    "deferred": True,
    "tools": [
        {
            "name": "forecast",
            "description": "Forecast",
            "responses": [{"default": {"output": "f"}}],
        },
        {
            "name": "alerts",
            "description": "Alerts",
            "annotations": {"readOnlyHint": True},
            "responses": [{"default": {"output": "a"}}],
        },
    ],
}


class TestBundles:
    async def test_without_bundles_every_tool_is_offered(self, run_scenario):
        """An agent file with no `agent.bundles` runs as before bundles existed."""
        _, replay = await run_scenario(turn(calls("get_weather")))

        assert ["get_weather", "delete_file"] == offered(replay)

    async def test_only_granted_tools_are_offered_and_callable(self, run_scenario):
        """Bundles grant tools by name, pattern or MCP server; any other tool is unknown."""
        data = turn(
            calls("delete_file", "get_weather", "db__query"),
            mcp_servers=[
                {"name": "fs", "tools": [scripted("read")]},
                {"name": "db", "tools": [scripted("query")]},
            ],
            bundles={"weather": {"tools": ["get_*"]}, "files": {"mcp_servers": ["fs"]}},
            agent={"bundles": ["weather", "files"]},
        )

        _, replay = await run_scenario(data)

        assert ["get_weather", "fs__read"] == offered(replay)
        assert {
            "c0": unknown_text("delete_file"),
            "c1": "get_weather",
            "c2": unknown_text("db__query"),
        } == results(replay)

    def test_a_pattern_that_matches_nothing_is_bad_input(self):
        """A granted bundle's entry that names no tool of the file is one line naming its place,
        never the bundle's name or the pattern."""
        data = turn(
            bundles={"ghp_weatherBundleName": {"tools": ["get_weather", "gte_*"]}},
            agent={"bundles": ["ghp_weatherBundleName"]},
        )

        with pytest.raises(ConfigError) as info:
            make_replay(data, source="a.yaml")

        assert "a.yaml: bundles.<key 1>.tools.1: matches no tool of this file" == str(info.value)

    def test_tool_search_may_be_named_beside_a_deferred_server(self):
        """`tool_search` is a tool of the file when a server is deferred."""
        data = turn(
            mcp_servers=[WEATHER_SERVER],
            bundles={"b": {"tools": ["tool_search", "wx__*"]}},
            agent={"bundles": ["b"]},
        )

        make_replay(data)

    async def test_a_server_no_bundle_reaches_is_never_started(self, run_scenario, tmp_path):
        """A real server the agent is not granted is not started (this one could not be)."""
        data = turn(
            calls("get_weather"),
            mcp_servers=[{"name": "box", "command": str(tmp_path / "no-such-server")}],
            bundles={"b": {"tools": ["get_weather"]}},
            agent={"bundles": ["b"]},
        )

        outcome, _ = await run_scenario(data)

        assert "done" == outcome.text

    async def test_a_real_server_s_tools_are_granted_by_pattern(self, run_scenario):
        """A pattern for a real server grants the matching tools once the server lists them."""
        box = {"name": "box", "command": sys.executable, "args": [str(TOOLBOX)]}
        data = turn(
            calls("box__echo", "box__pid"),
            mcp_servers=[box],
            bundles={"b": {"tools": ["box__ech*"]}},
            agent={"bundles": ["b"]},
        )
        data["responses"][0]["tool_calls"][0]["arguments"] = {"text": "hi"}

        _, replay = await run_scenario(data)

        assert ["box__echo"] == offered(replay)
        assert {"c0": "hi", "c1": unknown_text("box__pid")} == results(replay)

    async def test_a_real_server_granted_whole_offers_every_tool_it_lists(self, run_scenario):
        """`mcp_servers: [box]` grants the server's tools as it lists them; static tools the
        bundles do not name stay out."""
        box = {"name": "box", "command": sys.executable, "args": [str(TOOLBOX)]}
        data = turn(
            calls("box__echo"),
            mcp_servers=[box],
            bundles={"b": {"mcp_servers": ["box"]}},
            agent={"bundles": ["b"]},
        )
        data["responses"][0]["tool_calls"][0]["arguments"] = {"text": "hi"}

        _, replay = await run_scenario(data)

        names = offered(replay)
        assert {"box__echo", "box__pid", "box__fail"} <= set(names)
        assert all(name.startswith("box__") for name in names)
        assert {"c0": "hi"} == results(replay)

    async def test_a_real_server_pattern_that_matches_nothing_fails_the_run(self, run_scenario):
        """Judged once the server has listed its tools: bad input, before any provider call."""
        box = {"name": "box", "command": sys.executable, "args": [str(TOOLBOX)]}
        data = turn(mcp_servers=[box], bundles={"b": {"tools": ["box__nope"]}})
        data["agent"] = {"bundles": ["b"]}
        replay = make_replay(data)

        with pytest.raises(ConfigError, match=r"bundles.<key 1>.tools.0: matches no tool"):
            await replay.run()

        assert [] == replay.execution.provider.requests  # type: ignore[attr-defined]

    async def test_a_recording_keeps_the_bundles_it_ran_with(self):
        """`--record` writes the granted bundles, so the recording grants what the run did."""
        data = turn(bundles={"b": {"tools": ["get_weather"]}}, agent={"bundles": ["b"]})
        replay = make_replay(data, recorder=TurnRecorder(Redactor()))
        await replay.run()

        recorded = replay.recording()

        assert {"b": {"tools": ["get_weather"], "mcp_servers": []}} == recorded["bundles"]
        assert ["b"] == parse_scenario(recorded, "rec").agent.bundles


class TestRiskProfile:
    async def test_read_only_offers_and_runs_only_read_only_tools(self, run_scenario):
        """`read_only`: other tools are not offered and read `Tool not available in this turn`;
        read-only ones run unasked, whatever autonomy the config asked for."""
        data = turn(calls("get_weather", "delete_file"), agent={"risk_profile": "read_only"})
        data["config"] = {"approval": {"autonomy": "full"}}

        _, replay = await run_scenario(data)

        assert ApprovalAutonomy.READ_ONLY == replay.execution.approval.config.autonomy
        assert ["get_weather"] == offered(replay)
        assert {"c0": "get_weather", "c1": excluded_text("delete_file")} == results(replay)

    async def test_full_runs_unasked_except_what_the_config_requires(self, run_scenario):
        """`full` approves every call, but a tool in `always_ask` still needs an operator."""
        data = turn(calls("get_weather", "delete_file"), agent={"risk_profile": "full"})
        data["config"] = {"approval": {"mode": "non_interactive", "always_ask": ["delete_file"]}}

        _, replay = await run_scenario(data)

        assert {"c0": "get_weather", "c1": runtime_denial_text("delete_file")} == results(replay)

    async def test_supervised_lowers_full_autonomy(self, run_scenario):
        """`supervised` is a ceiling: the config's `autonomy: full` asks again."""
        data = turn(calls("delete_file"), agent={"risk_profile": "supervised"})
        data["config"] = {"approval": {"mode": "non_interactive", "autonomy": "full"}}

        _, replay = await run_scenario(data)

        assert {"c0": runtime_denial_text("delete_file")} == results(replay)


class TestNarrowing:
    async def test_a_narrowed_away_tool_is_neither_offered_found_nor_executable(self, run_scenario):
        """`allowed_tools` removes the rest from the specs, the stubs and `tool_search`, and a
        call to it by name (any case) reads `Tool not available in this turn: …`."""
        data = turn(
            calls("tool_search=select:wx__forecast,wx__alerts", "delete_file", "wx__forecast"),
            calls("tool_search=forecast", "DELETE_FILE", "wx__alerts", "forecast", tag="d"),
            mcp_servers=[WEATHER_SERVER],
        )

        _, replay = await run_scenario(data, allowed_tools=["get_weather", "wx__alerts"])

        system = replay.state.messages[0]["content"]
        found = results(replay)
        assert ["get_weather", "tool_search"] == offered(replay, 0)
        assert ["get_weather", "tool_search", "wx__alerts"] == offered(replay, 1)
        assert "wx__alerts" in system and "wx__forecast" not in system
        assert "- wx__alerts" in found["c0"] and "Not found: wx__forecast" in found["c0"]
        assert "No matching deferred tools found." == found["d0"]
        assert ["wx__alerts"] == replay.execution.activated.names()
        assert {
            "c1": excluded_text("delete_file"),
            "c2": excluded_text("wx__forecast"),
            "d1": excluded_text("DELETE_FILE"),
            "d2": "a",
            "d3": unknown_text("forecast"),
        } == {key: found[key] for key in ("c1", "c2", "d1", "d2", "d3")}

    async def test_narrowing_adds_nothing(self, run_scenario):
        """An allow list naming granted and ungranted tools keeps only the granted ones."""
        data = turn(
            calls("delete_file"),
            bundles={"b": {"tools": ["get_weather"]}, "c": {"tools": ["delete_file"]}},
            agent={"bundles": ["b"]},
        )

        _, replay = await run_scenario(data, allowed_tools=["*"])

        assert ["get_weather"] == offered(replay)
        assert {"c0": unknown_text("delete_file")} == results(replay)

    def test_an_entry_naming_no_tool_the_agent_may_use_is_bad_input(self):
        """An entry that matches only tools outside the grant (or none) names its position."""
        data = turn(bundles={"b": {"tools": ["get_weather"]}}, agent={"bundles": ["b"]})

        with pytest.raises(ConfigError) as info:
            make_replay(
                data,
                allowed_tools=["get_weather", "delete_file"],
                allowed_tools_field="--allow-tool",
            )

        assert "--allow-tool entry 2: matches no tool this agent may use" == str(info.value)

    def test_an_entry_for_a_tool_the_profile_removed_is_bad_input(self):
        """Under `read_only` a tool that is not read-only is not one the agent may use."""
        data = turn(agent={"risk_profile": "read_only"})

        with pytest.raises(ConfigError, match="allowed_tools entry 1"):
            make_replay(data, allowed_tools=["delete_file"])
