"""The `zeroclaw-obs` command: exit codes, output files, one-line errors, the demo."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import pty
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from zeroclaw_obs.cli import main
from zeroclaw_obs.observability.traces.otlp_json import read_otlp_json
from zeroclaw_obs.receipts import ReceiptGenerator

from .builders import completion
from .providers.wire import DONE, Reply, WireServer, sse

WEATHER = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "responses": [{"default": {"output": "18C"}}],
}


def scenario(**overrides: object) -> dict:
    base: dict = {
        "user": "weather?",
        "config": {"approval": {"auto_approve": ["get_weather"]}},
        "tools": [WEATHER],
        "responses": [
            {"tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}]},
            {"text": "It is 18C."},
        ],
    }
    base.update(overrides)
    return copy.deepcopy(base)


def write(tmp_path: Path, data: object, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data) if name.endswith(".yaml") else json.dumps(data))
    return path


def outputs(tmp_path: Path) -> list[str]:
    return [
        f"--events-out={tmp_path / 'events.jsonl'}",
        f"--history-out={tmp_path / 'history.json'}",
        f"--audit-out={tmp_path / 'audit.jsonl'}",
    ]


class TestRun:
    def test_final_answer_exits_zero_and_writes_outputs(self, tmp_path, capsys):
        """A final answer prints on stdout, exits 0 and writes every requested file."""
        path = write(tmp_path, scenario())
        assert 0 == main(["run", "--scenario", str(path), "--quiet", *outputs(tmp_path)])
        assert "It is 18C.\n" == capsys.readouterr().out
        events = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
        assert ["tool_call", "tool_result"] == [
            e["type"] for e in events if e["type"].startswith("tool")
        ]
        history = json.loads((tmp_path / "history.json").read_text())
        assert "It is 18C." == history[-1]["content"]
        assert "" == (tmp_path / "audit.jsonl").read_text()

    def test_message_argument_overrides_the_scenario(self, tmp_path, capsys):
        """A positional MESSAGE replaces the scenario's user message."""
        path = write(tmp_path, scenario())
        main(["run", "--scenario", str(path), "--quiet", "other question", *outputs(tmp_path)])
        history = json.loads((tmp_path / "history.json").read_text())
        assert {"role": "user", "content": "other question"} == history[0]

    def test_progress_lines_on_stderr(self, tmp_path, capsys):
        """Progress lines go to stderr: `⏳ tool: hint` then `✅ tool (…s)`."""
        path = write(tmp_path, scenario())
        main(["run", "--scenario", str(path)])
        err = capsys.readouterr().err.splitlines()
        assert "⏳ get_weather: city=Oslo" == err[0]
        assert re.fullmatch(r"✅ get_weather \(\d+\.\ds\)", err[1])

    @pytest.mark.parametrize(
        ("config", "responses", "code"),
        [
            ({"max_tool_iterations": 1}, None, 0),
            ({"max_tool_iterations": 1, "max_iteration_behavior": "error_at_cap"}, None, 3),
        ],
    )
    def test_iteration_cap_exit_codes(self, tmp_path, capsys, config, responses, code):
        """A graceful summary at the cap exits 0; `error_at_cap` exits 3."""
        data = scenario()
        data["config"] = {**data["config"], **config}
        assert code == main(["run", "--scenario", str(write(tmp_path, data)), "--quiet"])

    def test_aborted_turn_exits_three(self, tmp_path, capsys):
        """An aborted turn (loop detector) exits 3 and prints the abort text."""
        repeat = {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]}
        data = scenario(responses=[repeat] * 5 + [{"text": "never"}])
        assert 3 == main(["run", "--scenario", str(write(tmp_path, data)), "--quiet"])
        assert capsys.readouterr().out.startswith("Agent loop aborted by loop detector: ")

    def test_cancelled_turn_exits_130(self, tmp_path, capsys):
        """A cancelled turn exits 130."""
        slow = {**WEATHER, "responses": [{"default": {"output": "x", "delay_ms": 5000}}]}
        data = scenario(tools=[slow], cancel_after_ms=30)
        assert 130 == main(["run", "--scenario", str(write(tmp_path, data)), "--quiet"])

    def test_receipt_key_file_enables_verifiable_receipts(self, tmp_path, capsys):
        """With `--receipt-key-file` the history's receipts verify under that key."""
        key = bytes(range(32))
        key_file = tmp_path / "key.hex"
        key_file.write_text(key.hex() + "\n")
        path = write(tmp_path, scenario())
        args = ["run", "--scenario", str(path), "--quiet", f"--receipt-key-file={key_file}"]
        assert 0 == main([*args, *outputs(tmp_path)])
        history = json.loads((tmp_path / "history.json").read_text())
        content = next(m["content"] for m in history if m["role"] == "tool")
        receipt = re.search(r"\[receipt: (zc-receipt-\S+)\]", content).group(1)
        generator = ReceiptGenerator(key)
        assert generator.verify(receipt, "get_weather", {"city": "Oslo"}, "18C")


