"""`event_ids` routes each event to the lookup that answers for its span."""

from __future__ import annotations

from zeroclaw_obs.observability.events import EventIds, LlmRequest, LoopDetection
from zeroclaw_obs.observability.traces.event_ids import event_ids

from ...builders import _in_turn_t1, llm_response, tool_call_event

ROOT = ("t" * 32, "r" * 16)
CHAT = ("t" * 32, "c" * 16)


class Lookups:
    """A `SpanIds` that names the lookup and arguments it was asked."""

    def ids_for(self, turn_id: str, tool_call_id: str | None = None) -> tuple[str, str]:
        return ROOT if tool_call_id is None else ("ids_for", f"{turn_id}/{tool_call_id}")

    def chat_ids_for(self, turn_id: str, iteration: int) -> tuple[str, str]:
        return "chat_ids_for", f"{turn_id}/{iteration}"

    def approval_ids_for(self, turn_id: str, tool_call_id: str) -> tuple[str, str]:
        return "approval_ids_for", f"{turn_id}/{tool_call_id}"


def loop(tool_call_id: str) -> LoopDetection:
    return LoopDetection(
        **_in_turn_t1(
            tool_call_id=tool_call_id,
            tool="echo",
            kind="repeat",
            severity="warning",
            message="m",
            time_ns=1,
        )
    )


class TestEventIds:
    def test_each_event_is_answered_by_the_lookup_for_its_span(self):
        request = LlmRequest(
            **_in_turn_t1(provider="openai", model="gpt", message_count=1, tool_count=0, time_ns=1)
        )
        assert [
            EventIds(ROOT, ("ids_for", "t1/c1")),
            EventIds(ROOT, ("chat_ids_for", "t1/1")),
            EventIds(ROOT, ("ids_for", "t1/c2")),
            EventIds(ROOT, None),
        ] == [
            event_ids(tool_call_event(), Lookups(), None),
            event_ids(request, Lookups(), None),
            event_ids(loop("c2"), Lookups(), None),
            event_ids(loop(""), Lookups(), None),
        ]

    def test_a_provider_calls_end_takes_the_chat_ids_read_before_it_closed(self):
        """The `chat` span is closed by then: the ids come from the caller, not a lookup."""
        assert EventIds(ROOT, CHAT) == event_ids(llm_response(), Lookups(), CHAT)
