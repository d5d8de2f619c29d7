"""Tests for `zeroclaw_obs.approval.manager`: requirement rules, surface order, audit."""

from __future__ import annotations

import asyncio
import io
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

import zeroclaw_obs.approval as approval_package
from zeroclaw_obs.approval import (
    DENIED_BY_USER,
    ApprovalManager,
    ApprovalOutcome,
    ApprovalRequest,
    AuditEntry,
    AuditLog,
    Backchannel,
    Decision,
    Requirement,
    SurfaceAnswer,
    TerminalPrompter,
    read_only_denial_text,
    runtime_denial_text,
)
from zeroclaw_obs.approval import audit as audit_module
from zeroclaw_obs.approval import manager as manager_module
from zeroclaw_obs.approval import surfaces as surfaces_module
from zeroclaw_obs.config import ApprovalConfig

RUNTIME_DENIAL_SHELL = (
    "Tool call not executed: 'shell' requires approval and no operator decision was available, "
    "so the runtime denied it by policy. This was not a user's decision."
)


class FakeTty(io.StringIO):
    """A terminal stand-in: reads scripted lines and claims to be a TTY."""

    def isatty(self) -> bool:
        return True


def config(**fields: Any) -> ApprovalConfig:
    return ApprovalConfig.model_validate(fields)


def request(tool: str = "shell", call_id: str = "call_1") -> ApprovalRequest:
    return ApprovalRequest(
        tool=tool, arguments_summary='{"command": "ls"}', turn_id="turn-1", tool_call_id=call_id
    )


def terminal(lines: str) -> TerminalPrompter:
    return TerminalPrompter(FakeTty(lines), io.StringIO())


def backchannel(answer: SurfaceAnswer | None) -> Backchannel:
    async def operator(request: ApprovalRequest) -> SurfaceAnswer | None:
        return answer

    return Backchannel(operator, timeout_s=1)


READ_ONLY_DENIAL_SHELL = (
    "Tool call not executed: 'shell' is not read-only and autonomy is read_only."
)

RUNTIME_DENIAL = ApprovalOutcome(
    approved=False,
    decision=Decision.NO,
    surface="runtime",
    decided_by="runtime-policy",
    slot_text=RUNTIME_DENIAL_SHELL,
    runtime_denied=True,
)


class TestRuntimeDenialText:
    def test_exact_text(self) -> None:
        """The runtime denial is LIFECYCLE's exact `Tool call not executed: '{tool}' …` text."""
        assert RUNTIME_DENIAL_SHELL == runtime_denial_text("shell")

    def test_read_only_denial_text(self) -> None:
        """A call denied under autonomy `read_only` reads `Tool call not executed: '{tool}' is
        not read-only and autonomy is read_only.`."""
        assert READ_ONLY_DENIAL_SHELL == read_only_denial_text("shell")

    def test_user_denial_text(self) -> None:
        """An operator's No reads exactly `Denied by user.`."""
        assert "Denied by user." == DENIED_BY_USER


