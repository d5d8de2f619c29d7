"""Tests for `zeroclaw_obs.approval.audit`: the `--audit-out` entry format and its writer."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from zeroclaw_obs.approval.audit import AuditEntry, AuditLog, rfc3339_utc
from zeroclaw_obs.approval.surfaces import Decision


def make_entry(**overrides: str) -> AuditEntry:
    fields = {
        "timestamp": "2026-12-03T01:02:03.123456Z",
        "turn_id": "turn-1",
        "tool_call_id": "call_1",
        "tool": "shell",
        "arguments_summary": '{"command": "ls"}',
        "decision": "yes",
        "surface": "cli",
        "decided_by": "terminal:alice",
    }
    fields.update(overrides)
    return AuditEntry(**fields)


class TestRfc3339Utc:
    def test_formats_utc_with_microseconds_and_z(self) -> None:
        """A UTC instant formats as `YYYY-MM-DDTHH:MM:SS.ffffffZ`."""
        moment = datetime(2026, 12, 3, 1, 2, 3, 123456, tzinfo=UTC)

        assert "2026-12-03T01:02:03.123456Z" == rfc3339_utc(moment)

    def test_converts_other_offsets_to_utc(self) -> None:
        """An instant in another zone is converted to UTC before formatting."""
        moment = datetime(2026, 12, 3, 3, 2, 3, 0, tzinfo=timezone(timedelta(hours=2)))

        assert "2026-12-03T01:02:03.000000Z" == rfc3339_utc(moment)

    def test_rejects_naive_datetimes(self) -> None:
        """A naive datetime has no known instant, so it is refused."""
        with pytest.raises(ValueError, match="timezone-aware"):
            rfc3339_utc(datetime(2026, 12, 3, 1, 2, 3))

    def test_output_parses_back_as_the_same_utc_instant(self) -> None:
        """The text parses as RFC 3339 with a zero UTC offset and round-trips exactly."""
        moment = datetime.now(UTC)

        parsed = datetime.fromisoformat(rfc3339_utc(moment))

        assert timedelta(0) == parsed.utcoffset()
        assert moment == parsed


class TestAuditEntry:
    def test_to_json_dict_has_the_documented_keys_in_order(self) -> None:
        """`to_json_dict` gives exactly DESIGN §4's eight keys, in order."""
        expected = [
            "timestamp",
            "turn_id",
            "tool_call_id",
            "tool",
            "arguments_summary",
            "decision",
            "surface",
            "decided_by",
        ]

        assert expected == list(make_entry().to_json_dict())

    def test_to_json_dict_carries_the_values(self) -> None:
        """Every field appears unchanged under its own key."""
        entry = make_entry(decision="replace", surface="scenario", decided_by="scenario")

        assert {
            "timestamp": "2026-12-03T01:02:03.123456Z",
            "turn_id": "turn-1",
            "tool_call_id": "call_1",
            "tool": "shell",
            "arguments_summary": '{"command": "ls"}',
            "decision": "replace",
            "surface": "scenario",
            "decided_by": "scenario",
        } == entry.to_json_dict()

    def test_enum_decisions_become_plain_strings(self) -> None:
        """A `Decision` member is written as its plain string value."""
        value = make_entry(decision=Decision.ALWAYS).to_json_dict()["decision"]

        assert "always" == value
        assert str is type(value)

    @pytest.mark.parametrize("decision", ["yes", "no", "always", "replace"])
    def test_accepts_every_documented_decision(self, decision: str) -> None:
        """Each of `yes|no|always|replace` is a valid decision."""
        assert decision == make_entry(decision=decision).decision

    @pytest.mark.parametrize("surface", ["cli", "scenario", "backchannel", "runtime"])
    def test_accepts_every_documented_surface(self, surface: str) -> None:
        """Each of `cli|scenario|backchannel|runtime` is a valid surface."""
        assert surface == make_entry(surface=surface).surface

    def test_rejects_an_unknown_decision(self) -> None:
        """A decision outside `yes|no|always|replace` is refused."""
        with pytest.raises(ValueError, match="decision"):
            make_entry(decision="maybe")

    def test_rejects_an_unknown_surface(self) -> None:
        """A surface outside `cli|scenario|backchannel|runtime` is refused."""
        with pytest.raises(ValueError, match="surface"):
            make_entry(surface="email")


