"""Encodings that real token formats use, shared by the evaluation sets' generators.

Only encodings live here (no secret shapes): the held-out and blind sets were written
independently and keep their own formats; what they share is arithmetic.
"""

from __future__ import annotations

import string

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
"""The alphabet of GitHub's and npm's token checksums, in value order."""


def base62(n: int, width: int) -> str:
    """`n` in base 62 (`BASE62`), left-padded with `0` to `width` characters."""
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = BASE62[r] + out
    return out.rjust(width, "0")
