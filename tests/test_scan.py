"""The leak audit (`redact scan`): findings name file, line and rule, never the value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zeroclaw_obs.cli import main
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.scan import Finding, ScanError, scan_line, scan_paths

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
OTLP_LINE = json.dumps(
    {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "name": "execute_tool shell",
                                "attributes": [
                                    {"key": "gen_ai.tool.name", "value": {"stringValue": "db"}},
                                    {"key": "password", "value": {"stringValue": "hunter2-x9"}},
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
)


class TestScanLine:
    def test_otlp_attribute_lists_are_read_as_key_value(self):
        """An OTLP attribute `{"key": "password", "value": {"stringValue": …}}` is a finding."""
        assert {"sensitive_key": 1} == scan_line(OTLP_LINE, Redactor())

    def test_text_lines(self):
        """A token in a plain text line is found by its rule."""
        assert ["github_token"] == list(scan_line(f"pushed with {SECRET}\n", Redactor()))

    def test_redacted_telemetry_is_clean(self):
        """Already-redacted output has no findings."""
        line = Redactor().redact_text(f"token={SECRET} and {SECRET}")
        assert {} == scan_line(line, Redactor())

    def test_prometheus_text(self):
        """Label values in a Prometheus exposition are scanned like any text."""
        line = f'zeroclaw_tool_calls_total{{tool="x",note="{SECRET}"}} 1\n'
        assert "github_token" in scan_line(line, Redactor())

    @pytest.mark.parametrize(
        "line",
        [
            'zeroclaw_tool_calls_created{tool="get_deploy_token"} 1.796313073799393e+09\n',
            "get_deploy_token} 1.79e+09\n",
            'x_created{outcome="success",tool="get_deploy_token"} 1.7963132104259708e+09\n',
            "get_deploy_token: 1.79e+09 token_count=12 password_age: 1700000000.5\n",
            '{"get_deploy_token": 1.79e+09, "session": 3}\n',
            "⏳ get_deploy_token: service=billing\n",
        ],
    )
    def test_the_runtimes_own_numbers_are_not_findings(self, line: str) -> None:
        """A credential word followed by a float, a timestamp or a counter is no finding."""
        assert {} == scan_line(line, Redactor())

    def test_a_long_digit_string_under_a_sensitive_key_is_a_finding(self) -> None:
        """A numeric PIN or password (four or more bare digits) is still reported."""
        assert {"key_value": 1} == scan_line("db_password: 48291375\n", Redactor())


class TestScanPaths:
    def test_findings_name_file_line_and_rule(self, tmp_path):
        """Each finding is `path:line: rule`, and the value itself never appears."""
        path = tmp_path / "export.jsonl"
        path.write_text(f"clean line\n{OTLP_LINE}\nkey {SECRET}\n")
        findings = list(scan_paths([tmp_path], Redactor()))
        expected = [
            Finding(str(path), 2, "sensitive_key", 1),
            Finding(str(path), 3, "github_token", 1),
        ]
        assert expected == findings
        assert f"{path}:3: github_token" == str(findings[1])

    def test_missing_path(self, tmp_path):
        """A missing path is an error naming it."""
        with pytest.raises(ScanError, match="no such file"):
            list(scan_paths([tmp_path / "nope"], Redactor()))


class TestRedactScanCommand:
    def test_exit_one_with_findings_and_no_values(self, tmp_path, capsys):
        """Findings exit 1, list file:line: rule on stdout, and never print the secret."""
        path = tmp_path / "logs.txt"
        path.write_text(f"ok\nAuthorization: token {SECRET}\n")
        assert 1 == main(["redact", "scan", str(path)])
        captured = capsys.readouterr()
        assert captured.out.startswith(f"{path}:2: ")
        assert SECRET not in captured.out + captured.err
        assert SECRET[:12] not in captured.out + captured.err

    def test_outputs_of_a_scenario_run_are_clean(self, tmp_path, capsys):
        """Every output file of a run whose tool is named `get_deploy_token` scans clean."""
        out = tmp_path / "out"
        out.mkdir()
        scenario = Path(__file__).parent.parent / "scenarios" / "secrets_in_results.yaml"
        flags = {"--metrics-out": "m.prom", "--events-out": "e.jsonl", "--otlp-json": "s.jsonl"}
        flags |= {"--logs-out": "l.jsonl", "--history-out": "h.json", "--audit-out": "a.jsonl"}
        argv = ["run", "--scenario", str(scenario), "--quiet"]
        argv += [part for flag, name in flags.items() for part in (flag, str(out / name))]
        assert 0 == main(argv)
        capsys.readouterr()

        assert 0 == main(["redact", "scan", str(out)]), capsys.readouterr().out

    def test_exit_zero_when_clean(self, tmp_path, capsys):
        """A clean directory exits 0."""
        (tmp_path / "a.txt").write_text("nothing to see\n")
        assert 0 == main(["redact", "scan", str(tmp_path)])
        assert "" == capsys.readouterr().out

    def test_pii_switch(self, tmp_path, capsys):
        """`--no-pii` does not report personal data."""
        path = tmp_path / "a.txt"
        path.write_text("contact jane.doe@example.com\n")
        assert 1 == main(["redact", "scan", str(path)])
        assert 0 == main(["redact", "scan", "--no-pii", str(path)])

    def test_missing_path_exits_two(self, tmp_path, capsys):
        """A missing path exits 2 with one line naming it."""
        assert 2 == main(["redact", "scan", str(tmp_path / "nope")])
        assert "nope: no such file or directory" in capsys.readouterr().err

    def test_invalid_extra_rule_exits_two(self, tmp_path, capsys):
        """An invalid extra rule in the config exits 2 naming the config and the rule."""
        config = tmp_path / "zc.toml"
        config.write_text('[redaction.extra_rules]\nbroken_rule = "(unclosed Zq8Wx7Vc6Bn5"\n')
        assert 2 == main(["redact", "scan", f"--config={config}", str(config)])
        err = capsys.readouterr().err
        assert "zc.toml: redaction.extra_rules" in err  # the TOML table, as the file spells it
        assert "invalid regex" in err
        assert (False, 1) == ("Zq8Wx7" in err, err.count("\n"))
