"""`zeroclaw-obs load`: the scenarios folder, `run_load`, its progress line and the CLI.

The shipped `scenarios/` folder is replayed to its expected end states; a short load run is
checked over real HTTP (`/metrics`) and in its OTLP/JSON export; the CLI is checked for bad
input, SIGTERM and Ctrl-C; and a leak sweep runs the folder with every output on.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from zeroclaw_obs.cli import EXIT_BAD_INPUT, EXIT_CANCELLED, EXIT_OK, main
from zeroclaw_obs.errors import BadInputError, ConfigError
from zeroclaw_obs.load import (
    LoadOptions,
    LoadProgress,
    LoadReport,
    LoadScenario,
    LoadStop,
    StopReason,
    build_load_replay,
    common_redaction,
    load_scenario_dir,
    pick_scenarios,
    progress_line,
    run_load,
)
from zeroclaw_obs.observability.events import (
    AgentEnd,
    AgentStart,
    ApprovalDecision,
    ObserverEvent,
    ToolCall,
    ToolOutcome,
    TurnOutcomeKind,
)
from zeroclaw_obs.observability.telemetry import Telemetry, TelemetryOptions, setup_telemetry
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.scenario import parse_scenario

from .conftest import RecordingObserver
from .receivers import GrpcReceiver, HttpReceiver
from .system import stop

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
SCRIPT = Path(sys.executable).parent / "zeroclaw-obs"

# The fake credentials in scenarios/secrets_in_results.yaml (shaped so the redactor knows them).
SECRETS = {
    "aws": "AKIAZZFAKE00LOAD7Q2X",
    "github": "ghp_FAKEloadTEST0000aaaaBBBBccccDDDDeeee",
    "db_password": "N0t-a-real-pass-42",
}

S, E, D = ToolOutcome.SUCCESS, ToolOutcome.ERROR, ToolOutcome.DENIED
EXPECTED: dict[str, tuple[TurnOutcomeKind, list[tuple[str, ToolOutcome]]]] = {
    "docs_search_dedup.yaml": (
        TurnOutcomeKind.FINAL,
        [("search_docs", S), ("search_docs", S), ("search_docs", ToolOutcome.DEDUPLICATED)],
    ),
    "garbled_text_protocol.yaml": (TurnOutcomeKind.ERROR, []),
    "interrupted_crawl.yaml": (
        TurnOutcomeKind.CANCELLED,
        [("crawl_site", ToolOutcome.INTERRUPTED), ("get_weather", S)],
    ),
    "loop_abort.yaml": (TurnOutcomeKind.ABORTED, [("check_status", S)] * 5),
    "max_iterations.yaml": (TurnOutcomeKind.MAX_ITERATIONS, [("search_docs", S)] * 3),
    "mcp_deferred.yaml": (
        TurnOutcomeKind.FINAL,
        [("calendar__book_trip", D), ("tool_search", S), ("wx__storm_warnings", S)],
    ),
    "ops_shell_approvals.yaml": (
        TurnOutcomeKind.FINAL,
        [("shell", D), ("shell", ToolOutcome.REPLACED), ("shell", S), ("shell", S)],
    ),
    "report_slow.yaml": (TurnOutcomeKind.FINAL, [("fetch_metrics", E), ("run_report", S)]),
    "secrets_in_results.yaml": (
        TurnOutcomeKind.FINAL,
        [("deploy", S), ("get_deploy_token", S), ("read_config", S)],
    ),
    "text_protocol.yaml": (TurnOutcomeKind.FINAL, [("get_weather", S)] * 2),
    "unknown_excluded_timeout.yaml": (
        TurnOutcomeKind.FINAL,
        [
            ("delete_exports", ToolOutcome.EXCLUDED),
            ("get_portfolio_value", ToolOutcome.UNKNOWN),
            ("quote_lookup", E),
            ("shell", D),
        ],
    ),
    "weather_parallel.yaml": (
        TurnOutcomeKind.FINAL,
        [("get_weather", E), ("get_weather", S), ("get_weather", S)],
    ),
}


class InFlight:
    """Counts turns between their start and end events, from outside the load driver."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.ended = 0

    def on_event(self, event: ObserverEvent) -> None:
        if isinstance(event, AgentStart):
            self.now += 1
            self.most = max(self.most, self.now)
        elif isinstance(event, AgentEnd):
            self.now -= 1
            self.ended += 1


