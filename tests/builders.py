"""Builders the test modules share: played providers, turns, scenario pieces, span and
metric helpers. Test modules import from here, never from each other."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from zeroclaw_obs.errors import (
    ProviderError,
    ProviderHTTPError,
)
from zeroclaw_obs.observability.chain import TelemetryChain
from zeroclaw_obs.observability.events import (
    ApprovalDecision,
    Correlation,
    EventIds,
    LlmResponse,
    ToolCall,
    ToolOutcome,
)
from zeroclaw_obs.observability.health import TelemetryHealth
from zeroclaw_obs.observability.traces.tracing import ContentCapture, SpanObserver
from zeroclaw_obs.providers.base import (
    Provider,
    ProviderRequest,
    ProviderResponse,
    Usage,
)
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.replay import Replay
from zeroclaw_obs.turn.provider_call import RetryPolicy

from .conftest import RecordingObserver, make_replay


@dataclasses.dataclass
class Dropped:
    """A step that streams `text`, then fails with `error` (a connection dropped mid-stream)."""

    text: str
    error: ProviderError


Step = ProviderResponse | ProviderError | Dropped


class PlayedProvider(Provider):
    """A provider that plays its steps in order: a response, or an error to raise.

    With `piece` set, a response's text is handed to `on_text` in pieces of that many
    characters, yielding to the loop between them, as a streaming backend does.
    """

    def __init__(
        self,
        *steps: Step,
        max_retries: int = 2,
        piece: int | None = None,
        name: str = "openai",
        model: str = "gpt-test",
        server_address: str | None = "api.example.test",
        server_port: int | None = 443,
    ) -> None:
        self.steps = list(steps)
        self.max_retries = max_retries
        self.piece = piece
        self.name = name
        self.model = model
        self.server_address = server_address
        self.server_port = server_port
        self.requests: list[ProviderRequest] = []

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        self.requests.append(request)
        step = self.steps.pop(0)
        if isinstance(step, ProviderError):
            raise step
        if isinstance(step, Dropped):
            await self._stream(step.text, request)
            raise step.error
        await self._stream(step.text, request)
        return step

    async def _stream(self, text: str, request: ProviderRequest) -> None:
        if self.piece is None or request.on_text is None:
            return
        for i in range(0, len(text), self.piece):
            request.on_text(text[i : i + self.piece])
            await asyncio.sleep(0)


class Sleeps:
    """A `RetryPolicy.sleep` that records each wait and does not wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


def http(status: int, error_type: str | None = None, retry_after: float | None = None):
    return ProviderHTTPError(
        "openai", error_type or f"http_{status}", status=status, retry_after=retry_after
    )


def answer(text: str = "Paris is 18C.", **fields: Any) -> ProviderResponse:
    return ProviderResponse(text=text, usage=Usage(input_tokens=10, output_tokens=5), **fields)


def build(
    provider: Provider,
    *,
    observer: RecordingObserver | None = None,
    sleep: Any = None,
    data: dict[str, Any] | None = None,
) -> Replay:
    """A turn's runtime with `provider` behind the seam and a policy that never sleeps."""
    scenario = data or {"user": "weather in Paris?", "responses": [{"text": "unused"}]}
    replay = make_replay(scenario, observer=observer or RecordingObserver())
    policy = RetryPolicy(sleep=sleep or Sleeps(), jitter=lambda: 0.5)
    replay.execution = dataclasses.replace(replay.execution, provider=provider, retry=policy)
    return replay


SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


WEATHER = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "responses": [
        {"when": {"city": "Paris"}, "output": "18C"},
        {"when": {"city": "Leaky"}, "output": f"18C token={SECRET}"},
        {"default": {"error": "city not found"}},
    ],
}


DEPLOY = {
    "name": "deploy",
    "parameters": {"type": "object", "properties": {"target": {"type": "string"}}},
    "responses": [{"default": {"output": "deployed"}}],
}


ECHO = {
    "name": "echo",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    "responses": [{"default": {"output": "same"}}],
}


def call(name: str, cid: str, **arguments: object) -> dict:
    return {"id": cid, "name": name, "arguments": arguments}


def mixed_turn(**config: Any) -> dict[str, Any]:
    """One round with a success, an error, an invented tool and a denied call, then text."""
    return {
        "user": "go",
        "config": {
            "approval": {"auto_approve": ["get_weather"], "answers": ["no"]},
            **config,
        },
        "tools": [WEATHER, DEPLOY],
        "responses": [
            {
                "tool_calls": [
                    call("get_weather", "c1", city="Paris"),
                    call("get_weather", "c2", city="Atlantis"),
                    call("made_up_tool", "c3"),
                    call("deploy", "c4", target="prod"),
                ],
                "usage": {"input_tokens": 100, "output_tokens": 20},
            },
            {"text": "done", "usage": {"input_tokens": 150, "output_tokens": 5}},
        ],
    }


class HashSpanIds:
    """Deterministic span ids: the trace id hashes the turn id, the span id the call id (the
    root's is the hash of `root`). A span step for `TelemetryChain`: tool events (and a loop
    detection on a call) belong to the call's span, every other event to the root."""

    def record(self, event: Any) -> EventIds:
        turn = event.correlation.turn_id
        call = None if isinstance(event, ApprovalDecision) else getattr(event, "tool_call_id", None)
        span = self.ids_for(turn, call) if call else None
        return EventIds(self.ids_for(turn), span)

    def ids_for(self, turn_id: str, tool_call_id: str | None = None) -> tuple[str, str] | None:
        return self.trace_id(turn_id), self.span_id(tool_call_id)

    @staticmethod
    def trace_id(turn_id: str) -> str:
        return hashlib.blake2b(turn_id.encode(), digest_size=16).hexdigest()

    @staticmethod
    def span_id(tool_call_id: str | None) -> str:
        return hashlib.blake2b((tool_call_id or "root").encode(), digest_size=8).hexdigest()


