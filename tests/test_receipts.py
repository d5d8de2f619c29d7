"""Tests for `zeroclaw_obs.receipts`: the receipt format, verification and key files."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import re
from enum import IntEnum
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zeroclaw_obs.errors import BadInputError, ConfigError
from zeroclaw_obs.receipts import ReceiptGenerator, compact_json, float_text, load_key_file

KEY = bytes(range(32))
TOOL = "get_weather"
ARGS = {"units": "metric", "city": "Paris"}
RESULT = "18C, clear"
TS = 1_700_000_000
RECEIPT_RE = re.compile(r"^zc-receipt-\d+-[A-Za-z0-9_-]{43}$")


def _independent_receipt(key: bytes, message: str, timestamp: int) -> str:
    """The receipt as LIFECYCLE.md §7 specifies it, computed without the module under test."""
    digest = hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()
    signature = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
    return f"zc-receipt-{timestamp}-{signature}"


class TestCompactJson:
    def test_sorted_keys_and_no_spaces(self) -> None:
        """Keys are sorted at every depth and no whitespace separates items."""
        assert '{"a":[1,{"x":1,"y":2}],"b":"c"}' == compact_json(
            {"b": "c", "a": [1, {"y": 2, "x": 1}]}
        )

    def test_non_ascii_is_kept(self) -> None:
        """Non-ASCII text is written as itself, not as `\\u` escapes (`ensure_ascii=False`)."""
        assert '{"city":"Zürich"}' == compact_json({"city": "Zürich"})

    def test_unencodable_value_raises_type_error(self) -> None:
        """A value JSON cannot encode raises TypeError."""
        with pytest.raises(TypeError):
            compact_json({"when": object()})


# Known answers for serde_json 1.0.150 (the version ZeroClaw's Cargo.lock pins), which formats
# f64 with the zmij crate: shortest round-trip digits; no exponent when the decimal exponent E
# of the first digit is in -5..=15 (always a fractional part: `100.0`); otherwise `d.ddde+E` or
# `d.ddde-E`, sign always written, no zero padding, no `.0` after a single digit; NaN/inf → null.
# (serde_json up to 1.0.146 used ryu, which wrote `1e20` with no `+`; the layout is otherwise
# the same.) Each row was derived by hand from those rules, not by running the code under test.
FLOAT_VECTORS = [
    (0.0, "0.0"),
    (-0.0, "-0.0"),
    (1.0, "1.0"),
    (-1.5, "-1.5"),
    (3.1, "3.1"),
    (0.1, "0.1"),
    (100.0, "100.0"),
    (1234.5, "1234.5"),
    (0.0001, "0.0001"),
    (1e-5, "0.00001"),
    (1.5e-5, "0.000015"),
    (-2.5e-5, "-0.000025"),
    (9.99e-6, "9.99e-6"),
    (1e-6, "1e-6"),
    (1e-7, "1e-7"),
    (2.5e-7, "2.5e-7"),
    (1e-10, "1e-10"),
    (6.62607015e-34, "6.62607015e-34"),
    (5e-324, "5e-324"),
    (2.220446049250313e-16, "2.220446049250313e-16"),
    (1e15, "1000000000000000.0"),
    (9061488e9, "9061488000000000.0"),
    (5.444310685350916e14, "544431068535091.6"),
    (1e16, "1e+16"),
    (1.2345678901234568e17, "1.2345678901234568e+17"),
    (1e20, "1e+20"),
    (-1.5e300, "-1.5e+300"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (-1.7976931348623157e308, "-1.7976931348623157e+308"),
    (float("nan"), "null"),
    (float("inf"), "null"),
    (float("-inf"), "null"),
]


class TestFloatText:
    @pytest.mark.parametrize(("value", "expected"), FLOAT_VECTORS)
    def test_known_answers(self, value: float, expected: str) -> None:
        """Each float is written as serde_json writes it."""
        assert expected == float_text(value)

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.floats(allow_nan=False, allow_infinity=False))
    def test_round_trips(self, value: float) -> None:
        """The text reads back as the same float (same digits as `repr`, other layout only)."""
        text = float_text(value)
        assert math.copysign(1.0, value) == math.copysign(1.0, float(text))
        assert value == float(text)
        assert "e+0" not in text and "e-0" not in text and "+" not in text.split("e")[0]


class TestCompactJsonNumbers:
    @pytest.mark.parametrize(
        ("args", "expected"),
        [
            ({"x": 1e20, "y": 2.5e-7}, '{"x":1e+20,"y":2.5e-7}'),
            ({"z": [1e-5, 0.5, float("nan")]}, '{"z":[0.00001,0.5,null]}'),
            ({"n": 2**63 - 1, "m": -(2**63)}, '{"m":-9223372036854775808,"n":9223372036854775807}'),
            ({"u": 2**64 - 1}, '{"u":18446744073709551615}'),
            ({"u": 2**64}, '{"u":1.8446744073709552e+19}'),
            ({"i": -(2**63) - 1}, '{"i":-9.223372036854776e+18}'),
            ({"i": 10**30}, '{"i":1e+30}'),
            ({"i": 10**400}, '{"i":1' + "0" * 400 + "}"),
            ({"t": True, "f": False, "n": None}, '{"f":false,"n":null,"t":true}'),
            ({"s": 'q"\\\n\x1f\x7f\u2028é'}, '{"s":"q\\"\\\\\\n\\u001f\x7f\u2028é"}'),
            (
                {"s": 'q"\\\n\x1f\x7f\u2028é', "f": 1e-5},
                '{"f":0.00001,"s":"q\\"\\\\\\n\\u001f\x7f\u2028é"}',
            ),
            ({"f": 1.5, "s": "1e-05"}, '{"f":1.5,"s":"1e-05"}'),
            ({"e": IntEnum("E", "A")(1), "t": (1.0, 2)}, '{"e":1,"t":[1.0,2]}'),
            ({1e-5: "k", "a": 0.5}, None),
        ],
    )
    def test_numbers_as_serde_json_writes_them(self, args, expected) -> None:
        """Integers, floats and strings in arguments are written as ZeroClaw's serde_json does."""
        if expected is None:
            with pytest.raises(TypeError):
                compact_json(args)
        else:
            assert expected == compact_json(args)

    def test_circular_reference_raises_value_error(self) -> None:
        """A circular structure raises ValueError on the float path too."""
        args: dict = {"x": 1.5}
        args["self"] = args
        with pytest.raises(ValueError):
            compact_json(args)

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers(min_value=-(2**70), max_value=2**70)
            | st.floats()
            | st.text(),
            lambda children: (
                st.lists(children, max_size=4)
                | st.dictionaries(st.text(max_size=5), children, max_size=4)
            ),
            max_leaves=20,
        )
    )
    def test_same_value_as_json(self, value) -> None:
        """The text parses back to the value serde_json would hold, and re-encodes the same."""
        text = compact_json(value)
        assert _normalised(value) == _normalised(json.loads(text))
        assert text == compact_json(json.loads(text))


