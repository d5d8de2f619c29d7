"""Runtime config: TOML loading, unknown fields and bad values named in one line."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from zeroclaw_obs.config import (
    ApprovalAutonomy,
    ApprovalConfig,
    RedactionSettings,
    RuntimeConfig,
    ToolFilterGroup,
    build_redactor,
    load_config_file,
    load_error_line,
    scrub_parser_message,
)
from zeroclaw_obs.errors import ConfigError

TOKEN = "ghp_" + "aB3dE5fG7h" * 3 + "iJ1kL2"
"""A synthetic GitHub token: the payload an error line must never repeat."""


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

    def test_auto_approve_read_only(self, tmp_path):
        """`approval.auto_approve_read_only` is off by default and read from the file."""
        path = tmp_path / "zc.toml"
        path.write_text("[approval]\nauto_approve_read_only = true\n")
        assert (False, True) == (
            RuntimeConfig().approval.auto_approve_read_only,
            load_config_file(path).approval.auto_approve_read_only,
        )

    def test_context_token_budget(self, tmp_path):
        """`context_token_budget` is off (None) by default and read from the file."""
        path = tmp_path / "zc.toml"
        path.write_text("context_token_budget = 120000\n")
        assert (None, 120000) == (
            RuntimeConfig().context_token_budget,
            load_config_file(path).context_token_budget,
        )

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("context_token_budget = 0\n", "context_token_budget: Input should be greater than"),
            ("context_token_budget = 1.5\n", "context_token_budget"),
            ("auto_approve_read_only = true\n", "(top level): unknown field (key 1"),
            ("[approval]\nauto_approve_read_only = 'maybe'\n", "approval.auto_approve_read_only"),
            ("paralel_tools = true\n", "(top level): unknown field (key 1; did you mean"),
            ("tool_timeout_s = 0\n", "tool_timeout_s: Input should be greater than 0"),
            ("excluded_tools = ['a', '  ']\n", "excluded_tools.1: names must not be blank"),
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

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (f'"{TOKEN}" = 1\n', "(top level): unknown field (key 1)"),
            (
                f"parallel_tools = true\n[approval]\n{TOKEN} = 1\n",
                "approval: unknown field (key 1)",
            ),
            (
                f"[redaction.extra_rules]\n{TOKEN} = 5\n",
                "redaction.extra_rules.<key 1>: Input should",
            ),
            (f"[{TOKEN}]\na = 1\n[{TOKEN}]\nb = 2\n", "malformed TOML: Cannot declare … twice"),
            (f'a = "x"\n{TOKEN} x = 1\n', "malformed TOML: Expected '=' after a key"),
        ],
    )
    def test_errors_never_quote_a_key_or_value(self, tmp_path, text, expected):
        """No key or value of the file appears in the error line: keys go by position."""
        path = tmp_path / "zc.toml"
        path.write_text(text)
        with pytest.raises(ConfigError) as info:
            load_config_file(path)
        assert f"{path}: {expected}" in str(info.value)
        assert TOKEN[4:14] not in str(info.value)

    def test_unknown_field_suggests_the_field_it_may_mean(self, tmp_path):
        """A near-miss of a field name gets a `did you mean` hint naming our field, not the key."""
        path = tmp_path / "zc.toml"
        path.write_text("[approval]\nmode = 'interactive'\nautonmy = 'full'\n")
        with pytest.raises(ConfigError) as info:
            load_config_file(path)
        assert f"{path}: approval: unknown field (key 2; did you mean `autonomy`?)" == str(
            info.value
        )

    @pytest.mark.parametrize(
        ("text", "field"),
        [
            ("tool_timeout_s = inf\n", "tool_timeout_s"),
            ("tool_timeout_s = nan\n", "tool_timeout_s"),
            ("tool_timeout_s = 1e999\n", "tool_timeout_s"),
            ("[approval]\nbackchannel_timeout_s = inf\n", "approval.backchannel_timeout_s"),
            ("[approval]\nbackchannel_timeout_s = -nan\n", "approval.backchannel_timeout_s"),
        ],
    )
    def test_durations_must_be_finite(self, tmp_path, text, field):
        """An infinite or NaN timeout is a bad-input line, not a timer that never fires."""
        path = tmp_path / "zc.toml"
        path.write_text(text)
        with pytest.raises(ConfigError) as info:
            load_config_file(path)
        assert f"{path}: {field}: Input should be a finite number" == str(info.value)

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("max_tool_iterations = " + "7" * 5000 + "\n", "an integer has more than 4300 digits"),
            ("a = " + "[" * 10_000 + "]" * 10_000 + "\n", "nested deeper than 64 levels"),
            ("a = " + "{b = " * 5000 + "1" + "}" * 5000 + "\n", "nested deeper than 64 levels"),
            (
                "excluded_tools = " + "[" * 70 + "]" * 70 + "\n",
                "excluded_tools.0.0.0: nested deeper than 64 levels",
            ),
        ],
    )
    def test_oversized_input_is_one_line(self, tmp_path, text, expected):
        """Huge integers and deep nesting are refused in one line, never a traceback."""
        path = tmp_path / "zc.toml"
        path.write_text(text)
        with pytest.raises(ConfigError) as info:
            load_config_file(path)
        assert expected in str(info.value)
        assert "\n" not in str(info.value)

    def test_unreadable_files(self, tmp_path):
        """Bytes that are not UTF-8, a directory or a NUL in the path are ConfigErrors too."""
        binary = tmp_path / "zc.toml"
        binary.write_bytes(b"\xff\xfe\x00")
        for path in (binary, tmp_path, tmp_path / "a\0b.toml"):
            with pytest.raises(ConfigError):
                load_config_file(path)

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
        ("settings", "expected"),
        [
            (
                {"extra_rules": {"ok_rule": "x+", f"Bad-{TOKEN}": "x+"}},
                "extra_rules.<key 2>: rule id must be snake_case",
            ),
            (
                {"extra_rules": {"lookbehind": f"(?<={TOKEN})b"}},
                "extra_rules.<key 1>: invalid regex (RE2 syntax: no lookaround or backreferences)",
            ),
            (
                {"allow_patterns": ["ok", f"(unclosed {TOKEN}"]},
                "allow_patterns.1: invalid regex (RE2 syntax: no lookaround or backreferences)",
            ),
            ({"allow": [TOKEN, "  "]}, "allow.1: must not be blank"),
        ],
    )
    def test_invalid_settings_name_the_entry_not_its_text(self, settings, expected):
        """An invalid redaction setting names the file, the field and the entry's position only."""
        with pytest.raises(ConfigError) as info:
            build_redactor(RedactionSettings(**settings), "zc.toml")
        assert f"zc.toml: config.redaction.{expected}" in str(info.value)
        assert TOKEN[4:14] not in str(info.value)
        assert info.value.__cause__ is None

    def test_field_names_where_the_settings_sit(self):
        """In a TOML config the settings are the `redaction` table, and the line says so."""
        with pytest.raises(ConfigError) as info:
            build_redactor(RedactionSettings(allow=[" "]), "zc.toml", field="redaction")
        assert "zc.toml: redaction.allow.0: must not be blank" == str(info.value)


