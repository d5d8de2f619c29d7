"""Personal data: e-mail, cards, IBANs, SSNs, phone numbers, IP addresses."""

from __future__ import annotations

import random

from ._blocks import (
    _IBAN_BBAN,
    _WORDS,
    Case,
    _card,
    _group4,
    _iban,
    _kind,
    _pick,
    _text_case,
    _uuid,
)

# Personal data --------------------------------------------------------------------------------

_FIRST = ("maria", "jonas", "aiko", "liam", "fatima", "chen", "olga", "diego", "amara", "noah")
_LAST = ("garcia", "müller", "tanaka", "oconnor", "haddad", "wang", "ivanova", "rossi", "okafor")
_DOMAINS = (
    "gmail.com",
    "outlook.com",
    "fastmail.fm",
    "acme-corp.io",
    "uni-berlin.de",
    "btinternet.co.uk",
)


def _email(rng: random.Random) -> str:
    first, last = rng.choice(_FIRST), rng.choice(_LAST).replace("ü", "u")
    local = rng.choice(
        (
            f"{first}.{last}",
            f"{first[0]}{last}",
            f"{first}+{rng.choice(_WORDS)}",
            f"{first}_{last}{rng.randint(1, 99)}",
        )
    )
    if rng.random() < 0.2:
        local = local.capitalize()
    return f"{local}@{rng.choice(_DOMAINS)}"


@_kind("pii_email")
def _pii_email(rng: random.Random, i: int) -> Case:
    """Email addresses in git logs, headers, CSV, JSON and prose."""
    email = _email(rng)
    if i % 5 == 4:
        uid = _uuid(rng)
        return Case(
            "pii_email",
            {"user": {"id": uid, "email": email, "plan": "pro"}},
            (email,),
            (uid,),
            True,
        )
    tpl = _pick(
        rng,
        (
            "commit ⟪sha⟫\nAuthor: Maria Garcia <⟪email⟫>\nDate:   Wed May 1 12:00:00 2024 +0000\n",
            "From: ⟪email⟫\nTo: support@acme-corp.io\nSubject: Order ⟪n⟫\nX-Request-Id: ⟪uuid⟫\n",
            "id,email,plan\n⟪uuid⟫,⟪email⟫,pro\n",
            "⟪ts⟫ INFO  password reset link sent to ⟪email⟫ (request ⟪uuid⟫)",
            "npm install @types/node@20.11.5 --save-dev  # asked by ⟪email⟫",
        ),
        i,
    )
    keep = ("@types/node@20.11.5",) if "@types/node" in tpl else ()
    return _text_case("pii_email", rng, tpl, {"email": email}, keep=keep, pii=True)


@_kind("pii_card")
def _pii_card(rng: random.Random, i: int) -> Case:
    """Luhn-valid payment card numbers of several brands, plain or grouped."""
    _, shown = _card(rng, i)
    if i % 5 == 4:
        order = f"ORD-{rng.randint(100000, 999999)}"
        payload = {"order": order, "payment": {"card_number": shown, "exp": "04/27"}}
        return Case("pii_card", payload, (shown,), (order,), True)
    tpl = _pick(
        rng,
        (
            "⟪ts⟫ WARN  charge declined for card ⟪card⟫ (order ⟪uuid⟫)",
            "id,name,card,amount\n⟪uuid⟫,Maria Garcia,⟪card⟫,42.10\n",
            "POST /checkout cc_number=⟪card⟫&cvv=***&request_id=⟪uuid⟫",
            "The customer read out their card number ⟪card⟫ over chat; ticket ⟪uuid⟫",
        ),
        i,
    )
    return _text_case("pii_card", rng, tpl, {"card": shown}, pii=True)


@_kind("pii_iban")
def _pii_iban(rng: random.Random, i: int) -> Case:
    """mod-97-valid IBANs of several countries, compact or in groups of four."""
    iban = _iban(rng, list(_IBAN_BBAN)[i % len(_IBAN_BBAN)])
    shown = _group4(iban) if i % 2 else iban
    tpl = _pick(
        rng,
        (
            "Please transfer the amount to IBAN ⟪iban⟫ (invoice INV-2024-⟪n⟫, ref ⟪uuid⟫).",
            '{"payout": {"iban": "⟪iban⟫", "currency": "EUR"}, "id": "⟪uuid⟫"}',
            "<CdtrAcct><Id><IBAN>⟪iban⟫</IBAN></Id></CdtrAcct><!-- msg ⟪uuid⟫ -->",
            "id,iban,amount\n⟪uuid⟫,⟪iban⟫,1200.00\n",
        ),
        i % 4,
    )
    return _text_case("pii_iban", rng, tpl, {"iban": shown}, pii=True)


def _ssn(rng: random.Random) -> str:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


@_kind("pii_ssn")
def _pii_ssn(rng: random.Random, i: int) -> Case:
    """US social security numbers (AAA-GG-SSSS with valid area, group and serial)."""
    ssn = _ssn(rng)
    tpl = _pick(
        rng,
        (
            "SSN: ⟪ssn⟫\nApplicant ID: ⟪uuid⟫\nSubmitted: 2024-05-01\n",
            '{"applicant": {"ssn": "⟪ssn⟫", "state": "CA"}, "request_id": "⟪uuid⟫"}',
            "id,first,last,ssn,dob\n⟪uuid⟫,Maria,Garcia,⟪ssn⟫,1984-03-12\n",
            "⟪ts⟫ INFO  verified social security number ⟪ssn⟫ for case ⟪uuid⟫",
        ),
        i % 4,
    )
    return _text_case("pii_ssn", rng, tpl, {"ssn": ssn}, pii=True)


