"""The leak sweep: secrets placed in every payload a turn handles reach no outward surface.

A scenario puts known secrets in tool arguments, tool results, failed-result errors, raised
exception messages, an approval prompt and an invented tool name. After a full CLI run with
every output on, none of the secrets — nor any 12-character piece of one — appears in any byte
of the OTLP/JSON spans, logs, metrics exposition, progress output, events file, audit file or
history file.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from zeroclaw_obs.cli import main

SECRETS = {
    "github": "ghp_Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8",
    "aws": "AKIAZ7Q4W2E9R5T1Y3U8",
    "password": "Pr0d-DB-hunter2-Secret!",
    "url_password": "S3cr3tPassw0rdInURL",
    "openai": "sk-proj-Qm3Vx8Lr2Tz7Wn4Kp9Bs6Hd1Jf5Gc0Ya",
}


def pieces(secret: str, size: int = 12) -> set[str]:
    """Every substring of `size` characters (the whole secret when shorter)."""
    if len(secret) <= size:
        return {secret}
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def leak_scenario() -> dict:
    s = SECRETS
    return {
        "agent": {"alias": "leaky", "channel": "cli"},
        "user": "deploy it",
        "config": {
            "parallel_tools": True,
            "receipts": {"enabled": True},
            "approval": {"auto_approve": ["fetch", "deploy", "login"], "answers": ["yes"]},
        },
        "tools": [
            {
                "name": "fetch",
                "parameters": {"type": "object", "properties": {"url": {"type": "string"}}},
                "responses": [
                    {"default": {"output": f"config loaded; github_token={s['github']}"}}
                ],
            },
            {
                "name": "deploy",
                "parameters": {"type": "object", "properties": {"password": {"type": "string"}}},
                "responses": [
                    {"default": {"error": f"auth failed for key {s['aws']} (password rejected)"}}
                ],
            },
            {
                "name": "login",
                "parameters": {"type": "object", "properties": {"dsn": {"type": "string"}}},
                "responses": [
                    {
                        "default": {
                            "raise": f"cannot connect to postgres://admin:{s['url_password']}@db:5432"
                        }
                    }
                ],
            },
            {
                "name": "shell",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
                "responses": [{"default": {"output": "ok"}}],
            },
        ],
        "responses": [
            {
                "tool_calls": [
                    {
                        "id": "c1",
                        "name": "fetch",
                        "arguments": {"url": f"https://x/?k={s['openai']}"},
                    },
                    {"id": "c2", "name": "deploy", "arguments": {"password": s["password"]}},
                    {
                        "id": "c3",
                        "name": "login",
                        "arguments": {"dsn": f"postgres://admin:{s['url_password']}@db:5432"},
                    },
                ]
            },
            {
                "tool_calls": [
                    {
                        "id": "c4",
                        "name": "shell",
                        "arguments": {"command": f"export OPENAI_API_KEY={s['openai']}"},
                    },
                    {"id": "c5", "name": s["github"], "arguments": {}},
                ]
            },
            {"text": "Deployed."},
        ],
    }


def test_no_secret_reaches_any_surface(tmp_path: Path, capsys, monkeypatch):
    """No secret, nor any 12-character piece of one, appears in any output of a full run."""
    monkeypatch.chdir(tmp_path)
    scenario = tmp_path / "leak.yaml"
    scenario.write_text(yaml.safe_dump(leak_scenario()))
    outputs = {
        "--otlp-json": "spans.jsonl",
        "--logs-out": "logs.jsonl",
        "--metrics-out": "metrics.txt",
        "--events-out": "events.jsonl",
        "--audit-out": "audit.jsonl",
        "--history-out": "history.json",
    }
    args = ["run", "--scenario", str(scenario), *(f"{k}={v}" for k, v in outputs.items())]
    assert 0 == main(args)
    captured = capsys.readouterr()
    surfaces = {name: (tmp_path / name).read_text() for name in outputs.values()}
    surfaces["stdout"] = captured.out
    surfaces["stderr (progress, trace tree)"] = captured.err
    # Every surface was really produced, so an empty file cannot pass the sweep.
    assert "⏳ deploy" in surfaces["stderr (progress, trace tree)"]
    assert '"decision": "yes"' in surfaces["audit.jsonl"]
    assert "zeroclaw_tool_calls_total" in surfaces["metrics.txt"]
    assert "execute_tool login" in surfaces["spans.jsonl"]
    assert "tool_call_result" in surfaces["logs.jsonl"]
    history = json.loads(surfaces["history.json"])
    assert 5 == len([m for m in history if m["role"] == "tool"])
    leaks = [
        (surface, kind)
        for kind, secret in SECRETS.items()
        for surface, text in surfaces.items()
        if any(piece in text for piece in pieces(secret))
    ]
    assert [] == leaks