class TestBadInput:
    @pytest.mark.parametrize(
        ("mutate", "fragment"),
        [
            (lambda d: d.update(colour="blue"), "unknown field"),
            (lambda d: d["config"].update(parallel_tools="maybe"), "config.parallel_tools:"),
            (lambda d: d.pop("responses"), "responses: a scripted provider needs at least one"),
            (lambda d: d.update(responses=[{}]), "responses.0:"),
            (lambda d: d["tools"][0].update(responses=[{"when": {}}]), "tools.0.responses.0:"),
            (lambda d: d["config"].update(max_tool_iterations=0), "config.max_tool_iterations:"),
        ],
    )
    def test_invalid_scenario_exits_two_naming_the_field(self, tmp_path, capsys, mutate, fragment):
        """An invalid scenario exits 2 with one line naming the file and the field."""
        data = scenario()
        mutate(data)
        path = write(tmp_path, data)
        assert 2 == main(["run", "--scenario", str(path), *outputs(tmp_path)])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert str(path) in err
        assert fragment in err
        assert [] == sorted(p.name for p in tmp_path.iterdir() if p.name != "s.yaml")

    @pytest.mark.parametrize(
        ("name", "text", "fragment"),
        [
            ("s.yaml", "user: [unclosed", "malformed YAML: line 1"),
            ("s.json", '{"user": "x",', "malformed JSON: line 1"),
            ("s.yaml", "- just a list", "(top level): expected a mapping"),
        ],
    )
    def test_malformed_files(self, tmp_path, capsys, name, text, fragment):
        """Malformed YAML or JSON exits 2 with the file and the position."""
        path = tmp_path / name
        path.write_text(text)
        assert 2 == main(["run", "--scenario", str(path)])
        err = capsys.readouterr().err
        assert fragment in err
        assert str(path) in err

    def test_missing_file(self, tmp_path, capsys):
        """A missing scenario file exits 2 naming it."""
        assert 2 == main(["run", "--scenario", str(tmp_path / "nope.yaml")])
        assert "nope.yaml: cannot read" in capsys.readouterr().err

    def test_exhausted_script_writes_nothing(self, tmp_path, capsys):
        """A script with too few responses exits 2 and leaves existing outputs untouched."""
        data = scenario(responses=[scenario()["responses"][0]])
        path = write(tmp_path, data)
        (tmp_path / "history.json").write_text("previous run")
        assert 2 == main(["run", "--scenario", str(path), "--quiet", *outputs(tmp_path)])
        assert "no response left for provider call 2" in capsys.readouterr().err
        assert "previous run" == (tmp_path / "history.json").read_text()
        assert not (tmp_path / "events.jsonl").exists()

    @pytest.mark.parametrize("content", ["abc", "00" * 31, "zz" * 32])
    def test_bad_receipt_key_file(self, tmp_path, capsys, content):
        """A receipt key that is not 64 hex characters exits 2 naming the file."""
        key_file = tmp_path / "key.hex"
        key_file.write_text(content)
        path = write(tmp_path, scenario())
        assert 2 == main(["run", "--scenario", str(path), f"--receipt-key-file={key_file}"])
        assert str(key_file) in capsys.readouterr().err

    def test_output_directory_missing(self, tmp_path, capsys):
        """An output path in a missing directory is rejected before the turn runs."""
        path = write(tmp_path, scenario())
        code = main(["run", "--scenario", str(path), f"--events-out={tmp_path / 'no' / 'e'}"])
        assert 2 == code
        assert "does not exist" in capsys.readouterr().err

    def test_unknown_option(self, capsys):
        """An unknown option exits 2 with argparse's one-line error."""
        with pytest.raises(SystemExit) as info:
            main(["run", "--scenario", "x", "--bogus"])
        assert 2 == info.value.code

    def test_config_file_errors_name_the_field(self, tmp_path, capsys):
        """A TOML config with an unknown field exits 2 naming the file and the field."""
        config = tmp_path / "zc.toml"
        config.write_text("parallel_tool = true\n")
        path = write(tmp_path, scenario())
        assert 2 == main(["run", "--scenario", str(path), f"--config={config}"])
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"zeroclaw-obs: error: {config}: ")
        assert "unknown field" in line

    def test_a_bad_redaction_rule_in_the_config_file_names_that_file(self, tmp_path, capsys):
        """An invalid regex in the TOML's `[redaction]` is named against the TOML, not echoed."""
        config = tmp_path / "zc.toml"
        config.write_text('[redaction]\nallow_patterns = ["(Qz7Wv9Xy"]\n')
        path = write(tmp_path, scenario())
        assert 2 == main(["run", "--scenario", str(path), f"--config={config}"])
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"zeroclaw-obs: error: {config}: redaction.allow_patterns.0: ")
        assert "Qz7Wv9Xy" not in line


