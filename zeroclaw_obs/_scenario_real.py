"""The parts of a scenario that reach outside the process: the real provider section and MCP
server entries, and the checks that keep secrets out of the file (names, URLs, values)."""

from __future__ import annotations

import functools
import ipaddress
import re
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import (
    Field,
    model_validator,
)

from ._scenario_base import Name, ScenarioTool, StrictModel
from .config import (
    FieldProblem,
)
from .errors import ConfigError

McpTransport = Literal["scripted", "stdio", "http"]
"""How a server's tools are reached: scripted in the file, a process the runtime starts
(stdio), or a streamable-HTTP endpoint."""


_FORM_FIELDS = (
    ("args", ("stdio",), "command"),
    ("env", ("stdio",), "command"),
    ("env_from", ("stdio",), "command"),
    ("headers_env", ("http",), "url"),
    ("timeout_s", ("stdio", "http"), "command or url"),
    ("call_timeout_s", ("stdio", "http"), "command or url"),
)
"""Fields that belong to one form: (field, the transports that take it, what it needs)."""


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}")


# Whole words of a variable name that say "secret" (GIT_AUTHOR_NAME is not AUTH), and
# fragments that say it wherever they appear (MY_SECRETKEY, GITHUB_PAT_TOKEN).
_SECRET_WORDS = frozenset({"key", "auth", "pass", "pwd", "pat", "pin", "cookie", "session"})


_SECRET_FRAGMENTS = re.compile(
    r"secret|token|passw|passphrase|apikey|api_key|credential|bearer|authoriz|private",
    re.IGNORECASE,
)


ENV_FROM_HINT = "name the variable that holds it with env_from: {VAR: ENV_NAME}"
"""How a secret reaches a stdio server: from the runtime's environment, never the file."""


def names_a_secret(name: str) -> bool:
    """Whether a name says it holds a secret: an environment variable, a `provider` field, a
    URL query parameter (the one test every such check in this module uses).

    A word of the name (split at `_` and `-`) is `KEY`, `AUTH`, `PASS`, `PWD`, `PAT`, `PIN`,
    `COOKIE` or `SESSION`, or the name contains `SECRET`, `TOKEN`, `PASSW`, `PASSPHRASE`,
    `APIKEY`, `API_KEY`, `CREDENTIAL`, `BEARER`, `AUTHORIZ` or `PRIVATE` (any case).

    Args:
        name: the variable name.

    Returns:
        True for `OPENAI_API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`; False for
        `GIT_AUTHOR_NAME`, `PATH`, `LOG_LEVEL`.
    """
    words = set(re.split(r"[_\-]+", name.lower()))
    return bool(words & _SECRET_WORDS) or bool(_SECRET_FRAGMENTS.search(name))


