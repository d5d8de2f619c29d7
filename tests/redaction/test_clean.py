"""`CleanTextCache`: what the redactor is known to leave unchanged, shared by the span guard
and the log chain (bounded; never a string that changed)."""

from __future__ import annotations

import pytest

from zeroclaw_obs.redaction import CleanTextCache, KnownTexts, Redactor

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
        cache = CleanTextCache(SeenRedactor(), **bound)
        for word in ("alpha", "bravo", "charlie", "delta", "echo"):
            cache.redact_text(word)
        assert (True, False) == (cache.is_clean("echo"), cache.is_clean("alpha"))

    def test_a_string_in_use_is_carried_over(self):
        """A string found in the old generation moves to the young one and survives the next."""
        cache = CleanTextCache(SeenRedactor(), max_entries=2)
        for word in ("alpha", "bravo", "charlie"):  # alpha, bravo → old; charlie → young
            cache.redact_text(word)
        assert cache.is_clean("alpha")  # carried into the young generation
        for word in ("delta", "echo"):  # the young one fills: alpha stays, bravo goes
            cache.redact_text(word)
        assert (True, False) == (cache.is_clean("alpha"), cache.is_clean("bravo"))


class TestRedactorOutputs:
    """Each `Redactor` remembers the texts it returned (bounded): the surfaces that redact
    again skip exactly those, and scan everything else."""

    def test_an_output_is_clean_for_a_cache_in_front_of_its_redactor(self):
        """A text the engine redacted (a result with a secret in it) is clean for the span
        guard and the log chain without another scan; the raw text is not."""
        redactor = Redactor()
        result = redactor.redact_text(f"deploy key {SECRET} rotated")
        cache = CleanTextCache(redactor)
        assert (True, False) == (cache.is_clean(result), cache.is_clean(f"key {SECRET}"))
        assert f"deploy key {MASK} rotated" == cache.redact_text(result)

    def test_only_the_very_output_is_skipped(self):
        """A text holding an output, or an output with a secret appended, is scanned whole:
        the secret is still caught."""
        redactor = Redactor()
        result = redactor.redact_text("nothing secret here")
        cache = CleanTextCache(redactor)
        smuggled = f"{result} {SECRET}"
        assert (False, f"nothing secret here {MASK}") == (
            cache.is_clean(smuggled),
            cache.redact_text(smuggled),
        )

    def test_a_report_remembers_its_output_and_counts_nothing_for_one(self):
        redactor = Redactor()
        out, counts = redactor.redact_text_report(f"x {SECRET}")
        assert ({"github_token": 1}, True) == (counts, redactor.is_output(out))
        assert (out, {}) == redactor.redact_text_report(out)

    def test_a_marked_text_is_an_output_and_a_receipt_is_not_remembered(self):
        """`mark_clean` is how the engine vouches for text built from outputs; receipts (fresh
        on every call, never changed) are returned without a scan and not kept."""
        redactor = Redactor()
        arguments = redactor.mark_clean('{"path": "a.txt"}')
        receipt = "zc-receipt-1712345678-" + "a" * 43
        assert (True, receipt) == (redactor.is_output(arguments), redactor.redact_text(receipt))
        assert not redactor.is_output(receipt)

    def test_a_lone_surrogate_is_never_an_output(self):
        """The span steps must see such a string to escape it."""
        redactor = Redactor()
        text = redactor.redact_text("half \ud800 a pair")
        assert not redactor.is_output(text)
        assert not CleanTextCache(redactor).unchanged(text)

    def test_the_memory_is_bounded_over_a_long_run(self):
        """10,000 calls' worth of fresh ids and 1 KB results: the redactor keeps at most two
        generations, by entries and by characters."""
        redactor = Redactor()
        outputs = redactor.outputs
        for i in range(10_000):
            redactor.redact_text(f"call_{i:08d}")
            redactor.redact_text(f"result {i} " + "x" * 1000)
        assert len(outputs) <= 2 * 16384
        assert outputs.chars <= 2 * (4 << 20)
        assert redactor.is_output(f"result {9_999} " + "x" * 1000)
        assert not redactor.is_output(f"call_{0:08d}")

    def test_per_redactor_not_global(self):
        first, second = Redactor(), Redactor()
        text = first.redact_text("only the first saw this")
        assert (True, False) == (first.is_output(text), second.is_output(text))


class TestKnownTexts:
    def test_two_generations_at_most(self):
        known = KnownTexts(max_entries=2)
        for word in ("alpha", "bravo", "charlie", "delta", "echo"):
            known.add(word)
        assert (3, True, False) == (len(known), "echo" in known, "alpha" in known)

    def test_long_strings_are_never_kept(self):
        known = KnownTexts(max_length=4)
        known.add("longer")
        assert "longer" not in known