DELETE = {"name": "delete_file", "responses": [{"default": {"output": "deleted"}}]}


def narrowing_scenario(**overrides: object) -> dict:
    """get_weather and delete_file, both auto-approved; the model calls both, then answers."""
    calls = [
        {"id": "c1", "name": "delete_file", "arguments": {}},
        {"id": "c2", "name": "get_weather", "arguments": {"city": "Oslo"}},
    ]
    return scenario(
        tools=[WEATHER, DELETE],
        config={"approval": {"auto_approve": ["get_weather", "delete_file"]}},
        responses=[{"tool_calls": calls}, {"text": "It is 18C."}],
        **overrides,
    )


def tool_texts(history: Path) -> dict[str, str]:
    messages = json.loads(history.read_text())
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


class TestAllowTool:
    def test_the_run_offers_and_runs_only_the_allowed_tools(self, tmp_path, capsys):
        """`--allow-tool` narrows one run: the rest reads `Tool not available in this turn`."""
        path = write(tmp_path, narrowing_scenario())
        flags = ["--quiet", *outputs(tmp_path)]

        assert 0 == main(["run", "--scenario", str(path), "--allow-tool", "get_weather", *flags])

        assert {
            "c1": "Tool not available in this turn: delete_file",
            "c2": "18C",
        } == tool_texts(tmp_path / "history.json")

    def test_the_flag_repeats_and_takes_patterns(self, tmp_path, capsys):
        """Each `--allow-tool` adds a name or pattern to the run's allow list."""
        path = write(tmp_path, narrowing_scenario())
        flags = ["--allow-tool", "get_weather", "--allow-tool", "delete_*", "--quiet"]

        assert 0 == main(["run", "--scenario", str(path), *flags, *outputs(tmp_path)])

        assert {"c1": "deleted", "c2": "18C"} == tool_texts(tmp_path / "history.json")

    def test_it_never_adds_a_tool_the_bundles_do_not_grant(self, tmp_path, capsys):
        """Naming a tool outside the agent's bundles is refused, never granted."""
        data = narrowing_scenario(
            bundles={"weather": {"tools": ["get_weather"]}}, agent={"bundles": ["weather"]}
        )
        path = write(tmp_path, data)

        code = main(["run", "--scenario", str(path), "--allow-tool", "delete_file"])

        assert 2 == code
        assert (
            "zeroclaw-obs: error: --allow-tool entry 1: matches no tool this agent may use\n"
            == capsys.readouterr().err
        )

    @pytest.mark.parametrize(
        ("entries", "line"),
        [
            (["get_weather", "ghp_" + "aB3dE5fG7h" * 4], "--allow-tool entry 2: matches no tool"),
            (["  "], "--allow-tool entry 1: must not be blank"),
        ],
    )
    def test_a_bad_entry_exits_two_before_any_output(self, tmp_path, capsys, entries, line):
        """One line naming the entry by position, never its text; no output file is made."""
        path = write(tmp_path, narrowing_scenario())
        flags = [f"--allow-tool={entry}" for entry in entries]

        assert 2 == main(["run", "--scenario", str(path), *flags, *outputs(tmp_path)])

        (err,) = capsys.readouterr().err.splitlines()
        assert err.startswith(f"zeroclaw-obs: error: {line}")
        assert "aB3dE5" not in err
        assert ["s.yaml"] == sorted(p.name for p in tmp_path.iterdir())

    def test_a_bundle_pattern_matching_nothing_exits_two_before_any_output(self, tmp_path, capsys):
        """The agent file's bundles are checked before anything is written."""
        data = narrowing_scenario(
            bundles={"b": {"tools": ["get_wether"]}}, agent={"bundles": ["b"]}
        )
        path = write(tmp_path, data)

        assert 2 == main(["run", "--scenario", str(path), *outputs(tmp_path)])

        (err,) = capsys.readouterr().err.splitlines()
        assert f"zeroclaw-obs: error: {path}: bundles.<key 1>.tools.0: matches no tool" in err
        assert ["s.yaml"] == sorted(p.name for p in tmp_path.iterdir())


class TestDemo:
    def test_demo_runs_the_built_in_scenario(self, tmp_path, capsys, monkeypatch):
        """The demo exits 0, shows every kind of call, and leaks none of its secrets."""
        monkeypatch.chdir(tmp_path)
        assert 0 == main(["demo", *outputs(tmp_path)])
        captured = capsys.readouterr()
        assert "Paris is 18C" in captured.out
        assert "❌ fetch_alerts" in captured.err
        assert "⏳ tool_search: query=storm warnings" in captured.err
        assert "✅ shell" in captured.err
        everything = (
            captured.out + captured.err + "".join(p.read_text() for p in tmp_path.iterdir())
        )
        for secret in ("Tr0ub4dor-and-3", "sk-proj-9fK2mQ7xVb4LpR8sT1wZ6yN3cD5eH0jA"):
            assert secret not in everything
        spans = read_otlp_json(tmp_path / "zeroclaw-traces.jsonl")
        assert {"invoke_agent demo", "chat scripted-model", "execute_tool shell"} <= {
            span["name"] for span in spans
        }
        assert "└── iteration 5" in captured.err
        audit = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
        assert [("shell", "yes", "scenario")] == [
            (a["tool"], a["decision"], a["surface"]) for a in audit
        ]

    def test_console_script(self, tmp_path):
        """The installed console script runs the demo in a subprocess and exits 0."""
        script = Path(sys.executable).parent / "zeroclaw-obs"
        done = subprocess.run(
            [str(script), "demo"], capture_output=True, text=True, timeout=60, cwd=tmp_path
        )
        assert 0 == done.returncode, done.stderr
        assert "Paris is 18C" in done.stdout