class TestApprovalManagerRequirement:
    def test_full_autonomy_approves(self) -> None:
        """Autonomy `full` approves, even a tool in `always_ask`."""
        manager = ApprovalManager(config(autonomy="full", always_ask=["*"]))

        assert Requirement.APPROVED == manager.requirement("shell")

    def test_read_only_tool_requires_nothing_under_read_only(self) -> None:
        """Under autonomy `read_only` a read-only tool needs no approval, even in `always_ask`."""
        manager = ApprovalManager(config(autonomy="read_only", always_ask=["lookup"]))

        assert Requirement.NOT_REQUIRED == manager.requirement("lookup", read_only=True)

    @pytest.mark.parametrize("tool", ["shell", "write_file", "tool_search"])
    def test_other_tools_go_to_decide_under_read_only(self, tool: str) -> None:
        """Under autonomy `read_only` a tool not declared read-only is never approved by a
        rule, `auto_approve: ["*"]` included: `decide` denies it."""
        manager = ApprovalManager(config(autonomy="read_only", auto_approve=["*"]))

        assert Requirement.PROMPT == manager.requirement(tool)

    def test_read_only_declaration_changes_nothing_elsewhere(self) -> None:
        """Outside autonomy `read_only`, a read-only tool follows the usual rules."""
        manager = ApprovalManager(config())

        assert Requirement.PROMPT == manager.requirement("lookup", read_only=True)

    @pytest.mark.parametrize("always_ask", [["shell"], ["*"]])
    def test_always_ask_prompts_before_auto_approve(self, always_ask: list[str]) -> None:
        """A tool in `always_ask` (by name or `*`) prompts even when auto-approved."""
        manager = ApprovalManager(config(always_ask=always_ask, auto_approve=["*"]))

        assert Requirement.PROMPT == manager.requirement("shell")

    def test_always_ask_beats_the_non_interactive_shell_exemption(self) -> None:
        """`always_ask` prompts for `shell` even where the shell exemption would apply."""
        manager = ApprovalManager(
            config(
                mode="non_interactive",
                always_ask=["shell"],
                non_interactive_shell_requires_approval=False,
            )
        )

        assert Requirement.PROMPT == manager.requirement("shell")

    def test_non_interactive_shell_exemption(self) -> None:
        """Non-interactive `shell` needs no approval when shell approval is switched off."""
        manager = ApprovalManager(
            config(
                mode="non_interactive",
                auto_approve=["shell"],
                non_interactive_shell_requires_approval=False,
            )
        )

        assert Requirement.NOT_REQUIRED == manager.requirement("shell")

    def test_non_interactive_shell_prompts_by_default(self) -> None:
        """By default non-interactive `shell` still needs a prompt."""
        manager = ApprovalManager(config(mode="non_interactive"))

        assert Requirement.PROMPT == manager.requirement("shell")

    @pytest.mark.parametrize("mode", ["interactive", "backchannel"])
    def test_shell_exemption_is_only_for_non_interactive(self, mode: str) -> None:
        """The shell exemption does not apply in interactive or back-channel mode."""
        manager = ApprovalManager(config(mode=mode, non_interactive_shell_requires_approval=False))

        assert Requirement.PROMPT == manager.requirement("shell")

    def test_shell_exemption_is_only_for_shell(self) -> None:
        """Other tools still prompt in non-interactive mode with the exemption on."""
        manager = ApprovalManager(
            config(mode="non_interactive", non_interactive_shell_requires_approval=False)
        )

        assert Requirement.PROMPT == manager.requirement("write_file")

    @pytest.mark.parametrize("auto_approve", [["write_file"], ["*"]])
    def test_auto_approve_approves(self, auto_approve: list[str]) -> None:
        """A tool in `auto_approve` (by name or `*`) is approved."""
        manager = ApprovalManager(config(auto_approve=auto_approve))

        assert Requirement.APPROVED == manager.requirement("write_file")

    def test_tool_search_is_auto_approved_by_default(self) -> None:
        """The default `auto_approve` approves `tool_search`."""
        assert Requirement.APPROVED == ApprovalManager(config()).requirement("tool_search")

    def test_names_match_exactly(self) -> None:
        """Tool names are matched exactly, not by case or prefix."""
        manager = ApprovalManager(config(auto_approve=["shell"]))

        assert Requirement.PROMPT == manager.requirement("Shell")

    def test_otherwise_prompts(self) -> None:
        """A tool no rule covers needs a prompt."""
        assert Requirement.PROMPT == ApprovalManager(config()).requirement("shell")


