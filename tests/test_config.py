"""Runtime config: TOML loading, unknown fields and bad values named in one line."""

from __future__ import annotations

import pytest

from zeroclaw_obs.config import (
    ApprovalAutonomy,
    RedactionSettings,
    RuntimeConfig,
    build_redactor,
    load_config_file,
)
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


class TestRedactionSettings:
    def test_settings_reach_the_redactor(self):
        """Extra rules, allowlists, extra keys and the PII switch configure the one redactor."""
        settings = RedactionSettings(
            pii=False,
            extra_rules={"ticket_secret": r"TKT-[0-9]{6}"},
            allow=["ghp_" + "A" * 36],
            allow_patterns=[r"sk-test-[a-z]+"],
            extra_sensitive_keys=["x_tenant_key"],
        )
        redactor = build_redactor(settings, "zc.toml")
        text = "TKT-123456 mail jane@example.com ghp_" + "A" * 36
        assert f"[REDACTED:ticket_secret] mail jane@example.com ghp_{'A' * 36}" == (
            redactor.redact_text(text)
        )
        assert {"x_tenant_key": "[REDACTED:sensitive_key]"} == redactor.redact_value(
            {"x_tenant_key": "abc123"}
        )

    @pytest.mark.parametrize(
        ("field", "value", "fragment"),
        [
            ("extra_rules", {"Bad-Id": "x+"}, "Bad-Id"),
            ("extra_rules", {"lookbehind": "(?<=a)b"}, "lookbehind"),
            ("allow_patterns", ["(unclosed"], "(unclosed"),
        ],
    )
    def test_invalid_settings_name_the_file(self, field, value, fragment):
        """An invalid redaction setting is a ConfigError naming the source and the entry."""
        with pytest.raises(ConfigError) as info:
            build_redactor(RedactionSettings(**{field: value}), "zc.toml")
        assert str(info.value).startswith("zc.toml: config.redaction: ")
        assert fragment in str(info.value)