class TestLoadErrorLine:
    def test_without_the_input_keys_are_left_out(self):
        """Without the input, a key that is not a field name is left out of the path."""
        with pytest.raises(ValidationError) as info:
            RuntimeConfig.model_validate({"redaction": {"extra_rules": {TOKEN: 5}}})
        assert "s: redaction.extra_rules: Input should be a valid string" == load_error_line(
            "s", info.value
        )

    def test_union_labels_are_left_out(self):
        """pydantic's union member labels are schema, not a place in the file: not shown."""
        data = {"approval": {"answers": [{"replace_with": "x", "extra": 1}]}}
        with pytest.raises(ValidationError) as info:
            RuntimeConfig.model_validate(data)
        line = load_error_line("s", info.value, data)
        assert line.startswith("s: approval.answers.0")
        assert "literal" not in line
        assert "ReplaceWith" not in line

    def test_group_model_is_followed(self):
        """A list of models is followed into its items for field names and suggestions."""
        data = {"tool_filter_groups": [{"mode": "always"}, {"tols": ["x"]}]}
        with pytest.raises(ValidationError) as info:
            RuntimeConfig.model_validate(data)
        assert (
            "s: tool_filter_groups.1: unknown field (key 1; did you mean `tools`?)"
            == load_error_line("s", info.value, data)
        )
        assert ToolFilterGroup().mode == "dynamic"


class TestScrubParserMessage:
    @pytest.mark.parametrize(
        ("message", "expected"),
        [
            (f"found undefined alias '{TOKEN}'", "found undefined alias …"),
            (f"Cannot declare ('{TOKEN}', 'b') twice", "Cannot declare … twice"),
            ("expected ',' or ']', but got '<scalar>'", "expected ',' or ']', but got '<scalar>'"),
            ("found character '\\t' that cannot start any token", None),
            (f'could not determine a constructor for the tag "!{TOKEN}"', None),
        ],
    )
    def test_quoted_input_is_removed(self, message, expected):
        """Quoted input goes; short punctuation and token names stay."""
        scrubbed = scrub_parser_message(message)
        if expected is not None:
            assert expected == scrubbed
        assert TOKEN[4:14] not in scrubbed


class TestApprovalTimeout:
    def test_timeout_s_is_the_backchannel_timeout(self):
        """DESIGN §7 calls it `approval.timeout_s`; the field is `backchannel_timeout_s`."""
        assert 2.5 == ApprovalConfig.model_validate({"timeout_s": 2.5}).backchannel_timeout_s

    def test_both_names_at_once_are_refused(self):
        with pytest.raises(ValidationError, match="not both"):
            ApprovalConfig.model_validate({"timeout_s": 1, "backchannel_timeout_s": 2})