class TestApprovalManager:
    async def test_scripted_answers_replay_in_order(self) -> None:
        """Scripted answers are used in order, including `replace_with`, then the runtime denies."""
        manager = ApprovalManager(
            config(mode="non_interactive", answers=["yes", "no", {"replace_with": "42"}])
        )

        outcomes = [await manager.decide(request(call_id=f"c{i}")) for i in range(4)]

        assert [
            ApprovalOutcome(True, Decision.YES, "scenario", "scenario"),
            ApprovalOutcome(False, Decision.NO, "scenario", "scenario", slot_text=DENIED_BY_USER),
            ApprovalOutcome(False, Decision.REPLACE, "scenario", "scenario", replacement="42"),
            RUNTIME_DENIAL,
        ] == outcomes

    async def test_read_only_denies_by_policy_without_asking(self) -> None:
        """Under autonomy `read_only`, `decide` denies with the read-only text, audited as a
        runtime denial, and asks no surface: the scripted answer and the terminal stay unused."""
        manager = ApprovalManager(
            config(autonomy="read_only", answers=["yes"]), terminal=terminal("y\n")
        )

        outcome = await manager.decide(request())

        assert replace(RUNTIME_DENIAL, slot_text=READ_ONLY_DENIAL_SHELL) == outcome
        [entry] = manager.audit.entries
        assert ("shell", "no", "runtime", "runtime-policy") == (
            entry.tool,
            entry.decision,
            entry.surface,
            entry.decided_by,
        )
        assert 1 == manager._scripted.remaining

    async def test_replacement_is_sanitised(self) -> None:
        """A replacement loses its control characters but keeps `\\n \\r \\t`."""
        manager = ApprovalManager(config(answers=[{"replace_with": "a\x00b\x7f\x85\n\tc\r"}]))

        outcome = await manager.decide(request())

        assert "ab\n\tc\r" == outcome.replacement
        assert not outcome.approved
        assert None is outcome.slot_text

    async def test_always_adds_to_the_session_allowlist(self) -> None:
        """`always` approves the call and the next `requirement()` for the tool is approved."""
        manager = ApprovalManager(config(answers=["always"]))

        outcome = await manager.decide(request())

        assert ApprovalOutcome(True, Decision.ALWAYS, "scenario", "scenario") == outcome
        assert frozenset({"shell"}) == manager.session_allowlist
        assert Requirement.APPROVED == manager.requirement("shell")

    async def test_session_allowlist_is_per_manager(self) -> None:
        """The allowlist is in memory on one manager: a new manager starts empty."""
        settings = config(answers=["always"])
        await ApprovalManager(settings).decide(request())

        assert Requirement.PROMPT == ApprovalManager(config()).requirement("shell")

    async def test_always_does_not_override_always_ask(self) -> None:
        """A tool in `always_ask` still prompts after `always`."""
        manager = ApprovalManager(config(always_ask=["shell"], answers=["always"]))

        await manager.decide(request())

        assert Requirement.PROMPT == manager.requirement("shell")

    async def test_non_interactive_denies_by_policy(self) -> None:
        """Non-interactive with no answers is a runtime denial with the exact text."""
        manager = ApprovalManager(
            config(mode="non_interactive"),
            terminal=terminal("y\n"),
            backchannel=backchannel(SurfaceAnswer(Decision.YES, "backchannel", "op")),
        )

        assert RUNTIME_DENIAL == await manager.decide(request())

    async def test_interactive_asks_the_terminal_after_the_script(self) -> None:
        """Interactive mode uses scripted answers first, then the terminal."""
        prompter = terminal("y\n")
        manager = ApprovalManager(config(answers=["no"]), terminal=prompter)

        first = await manager.decide(request(call_id="c1"))
        second = await manager.decide(request(call_id="c2"))

        assert ("scenario", Decision.NO) == (first.surface, first.decision)
        assert ApprovalOutcome(True, Decision.YES, "cli", prompter.decided_by) == second

    async def test_terminal_no_is_denied_by_user(self) -> None:
        """An operator's No at the terminal reads `Denied by user.`."""
        prompter = terminal("n\n")
        manager = ApprovalManager(config(), terminal=prompter)

        outcome = await manager.decide(request())

        assert (
            ApprovalOutcome(False, Decision.NO, "cli", prompter.decided_by, None, DENIED_BY_USER)
            == outcome
        )

    async def test_terminal_eof_is_no(self) -> None:
        """End of input at the terminal is No (`Denied by user.`), not a runtime denial."""
        manager = ApprovalManager(config(), terminal=terminal(""))

        outcome = await manager.decide(request())

        assert (Decision.NO, DENIED_BY_USER, False) == (
            outcome.decision,
            outcome.slot_text,
            outcome.runtime_denied,
        )

    async def test_interactive_without_a_tty_denies_by_policy(self) -> None:
        """Interactive mode with no TTY is a runtime denial, because nobody was asked."""
        manager = ApprovalManager(
            config(), terminal=TerminalPrompter(io.StringIO("y\n"), io.StringIO())
        )

        assert RUNTIME_DENIAL == await manager.decide(request())

    async def test_interactive_without_a_terminal_denies_by_policy(self) -> None:
        """Interactive mode with no terminal configured is a runtime denial."""
        assert RUNTIME_DENIAL == await ApprovalManager(config()).decide(request())

    async def test_backchannel_answer(self) -> None:
        """In back-channel mode the operator's answer decides, attributed to `backchannel`."""
        manager = ApprovalManager(
            config(mode="backchannel"),
            backchannel=backchannel(SurfaceAnswer(Decision.YES, "web", "web:bob")),
        )

        assert ApprovalOutcome(True, Decision.YES, "backchannel", "web:bob") == (
            await manager.decide(request())
        )

    async def test_backchannel_replacement_is_sanitised(self) -> None:
        """A back-channel deny-with-edit becomes a sanitised replacement."""
        answer = SurfaceAnswer(Decision.REPLACE, "backchannel", "web:bob", "done\x1b[0m")
        manager = ApprovalManager(config(mode="backchannel"), backchannel=backchannel(answer))

        outcome = await manager.decide(request())

        assert "done[0m" == outcome.replacement

    async def test_backchannel_timeout_denies_by_policy(self) -> None:
        """A back-channel operator who does not answer in time is a runtime denial."""

        async def slow(request: ApprovalRequest) -> SurfaceAnswer:
            await asyncio.sleep(10)
            return SurfaceAnswer(Decision.YES, "backchannel", "late")

        manager = ApprovalManager(
            config(mode="backchannel"), backchannel=Backchannel(slow, timeout_s=0.01)
        )

        assert RUNTIME_DENIAL == await manager.decide(request())

    async def test_backchannel_exception_denies_by_policy(self) -> None:
        """An unreachable back-channel operator (the callback raises) is a runtime denial."""

        async def broken(request: ApprovalRequest) -> SurfaceAnswer:
            raise ConnectionError("gone")

        manager = ApprovalManager(
            config(mode="backchannel"), backchannel=Backchannel(broken, timeout_s=1)
        )

        assert RUNTIME_DENIAL == await manager.decide(request())

    async def test_backchannel_mode_without_a_backchannel_denies_by_policy(self) -> None:
        """Back-channel mode with no back-channel configured is a runtime denial."""
        manager = ApprovalManager(config(mode="backchannel"), terminal=terminal("y\n"))

        assert RUNTIME_DENIAL == await manager.decide(request())

    async def test_scripted_answers_come_before_the_backchannel(self) -> None:
        """Scripted answers are used before the back-channel is asked."""
        manager = ApprovalManager(
            config(mode="backchannel", answers=["no"]),
            backchannel=backchannel(SurfaceAnswer(Decision.YES, "backchannel", "op")),
        )

        assert "scenario" == (await manager.decide(request())).surface

    async def test_every_decision_is_audited(self) -> None:
        """Each decision, runtime denials included, appends one entry with its facts."""
        log = AuditLog()
        manager = ApprovalManager(
            config(mode="non_interactive", answers=["yes", {"replace_with": "x"}]), audit=log
        )
        before = datetime.now(UTC)

        for call_id in ("c1", "c2", "c3"):
            await manager.decide(request(call_id=call_id))

        after = datetime.now(UTC)
        rows = [(e.tool_call_id, e.decision, e.surface, e.decided_by) for e in log.entries]
        assert [
            ("c1", "yes", "scenario", "scenario"),
            ("c2", "replace", "scenario", "scenario"),
            ("c3", "no", "runtime", "runtime-policy"),
        ] == rows
        for entry in log.entries:
            assert ("turn-1", "shell", '{"command": "ls"}') == (
                entry.turn_id,
                entry.tool,
                entry.arguments_summary,
            )
            assert entry.timestamp.endswith("Z")
            assert before <= datetime.fromisoformat(entry.timestamp) <= after

    async def test_the_audit_records_the_shown_tool_name(self) -> None:
        """The audit entry records the redacted name a request carries; the session
        allowlist keeps the real name, so the next call to the tool is approved."""
        manager = ApprovalManager(config(answers=["always"]))
        shown = ApprovalRequest(
            tool="get_ghp_x", arguments_summary="{}", turn_id="t", tool_call_id="c",
            shown_tool="get_[REDACTED:github_token]",
        )  # fmt: skip

        await manager.decide(shown)

        assert ["get_[REDACTED:github_token]"] == [e.tool for e in manager.audit.entries]
        assert Requirement.APPROVED == manager.requirement("get_ghp_x")

    async def test_terminal_decisions_are_audited_as_cli(self) -> None:
        """A terminal answer is audited with surface `cli` and the terminal's operator."""
        prompter = terminal("a\n")
        manager = ApprovalManager(config(), terminal=prompter)

        await manager.decide(request())

        [entry] = manager.audit.entries
        assert ("always", "cli", prompter.decided_by) == (
            entry.decision,
            entry.surface,
            entry.decided_by,
        )

    def test_requirement_is_not_audited(self) -> None:
        """Asking for the requirement (auto-approval included) writes no audit entry."""
        manager = ApprovalManager(config(auto_approve=["shell"]))

        manager.requirement("shell")

        assert [] == manager.audit.entries

    def test_audit_log_is_created_when_not_given(self) -> None:
        """Without an audit log the manager keeps its own."""
        assert isinstance(ApprovalManager(config()).audit, AuditLog)


