"""`run` and `demo`: validate, run one turn, print the answer, write the outputs (see `cli`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._output_files import write_atomically
from .._signals import SignalGuard
from .._terminal import printable
from ..approval import AuditLog
from ..assembly import check_tool_assembly
from ..config import (
    build_redactor,
    load_config_file,
    load_error_line,
)
from ..errors import BadInputError, ConfigError
from ..observability.telemetry import (
    Telemetry,
    TelemetryOptions,
    default_exporter_env,
    setup_telemetry,
)
from ..observability.traces.tracer_setup import otlp_destination, otlp_requested
from ..receipts import load_key_file
from ..record import TurnRecorder
from ..redaction import Redactor
from ..replay import Replay, build_replay, resolve_api_key
from ..scenario import Scenario, ScenarioProvider, load_scenario, parse_scenario
from ..tools.python_tools import import_python_tools
from ..turn.context import CONVERSATION_ID
from ..turn.loop import TurnOutcome
from .common import (
    SHUTDOWN_TIMEOUT_S,
    Outputs,
    Phase,
    Staging,
    add_telemetry_files,
    apply_settings,
    bad_input,
    check_writable,
    exit_code,
    isatty,
    output_error,
)

__all__ = [
    "ALLOW_TOOL",
    "DEMO_SCENARIO",
    "DEMO_TRACES",
    "add_run_flags",
    "run_command",
    "where_spans_went",
]

DEMO_SCENARIO = "demo.yaml"


DEMO_TRACES = "zeroclaw-traces.jsonl"


ALLOW_TOOL = "--allow-tool"
"""The flag that narrows a run's tools; error lines name its entries by position."""


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    add_telemetry_files(parser)
    parser.add_argument("--events-out", type=Path, help="write TurnEvents as JSON lines")
    parser.add_argument("--history-out", type=Path, help="write provider-visible history (JSON)")
    parser.add_argument("--audit-out", type=Path, help="write approval audit entries (JSON lines)")
    parser.add_argument(
        "--metrics-port", type=int, help="serve /metrics on 127.0.0.1:PORT while running"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress lines and no trace tree on stderr"
    )
    parser.add_argument(
        "--allow-tool",
        action="append",
        metavar="NAME",
        help="offer only the tools this name or pattern (`fs_*`) matches, for this run; "
        "repeat for more. It only removes tools the agent is granted, never adds one",
    )


def run_command(args: argparse.Namespace, guard: SignalGuard, phase: Phase) -> int:
    """`run` and `demo`: validate, run the turn, print the answer, write the outputs."""
    try:
        scenario, source, message, key, outputs = _prepare(args)
    except BadInputError as exc:
        return bad_input(str(exc))
    staging = Staging(outputs)
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
            allowed_tools=args.allow_tool,
            allowed_tools_field=ALLOW_TOOL,
        )
        phase.phase = "during the turn; no output file written but the audit log"
        outcome = asyncio.run(_run(replay, guard))
        phase.phase = "while writing the outputs; unfinished output files were not written"
        # The answer leaves the engine like every other payload: through the one redactor.
        answer = redactor.redact_text(outcome.text).rstrip("\n")
        print(printable(answer, keep_lines=True) if isatty(sys.stdout) else answer, flush=True)
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
            print(where_spans_went(outputs.otlp_json, redactor), file=sys.stderr, flush=True)
    except (BadInputError, OSError) as exc:
        return bad_input(output_error(str(exc), exc))
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


def where_spans_went(path: Path | None, redactor: Redactor) -> str:
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


def _prepare(
    args: argparse.Namespace,
) -> tuple[Scenario, str, str | None, bytes | None, Outputs]:
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
    _check_allowed_tools(args.allow_tool)
    check_tool_assembly(
        scenario, source=source, allowed_tools=args.allow_tool, allowed_tools_field=ALLOW_TOOL
    )
    base = load_config_file(args.config) if args.config is not None else None
    if base is not None:
        # Named against the TOML file, where the bad entry is, before the merge hides its origin.
        build_redactor(base.redaction, str(args.config), field="redaction")
    key = load_key_file(args.receipt_key_file) if args.receipt_key_file is not None else None
    scenario = apply_settings(scenario, source, base, receipts=key is not None)
    outputs = Outputs(
        events=args.events_out,
        history=args.history_out,
        audit=args.audit_out,
        otlp_json=args.otlp_json,
        metrics=args.metrics_out,
        logs=args.logs_out,
        record=getattr(args, "record", None),
    )
    check_writable(outputs.by_flag())
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        raise BadInputError(f"--metrics-port: {args.metrics_port} is not a port number")
    build_redactor(scenario.config.redaction, source)  # reject invalid rules before any output
    return scenario, source, message, key, outputs


def _check_allowed_tools(entries: list[str] | None) -> None:
    """Each `--allow-tool` is a name or pattern: not blank (what it matches is checked with
    the agent's tools, `check_tool_assembly`).

    Raises:
        BadInputError: `--allow-tool entry 2: must not be blank`.
    """
    for number, entry in enumerate(entries or (), 1):
        if not entry.strip():
            raise BadInputError(f"{ALLOW_TOOL} entry {number}: must not be blank")


_PORTABLE_PROVIDER_FIELDS = ("native_tools", "stream", "timeout_s", "max_retries", "max_tokens")
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


def _load_builtin(name: str, source: str) -> Scenario:
    import yaml

    text = resources.files("zeroclaw_obs").joinpath("scenarios", name).read_text("utf-8")
    return parse_scenario(yaml.safe_load(text), source)


async def _run(replay: Replay, guard: SignalGuard) -> TurnOutcome:
    """Run the turn; the first SIGINT or SIGTERM cancels it, a second ends it at once."""
    try:
        with guard.in_loop(lambda _signum: replay.state.cancellation.cancel()):
            return await replay.run()
    finally:
        await replay.execution.provider.aclose()


def _write_turn_outputs(outputs: Outputs, replay: Replay) -> None:
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
