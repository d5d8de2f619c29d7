"""`zeroclaw-obs load --target URL`: the load driven over HTTP into a real `serve` process.

Each test starts the console script's `serve` on a loopback port (`serve_process`) with an agent
of `load_target/`, and drives it with the shipped `scenarios/` folder as the messages: in this
process through `run_http_load`, or through the CLI (`main`, or the console script when a signal
is sent). The counts the driver reports are checked against the server's own `/metrics`.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from zeroclaw_obs.cli import EXIT_BAD_INPUT, EXIT_CANCELLED, EXIT_OK, main
from zeroclaw_obs.errors import BadInputError
from zeroclaw_obs.load import LoadOptions, LoadStop, StopReason, load_scenario_dir
from zeroclaw_obs.load_http import (
    ABANDONED,
    HttpTarget,
    TargetError,
    check_target,
    parse_target,
    read_token,
    run_http_load,
    target_client,
)
from zeroclaw_obs.observability.events import ToolOutcome, TurnOutcomeKind

from ..system import free_port
from .conftest import SCRIPT, TOKEN, Served, ServeFactory

AGENTS = Path(__file__).parent / "load_target"
MESSAGES = Path(__file__).resolve().parents[2] / "scenarios"
SUMMARY = re.compile(r"^load [\d.]+s  turns (\d+) .*in-flight (\d+)  final (\d+) ", re.M)


def target_of(served: Served, *, approve: bool = False, token: str = TOKEN) -> HttpTarget:
    return HttpTarget(
        url=served.url, token=token, token_source="--token-file", shown=served.url, approve=approve
    )


def server_counts(served: Served, metric: str) -> dict[str, float]:
    """`{labels: value}` of one counter of the server's own `/metrics` (no token needed)."""
    text = httpx.get(f"{served.url}/metrics", timeout=10).text
    found = {}
    for line in text.splitlines():
        match = re.fullmatch(rf"{metric}(\{{[^}}]*\}})? (\S+)", line)
        if match:
            found[match.group(1) or ""] = float(match.group(2))
    return found


def load_args(served: Served, tmp_path: Path, *flags: str) -> list[str]:
    token_file = tmp_path / "load-token"
    token_file.write_text(TOKEN + "\n")
    return ["load", str(MESSAGES), "--target", served.url, "--token-file", str(token_file), *flags]


async def drive(
    served: Served, options: LoadOptions, *, approve: bool = False, stop: LoadStop | None = None
):
    target = target_of(served, approve=approve)
    async with target_client(target, options.concurrency) as client:
        await check_target(client, target)
        return await run_http_load(
            load_scenario_dir(MESSAGES), options, client=client, approve=approve, stop=stop
        )


