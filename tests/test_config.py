"""Runtime config: TOML loading, unknown fields and bad values named in one line."""

from __future__ import annotations

import pytest

from zeroclaw_obs.config import ApprovalAutonomy, RuntimeConfig, load_config_file
from zeroclaw_obs.errors import ConfigError


class TestLoadConfigFile:
    def test_toml_values(self, tmp_path):
        """A TOML file's top-level table is the runtime config."""
        path = tmp_path / "zc.toml"
        path.write_text(
            'parallel_tools = true\nmax_parallel_tools = 4\n[approval]\nautonomy = "full"\n'
        )
        config = load_config_file(path)
        assert (True, 4) == (config.parallel_tools, config.max_parallel_tools)
        assert ApprovalAutonomy.FULL == config.approval.autonomy

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("paralel_tools = true\n", "paralel_tools: unknown field"),
            ("tool_timeout_s = 0\n", "tool_timeout_s: Input should be greater than 0"),
            ("excluded_tools = ['  ']\n", "excluded_tools: Value error, tool names must not be"),
            ("[approval]\nanswers = ['maybe']\n", "approval.answers.0"),
            ("parallel_tools = \n", "malformed TOML"),
        ],
    )
    def test_errors_name_file_and_field(self, tmp_path, text, expected):
        """Invalid config fails with `FILE: field: problem` on one line."""
        path = tmp_path / "zc.toml"
        path.write_text(text)
        with pytest.raises(ConfigError) as info:
            load_config_file(path)
        assert str(info.value).startswith(f"{path}: ")
        assert expected in str(info.value)

    def test_config_is_immutable(self):
        """A loaded config cannot be changed behind the engine's back."""
        config = RuntimeConfig()
        with pytest.raises(ValueError):
            config.parallel_tools = True  # type: ignore[misc]
