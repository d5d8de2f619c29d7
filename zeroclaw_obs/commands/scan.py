"""`redact scan`: the leak audit of exported telemetry files."""

from __future__ import annotations

import argparse
import sys

from ..config import (
    RuntimeConfig,
    build_redactor,
    load_config_file,
)
from ..errors import BadInputError
from ..scan import ScanError, scan_paths
from .common import EXIT_FINDINGS, EXIT_OK, bad_input

__all__ = [
    "redact_scan",
]


def redact_scan(args: argparse.Namespace) -> int:
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
        return bad_input(str(exc))
    sys.stdout.flush()
    if findings:
        print(f"{findings} finding(s) in {len(files)} file(s)", file=sys.stderr)
        return EXIT_FINDINGS
    print("clean: no findings", file=sys.stderr)
    return EXIT_OK
