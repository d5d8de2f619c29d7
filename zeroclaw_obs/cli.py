"""The `zeroclaw-obs` command: `run`, the built-in `demo`, `load`, `serve`, and `redact scan`.

`run` takes a scenario, an agent file (a real `provider:` section, DESIGN §7), or no file at
all with `--provider openai|anthropic --base-url URL --model M`; those flags override the
file's provider section. A real provider's key is read from the variable `api_key_env` names
before anything starts (unset: exit 2 naming the variable; with the default variable and a
loopback `base_url`, an unset key means no auth header, for local servers). A provider error
that ends the turn exits 3 with the provider's one safe line. `--record FILE` writes what the
run saw as a scenario that replays it offline (`record.py`).

Exit codes are mapped here, in one place (DESIGN §4): 0 final answer (also a graceful
max-iteration summary), 2 bad input (one line naming the file and the field), 3 turn aborted or
failed, 130 cancelled; `redact scan` exits 1 when it finds something; `load` exits 0 when its
duration ends or on SIGTERM, 130 on Ctrl-C. Output files are written only after the turn (or
the load run), each atomically (a temp file renamed into place), so invalid input never
creates or changes one; every output path is checked before anything starts. The audit log is
the exception: it is opened when the turn starts and each decision is appended as it happens.

Signals (`_signals.SignalGuard`, shared by `run`, `demo` and `load`): SIGINT or SIGTERM
before the turn starts exits at once; during a turn the first one cancels the turn, whose
outputs (what it produced so far) are then written; a signal during the exit flush (or a
second one) ends it at once. Each case exits 130 (SIGINT) or 143 (SIGTERM) with one line on
stderr, leaves each output whole or absent, and leaves no temp file. `load` keeps its own
contract for the first signal (SIGTERM is a graceful stop, exit 0).

Risky part: the final answer and everything on stderr is text a model or a tool chose. The
streams write any string (`_terminal.ENCODING_ERRORS`); progress lines and the trace tree
escape terminal controls always, the final answer when stdout is a terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import signal
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import ValidationError

from ._entry import restore_default_signals
from ._output_files import check_output_path, in_place, place, temp_beside, write_atomically
from ._signals import Interrupted, SignalGuard, deferred_signals
from ._terminal import ENCODING, ENCODING_ERRORS, printable, survive_any_text
from .approval import AuditLog
from .config import (
    ReceiptsConfig,
    RuntimeConfig,
    build_redactor,
    load_config_file,
    load_error_line,
)
from .errors import BadInputError, ConfigError
from .load import (
    LoadOptions,
    LoadProgress,
    LoadReport,
    LoadScenario,
    LoadStop,
    StopReason,
    common_redaction,
    load_scenario_dir,
    progress_line,
    run_load,
)
from .observability.events import TurnOutcomeKind
from .observability.observer import Observer
from .observability.telemetry import (
    Telemetry,
    TelemetryOptions,
    default_exporter_env,
    setup_telemetry,
)
from .observability.tracer_setup import otlp_destination, otlp_requested
from .receipts import KEY_BYTES, load_key_file
from .record import TurnRecorder
from .redaction import Redactor
from .replay import Replay, build_replay, resolve_api_key
from .scan import ScanError, scan_paths
from .scenario import Scenario, ScenarioProvider, load_scenario, parse_scenario
from .server.command import add_serve_parser, serve_command
from .tools.python_tools import import_python_tools
from .turn.context import CONVERSATION_ID
from .turn.loop import TurnOutcome

if TYPE_CHECKING:  # httpx is imported only when `load --target` runs
    from . import load_http

__all__ = [
    "EXIT_ABORTED",
    "EXIT_BAD_INPUT",
    "EXIT_CANCELLED",
    "EXIT_FINDINGS",
    "EXIT_OK",
    "exit_code",
    "main",
]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2
EXIT_ABORTED = 3
EXIT_CANCELLED = 130

DEMO_SCENARIO = "demo.yaml"
DEMO_TRACES = "zeroclaw-traces.jsonl"
SHUTDOWN_TIMEOUT_S = 5.0
LOAD_DIR = Path("scenarios")
LOAD_METRICS_PORT = 9464
LOAD_METRICS_HOST = "127.0.0.1"
LOAD_IN_PROCESS_FLAGS = (
    ("--metrics-port", "metrics_port"),
    ("--metrics-host", "metrics_host"),
    ("--otlp-json", "otlp_json"),
    ("--metrics-out", "metrics_out"),
    ("--logs-out", "logs_out"),
    ("--receipt-key-file", "receipt_key_file"),
    ("--config", "config"),
)
"""`load` flags of the in-process run only: with `--target` the server owns the telemetry."""


def exit_code(outcome: TurnOutcome) -> int:
    """The process exit code of a turn's outcome."""
    if outcome.ok:
        return EXIT_OK
    if outcome.kind is TurnOutcomeKind.CANCELLED:
        return EXIT_CANCELLED
    return EXIT_ABORTED


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"zeroclaw-obs: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="zeroclaw-obs", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run", help="run one turn: a scenario or agent file, or a model named by --provider"
    )
    run.add_argument("--scenario", type=Path, help="scenario or agent file (JSON or YAML)")
    run.add_argument("message", nargs="?", help="user message (overrides the scenario's)")
    run.add_argument(
        "--provider",
        choices=("openai", "anthropic"),
        help="a real model: overrides (or, without --scenario, supplies) the provider section",
    )
    run.add_argument("--base-url", help="the provider's API root (overrides the file's)")
    run.add_argument("--model", help="the model to ask (overrides the file's)")
    run.add_argument(
        "--record",
        type=Path,
        help="write what the run saw as a scenario (YAML) that replays it offline",
    )
    run.add_argument(
        "--conversation-id",
        metavar="ID",
        help="the conversation this turn belongs to: spans carry it as gen_ai.conversation.id "
        "and session.id (default: the turn's own id)",
    )
    _add_common(run)
    demo = commands.add_parser("demo", help="run the built-in demo scenario (no network)")
    _add_common(demo)
    _add_load(commands)
    add_serve_parser(commands, _add_telemetry_files)
    commands.add_parser(
        "keygen", help="print a fresh 32-byte receipt key (64 hex chars) for --receipt-key-file"
    )
    redact = commands.add_parser("redact", help="redaction tools")
    redact_commands = redact.add_subparsers(dest="redact_command", required=True)
    scan = redact_commands.add_parser(
        "scan",
        help="leak audit of exported telemetry: exit 1 listing file:line: rule for each finding",
    )
    scan.add_argument("paths", nargs="+", type=Path, help="files or directories to scan")
    scan.add_argument("--config", type=Path, help="TOML runtime config (its `redaction` table)")
    scan.add_argument("--no-pii", action="store_true", help="do not report personal data")
    return parser