class Fanout:
    def __init__(self, *observers: Any) -> None:
        self.observers = observers

    def on_event(self, event: ObserverEvent) -> None:
        for observer in self.observers:
            observer.on_event(event)


def pieces(secret: str, size: int = 12) -> set[str]:
    """Every substring of `size` characters (the whole secret when shorter)."""
    if len(secret) <= size:
        return {secret}
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def assert_no_secret(text: str, where: str) -> None:
    for name, secret in SECRETS.items():
        leaked = sorted(p for p in pieces(secret) if p in text)
        assert [] == leaked, f"{name} leaked into {where}"


def span_names(path: Path) -> list[str]:
    """Every span name in an OTLP/JSON lines file."""
    names = []
    for line in path.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                names.extend(span["name"] for span in scope["spans"])
    return names


def samples(text: str, family: str) -> list[dict[str, str]]:
    """The label sets of one metric family's samples in a text exposition."""
    found = []
    for match in re.finditer(rf"^{family}\{{([^}}]*)\}} ", text, re.MULTILINE):
        found.append(dict(re.findall(r'(\w+)="([^"]*)"', match.group(1))))
    return found


# -- the scenarios folder ------------------------------------------------------------------


async def replay_all() -> dict[str, tuple[Any, RecordingObserver]]:
    redactor = Redactor()
    items = load_scenario_dir(SCENARIOS)

    async def one(item: LoadScenario) -> tuple[str, tuple[Any, RecordingObserver]]:
        observer = RecordingObserver()
        outcome = await build_load_replay(item, observer=observer, redactor=redactor).run()
        return Path(item.source).name, (outcome, observer)

    return dict(await asyncio.gather(*(one(item) for item in items)))


@pytest.fixture(scope="module")
def replayed() -> dict[str, tuple[Any, RecordingObserver]]:
    """Every scenario of the folder replayed once, concurrently (as a load run would)."""
    return asyncio.run(replay_all())