class TestDriving:
    async def test_turns_reach_the_server_and_end_with_counted_outcomes(
        self, serve_process: ServeFactory
    ):
        """Every started turn ends `final` with one `ok` and one `err` tool, and the server
        counted the same turns and tools."""
        served = serve_process(AGENTS / "agent.yaml")
        report = await drive(served, LoadOptions(rate=20, duration=1.0, concurrency=4))

        assert report.started >= 5
        assert {} == report.failures
        assert 0 == report.in_flight
        assert StopReason.DURATION == report.stop_reason
        assert report.max_in_flight <= 4
        assert report.started == report.turns[TurnOutcomeKind.FINAL] == sum(report.turns.values())
        assert report.started == report.tools[ToolOutcome.SUCCESS]
        assert report.started == report.tools[ToolOutcome.ERROR]
        assert {'{outcome="final"}': report.started} == server_counts(
            served, "zeroclaw_turns_total"
        )

    async def test_each_turn_is_a_fresh_conversation_with_a_scenario_message(
        self, serve_process: ServeFactory
    ):
        """The operator stream shows one `turn_start` per turn, each in its own conversation,
        with the messages of the folder's scenarios in round-robin order."""
        served = serve_process(AGENTS / "agent.yaml")
        scenarios = load_scenario_dir(MESSAGES)
        starts: list[dict] = []

        async def watch(client: httpx.AsyncClient) -> None:
            async with client.stream("GET", "/v1/events") as stream:
                async for line in stream.aiter_lines():
                    if line.startswith("data: ") and '"turn_start"' in line:
                        starts.append(json.loads(line[6:]))

        async with served.async_client() as client:
            watcher = asyncio.create_task(watch(client))
            await asyncio.sleep(0.3)
            report = await drive(served, LoadOptions(rate=10, duration=0.45, concurrency=2))
            await asyncio.sleep(0.3)
            watcher.cancel()

        count = report.started
        assert count >= 3
        assert [s.scenario.user for s in scenarios[:count]] == [s["message"] for s in starts]
        assert count == len({s["conversation_id"] for s in starts})

    async def test_approve_decides_yes_on_the_web_surface(self, serve_process: ServeFactory):
        """With `approve`, each gated call is approved by the driver (surface `web`) and runs."""
        served = serve_process(AGENTS / "gated.yaml")
        report = await drive(
            served, LoadOptions(rate=10, duration=0.35, concurrency=4), approve=True
        )

        assert report.started == report.tools[ToolOutcome.SUCCESS] >= 2
        approvals = server_counts(served, "zeroclaw_approvals_total")
        assert {'{decision="yes",surface="web",tool="shell"}': report.started} == approvals

    async def test_without_approve_the_server_timeout_decides(self, serve_process: ServeFactory):
        """Without `approve` nobody answers: the server denies each gated call at its timeout
        and the turn still ends."""
        served = serve_process(AGENTS / "gated.yaml")
        report = await drive(served, LoadOptions(rate=10, duration=0.15, concurrency=4, grace=5))

        assert report.started == report.turns[TurnOutcomeKind.FINAL] >= 1
        assert report.started == report.tools[ToolOutcome.DENIED]
        approvals = server_counts(served, "zeroclaw_approvals_total")
        assert {'{decision="no",surface="runtime",tool="shell"}': report.started} == approvals

    async def test_a_stop_request_lets_turns_in_flight_finish(self, serve_process: ServeFactory):
        """A graceful stop starts no more turns; the ones in flight reach `turn_end`."""
        served = serve_process(AGENTS / "slow.yaml")
        stop = LoadStop()

        # Two slots are taken by 0.1 s and stay taken for the 0.8 s of a turn.
        asyncio.get_running_loop().call_later(0.5, stop.request, StopReason.TERMINATED)
        report = await drive(served, LoadOptions(rate=10, concurrency=2, grace=5), stop=stop)

        assert StopReason.TERMINATED == report.stop_reason
        assert 2 == report.started == report.turns[TurnOutcomeKind.FINAL]
        assert {} == report.failures

    async def test_turns_past_the_grace_are_abandoned_not_hidden(self, serve_process: ServeFactory):
        """With no grace, the turns in flight at the stop are counted as abandoned."""
        served = serve_process(AGENTS / "slow.yaml")
        stop = LoadStop()

        asyncio.get_running_loop().call_later(0.5, stop.request, StopReason.TERMINATED)
        report = await drive(served, LoadOptions(rate=10, concurrency=2, grace=0), stop=stop)

        assert {ABANDONED: 2} == report.failures
        assert 0 == sum(report.turns.values())
        assert 0 == report.in_flight

    async def test_a_refused_start_is_counted_by_status_and_code(self, serve_process: ServeFactory):
        """Above the server's `--max-running-turns`, starts are refused `429 too_many_turns`
        and counted under that reason; the others end normally."""
        served = serve_process(AGENTS / "slow.yaml", "--max-running-turns", "1")
        report = await drive(served, LoadOptions(rate=20, duration=0.25, concurrency=5, grace=5))

        refused = report.failures.pop("refused: HTTP 429 too_many_turns")
        assert {} == report.failures
        assert report.started == refused + report.turns[TurnOutcomeKind.FINAL]
        assert 1 == report.turns[TurnOutcomeKind.FINAL]


