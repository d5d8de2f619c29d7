"""`zeroclaw-obs serve` over real HTTP: a uvicorn process on a loopback port, driven by httpx."""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from zeroclaw_obs.approval.manager import runtime_denial_text

from .conftest import Served, ServeFactory

SCENARIOS = Path(__file__).parent / "scenarios"
SHELL = SCENARIOS / "api_shell.yaml"
SECRET_KEY = "sk-proj-9fK2mQ7xVb4LpR8sT1wZ6yN3cD5eH0jA"


def events(client: httpx.Client, turn_id: str, **headers: str) -> list[dict[str, Any]]:
    """Every event of a turn's stream, read until the server ends it."""
    found = []
    with client.stream("GET", f"/v1/turns/{turn_id}/events", headers=headers) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if line.startswith("data: "):
                found.append(json.loads(line[len("data: ") :]))
    return found


def start_turn(client: httpx.Client, message: str = "go", **body: Any) -> dict[str, Any]:
    response = client.post("/v1/turns", json={"message": message, **body})
    assert 202 == response.status_code, response.text
    return response.json()


def pending_approval(client: httpx.Client, turn_id: str, timeout_s: float = 20.0) -> dict:
    """The pending approval of `turn_id`, once the server lists it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for approval in client.get("/v1/approvals").json():
            if approval["turn_id"] == turn_id:
                return approval
        time.sleep(0.02)
    raise AssertionError(f"no approval for turn {turn_id}")


def decide(client: httpx.Client, approval_id: str, decision: str, **body: Any) -> httpx.Response:
    return client.post(f"/v1/approvals/{approval_id}", json={"decision": decision, **body})


def of_type(found: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in found if e["type"] == kind]


def spans_named(path: Path, name_prefix: str) -> list[dict[str, Any]]:
    """Every span whose name starts with `name_prefix`, as OTLP/JSON (one line per export)."""
    found = []
    for line in path.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                found += [s for s in scope["spans"] if s["name"].startswith(name_prefix)]
    return found


def span_durations(path: Path, name_prefix: str) -> list[float]:
    return [
        (int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])) / 1e9
        for s in spans_named(path, name_prefix)
    ]


def span_attributes(path: Path, name_prefix: str) -> list[dict[str, Any]]:
    """The attributes of every span whose name starts with `name_prefix` (OTLP/JSON lines)."""
    return [
        {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
        for span in spans_named(path, name_prefix)
    ]


class TestTurns:
    def test_the_stream_carries_every_card_and_the_end(self, serve_process: ServeFactory):
        """Each `tool_call` card is closed by its `tool_result`; `turn_end` is last."""
        served = serve_process(SCENARIOS / "api_secret.yaml")
        with served.client() as client:
            turn = start_turn(client)
            found = events(client, turn["turn_id"])
            status = client.get(f"/v1/turns/{turn['turn_id']}").json()

        calls = [e["id"] for e in of_type(found, "tool_call")]
        results = [e["id"] for e in of_type(found, "tool_result")]
        assert "turn_start" == found[0]["type"]
        assert 1 == len(calls) and calls == results
        assert {"type": "turn_end", "outcome": "final", "text": found[-1]["text"]} == found[-1]
        assert "done" == status["status"] and "final" == status["outcome"]
        assert turn["conversation_id"] == status["conversation_id"]

    def test_secrets_leave_redacted(self, serve_process: ServeFactory):
        """A key in a tool result and in the answer is redacted on the stream and the status."""
        served = serve_process(SCENARIOS / "api_secret.yaml")
        with served.client() as client:
            turn = start_turn(client, f"my key is {SECRET_KEY}")
            stream = json.dumps(events(client, turn["turn_id"]))
            status = client.get(f"/v1/turns/{turn['turn_id']}").text

        assert SECRET_KEY[8:24] not in stream + status
        assert "[REDACTED:openai_key]" in status

    def test_a_late_reader_gets_the_turn_from_its_start(self, serve_process: ServeFactory):
        """The stream replays a finished turn; `Last-Event-ID` skips what a client had."""
        served = serve_process(SCENARIOS / "api_secret.yaml")
        with served.client() as client:
            turn = start_turn(client)
            first = events(client, turn["turn_id"])
            resumed = events(client, turn["turn_id"], **{"Last-Event-ID": "2"})

        assert first[2:] == resumed

    def test_a_busy_conversation_refuses_a_second_turn(self, serve_process: ServeFactory):
        """One turn at a time per conversation: 409 while its turn waits for an operator."""
        served = serve_process(SHELL)
        with served.client() as client:
            turn = start_turn(client)
            pending_approval(client, turn["turn_id"])
            second = client.post(
                "/v1/turns", json={"message": "again", "conversation_id": turn["conversation_id"]}
            )

        assert 409 == second.status_code
        assert "conversation_busy" == second.json()["error"]


class TestAllowedTools:
    def test_a_turn_s_allowed_tools_narrow_that_turn_only(self, serve_process: ServeFactory):
        """`allowed_tools` leaves the rest `Tool not available in this turn`; the conversation's
        next turn without it has the agent's tools again."""
        served = serve_process(SCENARIOS / "api_narrow.yaml")
        with served.client() as client:
            narrowed = start_turn(client, allowed_tools=["get_*"])
            first = of_type(events(client, narrowed["turn_id"]), "tool_result")
            again = start_turn(client, conversation_id=narrowed["conversation_id"])
            second = of_type(events(client, again["turn_id"]), "tool_result")

        assert {
            "w": "18C",
            "d": "Tool not available in this turn: delete_file",
            "s": "Unknown tool: shell",
        } == {e["id"]: e["output"] for e in first}
        assert {"w": "18C", "d": "deleted", "s": "Unknown tool: shell"} == {
            e["id"]: e["output"] for e in second
        }

    def test_allowed_tools_never_grant(self, serve_process: ServeFactory):
        """A tool of a bundle the agent is not granted cannot be allowed into a turn."""
        served = serve_process(SCENARIOS / "api_narrow.yaml")
        with served.client() as client:
            response = client.post("/v1/turns", json={"message": "go", "allowed_tools": ["shell"]})

        assert 400 == response.status_code
        assert {
            "error": "bad_request",
            "message": "allowed_tools.0: matches no tool this agent may use",
        } == response.json()


