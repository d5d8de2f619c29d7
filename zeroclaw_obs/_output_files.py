"""Output files written whole or not at all: a temp file beside the target, then a rename.

Every file the runtime writes for a user (`--events-out`, `--history-out`, `--audit-out`,
`--metrics-out`, and the staged telemetry files) goes through here, so a reader never sees half
a file and an interrupted write leaves the previous file (or none).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["default_mode", "temp_beside", "write_atomically"]


def default_mode(path: Path) -> None:
    """Give `path` the usual mode (0666 less the umask); `mkstemp` creates 0600 files."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def temp_beside(target: Path, *, private: bool = False) -> Path:
    """A new empty temp file in `target`'s directory (same file system, so the rename is atomic).

    Raises:
        OSError: the directory is missing or not writable.
    """
    directory = target.parent if str(target.parent) else Path(".")
    fd, name = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    if not private:
        default_mode(Path(name))
    return Path(name)


def write_atomically(target: Path, text: str, *, private: bool = False) -> None:
    """Write `text` to `target` whole: temp file, flush, fsync, rename.

    Args:
        target: the output file; its directory must exist.
        text: the whole content.
        private: keep mode 0600 (the audit log), else the usual mode.

    Raises:
        OSError: the write or the rename failed; the temp file is removed first.
    """
    temp = temp_beside(target, private=private)
    try:
        with temp.open("w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        # BaseException: a cancelled or interrupted run must not leave a stray temp file either.
        temp.unlink(missing_ok=True)
        raise
