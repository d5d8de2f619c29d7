"""Tests for `zeroclaw_obs.model_targets`: the model-switch callback of an agent file."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from zeroclaw_obs.model_targets import ModelTargets, ScriptedModel
from zeroclaw_obs.providers.base import Provider, ProviderRequest, ProviderResponse
from zeroclaw_obs.providers.scripted import ScriptedProvider
from zeroclaw_obs.replay import build_provider
from zeroclaw_obs.scenario import parse_scenario
from zeroclaw_obs.turn.model_switch import ModelSwitch, ModelSwitchRefused

RESPONSES = [{"text": "one"}, {"text": "two", "model": "named"}]


def settings(**provider: Any):
    data: dict[str, Any] = {"user": "x", "provider": provider}
    if provider.get("kind", "scripted") == "scripted":
        data["responses"] = RESPONSES
    return parse_scenario(data, "test")


class Built(Provider):
    """A provider `ModelTargets` built, closed or not."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.closed = 0

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        raise AssertionError("never asked")

    async def aclose(self) -> None:
        self.closed += 1


class TestScripted:
    def script(self) -> tuple[ModelTargets, ScriptedProvider]:
        scenario = settings(model="small", models=["big"])
        provider = build_provider(scenario.provider, scenario.responses)
        targets = ModelTargets(scenario.provider, build=build_provider)
        targets.primary = provider
        assert isinstance(provider, ScriptedProvider)
        return targets, provider

    async def test_another_model_goes_on_with_the_same_script(self):
        """The view answers the script's next response under its own model's name, unless the
        script names one."""
        targets, script = self.script()
        await script.complete(ProviderRequest(messages=[]))
        big = targets(ModelSwitch(model="big"), script)
        assert isinstance(big, ScriptedModel)
        assert ("scripted", "big", True) == (big.name, big.model, big.native_tools)
        second = await big.complete(ProviderRequest(messages=[]))
        assert ("two", "named", 0) == (second.text, second.model, script.remaining)

    async def test_the_view_reports_its_own_model(self):
        """A response the script does not name a model for reports the model asked."""
        targets, script = self.script()
        big = targets(ModelSwitch(model="big"), script)
        first = await big.complete(ProviderRequest(messages=[]))
        assert ("one", "big") == (first.text, first.model)

    def test_back_to_the_file_s_model_is_the_script_itself(self):
        """Switching back from a view returns the scripted provider it views."""
        targets, script = self.script()
        big = targets(ModelSwitch(model="big"), script)
        assert script is targets(ModelSwitch(model="small", provider="scripted"), big)

    @pytest.mark.parametrize(
        ("request_", "reason"),
        [
            (ModelSwitch(model="gpt-9"), "unknown model"),
            (ModelSwitch(model="big", provider="openai"), "unknown provider"),
        ],
    )
    def test_unknown_targets(self, request_: ModelSwitch, reason: str):
        """Only the file's provider and the models it lists are served."""
        targets, script = self.script()
        with pytest.raises(ModelSwitchRefused, match=reason):
            targets(request_, script)

    def test_a_foreign_provider_in_use_is_refused(self):
        """The callback serves the script it was built for, not any provider handed to it."""
        targets, _ = self.script()
        with pytest.raises(ModelSwitchRefused, match="not this agent's"):
            targets(ModelSwitch(model="big"), Built("small"))


class TestReal:
    def make(self, wrap: Any = None) -> tuple[ModelTargets, list[Built], Built]:
        section = settings(
            kind="openai", base_url="http://127.0.0.1:9/v1", model="small", models=["big", "huge"]
        ).provider
        built: list[Built] = []

        def build(changed: Any) -> Provider:
            assert ("openai", "http://127.0.0.1:9/v1") == (changed.kind, changed.base_url)
            provider = Built(changed.model)
            built.append(provider)
            return provider

        targets = ModelTargets(section, build=build, wrap=wrap)
        primary = Built("small")
        targets.primary = primary
        return targets, built, primary

    async def test_each_model_is_built_once_and_closed_with_the_targets(self):
        """A model's provider is built on first use, reused after, and closed by `aclose`;
        the primary is its owner's to close."""
        targets, built, primary = self.make()
        first = targets(ModelSwitch(model="big"), primary)
        again = targets(ModelSwitch(model="big"), primary)
        other = targets(ModelSwitch(model="huge", provider="openai"), first)
        assert (first, ["big", "huge"]) == (again, [p.model for p in built])
        assert primary is targets(ModelSwitch(model="small"), other)
        await targets.aclose()
        assert ([1, 1], 0) == ([p.closed for p in built], primary.closed)

    def test_built_providers_are_wrapped(self):
        """With `--record`, what is built is handed to the recorder's wrapper."""
        wrapped: list[Provider] = []

        def wrap(provider: Provider) -> Provider:
            wrapped.append(provider)
            return provider

        targets, built, primary = self.make(wrap=wrap)
        targets(ModelSwitch(model="big"), primary)
        assert built == wrapped

    def test_worker_threads_build_one_provider_per_model(self):
        """Sync tools may ask from several threads at once: still one provider per model."""
        targets, built, primary = self.make()
        barrier = threading.Barrier(8)

        def ask() -> None:
            barrier.wait()
            targets(ModelSwitch(model="big"), primary)

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert ["big"] == [p.model for p in built]
