"""Replay: the provider a scenario's `provider:` section builds, and where its key comes from."""

from __future__ import annotations

import pytest

from zeroclaw_obs.errors import ConfigError
from zeroclaw_obs.providers.scripted import ScriptedProvider
from zeroclaw_obs.replay import build_provider, resolve_api_key
from zeroclaw_obs.scenario import ScenarioProvider

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
