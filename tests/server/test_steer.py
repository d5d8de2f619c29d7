"""`POST /v1/turns/{turn_id}/steer` over real HTTP (issue 18 item 6): a uvicorn process on a
loopback port, driven by httpx while the turn runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import ServeFactory

SCENARIOS = Path(__file__).parent / "scenarios"
STEER = SCENARIOS / "api_steer.yaml"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def start_turn(client: httpx.Client) -> str:
    response = client.post("/v1/turns", json={"message": "Plan a trip."})
    assert 202 == response.status_code, response.text
    return response.json()["turn_id"]


def steer(client: httpx.Client, turn_id: str, message: str) -> httpx.Response:
    return client.post(f"/v1/turns/{turn_id}/steer", json={"message": message})


def follow_and_steer(
    client: httpx.Client, turn_id: str, messages: list[str]
) -> tuple[list[dict[str, Any]], list[httpx.Response]]:
    """Read the turn's stream; once its call is running, steer with `messages` (on a second
    connection); return every event and the steer responses."""
    found: list[dict[str, Any]] = []
    answers: list[httpx.Response] = []
    with client.stream("GET", f"/v1/turns/{turn_id}/events") as stream:
        for line in stream.iter_lines():
            if not line.startswith("data: "):
                continue
            event = json.loads(line[len("data: ") :])
            found.append(event)
            if event["type"] == "tool_call" and not answers:
                with httpx.Client(
                    base_url=str(client.base_url), headers=client.headers, timeout=30.0
                ) as other:
                    answers = [steer(other, turn_id, message) for message in messages]
    return found, answers


class TestSteer:
    def test_messages_reach_the_next_iteration_in_order(
        self, serve_process: ServeFactory, tmp_path: Path
    ):
        """Two messages sent while the call runs: 202 each (the queue growing), then the
        turn's stream shows both, after the call's result and in the order sent, before the
        answer; the logs have their lengths, the span their count, neither their text."""
        traces, logs = tmp_path / "traces.jsonl", tmp_path / "logs.jsonl"
        served = serve_process(STEER, "--otlp-json", str(traces), "--logs-out", str(logs))
        messages = ["prefer the night train", f"my loyalty id is {SECRET}"]
        with served.client() as client:
            turn_id = start_turn(client)
            found, answers = follow_and_steer(client, turn_id, messages)
            status = client.get(f"/v1/turns/{turn_id}").json()
        assert [(202, {"turn_id": turn_id, "pending": n}) for n in (1, 2)] == [
            (r.status_code, r.json()) for r in answers
        ]
        kinds = [e["type"] for e in found]
        steering = [e for e in found if e["type"] == "steering"]
        assert [
            "prefer the night train",
            "my loyalty id is [REDACTED:github_token]",
        ] == [e["text"] for e in steering]
        assert kinds.index("tool_result") < kinds.index("steering") < kinds.index("turn_end")
        assert ("done", "final", "Night train booked, window seat.") == (
            status["status"],
            status["outcome"],
            status["text"],
        )
        assert served.stop() == 0
        lines = [json.loads(line) for line in logs.read_text().splitlines()]
        audited = [line for line in lines if line["event"] == "steering_message"]
        assert [(turn_id, 1, 22), (turn_id, 2, len(messages[1]))] == [
            (line["turn_id"], line["position"], line["length"]) for line in audited
        ]
        exported = traces.read_text()
        assert '"zeroclaw.steering"' in exported
        for text in (SECRET, "prefer the night", "loyalty"):
            assert text not in logs.read_text() + exported

    def test_a_finished_turn_is_409_and_an_unknown_one_404(self, serve_process: ServeFactory):
        """Steering a turn that ended is a conflict; a turn id nobody issued is not found."""
        served = serve_process(STEER)
        with served.client() as client:
            turn_id = start_turn(client)
            with client.stream("GET", f"/v1/turns/{turn_id}/events") as stream:
                for _ in stream.iter_lines():
                    pass
            finished = steer(client, turn_id, "too late")
            unknown = steer(client, "nope", "hello")
        assert (409, "turn_finished") == (finished.status_code, finished.json()["error"])
        assert (404, "not_found") == (unknown.status_code, unknown.json()["error"])

    def test_a_full_queue_is_429(self, serve_process: ServeFactory):
        """At most 64 messages wait for one turn; the next is refused until it takes them."""
        served = serve_process(STEER)
        with served.client() as client:
            turn_id = start_turn(client)
            found, answers = follow_and_steer(client, turn_id, [f"note {n}" for n in range(65)])
        assert [202] * 64 + [429] == [r.status_code for r in answers]
        assert "too_many_steering" == answers[-1].json()["error"]
        assert 64 == len([e for e in found if e["type"] == "steering"])

    @pytest.mark.parametrize(
        ("body", "status", "error", "message"),
        [
            (b'{"message": "  "}', 400, "bad_request", "message: required"),
            (b'{"message": 3}', 400, "bad_request", "message: wrong type"),
            (b'{"message": "a b", "x": 1}', 400, "bad_request", "body: unknown field <key 2>"),
            (b"[1]", 400, "bad_request", "body: must be a JSON object"),
            (b"{nope", 400, "bad_request", "body: not valid JSON"),
        ],
    )
    def test_bad_bodies_get_one_json_line(
        self, serve_process: ServeFactory, body: bytes, status: int, error: str, message: str
    ):
        """The same limits and error lines as `POST /v1/turns`, naming the field only."""
        served = serve_process(STEER)
        with served.client() as client:
            turn_id = start_turn(client)
            response = client.post(
                f"/v1/turns/{turn_id}/steer",
                content=body,
                headers={"Content-Type": "application/json"},
            )
        assert (status, error) == (response.status_code, response.json()["error"])
        assert response.json()["message"].startswith(message)
        assert "a b" not in response.text

    def test_a_body_past_the_limit_is_413(self, serve_process: ServeFactory):
        """A message larger than `--max-body-bytes` is refused before it is read whole."""
        served = serve_process(STEER, "--max-body-bytes", "1024")
        with served.client() as client:
            turn_id = start_turn(client)
            response = steer(client, turn_id, "x" * 2000)
        assert (413, "too_large") == (response.status_code, response.json()["error"])

    def test_steering_needs_the_token(self, serve_process: ServeFactory):
        """Like every API path, steering without the bearer token is 401."""
        served = serve_process(STEER)
        with served.client() as client:
            turn_id = start_turn(client)
        response = httpx.post(
            f"{served.url}/v1/turns/{turn_id}/steer", json={"message": "hi"}, timeout=30.0
        )
        assert 401 == response.status_code
