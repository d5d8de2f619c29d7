"""The leak audit: scan exported telemetry for anything the redactor would still catch.

`zeroclaw-obs redact scan PATH...` is what a security team runs over what the collector
received (OTLP JSON lines, JSON logs, Prometheus text, or any text). Each line is scanned with
the runtime's `Redactor`: JSON lines structurally (so a value under a `password` key is found,
and OTLP attribute lists `[{"key": k, "value": {"stringValue": v}}]` are read as `k: v`), other
lines as text. A finding names the file, the line and the rule — never the value, so the
report itself can be shared.

Already-redacted text (`[REDACTED:…]`) is not a finding: the redactor is idempotent.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .redaction import Redactor

__all__ = ["Finding", "ScanError", "iter_files", "scan_line", "scan_paths"]

_OTLP_SCALARS = ("stringValue", "intValue", "doubleValue", "boolValue", "bytesValue")


class ScanError(OSError):
    """Raised when a path to scan cannot be read; the message names it."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule that fired on one line (how many times), never the matched text."""

    path: str
    line: int
    rule: str
    count: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}" + (
            f" (x{self.count})" if self.count > 1 else ""
        )


def _otlp_value(value: Any) -> Any:
    if isinstance(value, dict):
        for scalar in _OTLP_SCALARS:
            if scalar in value:
                return value[scalar]
        if "arrayValue" in value:
            return [_otlp_value(v) for v in value["arrayValue"].get("values", [])]
        if "kvlistValue" in value:
            return _unwrap(value["kvlistValue"].get("values", []))
    return _unwrap(value)


def _is_attribute_list(value: list[Any]) -> bool:
    return bool(value) and all(
        isinstance(item, dict) and "key" in item and "value" in item for item in value
    )


def _unwrap(data: Any) -> Any:
    """Read OTLP attribute lists as mappings so key-aware rules see `key: value` pairs."""
    if isinstance(data, list):
        if _is_attribute_list(data):
            return {str(item["key"]): _otlp_value(item["value"]) for item in data}
        return [_unwrap(item) for item in data]
    if isinstance(data, dict):
        return {key: _unwrap(value) for key, value in data.items()}
    return data


def scan_line(line: str, redactor: Redactor) -> dict[str, int]:
    """The rule counts the redactor reports for one line (JSON read structurally)."""
    stripped = line.strip()
    if not stripped:
        return {}
    if stripped[0] in "{[":
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict | list):
            return dict(redactor.redact_value_report(_unwrap(data))[1])
    return dict(redactor.redact_text_report(line)[1])


def iter_files(paths: Iterable[Path]) -> Iterator[Path]:
    """Every file under the given paths, in a stable order.

    Raises:
        ScanError: a path does not exist.
    """
    for path in paths:
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    yield Path(root) / name
        elif path.exists():
            yield path
        else:
            raise ScanError(f"{path}: no such file or directory")


def scan_paths(paths: Iterable[Path], redactor: Redactor) -> Iterator[Finding]:
    """Scan files line by line, streaming (large exports never load whole).

    Raises:
        ScanError: a path does not exist or cannot be read.
    """
    for file in iter_files(paths):
        try:
            with file.open(encoding="utf-8", errors="replace") as handle:
                for number, line in enumerate(handle, start=1):
                    for rule, count in sorted(scan_line(line, redactor).items()):
                        yield Finding(str(file), number, rule, count)
        except OSError as exc:
            raise ScanError(f"{file}: cannot read: {exc.strerror or exc}") from exc
