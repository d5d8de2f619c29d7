"""Property tests: whatever a scenario or config file holds, loading ends in a value or one
`ConfigError` line (issue 10, item 14), and what loads also builds.

Every test is derandomized (the same examples on every run, so CI is stable) and has no
deadline (a slow shared machine must not fail it).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zeroclaw_obs.config import load_config_file
from zeroclaw_obs.errors import ConfigError
from zeroclaw_obs.replay import build_replay
from zeroclaw_obs.scenario import Scenario, load_scenario, parse_scenario
from zeroclaw_obs.tools.deferred import ActivatedToolSet
from zeroclaw_obs.turn.specs import EffectiveTools

PROPERTY = settings(max_examples=200, deadline=None, derandomize=True)

TOKEN = "ghp_" + "aB3dE5fG7h" * 3 + "iJ1kL2"
"""A synthetic GitHub token planted in inputs: no error line may repeat it."""

_files = itertools.count()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("loader")


def _write(folder: Path, suffix: str, content: bytes | str) -> Path:
    path = folder / f"f{next(_files)}{suffix}"
    if isinstance(content, str):
        content = content.encode("utf-8", "surrogatepass")
    path.write_bytes(content)
    return path


def _load(loader: Any, path: Path) -> Any:
    """Load, accepting a value or one ConfigError line that does not repeat the token."""
    try:
        return loader(path)
    except ConfigError as exc:
        line = str(exc)
        assert "\n" not in line
        assert TOKEN[4:14] not in line
        return None


# Pieces of YAML syntax and of our field names, so random text reaches deep into the loader.
YAML_PIECES = [
    "{", "}", "[", "]", ": ", ", ", "- ", "\n", "  ", "&a ", "*a ", "&b ", "*b ", "<<: ", "? ",
    "!!binary ", "!!set ", "!!python/object ", f"!{TOKEN} ", f"*{TOKEN} ", f"{TOKEN}: ",
    "user", "responses", "text", "tools", "name", "config", "mcp_servers", "deferred: true",
    "delay_ms", "cancel_after_ms", "tool_timeout_s", "when", "default", "output", "tool_search",
    ".inf", "-.inf", ".nan", "1e999", "9" * 5000, "0x" + "f" * 4000, "12:30:45", "2026-12-03",
    "yes", "no", "null", "~", '"', "'", "|", ">", "#", "%YAML 1.1\n", "---\n", "...\n",
    "\t", "\x00", "\ufeff", "\ud800", "é",
]  # fmt: skip

TOML_PIECES = [
    "[", "]", "[[", "]]", "{", "}", " = ", ", ", "\n", '"', "'", '"""', "'''", "#", ".",
    "approval", "redaction", "extra_rules", "allow_patterns", "tool_timeout_s",
    "backchannel_timeout_s", "excluded_tools", "parallel_tools", "max_tool_iterations",
    "inf", "-inf", "nan", "1e999", "9" * 5000, "0x" + "f" * 40, "true", "1979-05-27",
    TOKEN, f'"{TOKEN}"', f"({TOKEN}", "\\", "\x00", "é",
]  # fmt: skip

yaml_text = st.lists(st.sampled_from(YAML_PIECES), max_size=60).map("".join)
toml_text = st.lists(st.sampled_from(TOML_PIECES), max_size=40).map("".join)

FIELD_KEYS = [
    "user", "responses", "text", "tool_calls", "tools", "name", "description", "parameters",
    "config", "approval", "answers", "redaction", "extra_rules", "allow_patterns", "agent",
    "alias", "mcp_servers", "deferred", "delay_ms", "jitter_ms", "cancel_after_ms", "when",
    "default", "output", "error", "raise", "hang", "replace_with", "tool_timeout_s",
    "backchannel_timeout_s", "excluded_tools", "provider", "model", "usage", "input_tokens",
    TOKEN,
]  # fmt: skip

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([2**64, -(2**63) - 1, 10**400, 0, -1])
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["", " ", "tool_search", TOKEN, "wx__f", "yes", "interactive"])
)
structures = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(FIELD_KEYS) | st.text(max_size=4), children, max_size=5)
    ),
    max_leaves=30,
)
scenario_like = st.fixed_dictionaries(
    {
        "user": st.just("hi") | structures,
        "responses": st.just([{"text": "ok"}]) | st.lists(structures, max_size=3),
    },
    optional={key: structures for key in FIELD_KEYS if key not in ("user", "responses")},
)