class TestInteractiveApproval:
    def run_on_tty(self, tmp_path: Path, answer: bytes | None) -> tuple[int, str, list[dict]]:
        """Run a prompt-required call on a real pseudo-terminal and type `answer`.

        With `answer=None` the operator presses Ctrl-C (SIGINT) at the prompt instead.
        """
        import os
        import pty
        import select
        import signal

        shell = {
            "name": "shell",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            "responses": [{"default": {"output": "done"}}],
        }
        data = scenario(
            tools=[shell],
            responses=[
                {"tool_calls": [{"id": "s1", "name": "shell", "arguments": {"command": "ls"}}]},
                {"text": "finished"},
            ],
        )
        path = write(tmp_path, data)
        audit = tmp_path / "audit.jsonl"
        leader, follower = pty.openpty()
        script = Path(sys.executable).parent / "zeroclaw-obs"
        process = subprocess.Popen(
            [str(script), "run", "--scenario", str(path), f"--audit-out={audit}"],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            close_fds=True,
        )
        os.close(follower)
        screen = b""
        try:
            while b"[A]lways for shell: " not in screen:
                ready, _, _ = select.select([leader], [], [], 20)
                assert ready, f"no prompt; screen so far: {screen!r}"
                screen += os.read(leader, 4096)
            if answer is None:
                process.send_signal(signal.SIGINT)
            else:
                os.write(leader, answer)
            code = process.wait(timeout=20)
            while select.select([leader], [], [], 0.2)[0]:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                screen += chunk
        finally:
            process.kill()
            os.close(leader)
        lines = audit.read_text().splitlines() if audit.exists() else []
        return code, screen.decode("utf-8", "replace"), [json.loads(x) for x in lines]

    def test_yes_at_the_terminal_runs_the_call(self, tmp_path):
        """On a real TTY `y` approves: the call runs and the audit says `yes` from `cli`."""
        code, screen, entries = self.run_on_tty(tmp_path, b"y\n")
        assert 0 == code
        assert "✅ shell" in screen
        assert [("yes", "cli")] == [(e["decision"], e["surface"]) for e in entries]

    def test_anything_else_is_no(self, tmp_path):
        """On a real TTY any other answer is No: `Denied by user.`"""
        code, screen, entries = self.run_on_tty(tmp_path, b"nope\n")
        assert 0 == code
        assert "❌ shell (0.0s): Denied by user." in screen
        assert [("no", "cli")] == [(e["decision"], e["surface"]) for e in entries]

    def test_ctrl_c_at_the_prompt_cancels_without_waiting_for_enter(self, tmp_path):
        """Ctrl-C while the operator is being asked ends the turn as cancelled (exit 130)."""
        code, screen, entries = self.run_on_tty(tmp_path, None)
        assert 130 == code
        assert "❌ shell (0.0s): [interrupted by user before this tool produced a result]" in screen
        assert "Turn cancelled." in screen
        assert [] == entries


class TestTelemetryOutputs:
    def test_otlp_json_metrics_and_logs(self, tmp_path, capsys):
        """`--otlp-json`, `--metrics-out` and `--logs-out` write spans, metrics and logs of the
        same turn, correlated by the turn id and trace id."""
        path = write(tmp_path, scenario())
        args = [
            "run",
            "--scenario",
            str(path),
            "--quiet",
            f"--otlp-json={tmp_path / 'spans.jsonl'}",
            f"--metrics-out={tmp_path / 'metrics.txt'}",
            f"--logs-out={tmp_path / 'logs.jsonl'}",
        ]
        assert 0 == main(args)
        spans = read_otlp_json(tmp_path / "spans.jsonl")
        root = next(s for s in spans if s["name"].startswith("invoke_agent"))
        metrics = (tmp_path / "metrics.txt").read_text()
        assert 'zeroclaw_tool_calls_total{outcome="success",tool="get_weather"} 1.0' in metrics
        logs = [json.loads(x) for x in (tmp_path / "logs.jsonl").read_text().splitlines()]
        tool_log = next(x for x in logs if x["event"] == "tool_call_result")
        assert root["trace_id"] == tool_log["trace_id"]
        assert root["attributes"]["zeroclaw.turn.id"] == tool_log["turn_id"]

    def test_no_telemetry_file_on_bad_input(self, tmp_path, capsys):
        """A run that fails as bad input leaves no spans, metrics or logs file behind."""
        data = scenario(responses=[scenario()["responses"][0]])
        path = write(tmp_path, data)
        args = ["run", "--scenario", str(path), "--quiet"]
        args += [f"--otlp-json={tmp_path / 'spans.jsonl'}", f"--logs-out={tmp_path / 'l.jsonl'}"]
        assert 2 == main(args)
        assert ["s.yaml"] == sorted(p.name for p in tmp_path.iterdir())

    def test_unreachable_collector_is_counted_not_fatal(self, tmp_path, capsys, monkeypatch):
        """With the OTLP endpoint on a closed port the turn still answers and exits 0, and the
        loss is reported on one stderr line."""
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
        path = write(tmp_path, scenario())
        assert 0 == main(["run", "--scenario", str(path), "--quiet"])
        captured = capsys.readouterr()
        assert "It is 18C.\n" == captured.out
        assert "telemetry: " in captured.err
        assert "Traceback" not in captured.err