class TestUnder:
    """`ApprovalManager.under`: the same session under a sub-agent's stricter policy."""

    async def test_it_shares_answers_audit_and_allowlist(self) -> None:
        """The scripted answers go on where the session left them, an `always` in either
        holds for both, and both write one audit log."""
        manager = ApprovalManager(config(mode="non_interactive", answers=["yes", "always"]))
        stricter = manager.under(config(mode="non_interactive", always_ask=["deploy"]))

        first = await manager.decide(request("shell", "c1"))
        second = await stricter.decide(request("deploy", "c2"))

        assert (Decision.YES, Decision.ALWAYS) == (first.decision, second.decision)
        assert {"deploy"} == manager.session_allowlist == stricter.session_allowlist
        assert ["c1", "c2"] == [e.tool_call_id for e in manager.audit.entries]
        assert Requirement.APPROVED is manager.requirement("deploy")
        assert Requirement.PROMPT is stricter.requirement("deploy")

    async def test_its_policy_is_its_own(self) -> None:
        manager = ApprovalManager(config(answers=["yes"]))
        read_only = manager.under(config(autonomy="read_only"))

        outcome = await read_only.decide(request())

        assert READ_ONLY_DENIAL_SHELL == outcome.slot_text
        assert "supervised" == manager.config.autonomy.value
        assert 1 == manager._scripted.remaining


