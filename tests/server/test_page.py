"""The operator page (`GET /`: `page.html` and `page.js`) in a real Chromium against a real `serve`.

Debian's `chromium` (no Playwright browser download): without it the tests skip, or fail in CI.
Each test starts its own server from a scenario under `scenarios/` whose `shell` call waits for
the operator (`approval.mode: backchannel`), signs in on the page, posts turns with httpx and
follows them on the page with Playwright's auto-waiting `expect`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, Route, expect, sync_playwright

from ..system import system_binary
from .conftest import TOKEN, Served, ServeFactory

SCENARIOS = Path(__file__).parent / "scenarios"
CLEANUP = "find /var/log/app -mtime +7 -delete"
CLEANED = "removed 7 files (220 MB) from /var/log/app"
SCRIPT_XSS = "<script>window.__xss=1</script>"
IMG_XSS = '"><img src=x onerror="window.__xss=2">'
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

expect.set_options(timeout=10_000)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = system_binary("chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context (no storage, no cookies) and one page in it."""
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def serve(serve_process: ServeFactory, scenario: str, *flags: str) -> Served:
    """A server for `scenarios/{scenario}.yaml`; turns still waiting at the end are cancelled
    after 1 s of drain, so a test that leaves an approval pending stops quickly."""
    return serve_process(SCENARIOS / f"{scenario}.yaml", "--drain-timeout-s", "1", *flags)


def sign_in(page: Page, served: Served, token: str | None = None) -> None:
    """Open the page and give it the token, as an operator does."""
    page.goto(served.url + "/")
    page.get_by_label("Bearer token").fill(served.token if token is None else token)
    page.get_by_role("button", name="Connect", exact=True).click()


def post_turn(served: Served, message: str, conversation_id: str | None = None) -> str:
    body = {"message": message}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    with served.client() as client:
        response = client.post("/v1/turns", json=body)
    assert 202 == response.status_code, response.text
    return response.json()["turn_id"]


def turn_status(served: Served, turn_id: str) -> dict:
    with served.client() as client:
        return client.get(f"/v1/turns/{turn_id}").json()


def approval_of(page: Page, turn_id: str) -> Locator:
    return page.locator(f'.approval[data-turn-id="{turn_id}"]')


def card_of(page: Page, turn_id: str, call_id: str) -> Locator:
    return page.locator(f'.card[data-turn-id="{turn_id}"][data-call-id="{call_id}"]')


def turn_of(page: Page, turn_id: str) -> Locator:
    return page.locator(f'.turn[data-turn-id="{turn_id}"]')


class TestApproveFromThePage:
    def test_yes_runs_the_call_and_the_card_shows_its_result(
        self, serve_process: ServeFactory, page: Page, tmp_path: Path
    ) -> None:
        """A pending `shell` approval shows its whole command; Yes runs it; the turn ends final."""
        served = serve(serve_process, "page_shell")
        console_errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and console_errors.append(m.text))
        sign_in(page, served)
        expect(page.locator("#status")).to_have_attribute("data-state", "connected")

        turn_id = post_turn(served, "Clean up the old app logs.")
        approval = approval_of(page, turn_id)
        expect(approval.locator(".tool-name")).to_have_text("shell")
        expect(approval.locator('[data-argument="command"]')).to_have_text(CLEANUP)
        expect(turn_of(page, turn_id).locator(".message")).to_have_text(
            "Clean up the old app logs."
        )
        page.screenshot(path=str(tmp_path / "approval.png"), full_page=True)

        approval.get_by_role("button", name="Yes", exact=True).click()

        expect(approval).to_have_count(0)
        card = card_of(page, turn_id, "call_cleanup")
        expect(card).to_have_class(re.compile(r"\bdone\b.*\bsuccess\b"))
        expect(card.locator(".tool-name")).to_have_text("shell")
        expect(card.locator(".output")).to_have_text(CLEANED)
        turn = turn_of(page, turn_id)
        expect(turn).to_have_attribute("data-outcome", "final")
        expect(turn.locator(".answer")).to_have_text("Old app logs are cleaned up.")
        page.screenshot(path=str(tmp_path / "done.png"), full_page=True)
        status = turn_status(served, turn_id)
        assert ("done", "final") == (status["status"], status["outcome"])
        assert [] == console_errors  # no CSP violation, no script error

    def test_an_mcp_approval_names_its_server_and_always_allows_the_conversation(
        self, serve_process: ServeFactory, page: Page
    ) -> None:
        """An MCP tool's approval names its server, primary arguments first; Always covers the
        conversation's next turn, which runs without asking."""
        served = serve(serve_process, "page_mcp")
        sign_in(page, served)
        first = post_turn(served, "Purge the CDN cache.")
        approval = approval_of(page, first)
        expect(approval.locator(".server")).to_have_text("MCP server cdn")
        expect(approval.locator("dt")).to_have_text(["zone", "paths"])
        expect(approval.locator('[data-argument="paths"]')).to_have_text(
            json.dumps(["/img/*", "/css/*"], indent=2)
        )

        approval.get_by_role("button", name="Always", exact=True).click()

        expect(turn_of(page, first)).to_have_attribute("data-outcome", "final")
        conversation = turn_status(served, first)["conversation_id"]
        second = post_turn(served, "Purge it again.", conversation_id=conversation)
        expect(turn_of(page, second)).to_have_attribute("data-outcome", "final")
        expect(card_of(page, second, "call_purge").locator(".output")).to_have_text(
            "purged 2 paths"
        )

    def test_a_sub_agent_s_approval_waits_under_the_top_level_turn(
        self, serve_process: ServeFactory, page: Page
    ) -> None:
        """A sub-agent's `shell` call shows under the turn the client posted, naming the
        sub-agent; Yes runs it and the `delegate` card gets the sub-agent's answer."""
        served = serve(serve_process, "page_subagent")
        sign_in(page, served)
        turn_id = post_turn(served, "Clean up the old app logs.")
        approval = approval_of(page, turn_id)
        expect(approval.locator(".tool-name")).to_have_text("shell")
        expect(approval.locator(".subagent")).to_have_text("sub-agent ops")
        expect(approval.locator('[data-argument="command"]')).to_have_text(CLEANUP)

        approval.get_by_role("button", name="Yes", exact=True).click()

        expect(approval).to_have_count(0)
        turn = turn_of(page, turn_id)
        expect(turn).to_have_attribute("data-outcome", "final")
        expect(card_of(page, turn_id, "call_delegate").locator(".output")).to_have_text(
            "ops: old logs removed."
        )


