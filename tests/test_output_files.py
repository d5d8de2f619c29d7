"""Output files: checked before the run, written whole, devices and FIFOs written in place."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from zeroclaw_obs._output_files import (
    check_output_path,
    place,
    temp_beside,
    write_atomically,
)
from zeroclaw_obs.errors import BadInputError


def read_fifo(path: Path, into: list[bytes]) -> threading.Thread:
    """A reader thread that collects everything written to the FIFO until its writer closes."""

    def read() -> None:
        with path.open("rb") as fifo:
            into.append(fifo.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


class TestCheckOutputPath:
    @pytest.mark.parametrize(
        ("setup", "problem"),
        [
            (lambda d: d / "missing" / "out.jsonl", "parent directory does not exist"),
            (lambda d: d, "is a directory"),
            (
                lambda d: (d / "file").touch() or d / "file" / "out.jsonl",
                "parent is not a directory",
            ),
        ],
    )
    def test_an_unwritable_path_names_the_flag_and_the_problem(self, tmp_path, setup, problem):
        """The message is `--flag: problem`: the flag, never the value."""
        with pytest.raises(BadInputError) as info:
            check_output_path("--events-out", setup(tmp_path))
        assert f"--events-out: {problem}" == str(info.value)

    def test_a_read_only_directory_is_rejected(self, tmp_path):
        """A parent directory the user may not write is rejected (skipped as root, who may)."""
        if os.geteuid() == 0:
            pytest.skip("root may write anywhere; the check uses os.access")
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(BadInputError, match="--audit-out: parent directory is not writable"):
            check_output_path("--audit-out", locked / "audit.jsonl")

    @pytest.mark.parametrize("device", ["/dev/null", "/dev/stdout"])
    def test_devices_are_accepted(self, device):
        """A character device is a valid output: it is written in place."""
        check_output_path("--metrics-out", Path(device))

    def test_new_and_existing_files_are_accepted(self, tmp_path):
        """A new file in an existing directory, and an existing regular file, are fine."""
        (tmp_path / "old.jsonl").write_text("x")
        check_output_path("--events-out", tmp_path / "new.jsonl")
        check_output_path("--events-out", tmp_path / "old.jsonl")


class TestWriteAtomically:
    def test_a_lone_surrogate_is_written_as_an_escape(self, tmp_path):
        """Any string is written: a lone surrogate becomes `\\ud800`, the file stays UTF-8."""
        target = tmp_path / "out.txt"
        write_atomically(target, "a\ud800b")
        assert "a\\ud800b" == target.read_bytes().decode("utf-8")
        assert ["out.txt"] == os.listdir(tmp_path)

    def test_dev_null_stays_a_character_device(self):
        """Run as root, writing `/dev/null` must not replace it with a regular file."""
        before = os.stat("/dev/null")
        write_atomically(Path("/dev/null"), "zeroclaw_turns_total 1\n")
        after = os.stat("/dev/null")
        assert stat.S_ISCHR(after.st_mode)
        assert (before.st_mode, before.st_rdev, before.st_ino) == (
            after.st_mode,
            after.st_rdev,
            after.st_ino,
        )

    def test_a_fifo_is_written_in_place(self, tmp_path):
        """A FIFO stays a FIFO and its reader gets the whole text."""
        fifo = tmp_path / "out.fifo"
        os.mkfifo(fifo)
        received: list[bytes] = []
        reader = read_fifo(fifo, received)
        write_atomically(fifo, "line 1\nline 2\n")
        reader.join(10)
        assert [b"line 1\nline 2\n"] == received
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        assert ["out.fifo"] == os.listdir(tmp_path)


class TestStagedFiles:
    def test_a_device_target_is_staged_elsewhere_and_copied_in(self, tmp_path):
        """The staged copy of a FIFO target is not made beside it, and `place` copies it in."""
        fifo = tmp_path / "spans.fifo"
        os.mkfifo(fifo)
        temp = temp_beside(fifo)
        assert tmp_path != temp.parent
        temp.write_text("spans\n")
        received: list[bytes] = []
        reader = read_fifo(fifo, received)
        place(temp, fifo)
        reader.join(10)
        assert ([b"spans\n"], False) == (received, temp.exists())
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)

    def test_a_regular_target_is_renamed_into_place(self, tmp_path):
        """A staged file beside a regular target replaces it by a rename."""
        target = tmp_path / "spans.jsonl"
        temp = temp_beside(target)
        assert tmp_path == temp.parent
        temp.write_text("spans\n")
        place(temp, target)
        assert ["spans.jsonl"] == os.listdir(tmp_path)
        assert "spans\n" == target.read_text()
