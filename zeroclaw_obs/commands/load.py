"""`load`: replay a folder of scenarios as traffic, in process or against a server (`--target`)."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._output_files import write_atomically
from .._signals import SignalGuard
from ..config import (
    build_redactor,
    load_config_file,
)
from ..errors import BadInputError
from ..load import (
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
from ..observability.observer import Observer
from ..observability.telemetry import (
    Telemetry,
    TelemetryOptions,
    default_exporter_env,
    setup_telemetry,
)
from ..receipts import load_key_file
from ..redaction import Redactor
from .common import (
    EXIT_CANCELLED,
    EXIT_OK,
    SHUTDOWN_TIMEOUT_S,
    Outputs,
    Phase,
    Staging,
    add_telemetry_files,
    apply_settings,
    bad_input,
    check_writable,
)

__all__ = [
    "LOAD_DIR",
    "LOAD_IN_PROCESS_FLAGS",
    "LOAD_METRICS_HOST",
    "LOAD_METRICS_PORT",
    "add_load_parser",
    "load_command",
]

if TYPE_CHECKING:  # httpx is imported only when `load --target` runs
    from .. import load_http


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


def add_load_parser(commands: Any) -> None:
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
    add_telemetry_files(load)
    load.add_argument("--quiet", action="store_true", help="nothing on stderr but errors")


@dataclass(frozen=True, kw_only=True)
class _LoadPlan:
    """A validated `load` command line: nothing is started or written before it exists."""

    scenarios: list[LoadScenario]
    options: LoadOptions
    redactor: Redactor
    key: bytes | None
    outputs: Outputs
    metrics_port: int = LOAD_METRICS_PORT
    metrics_host: str = LOAD_METRICS_HOST
    target: load_http.HttpTarget | None = None
    """With `--target`: the server the turns go to; None replays them in this process."""


def load_command(args: argparse.Namespace, guard: SignalGuard, phase: Phase) -> int:
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
        return bad_input(str(exc))
    if plan.target is not None:
        return _load_target(plan, args, guard, phase)
    staging = Staging(plan.outputs)
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
            return bad_input(_telemetry_error(exc, plan))
        if not args.quiet and telemetry.metrics_server is not None:
            shown_dir = plan.redactor.redact_text(str(args.dir))  # a path is operator text
            print(
                f"load: {len(plan.scenarios)} scenario(s) from {shown_dir}; "
                f"metrics at {plan.redactor.redact_text(telemetry.metrics_server.url)}",
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
    plan: _LoadPlan, args: argparse.Namespace, guard: SignalGuard, phase: Phase
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
        return bad_input(str(exc))
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
            item.source, apply_settings(item.scenario, item.source, base, receipts=bool(key))
        )
        for item in load_scenario_dir(args.dir)
    ]
    redactor = build_redactor(common_redaction(scenarios), str(args.config or scenarios[0].source))
    target = None
    if args.target is not None:
        from ..load_http import HttpTarget, parse_target, read_token

        url = parse_target(args.target)
        token, token_source = read_token(args.token_file)
        target = HttpTarget(
            url=url,
            token=token,
            token_source=token_source,
            shown=redactor.redact_text(url),
            approve=args.approve,
        )
    outputs = Outputs(
        events=None,
        history=None,
        audit=None,
        otlp_json=args.otlp_json,
        metrics=args.metrics_out,
        logs=args.logs_out,
    )
    check_writable(outputs.by_flag())
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
    from ..load_http import check_target, run_http_load, target_client

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
