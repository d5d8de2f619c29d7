"""SIGINT and SIGTERM at any moment of `run`: one line, exit 130 / 143, outputs whole or absent.

Real processes: the command is started as the console script and signalled from here. Each
signal is sent once the process is known to be at the moment under test (blocked reading its
scenario from a FIFO, a tool's progress line printed, the collector's connection accepted),
never after a sleep.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from tests.system import stop

SCRIPT = Path(sys.executable).parent / "zeroclaw-obs"

HANGING = {
    "user": "clean up",
    "config": {"approval": {"mode": "interactive", "always_ask": ["shell"], "answers": ["yes"]}},
    "tools": [
        {
            "name": "shell",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            "responses": [{"default": {"hang": True}}],
        }
    ],
    "responses": [
        {"tool_calls": [{"id": "c1", "name": "shell", "arguments": {"command": "rm -rf /tmp/x"}}]},
        {"text": "never reached"},
    ],
}
QUICK = {
    "user": "hi",
    "responses": [{"text": "hello"}],
}


class Command:
    """`zeroclaw-obs run` with every output in `out`, its stderr read line by line."""

    def __init__(self, out: Path, scenario: Path, env: dict[str, str] | None = None) -> None:
        self.out = out
        self.lines: list[str] = []
        self._seen = threading.Condition()
        args = [str(SCRIPT), "run", "--scenario", str(scenario)]
        for flag, name in OUTPUTS.items():
            args.append(f"{flag}={out / name}")
        base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        self.process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**base, **(env or {})},
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self._seen:
                self.lines.append(line)
                self._seen.notify_all()
        with self._seen:
            self.lines.append("<eof>")
            self._seen.notify_all()

    def wait_for_line(self, prefix: str) -> None:
        with self._seen:
            assert self._seen.wait_for(
                lambda: any(x.startswith((prefix, "<eof>")) for x in self.lines), timeout=30
            ), self.lines
        assert not self.lines[-1].startswith("<eof>"), self.lines

    def finish(self) -> int:
        try:
            code = self.process.wait(timeout=30)
        finally:
            stop(self.process)
        self._reader.join(10)
        return code

    def error_lines(self) -> list[str]:
        """stderr without progress lines or the (empty) end marker."""
        return [x for x in self.lines if x.startswith(("zeroclaw-obs", "Traceback", "telemetry"))]

    def files(self) -> list[str]:
        return sorted(p.name for p in self.out.iterdir())


OUTPUTS = {
    "--events-out": "events.jsonl",
    "--history-out": "history.json",
    "--audit-out": "audit.jsonl",
    "--metrics-out": "metrics.txt",
    "--logs-out": "logs.jsonl",
}


class Blackhole:
    """A loopback collector that accepts connections and never answers."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self.connections: list[socket.socket] = []

    def wait_for_connection(self) -> None:
        self.socket.settimeout(30)
        self.connections.append(self.socket.accept()[0])

    def close(self) -> None:
        for connection in self.connections:
            connection.close()
        self.socket.close()


def scenario_file(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def wait_until_blocked_reading(pid: int, timeout_s: float = 10.0) -> None:
    """Wait until the process sleeps in a pipe read (Linux: `/proc/PID/wchan`).

    A signal that lands after the interpreter's last check but before it enters the blocking
    `read()` is handled only when that read returns; sent while the process already sleeps in
    it, the read is interrupted at once. Without `/proc` this returns and the test takes its
    chance.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/wchan") as wchan:
                if "pipe_read" in wchan.read():
                    return
        except OSError:
            return
        time.sleep(0.01)


class TestSignals:
    def test_sigint_before_the_turn_starts(self, tmp_path):
        """SIGINT while the scenario is still being read: exit 130, one line, no output file."""
        out = tmp_path / "out"
        out.mkdir()
        fifo = tmp_path / "scenario.yaml"
        os.mkfifo(fifo)
        command = Command(out, fifo)
        try:
            # Opening the write end returns once the command has opened the read end: it is
            # now blocked reading its scenario, before any turn.
            with fifo.open("w") as writer:
                writer.write("user: hi\n")
                writer.flush()
                wait_until_blocked_reading(command.process.pid)
                command.process.send_signal(signal.SIGINT)
                code = command.finish()
        finally:
            stop(command.process)
        assert 130 == code, command.lines
        assert [
            "zeroclaw-obs: interrupted by SIGINT before the turn started; no output file written\n"
        ] == command.error_lines()
        assert [] == command.files()

    def test_sigterm_during_the_turn(self, tmp_path):
        """SIGTERM while an approved tool runs: the turn is cancelled, exit 143 with one line,
        every output whole (the call is in the audit log and ends `interrupted`), no temp file."""
        command = Command(tmp_path / "out", scenario_file(tmp_path, HANGING))
        (tmp_path / "out").mkdir(exist_ok=True)
        try:
            command.wait_for_line("⏳ shell")
            command.process.send_signal(signal.SIGTERM)
            code = command.finish()
        finally:
            stop(command.process)
        assert 143 == code, command.lines
        assert [
            "zeroclaw-obs: interrupted by SIGTERM; the turn was cancelled and its outputs hold "
            "what it produced\n"
        ] == command.error_lines()
        out = tmp_path / "out"
        assert sorted(OUTPUTS.values()) == command.files()
        (entry,) = [json.loads(x) for x in (out / "audit.jsonl").read_text().splitlines()]
        assert ("c1", "yes") == (entry["tool_call_id"], entry["decision"])
        events = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()]
        (result,) = [e for e in events if e["type"] == "tool_result"]
        assert "interrupted" in json.dumps(result)
        json.loads((out / "history.json").read_text())
        assert all(json.loads(x) for x in (out / "logs.jsonl").read_text().splitlines())
        assert "zeroclaw_turns_total" in (out / "metrics.txt").read_text()

    def test_a_second_signal_ends_the_exit_flush(self, tmp_path):
        """SIGTERM cancels the turn; SIGINT while the flush waits on a collector that never
        answers ends it at once: exit 130, one line, the turn's events, history and audit
        whole, the telemetry files absent, no temp file."""
        blackhole = Blackhole()
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": blackhole.endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        }
        (tmp_path / "out").mkdir()
        command = Command(tmp_path / "out", scenario_file(tmp_path, HANGING), env)
        try:
            command.wait_for_line("⏳ shell")
            command.process.send_signal(signal.SIGTERM)
            blackhole.wait_for_connection()  # the exit flush is exporting to it
            command.process.send_signal(signal.SIGINT)
            code = command.finish()
        finally:
            stop(command.process)
            blackhole.close()
        assert 130 == code, command.lines
        assert [
            "zeroclaw-obs: interrupted by SIGINT during the exit flush; unfinished output "
            "files were not written\n"
        ] == command.error_lines()
        assert ["audit.jsonl", "events.jsonl", "history.json"] == command.files()
        out = tmp_path / "out"
        assert all(json.loads(x) for x in (out / "events.jsonl").read_text().splitlines())
        json.loads((out / "history.json").read_text())
        assert 1 == len((out / "audit.jsonl").read_text().splitlines())