class TestApprovals:
    def test_an_approval_decided_over_http_runs_the_call(
        self, serve_process: ServeFactory, tmp_path: Path
    ):
        """The pending call is listed with its full command; `yes` runs it and is audited."""
        audit = tmp_path / "audit.jsonl"
        served = serve_process(SHELL, "--audit-out", str(audit))
        with served.client() as client:
            turn = start_turn(client)
            approval = pending_approval(client, turn["turn_id"])
            answer = decide(client, approval["approval_id"], "yes", operator="alice")
            found = events(client, turn["turn_id"])
            again = decide(client, approval["approval_id"], "yes")
        served.stop()
        entries = [json.loads(line) for line in audit.read_text().splitlines()]

        assert "shell" == approval["tool"]
        assert "find /var/log/app -mtime +7 -delete" == approval["arguments"]["command"]
        assert "command" == next(iter(approval["arguments"]))
        assert {"approval_id": approval["approval_id"], "decision": "yes"} == answer.json()
        request = of_type(found, "approval_request")[0]
        assert approval["arguments"] == request["arguments"]
        assert ("yes", "web", "alice") == tuple(
            of_type(found, "approval_decided")[0][k] for k in ("decision", "surface", "decided_by")
        )
        assert "removed 3 files" == of_type(found, "tool_result")[0]["output"]
        assert 404 == again.status_code
        assert [("yes", "web", "alice")] == [
            (e["decision"], e["surface"], e["decided_by"]) for e in entries
        ]

    def test_the_await_approval_span_covers_the_wait(
        self, serve_process: ServeFactory, tmp_path: Path
    ):
        """The operator's time is on `await_approval` (surface `web`), never on the tool span."""
        spans = tmp_path / "spans.jsonl"
        served = serve_process(SHELL, "--otlp-json", str(spans))
        with served.client() as client:
            turn = start_turn(client)
            approval = pending_approval(client, turn["turn_id"])
            time.sleep(0.5)  # the operator reads the command
            decide(client, approval["approval_id"], "yes")
            events(client, turn["turn_id"])
        served.stop()

        wait = span_durations(spans, "await_approval")
        tool = span_durations(spans, "execute_tool")
        assert 1 == len(wait) == len(tool)
        assert wait[0] >= 0.5 > tool[0]
        assert "web" == span_attributes(spans, "await_approval")[0]["zeroclaw.approval.surface"]

    def test_no_and_replace_reach_the_model(self, serve_process: ServeFactory):
        """`no` fails the slot as denied by the user; `replace` gives the operator's text."""
        served = serve_process(SHELL)
        with served.client() as client:
            denied = start_turn(client)
            decide(client, pending_approval(client, denied["turn_id"])["approval_id"], "no")
            replaced = start_turn(client)
            approval = pending_approval(client, replaced["turn_id"])
            decide(client, approval["approval_id"], "replace", replace_with="skipped: 0 files")
            denied_result = of_type(events(client, denied["turn_id"]), "tool_result")[0]
            replaced_result = of_type(events(client, replaced["turn_id"]), "tool_result")[0]

        assert (False, "Denied by user.") == (denied_result["success"], denied_result["output"])
        assert "skipped: 0 files" in replaced_result["output"]

    def test_no_decision_in_time_is_a_runtime_denial(
        self, serve_process: ServeFactory, tmp_path: Path
    ):
        """Past `backchannel_timeout_s` the runtime denies, and the approval leaves the list."""
        audit = tmp_path / "audit.jsonl"
        served = serve_process(SCENARIOS / "api_timeout.yaml", "--audit-out", str(audit))
        with served.client() as client:
            turn = start_turn(client)
            found = events(client, turn["turn_id"])
            listed = client.get("/v1/approvals").json()
        served.stop()

        result = of_type(found, "tool_result")[0]
        assert runtime_denial_text("shell") == result["output"]
        assert "runtime" == of_type(found, "approval_decided")[0]["surface"]
        assert [] == listed
        assert ["runtime"] == [json.loads(line)["surface"] for line in audit.open()]

    def test_always_in_one_conversation_never_approves_in_another(
        self, serve_process: ServeFactory
    ):
        """`always` joins its conversation's allowlist only; histories stay apart too."""
        served = serve_process(SHELL)
        with served.client() as client:
            first = start_turn(client)
            always = pending_approval(client, first["turn_id"])
            decide(client, always["approval_id"], "always")
            first_events = events(client, first["turn_id"])
            # The same conversation again, and a new one, at the same time.
            same = start_turn(client, conversation_id=first["conversation_id"])
            other = start_turn(client)
            other_approval = pending_approval(client, other["turn_id"])
            same_events = events(client, same["turn_id"])
            decide(client, other_approval["approval_id"], "no")
            other_events = events(client, other["turn_id"])

        assert [] == of_type(same_events, "approval_request")
        assert "removed 3 files" == of_type(same_events, "tool_result")[0]["output"]
        assert other["conversation_id"] == other_approval["conversation_id"]
        assert "Denied by user." == of_type(other_events, "tool_result")[0]["output"]
        # The model reads more in a conversation's second turn (its history), never another's.
        first_usage = of_type(first_events, "usage")[0]["input_tokens"]
        assert of_type(same_events, "usage")[0]["input_tokens"] > first_usage
        assert of_type(other_events, "usage")[0]["input_tokens"] == first_usage


