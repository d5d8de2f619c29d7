"""prometheus.yml and the alert rules under promtool (Debian package `prometheus`, 2.42 on CI):
`check config`, `check rules` and the `test rules` unit tests; plus what promtool does not
check: every alert has a firing and a non-firing test case, a severity, and a summary,
description and dashboard link that exist.

Without promtool these skip, except in CI (`CI=true`), where they fail.
"""

from __future__ import annotations

import subprocess

from ..system import system_binary
from .stack import ROOT, dashboards, load_yaml

TIMEOUT_S = 60


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [system_binary("promtool"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def alerts() -> dict[str, dict]:
    groups = load_yaml("prometheus/rules.yml")["groups"]
    return {rule["alert"]: rule for group in groups for rule in group["rules"] if "alert" in rule}


class TestPromtool:
    def test_check_config(self):
        """`promtool check config prometheus.yml` passes, rule files included."""
        result = promtool("check", "config", "prometheus.yml")
        assert 0 == result.returncode, result.stdout + result.stderr
        assert "1 rule files found" in result.stdout

    def test_check_rules(self):
        """`promtool check rules prometheus/rules.yml` passes."""
        result = promtool("check", "rules", "prometheus/rules.yml")
        assert 0 == result.returncode, result.stdout + result.stderr

    def test_rule_unit_tests(self):
        """`promtool test rules prometheus/rules_test.yml` passes."""
        result = promtool("test", "rules", "prometheus/rules_test.yml")
        assert 0 == result.returncode, result.stdout + result.stderr


class TestAlertRules:
    def test_the_five_alerts(self):
        """Tool error ratio, p95 tool latency, denial spike, telemetry drops, redaction-rate
        anomaly."""
        assert {
            "ZeroclawToolErrorRatioHigh",
            "ZeroclawToolLatencyP95High",
            "ZeroclawApprovalDenialSpike",
            "ZeroclawTelemetryDropped",
            "ZeroclawRedactionRateAnomaly",
        } == set(alerts())

    def test_every_alert_is_tested_firing_and_silent(self):
        """Each alert has a unit-test case where it fires and one where it must not."""
        firing, silent = set(), set()
        for test in load_yaml("prometheus/rules_test.yml")["tests"]:
            for case in test.get("alert_rule_test", []):
                (firing if case.get("exp_alerts") else silent).add(case["alertname"])
        assert set(alerts()) == firing
        assert set(alerts()) == silent

    def test_every_alert_is_grouped_by_agent(self):
        """Each alert keeps the `agent` target label, so it names the deployment."""
        for name, rule in alerts().items():
            assert "by (agent" in rule["expr"], name

    def test_labels_and_annotations(self):
        """Each alert has a severity, a summary, a description, and a dashboard that exists."""
        uids = {d["uid"] for d in dashboards().values()}
        for name, rule in alerts().items():
            assert rule["labels"]["severity"] in {"warning", "critical"}, name
            assert rule["annotations"]["summary"].strip(), name
            assert rule["annotations"]["description"].strip(), name
            assert rule["annotations"]["dashboard"].removeprefix("/d/") in uids, name
