"""Tool assembly from an agent file (`zeroclaw_obs.assembly`): which tools exist, and the
checks that refuse a bundle pattern or a narrowing entry that names nothing."""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_obs.assembly import (
    agent_tools,
    check_tool_assembly,
    reachable_real_servers,
    unmatched_allowed,
)
from zeroclaw_obs.errors import ConfigError
from zeroclaw_obs.scenario import parse_scenario
from zeroclaw_obs.tools.registry import RiskProfile, ToolBundle, ToolPolicy


def agent(**fields: Any) -> Any:
    data = {
        "user": "go",
        "tools": [
            {"name": "get_weather", "read_only": True},
            {"name": "delete_file"},
        ],
        "mcp_servers": [
            {"name": "wx", "deferred": True, "tools": [{"name": "alerts"}]},
            {"name": "git", "command": "mcp-server-git"},
        ],
        "responses": [{"text": "x"}],
        **fields,
    }
    return parse_scenario(data, "a.yaml")


class TestAgentTools:
    def test_registers_the_file_s_tools_under_its_policy(self):
        """The registry holds every declared tool (the policy decides what is offered); only
        scripted servers are built here, real ones are connected by the run."""
        scenario = agent()
        policy = ToolPolicy(profile=RiskProfile.READ_ONLY)

        registry, servers = agent_tools(scenario, policy, source="a.yaml", extra=[])

        assert ["get_weather", "delete_file"] == registry.names()
        assert policy is registry.policy
        assert ["wx"] == [server.name for server in servers]


class TestReachableRealServers:
    def test_only_real_servers_a_bundle_reaches(self):
        """A real server is connected when a granted bundle can reach it; scripted ones never
        count."""
        reaching = ToolPolicy(bundles=(ToolBundle("b", tools=("git__*",)),))
        other = ToolPolicy(bundles=(ToolBundle("b", tools=("get_weather",)),))

        assert ["git"] == reachable_real_servers(agent(), ToolPolicy())
        assert ["git"] == reachable_real_servers(agent(), reaching)
        assert [] == reachable_real_servers(agent(), other)


class TestCheckToolAssembly:
    def test_a_pattern_for_a_pending_real_server_waits(self):
        """`git__*` cannot be judged before git lists its tools: no error yet."""
        scenario = agent(bundles={"b": {"tools": ["git__st*"]}}, agent={"bundles": ["b"]})

        check_tool_assembly(scenario, source="a.yaml")

    def test_other_patterns_are_judged_now(self):
        """A pattern no declared tool matches is refused before anything runs."""
        scenario = agent(bundles={"b": {"tools": ["get_wether"]}}, agent={"bundles": ["b"]})

        with pytest.raises(ConfigError, match=r"^a.yaml: bundles.<key 1>.tools.0: matches no"):
            check_tool_assembly(scenario, source="a.yaml")

    def test_unused_bundles_are_not_judged(self):
        """Only the bundles the agent is granted decide its tools, so only they are checked."""
        scenario = agent(
            bundles={"b": {"tools": ["get_weather"]}, "c": {"tools": ["nothing"]}},
            agent={"bundles": ["b"]},
        )

        check_tool_assembly(scenario, source="a.yaml")

    def test_a_narrowing_entry_is_named_by_its_field(self):
        """The error names the field the caller gives and the entry's 1-based position."""
        with pytest.raises(ConfigError) as info:
            check_tool_assembly(
                agent(),
                allowed_tools=["get_weather", "nope"],
                allowed_tools_field="--allow-tool",
            )

        assert "--allow-tool entry 2: matches no tool this agent may use" == str(info.value)

    def test_delegate_may_be_named_in_a_file_with_sub_agents(self):
        """`--allow-tool delegate` keeps delegation; without `agents` it names nothing."""
        researcher = {"researcher": {"description": "Looks things up"}}

        check_tool_assembly(agent(agents=researcher), allowed_tools=["delegate"])
        with pytest.raises(ConfigError, match="entry 1: matches no tool"):
            check_tool_assembly(agent(), allowed_tools=["delegate"])


class TestUnmatchedAllowed:
    def test_matches_what_the_agent_may_use_before_narrowing(self):
        """The policy's own narrowings do not shrink what an entry may name."""
        scenario = agent()
        registry, servers = agent_tools(scenario, ToolPolicy(), source="a.yaml", extra=[])
        narrowed = ToolPolicy().narrowed(["get_weather"])

        assert unmatched_allowed(narrowed, list(registry), servers, ["delete_file"]) is None

    def test_the_profile_s_removals_are_not_usable(self):
        """Under `read_only` a tool that is not read-only cannot be named."""
        registry, servers = agent_tools(agent(), ToolPolicy(), source="a.yaml", extra=[])
        policy = ToolPolicy(profile=RiskProfile.READ_ONLY)

        assert 1 == unmatched_allowed(policy, list(registry), servers, ["get_*", "delete_file"])

    def test_tool_search_counts_with_an_admitted_deferred_tool(self):
        """`tool_search` may be named when a deferred tool remains, and only then."""
        registry, servers = agent_tools(agent(), ToolPolicy(), source="a.yaml", extra=[])
        no_wx = ToolPolicy(bundles=(ToolBundle("b", tools=("get_weather",)),))

        assert unmatched_allowed(ToolPolicy(), list(registry), servers, ["tool_search"]) is None
        assert 0 == unmatched_allowed(no_wx, list(registry), servers, ["tool_search"])

    def test_delegate_counts_when_the_agent_has_sub_agents(self):
        """`delegate` is no registry tool: it may be named only where a turn provides it."""
        registry, servers = agent_tools(agent(), ToolPolicy(), source="a.yaml", extra=[])
        tools = list(registry)

        assert 0 == unmatched_allowed(ToolPolicy(), tools, servers, ["delegate"])
        assert None is unmatched_allowed(
            ToolPolicy(), tools, servers, ["delegate"], turn_tools=["delegate"]
        )

    def test_entries_that_could_match_a_pending_server_pass(self):
        """A real server not connected yet may have the tool: the entry is not judged."""
        registry, servers = agent_tools(agent(), ToolPolicy(), source="a.yaml", extra=[])

        found = unmatched_allowed(
            ToolPolicy(), list(registry), servers, ["git__status", "db__q"], pending=["git"]
        )

        assert 1 == found