def _add_telemetry_files(parser: argparse.ArgumentParser) -> None:
    """The flags `run`, `demo` and `load` share: config, receipt key, telemetry files."""
    parser.add_argument("--config", type=Path, help="TOML runtime config (scenario wins)")
    parser.add_argument(
        "--receipt-key-file",
        type=Path,
        help="32-byte receipt key as 64 hex chars; enables receipts",
    )
    parser.add_argument(
        "--otlp-json", type=Path, help="write spans as OTLP/JSON lines (instead of OTLP export)"
    )
    parser.add_argument("--metrics-out", type=Path, help="write the Prometheus exposition")
    parser.add_argument("--logs-out", type=Path, help="write structured logs (JSON lines)")


def _add_common(parser: argparse.ArgumentParser) -> None:
    _add_telemetry_files(parser)
    parser.add_argument("--events-out", type=Path, help="write TurnEvents as JSON lines")
    parser.add_argument("--history-out", type=Path, help="write provider-visible history (JSON)")
    parser.add_argument("--audit-out", type=Path, help="write approval audit entries (JSON lines)")
    parser.add_argument(
        "--metrics-port", type=int, help="serve /metrics on 127.0.0.1:PORT while running"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress lines and no trace tree on stderr"
    )


def _add_load(commands: Any) -> None:
    defaults = LoadOptions()
    load = commands.add_parser(
        "load",
        help="replay a folder of scenarios continuously: traffic for the telemetry stack",
    )
    load.add_argument(
        "dir",
        nargs="?",
        type=Path,
        default=LOAD_DIR,
        help="folder of *.yaml, *.yml, *.json scenarios (default: scenarios)",
    )
    load.add_argument(
        "--rate", type=float, default=defaults.rate, help="turns started per second (%(default)s)"
    )
    load.add_argument(
        "--duration",
        type=float,
        default=defaults.duration,
        help="seconds to run; 0 runs until SIGINT/SIGTERM",
    )
    load.add_argument(
        "--concurrency",
        type=int,
        default=defaults.concurrency,
        help="most turns in flight (%(default)s)",
    )
    load.add_argument(
        "--seed", type=int, help="pick scenarios at random from this seed (default: round-robin)"
    )
    load.add_argument(
        "--grace",
        type=float,
        default=defaults.grace,
        help="seconds in-flight turns get at stop (%(default)s)",
    )
    load.add_argument(
        "--metrics-port",
        type=int,
        help=f"serve /metrics on this port ({LOAD_METRICS_PORT}; 0: any free port)",
    )
    load.add_argument("--metrics-host", help=f"address /metrics binds ({LOAD_METRICS_HOST})")
    load.add_argument(
        "--progress", action="store_true", help="a refreshing line of rate and outcomes on stderr"
    )
    load.add_argument(
        "--target",
        metavar="URL",
        help="drive a running `zeroclaw-obs serve` at URL over HTTP instead of in-process",
    )
    load.add_argument(
        "--token-file",
        type=Path,
        help="with --target: file holding the server's bearer token (default: $ZEROCLAW_TOKEN)",
    )
    load.add_argument(
        "--approve",
        action="store_true",
        help="with --target: answer yes to every approval the server asks (default: its timeout)",
    )
    _add_telemetry_files(load)
    load.add_argument("--quiet", action="store_true", help="nothing on stderr but errors")


