"""Whole turns: which tools the model is offered, `tool_search` activation, filter groups."""

from __future__ import annotations

from zeroclaw_obs.observability.events import ToolCall, ToolOutcome


def scripted(name: str, output: str, description: str = "") -> dict:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        "responses": [{"default": {"output": output}}],
    }


def offered(replay, index: int) -> list[str]:
    return [spec.name for spec in replay.provider.requests[index].tools]


AUTO_ALL = {"approval": {"autonomy": "full"}}


class TestDeferredTools:
    def scenario(self, responses: list[dict], **config: object) -> dict:
        return {
            "user": "any storm warnings?",
            "config": {**AUTO_ALL, **config},
            "tools": [scripted("echo", "e")],
            "mcp_servers": [
                {
                    "name": "wx",
                    "deferred": True,
                    "tools": [
                        scripted("storm_warnings", "gale", "Storm warnings for a region"),
                        scripted("air_quality", "good", "Air quality index"),
                    ],
                }
            ],
            "responses": responses,
        }

    async def test_tool_search_activates_from_the_next_iteration(self, run_scenario):
        """A deferred tool is offered only after `tool_search` found it, from the next call on."""
        outcome, replay = await run_scenario(
            self.scenario(
                [
                    {
                        "tool_calls": [
                            {"id": "s", "name": "tool_search", "arguments": {"query": "storm"}}
                        ]
                    },
                    {"tool_calls": [{"id": "w", "name": "wx__storm_warnings", "arguments": {}}]},
                    {"text": "gale"},
                ]
            )
        )
        assert ["echo", "tool_search"] == sorted(offered(replay, 0))
        assert "wx__storm_warnings" in offered(replay, 1)
        assert "wx__air_quality" not in offered(replay, 1)
        assert "gale" == outcome.text
        prompt = replay.state.messages[0]["content"]
        assert "wx__storm_warnings - Storm warnings for a region" in prompt

    async def test_short_name_resolves_to_the_activated_tool(self, run_scenario, observer):
        """A call to `storm_warnings` runs the unique activated `wx__storm_warnings`."""
        await run_scenario(
            self.scenario(
                [
                    {
                        "tool_calls": [
                            {
                                "id": "s",
                                "name": "tool_search",
                                "arguments": {"query": "select:wx__storm_warnings"},
                            }
                        ]
                    },
                    {"tool_calls": [{"id": "w", "name": "storm_warnings", "arguments": {}}]},
                    {"text": "done"},
                ]
            )
        )
        (call,) = [e for e in observer.of(ToolCall) if e.tool_call_id == "w"]
        assert (ToolOutcome.SUCCESS, "gale") == (call.outcome, call.result)

    async def test_deferred_tool_before_activation_is_unknown(self, run_scenario):
        """Calling a deferred tool before `tool_search` activated it is `Unknown tool: …`."""
        _, replay = await run_scenario(
            self.scenario(
                [
                    {"tool_calls": [{"id": "w", "name": "wx__storm_warnings", "arguments": {}}]},
                    {"text": "done"},
                ]
            )
        )
        tool_message = next(m for m in replay.state.messages if m["role"] == "tool")
        assert "Unknown tool: wx__storm_warnings" == tool_message["content"]

    async def test_always_group_pre_activates(self, run_scenario):
        """An `always` filter group pre-activates matching stubs when the turn starts."""
        groups = [{"mode": "always", "tools": ["wx__air*"]}]
        _, replay = await run_scenario(self.scenario([{"text": "done"}], tool_filter_groups=groups))
        assert "wx__air_quality" in offered(replay, 0)
        assert "wx__storm_warnings" not in offered(replay, 0)

    async def test_tool_search_runs_sequentially(self, run_scenario, observer):
        """A batch containing `tool_search` never runs in parallel."""
        await run_scenario(
            self.scenario(
                [
                    {
                        "tool_calls": [
                            {"id": "s", "name": "tool_search", "arguments": {"query": "storm"}},
                            {"id": "e", "name": "echo", "arguments": {"q": "x"}},
                        ]
                    },
                    {"text": "done"},
                ],
                parallel_tools=True,
            )
        )
        kinds = [
            type(e).__name__ for e in observer.events if type(e).__name__.startswith("ToolCall")
        ]
        assert ["ToolCallStart", "ToolCall", "ToolCallStart", "ToolCall"] == kinds


class TestFilterGroups:
    def scenario(self, user: str, groups: list[dict]) -> dict:
        return {
            "user": user,
            "config": {**AUTO_ALL, "tool_filter_groups": groups},
            "tools": [scripted("echo", "e")],
            "mcp_servers": [
                {"name": "wx", "tools": [scripted("forecast", "sun")]},
                {"name": "git", "tools": [scripted("log", "abc")]},
            ],
            "responses": [{"text": "done"}],
        }

    async def test_dynamic_group_needs_a_keyword(self, run_scenario):
        """A dynamic group shows its tools only when the message contains a keyword."""
        groups = [{"tools": ["wx__*"], "keywords": ["Weather"]}]
        _, with_kw = await run_scenario(self.scenario("what WEATHER today?", groups))
        _, without = await run_scenario(self.scenario("show the git log", groups))
        assert ["echo", "wx__forecast"] == sorted(offered(with_kw, 0))
        assert ["echo"] == offered(without, 0)

    async def test_no_groups_shows_every_mcp_tool(self, run_scenario):
        """With no groups every MCP tool is visible; built-ins are never filtered."""
        _, replay = await run_scenario(self.scenario("hi", []))
        assert ["echo", "git__log", "wx__forecast"] == sorted(offered(replay, 0))

    async def test_excluded_tools_are_not_offered(self, run_scenario):
        """`excluded_tools` removes exact names from what the model is offered."""
        data = self.scenario("hi", [])
        data["config"]["excluded_tools"] = ["git__log", "echo"]
        _, replay = await run_scenario(data)
        assert ["wx__forecast"] == offered(replay, 0)