class TestAuthAndErrors:
    @pytest.mark.parametrize(
        ("method", "path"),
        [
            ("POST", "/v1/turns"),
            ("GET", "/v1/turns/x"),
            ("GET", "/v1/turns/x/events"),
            ("GET", "/v1/approvals"),
            ("POST", "/v1/approvals/x"),
            ("GET", "/v1/events"),
        ],
    )
    def test_every_api_path_needs_the_token(
        self, serve_process: ServeFactory, method: str, path: str
    ):
        """401 without the token or with another one, with `WWW-Authenticate: Bearer`."""
        served = serve_process(SHELL)
        missing = httpx.request(method, served.url + path, json={})
        wrong = httpx.request(
            method, served.url + path, json={}, headers={"Authorization": "Bearer nope"}
        )

        for response in (missing, wrong):
            assert 401 == response.status_code
            assert "Bearer" == response.headers["www-authenticate"]
            assert "unauthorized" == response.json()["error"]

    def test_open_paths_need_no_token(self, serve_process: ServeFactory):
        """`/healthz`, `/metrics` and the page answer without a token; the page holds no data."""
        served = serve_process(SHELL)
        health = httpx.get(served.url + "/healthz")
        metrics = httpx.get(served.url + "/metrics")
        page = httpx.get(served.url + "/")

        assert {"status": "ok", "running_turns": 0} == health.json()
        assert "zeroclaw_turns_total" in metrics.text
        assert 200 == page.status_code
        assert "default-src 'none'" in page.headers["content-security-policy"]

    def test_a_scenario_served_needs_no_user_message(
        self, serve_process: ServeFactory, tmp_path: Path
    ):
        """Each turn brings its message: a scripted file without `user` serves."""
        scenario = tmp_path / "nouser.yaml"
        scenario.write_text(json.dumps({"responses": [{"text": "hello"}]}))
        served = serve_process(scenario)
        with served.client() as client:
            turn = start_turn(client, "hi")
            found = events(client, turn["turn_id"])

        assert ("final", "hello") == (found[-1]["outcome"], found[-1]["text"])
        assert "hi" == found[0]["message"]

    def test_the_favicon_is_a_plain_404(self, serve_process: ServeFactory):
        """A browser's own favicon request is not a 401 in the operator's console."""
        served = serve_process(SHELL)
        assert 404 == httpx.get(served.url + "/favicon.ico").status_code

    def test_the_token_is_never_logged(self, serve_process: ServeFactory, tmp_path: Path):
        """Neither stderr nor the structured logs carry the token (here: a token file's)."""
        logs = tmp_path / "logs.jsonl"
        served = serve_process(SHELL, "--logs-out", str(logs))
        with served.client() as client:
            client.get("/v1/approvals")
            httpx.get(served.url + "/v1/approvals", headers={"Authorization": "Bearer wrong"})
        served.stop()

        assert served.token not in "\n".join(served.stderr_lines) + logs.read_text()

    @pytest.mark.parametrize(
        ("body", "status", "error", "message"),
        [
            (b"{", 400, "bad_request", "body: not valid JSON"),
            (b"[]", 400, "bad_request", "body: must be a JSON object"),
            (b'{"message": 3}', 400, "bad_request", "message: wrong type"),
            (b'{"msg": "hi"}', 400, "bad_request", "body: unknown field <key 1>"),
            (b"{}", 400, "bad_request", "message: required, a non-empty string"),
            (
                b'{"message": "hi", "conversation_id": "a b"}',
                400,
                "bad_request",
                "conversation_id: must be 1-128 characters",
            ),
            (b'{"message": "' + b"x" * 2_000_000 + b'"}', 413, "too_large", "body: larger than"),
            (
                b'{"message": "hi", "allowed_tools": "shell"}',
                400,
                "bad_request",
                "allowed_tools: wrong type",
            ),
            (
                b'{"message": "hi", "allowed_tools": ["shell", "a b"]}',
                400,
                "bad_request",
                "allowed_tools.1: matches no tool this agent may use",
            ),
            (
                b'{"message": "hi", "allowed_tools": [" "]}',
                400,
                "bad_request",
                "allowed_tools.0: a tool name or pattern",
            ),
            (
                b'{"message": "hi", "allowed_tools": [3]}',
                400,
                "bad_request",
                "allowed_tools.0: a tool name or pattern",
            ),
            (
                b'{"message": "hi", "allowed_tools": [' + b'"s",' * 256 + b'"s"]}',
                400,
                "bad_request",
                "allowed_tools: at most 256 entries",
            ),
        ],
    )
    def test_bad_turn_requests_get_one_json_line(
        self, serve_process: ServeFactory, body: bytes, status: int, error: str, message: str
    ):
        """The error names the field, never a value the client sent."""
        served = serve_process(SHELL)
        with served.client() as client:
            response = client.post(
                "/v1/turns", content=body, headers={"Content-Type": "application/json"}
            )

        assert status == response.status_code
        assert error == response.json()["error"]
        assert response.json()["message"].startswith(message)
        assert "\n" not in response.text and "a b" not in response.text

    def test_unknown_ids_are_404(self, serve_process: ServeFactory):
        served = serve_process(SHELL)
        with served.client() as client:
            turn = client.get("/v1/turns/nope")
            stream = client.get("/v1/turns/nope/events")
            approval = decide(client, "nope", "yes")

        assert [404, 404, 404] == [r.status_code for r in (turn, stream, approval)]
        assert {"not_found"} == {r.json()["error"] for r in (turn, stream, approval)}

    def test_a_bad_decision_is_refused(self, serve_process: ServeFactory):
        served = serve_process(SHELL)
        with served.client() as client:
            turn = start_turn(client)
            approval_id = pending_approval(client, turn["turn_id"])["approval_id"]
            maybe = decide(client, approval_id, "maybe")
            bare_replace = decide(client, approval_id, "replace")
            still = client.get("/v1/approvals").json()

        assert (400, "decision: must be yes, no, always or replace") == (
            maybe.status_code,
            maybe.json()["message"],
        )
        assert "replace_with: required with replace" == bare_replace.json()["message"]
        assert [approval_id] == [a["approval_id"] for a in still]


