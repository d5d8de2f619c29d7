"""More providers' formats: tokens known by a prefix, and webhook URLs whose path is the secret.

`token_specs()` (`_rules.py`) names the providers an agent meets most, each under its own id.
This module holds the long tail as one table each: `provider_token` for tokens that carry a
vendor prefix and a fixed alphabet and length (DigitalOcean `dop_v1_…`, Shopify `shpat_…`,
Vault `hvs.…`, Telegram `123456:AA…`, …; the shapes are those public secret scanners document,
gitleaks' `config/gitleaks.toml` first among them), and `webhook_url` for incoming-webhook URLs
(Discord, Microsoft Teams, Zapier, IFTTT, Mattermost) where whoever holds the URL can post.

Risky part: a prefix alone (`key-`, `pat`, `secret_`) also starts ordinary words and ids. Each
entry therefore fixes its alphabet and length (a greedy run that is longer is some other
string), the run must not go on into more token characters, and its body must not be one
character repeated (`dop_v1_000…` in documentation). Prefixes too common to gate on cheaply
are left out (Airtable `pat…`, Notion's old `secret_…`): the key rules still see them.
"""

from __future__ import annotations

import re

from ._normalize import utf8_safe
from ._scanner import LEAD, Hit, Spec, compile_pattern

__all__ = ["provider_specs"]

_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