class TestOperatorStream:
    def test_the_page_reads_the_stream_again_when_it_ends(
        self, serve_process: ServeFactory, page: Page
    ) -> None:
        """A stream that ends is read again (with the token), and live approvals show after it."""
        served = serve(serve_process, "page_shell")
        authorizations: list[str | None] = []

        def end_the_first_stream(route: Route) -> None:
            authorizations.append(route.request.headers.get("authorization"))
            if len(authorizations) == 1:
                route.fulfill(status=200, content_type="text/event-stream", body=": ping\n\n")
            else:
                route.continue_()

        page.route("**/v1/events", end_the_first_stream)
        sign_in(page, served)
        turn_id = post_turn(served, "Clean up the old app logs.")

        expect(approval_of(page, turn_id).locator(".tool-name")).to_have_text("shell")
        expect(page.locator("#status")).to_have_attribute("data-state", "connected")
        assert [f"Bearer {TOKEN}"] * 2 == authorizations


class TestModelStringsAreText:
    def test_markup_in_tool_names_arguments_and_outputs_renders_literally(
        self, serve_process: ServeFactory, page: Page
    ) -> None:
        """Tool names, arguments, outputs and messages holding markup show as text; none runs."""
        served = serve(serve_process, "page_xss")
        sign_in(page, served)
        expect(page.locator("#status")).to_have_attribute("data-state", "connected")

        turn_id = post_turn(served, f"hello {SCRIPT_XSS}")
        approval = approval_of(page, turn_id)
        expect(approval.locator('[data-argument="command"]')).to_contain_text(IMG_XSS)
        expect(approval.locator('[data-argument="command"]')).to_contain_text(SCRIPT_XSS)
        expect(turn_of(page, turn_id).locator(".message")).to_have_text(f"hello {SCRIPT_XSS}")

        approval.get_by_role("button", name="Yes", exact=True).click()

        unknown = card_of(page, turn_id, "call_name")
        expect(unknown.locator(".tool-name")).to_have_text(SCRIPT_XSS)
        expect(unknown).to_have_class(re.compile(r"\bfailure\b"))
        expect(unknown.locator(".arguments")).to_contain_text(json.dumps(IMG_XSS))
        expect(unknown.locator(".output")).to_contain_text(f"Unknown tool: {SCRIPT_XSS}")
        expect(card_of(page, turn_id, "call_args").locator(".output")).to_have_text(
            '<img src=x onerror="window.__xss=3">'
        )
        turn = turn_of(page, turn_id)
        expect(turn).to_have_attribute("data-outcome", "final")
        expect(turn.locator(".answer")).to_have_text(f"{SCRIPT_XSS} done")
        assert 0 == page.locator("img").count()
        assert 0 == page.locator("#live script").count()
        assert page.evaluate("() => window.__xss") is None