class TestScenarioFolder:
    def test_every_file_validates(self):
        """The folder holds at least eight scenarios and every one of them validates."""
        items = load_scenario_dir(SCENARIOS)
        assert sorted(EXPECTED) == [Path(i.source).name for i in items]
        assert len(items) >= 8

    @pytest.mark.parametrize("name", sorted(EXPECTED))
    def test_replays_to_its_end_state(self, replayed, name):
        """Each scenario ends with its expected turn outcome and tool outcomes."""
        outcome, observer = replayed[name]
        kind, tools = EXPECTED[name]
        assert kind == outcome.kind
        assert sorted(tools) == sorted((e.tool, e.outcome) for e in observer.of(ToolCall))

    def test_the_folder_covers_the_dashboards(self, replayed):
        """Together the scenarios produce every turn outcome, the common tool outcomes, several
        agents, receipts, redactions, approvals on every scripted surface and loop detection."""
        events = [e for _, observer in replayed.values() for e in observer.events]
        calls = [e for e in events if isinstance(e, ToolCall)]
        assert set(TurnOutcomeKind) == {outcome.kind for outcome, _ in replayed.values()}
        assert {S, E, D, ToolOutcome.REPLACED, ToolOutcome.DEDUPLICATED} <= {
            c.outcome for c in calls
        }
        assert {ToolOutcome.INTERRUPTED, ToolOutcome.UNKNOWN, ToolOutcome.EXCLUDED} <= {
            c.outcome for c in calls
        }
        assert len({c.tool for c in calls if c.known_tool}) >= 10
        assert len({e.correlation.agent_alias for e in events if isinstance(e, AgentStart)}) >= 8
        assert any(c.receipt for c in calls)
        assert {"aws_access_key_id", "github_token", "url_credentials"} <= {
            rule for c in calls for rule in c.redaction_counts
        }
        decisions = {(e.decision, e.surface) for e in events if isinstance(e, ApprovalDecision)}
        assert {("no", "scenario"), ("replace", "scenario"), ("always", "scenario")} <= decisions
        assert ("no", "runtime") in decisions

    def test_the_fake_secrets_are_in_the_folder(self):
        """The leak sweep's secrets really are in the scenario files (it is not vacuous)."""
        text = "".join(p.read_text() for p in SCENARIOS.iterdir())
        assert all(secret in text for secret in SECRETS.values())

    def test_tool_latencies_are_spread_by_jitter(self):
        """The slow, medium and fast tools use `jitter_ms`, so replays spread their latencies."""
        jittered = {
            tool.name
            for item in load_scenario_dir(SCENARIOS)
            for tool in item.scenario.tools
            for rule in tool.responses
            if rule.inline_outcome().jitter_ms > 0
        }
        assert {"get_weather", "search_docs", "run_report", "shell"} <= jittered

    def test_a_prompt_with_no_answer_never_reads_the_terminal(self, monkeypatch):
        """In load mode an interactive prompt with no answer left is a runtime denial, even
        when stdin is a TTY."""

        reads: list[str] = []

        class Tty(io.StringIO):
            def isatty(self) -> bool:
                return True

            def readline(self, *args: Any) -> str:
                reads.append("y")
                return "y\n"

        monkeypatch.setattr(sys, "stdin", Tty())
        data = {
            "user": "clean up",
            "tools": [{"name": "shell", "responses": [{"default": {"output": "ok"}}]}],
            "responses": [
                {"tool_calls": [{"id": "c1", "name": "shell", "arguments": {"command": "ls"}}]},
                {"text": "done"},
            ],
        }
        observer = RecordingObserver()
        item = LoadScenario("inline", parse_scenario(data, "inline"))
        replay = build_load_replay(item, observer=observer, redactor=Redactor())
        outcome = asyncio.run(replay.run())
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert [("shell", D)] == [(e.tool, e.outcome) for e in observer.of(ToolCall)]
        assert ["runtime"] == [e.surface for e in observer.of(ApprovalDecision)]
        assert [] == reads


class TestLoadScenarioDir:
    def test_sorted_and_filtered_by_suffix(self, tmp_path):
        """`*.yaml`, `*.yml` and `*.json` files load in name order; other files are ignored."""
        body = {"user": "hi", "responses": [{"text": "hello"}]}
        (tmp_path / "b.yml").write_text(json.dumps(body))
        (tmp_path / "a.json").write_text(json.dumps(body))
        (tmp_path / "c.yaml").write_text(json.dumps(body))
        (tmp_path / "notes.txt").write_text("not a scenario")
        names = [Path(i.source).name for i in load_scenario_dir(tmp_path)]
        assert ["a.json", "b.yml", "c.yaml"] == names

    def test_an_agent_file_is_refused(self, tmp_path):
        """A real provider in the folder is bad input naming the file: load replays offline."""
        (tmp_path / "a.yaml").write_text(json.dumps({"user": "hi", "responses": [{"text": "x"}]}))
        agent = {"user": "hi", "provider": {"kind": "openai", "model": "gpt-4.1-mini"}}
        (tmp_path / "b.yaml").write_text(json.dumps(agent))
        with pytest.raises(ConfigError, match=r"b\.yaml: provider\.kind: load replays scripted"):
            load_scenario_dir(tmp_path)

    @pytest.mark.parametrize(
        ("setup", "fragment"),
        [
            (lambda p: p / "missing", "scenario directory does not exist"),
            (lambda p: p, "no scenario files"),
        ],
    )
    def test_missing_or_empty(self, tmp_path, setup, fragment):
        """A missing or empty folder is bad input naming it."""
        path = setup(tmp_path)
        with pytest.raises(BadInputError, match=fragment) as info:
            load_scenario_dir(path)
        assert str(path) in str(info.value)

    def test_one_redactor_for_the_run(self, tmp_path):
        """Scenarios that disagree on `config.redaction` are rejected, naming the file."""
        plain = {"user": "hi", "responses": [{"text": "hello"}]}
        (tmp_path / "a.json").write_text(json.dumps(plain))
        (tmp_path / "b.json").write_text(
            json.dumps({**plain, "config": {"redaction": {"pii": False}}})
        )
        with pytest.raises(ConfigError, match=r"b\.json: config\.redaction: differs"):
            common_redaction(load_scenario_dir(tmp_path))


