"""Tests for encoded secrets (`_encoded.py`): base64 blobs and URL-encoded text."""

from __future__ import annotations

import base64
import json
import urllib.parse

import pytest

from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.redaction._encoded import percent_decode

GH = "gh" + "p_Xa9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8"
PW = "Zq8Wx7Vc6Bn5Ml4K"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class TestEncodedSecret:
    @pytest.mark.parametrize(
        "inner",
        [
            f"password={PW}",
            f"ci-bot:{GH}",
            f'{{"user": "svc", "api_key": "{PW}"}}',
            f"postgres://app:{PW}@db:5432/orders",
        ],
    )
    def test_base64_of_a_secret_is_replaced_whole(self, inner: str) -> None:
        """A base64 run that decodes to text holding a secret becomes `encoded_secret`."""
        text = f"data: {_b64(inner)} end"

        assert ("data: [REDACTED:encoded_secret] end", {"encoded_secret": 1}) == (
            Redactor().redact_text_report(text)
        )

    def test_base64url_without_padding(self) -> None:
        """URL-safe base64 without padding is decoded too."""
        blob = base64.urlsafe_b64encode(f"token={PW}?".encode()).decode().rstrip("=")

        assert "x=[REDACTED:encoded_secret]" == Redactor().redact_text(f"x={blob}")

    def test_wrapped_base64_is_replaced_across_lines(self) -> None:
        """Base64 wrapped at a fixed width is one blob: every line of it goes."""
        blob = _b64(f"REGION=eu-west-1\nSTRIPE_KEY={'sk' + '_live_51' + PW * 2}\nLOG=info\n")
        wrapped = "\n".join(blob[i : i + 60] for i in range(0, len(blob), 60))

        assert "content:\n[REDACTED:encoded_secret]\nnext: 1" == Redactor().redact_text(
            f"content:\n{wrapped}\nnext: 1"
        )

    @pytest.mark.parametrize(
        "blob",
        [
            base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).decode(),
            _b64("just some harmless configuration text, nothing secret in it"),
            "sha512-" + base64.b64encode(bytes(range(64))).decode(),
        ],
    )
    def test_data_blobs_without_secrets_are_kept(self, blob: str) -> None:
        """Images, harmless text and integrity hashes in base64 are kept."""
        text = f"![img](data:image/png;base64,{blob})"

        assert text == Redactor().redact_text(text)


class TestEncodedTrigger:
    """The trigger asks for the plausible shape only where a run can start (see
    `EncodedSecretRule.trigger`): gated and ungated scans must still agree wherever a run
    starts, a receipt's end included (receipts are blanked out before the rules run)."""

    RECEIPT = "zc-receipt-12-" + "B" * 43
    BLOB = _b64(f"password={PW} and more")

    def test_base64_right_after_a_receipt_is_replaced(self) -> None:
        """A receipt's characters continue the run in the text, yet the blob after it is
        found once the receipt is blanked: the trigger must trip there too."""
        text = f"x {self.RECEIPT}{self.BLOB} y"

        assert f"x {self.RECEIPT}[REDACTED:encoded_secret] y" == Redactor().redact_text(text)

    @pytest.mark.parametrize(
        "before",
        [
            "",
            " ",
            "=",
            "==",
            ":",
            "\n",
            "\\n",
            "\0",
            "\n\0\n",
            "é",
            "[REDACTED:email]",
            "zc-receipt-1-" + "C" * 43,
            "zc-receipt-1-" + "C" * 42,
            "ab",
            "a" * 19,
            "+/_-",
        ],
    )
    @pytest.mark.parametrize(
        "after", ["", " ", "==", "=x", "\nQUJD", "\nQUJDRUZH", "\\nQUJDRUZH", "é"]
    )
    def test_gated_scan_agrees_with_running_every_rule(self, before: str, after: str) -> None:
        """Blobs (a secret's, and harmless text's) after every kind of neighbour, alone, wrapped
        and twice in a row: the gate skips the rule only where it would find nothing."""
        scanner = Redactor()._scanner
        harmless = _b64("just some harmless configuration text")
        wrapped = "\n".join(self.BLOB[i : i + 24] for i in range(0, len(self.BLOB), 24))
        for blob in (self.BLOB, harmless, wrapped, self.BLOB + self.BLOB, self.BLOB[1:]):
            text = before + blob + after
            assert scanner.scan(text, ungated=True) == scanner.scan(text)


class TestPercentEncoded:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (f"q=password%3D{PW}%26user%3Dbob", "q=password%3D[REDACTED:key_value]%26user%3Dbob"),
            (
                "data=" + urllib.parse.quote(json.dumps({"api_key": PW}), safe=""),
                "data=%7B%22api_key%22%3A%20%22[REDACTED:key_value]%22%7D",
            ),
            (
                "next=" + urllib.parse.quote(f"https://x/cb?access_token={PW}&s=1", safe=""),
                "next=https%3A%2F%2Fx%2Fcb%3Faccess_token%3D[REDACTED:key_value]%26s%3D1",
            ),
            ("u=bob%40example.com", "u=[REDACTED:email]"),
        ],
    )
    def test_secret_inside_encoding_is_replaced_in_place(self, text: str, expected: str) -> None:
        """The encoded secret is replaced where it sits, under its own rule id."""
        assert expected == Redactor().redact_text(text)

    def test_encoded_secret_value_is_replaced_whole(self) -> None:
        """A value with escapes inside (`abc%2Bdef`) is replaced escapes and all."""
        assert "client_secret=[REDACTED:key_value]&x=1" == Redactor().redact_text(
            f"client_secret={PW}%2B%2F%3D&x=1"
        )

    def test_plain_encoded_urls_are_kept(self) -> None:
        """URL-encoded text with nothing secret in it is kept."""
        text = "GET /search?q=caf%C3%A9%20au%20lait&page=2"

        assert text == Redactor().redact_text(text)


class TestPercentDecode:
    @pytest.mark.parametrize(
        ("text", "decoded", "starts"),
        [
            ("a%41b", "aAb", [0, 1, 4, 5]),
            ("%zz%41", "%zzA", [0, 1, 2, 3, 6]),
            ("x%", "x%", [0, 1, 2]),
        ],
    )
    def test_decode_with_offsets(self, text: str, decoded: str, starts: list[int]) -> None:
        """Each decoded character maps to where its encoding starts; bad escapes stay."""
        assert (decoded, starts) == percent_decode(text)
