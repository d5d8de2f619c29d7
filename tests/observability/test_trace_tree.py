"""The terminal trace view: provider calls in the tree, with their retries and failures."""

from __future__ import annotations

from zeroclaw_obs.observability.trace_tree import TraceTreeObserver

from ..builders import PlayedProvider, answer, build, http


class TestChatLines:
    async def test_retries_are_counted_on_the_chat_line(self):
        """A call that needed retries says how many, after its tokens."""
        tree = TraceTreeObserver()
        provider = PlayedProvider(http(503), http(503), answer())
        await build(provider, observer=tree).run()
        (chat,) = [line for line in tree.render().splitlines() if "chat " in line]
        assert chat.endswith("10→5 tokens  2 retries")

    async def test_a_failed_call_names_its_error_type(self):
        """The last error's type is on the line of the call that failed."""
        tree = TraceTreeObserver()
        provider = PlayedProvider(http(429, "rate_limit_error"), max_retries=0)
        await build(provider, observer=tree).run()
        (chat,) = [line for line in tree.render().splitlines() if "chat " in line]
        assert chat.endswith("0→0 tokens  failed (rate_limit_error)")
        assert tree.render().splitlines()[0].startswith("invoke_agent ")