class TestLoadOptions:
    @pytest.mark.parametrize(
        ("kwargs", "prefix"),
        [
            ({"rate": 0}, "rate:"),
            ({"rate": -1}, "rate:"),
            ({"rate": float("nan")}, "rate:"),
            ({"rate": float("inf")}, "rate:"),
            ({"duration": -0.5}, "duration:"),
            ({"concurrency": 0}, "concurrency:"),
            ({"grace": -1}, "grace:"),
        ],
    )
    def test_out_of_range_values_name_the_option(self, kwargs, prefix):
        """An out-of-range option raises ValueError starting with the option's name."""
        with pytest.raises(ValueError) as info:
            LoadOptions(**kwargs)
        assert str(info.value).startswith(prefix)

    def test_defaults(self):
        """Two turns a second, until stopped, four in flight, round-robin."""
        options = LoadOptions()
        assert (2.0, 0.0, 4, None) == (
            options.rate,
            options.duration,
            options.concurrency,
            options.seed,
        )


class TestPickScenarios:
    def items(self) -> list[LoadScenario]:
        scenario = parse_scenario({"user": "hi", "responses": [{"text": "x"}]}, "s")
        return [LoadScenario(name, scenario) for name in ("a", "b", "c")]

    def take(self, seed: int | None, n: int = 30) -> list[str]:
        picks = pick_scenarios(self.items(), seed)
        return [next(picks).source for _ in range(n)]

    def test_round_robin_without_a_seed(self):
        """Without a seed, scenarios are picked in order, round and round."""
        assert ["a", "b", "c", "a", "b", "c", "a"] == self.take(None, 7)

    def test_a_seed_repeats_its_order(self):
        """The same seed gives the same random order; another seed another one."""
        assert self.take(7) == self.take(7)
        assert self.take(7) != self.take(8)
        assert {"a", "b", "c"} == set(self.take(7))


class TestProgress:
    def report(self) -> LoadReport:
        turns = dict.fromkeys(TurnOutcomeKind, 0) | {
            TurnOutcomeKind.FINAL: 20,
            TurnOutcomeKind.ABORTED: 1,
            TurnOutcomeKind.CANCELLED: 2,
            TurnOutcomeKind.ERROR: 1,
        }
        tools = dict.fromkeys(ToolOutcome, 0) | {
            S: 80,
            E: 6,
            D: 4,
            ToolOutcome.DEDUPLICATED: 3,
            ToolOutcome.INTERRUPTED: 2,
        }
        return LoadReport(
            elapsed_s=12.3,
            started=24,
            turns=turns,
            tools=tools,
            in_flight=0,
            max_in_flight=4,
            delayed=0,
        )

    def test_the_line_has_rate_and_outcomes(self):
        """The line shows elapsed time, turns and their rate, turn and tool outcome counts."""
        expected = (
            "load 12.3s  turns 24 (1.95/s)  in-flight 0  final 20 max_iter 0 aborted 1 "
            "cancelled 2 error 1  tools ok 80 err 6 denied 4 replaced 0 dedup 3 interrupted 2"
        )
        assert expected == progress_line(self.report())

    def test_rare_counts_only_when_present(self):
        """Unknown and excluded calls, delayed starts and failed turns appear when non-zero."""
        report = self.report()
        report.tools[ToolOutcome.UNKNOWN] = 1
        report.delayed = 5
        report.failures = {"x.yaml": 2}
        line = progress_line(report)
        assert line.endswith("interrupted 2 unknown 1  delayed 5  failed 2")
        assert "excluded" not in line

    def test_tty_refreshes_in_place(self):
        """On a TTY the line is rewritten after a carriage return and ended once."""

        class Tty(io.StringIO):
            def isatty(self) -> bool:
                return True

        stream = Tty()
        progress = LoadProgress(stream)
        progress.update("one")
        progress.finish("two")
        assert "\rone\x1b[K\rtwo\x1b[K\n" == stream.getvalue()
        assert 0.5 == progress.interval_s

    def test_plain_lines_elsewhere(self):
        """Off a TTY each refresh is a plain line, every few seconds."""
        stream = io.StringIO()
        progress = LoadProgress(stream)
        progress.update("one")
        progress.finish("two")
        assert "one\ntwo\n" == stream.getvalue()
        assert progress.interval_s >= 1