class TestDenyAndEdit:
    def test_no_denies_and_edit_returns_the_replacement_text(
        self, serve_process: ServeFactory, page: Page, tmp_path: Path
    ) -> None:
        """No gives the card `Denied by user.`; Edit gives it the replacement text; both audited."""
        audit = tmp_path / "audit.jsonl"
        served = serve(serve_process, "page_shell", "--audit-out", str(audit))
        sign_in(page, served)
        page.get_by_label("Operator name").fill("alice")
        denied_turn = post_turn(served, "Clean up the old app logs.")
        edited_turn = post_turn(served, "Clean up the old app logs, again.")
        expect(page.locator(".approval")).to_have_count(2)

        approval_of(page, denied_turn).get_by_role("button", name="No", exact=True).click()
        edited = approval_of(page, edited_turn)
        edited.get_by_label("Replacement result").fill("Skipped: logs are kept for the audit.")
        edited.get_by_role("button", name="Edit", exact=True).click()

        denied_card = card_of(page, denied_turn, "call_cleanup")
        expect(denied_card.locator(".output")).to_have_text("Denied by user.")
        expect(denied_card).to_have_attribute("data-outcome", "denied")
        edited_card = card_of(page, edited_turn, "call_cleanup")
        expect(edited_card.locator(".output")).to_have_text("Skipped: logs are kept for the audit.")
        expect(edited_card).to_have_attribute("data-outcome", "replaced")
        expect(page.locator(".approval")).to_have_count(0)
        expect(turn_of(page, denied_turn)).to_have_attribute("data-outcome", "final")
        expect(turn_of(page, edited_turn)).to_have_attribute("data-outcome", "final")
        entries = [json.loads(line) for line in audit.read_text().splitlines()]
        decisions = {entry["turn_id"]: entry for entry in entries}
        assert [("no", "web", "alice"), ("replace", "web", "alice")] == [
            (decisions[turn]["decision"], decisions[turn]["surface"], decisions[turn]["decided_by"])
            for turn in (denied_turn, edited_turn)
        ]

    def test_edit_without_text_sends_nothing(self, serve_process: ServeFactory, page: Page) -> None:
        """Edit with an empty replacement asks for the text and leaves the approval pending."""
        served = serve(serve_process, "page_shell")
        sign_in(page, served)
        turn_id = post_turn(served, "Clean up the old app logs.")
        approval = approval_of(page, turn_id)

        approval.get_by_role("button", name="Edit", exact=True).click()

        expect(approval.get_by_role("alert")).to_have_text("Write the replacement result first.")
        with served.client() as client:
            pending = client.get("/v1/approvals").json()
        assert [turn_id] == [item["turn_id"] for item in pending]


class TestToken:
    def test_the_token_is_kept_in_memory_only(
        self, serve_process: ServeFactory, page: Page
    ) -> None:
        """After sign-in no storage or cookie holds anything, and a reload asks for the token."""
        served = serve(serve_process, "page_shell")
        sign_in(page, served)
        expect(page.locator("#status")).to_have_attribute("data-state", "connected")

        stored = page.evaluate(
            "() => [localStorage.length, sessionStorage.length, document.cookie]"
        )
        assert [0, 0, ""] == stored
        assert 0 == len(page.context.cookies())
        assert TOKEN not in page.content()

        page.reload()

        expect(page.get_by_label("Bearer token")).to_be_visible()
        expect(page.get_by_label("Bearer token")).to_have_value("")
        expect(page.locator("#status")).to_have_attribute("data-state", "signed-out")

    def test_a_wrong_token_shows_an_error_and_no_data(
        self, serve_process: ServeFactory, page: Page
    ) -> None:
        """A refused token shows the error state and none of the pending approvals or turns."""
        served = serve(serve_process, "page_shell")
        turn_id = post_turn(served, "Clean up the old app logs.")
        sign_in(page, served)
        expect(approval_of(page, turn_id).locator(".tool-name")).to_have_text("shell")
        page.reload()

        sign_in(page, served, token="not-the-token-0123456789")

        expect(page.locator("#status")).to_have_attribute("data-state", "unauthorized")
        expect(page.locator("#login-error")).to_have_text("The server refused this token.")
        expect(page.locator("#live")).to_be_hidden()
        assert 0 == page.locator(".approval, .turn, .card").count()

        page.get_by_label("Bearer token").fill(served.token)
        page.get_by_role("button", name="Connect", exact=True).click()

        expect(approval_of(page, turn_id).locator(".tool-name")).to_have_text("shell")
