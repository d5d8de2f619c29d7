"""The approval audit log: one entry per decision that asked someone, and per runtime denial.

This module owns the `--audit-out` format (DESIGN §4): one JSON object per line with
`timestamp` (RFC 3339 UTC), `turn_id`, `tool_call_id`, `tool`, `arguments_summary`, `decision`
(`yes|no|always|replace`), `surface` (`cli|scenario|backchannel|web|runtime`) and `decided_by`;
an entry for an MCP tool appends `server` (the server's name) and `annotations` (a JSON object
of the standard hints only: `title`, `readOnlyHint`, `destructiveHint`, `idempotentHint`,
`openWorldHint`; `{}` when the server sent none). Entries for other tools carry neither key.
Auto-approvals are never audited. Approval is a pre-execution control: an entry is never a
receipt and never proof that the tool ran.

Risky parts: the audit log is an outward surface, so `arguments_summary` and an annotation
`title` (server text) must already have passed through the runtime's one `Redactor`; this
module cannot tell and does not redact again.
A log opened with `AuditLog.streaming_to` writes each entry to its file the moment it is
appended, as one whole line in one `write` (no buffer of ours to lose), so a call that ran is
never missing from the file even if the process is then killed; the file is fsynced once, at
`close` (a power cut can lose the entries since the last sync, a killed process cannot). The
file has mode 0600; a FIFO or character device target is written in place and keeps its mode.
`write_jsonl` replaces the target atomically instead (a temporary file in the same directory,
then `os.replace`), so a reader never sees half a file. Lines are UTF-8 with lone surrogates
written as JSON's `\\udXXX` escapes (see `_terminal`), so any string is written and read back.
"""

from __future__ import annotations

import collections
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._output_files import in_place, write_atomically
from .._terminal import ENCODING, ENCODING_ERRORS
from ..observability.events import ApprovalSurface, Decision

__all__ = [
    "AUDIT_DECISIONS",
    "AUDIT_SURFACES",
    "AuditEntry",
    "AuditLog",
    "rfc3339_utc",
]

AUDIT_DECISIONS = frozenset(Decision)
"""The values `decision` may take; a runtime denial is audited as `no`."""

AUDIT_SURFACES = frozenset(ApprovalSurface)
"""The values `surface` may take."""


def rfc3339_utc(moment: datetime) -> str:
    """Format an aware datetime as RFC 3339 in UTC with microseconds and a `Z` suffix.

    Args:
        moment: a timezone-aware datetime; it is converted to UTC first.

    Returns:
        A string such as `2026-12-03T01:02:03.123456Z`.

    Raises:
        ValueError: `moment` is naive, so its instant is unknown.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("audit timestamps need a timezone-aware datetime")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One approval decision as the audit log records it.

    Raises:
        ValueError: `decision` or `surface` is not one of the documented values.
    """

    timestamp: str
    """When the decision was taken, RFC 3339 UTC (see `rfc3339_utc`)."""

    turn_id: str
    """The turn the call belongs to; spans and logs carry the same id."""

    tool_call_id: str
    """The call id the model gave; TurnEvents and history use the same id."""

    tool: str
    """The name of the tool that asked for approval."""

    arguments_summary: str
    """The arguments as the operator saw them, already redacted by the caller."""

    decision: str
    """`yes`, `no`, `always` or `replace`; a runtime denial is `no`."""

    surface: str
    """Who was asked: `cli`, `scenario`, `backchannel`, `web`, or `runtime` for a runtime denial."""

    decided_by: str
    """The operator or policy that decided, e.g. `terminal:alice` or `runtime-policy`."""

    server: str | None = None
    """The MCP server of the tool; None (and no `server` key) for any other tool."""

    annotations: Mapping[str, Any] | None = None
    """The MCP tool's standard hints as the operator saw them (`title` redacted); None for a
    tool that is not an MCP tool."""

    def __post_init__(self) -> None:
        if self.decision not in AUDIT_DECISIONS:
            raise ValueError(f"unknown audit decision: {self.decision!r}")
        if self.surface not in AUDIT_SURFACES:
            raise ValueError(f"unknown audit surface: {self.surface!r}")

    def to_json_dict(self) -> dict[str, Any]:
        """The entry as one `--audit-out` JSON object, with plain strings for enum values.

        Returns:
            A dict with the eight documented keys, in the documented order, then `server`
            and `annotations` (a dict) for an MCP tool.
        """
        entry: dict[str, Any] = {
            item.name: str(getattr(self, item.name))
            for item in fields(self)
            if item.name not in _MCP_KEYS
        }
        if self.server is not None:
            entry["server"] = self.server
            entry["annotations"] = dict(self.annotations or {})
        return entry