class TestMcpAuditEntry:
    def test_mcp_keys_are_appended_after_the_documented_ones(self) -> None:
        """An MCP tool's entry keeps the eight keys in order, then `server`, `annotations`."""
        entry = make_entry(tool="git__git_commit")
        mcp = AuditEntry(
            **{**entry.to_json_dict(), "server": "git", "annotations": {"destructiveHint": True}}
        )

        assert [*make_entry().to_json_dict(), "server", "annotations"] == list(mcp.to_json_dict())

    def test_annotations_stay_a_json_object(self) -> None:
        """`annotations` is written as an object with its boolean values, not as text."""
        entry = AuditEntry(
            **make_entry().to_json_dict(), server="kb", annotations={"readOnlyHint": True}
        )

        line = json.loads(json.dumps(entry.to_json_dict()))
        assert ("kb", {"readOnlyHint": True}) == (line["server"], line["annotations"])

    def test_no_annotations_is_an_empty_object(self) -> None:
        """A server that sent no annotations is recorded as `{}`."""
        entry = AuditEntry(**make_entry().to_json_dict(), server="kb")

        assert {} == entry.to_json_dict()["annotations"]

    def test_other_tools_carry_no_mcp_keys(self) -> None:
        """An entry without a server has no `server` or `annotations` key."""
        assert {"server", "annotations"}.isdisjoint(make_entry().to_json_dict())


class TestAuditLog:
    def test_entries_keep_append_order(self) -> None:
        """Entries come back in the order they were appended."""
        log = AuditLog()
        first, second = make_entry(tool_call_id="a"), make_entry(tool_call_id="b")

        log.append(first)
        log.append(second)

        assert [first, second] == log.entries

    def test_entries_is_a_copy(self) -> None:
        """Changing the returned list does not change the log."""
        log = AuditLog()
        log.append(make_entry())

        log.entries.clear()

        assert 1 == len(log.entries)

    def test_write_jsonl_writes_one_object_per_line(self, tmp_path: Path) -> None:
        """Each entry becomes one JSON object on its own line, in order."""
        log = AuditLog()
        log.append(make_entry(tool_call_id="a"))
        log.append(make_entry(tool_call_id="b", decision="no", surface="runtime"))
        target = tmp_path / "audit.jsonl"

        log.write_jsonl(target)

        lines = target.read_text(encoding="utf-8").splitlines()
        assert [entry.to_json_dict() for entry in log.entries] == [json.loads(x) for x in lines]

    def test_write_jsonl_keeps_non_ascii_readable(self, tmp_path: Path) -> None:
        """Non-ASCII text is written as UTF-8, not as `\\u` escapes."""
        log = AuditLog()
        log.append(make_entry(arguments_summary='{"city": "Zürich"}'))
        target = tmp_path / "audit.jsonl"

        log.write_jsonl(target)

        assert "Zürich" in target.read_text(encoding="utf-8")

    def test_write_jsonl_of_an_empty_log_writes_an_empty_file(self, tmp_path: Path) -> None:
        """An empty log still creates the file, with no lines."""
        target = tmp_path / "audit.jsonl"

        AuditLog().write_jsonl(target)

        assert "" == target.read_text(encoding="utf-8")

    def test_write_jsonl_replaces_an_existing_file_and_leaves_no_temp(self, tmp_path: Path) -> None:
        """The target is replaced whole and no temporary file stays behind."""
        target = tmp_path / "audit.jsonl"
        target.write_text("old\nold\nold\n", encoding="utf-8")
        log = AuditLog()
        log.append(make_entry())

        log.write_jsonl(str(target))

        assert 1 == len(target.read_text(encoding="utf-8").splitlines())
        assert ["audit.jsonl"] == os.listdir(tmp_path)

    def test_failed_replace_keeps_the_old_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """If the final move fails the old file is intact and the temporary file is removed."""
        target = tmp_path / "audit.jsonl"
        target.write_text("old\n", encoding="utf-8")
        log = AuditLog()
        log.append(make_entry())

        def fail_replace(src: str, dst: object) -> None:
            raise OSError("disk full")

        monkeypatch.setattr(os, "replace", fail_replace)
        with pytest.raises(OSError, match="disk full"):
            log.write_jsonl(target)

        assert "old\n" == target.read_text(encoding="utf-8")
        assert ["audit.jsonl"] == os.listdir(tmp_path)

    def test_write_jsonl_into_a_missing_directory_raises(self, tmp_path: Path) -> None:
        """A missing directory is an `OSError` and creates nothing."""
        with pytest.raises(OSError):
            AuditLog().write_jsonl(tmp_path / "missing" / "audit.jsonl")

        assert [] == os.listdir(tmp_path)


