"""`ScriptedProvider` replays responses in order and says when the script runs out."""

from __future__ import annotations

import pytest

from zeroclaw_obs.errors import (
    ProviderContextOverflowError,
    ProviderError,
    ProviderHTTPError,
    ScenarioExhaustedError,
)
from zeroclaw_obs.providers.base import NativeToolCall, ProviderRequest, Usage
from zeroclaw_obs.providers.scripted import ScriptedProvider
from zeroclaw_obs.scenario import ScenarioResponse

REQUEST = ProviderRequest(messages=[{"role": "user", "content": "hi"}])


class TestScriptedProvider:
    async def test_replays_in_order(self):
        """Responses come back in script order, tool calls as native calls."""
        provider = ScriptedProvider(
            [
                ScenarioResponse(tool_calls=[{"id": "c1", "name": "t", "arguments": {"a": 1}}]),
                ScenarioResponse(text="done", usage={"input_tokens": 5, "output_tokens": 2}),
            ]
        )
        first = await provider.complete(REQUEST)
        second = await provider.complete(REQUEST)
        assert [NativeToolCall(id="c1", name="t", arguments={"a": 1})] == first.tool_calls
        assert ("done", Usage(input_tokens=5, output_tokens=2)) == (second.text, second.usage)
        assert 0 == provider.remaining
        assert [REQUEST, REQUEST] == provider.requests

    async def test_exhausted_script_is_bad_input(self):
        """Asking past the end raises `ScenarioExhaustedError` naming the call number."""
        provider = ScriptedProvider([ScenarioResponse(text="x")], source="f.yaml")
        await provider.complete(REQUEST)
        with pytest.raises(ScenarioExhaustedError) as info:
            await provider.complete(REQUEST)
        expected = "f.yaml: responses: no response left for provider call 2 (the script has 1)"
        assert expected == str(info.value)

    async def test_usage_is_estimated_when_not_scripted(self):
        """Without scripted usage the provider still reports plausible token counts."""
        response = await ScriptedProvider([ScenarioResponse(text="x" * 40)]).complete(REQUEST)
        assert response.usage.input_tokens > 0
        assert 10 == response.usage.output_tokens

    def test_capabilities(self):
        """`native_tools` is a property the loop reads, set from the scenario."""
        assert not ScriptedProvider([ScenarioResponse(text="x")], native_tools=False).native_tools

    async def test_recorded_response_details_come_back(self):
        """A recording's model, response id and finish reasons are returned as the backend's."""
        scripted = ScenarioResponse(
            text="x",
            model="gpt-4.1-mini-2025-04-14",
            response_id="chatcmpl-1",
            finish_reasons=["stop"],
        )
        response = await ScriptedProvider([scripted], model="gpt-4.1-mini").complete(REQUEST)
        assert ("gpt-4.1-mini-2025-04-14", "chatcmpl-1", ("stop",)) == (
            response.model,
            response.response_id,
            response.finish_reasons,
        )

    async def test_the_provider_model_answers_by_default(self):
        """Without a recorded model the response names the provider's model, no id, no reasons."""
        response = await ScriptedProvider([ScenarioResponse(text="x")], model="m").complete(REQUEST)
        assert ("m", None, ()) == (response.model, response.response_id, response.finish_reasons)

    async def test_a_recorded_failure_is_raised(self):
        """An `error:` response raises the provider error it records, with its one safe line."""
        provider = ScriptedProvider(
            [ScenarioResponse(error={"error_type": "http_500", "status": 500})], name="openai"
        )
        with pytest.raises(ProviderHTTPError) as info:
            await provider.complete(REQUEST)
        assert "provider 'openai': HTTP 500 http_500" == info.value.line()
        assert info.value.retryable

    @pytest.mark.parametrize(("status", "expected"), [(400, 400), (None, 400), (413, 413)])
    async def test_a_recorded_overflow_is_the_typed_overflow(self, status, expected):
        """`context_length_exceeded` raises the overflow the loop recovers from (400 unless
        the recording kept another status)."""
        error = {"error_type": "context_length_exceeded", "status": status}
        provider = ScriptedProvider([ScenarioResponse(error=error)], name="openai")
        with pytest.raises(ProviderContextOverflowError) as info:
            await provider.complete(REQUEST)
        assert f"provider 'openai': HTTP {expected} context_length_exceeded" == info.value.line()

    async def test_a_failure_without_status(self):
        """A recorded failure with no status (a timeout) raises a plain `ProviderError`."""
        provider = ScriptedProvider([ScenarioResponse(error={"error_type": "timeout"})])
        with pytest.raises(ProviderError) as info:
            await provider.complete(REQUEST)
        assert "provider 'scripted': timeout" == info.value.line()