class TestShutdown:
    def test_sigterm_drains_running_turns_then_exits_0(
        self, serve_process: ServeFactory, tmp_path: Path
    ):
        """After SIGTERM: no new turn (503), the running turn finishes, spans are flushed."""
        spans = tmp_path / "spans.jsonl"
        served = serve_process(SCENARIOS / "api_slow.yaml", "--otlp-json", str(spans))
        with served.client() as client:
            reader, found = follow_in_background(client, start_turn(client)["turn_id"])
            time.sleep(0.3)  # the turn is inside its 1.5 s tool call
            served.process.send_signal(signal.SIGTERM)
            refused = wait_for_draining(served, client)
            reader.join(30)
        code = served.process.wait(30)

        assert (503, "draining") == (refused.status_code, refused.json()["error"])
        assert "final" == found[-1]["outcome"]
        assert 0 == code
        outcomes = [a["zeroclaw.turn.outcome"] for a in span_attributes(spans, "invoke_agent")]
        assert ["final"] == outcomes

    def test_sigint_cancels_running_turns_and_exits_130(
        self, serve_process: ServeFactory, tmp_path: Path
    ):
        """Ctrl-C does not wait: the running turn ends cancelled, its card closed."""
        spans = tmp_path / "spans.jsonl"
        served = serve_process(SCENARIOS / "api_slow.yaml", "--otlp-json", str(spans))
        with served.client() as client:
            reader, found = follow_in_background(client, start_turn(client)["turn_id"])
            time.sleep(0.3)  # the turn is inside its 1.5 s tool call
            code = served.stop(signal.SIGINT)
            reader.join(30)

        kinds = [e["type"] for e in found]
        assert 130 == code
        assert ("turn_end", "cancelled") == (found[-1]["type"], found[-1]["outcome"])
        assert kinds.count("tool_call") == kinds.count("tool_result") == 1
        outcomes = [a["zeroclaw.turn.outcome"] for a in span_attributes(spans, "invoke_agent")]
        assert ["cancelled"] == outcomes

    def test_spans_name_the_conversation_not_the_turn(
        self, serve_process: ServeFactory, tmp_path: Path
    ):
        """`gen_ai.conversation.id` and `session.id` are the conversation on every turn."""
        spans = tmp_path / "spans.jsonl"
        served = serve_process(SCENARIOS / "api_secret.yaml", "--otlp-json", str(spans))
        with served.client() as client:
            first = start_turn(client, conversation_id="support-42")
            events(client, first["turn_id"])
            second = start_turn(client, conversation_id="support-42")
            events(client, second["turn_id"])
        served.stop()

        roots = span_attributes(spans, "invoke_agent")
        assert {("support-42", "support-42")} == {
            (a["gen_ai.conversation.id"], a["session.id"]) for a in roots
        }
        assert {first["turn_id"], second["turn_id"]} == {a["zeroclaw.turn.id"] for a in roots}


