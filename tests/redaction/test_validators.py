"""Tests for the Python checks that refine RE2 candidates (`_validators.py`)."""

from __future__ import annotations

import base64

import pytest

from zeroclaw_obs.redaction._validators import (
    card_span,
    decode_base64_text,
    iban_span,
    is_ipv4,
    is_ipv6,
    is_measurement,
    is_phone,
    is_placeholder,
    is_ssn,
    is_uuid,
    looks_random,
    luhn_ok,
)


class TestLuhn:
    @pytest.mark.parametrize(
        ("digits", "expected"),
        [("4111111111111111", True), ("4111111111111112", False), ("378282246310005", True)],
    )
    def test_luhn_checksum(self, digits: str, expected: bool) -> None:
        """Luhn accepts valid card numbers and refuses a changed check digit."""
        assert expected == luhn_ok(digits)


class TestCardSpan:
    @pytest.mark.parametrize(
        "card", ["4111111111111111", "4111 1111 1111 1111", "3782-822463-10005", "30569309025904"]
    )
    def test_valid_cards_are_accepted_whole(self, card: str) -> None:
        """Bare and grouped numbers with an issuer prefix and a good Luhn digit are cards."""
        assert (0, len(card)) == card_span(card, 0, len(card))

    @pytest.mark.parametrize(
        "number",
        ["4111111111111112", "1733212800000123", "0000000000000000", "4111 1111-1111 1111"],
    )
    def test_non_cards_are_refused(self, number: str) -> None:
        """Bad Luhn, no issuer prefix, one repeated digit or mixed separators are not cards."""
        assert None is card_span(number, 0, len(number))

    def test_trailing_group_is_dropped_when_it_breaks_the_check(self) -> None:
        """A year swallowed after a grouped card is trimmed off."""
        text = "4111 1111 1111 1111 202"

        assert (0, 19) == card_span(text, 0, len(text))


class TestIbanSpan:
    def test_valid_iban_grouped_and_followed_by_a_word(self) -> None:
        """A grouped IBAN is cut to its country's length, so a currency after it stays."""
        text = "DE89 3704 0044 0532 0130 00 EUR"

        assert (0, 27) == iban_span(text, 0, len(text))

    @pytest.mark.parametrize("text", ["DE88370400440532013000", "XX89370400440532013000"])
    def test_bad_checksum_or_country_is_refused(self, text: str) -> None:
        """A mod-97 failure or an unknown country code is not an IBAN."""
        assert None is iban_span(text, 0, len(text))


class TestIdentityNumbers:
    @pytest.mark.parametrize(
        ("ssn", "expected"),
        [("123-45-6789", True), ("000-12-3456", False), ("666-12-3456", False), ("900-1-2", False)],
    )
    def test_ssn_ranges(self, ssn: str, expected: bool) -> None:
        """Never-issued areas, groups and serials are not SSNs."""
        assert expected == is_ssn(ssn)

    @pytest.mark.parametrize(
        ("address", "expected"),
        [
            ("10.0.0.1", True),
            ("8.8.8.8", True),
            ("127.0.0.1", False),
            ("1.2.3", False),
            ("256.1.1.1", False),
            ("01.02.03.04", False),
            ("0.0.0.0", False),
        ],
    )
    def test_ipv4(self, address: str, expected: bool) -> None:
        """Dotted quads are addresses; loopback, unspecified, out-of-range and versions are not."""
        assert expected == is_ipv4(address)

    @pytest.mark.parametrize(
        ("address", "expected"),
        [
            ("2001:db8::1", True),
            ("2001:0db8:85a3:0000:0000:8a2e:0370:7334", True),
            ("::1", False),
            ("10:00:00", False),
            ("00:1a:2b:3c:4d:5e", False),
            ("d::", False),
        ],
    )
    def test_ipv6(self, address: str, expected: bool) -> None:
        """IPv6 needs `::` or eight groups and a digit; times, MACs and `std::` are not IPs."""
        assert expected == is_ipv6(address)

    @pytest.mark.parametrize(
        ("phone", "context", "expected"),
        [
            ("+44 20 7946 0958", False, True),
            ("(555) 123-4567", False, True),
            ("+3.14159265", False, False),
            ("555-1234", False, False),
            ("5551234", True, True),
        ],
    )
    def test_phone(self, phone: str, context: bool, expected: bool) -> None:
        """Phone shapes need enough digits; a signed decimal is not a phone number."""
        assert expected == is_phone(phone, context=context)