def _normalised(value):
    """The value as serde_json would hold it: big integers as floats, non-finite as None."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else float(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _normalised(v) for k, v in value.items()}
    return [_normalised(v) for v in value]


class TestReceiptGenerator:
    @pytest.mark.parametrize(
        ("tool", "args", "result", "timestamp", "message", "expected"),
        [
            (
                "calc",
                {"x": 1e20, "y": 2.5e-7, "z": 1e-5, "n": 2**64, "ok": True, "nan": float("nan")},
                "done",
                1_700_000_000,
                'calc|{"n":1.8446744073709552e+19,"nan":null,"ok":true,"x":1e+20,'
                '"y":2.5e-7,"z":0.00001}|done|1700000000',
                "zc-receipt-1700000000-Zkc9g-raravShZ1FJSxGFGCx0hxguitqnwbhIVPqras",
            ),
            (
                "geo",
                {
                    "tolerance": 1.5e-5,
                    "radius_km": 100.0,
                    "point": {"lon": 2.3522, "lat": 48.8566},
                    "scale": [1e16, 1e15, -0.0, 5e-324, 1.7976931348623157e308],
                },
                "ok",
                1_750_000_000,
                'geo|{"point":{"lat":48.8566,"lon":2.3522},"radius_km":100.0,'
                '"scale":[1e+16,1000000000000000.0,-0.0,5e-324,1.7976931348623157e+308],'
                '"tolerance":0.000015}|ok|1750000000',
                "zc-receipt-1750000000-8t69pTCNQ9JfdItgXX9RO0O-9wGE9nqULnv3yppoIGo",
            ),
        ],
    )
    def test_known_answer_with_floats(
        self, tool, args, result, timestamp, message, expected
    ) -> None:
        """Receipts over float arguments sign serde_json's text, so ZeroClaw verifies them."""
        assert expected == _independent_receipt(KEY, message, timestamp)
        generator = ReceiptGenerator(KEY)
        assert expected == generator.generate(tool, args, result, timestamp)
        assert generator.verify(expected, tool, args, result)

    def test_known_answer(self) -> None:
        """A receipt equals HMAC-SHA256 over `tool|compact_json(args)|result|ts`, base64url."""
        message = 'get_weather|{"city":"Paris","units":"metric"}|18C, clear|1700000000'
        expected = _independent_receipt(KEY, message, TS)

        receipt = ReceiptGenerator(KEY).generate(TOOL, ARGS, RESULT, TS)

        assert expected == receipt
        assert "zc-receipt-1700000000-5jkfE6SLA9aBZjtU29NN_7raC20wdcpvsa7kk2EzM0A" == receipt

    def test_signing_the_canonical_json_is_generating(self) -> None:
        """`sign_canonical` over `compact_json(args)` gives the very receipt `generate` does."""
        generator = ReceiptGenerator(KEY)
        for args in (ARGS, {"city": "Zürich", "x": [1e20, 2**64, -0.0]}):
            expected = generator.generate(TOOL, args, RESULT, TS)
            assert expected == generator.sign_canonical(TOOL, compact_json(args), RESULT, TS)

    def test_sign_canonical_checks_its_inputs(self) -> None:
        """`sign_canonical` refuses non-text inputs and a bad timestamp, as `generate` does."""
        generator = ReceiptGenerator(KEY)
        with pytest.raises(TypeError):
            generator.sign_canonical(TOOL, {"city": "Paris"}, RESULT, TS)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            generator.sign_canonical(TOOL, "{}", RESULT, -1)

    def test_receipts_in_a_row_are_each_the_hmac_of_their_own_message(self) -> None:
        """One generator signs many calls: each receipt is HMAC-SHA256 of that call alone."""
        for key in (KEY, bytes([0xFF] * 32), bytes(32)):
            generator = ReceiptGenerator(key)
            for n, result in enumerate(("", "x" * 100, RESULT, "y" * 5000)):
                message = f'{TOOL}|{{"n":{n}}}|{result}|{TS}'
                expected = _independent_receipt(key, message, TS)
                assert expected == generator.generate(TOOL, {"n": n}, result, TS)

    def test_known_answer_non_ascii(self) -> None:
        """Non-ASCII tool input is signed as raw UTF-8, not as JSON escapes."""
        message = 'lookup|{"city":"Zürich"}|Grüezi ☀|42'
        expected = _independent_receipt(KEY, message, 42)

        receipt = ReceiptGenerator(KEY).generate("lookup", {"city": "Zürich"}, "Grüezi ☀", 42)

        assert expected == receipt

    def test_format(self) -> None:
        """A receipt is `zc-receipt-{unix_seconds}-` and 43 base64url characters."""
        receipt = ReceiptGenerator().generate(TOOL, ARGS, RESULT, TS)

        assert RECEIPT_RE.fullmatch(receipt) is not None
        assert receipt.startswith(f"zc-receipt-{TS}-")

    def test_verify_accepts_its_own_receipt(self) -> None:
        """A receipt verifies against the same call and result."""
        generator = ReceiptGenerator()
        receipt = generator.generate(TOOL, ARGS, RESULT, TS)

        assert True is generator.verify(receipt, TOOL, ARGS, RESULT)

    def test_verify_ignores_argument_key_order(self) -> None:
        """Arguments are compared in canonical JSON, so key order does not matter."""
        generator = ReceiptGenerator()
        receipt = generator.generate(TOOL, {"a": 1, "b": 2}, RESULT, TS)

        assert True is generator.verify(receipt, TOOL, {"b": 2, "a": 1}, RESULT)

    @pytest.mark.parametrize(
        ("tool_name", "args", "result"),
        [
            ("get_weathes", ARGS, RESULT),
            (TOOL, {"units": "metric", "city": "Parjs"}, RESULT),
            (TOOL, {"units": "metric", "city": "Paris", "x": 1}, RESULT),
            (TOOL, {"units": "metric", "city": ["Paris"]}, RESULT),
            (TOOL, ARGS, "18C, clean"),
            (TOOL, ARGS, RESULT + " "),
        ],
    )
    def test_verify_rejects_changed_input(
        self, tool_name: str, args: dict[str, object], result: str
    ) -> None:
        """Changing one character of the tool name, arguments or result fails verification."""
        generator = ReceiptGenerator()
        receipt = generator.generate(TOOL, ARGS, RESULT, TS)

        assert False is generator.verify(receipt, tool_name, args, result)

    def test_verify_rejects_changed_timestamp(self) -> None:
        """Moving the timestamp by one second fails verification."""
        generator = ReceiptGenerator()
        receipt = generator.generate(TOOL, ARGS, RESULT, TS)
        shifted = receipt.replace(f"-{TS}-", f"-{TS + 1}-")

        assert False is generator.verify(shifted, TOOL, ARGS, RESULT)

    def test_verify_rejects_changed_digest_character(self) -> None:
        """Changing any one character of the digest fails verification."""
        generator = ReceiptGenerator()
        receipt = generator.generate(TOOL, ARGS, RESULT, TS)
        start = len(f"zc-receipt-{TS}-")

        for i in range(start, len(receipt)):
            swapped = "A" if receipt[i] != "A" else "B"
            tampered = receipt[:i] + swapped + receipt[i + 1 :]
            assert False is generator.verify(tampered, TOOL, ARGS, RESULT)

    def test_verify_rejects_other_key(self) -> None:
        """A receipt issued under another key does not verify."""
        receipt = ReceiptGenerator().generate(TOOL, ARGS, RESULT, TS)

        assert False is ReceiptGenerator().verify(receipt, TOOL, ARGS, RESULT)

    @pytest.mark.parametrize(
        "receipt",
        [
            "",
            "zc-receipt-",
            "zc-receipt-abc-5jkfE6SLA9aBZjtU29NN_7raC20wdcpvsa7kk2EzM0A",
            "zc-receipt-01700000000-5jkfE6SLA9aBZjtU29NN_7raC20wdcpvsa7kk2EzM0A",
            "zc-receipt-1700000000-5jkfE6SLA9aBZjtU29NN_7raC20wdcpvsa7kk2EzM0A=",
            "zc-receipt-1700000000-5jkfE6SLA9aBZjtU29NN_7raC20wdcpvsa7kk2EzM0",
            " zc-receipt-1700000000-5jkfE6SLA9aBZjtU29NN_7raC20wdcpvsa7kk2EzM0A",
            "zc-receipt-1700000000-5jkfE6SLA9aBZjtU29NN+7raC20wdcpvsa7kk2EzM0A",
            "zc-receipt-99999999999999999999999-5jkfE6SLA9aBZjtU29NN_7raC20wdcpvsa7kk2EzM0A",
            "zc-receipt-1700000000-ünicode6SLA9aBZjtU29NN_7raC20wdcpvsa7kk2EzM",
        ],
    )
    def test_verify_rejects_malformed_receipt(self, receipt: str) -> None:
        """A malformed or non-canonical receipt verifies as False instead of raising."""
        assert False is ReceiptGenerator(KEY).verify(receipt, TOOL, ARGS, RESULT)

    def test_verify_never_raises_on_bad_types(self) -> None:
        """A non-string receipt or unencodable arguments verify as False."""
        generator = ReceiptGenerator(KEY)
        receipt = generator.generate(TOOL, ARGS, RESULT, TS)

        assert False is generator.verify(None, TOOL, ARGS, RESULT)  # type: ignore[arg-type]
        assert False is generator.verify(receipt, TOOL, {"x": object()}, RESULT)
        assert False is generator.verify(receipt, TOOL, ARGS, None)  # type: ignore[arg-type]

    def test_generate_now_uses_current_time(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """`generate_now` stamps the receipt with `int(time.time())`."""
        monkeypatch.setattr("zeroclaw_obs.receipts.time.time", lambda: 1_234_567_890.9)
        generator = ReceiptGenerator(KEY)

        assert generator.generate(TOOL, ARGS, RESULT, 1_234_567_890) == generator.generate_now(
            TOOL, ARGS, RESULT
        )

    def test_generate_rejects_bad_timestamp(self) -> None:
        """A negative or non-int timestamp is refused rather than signed."""
        generator = ReceiptGenerator(KEY)

        with pytest.raises(ValueError):
            generator.generate(TOOL, ARGS, RESULT, -1)
        with pytest.raises(TypeError):
            generator.generate(TOOL, ARGS, RESULT, 1.5)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            generator.generate(TOOL, ARGS, RESULT, True)

    def test_lone_surrogate_result_still_gets_a_receipt(self) -> None:
        """A result with a lone surrogate is signed (surrogatepass) and verifies."""
        generator = ReceiptGenerator(KEY)
        receipt = generator.generate(TOOL, ARGS, "bad \udcff byte", TS)

        assert True is generator.verify(receipt, TOOL, ARGS, "bad \udcff byte")

    @pytest.mark.parametrize("key", [b"", b"\x00" * 31, b"\x00" * 33, b"\x00" * 64])
    def test_key_of_wrong_length_raises(self, key: bytes) -> None:
        """A key that is not 32 bytes long raises ValueError."""
        with pytest.raises(ValueError, match="32 bytes"):
            ReceiptGenerator(key)

    def test_key_of_wrong_type_raises(self) -> None:
        """A key given as text raises TypeError."""
        with pytest.raises(TypeError):
            ReceiptGenerator("00" * 32)  # type: ignore[arg-type]

    def test_key_id_is_stable_for_a_key(self) -> None:
        """`key_id` is 16 hex characters and the same for the same key."""
        key_id = ReceiptGenerator(KEY).key_id

        assert re.fullmatch(r"[0-9a-f]{16}", key_id) is not None
        assert key_id == ReceiptGenerator(KEY).key_id
        assert hashlib.sha256(b"zeroclaw-receipt-key-id:" + KEY).hexdigest()[:16] == key_id

    def test_key_id_differs_between_keys(self) -> None:
        """Different keys, including two fresh random ones, have different `key_id`s."""
        ids = {ReceiptGenerator(KEY).key_id, ReceiptGenerator().key_id, ReceiptGenerator().key_id}

        assert 3 == len(ids)

    def test_repr_shows_key_id_not_key(self) -> None:
        """`repr` names the key by its `key_id` and never shows the key."""
        generator = ReceiptGenerator(KEY)

        assert f"ReceiptGenerator(key_id={generator.key_id!r})" == repr(generator)

    def test_random_keys_differ(self) -> None:
        """Two generators without a key sign the same call differently."""
        first = ReceiptGenerator().generate(TOOL, ARGS, RESULT, TS)

        assert first != ReceiptGenerator().generate(TOOL, ARGS, RESULT, TS)


class TestLoadKeyFile:
    def test_reads_hex_key(self, tmp_path: Path) -> None:
        """64 hex characters, with surrounding whitespace and a newline, load as 32 bytes."""
        path = tmp_path / "receipt.key"
        path.write_text(f"  {KEY.hex().upper()[:32]}\n{KEY.hex()[32:]}  \n")

        assert KEY == load_key_file(path)

    def test_loaded_key_verifies(self, tmp_path: Path) -> None:
        """A receipt issued with a loaded key verifies with a generator built from the file."""
        path = tmp_path / "receipt.key"
        path.write_text(KEY.hex())
        receipt = ReceiptGenerator(KEY).generate(TOOL, ARGS, RESULT, TS)

        assert True is ReceiptGenerator(load_key_file(str(path))).verify(
            receipt, TOOL, ARGS, RESULT
        )

    @pytest.mark.parametrize(
        ("content", "problem"),
        [
            (b"", "found 0 characters"),
            (b"ab" * 31, "found 62 characters"),
            (b"ab" * 33, "found 66 characters"),
            (b"zz" * 32, "only hex characters"),
            (b"\xff\xfe" * 32, "not UTF-8"),
        ],
    )
    def test_bad_content_raises_config_error(
        self, tmp_path: Path, content: bytes, problem: str
    ) -> None:
        """A file without exactly 64 hex characters raises one ConfigError line naming it."""
        path = tmp_path / "bad.key"
        path.write_bytes(content)

        with pytest.raises(ConfigError) as info:
            load_key_file(path)

        message = str(info.value)
        assert "\n" not in message
        assert message.startswith(f"{path}: ")
        assert problem in message

    def test_error_never_quotes_the_content(self, tmp_path: Path) -> None:
        """The error for a near-miss key does not repeat any of the key material."""
        path = tmp_path / "bad.key"
        path.write_text(KEY.hex() + "0")

        with pytest.raises(ConfigError) as info:
            load_key_file(path)

        assert KEY.hex()[:8] not in str(info.value)

    def test_missing_file_raises_config_error(self, tmp_path: Path) -> None:
        """A missing file raises a ConfigError (a BadInputError) naming the file."""
        path = tmp_path / "missing.key"

        with pytest.raises(BadInputError) as info:
            load_key_file(path)

        assert isinstance(info.value, ConfigError)
        assert str(info.value).startswith(f"{path}: cannot read")
