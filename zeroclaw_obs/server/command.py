"""`zeroclaw-obs serve`: validate like `run`, then serve the agent over HTTP until a signal.

Everything is checked before the port is bound (scenario, config, key file, token file, output
paths): bad input exits 2 with one line, like `run`. Telemetry files are written as they go
(`--otlp-json`, `--logs-out`, `--audit-out`), not staged: a server lives long, and what it did
before a crash must be on disk.

Signals are ours, not uvicorn's (`_UvicornServer.capture_signals` is a no-op): SIGTERM drains
(no new turn, running turns get `--drain-timeout-s`, then are cancelled), then uvicorn stops,
MCP servers close and telemetry flushes (bounded); exit 0. SIGINT cancels running turns at once
and exits 130. A second signal ends the process at once (`SignalGuard`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import os
import secrets
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .._output_files import write_atomically
from .._terminal import ENCODING, ENCODING_ERRORS
from ..errors import BadInputError

if TYPE_CHECKING:
    from .._signals import SignalGuard
    from .runtime import ServerRuntime, ServeSettings

__all__ = ["add_serve_parser", "read_token_file", "serve_command", "token_matches"]

SHUTDOWN_TIMEOUT_S = 5.0
SERVED_USER_PLACEHOLDER = "(each turn of `serve` brings its own message)"
MIN_TOKEN_CHARS = 16


def add_serve_parser(commands: Any, add_telemetry_files: Callable[[Any], None]) -> None:
    """The `serve` subcommand and its flags (`docs/server.md`)."""
    from .runtime import ServeSettings

    defaults = ServeSettings()
    serve = commands.add_parser(
        "serve", help="serve the agent over HTTP: turns, event streams, the approval page"
    )
    serve.add_argument("--scenario", type=Path, required=True, help="agent or scenario file")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    serve.add_argument("--port", type=int, default=8080, help="port (8080; 0: any free port)")
    serve.add_argument(
        "--token-file", type=Path, help="file holding the bearer token (default: a fresh one)"
    )
    add_telemetry_files(serve)
    serve.add_argument("--audit-out", type=Path, help="append approval audit entries (JSON lines)")
    serve.add_argument("--metrics-port", type=int, help="also serve /metrics on 127.0.0.1:PORT")
    serve.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    for name, kind, help_text in (
        ("max_conversations", int, "conversations kept at most"),
        ("conversation_idle_s", float, "seconds an idle conversation is kept"),
        ("max_history_messages", int, "history messages a conversation keeps"),
        ("max_running_turns", int, "turns running at once"),
        ("max_body_bytes", int, "largest request body"),
        ("drain_timeout_s", float, "seconds running turns get at SIGTERM"),
        ("keep_finished_turns", int, "finished turns kept readable (status, events)"),
    ):
        default = getattr(defaults, name)
        serve.add_argument(
            "--" + name.replace("_", "-"),
            type=kind,
            default=default,
            help=f"{help_text} ({default:g})",
        )


def serve_command(args: argparse.Namespace, guard: SignalGuard, phase: Any) -> int:
    """Run `serve`: 0 after a SIGTERM drain, 130 after SIGINT, 2 on bad input."""
    from ..commands import common

    try:
        settings = _settings(args)
        token, fresh = _token(args.token_file)
        scenario, source, key = _prepare(args)
    except BadInputError as exc:
        return common.bad_input(str(exc))

    from ..approval import AuditLog
    from ..config import build_redactor
    from ..observability.telemetry import TelemetryOptions, default_exporter_env, setup_telemetry
    from .runtime import ServerRuntime

    redactor = build_redactor(scenario.config.redaction, source)
    telemetry = None
    audit = None
    logs: TextIO | None = None
    try:
        try:
            if args.logs_out is not None:
                logs = open(args.logs_out, "w", encoding=ENCODING, errors=ENCODING_ERRORS)  # noqa: SIM115
            telemetry = setup_telemetry(
                TelemetryOptions(
                    otlp_json=args.otlp_json,
                    metrics_port=args.metrics_port,
                    logs=logs,
                    progress=None if args.quiet else sys.stderr,
                    trace_tree=False,  # it keeps every turn it draws: a server would only grow
                    env=default_exporter_env(os.environ, otlp_json=args.otlp_json),
                    capture_messages=scenario.config.capture_message_content,
                ),
                redactor=redactor,
            )
            audit = (
                AuditLog.streaming_to(args.audit_out, keep_last=settings.keep_finished_turns)
                if args.audit_out is not None
                else AuditLog(keep_last=settings.keep_finished_turns)
            )
        except (BadInputError, OSError) as exc:
            return common.bad_input(common.output_error(str(exc), exc))
        runtime = ServerRuntime(
            scenario,
            settings,
            source=source,
            observer=telemetry.observer,
            redactor=redactor,
            receipt_key=key,
            audit=audit,
            metrics=lambda openmetrics: _metrics(telemetry, openmetrics),
        )
        phase.phase = "while serving"
        exit_code = asyncio.run(_serve(runtime, args, token, fresh, guard))
        phase.phase = "during the exit flush"
        telemetry.shutdown(timeout_s=SHUTDOWN_TIMEOUT_S)
        if (loss := telemetry.loss_summary()) is not None:
            print(loss, file=sys.stderr)
        if args.metrics_out is not None:
            write_atomically(args.metrics_out, telemetry.metrics_text().decode("utf-8"))
        return exit_code
    except BadInputError as exc:
        return common.bad_input(str(exc))
    finally:
        if telemetry is not None:
            telemetry.shutdown(timeout_s=0.0)
        if audit is not None:
            audit.close()
        if logs is not None:
            logs.close()


def _metrics(telemetry: Any, openmetrics: bool) -> bytes:
    from ..observability.metrics.exposition import render_metrics

    return render_metrics(telemetry.registry, openmetrics=openmetrics)


def _settings(args: argparse.Namespace) -> ServeSettings:
    from pydantic import ValidationError

    from .runtime import ServeSettings

    if not 0 <= args.port <= 65535:
        raise BadInputError(f"--port: {args.port} is not a port number")
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        raise BadInputError(f"--metrics-port: {args.metrics_port} is not a port number")
    values = {
        name: getattr(args, name) for name in ServeSettings.model_fields if hasattr(args, name)
    }
    try:
        return ServeSettings.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        flag = "--" + str(error["loc"][0]).replace("_", "-")
        raise BadInputError(f"{flag}: {error['msg'].lower()}") from None


def read_token_file(path: Path, flag: str = "--token-file") -> str:
    """The token a file holds: its first line, stripped (`serve` and `load --target`).

    Raises:
        BadInputError: the file cannot be read or is not UTF-8; the line names `flag`, never
            the content.
    """
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise BadInputError(f"{flag}: {reason}") from None
    lines = text.strip().splitlines()
    return lines[0].strip() if lines else ""


def _token(path: Path | None) -> tuple[str, bool]:
    """The bearer token from `--token-file` (first line, stripped), or a fresh one.

    Raises:
        BadInputError: the file cannot be read, or holds a token too short to be one (the
            line names the flag, never the content).
    """
    if path is None:
        return secrets.token_urlsafe(32), True
    token = read_token_file(path)
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() or not c.isprintable() for c in token):
        raise BadInputError(
            f"--token-file: the token must be one line of at least {MIN_TOKEN_CHARS} "
            "printable characters without spaces"
        )
    return token, False


def _prepare(args: argparse.Namespace) -> tuple[Any, str, bytes | None]:
    """The scenario under `--config` and the receipt key, all validated; output paths checked."""
    from ..commands import common
    from ..config import build_redactor, load_config_file
    from ..receipts import load_key_file
    from ..scenario import load_scenario

    source = str(args.scenario)
    # Each turn brings its message: a scripted scenario served needs no `user` of its own.
    scenario = load_scenario(args.scenario, default_user=SERVED_USER_PLACEHOLDER)
    if scenario.provider.real:
        from ..replay import resolve_api_key

        resolve_api_key(scenario.provider, source=source)
    base = load_config_file(args.config) if args.config is not None else None
    if base is not None:
        build_redactor(base.redaction, str(args.config), field="redaction")
    key = load_key_file(args.receipt_key_file) if args.receipt_key_file is not None else None
    scenario = common.apply_settings(scenario, source, base, receipts=key is not None)
    flags = [
        ("--otlp-json", args.otlp_json),
        ("--logs-out", args.logs_out),
        ("--audit-out", args.audit_out),
        ("--metrics-out", args.metrics_out),
    ]
    common.check_writable([(flag, path) for flag, path in flags if path is not None])
    build_redactor(scenario.config.redaction, source)
    return scenario, source, key


def token_matches(expected: str, header: str | None) -> bool:
    """Whether an `Authorization` header carries the bearer token (constant-time)."""
    if header is None:
        return False
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode("utf-8", "replace"), expected.encode("utf-8"))


async def _serve(
    runtime: ServerRuntime, args: argparse.Namespace, token: str, fresh: bool, guard: SignalGuard
) -> int:
    import uvicorn

    from .app import build_app

    app = build_app(runtime, token)
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_config=None,
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=SHUTDOWN_TIMEOUT_S,
    )
    server = _uvicorn_server(config)
    received: list[int] = []
    stopping = asyncio.Event()

    def on_signal(signum: int) -> None:
        received.append(signum)
        if signum == signal.SIGINT:
            runtime.cancel_all()
        stopping.set()

    await runtime.start()
    try:
        with guard.in_loop(on_signal, patience=2):
            serving = asyncio.create_task(server.serve())
            while not server.started:
                if serving.done():
                    await serving  # raises what failed (a port in use: SystemExit from uvicorn)
                    raise BadInputError(f"--port {args.port}: the server did not start")
                await asyncio.sleep(0.01)
            host, port = server.bound_address()
            print(f"zeroclaw-obs: serving on http://{host}:{port}", file=sys.stderr, flush=True)
            if fresh:
                print(f"zeroclaw-obs: token (shown once): {token}", file=sys.stderr, flush=True)
            await stopping.wait()
            await runtime.drain(args.drain_timeout_s)
            server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await serving
    finally:
        await runtime.aclose()
    return 128 + signal.SIGINT if received and received[0] == signal.SIGINT else 0


def _uvicorn_server(config: Any) -> Any:
    """uvicorn's `Server` without its signal handlers (`serve` owns SIGINT and SIGTERM), and
    with `bound_address()` for `--port 0`."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            yield

        def bound_address(self) -> tuple[str, int]:
            for listener in self.servers:
                for sock in listener.sockets:
                    host, port = sock.getsockname()[:2]
                    return str(host), int(port)
            raise RuntimeError("no socket bound")

    return Server(config)