class TestLooksRandom:
    @pytest.mark.parametrize(
        "token", ["Zq8Wx7Vc6Bn5Ml4KpL0o9I8u", "4f8a9b2c7d1e6f3a5b0c8d7e2f1a9b4c"]
    )
    def test_generated_tokens_look_random(self, token: str) -> None:
        """Mixed-case alphanumerics and 32+ hex characters look generated."""
        assert True is looks_random(token)

    @pytest.mark.parametrize(
        "value",
        [
            "4f1c2b7a-9d3e-4c1b-8a2f-0e5d6c7b8a9f",
            "completion_tokens_total",
            "12345678901234567890",
            "3f786850e387550",
            "secret/data/prod/db-password",
            "aaaaaaaaaaaaaaaaaaaa1",
        ],
    )
    def test_ids_words_and_paths_do_not(self, value: str) -> None:
        """UUIDs, identifiers, numbers, short hex, paths and repetitive strings are not tokens."""
        assert False is looks_random(value)

    def test_uuid_shape(self) -> None:
        """The canonical 8-4-4-4-12 form is recognised as a UUID."""
        assert (True, False) == (
            is_uuid("4f1c2b7a-9d3e-4c1b-8a2f-0e5d6c7b8a9f"),
            is_uuid("4f1c2b7a9d3e4c1b8a2f0e5d6c7b8a9f"),
        )


class TestPlaceholder:
    @pytest.mark.parametrize(
        "value",
        ["${DB_PASSWORD}", "$DB_PASSWORD", "{{ vault_pw }}", "<your-token>", "****", "null", "%s"],
    )
    def test_references_and_masks_are_placeholders(self, value: str) -> None:
        """Variable references, templates, masks and literals are not secrets."""
        assert True is is_placeholder(value)

    @pytest.mark.parametrize("value", ["hunter2", "changeme", "$ecr3t!", "password1"])
    def test_real_values_are_not(self, value: str) -> None:
        """Ordinary passwords, weak ones included, are not placeholders."""
        assert False is is_placeholder(value)


class TestMeasurement:
    @pytest.mark.parametrize(
        "value", ["1.79e+09", "1700000000.5", "0.25", "-3", "+12", "12", "0", "NaN", "+Inf", "2E-7"]
    )
    def test_floats_signed_numbers_and_small_counts_are_measurements(self, value: str) -> None:
        """Decimals, exponents, signed numbers, non-finite values and counts under 1000."""
        assert True is is_measurement(value)

    @pytest.mark.parametrize("value", ["1234", "482913", "1700000000", "1.2.3", "0x1f", "12a", ""])
    def test_long_integers_and_other_shapes_are_not(self, value: str) -> None:
        """Four or more bare digits may be a PIN, a numeric password or a numeric token."""
        assert False is is_measurement(value)


class TestDecodeBase64Text:
    def test_printable_text_decodes(self) -> None:
        """Standard and URL-safe base64 of printable text decode, padded or not."""
        text = "password=hunter2&user=bob"
        std = base64.b64encode(text.encode()).decode()
        url = base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

        assert (text, text) == (decode_base64_text(std), decode_base64_text(url))

    @pytest.mark.parametrize(
        "blob",
        [
            base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(40))).decode(),
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
            "aGVsbG8",
        ],
    )
    def test_binary_digests_and_short_runs_do_not(self, blob: str) -> None:
        """Images, hex digests and runs too short to hold a secret decode to nothing."""
        assert None is decode_base64_text(blob)