class ScenarioMcpServer(StrictModel):
    """An MCP server; tool `t` of server `s` is offered as `s__t` (DESIGN §7).

    Exactly one of three forms:
    - scripted: `tools:`, the tools in the file (replayed, no process);
    - stdio: `command:` with `args`, `env` and `env_from`; the runtime starts, owns and stops
      the process;
    - streamable HTTP: `url:` with `headers_env`.
    `deferred`, and for a server the runtime connects `timeout_s` (connect, default 10) and
    `call_timeout_s` (per call; the runtime's `tool_timeout_s` when None), apply as named.

    Secrets never live in the file: `env` takes literal values only for variables whose name
    does not look secret (`names_a_secret`) and whose value the redactor does not
    recognise as a secret; anything else comes from the runtime's environment through
    `env_from: {VAR: ENV_NAME}`. HTTP headers come only from `headers_env:
    {Header: ENV_NAME}`; a literal `headers:` is refused. Errors name the field, never a value.
    """

    name: Name
    deferred: bool = False
    tools: list[ScenarioTool] = Field(default_factory=list)
    """Scripted tools; only for a scripted server."""
    command: Name | None = None
    """stdio: the program to start (looked up on PATH by the wiring)."""
    args: list[str] = Field(default_factory=list)
    """stdio: the program's arguments."""
    env: dict[str, str] = Field(default_factory=dict)
    """stdio: variables set for the process, literal and not secret."""
    env_from: dict[str, str] = Field(default_factory=dict)
    """stdio: variable of the process → the NAME of the runtime's variable holding its value."""
    url: str | None = None
    """Streamable HTTP: the endpoint, http or https, no credentials in it."""
    headers_env: dict[str, str] = Field(default_factory=dict)
    """Streamable HTTP: header name → the NAME of the variable holding its value."""
    headers: dict[str, Any] | None = None
    """Refused when given: header values come from the environment (`headers_env`)."""
    timeout_s: float = Field(default=10.0, gt=0)
    """Seconds to connect and list the tools (finite); only for stdio and HTTP servers."""
    call_timeout_s: float | None = Field(default=None, gt=0)
    """Seconds one call may take (finite); None: the runtime's `tool_timeout_s`."""

    @property
    def transport(self) -> McpTransport:
        """`scripted`, `stdio` or `http`: which form the file chose."""
        if self.command is not None:
            return "stdio"
        if self.url is not None:
            return "http"
        return "scripted"

    def process_env(self, environ: dict[str, str] | Any) -> dict[str, str]:
        """The variables the agent file gives a stdio server's process (the client decides
        what else the process inherits).

        Args:
            environ: the runtime's environment (`os.environ`).

        Returns:
            `env`, then every `env_from` variable with the value of the variable it names.

        Raises:
            ValueError: a variable `env_from` names is not set (the message names the field
                and the variable, never a value).
        """
        resolved = dict(self.env)
        for target, source in self.env_from.items():
            if source not in environ:
                raise ValueError(
                    f"mcp server {self.name}: env_from.{target}: variable {source} is not set"
                )
            resolved[target] = environ[source]
        return resolved

    def http_headers(self, environ: dict[str, str] | Any) -> dict[str, str]:
        """The headers an HTTP server's requests carry, read from the environment.

        Raises:
            ValueError: a variable `headers_env` names is not set (named, never a value).
        """
        headers: dict[str, str] = {}
        for header, source in self.headers_env.items():
            if source not in environ:
                raise ValueError(
                    f"mcp server {self.name}: headers_env.{header}: variable {source} is not set"
                )
            headers[header] = environ[source]
        return headers

    @model_validator(mode="after")
    def _one_form(self) -> ScenarioMcpServer:
        given = [
            field
            for field, value in (
                ("tools", "tools" in self.model_fields_set or None),
                ("command", self.command),
                ("url", self.url),
            )
            if value is not None
        ]
        if not given:
            raise ValueError(
                "needs exactly one of tools (scripted), command (stdio) or url (streamable HTTP)"
            )
        if len(given) > 1:
            raise FieldProblem(
                (given[1],),
                f"takes exactly one of tools, command, url (got {', '.join(given)})",
            )
        if self.headers is not None:
            raise FieldProblem(
                ("headers",),
                "literal header values are refused: secrets come from the environment, "
                "name the variables with headers_env: {Header: ENV_NAME}",
            )
        transport = self.transport
        for field, allowed, needs in _FORM_FIELDS:
            if field in self.model_fields_set and transport not in allowed:
                raise FieldProblem(
                    (field,), f"only for a server with {needs} (this one is {transport})"
                )
        self._check_env()
        self._check_http()
        return self

    def _check_env(self) -> None:
        for key, value in self.env.items():
            if not _ENV_NAME.fullmatch(key):
                raise FieldProblem(("env", key), "must be an environment variable name")
            if names_a_secret(key) or _looks_secret(value):
                raise FieldProblem(
                    ("env", key),
                    f"a secret-looking variable takes no literal value here: {ENV_FROM_HINT}",
                )
        for key, source in self.env_from.items():
            if not _ENV_NAME.fullmatch(key):
                raise FieldProblem(("env_from", key), "must be an environment variable name")
            if not _ENV_NAME.fullmatch(source):
                raise FieldProblem(
                    ("env_from", key),
                    "must be the NAME of an environment variable (letters, digits, _), "
                    "not the value itself",
                )
            if key in self.env:
                raise FieldProblem(("env_from", key), "is also set in env; keep one")

    def _check_http(self) -> None:
        if self.url is not None:
            problem = _base_url_problem(self.url, hint="secrets come from headers_env")
            if problem is not None:
                raise FieldProblem(("url",), problem)
        for header, source in self.headers_env.items():
            if not _HEADER_NAME.fullmatch(header):
                raise FieldProblem(("headers_env", header), "must be an HTTP header name")
            if not _ENV_NAME.fullmatch(source):
                raise FieldProblem(
                    ("headers_env", header),
                    "must be the NAME of an environment variable (letters, digits, _), "
                    "not the header's value",
                )


@functools.cache
def _secret_scanner() -> Any:
    from .redaction import Redactor  # built once, on the first literal `env` value

    return Redactor.from_config(pii=False)


def _looks_secret(value: str) -> bool:
    """Whether the redactor's secret rules (personal data off) find a secret in `value`."""
    return _secret_scanner().redact_text(value) != value


ProviderKind = Literal["scripted", "openai", "anthropic"]
"""`scripted` replays `responses`; `openai` speaks Chat Completions (and every compatible
server); `anthropic` speaks the Messages API."""


DEFAULT_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
"""Where a real provider goes when the file gives no `base_url`."""


DEFAULT_API_KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
"""The variable a real provider reads its key from when the file gives no `api_key_env`."""


KEY_IN_FILE = "keys are read from the variable api_key_env names, never from the file"
"""The problem reported for a key written in a scenario's `provider` section."""


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


_CREDENTIAL_NAMES = frozenset(
    {
        "api_key",
        "apikey",
        "key",
        "token",
        "api_token",
        "access_token",
        "auth_token",
        "bearer_token",
        "secret",
        "secret_key",
        "client_secret",
        "password",
        "authorization",
    }
)
"""Credential field names shown as written (lowercased) in the error; any other
credential-like key is shown by its position, like every unknown key."""