class TestTargetChecks:
    async def test_a_wrong_token_is_refused_before_any_turn(self, serve_process: ServeFactory):
        """`check_target` names where the token came from; no turn reached the server."""
        served = serve_process(AGENTS / "agent.yaml")
        target = target_of(served, token="another-token-0123456789")
        async with target_client(target, 1) as client:
            with pytest.raises(TargetError) as raised:
                await check_target(client, target)
        assert f"--token-file: the server at {served.url} refused the token (401)" == str(
            raised.value
        )
        assert {} == server_counts(served, "zeroclaw_turns_total")

    def test_parse_target(self):
        """A base URL keeps its path prefix without the trailing slash."""
        assert "http://agent:8080" == parse_target("http://agent:8080/")
        assert "https://h.example/zc" == parse_target("https://h.example/zc/")

    @pytest.mark.parametrize(
        ("url", "fragment"),
        [
            ("agent:8080", "http:// or https://"),
            ("ftp://agent", "http:// or https://"),
            ("http://user:pw@agent:8080", "no credentials"),
            ("http://agent:8080/?x=1", "no query"),
            ("http://agent:99999", "not a URL"),
        ],
    )
    def test_bad_urls(self, url, fragment):
        with pytest.raises(BadInputError) as raised:
            parse_target(url)
        assert str(raised.value).startswith("--target: ")
        assert fragment in str(raised.value)

    def test_token_from_the_file_first_then_the_variable(self, tmp_path):
        token_file = tmp_path / "token"
        token_file.write_text("  from-the-file-0123456789\nsecond line\n")
        environ = {"ZEROCLAW_TOKEN": "from-the-variable-0123456789"}
        assert ("from-the-file-0123456789", "--token-file") == read_token(token_file, environ)
        assert ("from-the-variable-0123456789", "ZEROCLAW_TOKEN") == read_token(None, environ)

    @pytest.mark.parametrize(
        ("content", "environ", "expected"),
        [
            (None, {}, "--target: needs a token: --token-file FILE or ZEROCLAW_TOKEN"),
            ("", {}, "--token-file: the token must be one line of printable ASCII, no spaces"),
            (
                "tok en",
                {},
                "--token-file: the token must be one line of printable ASCII, no spaces",
            ),
        ],
    )
    def test_no_or_bad_token(self, tmp_path, content, environ, expected):
        path = None
        if content is not None:
            path = tmp_path / "token"
            path.write_text(content)
        with pytest.raises(BadInputError) as raised:
            read_token(path, environ)
        assert expected == str(raised.value)