# Lone surrogates in a tool's output, the model's arguments and call id, and the final answer:
# JSON cannot carry them, so the scenario is YAML, whose `\ud800` escape yields one.
SURROGATES = r"""
user: "weather?"
config:
  approval: {mode: interactive, always_ask: [shell], answers: ["yes"], auto_approve: [get_weather]}
tools:
  - name: get_weather
    parameters: {type: object, properties: {city: {type: string}}}
    responses: [{default: {output: "18C \udc80 \ud800"}}]
  - name: shell
    parameters: {type: object, properties: {command: {type: string}}}
    responses: [{default: {output: "ok \udfff"}}]
responses:
  - tool_calls:
      - {id: "c1\ud800", name: get_weather, arguments: {city: "Os\ud800lo"}}
      - {id: c2, name: shell, arguments: {command: "ls \ud800"}}
  - text: "It is 18C \ud800."
"""


def every_output(tmp_path: Path) -> dict[str, Path]:
    names = ["events.jsonl", "history.json", "audit.jsonl", "spans.jsonl", "metrics.txt"]
    flags = ["--events-out", "--history-out", "--audit-out", "--otlp-json", "--metrics-out"]
    paths = {flag: tmp_path / name for flag, name in zip(flags, names, strict=True)}
    paths["--logs-out"] = tmp_path / "logs.jsonl"
    return paths


class TestAnyString:
    def test_lone_surrogates_lose_no_output(self, tmp_path):
        """A lone surrogate in a tool output, an argument and the final answer: exit 0, all six
        outputs whole and valid UTF-8, the JSON ones parse, no temp file left."""
        path = tmp_path / "s.yaml"
        path.write_text(SURROGATES)
        paths = every_output(tmp_path)
        result = subprocess.run(
            [sys.executable, "-m", "zeroclaw_obs.cli", "run", "--scenario", str(path),
             *(f"{flag}={target}" for flag, target in paths.items())],
            capture_output=True, timeout=60, env=no_otel_env(),
        )  # fmt: skip
        assert 0 == result.returncode, result.stderr
        assert "It is 18C \\ud800.\n" == result.stdout.decode("utf-8")
        assert "Traceback" not in result.stderr.decode("utf-8")
        texts = {flag: p.read_bytes().decode("utf-8") for flag, p in paths.items()}
        for flag in ("--events-out", "--audit-out", "--otlp-json", "--logs-out"):
            assert all(json.loads(line) for line in texts[flag].splitlines()), flag
        history = json.loads(texts["--history-out"])
        assert "It is 18C \ud800." == history[-1]["content"]
        assert "ls \ud800" in json.loads(texts["--audit-out"])["arguments_summary"]
        assert "zeroclaw_turns_total" in texts["--metrics-out"]
        assert sorted([*(p.name for p in paths.values()), "s.yaml"]) == sorted(
            p.name for p in tmp_path.iterdir()
        )


def no_otel_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}


