"""The personal-data rules: e-mail, payment card, IBAN, US SSN, phone number, IP address.

On by default and switched off together (`Redactor.from_config(pii=False)`). They run after
every secret rule, so a secret that also looks like personal data (a password that is an
e-mail address) is named by the secret rule.

Each pattern only proposes a shape; the checks in `_validators.py` decide. Cards must pass
Luhn and start with an issuer prefix, IBANs must pass mod-97 for their country's length,
SSNs must use issued ranges, and phone numbers and IP addresses must not run on into more
digits or dots, which is what keeps timestamps (`2026-12-03`), versions (`1.2.3`, `v10.0.0.1`),
OIDs, UUIDs, trace ids and order numbers out.

Risky part: personal data has no checksum to speak of in the phone and e-mail cases; the
boundaries and file-extension refusal below are all that separates `icon@2x.png` or an order
number from a match.
"""

from __future__ import annotations

from ._scanner import Check, Hit, Spec, compile_pattern
from ._spec import run_start
from ._validators import card_span, iban_span, is_ipv4, is_ipv6, is_phone, is_ssn

__all__ = ["pii_specs"]

_FILE_EXTENSIONS = frozenset(
    {
        *("png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "bmp", "css", "js", "mjs", "ts"),
        *("json", "map", "txt", "md", "py", "html", "xml", "yaml", "yml", "woff", "ttf"),
    }
)


_SERVICE_DOMAINS = (".gserviceaccount.com",)
"""Domains whose addresses belong to machine identities (Google service accounts)."""


def _runs_on(text: str, end: int, joiners: str) -> bool:
    """Whether the match at `end` continues: an alphanumeric, or a joiner then a digit."""
    following = text[end : end + 1]
    if not following:
        return False
    if following.isalnum() or following == "_":
        return True
    return following in joiners and text[end + 1 : end + 2].isdigit()


def _email(hit: Hit) -> tuple[int, int] | None:
    text = hit.text
    following = text[hit.end : hit.end + 1]
    if following and (following.isalnum() or following in "-_"):
        return None
    local, _, domain = text[hit.start : hit.end].rpartition("@")
    labels = domain.split(".")
    if local in ("git", "") or local[0] == "." or local[-1] == ".":
        return None
    if domain.lower().endswith(_SERVICE_DOMAINS):
        return None  # a service account's address names a workload, not a person
    if labels[-1].lower() in _FILE_EXTENSIONS or any(
        not label or label[0] == "-" or label[-1] == "-" for label in labels
    ):
        return None
    return hit.start, hit.end


def _card(hit: Hit) -> tuple[int, int] | None:
    return card_span(hit.text, hit.start, hit.end)


def _iban(hit: Hit) -> tuple[int, int] | None:
    return iban_span(hit.text, hit.start, hit.end)


def _ssn(hit: Hit) -> tuple[int, int] | None:
    if _runs_on(hit.text, hit.end, "-") or not is_ssn(hit.text[hit.start : hit.end]):
        return None
    return hit.start, hit.end


def _phone(hit: Hit) -> tuple[int, int] | None:
    value = hit.text[hit.start : hit.end]
    # Only the labelled forms (`phone: …`, a signature's `T …`) start more than one character
    # before their number; a national format is as good as a label.
    context = hit.start - hit.match_start > 1 or _NATIONAL.fullmatch(value) is not None
    if _runs_on(hit.text, hit.end, "-.") or not is_phone(value, context=context):
        return None
    return hit.start, hit.end


_NATIONAL = compile_pattern(r"0[1-9](?: [0-9]{2}){4}|0[1-9](?:\.[0-9]{2}){4}|07[0-9]{3} ?[0-9]{6}")


def _ip(hit: Hit) -> tuple[int, int] | None:
    value = hit.text[hit.start : hit.end]
    before = hit.text[hit.start - 1 : hit.start]
    if before and (before.isalnum() or before in ".:"):
        return None
    if ":" in value:
        following = hit.text[hit.end : hit.end + 1]
        if following and (following.isalnum() or following in ":."):
            return None
        return (hit.start, hit.end) if is_ipv6(value) else None
    if _runs_on(hit.text, hit.end, ".") or not is_ipv4(value):
        return None
    return hit.start, hit.end


def _pii(
    rule_id: str,
    description: str,
    pattern: str,
    trigger: str,
    check: Check,
    *,
    groups: int = 0,
    not_after: str = "",
) -> Spec:
    """A personal-data rule: the whole match (`groups=0`) or the first of `groups` groups."""
    secret = tuple(range(1, groups + 1)) or (0,)
    return Spec(rule_id, description, pattern, trigger, secret, (), check, True, not_after)


def pii_specs() -> list[Spec]:
    """The personal-data rules, in chain order."""
    return [
        _pii(
            "email",
            "e-mail addresses (not user@localhost, icon@2x.png or git@host)",
            # A match starts where its run of local-part characters starts (leftmost), so no
            # boundary is needed before it.
            r"[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}",
            r"[A-Za-z0-9._%+-]@[A-Za-z0-9-]+\.[A-Za-z]{2}",
            _email,
        ),
        _pii(
            "payment_card",
            "payment card numbers: 13–19 digits, issuer prefix, Luhn-checked",
            r"[0-9]{13,19}|[0-9]{4}(?: [0-9]{4}){2} [0-9]{1,4}(?: [0-9]{1,3})?"
            r"|[0-9]{4}(?:-[0-9]{4}){2}-[0-9]{1,4}(?:-[0-9]{1,3})?"
            r"|[0-9]{4}[ -][0-9]{6}[ -][0-9]{4,5}",
            # Where a run starts: the check refuses a match after a `not_after` character.
            run_start("0-9A-Za-z_./-") + r"(?:[0-9]{13}|[0-9]{4}[ -][0-9]{4,6}[ -][0-9]{4})",
            _card,
            not_after="0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_./-",
        ),
        _pii(
            "iban",
            "international bank account numbers, mod-97 checked for the country's length",
            r"[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,32}",
            r"[A-Z]{2}[0-9]{2} ?[A-Z0-9]{4} ?[A-Z0-9]{4}",
            _iban,
        ),
        _pii(
            "us_ssn",
            "US social security numbers (123-45-6789, or 9 digits after an SSN label)",
            r"(?:^|[^0-9A-Za-z-])([0-9]{3}-[0-9]{2}-[0-9]{4})"
            r"|(?i:ssn|social[ _-]?security(?:[ _-]?(?:number|no\.?|num|#))?)"
            r"[^0-9\r\n]{0,20}([0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4})",
            r"[0-9]{3}-[0-9]{2}-[0-9]{4}|(?i:ssn|social[ _-]?security)",
            _ssn,
            groups=2,
        ),
        _pii(
            "phone_number",
            "phone numbers: +international, North-American (555) 123-4567 forms, national "
            "formats of their own (France 06 12 34 56 78, UK mobiles 07700 900123), or any "
            "digits after a phone/tel/mobile label or a signature's T/M/Tel. label",
            r"(?:^|[^0-9A-Za-z+])(\+[1-9][0-9 ().-]{6,22}[0-9])"
            r"|(?:^|[^0-9A-Za-z.+-])((?:1[ .-])?(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ .-])"
            r"[0-9]{3}[ .-][0-9]{4})"
            + "|"
            + run_start("A-Za-z")
            + r"(?i:phone|mobile|cell|tel|telephone|fax|whatsapp)"
            r"(?i:[ _-]?(?:no\.?|number|num|#))?[\"']?[ \t]*[:=#]?[ \t]*[\"']?"
            r"(\+?[0-9][0-9 ().-]{5,20}[0-9])"
            r"|(?:^|[^0-9A-Za-z+.,/-])(0[1-9](?: [0-9]{2}){4}|0[1-9](?:\.[0-9]{2}){4}"
            r"|07[0-9]{3} ?[0-9]{6})"
            r"|(?m)^[ \t]*(?:T|M|P|Tel|Tél|Mob|Ph)\.?:?[ \t]+(\+?[0-9][0-9 ().-]{5,20}[0-9])",
            r"\+[1-9][0-9 ().-]{6}"
            # The North-American forms, after the boundary their pattern starts with.
            + "|"
            + run_start("0-9A-Za-z.+-")
            + r"(?:1[ .-])?(?:[0-9]{3}[ .-][0-9]{3}[ .-][0-9]{4}|\([0-9]{3}\) ?[0-9]{3})"
            # The labelled forms: the pattern's own head, up to the value's first digit, after
            # the boundary it starts with (the `telephone`, `phoneno`, `cell5…` forms too).
            + "|"
            + run_start("A-Za-z")
            + r"(?i:phone|mobile|cell|tel|telephone|fax|whatsapp)"
            r"(?i:[ _-]?(?:no\.?|number|num|#))?[\"']?[ \t]*[:=#]?[ \t]*[\"']?\+?[0-9]"
            # The French and UK forms, after the boundary their pattern starts with.
            + "|"
            + run_start("0-9A-Za-z+.,/-")
            + r"(?:0[1-9][ .][0-9][0-9][ .][0-9][0-9][ .]|07[0-9][0-9][0-9] ?[0-9][0-9][0-9])"
            r"|(?:^|\n)[ \t]*(?:T|M|P|Tel|Tél|Mob|Ph)\.?:?[ \t]+[0-9(+]",
            _phone,
            groups=5,
        ),
        _pii(
            "ip_address",
            "IPv4 and IPv6 addresses (not loopback/unspecified, versions, OIDs or times)",
            r"(?:[0-9]{1,3}\.){3}[0-9]{1,3}"
            r"|(?:[0-9A-Fa-f]{0,4}:){2,6}(?:[0-9]{1,3}\.){3}[0-9]{1,3}"
            r"|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}",
            r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}|[0-9A-Fa-f]{1,4}::|::[0-9A-Fa-f]"
            r"|[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:",
            _ip,
        ),
    ]