# (pattern, gate trigger): the trigger is a literal piece every match holds (cheap in the gate).
_PREFIXED: tuple[tuple[str, str], ...] = (
    (r"do[opr]_v1_[a-f0-9]{64}", r"do[opr]_v1_"),  # DigitalOcean
    (r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", r"shp(?:at|ca|pa|ss)_"),  # Shopify
    (r"lin_(?:api|oauth)_[A-Za-z0-9]{40}", r"lin_(?:api|oauth)_"),  # Linear
    (r"sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{31,}", r"sbp_|sb_secret_"),  # Supabase
    (r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,3}", r"gl(?:sa|c)_"),
    (r"hv[sbr]\.[A-Za-z0-9_-]{24,300}", r"hv[sbr]\."),  # HashiCorp Vault
    (r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}", r"dp\.[a-z]{2,5}\."),  # Doppler
    (r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", r"AGE-SECRET-KEY-1"),  # age
    (r"key-[a-f0-9]{32}", r"key-[a-f0-9]"),  # Mailgun
    (r"dapi[a-f0-9]{32}(?:-[0-9])?", r"dapi[a-f0-9]"),  # Databricks
    (r"pul-[a-f0-9]{40}", r"pul-"),  # Pulumi
    (r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", r"PMAK-"),  # Postman
    (r"ATATT3[A-Za-z0-9_=-]{100,}", r"ATATT3"),  # Atlassian
    (r"ATBB[A-Za-z0-9]{32}", r"ATBB"),  # Bitbucket app password
    (r"sntry[su]_[A-Za-z0-9+/=_]{40,}", r"sntry[su]_"),  # Sentry
    (r"ntn_[0-9]{11}[A-Za-z0-9]{35}", r"ntn_"),  # Notion
    (r"figd_[A-Za-z0-9_-]{40,}", r"figd_"),  # Figma
    (r"NR(?:AK|II|JS)-[A-Za-z0-9-]{19,40}", r"NR(?:AK|II|JS)-"),  # New Relic
    (r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}", r"dt0c01\."),  # Dynatrace
    (r"fo1_[A-Za-z0-9_-]{43}", r"fo1_"),  # Fly.io
    (r"tskey-[a-z]{0,8}-?[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}", r"tskey-"),  # Tailscale
    (r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}|EAAA[A-Za-z0-9_-]{60}", r"sq0(?:atp|csp)-|EAAA"),
    (r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}", r"pscale_"),  # PlanetScale
    (r"rnd_[A-Za-z0-9]{32}", r"rnd_"),  # Render
    (r"bkua_[a-f0-9]{40}", r"bkua_"),  # Buildkite
    (r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}", r"CCIPAT_"),  # CircleCI
    (r"dckr_pat_[A-Za-z0-9_-]{27,}", r"dckr_pat_"),  # Docker Hub
    (r"sgp_[a-fA-F0-9_]{40,}", r"sgp_"),  # Sourcegraph
    (r"pnu_[A-Za-z0-9]{36}", r"pnu_"),  # Prefect
    (r"rdme_[a-z0-9]{70}", r"rdme_"),  # ReadMe
    (r"rubygems_[a-f0-9]{48}", r"rubygems_"),  # RubyGems
    (r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", r"xkeysib-"),  # Brevo (Sendinblue)
    (r"shippo_(?:live|test)_[a-f0-9]{40}", r"shippo_"),  # Shippo
    (r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", r"duffel_"),  # Duffel
    (r"EZ[AT]K[A-Za-z0-9]{54}", r"EZ[AT]K"),  # EasyPost
    (r"FLWSECK(?:_TEST)?-[a-h0-9]{32}-X", r"FLWSECK"),  # Flutterwave
    (r"HRKU-AA[A-Za-z0-9_-]{58}", r"HRKU-"),  # Heroku
    (r"LTAI[A-Za-z0-9]{20}", r"LTAI"),  # Alibaba Cloud access key id
    (r"AKCp[A-Za-z0-9]{69}", r"AKCp"),  # JFrog Artifactory
    (r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}", r"ops_eyJ"),  # 1Password service account
    (r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", r"v1\.0-[a-f0-9]"),  # Cloudflare origin CA
    (r"gsk_[A-Za-z0-9]{52}", r"gsk_"),  # Groq
    (r"pplx-[A-Za-z0-9]{48}", r"pplx-"),  # Perplexity
    (r"xai-[A-Za-z0-9]{80}", r"xai-"),  # xAI
    (r"r8_[A-Za-z0-9]{37}", r"r8_"),  # Replicate
    (r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", r"lsv2_"),  # LangSmith
    (r"pcsk_[A-Za-z0-9_]{50,}", r"pcsk_"),  # Pinecone
    (r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}", r"tvly-"),  # Tavily
    (r"CLOJARS_[a-z0-9]{60}", r"CLOJARS_"),  # Clojars
    (r"sha256~[A-Za-z0-9_-]{43}", r"sha256~"),  # OpenShift
    (r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", r"\.atlasv1\."),  # Terraform Cloud
    (
        r"(?:bot)?[0-9]{8,10}:AA[A-Za-z0-9_-]{33}",
        r"[0-9]:AA",
    ),  # Telegram bot (api.telegram.org/bot…)
    # AWS STS session tokens (base64 of a serialized blob starting `!\n\torigin_ec`, older
    # ones `\x17\n\x06er/aws`)
    (r"(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9+/=]{100,}", r"IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE"),
    # Braintree access token
    (r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}", r"access_token\$"),
    (r"sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}", r"sk\.eyJ"),  # Mapbox secret
    (r"[a-f0-9]{32}-us[0-9]{1,2}", r"[a-f0-9]-us[0-9]"),  # Mailchimp
)


def _loose(pattern: str) -> str:
    """`pattern` with every counted run made open (`{64}` → `+`, `{0,3}` → `*`).

    The table's exact lengths, hundreds of counted states side by side, would make the scan's
    automaton large and slow on dense text; the scan finds candidates with open runs and the
    check holds each to its exact format (`_PRECISE`).
    """
    return re.sub(r"\{(\d+)(?:,\d*)?\}", lambda m: "*" if m.group(1) == "0" else "+", pattern)


_PRECISE = compile_pattern("|".join(p for p, _ in _PREFIXED))
"""The table's formats as written, for the check (one anchored match of a short candidate)."""


def _provider_token(hit: Hit) -> tuple[int, int] | None:
    """Accept a run that is exactly one of the table's formats, does not go on into more
    token characters, and is not a body of one repeated character (`dop_v1_000…` in
    documentation)."""
    text = hit.text
    if hit.end < len(text) and text[hit.end] in _TOKEN_CHARS:
        return None
    if _PRECISE.fullmatch(utf8_safe(text[hit.start : hit.end])) is None:
        return None
    tail = text[max(hit.start, hit.end - 32) : hit.end]
    return (hit.start, hit.end) if len(set(tail)) >= 6 else None


def _webhook(hit: Hit) -> tuple[int, int] | None:
    """The secret path of a webhook URL, without a trailing slash that ends the URL."""
    value = hit.text[hit.start : hit.end]
    return (hit.start, hit.end) if len(set(value)) >= 6 else None


def provider_specs() -> list[Spec]:
    """`provider_token`, then `webhook_url`; they rank after `token_specs()`."""
    pattern = "|".join(_loose(p) for p, _ in _PREFIXED)
    trigger = "|".join(t for _, t in _PREFIXED)
    return [
        Spec(
            "provider_token",
            "tokens of other providers known by their prefix, alphabet and length: "
            "DigitalOcean, Shopify, Linear, Supabase, Grafana, Vault, Doppler, age, Mailgun, "
            "Databricks, Pulumi, Postman, Atlassian, Sentry, Notion, Figma, New Relic, "
            "Dynatrace, Fly.io, Tailscale, Square, PlanetScale, Docker Hub, Telegram, …",
            rf"{LEAD}(?:{pattern})",
            trigger,
            secret=(0,),
            check=_provider_token,
            lead=True,
        ),
        Spec(
            "webhook_url",
            "incoming-webhook URLs whose path is the secret: Discord, Microsoft Teams, "
            "Zapier, IFTTT, Mattermost (the host is kept)",
            r"(?i:discord(?:app)?\.com/api(?:/v[0-9]{1,2})?/webhooks/)([0-9]{17,20}/[A-Za-z0-9_-]{60,})"
            r"|(?i:\.webhook\.office\.com/webhookb2/|outlook\.office(?:365)?\.com/webhook/)"
            r"([A-Za-z0-9@/_-]{40,})"
            r"|(?i:hooks\.zapier\.com/hooks/(?:catch|standard)/)([0-9]+/[A-Za-z0-9]+/?)"
            r"|(?i:maker\.ifttt\.com/(?:trigger/[^/\s]+/(?:json/)?with/)?key/|maker\.ifttt\.com/use/)"
            r"([A-Za-z0-9_-]{16,})"
            r"|/hooks/([a-z0-9]{26})\b",
            r"(?i:discord(?:app)?\.com/api|webhook\.office\.com/|outlook\.office(?:365)?\.com/webhook"
            r"|hooks\.zapier\.com/|maker\.ifttt\.com/)|/hooks/[a-z0-9]",
            secret=(1, 2, 3, 4, 5),
            check=_webhook,
        ),
    ]
