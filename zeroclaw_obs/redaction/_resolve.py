"""Settling overlapping candidates into the spans that are replaced (`resolve`).

Every rule of the chain proposes candidates on its own; several may claim the same text (a
token inside a quoted password, an e-mail look-alike inside a URL's user info). `resolve`
decides, in chain order, which span each character of the text ends up in.

Risky part: adversarial text can make many candidates overlap one another. A group of more
than `_CLUSTER_LIMIT` is merged into one span, so settling stays linear and still hides
everything any rule wanted hidden.
"""

from __future__ import annotations

__all__ = ["Candidate", "resolve"]

Candidate = tuple[int, int, int, str]
"""`(start, end, priority, rule_id)` in offsets of the scanned text; lower priority wins."""

_CLUSTER_LIMIT = 64
"""More mutually overlapping candidates than this are merged whole (keeps resolve linear)."""


def resolve(found: list[Candidate], *, clip_below: int = 0) -> list[Candidate]:
    """Settle overlapping candidates into disjoint spans, in text order.

    Within a group of overlapping candidates, rules are taken in chain order (most specific
    first) and each claims its span unless it overlaps one already claimed. A candidate that
    strictly contains every claimed span it overlaps replaces them: a quoted password that
    holds a GitHub token is replaced whole, not just the token. A candidate of a rule that
    knows a secret by its own format (priority below `clip_below`) that only partly overlaps
    claimed spans keeps its parts outside them: an unclosed PEM body that ran into the `ghp`
    of a token on the next line must not leave the token's rest. Any other candidate that
    only partly overlaps is dropped: it judged by context, and its context is taken (an
    e-mail look-alike `pass@host.tld` inside `scheme://user:pass@host.tld` loses to
    `url_credentials`, and the host stays). Groups larger than
    `_CLUSTER_LIMIT` are merged into one span named by their most specific rule, which keeps
    this linear on adversarial input and still hides everything any rule wanted hidden.
    """
    if len(found) == 1:
        return found
    found.sort(key=lambda c: (c[0], -c[1], c[2]))
    resolved: list[Candidate] = []
    cluster: list[Candidate] = []
    cluster_end = -1
    for candidate in found:
        if candidate[0] >= cluster_end and cluster:
            resolved.extend(_settle(cluster, clip_below))
            cluster = []
        cluster.append(candidate)
        cluster_end = max(cluster_end, candidate[1]) if len(cluster) > 1 else candidate[1]
    resolved.extend(_settle(cluster, clip_below))
    return resolved


def _settle(cluster: list[Candidate], clip_below: int) -> list[Candidate]:
    if len(cluster) == 1:
        return cluster
    if len(cluster) > _CLUSTER_LIMIT:
        best = min(cluster, key=lambda c: c[2])
        return [(cluster[0][0], max(c[1] for c in cluster), best[2], best[3])]
    claimed: list[Candidate] = []
    for candidate in sorted(cluster, key=lambda c: (c[2], c[0])):
        start, end = candidate[0], candidate[1]
        overlapping = [c for c in claimed if c[0] < end and start < c[1]]
        if not overlapping:
            claimed.append(candidate)
        elif all(
            start <= c[0] and c[1] <= end and (start, end) != (c[0], c[1]) for c in overlapping
        ):
            claimed = [c for c in claimed if c not in overlapping]
            claimed.append(candidate)
        elif candidate[2] < clip_below:
            claimed.extend(_outside(candidate, overlapping))
    claimed.sort()
    return claimed


def _outside(candidate: Candidate, claimed: list[Candidate]) -> list[Candidate]:
    """The parts of `candidate` that no claimed span covers, under its own rule."""
    start, end, priority, rule_id = candidate
    parts: list[Candidate] = []
    for c in sorted(claimed):
        if start < c[0]:
            parts.append((start, min(c[0], end), priority, rule_id))
        start = max(start, c[1])
    if start < end:
        parts.append((start, end, priority, rule_id))
    return parts