def _phone(rng: random.Random, i: int) -> str:
    area = rng.choice([a for a in range(201, 990) if (a // 10) % 10 != 9 and a % 100 != 11])
    exch, line = rng.randint(200, 999), rng.randint(0, 9999)
    forms = (
        f"({area}) {exch}-{line:04d}",
        f"+1 {area}-{exch}-{line:04d}",
        f"{area}.{exch}.{line:04d}",
        f"+44 20 {rng.randint(7000, 8999)} {rng.randint(1000, 9999)}",
        f"+49 151 {rng.randint(10000000, 99999999)}",
        f"+33 6 {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)} "
        f"{rng.randint(10, 99)}",
        f"+91 {rng.randint(70000, 99999)} {rng.randint(10000, 99999)}",
        f"+81 3-{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}",
        f"+55 11 9{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}",
        f"+61 4{rng.randint(10, 99)} {rng.randint(100, 999)} {rng.randint(100, 999)}",
    )
    return forms[i % len(forms)]


@_kind("pii_phone")
def _pii_phone(rng: random.Random, i: int) -> Case:
    """Phone numbers in US and international formats."""
    phone = _phone(rng, i)
    tpl = rng.choice(
        (
            "Call me back at ⟪phone⟫ tomorrow. (ticket ⟪uuid⟫)",
            '{"contact": {"phone": "⟪phone⟫"}, "id": "⟪uuid⟫"}',
            "⟪ts⟫ INFO  sms sent to ⟪phone⟫ message_id=⟪uuid⟫",
            "BEGIN:VCARD\nFN:Maria Garcia\nTEL;TYPE=cell:⟪phone⟫\nUID:⟪uuid⟫\nEND:VCARD\n",
        )
    )
    return _text_case("pii_phone", rng, tpl, {"phone": phone}, pii=True)


def _public_ipv4(rng: random.Random) -> str:
    while True:
        a = rng.randint(1, 223)
        b = rng.randint(0, 255)
        if a in (10, 127, 0) or (a == 172 and 16 <= b <= 31) or (a, b) in ((192, 168), (169, 254)):
            continue
        if (a == 100 and 64 <= b <= 127) or (a in (192, 198, 203) and b in (0, 18, 19, 51, 113)):
            continue
        return f"{a}.{b}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


@_kind("pii_ipv4")
def _pii_ipv4(rng: random.Random, i: int) -> Case:
    """Public IPv4 client addresses in access logs, headers and JSON."""
    ip = _public_ipv4(rng)
    tpl = _pick(
        rng,
        (
            '⟪ip⟫ - - [01/May/2024:12:03:44 +0000] "GET /v2.14.1/docs HTTP/1.1" 200 5123 "-" '
            '"curl/8.4.0"',
            "X-Forwarded-For: ⟪ip⟫\nX-Request-Id: ⟪uuid⟫\n",
            '{"event": "login", "client_ip": "⟪ip⟫", "session_ref": "⟪uuid⟫"}',
            "⟪ts⟫ WARN  rate limit exceeded for ⟪ip⟫ (trace ⟪trace⟫)",
            "sshd[⟪n⟫]: Accepted publickey for deploy from ⟪ip⟫ port 52144 ssh2: ED25519 "
            "SHA256:⟪span⟫",
        ),
        i,
    )
    keep = ("/v2.14.1/docs",) if "v2.14.1" in tpl else ()
    return _text_case("pii_ipv4", rng, tpl, {"ip": ip}, keep=keep, pii=True)


def _ipv6(rng: random.Random, i: int) -> str:
    while True:
        groups = [rng.randint(0x2000, 0x3FFF)] + [rng.randint(0, 0xFFFF) for _ in range(7)]
        if groups[:2] != [0x2001, 0x0DB8]:
            break
    if i % 3 == 0:
        return ":".join(f"{g:04x}" for g in groups)
    if i % 3 == 1:
        start = rng.randint(2, 5)
        run = rng.randint(2, 7 - start)
        head = ":".join(f"{g:x}" for g in groups[:start])
        tail = ":".join(f"{g:x}" for g in groups[start + run :])
        return f"{head}::{tail}"
    return ":".join(f"{g:x}" for g in groups).upper()


@_kind("pii_ipv6")
def _pii_ipv6(rng: random.Random, i: int) -> Case:
    """Global IPv6 addresses, full, compressed and upper-case."""
    ip = _ipv6(rng, i)
    tpl = _pick(
        rng,
        (
            "⟪ts⟫ INFO  accepted connection from [⟪ip⟫]:51234 (conn ⟪uuid⟫)",
            "X-Forwarded-For: ⟪ip⟫\nX-Request-Id: ⟪uuid⟫\n",
            '{"client_ip": "⟪ip⟫", "ts": "14:03:27", "id": "⟪uuid⟫"}',
            '⟪ip⟫ - - [01/May/2024:14:03:27 +0000] "GET /healthz HTTP/2.0" 200 2 trace=⟪trace⟫',
        ),
        i % 4,
    )
    return _text_case("pii_ipv6", rng, tpl, {"ip": ip}, pii=True)