_MCP_KEYS = frozenset({"server", "annotations"})


class AuditLog:
    """An append-only list of audit entries, kept in memory and, optionally, streamed to a file.

    Args:
        stream_fd: an open file descriptor each entry is written to as it is appended (see
            `streaming_to`); None keeps the entries in memory only.
        keep_last: how many entries memory keeps (the newest); None keeps every one. A
            long-lived server (`serve`) bounds it: the streamed file has them all.
    """

    def __init__(self, stream_fd: int | None = None, *, keep_last: int | None = None) -> None:
        self._entries: collections.deque[AuditEntry] = collections.deque(maxlen=keep_last)
        self._fd = stream_fd
        self.write_error: OSError | None = None
        """The first error writing the streamed file, if any; the entries stay in memory."""

    @classmethod
    def streaming_to(
        cls, path: str | os.PathLike[str], *, keep_last: int | None = None
    ) -> AuditLog:
        """A log that writes each entry to `path` when it is appended, one JSON line per entry.

        A regular file is created (or truncated) with mode 0600 (an existing file's mode is
        set to 0600 too); a FIFO, a character device or a stream link such as `/dev/stdout`
        is opened in place for appending, keeping its mode (opening a FIFO waits for its
        reader).

        Args:
            path: the `--audit-out` file; its directory must exist.

        Raises:
            OSError: the file cannot be opened.
        """
        target = Path(path)
        if in_place(target):
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        else:
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC
            fd = os.open(target, flags, 0o600)
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.fchmod(fd, 0o600)
        return cls(stream_fd=fd, keep_last=keep_last)

    @property
    def entries(self) -> list[AuditEntry]:
        """A copy of the entries in the order they were appended."""
        return list(self._entries)

    def append(self, entry: AuditEntry) -> None:
        """Record one decision, and write it to the streamed file at once. Never raises.

        Args:
            entry: the decision to record; it is kept as given.
        """
        self._entries.append(entry)
        if self._fd is None or self.write_error is not None:
            return
        data = _line(entry).encode(ENCODING, ENCODING_ERRORS)
        try:
            while data:  # one write for a line in practice; a short write is finished here
                data = data[os.write(self._fd, data) :]
        except OSError as exc:
            self.write_error = exc  # the caller reports it; a turn is never broken by its log

    def close(self) -> None:
        """Sync and close the streamed file (a no-op without one, or when already closed)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.fsync(fd)
        except OSError as exc:
            self.write_error = self.write_error or exc
        finally:
            os.close(fd)

    def write_jsonl(self, path: str | os.PathLike[str]) -> None:
        """Write every entry as one JSON object per line, replacing `path` atomically.

        The lines go to a temporary file beside `path`, which is flushed, synced and then moved
        over `path`, so an interrupted write leaves the previous file (or none) rather than a
        truncated one. An empty log writes an empty file.

        Args:
            path: the `--audit-out` file; its directory must exist.

        Raises:
            OSError: the directory is missing or not writable, or the move fails; the
                temporary file is removed first.
        """
        lines = "".join(_line(entry) for entry in self._entries)
        write_atomically(Path(path), lines, private=True)


def _line(entry: AuditEntry) -> str:
    return json.dumps(entry.to_json_dict(), ensure_ascii=False) + "\n"