# -- run_load ------------------------------------------------------------------------------


def make_telemetry(tmp_path: Path) -> Telemetry:
    return setup_telemetry(
        TelemetryOptions(
            otlp_json=tmp_path / "spans.jsonl",
            metrics_port=0,
            trace_tree=False,
            env={"OTEL_SERVICE_NAME": "zeroclaw-load-test"},
        ),
        redactor=Redactor(),
    )


class TestRunLoad:
    async def test_a_short_run_over_real_http_and_otlp(self, tmp_path):
        """A 1 s run of the folder counts its turns and outcomes, serves them on /metrics while
        it runs, and exports every turn's spans."""
        telemetry = make_telemetry(tmp_path)
        in_flight = InFlight()
        stream = io.StringIO()
        assert telemetry.metrics_server is not None
        url = telemetry.metrics_server.url
        try:
            async with httpx.AsyncClient(timeout=5) as client:
                run = asyncio.create_task(
                    run_load(
                        load_scenario_dir(SCENARIOS),
                        LoadOptions(rate=20, duration=1.0, concurrency=12),
                        observer=Fanout(telemetry.observer, in_flight),
                        redactor=Redactor(),
                        progress=LoadProgress(stream, interval_s=0.2),
                    )
                )
                during = await client.get(url)
                assert not run.done()
                report = await run
                after = (await client.get(url)).text
        finally:
            telemetry.shutdown(timeout_s=5)

        assert 200 == during.status_code
        assert "# TYPE zeroclaw_tool_calls_total counter" in during.text

        assert report.started >= len(EXPECTED)
        assert 0 == report.failed
        assert report.started == sum(report.turns.values()) == in_flight.ended
        assert set(TurnOutcomeKind) == {k for k, n in report.turns.items() if n}
        assert in_flight.most <= 12
        assert report.max_in_flight <= 12
        assert StopReason.DURATION == report.stop_reason

        tool_calls = samples(after, "zeroclaw_tool_calls_total")
        assert len({s["tool"] for s in tool_calls}) >= 10
        assert {"success", "error", "denied", "deduplicated", "interrupted", "replaced"} <= {
            s["outcome"] for s in tool_calls
        }
        assert "unknown" in {s["tool"] for s in tool_calls}
        assert {"aws_access_key_id", "github_token"} <= {
            s["rule"] for s in samples(after, "zeroclaw_redactions_total")
        }
        assert {"run_report", "search_docs"} <= {
            s["tool"] for s in samples(after, "zeroclaw_receipts_total")
        }
        assert {"warning", "block", "abort"} <= {
            s["severity"] for s in samples(after, "zeroclaw_loop_detections_total")
        }

        names = span_names(tmp_path / "spans.jsonl")
        roots = Counter(n.split(" ", 1)[1] for n in names if n.startswith("invoke_agent "))
        assert report.started == sum(roots.values())
        assert {"concierge", "ops", "deployer", "crawler", "watchdog"} <= set(roots)
        assert any(n.startswith("execute_tool ") for n in names)
        assert any(n.startswith("await_approval ") for n in names)

        lines = stream.getvalue().splitlines()
        assert re.fullmatch(
            rf"load \d+\.\ds  turns {report.started} \(\d+\.\d\d/s\)  in-flight 0  final \d+ .*",
            lines[-1],
        )
        assert f"interrupted {report.tools[ToolOutcome.INTERRUPTED]}" in lines[-1]
        assert_no_secret(stream.getvalue(), "the progress line")

    async def test_the_concurrency_cap_delays_starts(self):
        """At 50 turns/s with a cap of 2, never more than 2 turns run; later starts wait."""
        in_flight = InFlight()
        report = await run_load(
            load_scenario_dir(SCENARIOS),
            LoadOptions(rate=50, duration=0.4, concurrency=2),
            observer=in_flight,
            redactor=Redactor(),
        )
        assert 2 == in_flight.most
        assert 2 == report.max_in_flight
        assert report.delayed >= 1
        assert report.started == in_flight.ended

    async def test_a_stop_request_ends_an_endless_run(self):
        """With no duration the run goes on until `LoadStop.request`; an interrupt cancels the
        turns in flight instead of waiting for them."""
        stop = LoadStop()
        in_flight = InFlight()
        run = asyncio.create_task(
            run_load(
                load_scenario_dir(SCENARIOS),
                LoadOptions(rate=20, concurrency=4, grace=30),
                observer=in_flight,
                redactor=Redactor(),
                stop=stop,
            )
        )
        await asyncio.sleep(0.3)
        stop.request(StopReason.INTERRUPTED)
        async with asyncio.timeout(5):  # far below the 30 s grace: the interrupt skipped it
            report = await run
        assert StopReason.INTERRUPTED == report.stop_reason
        assert report.turns[TurnOutcomeKind.CANCELLED] >= 1
        assert report.started == in_flight.ended
        assert 0 == report.in_flight