class TestOutputPaths:
    @pytest.mark.parametrize(
        ("flag", "target", "problem"),
        [
            ("--events-out", lambda d: d / "no" / "e.jsonl", "parent directory does not exist"),
            ("--history-out", lambda d: d, "is a directory"),
            ("--metrics-out", lambda d: d / "s.yaml" / "m.txt", "parent is not a directory"),
        ],
    )
    def test_checked_before_the_turn_naming_the_flag(self, tmp_path, capsys, flag, target, problem):
        """A bad output path exits 2 before the turn with `error: --flag: problem`."""
        path = write(tmp_path, scenario())
        code = main(["run", "--scenario", str(path), "--quiet", f"{flag}={target(tmp_path)}"])
        captured = capsys.readouterr()
        assert (2, "", [f"zeroclaw-obs: error: {flag}: {problem}"]) == (
            code,
            captured.out,
            captured.err.splitlines(),
        )
        assert ["s.yaml"] == [p.name for p in tmp_path.iterdir()]

    def test_two_flags_naming_one_file_are_rejected(self, tmp_path, capsys):
        """Two outputs in one regular file would overwrite each other: exit 2 naming both flags."""
        path = write(tmp_path, scenario())
        same = tmp_path / "out.jsonl"
        args = ["run", "--scenario", str(path), f"--events-out={same}", f"--logs-out={same}"]
        assert 2 == main(args)
        expected = ["zeroclaw-obs: error: --logs-out: same file as --events-out"]
        assert expected == capsys.readouterr().err.splitlines()

    def test_dev_null_is_written_in_place_for_every_output(self, tmp_path, capsys):
        """Every output flag pointed at `/dev/null` (run as root here): exit 0 and `/dev/null`
        is still the same character device."""
        before = os.stat("/dev/null")
        path = write(tmp_path, scenario())
        flags = [f"{flag}=/dev/null" for flag in every_output(tmp_path)]
        assert 0 == main(["run", "--scenario", str(path), "--quiet", *flags])
        after = os.stat("/dev/null")
        assert stat.S_ISCHR(after.st_mode)
        assert (before.st_ino, before.st_mode, before.st_rdev) == (
            after.st_ino,
            after.st_mode,
            after.st_rdev,
        )
        assert ["s.yaml"] == [p.name for p in tmp_path.iterdir()]

    def test_a_fifo_gets_the_events(self, tmp_path, capsys):
        """A FIFO output stays a FIFO and its reader gets every event line."""
        fifo = tmp_path / "events.fifo"
        os.mkfifo(fifo)
        received: list[bytes] = []

        def read() -> None:
            with fifo.open("rb") as pipe:
                received.append(pipe.read())

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        path = write(tmp_path, scenario())
        assert 0 == main(["run", "--scenario", str(path), "--quiet", f"--events-out={fifo}"])
        reader.join(10)
        (data,) = received
        types = [json.loads(line)["type"] for line in data.decode().splitlines()]
        assert "tool_result" in types
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)


class TestTerminalAnswer:
    ANSWER = "Done.\n\x1b]0;pwned\x07\x1b[2J\u202eok"

    def run_on(self, tmp_path: Path, tty: bool) -> bytes:
        path = write(tmp_path, scenario(responses=[{"text": self.ANSWER}]), name="s.json")
        args = [sys.executable, "-m", "zeroclaw_obs.cli", "run", "--scenario", str(path), "--quiet"]
        if not tty:
            return subprocess.run(args, capture_output=True, timeout=60, env=no_otel_env()).stdout
        leader, follower = pty.openpty()
        try:
            process = subprocess.Popen(
                args, stdout=follower, stderr=subprocess.DEVNULL, env=no_otel_env()
            )
            os.close(follower)
            chunks = []
            with contextlib.suppress(OSError):  # EIO once the child closes the terminal
                while chunk := os.read(leader, 4096):
                    chunks.append(chunk)
            process.wait(timeout=60)
        finally:
            os.close(leader)
        return b"".join(chunks).replace(b"\r\n", b"\n")

    def test_controls_in_the_answer_are_escaped_on_a_terminal(self, tmp_path):
        """On a terminal the final answer's escape sequences and bidi controls are shown, not
        obeyed; its line breaks are kept."""
        expected = "Done.\n\\x1b]0;pwned\\x07\\x1b[2J\\u202eok\n"
        assert expected == self.run_on(tmp_path, tty=True).decode("utf-8")

    def test_the_answer_is_unchanged_in_a_pipe(self, tmp_path):
        """Piped or redirected, the answer is the model's text as it is (a program reads it)."""
        assert self.ANSWER + "\n" == self.run_on(tmp_path, tty=False).decode("utf-8")

    def test_dev_stdout_redirected_to_a_file_gets_the_answer_then_the_outputs(self, tmp_path):
        """`/dev/stdout` into a file: appended to, never truncated or replaced, and the link
        stays a link."""
        path = write(tmp_path, scenario())
        captured = tmp_path / "stdout.txt"
        with captured.open("wb") as stdout:
            code = subprocess.run(
                [sys.executable, "-m", "zeroclaw_obs.cli", "run", "--scenario", str(path),
                 "--quiet", "--events-out=/dev/stdout", "--metrics-out=/dev/stdout"],
                stdout=stdout, stderr=subprocess.PIPE, timeout=60, env=no_otel_env(),
            ).returncode  # fmt: skip
        assert 0 == code
        text = captured.read_text()
        assert text.startswith("It is 18C.\n{")
        assert '"type": "tool_result"' in text and "zeroclaw_turns_total" in text
        assert os.path.islink("/dev/stdout")