class TestPackageExports:
    @pytest.mark.parametrize("module", [audit_module, manager_module, surfaces_module])
    def test_module_all_names_exist(self, module: Any) -> None:
        """Every name in a module's `__all__` is defined there."""
        assert [] == [name for name in module.__all__ if not hasattr(module, name)]

    def test_package_re_exports_every_module_name(self) -> None:
        """The package's `__all__` is exactly the union of its modules' `__all__`."""
        expected = sorted(
            {*audit_module.__all__, *manager_module.__all__, *surfaces_module.__all__}
        )

        assert expected == sorted(approval_package.__all__)
        assert AuditEntry is approval_package.AuditEntry


DESTRUCTIVE = {"destructiveHint": True, "idempotentHint": False}
READ_ONLY = {"readOnlyHint": True}
CONTRADICTION = {"readOnlyHint": True, "destructiveHint": True}
NOT_DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": False}


class TestMcpAnnotationRequirement:
    @pytest.mark.parametrize(
        "annotations", [DESTRUCTIVE, {}, CONTRADICTION, {"idempotentHint": True}]
    )
    def test_guarded_tools_are_not_covered_by_the_wildcard(
        self, annotations: dict[str, Any]
    ) -> None:
        """Destructive, unannotated, contradictory or merely annotated tools need a by-name
        approval: `auto_approve: ["*"]` and `auto_approve_read_only` do not cover them."""
        manager = ApprovalManager(config(auto_approve=["*"], auto_approve_read_only=True))

        assert Requirement.PROMPT == manager.requirement(
            "git__git_commit", mcp_annotations=annotations
        )

    @pytest.mark.parametrize("annotations", [DESTRUCTIVE, {}])
    def test_auto_approve_by_name_overrides_destructive(self, annotations: dict[str, Any]) -> None:
        """Naming the tool in `auto_approve` approves it, destructive or unannotated."""
        manager = ApprovalManager(config(auto_approve=["git__git_commit"]))

        assert Requirement.APPROVED == manager.requirement(
            "git__git_commit", mcp_annotations=annotations
        )

    def test_wildcard_still_covers_unguarded_mcp_tools(self) -> None:
        """A read-only or explicitly not destructive MCP tool is covered by `*` as before."""
        manager = ApprovalManager(config(auto_approve=["*"]))

        actual = [
            manager.requirement("s__t", mcp_annotations=a) for a in (READ_ONLY, NOT_DESTRUCTIVE)
        ]
        assert [Requirement.APPROVED, Requirement.APPROVED] == actual

    def test_wildcard_still_covers_built_in_tools(self) -> None:
        """A tool that is not an MCP tool keeps the `*` rule."""
        manager = ApprovalManager(config(auto_approve=["*"]))

        assert Requirement.APPROVED == manager.requirement("write_file")

    def test_read_only_hint_is_auto_approved_with_the_flag(self) -> None:
        """`auto_approve_read_only` approves a `readOnlyHint: true` MCP tool."""
        manager = ApprovalManager(config(auto_approve_read_only=True))

        assert Requirement.APPROVED == manager.requirement(
            "time__get_current_time", mcp_annotations=READ_ONLY
        )

    def test_read_only_hint_prompts_without_the_flag(self) -> None:
        """Without the flag a read-only MCP tool still needs a prompt (the default is off)."""
        assert Requirement.PROMPT == ApprovalManager(config()).requirement(
            "time__get_current_time", mcp_annotations=READ_ONLY
        )

    def test_the_flag_does_not_cover_built_in_read_only_tools(self) -> None:
        """The group rule reads MCP annotations only; a built-in `read_only` tool prompts."""
        manager = ApprovalManager(config(auto_approve_read_only=True))

        assert Requirement.PROMPT == manager.requirement("read_config", read_only=True)

    def test_string_hints_declare_nothing(self) -> None:
        """A hint that is not a boolean is not a declaration: the tool stays guarded."""
        manager = ApprovalManager(config(auto_approve=["*"], auto_approve_read_only=True))

        assert Requirement.PROMPT == manager.requirement(
            "s__t", mcp_annotations={"readOnlyHint": "true"}
        )

    def test_always_ask_wins_over_the_flag(self) -> None:
        """`always_ask` is checked before every approval rule."""
        manager = ApprovalManager(config(always_ask=["time__now"], auto_approve_read_only=True))

        assert Requirement.PROMPT == manager.requirement("time__now", mcp_annotations=READ_ONLY)

    def test_full_autonomy_runs_destructive_tools(self) -> None:
        """Autonomy `full` approves everything, as it says."""
        manager = ApprovalManager(config(autonomy="full"))

        assert Requirement.APPROVED == manager.requirement("s__t", mcp_annotations=DESTRUCTIVE)

    def test_contradiction_is_not_read_only_under_read_only_autonomy(self) -> None:
        """`readOnlyHint` with `destructiveHint: true` is destructive: denied under read_only."""
        manager = ApprovalManager(config(autonomy="read_only"))

        actual = [
            manager.requirement("s__t", read_only=True, mcp_annotations=a)
            for a in (READ_ONLY, CONTRADICTION)
        ]
        assert [Requirement.NOT_REQUIRED, Requirement.PROMPT] == actual

    async def test_always_answer_approves_a_destructive_tool_by_name(self) -> None:
        """An operator's `always` is a by-name decision: the next call runs unasked."""
        manager = ApprovalManager(config(answers=["always"]))

        await manager.decide(request("git__git_commit"))

        assert Requirement.APPROVED == manager.requirement(
            "git__git_commit", mcp_annotations=DESTRUCTIVE
        )