class TestCommandLine:
    def test_the_summary_line_counts_the_servers_turns(
        self, serve_process: ServeFactory, tmp_path, capsys
    ):
        """`load --target` exits 0 at the end of its duration with the in-process summary."""
        served = serve_process(AGENTS / "agent.yaml")
        code = main(load_args(served, tmp_path, "--rate", "10", "--duration", "0.55"))

        err = capsys.readouterr().err
        assert EXIT_OK == code, err
        lines = err.splitlines()
        assert f"load: 12 scenario(s) from {MESSAGES}; turns to {served.url}" == lines[0]
        started, in_flight, final = SUMMARY.search(err).groups()
        assert (started, "0") == (final, in_flight)
        assert f"tools ok {started} err {started} denied 0" in lines[-1]
        assert 2 == len(lines)
        assert {'{outcome="final"}': int(started)} == server_counts(served, "zeroclaw_turns_total")

    def test_the_token_may_come_from_the_environment(
        self, serve_process: ServeFactory, monkeypatch, capsys
    ):
        served = serve_process(AGENTS / "agent.yaml")
        monkeypatch.setenv("ZEROCLAW_TOKEN", TOKEN)
        code = main(
            ["load", str(MESSAGES), "--target", served.url, "--rate", "10", "--duration", "0.15"]
        )
        assert EXIT_OK == code, capsys.readouterr().err
        assert 1 <= server_counts(served, "zeroclaw_turns_total")['{outcome="final"}']

    def test_a_bad_token_is_one_line_and_exit_2(
        self, serve_process: ServeFactory, tmp_path, monkeypatch, capsys
    ):
        served = serve_process(AGENTS / "agent.yaml")
        monkeypatch.setenv("ZEROCLAW_TOKEN", "not-the-token-0123456789")
        code = main(["load", str(MESSAGES), "--target", served.url, "--duration", "1"])

        assert EXIT_BAD_INPUT == code
        assert (
            f"zeroclaw-obs: error: ZEROCLAW_TOKEN: the server at {served.url} refused the token "
            "(401)\n"
        ) == capsys.readouterr().err
        assert {} == server_counts(served, "zeroclaw_turns_total")

    def test_connection_refused_is_one_line_and_exit_2(self, tmp_path, capsys):
        url = f"http://127.0.0.1:{free_port()}"
        token_file = tmp_path / "token"
        token_file.write_text(TOKEN)
        code = main(["load", str(MESSAGES), "--target", url, "--token-file", str(token_file)])

        assert EXIT_BAD_INPUT == code
        assert (
            f"zeroclaw-obs: error: --target {url}: cannot connect: connection refused or "
            "unreachable\n"
        ) == capsys.readouterr().err

    @pytest.mark.parametrize(
        ("flags", "expected"),
        [
            (["--token-file", "t"], "--token-file: only with --target URL"),
            (["--approve"], "--approve: only with --target URL"),
            (["--target", "http://a:1", "--otlp-json", "x"], "--otlp-json: not with --target"),
            (["--target", "http://a:1", "--metrics-port", "9"], "--metrics-port: not with"),
            (["--target", "http://a:1", "--config", "c.toml"], "--config: not with --target"),
            (["--target", "a:1"], "--target: must be an http:// or https:// URL"),
        ],
    )
    def test_bad_flags(self, flags, expected, capsys, monkeypatch):
        monkeypatch.setenv("ZEROCLAW_TOKEN", TOKEN)
        assert EXIT_BAD_INPUT == main(["load", str(MESSAGES), *flags])
        err = capsys.readouterr().err
        assert err.startswith(f"zeroclaw-obs: error: {expected}")
        assert 1 == len(err.splitlines())


class TestSignals:
    def start_load(self, served: Served, tmp_path: Path, *flags: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(SCRIPT), *load_args(served, tmp_path, "--rate", "10", *flags)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def wait_for_running_turns(self, served: Served) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if httpx.get(f"{served.url}/healthz").json()["running_turns"] > 0:
                time.sleep(0.3)
                return
            time.sleep(0.05)
        raise AssertionError("no turn reached the server")

    def test_sigterm_stops_gracefully(self, serve_process: ServeFactory, tmp_path):
        """SIGTERM: no more starts, the turns in flight reach `turn_end`, exit 0, and the server
        ended exactly the turns the summary counts."""
        served = serve_process(AGENTS / "slow.yaml")
        load = self.start_load(served, tmp_path, "--grace", "10", "--concurrency", "3")
        self.wait_for_running_turns(served)
        load.send_signal(signal.SIGTERM)
        _, err = load.communicate(timeout=30)

        assert EXIT_OK == load.returncode, err
        started, in_flight, final = SUMMARY.search(err).groups()
        assert "0" == in_flight
        assert started == final
        assert "turn(s)" not in err  # no failure line
        served_turns = server_counts(served, "zeroclaw_turns_total")
        assert {'{outcome="final"}': float(final)} == served_turns

    def test_sigint_abandons_at_once_and_exits_130(self, serve_process: ServeFactory, tmp_path):
        """Ctrl-C: the turns in flight are abandoned at once (still running on the server)."""
        served = serve_process(AGENTS / "slow.yaml")
        load = self.start_load(served, tmp_path, "--grace", "10", "--concurrency", "3")
        self.wait_for_running_turns(served)
        load.send_signal(signal.SIGINT)
        _, err = load.communicate(timeout=30)

        assert EXIT_CANCELLED == load.returncode, err
        assert re.search(rf"^load: [1-3] turn\(s\) {re.escape(ABANDONED)}$", err, re.M), err
        assert "0" == SUMMARY.search(err).group(2)
