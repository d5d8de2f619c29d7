"""HMAC-SHA256 receipts: evidence that a tool call ran and produced a given result.

This module owns the receipt format (LIFECYCLE.md §7), the canonical JSON of tool arguments
that the receipt and the engine's duplicate guard share (`compact_json`), and the loading of an
operator-supplied key file.

A receipt is `zc-receipt-{unix_seconds}-{base64url_no_padding(digest)}`, where the digest is
HMAC-SHA256 over the UTF-8 bytes of `tool_name|compact_json(args)|result|unix_seconds`.

Risky parts:
- The format is a contract with anyone who verifies receipts outside this process. Changing the
  canonical JSON (key order, separators, `ensure_ascii`) or the join silently breaks every
  receipt already issued; the known-answer test in `tests/test_receipts.py` pins it.
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
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = [
    "KEY_BYTES",
    "RECEIPT_PREFIX",
    "ReceiptGenerator",
    "compact_json",
    "load_key_file",
]

KEY_BYTES = 32
"""Length of a receipt key in bytes (a key file holds twice as many hex characters)."""

RECEIPT_PREFIX = "zc-receipt-"
"""Every receipt starts with this text."""

_KEY_ID_DOMAIN = b"zeroclaw-receipt-key-id:"
_RECEIPT_RE = re.compile(r"zc-receipt-(\d{1,19})-([A-Za-z0-9_-]{43})")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


# Built once: `json.dumps` with non-default options builds a new encoder on every call, and
# this runs several times per tool call. Same output as the `json.dumps` call documented below.
_COMPACT = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact_json(args: Any) -> str:
    """The canonical JSON of tool arguments: sorted keys, no spaces, non-ASCII kept as is.

    The receipt's HMAC input and the engine's duplicate guard both use this, so two calls with
    the same arguments in a different key order are the same call.

    Args:
        args: JSON-compatible data, normally the dict of arguments actually dispatched.

    Returns:
        `json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.

    Raises:
        TypeError: `args` holds something JSON cannot encode, or dict keys that cannot be sorted.
        ValueError: `args` contains a circular reference.
    """
    return _COMPACT.encode(args)


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

    __slots__ = ("_key", "_key_id")

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
        if not isinstance(timestamp, int) or isinstance(timestamp, bool):
            raise TypeError(f"timestamp must be int Unix seconds, got {type(timestamp).__name__}")
        if timestamp < 0:
            raise ValueError("timestamp must not be negative")
        message = f"{tool_name}|{compact_json(args)}|{result}|{timestamp}"
        digest = hmac.new(
            self._key, message.encode("utf-8", "surrogatepass"), hashlib.sha256
        ).digest()
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
