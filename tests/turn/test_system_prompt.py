"""The system message at the head of the history (`turn/system_prompt.py`, `SystemPrompt`):
the agent's prompt and the tool sections, and a system message the caller put there before the
turn."""

from __future__ import annotations

from typing import Any

from ..conftest import make_replay

PRELOADED = "You are the caller's assistant. Answer in French."
TOOL = {
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "responses": [{"default": {"output": "18C"}}],
}


def agent(*, text_protocol: bool = False, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "user": "weather?",
        "config": {"approval": {"autonomy": "full"}},
        "tools": [TOOL],
        "responses": [{"text": "Il fait beau."}],
        **extra,
    }
    if text_protocol:
        data["provider"] = {"native_tools": False}
    return data


async def run(data: dict[str, Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One turn of `data` on the history `messages` (appended to in place)."""
    replay = make_replay(data)
    replay.state.messages = messages
    await replay.run()
    return messages


def systems(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "system"]


class TestPreloadedSystemMessage:
    async def test_no_agent_prompt_keeps_it_as_it_is(self):
        """Native tools and no deferred section: nothing to add, so the message is untouched
        (it was overwritten with '')."""
        messages = await run(agent(), [{"role": "system", "content": PRELOADED}])

        assert [PRELOADED] == systems(messages)
        assert "system" == messages[0]["role"]

    async def test_an_empty_agent_prompt_keeps_it_too(self):
        messages = await run(agent(system_prompt=""), [{"role": "system", "content": PRELOADED}])

        assert [PRELOADED] == systems(messages)

    async def test_the_tool_sections_follow_it(self):
        """A text-protocol model gets its tool instructions after the caller's prompt."""
        messages = await run(agent(text_protocol=True), [{"role": "system", "content": PRELOADED}])

        [system] = systems(messages)
        assert system.startswith(PRELOADED + "\n\n")
        assert "get_weather" in system

    async def test_the_agents_prompt_replaces_it(self):
        messages = await run(
            agent(system_prompt="You are terse."), [{"role": "system", "content": PRELOADED}]
        )

        assert ["You are terse."] == systems(messages)

    async def test_a_later_turn_keeps_it_and_adds_the_sections_once(self):
        """The next turn of the same history rebuilds the message the loop built: the caller's
        text stays, the tool instructions are not added a second time."""
        messages: list[dict[str, Any]] = [{"role": "system", "content": PRELOADED}]
        await run(agent(text_protocol=True), messages)
        first = systems(messages)
        await run(agent(text_protocol=True), messages)

        assert first == systems(messages)
        assert systems(messages)[0].startswith(PRELOADED)

    async def test_content_parts_keep_their_text(self):
        """A caller's message made of content parts (the OpenAI and Anthropic list form) is
        kept as its text parts, joined; other parts add nothing, and no Python repr of the
        list reaches the model."""
        parts = [
            {"type": "text", "text": PRELOADED},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            "Be brief.",
        ]
        messages = await run(agent(text_protocol=True), [{"role": "system", "content": parts}])

        [system] = systems(messages)
        assert system.startswith(PRELOADED + "\nBe brief.\n\n")
        assert "get_weather" in system
        assert "image_url" not in system and "{" not in system.split("\n\n")[0]

    async def test_content_of_another_kind_adds_nothing(self):
        messages = await run(agent(text_protocol=True), [{"role": "system", "content": {"x": 1}}])

        [system] = systems(messages)
        assert "'x'" not in system and "get_weather" in system


class TestInstalledSystemMessage:
    async def test_a_later_turn_rebuilds_it_without_repeating_it(self):
        """No caller message and no agent prompt: the tool instructions the first turn
        installed are rebuilt, not taken as the caller's prompt."""
        messages: list[dict[str, Any]] = []
        await run(agent(text_protocol=True), messages)
        first = systems(messages)
        await run(agent(text_protocol=True), messages)

        assert 1 == len(first)
        assert first == systems(messages)