@dataclass(frozen=True, kw_only=True)
class _Outputs:
    events: Path | None
    history: Path | None
    audit: Path | None
    otlp_json: Path | None = None
    metrics: Path | None = None
    logs: Path | None = None
    record: Path | None = None

    def by_flag(self) -> list[tuple[str, Path]]:
        """Each requested output with the flag that named it."""
        flags = (
            ("--events-out", self.events),
            ("--history-out", self.history),
            ("--audit-out", self.audit),
            ("--otlp-json", self.otlp_json),
            ("--metrics-out", self.metrics),
            ("--logs-out", self.logs),
            ("--record", self.record),
        )
        return [(flag, path) for flag, path in flags if path is not None]


class _Staging:
    """Temp files beside the outputs that telemetry streams into while the turn runs.

    They replace their targets only when the run ends with a result, so invalid input never
    creates or changes an output file. Signals are held back while the temp files are made and
    while they are moved, so an interrupted run never leaves one behind.
    """

    def __init__(self, outputs: _Outputs) -> None:
        self._moves: list[tuple[Path, Path]] = []
        self.logs: TextIO | None = None
        with deferred_signals():
            try:
                self.otlp_json = self._stage(outputs.otlp_json)
                logs = self._stage(outputs.logs)
                if logs is not None:
                    self.logs = logs.open("w", encoding=ENCODING, errors=ENCODING_ERRORS)
            except BaseException:
                self.discard()
                raise

    def _stage(self, target: Path | None) -> Path | None:
        if target is None:
            return None
        temp = temp_beside(target)
        self._moves.append((temp, target))
        return temp

    def _close(self) -> None:
        if self.logs is not None and not self.logs.closed:
            self.logs.close()

    def commit(self) -> None:
        with deferred_signals():
            self._close()
            moves, self._moves = self._moves, []
            try:
                for tmp, target in moves:
                    place(tmp, target)
            finally:
                for tmp, _ in moves:
                    tmp.unlink(missing_ok=True)

    def discard(self) -> None:
        with deferred_signals():
            self._close()
            for tmp, _ in self._moves:
                tmp.unlink(missing_ok=True)
            self._moves = []


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `zeroclaw-obs` console script; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.command == "redact":
        restore_default_signals()
        return _redact_scan(args)
    if args.command == "keygen":
        restore_default_signals()
        print(secrets.token_hex(KEY_BYTES))
        return EXIT_OK
    for stream in (sys.stdout, sys.stderr):
        survive_any_text(stream)
    with SignalGuard() as guard:
        phase = _Phase()
        try:
            if args.command == "load":
                return _load(args, guard, phase)
            if args.command == "serve":
                return serve_command(args, guard, phase)
            return _run_command(args, guard, phase)
        except BaseException as exc:
            interrupted = guard.interrupted_by(exc)
            if interrupted is None:
                raise
            return _interrupted(interrupted, phase.phase)


@dataclass
class _Phase:
    """Where a command is, for the one line an interrupt prints."""

    phase: str = "before the turn started; no output file written"


def _interrupted(interrupted: Interrupted, phase: str) -> int:
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    # No payload: the signal's name and one of our fixed phase texts (`_Phase`).
    print(f"zeroclaw-obs: interrupted by {interrupted.name} {phase}", file=sys.stderr, flush=True)
    return interrupted.exit_code


