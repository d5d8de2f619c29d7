"""`CleanTextCache`: what the redactor is known to leave unchanged, shared by the span guard
and the log chain (bounded; never a string that changed)."""

from __future__ import annotations

import pytest

from zeroclaw_obs.redaction import CleanTextCache, Redactor

from ..builders import SeenRedactor

SECRET = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
MASK = "[REDACTED:github_token]"


class TestCleanTextCache:
    def test_a_clean_string_is_scanned_once(self):
        """A string the redactor left unchanged is answered from memory afterwards."""
        counting = SeenRedactor()
        cache = CleanTextCache(counting)
        assert ["execute_tool x"] * 3 == [cache.redact_text("execute_tool x") for _ in range(3)]
        assert {"execute_tool x": 1} == counting.seen

    def test_a_string_that_changed_is_never_remembered(self):
        """A string with a secret is scanned, and redacted, every time it comes back."""
        counting = SeenRedactor()
        cache = CleanTextCache(counting)
        assert [f"x {MASK}"] * 3 == [cache.redact_text(f"x {SECRET}") for _ in range(3)]
        assert ({f"x {SECRET}": 3}, False) == (counting.seen, cache.is_clean(f"x {SECRET}"))

    def test_long_strings_are_not_remembered(self):
        """Strings longer than `max_length` are scanned every time."""
        counting = SeenRedactor()
        cache = CleanTextCache(counting, max_length=8)
        for _ in range(2):
            cache.redact_text("a longer text")
        assert {"a longer text": 2} == counting.seen

    @pytest.mark.parametrize("bound", [{"max_entries": 2}, {"max_chars": 10}])
    def test_memory_is_bounded(self, bound):
        """Two generations at most (by entries or by characters): past the bound the oldest
        strings are forgotten, the newest kept."""
        cache = CleanTextCache(Redactor(), **bound)
        for word in ("alpha", "bravo", "charlie", "delta", "echo"):
            cache.redact_text(word)
        assert (True, False) == (cache.is_clean("echo"), cache.is_clean("alpha"))

    def test_a_string_in_use_is_carried_over(self):
        """A string found in the old generation moves to the young one and survives the next."""
        cache = CleanTextCache(Redactor(), max_entries=2)
        for word in ("alpha", "bravo", "charlie"):  # alpha, bravo → old; charlie → young
            cache.redact_text(word)
        assert cache.is_clean("alpha")  # carried into the young generation
        for word in ("delta", "echo"):  # the young one fills: alpha stays, bravo goes
            cache.redact_text(word)
        assert (True, False) == (cache.is_clean("alpha"), cache.is_clean("bravo"))
