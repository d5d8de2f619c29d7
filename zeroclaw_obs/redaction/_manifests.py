"""Kubernetes `Secret` manifests: every value under `data:` and `stringData:` is secret.

A manifest's secret values sit under keys that name nothing sensitive (`username`, `host`,
`config.yaml`), so neither the key rules nor the token formats see them: the base64 in `data:`
is the secret itself, whatever it decodes to. `KubernetesSecretRule` reads YAML text (one or
more documents separated by `---`): in every document holding `kind: Secret` it replaces the
values of the `data:` and `stringData:` mappings (a block scalar, `key: |`, as one span), and
keeps the keys, certificates (`tls.crt`, `ca.crt`: public by design), `metadata`, `type` and
every other document (a `ConfigMap`'s `data:` is not
secret). The same manifest as data (`redact_value`, or JSON text) is handled by the value walk
(`_structured.is_secret_manifest`).

Risky part: this reads YAML by indentation, not with a parser (no parser is linear on
adversarial text). A value the reading misses still meets every other rule; what it could
wrongly take is limited to lines indented under `data:` in a document that says `kind: Secret`.
Linear: each document is read once, whatever number of `kind: Secret` lines it holds.
"""

from __future__ import annotations

from ._scanner import Candidate, View, compile_pattern

__all__ = ["KubernetesSecretRule", "is_certificate_key"]

_BLOCK_SCALARS = frozenset({"|", ">", "|-", ">-", "|+", ">+"})
_SECTIONS = frozenset({"data:", "stringData:"})


class KubernetesSecretRule:
    """Replaces the values of a `kind: Secret` manifest's `data:` and `stringData:` (YAML text).

    Sits with the context rules, before `key_value`, so `password: …` inside a Secret is named
    for the manifest.
    """

    rule_id = "kubernetes_secret"
    reports = True
    description = (
        "values under data: and stringData: in Kubernetes Secret manifests (YAML text, or "
        "the manifest as data); keys, metadata and other documents are kept"
    )
    trigger = r"kind:[ \t]*[\"']?Secret"
    pii = False

    def __init__(self, priority: int) -> None:
        self.priority = priority
        self._kind = compile_pattern(
            r"(?m)^[ \t]*(?:-[ \t]+)?kind:[ \t]*[\"']?Secret[\"']?[ \t]*\r?$"
        )

    def find(self, view: View) -> list[Candidate]:
        """Candidates for the values of every Secret document's data sections."""
        text = view.text
        found: list[Candidate] = []
        done = 0  # documents end before this offset have been read
        for spans in view.matches(self._kind):
            at = spans[0][0]
            if at < done:
                continue  # another `kind: Secret` in a document already read
            start = text.rfind("\n---", done, at)
            start = done if start < 0 else start + 1
            end = text.find("\n---", at)
            end = len(text) if end < 0 else end
            found.extend(self._values(text, start, end))
            done = end
        return found

    def _values(self, text: str, start: int, end: int) -> list[Candidate]:
        """The value spans of the data sections in `text[start:end]`, one document."""
        found: list[Candidate] = []
        section: int | None = None  # indentation of the `data:` line we are under
        scalar: int | None = None  # indentation of the key whose block scalar we are in
        block: list[int] = []  # the block scalar's span so far (one marker for all its lines)
        public = False  # the current key names a certificate: its value is kept
        offset = start
        for line in text[start:end].split("\n"):
            content = line.strip(" \t\r")
            indent = len(line) - len(line.lstrip(" \t"))
            at, offset = offset + indent, offset + len(line) + 1
            if not content or content.startswith("#"):
                continue
            if scalar is not None and indent > scalar:
                if not public:
                    block[1:] = [at + len(content)] if block else [at, at + len(content)]
                continue
            if block:
                found.append((block[0], block[-1], self.priority, self.rule_id))
                block = []
            scalar = None
            if section is not None and indent <= section:
                section = None
            if section is None:
                if content in _SECTIONS:
                    section = indent
                continue
            span = _value_span(content)
            if span is None:
                continue
            public = is_certificate_key(content[: span[0]].rstrip(" \t:\"'"))
            if content[span[0] :] in _BLOCK_SCALARS:
                scalar = indent
            elif not public:
                found.append((at + span[0], at + span[1], self.priority, self.rule_id))
        if block:
            found.append((block[0], block[-1], self.priority, self.rule_id))
        return found


_CERTIFICATE_SUFFIXES = (".crt", ".cert", ".cer", "cert", "certificate", "ca-bundle", "ca.pem")


def is_certificate_key(key: str) -> bool:
    """Whether a Secret's data key names a certificate (`tls.crt`, `ca.crt`): public."""
    key = key.strip(" \t\"'").lower()
    return key.endswith(_CERTIFICATE_SUFFIXES) and "key" not in key


def _value_span(content: str) -> tuple[int, int] | None:
    """Where the value of a `key: value` line starts and ends (quotes left out), or None."""
    colon = content.find(": ")
    if colon < 0:
        return None
    start = colon + 2
    while start < len(content) and content[start] in " \t":
        start += 1
    end = len(content)
    if end - start >= 2 and content[start] in "\"'" and content[end - 1] == content[start]:
        start, end = start + 1, end - 1
    value = content[start:end]
    if not value or value.startswith("${") or value in ('""', "''"):
        return None
    return start, end
