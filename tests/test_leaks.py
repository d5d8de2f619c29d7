"""The leak sweep: secrets placed in every payload a turn handles reach no outward surface.

A scenario puts known secrets in tool arguments, tool results, failed-result errors, raised
exception messages, an approval prompt and an invented tool name. After a full CLI run with
every output on, none of the secrets — nor any 12-character piece of one — appears in any byte
of the OTLP/JSON spans, logs, metrics exposition, progress output, events file, audit file or
history file.

A second sweep (native and text protocol) puts secrets in the texts and names around the
payloads: the user message, the assistant's text beside its calls, the final answer, a call
id, an invented tool name, registry and MCP tool names and descriptions, a deferred tool's
description, the agent alias, the provider and model names, the system prompt, and at both
truncation cuts of a result as long as the default limit allows; no 8-character piece of any.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
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


OUTPUTS = {
    "--otlp-json": "spans.jsonl",
    "--logs-out": "logs.jsonl",
    "--metrics-out": "metrics.txt",
    "--events-out": "events.jsonl",
    "--audit-out": "audit.jsonl",
    "--history-out": "history.json",
}
"""Every output flag of `run`, and the file each sweep writes it to."""


def run_to_every_surface(
    tmp_path: Path, name: str, scenario: dict[str, Any], capsys: Any
) -> dict[str, str]:
    """Run `scenario` with every output on; each surface's text by file name (and stdout/err)."""
    path = tmp_path / name
    path.write_text(yaml.safe_dump(scenario))
    args = ["run", "--scenario", str(path), *(f"{k}={tmp_path / v}" for k, v in OUTPUTS.items())]
    assert 0 == main(args)
    captured = capsys.readouterr()
    surfaces = {file: (tmp_path / file).read_text() for file in OUTPUTS.values()}
    surfaces["stdout"] = captured.out
    surfaces["stderr (progress, trace tree)"] = captured.err
    return surfaces


def test_no_secret_reaches_any_surface(tmp_path: Path, capsys, monkeypatch):
    """No secret, nor any 12-character piece of one, appears in any output of a full run."""
    monkeypatch.chdir(tmp_path)
    surfaces = run_to_every_surface(tmp_path, "leak.yaml", leak_scenario(), capsys)
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


# Issue 10, items 1-4: secrets in the texts and names a turn carries besides tool payloads.
NAMED = {
    "user_message": "ghp_Us3rMsgQw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9",
    "assistant_text": "sk-proj-AsstTxt8Lr2Tz7Wn4Kp9Bs6Hd1Jf5Gc0Ya",
    "final_answer": "xoxb-123456789012-1234567890123-FinalAnswerKlMnOpQr",
    "call_id": "ghp_Ca11IdQw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb",
    "invented_tool": "ghp_Inv3ntedQw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9",
    "registry_name": "ghp_RegNam3Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9",
    "registry_description": "sk-proj-RegDesc8Lr2Tz7Wn4Kp9Bs6Hd1Jf5Gc0Ya",
    "mcp_name": "ghp_McpNam3Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9x",
    "mcp_description": "sk-proj-McpDesc8Lr2Tz7Wn4Kp9Bs6Hd1Jf5Gc0Ya",
    "deferred_description": "sk-proj-DefDesc8Lr2Tz7Wn4Kp9Bs6Hd1Jf5Gc0Ya",
    "alias": "ghp_A1iasQw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8",
    "model": "ghp_M0delQw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8",
    "provider": "ghp_Pr0vQw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8x",
    "system_prompt": "sk-proj-Syst3m8Lr2Tz7Wn4Kp9Bs6Hd1Jf5Gc0Ya",
    "aws_at_the_cut": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
    "jwt_across_the_cut": (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    ),
}
LIMIT = 50_000  # the default `max_tool_result_chars`