class TestStreamingAuditLog:
    def test_each_entry_is_in_the_file_when_append_returns(self, tmp_path: Path) -> None:
        """Each decision is a whole line in the file as soon as it is appended, before close:
        a process killed after a call ran still has that call's entry."""
        target = tmp_path / "audit.jsonl"
        log = AuditLog.streaming_to(target)
        try:
            assert "" == target.read_text(encoding="utf-8")
            log.append(make_entry(tool_call_id="a"))
            first = target.read_text(encoding="utf-8")
            log.append(make_entry(tool_call_id="b"))
            second = target.read_text(encoding="utf-8")
        finally:
            log.close()
        assert ["a"] == [json.loads(x)["tool_call_id"] for x in first.splitlines()]
        assert ["a", "b"] == [json.loads(x)["tool_call_id"] for x in second.splitlines()]
        assert second == target.read_text(encoding="utf-8")

    def test_the_file_is_private_and_replaces_an_old_one(self, tmp_path: Path) -> None:
        """The file has mode 0600 (an existing file's mode too) and holds this run only."""
        target = tmp_path / "audit.jsonl"
        target.write_text("old\n", encoding="utf-8")
        target.chmod(0o644)
        log = AuditLog.streaming_to(target)
        log.append(make_entry())
        log.close()
        assert 0o600 == target.stat().st_mode & 0o777
        assert 1 == len(target.read_text(encoding="utf-8").splitlines())

    def test_a_lone_surrogate_is_written_and_read_back(self, tmp_path: Path) -> None:
        """A lone surrogate in an entry is written as JSON's `\\ud800` escape: valid UTF-8
        that reads back as the same string."""
        target = tmp_path / "audit.jsonl"
        log = AuditLog.streaming_to(target)
        log.append(make_entry(arguments_summary='{"command": "ls \ud800"}'))
        log.close()
        (line,) = target.read_bytes().decode("utf-8").splitlines()
        assert '{"command": "ls \ud800"}' == json.loads(line)["arguments_summary"]

    def test_a_character_device_is_written_in_place(self) -> None:
        """`/dev/null` is written in place: still a character device, its mode unchanged."""
        before = os.stat("/dev/null")
        log = AuditLog.streaming_to("/dev/null")
        log.append(make_entry())
        log.close()
        after = os.stat("/dev/null")
        assert (before.st_mode, before.st_rdev) == (after.st_mode, after.st_rdev)

    def test_a_write_error_is_kept_not_raised(self) -> None:
        """A full disk (`/dev/full`) never breaks the turn: the error is kept for the caller
        and the entries stay in memory."""
        log = AuditLog.streaming_to("/dev/full")
        log.append(make_entry())
        log.close()
        assert isinstance(log.write_error, OSError)
        assert 1 == len(log.entries)
