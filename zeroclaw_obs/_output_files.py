"""Output files written whole or not at all: a temp file beside the target, then a rename.

Every file the runtime writes for a user (`--events-out`, `--history-out`, `--audit-out`,
`--metrics-out`, and the staged telemetry files) goes through here, so a reader never sees half
a file and an interrupted write leaves the previous file (or none).

Risky parts. A target that already exists as a FIFO or a character device (`/dev/null`, a
pipe a reader waits on), or as a link under `/dev` or `/proc` to a stream the process holds
(`/dev/stdout`, `/dev/fd/1`), is written in place and appended to, never replaced or
truncated: a rename over `/dev/null` would, run as root, turn it into a regular file for every
process on the host, and truncating `/dev/stdout` redirected to a file would erase the answer
printed before. Such a target gets no atomicity (a device has no "previous file"); its staged
copy lives in the system's temp directory instead of beside it. Opening a FIFO blocks until a
reader opens it.
Text is UTF-8 with `ENCODING_ERRORS` (`backslashreplace`), so any Python string, a lone
surrogate included, is written (see `_terminal`).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from ._terminal import ENCODING, ENCODING_ERRORS
from .errors import BadInputError

__all__ = [
    "check_output_path",
    "default_mode",
    "in_place",
    "place",
    "temp_beside",
    "write_atomically",
]

_STREAM_LINKS = ("/dev/", "/proc/")


def in_place(path: Path) -> bool:
    """True when `path` must be written in place, appending: it exists as a FIFO or a character
    device (followed through links), or it is a link under `/dev` or `/proc` (`/dev/stdout`)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return True
    absolute = os.path.abspath(path)
    return absolute.startswith(_STREAM_LINKS) and os.path.islink(absolute)


def check_output_path(flag: str, path: Path) -> None:
    """Reject an output path the run could not write, before anything starts.

    The message names the flag and the problem, not the path: the path is operator input,
    and the flag says which one it is.

    Args:
        flag: the option that named the path, e.g. `--events-out`.
        path: the target.

    Raises:
        BadInputError: the target is a directory or not writable, or its parent directory is
            missing, not a directory, or not writable.
    """
    if path.is_dir():
        raise BadInputError(f"{flag}: is a directory")
    if path.exists() or path.is_symlink():
        if not os.access(path, os.W_OK):
            raise BadInputError(f"{flag}: file is not writable")
        if in_place(path):
            return  # written in place: its directory (e.g. /dev) is not ours to write
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise BadInputError(f"{flag}: parent directory does not exist")
    if not parent.is_dir():
        raise BadInputError(f"{flag}: parent is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise BadInputError(f"{flag}: parent directory is not writable")


def default_mode(path: Path) -> None:
    """Give `path` the usual mode (0666 less the umask); `mkstemp` creates 0600 files."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def temp_beside(target: Path, *, private: bool = False) -> Path:
    """A new empty temp file in `target`'s directory (same file system, so the rename is atomic).

    For a device or FIFO target the temp file is made in the system temp directory: it is
    copied into the target (`place`), never renamed over it.

    Raises:
        OSError: the directory is missing or not writable.
    """
    if in_place(target):
        directory = Path(tempfile.gettempdir())
        private = True
    else:
        directory = target.parent if str(target.parent) else Path(".")
    fd, name = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    if not private:
        default_mode(Path(name))
    return Path(name)


def place(temp: Path, target: Path) -> None:
    """Move a staged `temp` into `target`: a rename, or a copy into a device or FIFO.

    Raises:
        OSError: the rename or the copy failed; the temp file is removed either way.
    """
    try:
        if in_place(target):
            with temp.open("rb") as source, target.open("ab") as sink:
                shutil.copyfileobj(source, sink)
        else:
            os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)


def write_atomically(target: Path, text: str, *, private: bool = False) -> None:
    """Write `text` to `target` whole: temp file, flush, fsync, rename.

    A device or FIFO target is written in place instead (see the module docstring).

    Args:
        target: the output file; its directory must exist.
        text: the whole content; any string (lone surrogates are written as `\\udXXX`).
        private: keep mode 0600 (the audit log), else the usual mode.

    Raises:
        OSError: the write or the rename failed; the temp file is removed first.
    """
    if in_place(target):
        with target.open("a", encoding=ENCODING, errors=ENCODING_ERRORS, newline="\n") as sink:
            sink.write(text)
        return
    temp = temp_beside(target, private=private)
    try:
        with temp.open("w", encoding=ENCODING, errors=ENCODING_ERRORS, newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        # BaseException: a cancelled or interrupted run must not leave a stray temp file either.
        temp.unlink(missing_ok=True)
        raise