def follow_in_background(
    client: httpx.Client, turn_id: str
) -> tuple[threading.Thread, list[dict[str, Any]]]:
    """A started thread reading the turn's stream to its end, and the list it fills."""
    found: list[dict[str, Any]] = []
    reader = threading.Thread(target=lambda: found.extend(events(client, turn_id)))
    reader.start()
    return reader, found


def wait_for_draining(served: Served, client: httpx.Client) -> httpx.Response:
    """The first refused `POST /v1/turns` once the server drains."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if httpx.get(served.url + "/healthz").json()["status"] == "draining":
            return client.post("/v1/turns", json={"message": "late"})
        time.sleep(0.02)
    raise AssertionError("the server never started draining")


class TestMcpServers:
    def test_an_approval_shows_the_server_and_its_annotations(
        self, serve_process: ServeFactory, tmp_path: Path
    ):
        """A real stdio MCP server, connected once at start: its destructive tool waits for an
        operator, who sees the server and the annotations; `yes` runs it on the server."""
        toolbox = Path(__file__).parents[1] / "tools" / "mcp_servers" / "toolbox.py"
        scenario = tmp_path / "mcp.yaml"
        scenario.write_text(
            json.dumps(
                {
                    "user": "echo",
                    "config": {"approval": {"mode": "backchannel"}},
                    "mcp_servers": [
                        {"name": "box", "command": sys.executable, "args": [str(toolbox)]}
                    ],
                    "responses": [
                        {"tool_calls": [{"name": "box__fail", "arguments": {"reason": "nope"}}]},
                        {"text": "done"},
                    ],
                }
            )
        )
        served = serve_process(scenario)
        with served.client() as client:
            turn = start_turn(client)
            approval = pending_approval(client, turn["turn_id"])
            decide(client, approval["approval_id"], "yes")
            found = events(client, turn["turn_id"])

        assert ("box__fail", "box") == (approval["tool"], approval["server"])
        assert {"destructiveHint": True} == approval["annotations"]
        result = of_type(found, "tool_result")[0]
        assert (False, True) == (result["success"], "nope" in result["output"])