# -- the command line ----------------------------------------------------------------------


class TestLoadCommand:
    def test_missing_dir(self, tmp_path, capsys):
        """A missing DIR exits 2 with one line naming it."""
        missing = tmp_path / "nope"
        assert EXIT_BAD_INPUT == main(["load", str(missing)])
        err = capsys.readouterr().err.strip().splitlines()
        assert [f"zeroclaw-obs: error: {missing}: scenario directory does not exist"] == err

    def test_invalid_scenario_names_file_and_field(self, tmp_path, capsys):
        """One invalid file exits 2 naming it and its field; no output file is created."""
        folder = tmp_path / "scenarios"
        folder.mkdir()
        for path in SCENARIOS.iterdir():
            (folder / path.name).write_text(path.read_text())
        (folder / "zz_broken.yaml").write_text(
            "user: hi\nresponses:\n  - {text: x, delay_ms: -1}\n"
        )
        out = tmp_path / "spans.jsonl"
        code = main(["load", str(folder), "--metrics-port", "0", "--otlp-json", str(out)])
        assert EXIT_BAD_INPUT == code
        err = capsys.readouterr().err.strip().splitlines()
        assert 1 == len(err)
        assert "zz_broken.yaml: responses.0.delay_ms:" in err[0]
        assert [] == [p.name for p in tmp_path.iterdir() if p.name != "scenarios"]

    @pytest.mark.parametrize(
        ("flags", "fragment"),
        [
            (["--rate", "0"], "--rate: must be a number > 0"),
            (["--rate", "-2"], "--rate: must be a number > 0"),
            (["--concurrency", "0"], "--concurrency: must be an integer >= 1"),
            (["--duration", "-1"], "--duration: must be seconds >= 0"),
            (["--metrics-port", "70000"], "--metrics-port: 70000 is not a port number"),
            (["--rate", "fast"], "argument --rate: invalid float value"),
        ],
    )
    def test_bad_flags(self, capsys, flags, fragment):
        """Out-of-range flags exit 2 with one line naming the flag."""
        try:
            code = main(["load", str(SCENARIOS), *flags])
        except SystemExit as exc:  # argparse's own type errors exit from the parser
            code = exc.code
        assert EXIT_BAD_INPUT == code
        err = capsys.readouterr().err.strip().splitlines()
        assert 1 == len(err)
        assert fragment in err[0]

    def test_load_mode_keeps_no_trace_tree_and_no_turn_lines(self, monkeypatch, tmp_path):
        """The run has one telemetry set-up, without the trace tree (it keeps turns) and without
        per-turn progress lines."""
        import zeroclaw_obs.commands.load as command

        seen: list[TelemetryOptions] = []

        def spy(options: TelemetryOptions, **kwargs: Any) -> Telemetry:
            seen.append(options)
            return setup_telemetry(options, **kwargs)

        monkeypatch.setattr(command, "setup_telemetry", spy)
        args = ["load", str(SCENARIOS), "--duration", "0.1", "--rate", "1", "--grace", "0"]
        assert EXIT_OK == main([*args, "--metrics-port", "0", "--quiet"])
        assert [(False, None)] == [(o.trace_tree, o.progress) for o in seen]

    def test_leak_sweep_over_every_output(self, tmp_path, capsys):
        """A run of the folder with every output on: no fake secret reaches any output byte."""
        out = {name: tmp_path / name for name in ("spans.jsonl", "logs.jsonl", "metrics.txt")}
        code = main(
            [
                "load",
                str(SCENARIOS),
                "--rate",
                "20",
                "--concurrency",
                "12",
                "--duration",
                "1",
                "--metrics-port",
                "0",
                "--progress",
                "--otlp-json",
                str(out["spans.jsonl"]),
                "--logs-out",
                str(out["logs.jsonl"]),
                "--metrics-out",
                str(out["metrics.txt"]),
            ]
        )
        captured = capsys.readouterr()
        assert EXIT_OK == code
        assert "" == captured.out
        assert "turns " in captured.err.splitlines()[-1]
        for name, path in out.items():
            assert_no_secret(path.read_text(), name)
        assert_no_secret(captured.err, "stderr")
        metrics = out["metrics.txt"].read_text()
        assert {"aws_access_key_id", "github_token", "url_credentials"} <= {
            s["rule"] for s in samples(metrics, "zeroclaw_redactions_total")
        }
        assert "invoke_agent deployer" in span_names(out["spans.jsonl"])
        assert "read_config" in out["logs.jsonl"].read_text()