def long_result() -> str:
    """A result whose head cut falls inside a JWT and whose tail starts after `key = `."""
    s = NAMED
    jwt, aws, context = s["jwt_across_the_cut"], s["aws_at_the_cut"], "aws_secret_access_key = "
    head = "h" * (LIMIT * 2 // 3 - len(jwt) // 2 - 1) + "\n" + jwt + "\n"
    middle = "m" * (90_000 - len(head)) + "\n" + context
    return head + middle + aws + "\n" + "t" * (LIMIT // 3 - len(aws) - 1)


def names_scenario(*, native: bool) -> dict:
    s = NAMED
    registry_tool = f"t.{s['registry_name']}"
    mcp_tool = f"srv__m.{s['mcp_name']}"
    calls = [
        {"id": f"call {s['call_id']}", "name": "fetch", "arguments": {"url": "https://x"}},
        {"id": "c2", "name": f"get.{s['invented_tool']}", "arguments": {}},
        {"id": "c3", "name": registry_tool, "arguments": {}},
        {"id": "c4", "name": mcp_tool, "arguments": {}},
        {"id": "c5", "name": "dump", "arguments": {}},
    ]
    if native:
        first: dict = {"text": f"Calling tools with {s['assistant_text']}", "tool_calls": calls}
    else:
        # A text-protocol model reads the tool list under the shown names and calls by them;
        # it cannot call a name it was never offered (the invented one is just prose).
        shown = {
            registry_tool: "t.[REDACTED:github_token]",
            mcp_tool: "srv__m.[REDACTED:github_token]",
        }
        calls = [{**c, "name": shown.get(c["name"], c["name"])} for c in calls]
        tags = "".join(
            "<tool_call>"
            + json.dumps({"name": c["name"], "arguments": c["arguments"]})
            + "</tool_call>"
            for c in calls
        )
        first = {"text": f"Calling tools with {s['assistant_text']}\n{tags}"}
    return {
        "agent": {"alias": f"bot.{s['alias']}", "channel": "cli"},
        "user": f"please deploy with {s['user_message']}",
        "system_prompt": f"You deploy things. The key is {s['system_prompt']}.",
        "provider": {
            "native_tools": native,
            "name": f"p.{s['provider']}",
            "model": f"m.{s['model']}",
        },
        "config": {
            "parallel_tools": True,
            "approval": {
                "auto_approve": [registry_tool, mcp_tool, "dump"],
                "answers": ["yes"],
            },
        },
        "tools": [
            {
                "name": "fetch",
                "description": f"Fetch a page; token {s['registry_description']}",
                "parameters": {"type": "object", "properties": {"url": {"type": "string"}}},
                "responses": [{"default": {"output": "page"}}],
            },
            {"name": registry_tool, "responses": [{"default": {"output": "ok"}}]},
            {"name": "dump", "responses": [{"default": {"output": long_result()}}]},
        ],
        "mcp_servers": [
            {
                "name": "srv",
                "tools": [
                    {
                        "name": f"m.{s['mcp_name']}",
                        "description": f"MCP tool; key {s['mcp_description']}",
                        "responses": [{"default": {"output": "mcp ok"}}],
                    }
                ],
            },
            {
                "name": "later",
                "deferred": True,
                "tools": [
                    {
                        "name": "search",
                        "description": f"Deferred; key {s['deferred_description']}",
                        "responses": [{"default": {"output": "found"}}],
                    }
                ],
            },
        ],
        "responses": [first, {"text": f"Deployed; the token was {s['final_answer']}."}],
    }


@pytest.mark.parametrize("native", [True, False], ids=["native", "text_protocol"])
def test_no_named_secret_reaches_any_surface(tmp_path: Path, capsys, monkeypatch, native):
    """Secrets in the user message, the model's texts and ids, the operator's names and texts,
    and at a truncation cut, reach no surface: no 8-character piece of one, anywhere."""
    monkeypatch.chdir(tmp_path)
    surfaces = run_to_every_surface(tmp_path, "names.yaml", names_scenario(native=native), capsys)
    # Every surface was really produced, and every call ran or got its slot.
    assert "✅ fetch" in surfaces["stderr (progress, trace tree)"]
    assert '"decision": "yes"' in surfaces["audit.jsonl"]
    assert 'zeroclaw_tool_calls_total{outcome="success",tool="dump"}' in surfaces["metrics.txt"]
    assert "execute_tool fetch" in surfaces["spans.jsonl"]
    assert "tool_call_result" in surfaces["logs.jsonl"]
    outcomes = [
        json.loads(line)["outcome"]
        for line in surfaces["events.jsonl"].splitlines()
        if '"tool_result"' in line
    ]
    expected = ["success", "unknown", "success", "success", "success"]
    assert (expected if native else [o for o in expected if o != "unknown"]) == outcomes
    leaks = [
        (surface, kind)
        for kind, secret in NAMED.items()
        for surface, text in surfaces.items()
        if any(piece in text for piece in pieces(secret, 8))
    ]
    assert [] == leaks


def test_glued_invented_names_and_ids_reach_no_surface(tmp_path: Path, capsys, monkeypatch):
    """`get_ghp_…`, `fetch-sk-proj-…` and `call_ghp_…` are redacted on every surface."""
    monkeypatch.chdir(tmp_path)
    github, openai = SECRETS["github"], SECRETS["openai"]
    data = {
        "user": "go",
        "tools": [{"name": "fetch", "responses": [{"default": {"output": "ok"}}]}],
        "config": {"approval": {"auto_approve": ["fetch"]}},
        "responses": [
            {
                "tool_calls": [
                    {"id": "c1", "name": f"get_{github}", "arguments": {}},
                    {"id": "c2", "name": f"fetch-{openai}", "arguments": {}},
                    {"id": f"call_{github}", "name": "fetch", "arguments": {}},
                ]
            },
            {"text": "done"},
        ],
    }
    surfaces = run_to_every_surface(tmp_path, "glued.yaml", data, capsys)
    leaks = [
        (surface, kind)
        for kind, secret in (("github", github), ("openai", openai))
        for surface, text in surfaces.items()
        if any(piece in text for piece in pieces(secret, 8))
    ]
    assert [] == leaks