def _run_command(args: argparse.Namespace, guard: SignalGuard, phase: _Phase) -> int:
    """`run` and `demo`: validate, run the turn, print the answer, write the outputs."""
    try:
        scenario, source, message, key, outputs = _prepare(args)
    except BadInputError as exc:
        return _bad_input(str(exc))
    staging = _Staging(outputs)
    telemetry: Telemetry | None = None
    audit = AuditLog()
    try:
        redactor = build_redactor(scenario.config.redaction, source)
        telemetry = setup_telemetry(
            TelemetryOptions(
                otlp_json=staging.otlp_json,
                metrics_port=args.metrics_port,
                logs=staging.logs,
                progress=None if args.quiet else sys.stderr,
                env=default_exporter_env(os.environ, otlp_json=staging.otlp_json),
                capture_messages=scenario.config.capture_message_content,
            ),
            redactor=redactor,
        )
        if outputs.audit is not None:
            audit = AuditLog.streaming_to(outputs.audit)
        replay = build_replay(
            scenario,
            source=source,
            user_message=message,
            observer=telemetry.observer,
            redactor=redactor,
            receipt_key=key,
            audit=audit,
            recorder=TurnRecorder(redactor) if outputs.record is not None else None,
            conversation_id=getattr(args, "conversation_id", None),
        )
        phase.phase = "during the turn; no output file written but the audit log"
        outcome = asyncio.run(_run(replay, guard))
        phase.phase = "while writing the outputs; unfinished output files were not written"
        # The answer leaves the engine like every other payload: through the one redactor.
        answer = redactor.redact_text(outcome.text).rstrip("\n")
        print(printable(answer, keep_lines=True) if _isatty(sys.stdout) else answer, flush=True)
        _write_turn_outputs(outputs, replay)
        audit.close()
        phase.phase = "during the exit flush; unfinished output files were not written"
        telemetry.shutdown(timeout_s=SHUTDOWN_TIMEOUT_S)
        if (loss := telemetry.loss_summary()) is not None:
            print(loss, file=sys.stderr)  # counts and fixed words only
        if not args.quiet and telemetry.tree is not None:
            # Built from observer events, whose names and texts the engine already redacted,
            # with controls escaped (`trace_tree.py`).
            tree = telemetry.tree.render()
            if tree:
                print("\n" + tree, file=sys.stderr, flush=True)
        if outputs.metrics is not None:
            write_atomically(outputs.metrics, telemetry.metrics_text().decode("utf-8"))
        staging.commit()
        if args.command == "demo" and not args.quiet:
            print(_where_spans_went(outputs.otlp_json, redactor), file=sys.stderr, flush=True)
    except (BadInputError, OSError) as exc:
        return _bad_input(_output_error(str(exc), exc))
    finally:
        if telemetry is not None:
            # A no-op after the exit flush; on the way out of an error or an interrupt, nothing
            # staged is kept, so nothing is waited for.
            telemetry.shutdown(timeout_s=0.0)
        staging.discard()
        audit.close()
    if audit.write_error is not None:
        # `strerror` is the OS's text for the errno ("No space left on device"): no path, no data.
        print(f"zeroclaw-obs: error: --audit-out: {audit.write_error.strerror}", file=sys.stderr)
    if guard.received is not None:
        name = signal.Signals(guard.received).name
        print(
            f"zeroclaw-obs: interrupted by {name}; the turn was cancelled and its outputs "
            "hold what it produced",
            file=sys.stderr,
            flush=True,
        )
        return 128 + guard.received
    return exit_code(outcome)