class TestLoadSignals:
    def start(
        self, tmp_path: Path, env_extra: dict[str, str] | None = None, otlp_json: bool = True
    ) -> tuple[subprocess.Popen[str], threading.Thread, list[str], str]:
        """Start `zeroclaw-obs load`; return it, the thread reading its stderr until EOF, the
        lines read so far and its metrics URL, read from the first line."""
        args = [
            str(SCRIPT),
            "load",
            str(SCENARIOS),
            "--rate",
            "10",
            "--concurrency",
            "6",
            "--grace",
            "1",
            "--metrics-port",
            "0",
            "--progress",
            *(["--otlp-json", str(tmp_path / "spans.jsonl")] if otlp_json else []),
            "--logs-out",
            str(tmp_path / "logs.jsonl"),
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env.update(env_extra or {})
        process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        lines: list[str] = []
        first = threading.Event()

        def read() -> None:
            assert process.stderr is not None
            for line in process.stderr:
                lines.append(line)
                first.set()
            first.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert first.wait(timeout=20)
        assert "metrics at " in lines[0], lines
        return process, reader, lines, lines[0].rsplit("metrics at ", 1)[1].strip()

    def wait_for_turns(self, url: str) -> None:
        """Poll /metrics until some turn has ended (the run is really under way)."""
        for _ in range(100):
            if "zeroclaw_turns_total{" in httpx.get(url, timeout=5).text:
                return
            threading.Event().wait(0.1)
        raise AssertionError("no turn ended within 10 s")

    @pytest.mark.parametrize(
        ("signum", "code"), [(signal.SIGTERM, EXIT_OK), (signal.SIGINT, EXIT_CANCELLED)]
    )
    def test_signal_stops_and_flushes(self, tmp_path, signum, code):
        """SIGTERM stops gracefully with exit 0, Ctrl-C with 130; both flush every output."""
        process, reader, lines, url = self.start(tmp_path)
        try:
            self.wait_for_turns(url)
            process.send_signal(signum)
            process.wait(timeout=20)
        finally:
            stop(process)
        reader.join(timeout=10)
        assert code == process.returncode, lines
        final = lines[-1].strip()
        assert re.match(r"load \d+\.\ds  turns \d+ \(\d+\.\d\d/s\)  in-flight 0  final ", final)
        roots = [n for n in span_names(tmp_path / "spans.jsonl") if n.startswith("invoke_agent")]
        started = int(re.search(r"turns (\d+)", final).group(1))
        assert started == len(roots)
        logs = (tmp_path / "logs.jsonl").read_text().splitlines()
        assert started == sum(json.loads(line)["event"] == "turn_end" for line in logs)

    def test_a_second_signal_cuts_the_final_flush_short(self, tmp_path):
        """SIGTERM, then Ctrl-C while spans wait on a collector that never answers: exit 130
        at once, one line saying so, no traceback, and no output or staged file left."""
        with socket.socket() as silent:  # accepts connections, never answers
            silent.bind(("127.0.0.1", 0))
            silent.listen(64)
            endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}"
            env = {
                "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            }
            process, reader, lines, url = self.start(tmp_path, env, otlp_json=False)
            try:
                self.wait_for_turns(url)
                process.send_signal(signal.SIGTERM)
                for _ in range(200):  # the load has stopped once its last line is printed
                    if process.poll() is not None or any("in-flight 0" in x for x in lines):
                        break
                    threading.Event().wait(0.05)
                threading.Event().wait(0.5)  # now in the flush, which waits up to 5 s
                process.send_signal(signal.SIGINT)
                process.wait(timeout=20)
            finally:
                stop(process)
        reader.join(timeout=10)
        assert EXIT_CANCELLED == process.returncode, lines
        assert "load: stopped during the final flush; no output file written\n" == lines[-1]
        assert not any("Traceback" in line for line in lines)
        assert [] == sorted(p.name for p in tmp_path.iterdir())


class TestLoadOverOtlp:
    """`load` as the compose file runs it: traces over OTLP to a real loopback receiver."""

    @pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
    def test_turns_reach_an_otlp_receiver(self, protocol):
        """Every started turn arrives as a whole trace under the service name, with no secret."""
        receiver = GrpcReceiver() if protocol == "grpc" else HttpReceiver()
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env.update(
            OTEL_SERVICE_NAME="zeroclaw-obs",
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
            OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
        )
        args = [str(SCRIPT), "load", str(SCENARIOS), "--rate", "8", "--duration", "1.5"]
        try:
            done = subprocess.run(
                [*args, "--metrics-port", "0", "--grace", "1", "--quiet"],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=60,
            )
        finally:
            receiver.close()
        assert EXIT_OK == done.returncode, done.stderr
        spans, services = [], set()
        for raw in receiver.requests:
            for resource_spans in ExportTraceServiceRequest.FromString(raw).resource_spans:
                services |= {
                    a.value.string_value
                    for a in resource_spans.resource.attributes
                    if a.key == "service.name"
                }
                for scope_spans in resource_spans.scope_spans:
                    spans.extend(scope_spans.spans)
        assert {"zeroclaw-obs"} == services
        roots = [s for s in spans if not s.parent_span_id]
        assert len(roots) >= 5 and all(s.name.startswith("invoke_agent ") for s in roots)
        by_trace = Counter(s.trace_id for s in spans)
        assert {s.trace_id for s in roots} == set(by_trace)  # every span belongs to a turn
        assert any(s.name.startswith("execute_tool ") for s in spans)
        assert_no_secret(b"".join(receiver.requests).decode("latin-1"), f"OTLP {protocol}")