def streamed(text: str) -> Reply:
    """A streamed Chat Completions answer: text deltas, the finish chunk, usage, `[DONE]`."""
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m"}
    chunks = [
        sse({**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
    ]
    chunks += [
        sse({**head, "choices": [{"index": 0, "delta": {"content": part}, "finish_reason": None}]})
        for part in re.findall(r"\S+\s*", text)
    ]
    chunks.append(sse({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    usage = {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}
    chunks.append(sse({**head, "choices": [], "usage": usage}))
    chunks.append(DONE)
    return Reply.stream(chunks)


@pytest.fixture
def wire():
    """A loopback HTTP server speaking whatever a test scripts (`tests/providers/wire.py`)."""
    server = WireServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def no_keys(monkeypatch):
    """No provider key in the environment."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_KEY"):
        monkeypatch.delenv(name, raising=False)


def agent(wire: WireServer, **provider: object) -> dict:
    """An agent file for the loopback server: the scripted weather tool, a real model."""
    data = scenario(
        provider={
            "kind": "openai",
            "base_url": f"{wire.url}/v1",
            "model": "gpt-4.1-mini",
            "stream": False,
            "max_retries": 0,
            **provider,
        }
    )
    del data["responses"]
    return data


KEY = "sk-proj-" + "Qm7vTz2K" * 6


class TestRealProvider:
    def test_run_with_no_file(self, tmp_path, capsys, wire, no_keys):
        """`run --provider openai --base-url URL --model M "question"` works with no file."""
        wire.script(streamed("The answer is 42."))
        argv = ["run", "--provider", "openai", "--base-url", f"{wire.url}/v1", "--model", "m"]
        assert 0 == main([*argv, "--quiet", "what is it?", *outputs(tmp_path)])
        assert "The answer is 42.\n" == capsys.readouterr().out
        [request] = wire.requests
        assert "/v1/chat/completions" == request.path
        assert "m" == request.json["model"]
        assert "what is it?" == request.json["messages"][-1]["content"]
        # A loopback server with the default variable unset: no auth header at all.
        assert "authorization" not in request.headers

    def test_the_key_comes_from_the_variable_and_goes_nowhere_else(
        self, tmp_path, capsys, wire, monkeypatch
    ):
        """The key is sent as a bearer token and never appears in any output."""
        monkeypatch.setenv("MY_KEY", KEY)
        wire.script(
            Reply.json(completion(calls=[("call_1", "get_weather", {"city": "Oslo"})])),
            Reply.json(completion("It is 18C in Oslo.")),
        )
        path = write(tmp_path, agent(wire, api_key_env="MY_KEY"))
        otlp = tmp_path / "spans.jsonl"
        argv = ["run", "--scenario", str(path), *outputs(tmp_path), f"--otlp-json={otlp}"]
        assert 0 == main(argv)
        captured = capsys.readouterr()
        assert "It is 18C in Oslo.\n" == captured.out
        assert [f"Bearer {KEY}"] * 2 == [r.headers["authorization"] for r in wire.requests]
        files = "".join(p.read_text() for p in tmp_path.iterdir())
        assert KEY not in captured.out + captured.err + files
        chat = [s for s in read_otlp_json(otlp) if s["name"].startswith("chat")]
        assert 2 == len(chat)

    def test_a_missing_variable_is_bad_input_naming_it(self, tmp_path, capsys, wire, no_keys):
        """A variable the file names but the environment lacks: exit 2, no request, no file."""
        path = write(tmp_path, agent(wire, api_key_env="MY_KEY"))
        assert 2 == main(["run", "--scenario", str(path), *outputs(tmp_path)])
        err = capsys.readouterr().err
        assert f"zeroclaw-obs: error: {path}: provider.api_key_env: " in err
        assert "MY_KEY is not set" in err
        assert [] == wire.requests
        assert ["s.yaml"] == [p.name for p in tmp_path.iterdir()]

    def test_the_default_variable_is_required_off_loopback(self, tmp_path, capsys, no_keys):
        """A remote server with OPENAI_API_KEY unset: exit 2 naming OPENAI_API_KEY."""
        argv = ["run", "--provider", "openai", "--model", "gpt-4.1-mini", "question"]
        assert 2 == main(argv)
        assert "OPENAI_API_KEY is not set" in capsys.readouterr().err

    def test_a_key_in_the_file_is_refused(self, tmp_path, capsys, wire):
        """`api_key:` in the file: exit 2 with the documented line, the key never echoed."""
        path = write(tmp_path, agent(wire, api_key=KEY))
        assert 2 == main(["run", "--scenario", str(path), *outputs(tmp_path)])
        err = capsys.readouterr().err
        expected = (
            f"zeroclaw-obs: error: {path}: provider.api_key: keys are read from the variable "
            "api_key_env names, never from the file\n"
        )
        assert expected == err
        assert [] == wire.requests

    def test_a_provider_error_exits_three_with_one_safe_line(self, tmp_path, capsys, wire, no_keys):
        """A final provider error: exit 3, the line names provider, status and error type only."""
        body = {"error": {"message": f"bad key {KEY} for prompt weather?", "type": "server_error"}}
        wire.script(Reply.json(body, status=500))
        path = write(tmp_path, agent(wire))
        assert 3 == main(["run", "--scenario", str(path), "--quiet", *outputs(tmp_path)])
        captured = capsys.readouterr()
        assert "provider 'openai': HTTP 500" in captured.out
        everything = captured.out + captured.err + (tmp_path / "events.jsonl").read_text()
        assert KEY not in everything
        assert "bad key" not in everything

    def test_flags_override_the_file(self, tmp_path, capsys, wire, no_keys):
        """`--provider/--base-url/--model` turn a scripted scenario into a live run."""
        wire.script(streamed("Live answer."))
        path = write(tmp_path, scenario())
        argv = ["run", "--scenario", str(path), "--provider", "openai", "--quiet"]
        argv += ["--base-url", f"{wire.url}/v1", "--model", "local-model"]
        assert 0 == main(argv)
        assert "Live answer.\n" == capsys.readouterr().out
        assert "local-model" == wire.requests[0].json["model"]

    def test_another_kind_starts_its_section_afresh(self, tmp_path, capsys, wire, monkeypatch):
        """`--provider anthropic` over an OpenAI agent file: its own URL, model and key."""
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("MY_KEY", "not-this-one")
        message = {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": "Hello from Claude."}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 6},
        }
        wire.script(Reply.json(message))
        path = write(tmp_path, agent(wire, api_key_env="MY_KEY"))
        argv = ["run", "--scenario", str(path), "--provider", "anthropic", "--quiet"]
        argv += ["--base-url", wire.url, "--model", "claude-sonnet-4-5"]
        assert 0 == main(argv)
        assert "Hello from Claude.\n" == capsys.readouterr().out
        [request] = wire.requests
        assert ("/v1/messages", KEY) == (request.path, request.headers["x-api-key"])
        assert (False, "claude-sonnet-4-5") == (
            request.json.get("stream", False),
            request.json["model"],
        )

    def test_a_cancelled_run_closes_the_request(self, tmp_path, capsys, wire, no_keys):
        """Cancelled mid-request: exit 130, outputs written, the HTTP request closed."""
        reply = Reply.json(completion("never"))
        reply.delay_s = 30
        wire.script(reply)
        data = agent(wire)
        data["cancel_after_ms"] = 200
        path = write(tmp_path, data)
        assert 130 == main(["run", "--scenario", str(path), "--quiet", *outputs(tmp_path)])
        assert "Turn cancelled.\n" == capsys.readouterr().out
        assert wire.requests[0].disconnected.wait(timeout=10)
        assert (tmp_path / "events.jsonl").exists()

    def test_model_flag_overrides_the_agent_file(self, tmp_path, capsys, wire, no_keys):
        """`--model` alone replaces the agent file's model."""
        wire.script(Reply.json(completion("ok")))
        path = write(tmp_path, agent(wire))
        assert 0 == main(["run", "--scenario", str(path), "--model", "other", "--quiet"])
        assert "other" == wire.requests[0].json["model"]

    @pytest.mark.parametrize(
        ("argv", "expected"),
        [
            (["run", "question"], "run: give --scenario FILE, or --provider openai|anthropic"),
            (
                ["run", "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "q"],
                "--provider: provider.model: required when kind is openai",
            ),
            (
                ["run", "--provider", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9"],
                "MESSAGE: required: --provider has no `user` message",
            ),
        ],
    )
    def test_bad_flags_are_one_line(self, capsys, no_keys, argv, expected):
        """Missing pieces of a file-less run are named on one line, exit 2."""
        assert 2 == main(argv)
        assert f"zeroclaw-obs: error: {expected}\n" == capsys.readouterr().err

    def test_a_bad_python_tool_is_one_line(self, tmp_path, capsys, wire, no_keys):
        """A `python_tools` entry that cannot be imported: exit 2 naming the entry."""
        data = agent(wire)
        data["python_tools"] = ["no_such_package_here.tools:get_weather"]
        path = write(tmp_path, data)
        assert 2 == main(["run", "--scenario", str(path), *outputs(tmp_path)])
        err = capsys.readouterr().err
        assert (
            f"zeroclaw-obs: error: {path}: python_tools.0: cannot import the module "
            "(ModuleNotFoundError)\n"
        ) == err
        assert [] == wire.requests


class TestDemoStaysOffline:
    def test_demo_never_imports_httpx(self, tmp_path):
        """`demo` runs the scripted provider only: httpx is never imported."""
        code = (
            "import sys\n"
            "from zeroclaw_obs.cli import main\n"
            "code = main(['demo', '--quiet'])\n"
            "assert 'httpx' not in sys.modules, 'httpx imported'\n"
            "assert 'zeroclaw_obs.providers.openai' not in sys.modules\n"
            "sys.exit(code)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
        )
        assert 0 == done.returncode, done.stderr
        assert "Paris is 18C" in done.stdout
