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
import contextlib
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from ._entry import restore_default_signals
from ._signals import Interrupted, SignalGuard
from ._terminal import survive_any_text
from .commands.common import (
    EXIT_ABORTED,
    EXIT_BAD_INPUT,
    EXIT_CANCELLED,
    EXIT_FINDINGS,
    EXIT_OK,
    Phase,
    add_telemetry_files,
    exit_code,
)
from .commands.load import add_load_parser, load_command
from .commands.run import add_run_flags, run_command
from .commands.scan import redact_scan
from .receipts import KEY_BYTES
from .server.command import add_serve_parser, serve_command

__all__ = [
    "EXIT_ABORTED",
    "EXIT_BAD_INPUT",
    "EXIT_CANCELLED",
    "EXIT_FINDINGS",
    "EXIT_OK",
    "exit_code",
    "main",
]


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
    add_run_flags(run)
    demo = commands.add_parser("demo", help="run the built-in demo scenario (no network)")
    add_run_flags(demo)
    add_load_parser(commands)
    add_serve_parser(commands, add_telemetry_files)
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `zeroclaw-obs` console script; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.command == "redact":
        restore_default_signals()
        return redact_scan(args)
    if args.command == "keygen":
        restore_default_signals()
        # A key made here, not input: printing it is the command's whole purpose.
        print(secrets.token_hex(KEY_BYTES))
        return EXIT_OK
    for stream in (sys.stdout, sys.stderr):
        survive_any_text(stream)
    with SignalGuard() as guard:
        phase = Phase()
        try:
            if args.command == "load":
                return load_command(args, guard, phase)
            if args.command == "serve":
                return serve_command(args, guard, phase)
            return run_command(args, guard, phase)
        except BaseException as exc:
            interrupted = guard.interrupted_by(exc)
            if interrupted is None:
                raise
            return _interrupted(interrupted, phase.phase)


def _interrupted(interrupted: Interrupted, phase: str) -> int:
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    # No payload: the signal's name and one of our fixed phase texts (`Phase`).
    print(f"zeroclaw-obs: interrupted by {interrupted.name} {phase}", file=sys.stderr, flush=True)
    return interrupted.exit_code


if __name__ == "__main__":  # pragma: no cover
    from ._entry import leave

    _code = main()
    leave(_code)  # as the console script ends (`_entry.leave`)
    sys.exit(_code)