class ScenarioProvider(StrictModel):
    """The `provider:` section: the scripted model, or a real backend (DESIGN §7).

    A real backend (`kind: openai | anthropic`) needs `model`; its key is read at run start
    from the environment variable `api_key_env` names (never from the file: a key-like field
    here is refused at load, see `reject_keys_in_file`).
    """

    kind: ProviderKind = "scripted"
    native_tools: bool = True
    """False: the text protocol over the same API."""
    name: Name = "scripted"
    """`gen_ai.provider.name`; defaults to `kind`."""
    model: Name | None = None
    """The model to ask; required for a real backend (`scripted-model` when scripted)."""
    base_url: str | None = None
    """The API root (`DEFAULT_BASE_URLS` when None); http or https, no credentials in it."""
    api_key_env: str | None = None
    """The NAME of the variable holding the key. Not given: `DEFAULT_API_KEY_ENV`, and the
    key may be missing for a loopback `base_url` (a local server without auth: no auth
    header is sent). Given: the variable must be set at run start. `null` given explicitly:
    no key is ever sent."""
    stream: bool = True
    timeout_s: float = Field(default=60.0, gt=0)
    """Connect and read timeout in seconds (finite)."""
    max_retries: int = Field(default=2, ge=0, le=10)
    """Retries after 429, 5xx and connect errors (exponential backoff, Retry-After honoured)."""
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    """The cap on each answer's output tokens. Sent as `max_tokens` (the field every
    OpenAI-compatible server reads); Anthropic requires one and gets 4,096 when None."""
    models: list[Name] = Field(default_factory=list, max_length=64)
    """Other models of this backend a model switch may name (`turn/model_switch.py`,
    `model_targets.py`): everything else stays as this section says. `model` is always
    allowed; a switch to any other model is refused."""

    @model_validator(mode="before")
    @classmethod
    def _defaults_by_kind(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        kind = data.get("kind", "scripted")
        defaults = {"name": kind} if isinstance(kind, str) else {}
        if kind == "scripted":
            defaults["model"] = "scripted-model"
        return {**defaults, **data}

    @model_validator(mode="after")
    def _real_backend_fields(self) -> ScenarioProvider:
        if self.model is None:
            raise FieldProblem(("model",), f"required when kind is {self.kind}")
        if self.base_url is not None:
            problem = _base_url_problem(self.base_url)
            if problem is not None:
                raise FieldProblem(("base_url",), problem)
        if self.api_key_env is not None and not _ENV_NAME.fullmatch(self.api_key_env):
            raise FieldProblem(
                ("api_key_env",),
                "must be the NAME of an environment variable (letters, digits, _), "
                "not the key itself",
            )
        return self

    @property
    def real(self) -> bool:
        """True for a real backend (`openai`, `anthropic`)."""
        return self.kind != "scripted"

    @property
    def url(self) -> str:
        """The API root this provider talks to (`base_url` or the kind's default)."""
        return self.base_url or DEFAULT_BASE_URLS.get(self.kind, "")

    @property
    def key_variable(self) -> str | None:
        """The variable the key is read from: `api_key_env` when given (None: no key ever),
        else the kind's default."""
        if "api_key_env" in self.model_fields_set:
            return self.api_key_env
        return DEFAULT_API_KEY_ENV.get(self.kind)

    @property
    def key_required(self) -> bool:
        """Whether a missing variable is an error: yes when `api_key_env` is given, or when
        the default variable is read for a server that is not on loopback."""
        if "api_key_env" in self.model_fields_set:
            return self.api_key_env is not None
        return not _is_loopback(self.url)


def _base_url_problem(url: str, *, hint: str = KEY_IN_FILE) -> str | None:
    """Why `url` cannot be an API root (or an MCP endpoint), or None; the URL itself is never
    quoted. `hint` says where a credential belongs instead."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return "not a valid URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL with a host"
    if parts.username is not None or parts.password is not None:
        return f"credentials in the URL are refused: {hint}"
    if any(names_a_secret(name) for name, _ in parse_qsl(parts.query)):
        return f"a key in the URL's query is refused: {hint}"
    return None


def _is_loopback(url: str) -> bool:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def reject_keys_in_file(data: Any, source: str) -> None:
    """Refuse a key written in the `provider:` section, before anything else is read.

    Any field of `provider` whose name says key, token, secret, password, credential, bearer
    or auth (other than `api_key_env`) is refused with `KEY_IN_FILE`. The value is never
    shown; a known credential name (`api_key`, `token`, …) is, any other by its position.

    Raises:
        ConfigError: `FILE: provider.api_key: keys are read from the variable api_key_env
            names, never from the file`.
    """
    provider = data.get("provider") if isinstance(data, dict) else None
    if not isinstance(provider, dict):
        return
    for n, key in enumerate(provider, 1):
        if not isinstance(key, str) or key == "api_key_env" or not names_a_secret(key):
            continue
        folded = key.strip().lower().replace("-", "_")
        shown = folded if folded in _CREDENTIAL_NAMES else f"<key {n}>"
        raise ConfigError(f"{source}: provider.{shown}: {KEY_IN_FILE}")