class TestMcpRequestVerdict:
    @pytest.mark.parametrize(
        ("annotations", "verdict"),
        [
            (DESTRUCTIVE, "destructive"),
            (CONTRADICTION, "destructive"),
            (READ_ONLY, "read-only"),
            (NOT_DESTRUCTIVE, "not destructive"),
            ({}, "no annotations"),
            ({"idempotentHint": True}, "may be destructive"),
        ],
    )
    def test_verdict(self, annotations: dict[str, Any], verdict: str) -> None:
        """The verdict an operator reads follows the same rules as the requirement."""
        mcp = ApprovalRequest(
            tool="s__t", arguments_summary="{}", turn_id="t", tool_call_id="c",
            server="s", annotations=annotations,
        )  # fmt: skip

        assert verdict == mcp.mcp_verdict

    def test_no_verdict_for_other_tools(self) -> None:
        """A request without a server is not an MCP tool."""
        assert None is request().mcp_verdict

    async def test_the_audit_entry_carries_server_and_annotations(self) -> None:
        """The entry of an MCP tool records the server and the shown annotations."""
        manager = ApprovalManager(config(mode="non_interactive"))
        mcp = ApprovalRequest(
            tool="git__git_commit", arguments_summary="{}", turn_id="t", tool_call_id="c",
            server="git", annotations=DESTRUCTIVE,
        )  # fmt: skip

        await manager.decide(mcp)

        entry = manager.audit.entries[0]
        assert ("git", DESTRUCTIVE) == (entry.server, entry.annotations)
