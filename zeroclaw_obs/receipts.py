"""HMAC-SHA256 receipts: evidence that a tool call ran and produced a given result.

This module owns the receipt format (LIFECYCLE.md §7), the canonical JSON of tool arguments
that the receipt and the engine's duplicate guard share (`compact_json`), and the loading of an
operator-supplied key file.

A receipt is `zc-receipt-{unix_seconds}-{base64url_no_padding(digest)}`, where the digest is
HMAC-SHA256 over the UTF-8 bytes of `tool_name|compact_json(args)|result|unix_seconds`.

Risky parts:
- The format is a contract with anyone who verifies receipts outside this process. Changing the
  canonical JSON (key order, separators, `ensure_ascii`, number layout) or the join silently
  breaks every receipt already issued; the known-answer tests in `tests/test_receipts.py` pin it.
- The canonical JSON must be byte for byte what ZeroClaw (Rust) signs: `serde_json::Value`'s
  compact `to_string()` (serde_json 1.0.150, sorted keys). Strings, keys and integers already
  match Python's `json`; numbers do not always, so `compact_json` re-lays them out (see there).
- The key never leaves this object: not in `repr`, not in errors, not in `key_id` (a one-way,
  domain-separated fingerprint). Key-file errors name the file and the problem, never the content.
- Strings holding lone surrogates have no UTF-8 encoding; they are encoded with
  `surrogatepass` so that a tool returning such text still gets a receipt instead of crashing the
  turn. Receipts are evidence of a successful run, not of approval or persistence.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import os
import re
import secrets
import time
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = [
    "KEY_BYTES",
    "RECEIPT_PREFIX",
    "ReceiptGenerator",
    "compact_json",
    "float_text",
    "load_key_file",
]

KEY_BYTES = 32
"""Length of a receipt key in bytes (a key file holds twice as many hex characters)."""

RECEIPT_PREFIX = "zc-receipt-"
"""Every receipt starts with this text."""

_KEY_ID_DOMAIN = b"zeroclaw-receipt-key-id:"
_RECEIPT_RE = re.compile(r"zc-receipt-(\d{1,19})-([A-Za-z0-9_-]{43})")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_SHA256_BLOCK = 64
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))


# Built once: `json.dumps` with non-default options builds a new encoder on every call, and
# this runs several times per tool call. Same output as the `json.dumps` call documented below.
_COMPACT = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)

_I64_MIN = -(2**63)
_U64_END = 2**64
_FIXED_EXPONENTS = range(-5, 16)
"""serde_json writes a float whose decimal exponent is in here without an exponent."""


def compact_json(args: Any) -> str:
    """The canonical JSON of tool arguments, as serde_json writes it: sorted keys, no spaces.

    The receipt's HMAC input and the engine's duplicate guard both use this, so two calls with
    the same arguments in a different key order are the same call. Strings keep non-ASCII as
    is and escape like serde_json (`\\"`, `\\\\`, `\\n`, `\\u001f`, …); numbers are written as
    serde_json 1.0.150 writes a `Value` parsed from the same JSON, which is what ZeroClaw signs:

    - an integer in i64/u64 range as its digits; one outside, as the float serde_json parses
      it into (`18446744073709551616` → `1.8446744073709552e+19`); one too large for a float
      (serde_json refuses to parse it, so ZeroClaw has no receipt to match) as its digits;
    - a float by `float_text`: shortest round-trip digits, `1e+20`, `2.5e-7`, `0.00001`,
      `100.0`; NaN and ±infinity as `null`.

    Arguments with no float, no integer outside i64/u64 and only string keys (the common case)
    cost one C-speed encode and one walk over the values (not over the text); others are
    encoded again by a small Python encoder.

    Args:
        args: JSON-compatible data, normally the dict of arguments actually dispatched.

    Returns:
        The canonical text.

    Raises:
        TypeError: `args` holds something JSON cannot encode, or dict keys that cannot be sorted.
        ValueError: `args` contains a circular reference, or an integer of more than 4300 digits.
    """
    # Encoding first also rejects what the walk could not finish (a circular reference).
    text = _COMPACT.encode(args)
    if _same_in_serde(args):
        return text
    parts: list[str] = []
    _write(args, parts, set())
    return "".join(parts)


def _same_in_serde(value: Any) -> bool:
    """True when Python's `json` text of `value` is already serde_json's.

    That is, no float (its layout may differ), no integer outside i64/u64 (serde_json reads
    it as a float) and no key that is not a string (`json` writes a float key as `repr`).
    Exact types only: a subclass goes to the slow path, which handles it like `json` does.
    Iterative, and only called once `json` has encoded `value`, so it always ends.
    """
    stack = [value]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is str or kind is bool or current is None:
            continue
        if kind is int:
            if not _I64_MIN <= current < _U64_END:
                return False
        elif kind is dict:
            for key in current:
                if type(key) is not str:
                    return False
            stack.extend(current.values())
        elif kind is list or kind is tuple:
            stack.extend(current)
        else:
            return False
    return True


def float_text(value: float) -> str:
    """A float as serde_json (1.0.150, which formats with the `zmij` crate) writes it.

    Shortest digits that round-trip (the same digits as Python's `repr`), laid out by the
    decimal exponent E of the first digit: for -5 <= E <= 15 without an exponent, always with
    a fractional part (`100.0`, `0.5`, `0.00001`); otherwise `d.ddde+E` / `d.ddde-E` with no
    zero padding and no `.0` for one digit (`1e+20`, `2.5e-7`, `1.7976931348623157e+308`,
    `5e-324`). Zero is `0.0` / `-0.0`; NaN and ±infinity are `null` (serde_json writes a
    non-finite float as null).

    Args:
        value: the float.

    Returns:
        Its JSON text.
    """
    if value != value or value in (_INF, -_INF):
        return "null"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits, exponent = _shortest_digits(abs(value))
    if exponent in _FIXED_EXPONENTS:
        if exponent < 0:
            return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
        whole, fraction = digits[: exponent + 1], digits[exponent + 1 :]
        return f"{sign}{whole.ljust(exponent + 1, '0')}.{fraction or '0'}"
    mantissa = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


_INF = float("inf")


def _shortest_digits(value: float) -> tuple[str, int]:
    """(significant digits without trailing zeros, decimal exponent of the first digit)."""
    text = repr(value)  # shortest round-trip digits; only the layout needs redoing
    if "e" in text:
        mantissa, _, exp = text.partition("e")
        return mantissa.replace(".", "").rstrip("0") or "0", int(exp)
    whole, _, fraction = text.partition(".")
    if whole != "0":
        return (whole + fraction).rstrip("0"), len(whole) - 1
    significant = fraction.lstrip("0")
    return significant.rstrip("0"), -(len(fraction) - len(significant)) - 1


def _int_text(value: int) -> str:
    if _I64_MIN <= value < _U64_END:
        return int.__repr__(value)
    try:
        return float_text(float(value))  # serde_json reads it as an f64
    except OverflowError:
        return int.__repr__(value)


def _key_text(key: Any) -> str:
    """A dict key as `json` turns it into a string (JSON objects have string keys only)."""
    if isinstance(key, str):
        return key
    if key is True or key is False or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return float_text(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _write(value: Any, out: list[str], open_ids: set[int]) -> None:
    """Append `value`'s canonical JSON to `out` (the slow path of `compact_json`)."""
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None or value is True or value is False:
        out.append("null" if value is None else "true" if value else "false")
    elif isinstance(value, int):
        out.append(_int_text(value))
    elif isinstance(value, float):
        out.append(float_text(float(value)))
    elif isinstance(value, dict | list | tuple):
        if id(value) in open_ids:
            raise ValueError("Circular reference detected")
        open_ids.add(id(value))
        if isinstance(value, dict):
            out.append("{")
            items = sorted(value.items(), key=lambda item: item[0])
            for index, (key, child) in enumerate(items):
                out.append(f"{',' if index else ''}{encode_basestring(_key_text(key))}:")
                _write(child, out, open_ids)
            out.append("}")
        else:
            out.append("[")
            for index, child in enumerate(value):
                if index:
                    out.append(",")
                _write(child, out, open_ids)
            out.append("]")
        open_ids.discard(id(value))
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def load_key_file(path: str | os.PathLike[str]) -> bytes:
    """Read a 32-byte receipt key stored as 64 hex characters (surrounding whitespace ignored).

    Args:
        path: the file named by `--receipt-key-file`.

    Returns:
        The 32 key bytes.

    Raises:
        ConfigError: the file cannot be read, is not UTF-8 text, or does not hold exactly
            64 hex characters. The one-line message names the file and the problem, and never
            quotes the file's content.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read receipt key file: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: receipt key file is not UTF-8 text") from None
    digits = "".join(text.split())
    if len(digits) != 2 * KEY_BYTES:
        raise ConfigError(
            f"{path}: receipt key must be {2 * KEY_BYTES} hex characters "
            f"({KEY_BYTES} bytes), found {len(digits)} characters"
        )
    if not _HEX_DIGITS.issuperset(digits):
        raise ConfigError(f"{path}: receipt key must contain only hex characters 0-9 a-f")
    return bytes.fromhex(digits)


class ReceiptGenerator:
    """Signs and verifies receipts with one secret key held in memory.

    One generator is one key scope: per turn for direct turns, per channel runtime for channels.
    The object is immutable after construction and safe to share between tasks and threads.
    """

    __slots__ = ("_inner", "_key", "_key_id", "_outer")

    def __init__(self, key: bytes | None = None) -> None:
        """Hold `key`, or a fresh random key when none is given.

        Args:
            key: 32 secret bytes, normally from `load_key_file`; `None` draws
                `secrets.token_bytes(32)`, so receipts verify only within this generator.

        Raises:
            TypeError: `key` is not bytes.
            ValueError: `key` is not exactly 32 bytes long.
        """
        if key is None:
            key = secrets.token_bytes(KEY_BYTES)
        if not isinstance(key, bytes | bytearray):
            raise TypeError(f"receipt key must be bytes, got {type(key).__name__}")
        if len(key) != KEY_BYTES:
            raise ValueError(f"receipt key must be {KEY_BYTES} bytes, got {len(key)}")
        self._key = bytes(key)
        digest = hashlib.sha256(_KEY_ID_DOMAIN + self._key).hexdigest()
        self._key_id = digest[:16]
        # HMAC (RFC 2104) hashes the key's padded block before every message; hashed once here,
        # each receipt copies the two states instead of re-deriving them from the key
        # (`hmac.digest` does, ~30% of a receipt of a 2 KB call). The digest is the same.
        block = self._key.ljust(_SHA256_BLOCK, b"\0")
        self._inner = hashlib.sha256(block.translate(_IPAD))
        self._outer = hashlib.sha256(block.translate(_OPAD))

    def __repr__(self) -> str:
        return f"ReceiptGenerator(key_id={self._key_id!r})"

    @property
    def key_id(self) -> str:
        """A public fingerprint of the key: 16 hex characters, safe to log and export.

        It is the start of SHA-256 over a fixed domain prefix and the key; SHA-256 is one-way,
        so the fingerprint identifies which key signed a receipt without revealing it, and the
        prefix keeps it from equalling any other hash of the key.
        """
        return self._key_id

    def generate(self, tool_name: str, args: dict[str, Any], result: str, timestamp: int) -> str:
        """Sign one successful execution.

        Args:
            tool_name: the name the call was dispatched under.
            args: the arguments actually dispatched.
            result: the normalised output before truncation.
            timestamp: Unix seconds of the execution.

        Returns:
            `zc-receipt-{timestamp}-{base64url_no_padding(hmac_sha256)}` (43 digest characters).

        Raises:
            TypeError: `tool_name` or `result` is not a string, `timestamp` is not an int, or
                `args` cannot be encoded by `compact_json`.
            ValueError: `timestamp` is negative, or `args` contains a circular reference.
        """
        if not isinstance(tool_name, str) or not isinstance(result, str):
            raise TypeError("tool_name and result must be strings")
        return self.sign_canonical(tool_name, compact_json(args), result, timestamp)

    def sign_canonical(self, tool_name: str, args_json: str, result: str, timestamp: int) -> str:
        """`generate` for a caller that already holds `compact_json(args)`.

        The engine computes that text once per call for its duplicate guard; encoding the
        arguments again for the receipt cost as much as the HMAC. The caller answers for
        `args_json` being exactly `compact_json` of the arguments dispatched: any other text
        gives a receipt that `verify` rejects.

        Args:
            tool_name: the name the call was dispatched under.
            args_json: `compact_json(args)` of the arguments actually dispatched.
            result: the normalised output before truncation.
            timestamp: Unix seconds of the execution.

        Returns:
            The receipt, as `generate`.

        Raises:
            TypeError: a text argument is not a string, or `timestamp` is not an int.
            ValueError: `timestamp` is negative.
        """
        if not (isinstance(tool_name, str) and isinstance(args_json, str)):
            raise TypeError("tool_name and args_json must be strings")
        if not isinstance(result, str):
            raise TypeError("tool_name and result must be strings")
        if not isinstance(timestamp, int) or isinstance(timestamp, bool):
            raise TypeError(f"timestamp must be int Unix seconds, got {type(timestamp).__name__}")
        if timestamp < 0:
            raise ValueError("timestamp must not be negative")
        message = f"{tool_name}|{args_json}|{result}|{timestamp}"
        inner = self._inner.copy()
        inner.update(message.encode("utf-8", "surrogatepass"))
        outer = self._outer.copy()
        outer.update(inner.digest())
        digest = outer.digest()  # = hmac.digest(key, message, "sha256")
        signature = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        return f"{RECEIPT_PREFIX}{timestamp}-{signature}"

    def generate_now(self, tool_name: str, args: dict[str, Any], result: str) -> str:
        """Sign one successful execution stamped with the current time.

        Args:
            tool_name: the name the call was dispatched under.
            args: the arguments actually dispatched.
            result: the normalised output before truncation.

        Returns:
            The receipt, as `generate` with `timestamp=int(time.time())`.

        Raises:
            TypeError: as `generate`.
            ValueError: as `generate`.
        """
        return self.generate(tool_name, args, result, int(time.time()))

    def verify(self, receipt: str, tool_name: str, args: dict[str, Any], result: str) -> bool:
        """Check that `receipt` was issued by this key for exactly this call and result.

        The timestamp is read from the receipt and the receipt recomputed; the comparison is
        constant-time. Only the canonical spelling verifies (no leading zeros in the timestamp,
        no padding or non-canonical last character in the digest).

        Args:
            receipt: the text to check.
            tool_name: the name the call was dispatched under.
            args: the arguments actually dispatched.
            result: the normalised output before truncation.

        Returns:
            True when the receipt matches; False for a mismatch, a malformed receipt or
            arguments that cannot be encoded. Never raises.
        """
        if not isinstance(receipt, str):
            return False
        parsed = _RECEIPT_RE.fullmatch(receipt)
        if parsed is None:
            return False
        try:
            expected = self.generate(tool_name, args, result, int(parsed.group(1)))
        except (TypeError, ValueError):
            return False
        return hmac.compare_digest(expected, receipt)