def _in_turn_t1(**fields: Any) -> dict[str, Any]:
    """An event's fields in iteration 1 of turn `t1` (agent `a`, channel `cli`)."""
    correlation = Correlation(turn_id="t1", channel="cli", agent_alias="a")
    return {"correlation": correlation, "iteration": 1, **fields}


def llm_response(**overrides: Any) -> LlmResponse:
    defaults = dict(provider="openai", model="gpt", success=True, time_ns=1, duration_s=0.5)
    return LlmResponse(**_in_turn_t1(**{**defaults, **overrides}))


def tool_call_event(outcome: ToolOutcome = ToolOutcome.SUCCESS, **overrides: Any) -> ToolCall:
    """A `ToolCall` event: call `c1` of tool `echo` in turn `t1`, 0.1 s; `overrides` replace
    any field."""
    defaults = dict(
        tool_call_id="c1",
        tool="echo",
        known_tool=True,
        provenance="native",
        outcome=outcome,
        success=outcome is ToolOutcome.SUCCESS,
        arguments="{}",
        result="ok",
        start_time_ns=1,
        time_ns=2,
        duration_s=0.1,
    )
    return ToolCall(**_in_turn_t1(**{**defaults, **overrides}))


class Traced:
    """A provider with an in-memory exporter and a span observer on it."""

    def __init__(self, capture: ContentCapture = ContentCapture.REDACTED, **kwargs) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.health = TelemetryHealth()
        self.observer = SpanObserver(self.provider, capture=capture, health=self.health, **kwargs)

    @property
    def spans(self) -> tuple[ReadableSpan, ...]:
        """The finished spans, once the observer's worker has built every recorded one."""
        assert self.observer.force_flush(5.0)
        return self.exporter.get_finished_spans()

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans if s.name.startswith(prefix)]

    def root(self) -> ReadableSpan:
        (root,) = self.named("invoke_agent")
        return root

    def tool(self, call_id: str) -> ReadableSpan:
        (span,) = [
            s for s in self.named("execute_tool") if s.attributes["gen_ai.tool.call.id"] == call_id
        ]
        return span


class Seen(SpanProcessor):
    """A user's processor: notes every span it is shown at start and at end."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.ended: list[str] = []

    def on_start(self, span, parent_context=None) -> None:
        self.started.append(span.name)

    def on_end(self, span) -> None:
        self.ended.append(span.name)


class RaisingExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        raise ConnectionError("collector down")


def completion(text: str | None = None, calls: list[tuple[str, str, dict]] | None = None) -> dict:
    """A non-streamed Chat Completions body, in the shape the OpenAI API returns."""
    message: dict = {"role": "assistant", "content": text, "refusal": None}
    if calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for call_id, name, arguments in calls
        ]
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4.1-mini-2025-04-14",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29},
    }


R = "Zq8Wx7Vc6Bn5Ml4KpL0o9I8uYt6R"


FRAGMENTS = [
    "gh" + "p_" + R + "AbCdEfGh",
    "gh" + "p_",
    "sk-" + "proj-" + R + "T3BlbkFJ" + R,
    "sk-",
    "xo" + "xb-123456789012-1234567890123-" + R[:24],
    "AK" + "IAZ7Q3RXPL4MWN2VBT",
    "gl" + "pat-" + R[:20],
    "AI" + "za" + R + "AbCdEfG",
    "eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fw",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "MIIEowIBAAKCAQEAx9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Yz7",
    "+1 (555) 123-4567",
    "555-123-4567",
    "phone: ",
    "4111 1111 1111 1111",
    "jane.doe@example.com",
    "10.1.2.3",
    "fe80::1",
    "123-45-6789",
    "DE89370400440532013000",
    "password=",
    "token: ",
    '"api_key": "',
    "Authorization: Bearer ",
    "Basic dXNlcjpwYXNz",
    "postgres://app:",
    "@db:5432/x",
    "--password ",
    "-p",
    "mysql -u root -p",
    "secret ",
    "\\\n",
    "\\\\\\n",
    "\\n",
    "[REDACTED:github_token]",
    "[REDACTED:",
    "%3D",
    "=",
    "_",
    "-",
    ".",
    "/",
    ":",
    " ",
    "\n",
    '"',
    "'",
    "{",
    "}",
    "1.79e+09",
    "\u200b",
    "\ud800",
    "\x00",
    "\x1b[31m",
    "ａ",
]


TEXT = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.text(max_size=12),
        st.text(alphabet="0123456789 -().+", max_size=16),
        st.text(alphabet="abcXYZ019_-./=:", max_size=16),
    ),
    max_size=12,
).map("".join)


def chained(spans: Any, *signals: Any) -> TelemetryChain:
    """The telemetry chain as the runtime builds it: `spans` first, then every signal."""
    return TelemetryChain(spans, signals)


class SeenRedactor:
    """A `Redactor` that counts how often it is asked about each string (`seen`)."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self._redactor = Redactor()

    def redact_text(self, s: str) -> str:
        self.seen[s] = self.seen.get(s, 0) + 1
        return self._redactor.redact_text(s)