def _where_spans_went(path: Path | None, redactor: Redactor) -> str:
    """The demo's last lines: the spans' file, the OTLP endpoint when the environment set
    one, and how to open them. Paths and endpoints are operator text: shown redacted."""
    lines = []
    if path is not None:
        shown = redactor.redact_text(str(path))
        lines.append(f"spans: written to {shown} (OTLP/JSON, one export request per line)")
    exporters = os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() or "otlp"
    if otlp_requested(os.environ) and "otlp" in exporters:
        endpoint = redactor.redact_text(otlp_destination(os.environ))
        lines.append(f"spans: exported over OTLP to {endpoint}")
        lines.append(
            "open them: in the backend behind that endpoint (Jaeger, Grafana Tempo, Phoenix, "
            "Langfuse; docs/telemetry.md)"
        )
    else:
        lines.append(
            "open them: set OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://localhost:4318) to send "
            "them to Jaeger, Phoenix or the compose stack as well (docs/telemetry.md)"
        )
    return "\n".join(lines)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _output_error(message: str, exc: Exception) -> str:
    """One line for a failure to write an output: the OS's words, with the file it names."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename is not None else ""
        return f"{where}{exc.strerror}"
    return message


def _redact_scan(args: argparse.Namespace) -> int:
    """`redact scan`: 0 clean, 1 findings (file:line: rule, never the value), 2 bad input."""
    try:
        settings = RuntimeConfig().redaction
        if args.config is not None:
            settings = load_config_file(args.config).redaction
        if args.no_pii:
            settings = settings.model_copy(update={"pii": False})
        redactor = build_redactor(settings, str(args.config or "defaults"), field="redaction")
        findings = 0
        files: set[str] = set()
        for finding in scan_paths(args.paths, redactor):
            print(finding, flush=False)
            findings += 1
            files.add(finding.path)
    except (BadInputError, ScanError) as exc:
        sys.stdout.flush()
        return _bad_input(str(exc))
    sys.stdout.flush()
    if findings:
        print(f"{findings} finding(s) in {len(files)} file(s)", file=sys.stderr)
        return EXIT_FINDINGS
    print("clean: no findings", file=sys.stderr)
    return EXIT_OK


@dataclass(frozen=True, kw_only=True)
class _LoadPlan:
    """A validated `load` command line: nothing is started or written before it exists."""

    scenarios: list[LoadScenario]
    options: LoadOptions
    redactor: Redactor
    key: bytes | None
    outputs: _Outputs
    metrics_port: int = LOAD_METRICS_PORT
    metrics_host: str = LOAD_METRICS_HOST
    target: load_http.HttpTarget | None = None
    """With `--target`: the server the turns go to; None replays them in this process."""


def _load(args: argparse.Namespace, guard: SignalGuard, phase: _Phase) -> int:
    """`load`: 0 when the duration ends or on SIGTERM, 130 on Ctrl-C, 2 on bad input.

    A signal during the (bounded) final flush cuts it short: the staged files are removed, so
    no output is left half-written, and the exit code names that signal. With `--target` the
    turns go to a server (`_load_target`); an unreachable server or a refused token is bad
    input too.
    """
    phase.phase = "before the load started; no output file written"
    try:
        plan = _prepare_load(args)
    except BadInputError as exc:
        return _bad_input(str(exc))
    if plan.target is not None:
        return _load_target(plan, args, guard, phase)
    staging = _Staging(plan.outputs)
    telemetry: Telemetry | None = None
    try:
        try:
            telemetry = setup_telemetry(
                TelemetryOptions(
                    otlp_json=staging.otlp_json,
                    metrics_port=plan.metrics_port,
                    metrics_host=plan.metrics_host,
                    logs=staging.logs,
                    # The tree keeps the turns it draws: over a long run it would only grow.
                    trace_tree=False,
                    env=default_exporter_env(os.environ, otlp_json=staging.otlp_json),
                ),
                redactor=plan.redactor,
            )
        except (BadInputError, OSError) as exc:
            return _bad_input(_telemetry_error(exc, plan))
        if not args.quiet and telemetry.metrics_server is not None:
            shown_dir = plan.redactor.redact_text(str(args.dir))  # a path is operator text
            print(
                f"load: {len(plan.scenarios)} scenario(s) from {shown_dir}; "
                f"metrics at {telemetry.metrics_server.url}",
                file=sys.stderr,
                flush=True,
            )
        progress = LoadProgress(sys.stderr) if args.progress and not args.quiet else None
        phase.phase = "during the load; no output file written"
        report = asyncio.run(_drive_load(plan, telemetry.observer, progress, guard))
        try:
            telemetry.shutdown(timeout_s=SHUTDOWN_TIMEOUT_S)
            _report_load(
                report, telemetry, plan.redactor, summary=not args.quiet and progress is None
            )
            if plan.outputs.metrics is not None:
                write_atomically(plan.outputs.metrics, telemetry.metrics_text().decode("utf-8"))
            staging.commit()
        except BaseException as exc:
            if (interrupted := guard.interrupted_by(exc)) is None:
                raise
            staging.discard()
            print("load: stopped during the final flush; no output file written", file=sys.stderr)
            return interrupted.exit_code
    finally:
        if telemetry is not None:
            telemetry.shutdown(timeout_s=0.0)  # a no-op after the final flush
        staging.discard()
    return EXIT_CANCELLED if report.stop_reason is StopReason.INTERRUPTED else EXIT_OK


def _load_target(
    plan: _LoadPlan, args: argparse.Namespace, guard: SignalGuard, phase: _Phase
) -> int:
    """`load --target`: the turns go to a server; nothing is exported or written here.

    The target is checked first (reachable, the token accepted, not draining): a failure is one
    line and exit 2, before any turn starts.
    """
    assert plan.target is not None
    progress = LoadProgress(sys.stderr) if args.progress and not args.quiet else None

    def announce() -> None:
        phase.phase = "during the load"
        if not args.quiet:
            shown_dir = plan.redactor.redact_text(str(args.dir))  # a path is operator text
            print(
                f"load: {len(plan.scenarios)} scenario(s) from {shown_dir}; "
                f"turns to {plan.target.shown}"
                + (" (approving every approval)" if plan.target.approve else ""),
                file=sys.stderr,
                flush=True,
            )

    try:
        report = asyncio.run(_drive_http_load(plan, progress, guard, announce))
    except BadInputError as exc:  # our words, the flag's name and `shown`: no payload
        return _bad_input(str(exc))
    _report_load(report, None, plan.redactor, summary=not args.quiet and progress is None)
    return EXIT_CANCELLED if report.stop_reason is StopReason.INTERRUPTED else EXIT_OK


def _prepare_load(args: argparse.Namespace) -> _LoadPlan:
    """Validate the flags, the config, the key and every scenario file before anything starts.

    Raises:
        BadInputError: a flag value, the config, the key file, a scenario file (named, with
            its field) or an output path is invalid; with `--target`, the URL or the token is,
            or a flag of the in-process run only was given.
    """
    if args.target is None:
        for name, dest in (("--token-file", "token_file"), ("--approve", "approve")):
            if getattr(args, dest):
                raise BadInputError(f"{name}: only with --target URL")
    else:
        for name, dest in LOAD_IN_PROCESS_FLAGS:
            if getattr(args, dest) is not None:
                raise BadInputError(
                    f"{name}: not with --target (the server exports its own telemetry)"
                )
    try:
        options = LoadOptions(
            rate=args.rate,
            duration=args.duration,
            concurrency=args.concurrency,
            seed=args.seed,
            grace=args.grace,
        )
    except ValueError as exc:
        raise BadInputError(f"--{exc}") from exc
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        raise BadInputError(f"--metrics-port: {args.metrics_port} is not a port number")
    base = load_config_file(args.config) if args.config is not None else None
    key = load_key_file(args.receipt_key_file) if args.receipt_key_file is not None else None
    scenarios = [
        LoadScenario(
            item.source, _apply_settings(item.scenario, item.source, base, receipts=bool(key))
        )
        for item in load_scenario_dir(args.dir)
    ]
    redactor = build_redactor(common_redaction(scenarios), str(args.config or scenarios[0].source))
    target = None
    if args.target is not None:
        from .load_http import HttpTarget, parse_target, read_token

        url = parse_target(args.target)
        token, token_source = read_token(args.token_file)
        target = HttpTarget(
            url=url,
            token=token,
            token_source=token_source,
            shown=redactor.redact_text(url),
            approve=args.approve,
        )
    outputs = _Outputs(
        events=None,
        history=None,
        audit=None,
        otlp_json=args.otlp_json,
        metrics=args.metrics_out,
        logs=args.logs_out,
    )
    _check_writable(outputs.by_flag())
    return _LoadPlan(
        scenarios=scenarios,
        options=options,
        redactor=redactor,
        key=key,
        outputs=outputs,
        metrics_port=LOAD_METRICS_PORT if args.metrics_port is None else args.metrics_port,
        metrics_host=args.metrics_host or LOAD_METRICS_HOST,
        target=target,
    )


def _telemetry_error(exc: Exception, plan: _LoadPlan) -> str:
    """One line for a telemetry set-up failure: an `OTEL_*` variable, a file, or the port."""
    if not isinstance(exc, OSError):
        return str(exc)
    if exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return (
        f"--metrics-port {plan.metrics_port}: cannot serve /metrics on {plan.metrics_host}: "
        f"{exc.strerror or exc}"
    )


def _stop_on_signals(stop: LoadStop) -> Callable[[int], None]:
    """SIGTERM stops the load gracefully, SIGINT (or a second signal) at once."""
    signals: list[int] = []

    def request(signum: int) -> None:
        signals.append(signum)
        graceful = signum == signal.SIGTERM and len(signals) == 1
        stop.request(StopReason.TERMINATED if graceful else StopReason.INTERRUPTED)

    return request


async def _drive_load(
    plan: _LoadPlan, observer: Observer, progress: LoadProgress | None, guard: SignalGuard
) -> LoadReport:
    """Run the load: SIGTERM stops it gracefully, SIGINT (or a second signal) at once; one
    more signal cancels the run itself."""
    stop = LoadStop()
    with guard.in_loop(_stop_on_signals(stop), patience=2):
        return await run_load(
            plan.scenarios,
            plan.options,
            observer=observer,
            redactor=plan.redactor,
            receipt_key=plan.key,
            progress=progress,
            stop=stop,
        )


async def _drive_http_load(
    plan: _LoadPlan,
    progress: LoadProgress | None,
    guard: SignalGuard,
    announce: Callable[[], None],
) -> LoadReport:
    """Check the target, `announce` the run, then drive it with the signals of `_drive_load`.

    Raises:
        TargetError: the target is unreachable, refuses the token or is draining.
    """
    from .load_http import check_target, run_http_load, target_client

    assert plan.target is not None
    stop = LoadStop()
    async with target_client(plan.target, plan.options.concurrency) as client:
        await check_target(client, plan.target)
        announce()
        with guard.in_loop(_stop_on_signals(stop), patience=2):
            return await run_http_load(
                plan.scenarios,
                plan.options,
                client=client,
                approve=plan.target.approve,
                progress=progress,
                stop=stop,
            )


def _report_load(
    report: LoadReport, telemetry: Telemetry | None, redactor: Redactor, *, summary: bool
) -> None:
    """Telemetry losses and failing scenario files (always), then the summary line.

    File names are operator text, so they pass the redactor; the rest is counts and our words.
    Without `telemetry` (`--target`), failures are keyed by a fixed reason
    (`load_http.run_http_load`), not by file.
    """
    if telemetry is None:
        for reason, count in sorted(report.failures.items()):
            print(f"load: {count} turn(s) {reason}", file=sys.stderr)
        if summary:
            print(progress_line(report), file=sys.stderr, flush=True)
        return
    if (loss := telemetry.loss_summary()) is not None:
        print(loss, file=sys.stderr)
    for raw_source, count in sorted(report.failures.items()):
        source = redactor.redact_text(raw_source)
        print(
            f"load: {source}: {count} turn(s) raised instead of ending "
            f"(zeroclaw-obs run --scenario {source} shows why)",
            file=sys.stderr,
        )
    if summary:
        print(progress_line(report), file=sys.stderr, flush=True)


def _bad_input(message: str) -> int:
    print(
        f"zeroclaw-obs: error: {message.splitlines()[0] if message else 'bad input'}",
        file=sys.stderr,
    )
    return EXIT_BAD_INPUT


def _prepare(
    args: argparse.Namespace,
) -> tuple[Scenario, str, str | None, bytes | None, _Outputs]:
    """Load and validate everything before any output file is touched.

    Raises:
        BadInputError: the scenario, config, key file or an output path is invalid.
    """
    if args.command == "demo":
        source = f"<built-in {DEMO_SCENARIO}>"
        scenario = _load_builtin(DEMO_SCENARIO, source)
        message = None
        if args.otlp_json is None:
            args.otlp_json = Path(DEMO_TRACES)
    else:
        scenario, source = _run_scenario(args)
        message = args.message
        conversation = args.conversation_id
        if conversation is not None and not CONVERSATION_ID.fullmatch(conversation):
            raise BadInputError(
                "--conversation-id: must be 1-128 characters of A-Z a-z 0-9 . _ : -"
            )
        if message is None and scenario.user is None:
            raise BadInputError(f"MESSAGE: required: {source} has no `user` message")
        if scenario.provider.real:
            resolve_api_key(scenario.provider, source=source)
        import_python_tools(
            scenario.python_tools, source=source, taken=[t.name for t in scenario.tools]
        )
    base = load_config_file(args.config) if args.config is not None else None
    if base is not None:
        # Named against the TOML file, where the bad entry is, before the merge hides its origin.
        build_redactor(base.redaction, str(args.config), field="redaction")
    key = load_key_file(args.receipt_key_file) if args.receipt_key_file is not None else None
    scenario = _apply_settings(scenario, source, base, receipts=key is not None)
    outputs = _Outputs(
        events=args.events_out,
        history=args.history_out,
        audit=args.audit_out,
        otlp_json=args.otlp_json,
        metrics=args.metrics_out,
        logs=args.logs_out,
        record=getattr(args, "record", None),
    )
    _check_writable(outputs.by_flag())
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        raise BadInputError(f"--metrics-port: {args.metrics_port} is not a port number")
    build_redactor(scenario.config.redaction, source)  # reject invalid rules before any output
    return scenario, source, message, key, outputs


_PORTABLE_PROVIDER_FIELDS = ("native_tools", "stream", "timeout_s", "max_retries")
"""Provider settings `--provider` keeps from the file when it names another kind."""


def _run_scenario(args: argparse.Namespace) -> tuple[Scenario, str]:
    """The scenario `run` runs: the file, under the `--provider/--base-url/--model` overrides,
    or with no file an agent built from those flags alone.

    Raises:
        BadInputError: neither a file nor `--provider`, or the provider the flags describe is
            invalid (named against the file, or against `--provider`).
    """
    flags = {
        key: value
        for key, value in (
            ("kind", args.provider),
            ("base_url", args.base_url),
            ("model", args.model),
        )
        if value is not None
    }
    if args.scenario is None:
        if args.provider is None:
            raise BadInputError("run: give --scenario FILE, or --provider openai|anthropic")
        return parse_scenario({"provider": flags}, "--provider"), "--provider"
    source = str(args.scenario)
    scenario = load_scenario(args.scenario)
    if not flags:
        return scenario, source
    current = scenario.provider
    section = current.model_dump(exclude_unset=True)
    if "kind" in flags and flags["kind"] != current.kind:
        # Another backend: its name, model, URL and key variable are its own (defaults or
        # flags); only how to talk to it carries over from the file.
        section = {key: section[key] for key in _PORTABLE_PROVIDER_FIELDS if key in section}
    section.update(flags)
    try:
        provider = ScenarioProvider.model_validate(section)
    except ValidationError as exc:
        raise ConfigError(
            load_error_line(f"{source} with --provider", exc, section, ScenarioProvider)
        ) from None
    update: dict[str, Any] = {"provider": provider}
    if provider.real:
        update["responses"] = []  # a live model answers; the script is not replayed
    return scenario.model_copy(update=update), source


def _apply_settings(
    scenario: Scenario, source: str, base: RuntimeConfig | None, *, receipts: bool
) -> Scenario:
    """The scenario under `--config` (its explicit values win), with receipts on if a key is given.

    Raises:
        ConfigError: the merged config is invalid (named).
    """
    if base is not None:
        scenario = _merge_config(scenario, base, source)
    if receipts and not scenario.config.receipts.enabled:
        scenario = _merge_config(
            scenario,
            scenario.config.model_copy(update={"receipts": ReceiptsConfig(enabled=True)}),
            source,
            override=False,
        )
    return scenario


def _load_builtin(name: str, source: str) -> Scenario:
    import yaml

    text = resources.files("zeroclaw_obs").joinpath("scenarios", name).read_text("utf-8")
    return parse_scenario(yaml.safe_load(text), source)


def _merge_config(
    scenario: Scenario, base: RuntimeConfig, source: str, *, override: bool = True
) -> Scenario:
    """Config file values under the scenario's explicit ones (or replace, `override=False`)."""
    if override:
        merged: dict[str, Any] = base.model_dump(mode="json")
        merged.update(scenario.config.model_dump(mode="json", exclude_unset=True))
    else:
        merged = base.model_dump(mode="json")
    try:
        config = RuntimeConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(load_error_line(source, exc)) from exc
    return scenario.model_copy(update={"config": config})


