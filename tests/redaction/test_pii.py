"""Tests for the personal-data rules (`_pii.py`), on by default and switched off together."""

from __future__ import annotations

import pytest

from zeroclaw_obs.redaction import Redactor


def _redact(text: str) -> str:
    return Redactor().redact_text(text)


class TestEmail:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("mail jane.doe+agents@example.co.uk today", "mail [REDACTED:email] today"),
            ("Author: Maria <maria_garcia7@uni-berlin.de>", "Author: Maria <[REDACTED:email]>"),
            ("id,email\n1,Fatima.haddad@gmail.com\n", "id,email\n1,[REDACTED:email]\n"),
        ],
    )
    def test_addresses_are_replaced(self, text: str, expected: str) -> None:
        """E-mail addresses in prose, headers and CSV are replaced."""
        assert expected == _redact(text)

    @pytest.mark.parametrize(
        "text",
        [
            "user@localhost, @decorator, a@b",
            "icon@2x.png and logo@3x.webp",
            "git@github.com:org/repo.git",
            "npm install @types/node@20.11.5",
            "image@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
        ],
    )
    def test_look_alikes_are_kept(self, text: str) -> None:
        """Hosts without a domain, retina images, git remotes and versions are not e-mails."""
        assert text == _redact(text)


class TestPaymentCard:
    @pytest.mark.parametrize(
        "card",
        [
            "4111111111111111",
            "4111 1111 1111 1111",
            "5555-5555-5555-4444",
            "3782 822463 10005",
            "6011111111111117",
            "3530111333300000",
            "30569309025904",
            "3056 9309 0259 04",
            "6200000000000005",
        ],
    )
    def test_luhn_valid_cards_are_replaced(self, card: str) -> None:
        """Luhn-valid numbers of every major network, bare or grouped, are replaced."""
        assert "card [REDACTED:payment_card]," == _redact(f"card {card},")

    @pytest.mark.parametrize(
        "text",
        [
            "Order #4111111111111112 shipped",
            "ts=1733212800000 and 1733212800000123",
            "amount 12345678901234.50 EUR",
            "id 123456789012345678901234",
        ],
    )
    def test_non_cards_are_kept(self, text: str) -> None:
        """Numbers failing Luhn, timestamps, decimals and longer digit runs are kept."""
        assert text == _redact(text)


class TestIban:
    @pytest.mark.parametrize(
        "iban",
        ["DE89370400440532013000", "GB82 WEST 1234 5698 7654 32", "FR1420041010050500013M02606"],
    )
    def test_mod97_valid_ibans_are_replaced(self, iban: str) -> None:
        """IBANs that pass mod-97 for their country are replaced, compact or grouped."""
        assert "pay to [REDACTED:iban] now" == _redact(f"pay to {iban} now")

    def test_bad_checksum_is_kept(self) -> None:
        """An IBAN-shaped string whose mod-97 check fails is kept."""
        text = "validation failed: DE88370400440532013000 is not a valid IBAN"

        assert text == _redact(text)


class TestUsSsn:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("SSN: 123-45-6789\n", "SSN: [REDACTED:us_ssn]\n"),
            (
                "social security number 078051120 on file",
                "social security number [REDACTED:us_ssn] on file",
            ),
        ],
    )
    def test_ssns_are_replaced(self, text: str, expected: str) -> None:
        """Dashed SSNs anywhere, and bare 9 digits after an SSN label, are replaced."""
        assert expected == _redact(text)

    @pytest.mark.parametrize("text", ["000-12-3456 666-12-3456", "2026-12-03", "ref 123-45-67890"])
    def test_invalid_and_other_shapes_are_kept(self, text: str) -> None:
        """Never-issued ranges, dates and longer runs are not SSNs."""
        assert text == _redact(text)


class TestPhoneNumber:
    @pytest.mark.parametrize(
        "phone",
        [
            "+1 (555) 123-4567",
            "(555) 123-4567",
            "555.123.4567",
            "+44 20 7946 0958",
            "+49 151 12345678",
            "+33 6 12 34 56 78",
            "+81 3-1234-5678",
            "+14155552671",
        ],
    )
    def test_phone_numbers_are_replaced(self, phone: str) -> None:
        """North-American and international numbers are replaced."""
        assert "call [REDACTED:phone_number] now" == _redact(f"call {phone} now")

    def test_labelled_digits_are_replaced(self) -> None:
        """Digits after a phone label are a phone number even without separators."""
        assert "phone: [REDACTED:phone_number]" == _redact("phone: 5551234567")

    @pytest.mark.parametrize(
        "text",
        [
            "2026-12-03 10:00:00 version 1.2.3",
            "request 4f1c2b7a-9d3e-4c1b-8a2f-0e5d6c7b8a9f",
            "otel trace_id=4422ac11c4ca618fbea57f38b1d54e41",
            "+3.14159265 and 2024-05-01T12:00:00+0000",
            "order 123-456-78901",
        ],
    )
    def test_dates_versions_and_ids_are_kept(self, text: str) -> None:
        """Timestamps, versions, UUIDs, trace ids, decimals and longer numbers are kept."""
        assert text == _redact(text)


class TestIpAddress:
    @pytest.mark.parametrize(
        "address",
        [
            "10.0.0.1",
            "203.0.113.7",
            "2001:db8::1",
            "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
            "2A03:2880:F12F:83:FACE:B00C:0:25DE",
        ],
    )
    def test_addresses_are_replaced(self, address: str) -> None:
        """IPv4 and IPv6 addresses, full, compressed or upper-case, are replaced."""
        assert "from [REDACTED:ip_address] ok" == _redact(f"from {address} ok")

    @pytest.mark.parametrize(
        "text",
        [
            "v1.2.3 and 1.2.3 and 2026.12.03",
            "127.0.0.1 0.0.0.0 ::1",
            "10:00:00 00:1a:2b:3c:4d:5e std::vector a::b",
            "oid 1.3.6.1.4.1.311 and GET /v2.14.1/docs",
        ],
    )
    def test_versions_times_and_local_addresses_are_kept(self, text: str) -> None:
        """Versions, dates, OIDs, times, MACs, code and loopback addresses are kept."""
        assert text == _redact(text)


class TestPiiSwitch:
    def test_pii_off_keeps_personal_data(self) -> None:
        """With `pii=False` no personal-data rule runs and none is listed."""
        redactor = Redactor.from_config(pii=False)
        text = (
            "bob@example.com 4111111111111111 DE89370400440532013000 123-45-6789 "
            "+1 (555) 123-4567 10.0.0.1"
        )

        assert (text, set()) == (
            redactor.redact_text(text),
            {"email", "payment_card", "iban", "us_ssn", "phone_number", "ip_address"}
            & set(redactor.rule_ids),
        )

    def test_pii_off_still_catches_secrets(self) -> None:
        """Secrets are still replaced when personal data is switched off."""
        assert "password=[REDACTED:key_value] bob@example.com" == Redactor.from_config(
            pii=False
        ).redact_text("password=hunter2x bob@example.com")