NAMES = st.sampled_from(["a", "b", "tool_search", "wx__f", "f", "", " ", "\t", "wx", "a__b"])
named_tools = st.fixed_dictionaries(
    {
        "user": st.just("hi"),
        "responses": st.just([{"text": "ok"}]),
        "tools": st.lists(st.fixed_dictionaries({"name": NAMES}), max_size=4),
        "mcp_servers": st.lists(
            st.fixed_dictionaries(
                {
                    "name": NAMES,
                    "deferred": st.booleans(),
                    "tools": st.lists(st.fixed_dictionaries({"name": NAMES}), max_size=3),
                }
            ),
            max_size=3,
        ),
    }
)


class TestScenarioLoader:
    @PROPERTY
    @given(content=st.binary(max_size=300), suffix=st.sampled_from([".yaml", ".json", ".yml"]))
    def test_random_bytes(self, folder, content, suffix):
        """Any bytes load to a scenario or fail as one ConfigError line."""
        _load(load_scenario, _write(folder, suffix, content))

    @PROPERTY
    @given(text=st.text(max_size=300), suffix=st.sampled_from([".yaml", ".json"]))
    def test_random_text(self, folder, text, suffix):
        """Any text, lone surrogates included, loads or fails as one ConfigError line."""
        _load(load_scenario, _write(folder, suffix, text))

    @PROPERTY
    @given(text=yaml_text)
    def test_yaml_ish_text(self, folder, text):
        """Text made of YAML syntax, aliases, tags and huge or non-finite numbers stays one line."""
        _load(load_scenario, _write(folder, ".yaml", text))

    @PROPERTY
    @given(data=scenario_like)
    def test_random_structures_as_json(self, folder, data):
        """Random nested structures under our field names load or fail as one line."""
        try:
            text = json.dumps(data)
        except ValueError:  # an integer json itself cannot write
            return
        _load(load_scenario, _write(folder, ".json", text))

    @PROPERTY
    @given(data=scenario_like | structures)
    def test_random_structures_parsed_directly(self, data):
        """`parse_scenario` takes any decoded data: a scenario, or one ConfigError line."""
        try:
            parse_scenario(data, "s")
        except ConfigError as exc:
            assert "\n" not in str(exc)
            assert TOKEN[4:14] not in str(exc)

    @PROPERTY
    @given(data=scenario_like | named_tools)
    def test_what_loads_builds(self, data):
        """A scenario that validates builds its runtime: no name is refused later."""
        try:
            scenario = parse_scenario(data, "s")
        except ConfigError:
            return
        assert isinstance(scenario, Scenario)
        replay = build_replay(scenario)
        EffectiveTools.build(
            registry=replay.execution.registry,
            mcp_servers=replay.execution.mcp_servers,
            config=scenario.config,
            user_message=scenario.user,
            activated=ActivatedToolSet(),
        )

    def test_deep_and_circular_python_data(self):
        """Data nested 10,000 deep or containing itself is one line, not a RecursionError."""
        deep: Any = []
        for _ in range(10_000):
            deep = [deep]
        circular: dict[str, Any] = {"user": "x", "responses": [{"text": "x"}]}
        circular["description"] = circular
        for data in ({"user": "x", "responses": [{"text": "x"}], "description": deep}, circular):
            with pytest.raises(ConfigError, match="nested deeper than 64 levels"):
                parse_scenario(data, "s")


class TestConfigLoader:
    @PROPERTY
    @given(content=st.binary(max_size=300))
    def test_random_bytes(self, folder, content):
        """Any bytes load to a config or fail as one ConfigError line."""
        _load(load_config_file, _write(folder, ".toml", content))

    @PROPERTY
    @given(text=toml_text)
    def test_toml_ish_text(self, folder, text):
        """Text made of TOML syntax, tables, huge or non-finite numbers stays one line."""
        _load(load_config_file, _write(folder, ".toml", text))

    @PROPERTY
    @given(depth=st.integers(min_value=60, max_value=12_000), kind=st.sampled_from("[{"))
    def test_deep_nesting(self, folder, depth, kind):
        """Arrays or inline tables nested to any depth are refused past the bound."""
        opener, closer = ("[", "]") if kind == "[" else ("{a = ", "}")
        text = "excluded_tools = " + opener * depth + closer * depth + "\n"
        _load(load_config_file, _write(folder, ".toml", text))
