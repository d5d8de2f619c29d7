"""What the commands share: exit codes, the output files and their staging, one-line errors,
the config merge and the output-path checks (`run`, `demo`, `load`, `serve`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from .._output_files import check_output_path, in_place, place, temp_beside
from .._signals import deferred_signals
from .._terminal import ENCODING, ENCODING_ERRORS
from ..config import (
    ReceiptsConfig,
    RuntimeConfig,
    load_error_line,
)
from ..errors import BadInputError, ConfigError
from ..observability.events import TurnOutcomeKind
from ..scenario import Scenario
from ..turn.loop import TurnOutcome

__all__ = [
    "EXIT_ABORTED",
    "EXIT_BAD_INPUT",
    "EXIT_CANCELLED",
    "EXIT_FINDINGS",
    "EXIT_OK",
    "SHUTDOWN_TIMEOUT_S",
    "Outputs",
    "Phase",
    "Staging",
    "add_telemetry_files",
    "apply_settings",
    "bad_input",
    "check_writable",
    "exit_code",
    "isatty",
    "merge_config",
    "output_error",
]

EXIT_OK = 0


EXIT_FINDINGS = 1


EXIT_BAD_INPUT = 2


EXIT_ABORTED = 3


EXIT_CANCELLED = 130


SHUTDOWN_TIMEOUT_S = 5.0


def exit_code(outcome: TurnOutcome) -> int:
    """The process exit code of a turn's outcome."""
    if outcome.ok:
        return EXIT_OK
    if outcome.kind is TurnOutcomeKind.CANCELLED:
        return EXIT_CANCELLED
    return EXIT_ABORTED


def add_telemetry_files(parser: argparse.ArgumentParser) -> None:
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


@dataclass(frozen=True, kw_only=True)
class Outputs:
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


class Staging:
    """Temp files beside the outputs that telemetry streams into while the turn runs.

    They replace their targets only when the run ends with a result, so invalid input never
    creates or changes an output file. Signals are held back while the temp files are made and
    while they are moved, so an interrupted run never leaves one behind.
    """

    def __init__(self, outputs: Outputs) -> None:
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


@dataclass
class Phase:
    """Where a command is, for the one line an interrupt prints."""

    phase: str = "before the turn started; no output file written"


def isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def output_error(message: str, exc: Exception) -> str:
    """One line for a failure to write an output: the OS's words, with the file it names."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename is not None else ""
        return f"{where}{exc.strerror}"
    return message


def bad_input(message: str) -> int:
    print(
        f"zeroclaw-obs: error: {message.splitlines()[0] if message else 'bad input'}",
        file=sys.stderr,
    )
    return EXIT_BAD_INPUT


def apply_settings(
    scenario: Scenario, source: str, base: RuntimeConfig | None, *, receipts: bool
) -> Scenario:
    """The scenario under `--config` (its explicit values win), with receipts on if a key is given.

    Raises:
        ConfigError: the merged config is invalid (named).
    """
    if base is not None:
        scenario = merge_config(scenario, base, source)
    if receipts and not scenario.config.receipts.enabled:
        scenario = merge_config(
            scenario,
            scenario.config.model_copy(update={"receipts": ReceiptsConfig(enabled=True)}),
            source,
            override=False,
        )
    return scenario


def merge_config(
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


def check_writable(outputs: Iterable[tuple[str, Path]]) -> None:
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