def _check_writable(outputs: Iterable[tuple[str, Path]]) -> None:
    """Every output path is writable, or `BadInputError` names its flag (see
    `check_output_path`); two flags naming one regular file would overwrite each other."""
    seen: dict[Path, str] = {}
    for flag, path in outputs:
        check_output_path(flag, path)
        if in_place(path):
            continue  # a device, a FIFO or /dev/stdout can take several outputs in turn
        key = path.resolve()
        if key in seen:
            raise BadInputError(f"{flag}: same file as {seen[key]}")
        seen[key] = flag


async def _run(replay: Replay, guard: SignalGuard) -> TurnOutcome:
    """Run the turn; the first SIGINT or SIGTERM cancels it, a second ends it at once."""
    try:
        with guard.in_loop(lambda _signum: replay.state.cancellation.cancel()):
            return await replay.run()
    finally:
        await replay.execution.provider.aclose()


def _write_turn_outputs(outputs: _Outputs, replay: Replay) -> None:
    """Events, history and the recording, each whole; JSON strings keep lone surrogates as
    `\\udXXX`."""
    if outputs.record is not None:
        write_atomically(outputs.record, _recording_yaml(replay.recording()))
    if outputs.events is not None:
        lines = (json.dumps(e.to_json_dict(), ensure_ascii=False) for e in replay.events.events)
        write_atomically(outputs.events, "".join(line + "\n" for line in lines))
    if outputs.history is not None:
        history = json.dumps(replay.state.messages, ensure_ascii=False, indent=2)
        write_atomically(outputs.history, history + "\n")


def _recording_yaml(data: dict[str, Any]) -> str:
    """The `--record` scenario as YAML: multi-line texts as `|` blocks where YAML allows
    (the emitter quotes them otherwise), a character YAML cannot print escaped."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    head = "# zeroclaw-obs recording: replay offline with `zeroclaw-obs run --scenario FILE`\n"
    body = yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=100)
    return head + body


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
