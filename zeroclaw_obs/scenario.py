"""Scenario files: a scripted turn that replays a model deterministically (DESIGN §4, §7).

This module owns the file format (pydantic models that forbid unknown fields), loading JSON or
YAML with one-line errors that name the file and the field, and building the runtime a scenario
describes. A scenario is the developer's way to replay a recorded turn: the same file gives the
same slots, events and history every time. The same format with a real `provider:` section
(`kind: openai | anthropic`) and no `responses:` is an agent file: the model is real,
everything else (scripted tools, `python_tools`, config, approval) keeps its meaning.

Keys never live in a file: the provider section names the variable that holds the key
(`api_key_env`), and any key-like field written there is refused at load without quoting it.
The same holds for MCP servers (`ScenarioMcpServer`): an entry is scripted (`tools`), stdio
(`command`) or streamable HTTP (`url`); a stdio server's secret-looking variables come from
`env_from`, an HTTP server's headers from `headers_env`, both naming environment variables.
This module only validates them: connecting a server belongs to the wiring.

Risky part: a scenario file is untrusted input, and loading it must end in a `Scenario` or in
one `ConfigError` line, whatever the bytes. Decoding is bounded (`_scenario_decoding.py`:
nesting, alias expansion, integer size), before anything is built from it. A name the runtime
registers (tools, MCP servers) is checked here, so building the runtime never fails on a name.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ._scenario_decoding import decode_json, decode_yaml
from .config import (
    MAX_COUNT,
    FieldProblem,
    RuntimeConfig,
    check_input_shape,
    load_error_line,
    register_field_names,
)
from .errors import ConfigError

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_BASE_URLS",
    "ENV_FROM_HINT",
    "KEY_IN_FILE",
    "McpTransport",
    "ProviderKind",
    "Scenario",
    "ScenarioAgent",
    "ScenarioMcpServer",
    "ScenarioProvider",
    "ScenarioProviderError",
    "ScenarioResponse",
    "ScenarioTool",
    "ScenarioToolCall",
    "ScenarioUsage",
    "ScriptedOutcome",
    "ScriptedRule",
    "load_scenario",
    "names_a_secret",
    "parse_scenario",
    "reject_keys_in_file",
]


TOOL_SEARCH = "tool_search"
"""The built-in tool offered beside deferred MCP servers; no scripted tool may take its name."""


class _Model(BaseModel):
    # allow_inf_nan=False: delays and deadlines must be finite (`.inf` would hang the turn).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _not_blank(name: str) -> str:
    if not name.strip():
        raise ValueError("must not be blank")
    return name


_Name = Annotated[str, AfterValidator(_not_blank)]
"""A name the runtime shows or registers: empty or whitespace-only is refused."""


class ScenarioAgent(_Model):
    """Who runs the turn."""

    alias: _Name = "agent"
    channel: _Name = "cli"


def _chosen_outcomes(
    output: str | None, error: str | None, raise_: str | None, hang: bool
) -> list[str]:
    """The outcome fields a scripted rule sets (a valid outcome sets exactly one)."""
    given = (("output", output), ("error", error), ("raise", raise_), ("hang", hang or None))
    return [name for name, value in given if value is not None]


class ScriptedOutcome(_Model):
    """What a scripted tool does: exactly one of output / error / raise / hang."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )

    output: str | None = None
    error: str | None = None
    raise_: str | None = Field(default=None, alias="raise")
    hang: bool = False
    delay_ms: float = Field(default=0, ge=0)
    jitter_ms: float = Field(default=0, ge=0)
    """Up to this much more delay, drawn uniformly per call (0: always exactly `delay_ms`)."""

    @model_validator(mode="after")
    def _exactly_one(self) -> ScriptedOutcome:
        chosen = _chosen_outcomes(self.output, self.error, self.raise_, self.hang)
        if len(chosen) != 1:
            raise ValueError(
                "needs exactly one of output, error, raise, hang"
                + (f" (got {', '.join(chosen)})" if chosen else "")
            )
        return self


class ScriptedRule(_Model):
    """`{when: {...}, output: ...}` or `{default: {...}}`; first matching rule wins."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )

    when: dict[str, Any] | None = None
    default: ScriptedOutcome | None = None
    output: str | None = None
    error: str | None = None
    raise_: str | None = Field(default=None, alias="raise")
    hang: bool = False
    delay_ms: float = Field(default=0, ge=0)
    jitter_ms: float = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _one_form(self) -> ScriptedRule:
        chosen = _chosen_outcomes(self.output, self.error, self.raise_, self.hang)
        if self.default is not None:
            if self.when is not None or chosen:
                raise ValueError("a `default` rule takes no `when` and no inline outcome")
            if self.jitter_ms:
                raise ValueError("put `jitter_ms` inside `default`, beside its outcome")
            return self
        if len(chosen) != 1:
            raise ValueError(
                "a rule needs `default`, or `when` with exactly one of output, error, raise, hang"
            )
        return self

    def inline_outcome(self) -> ScriptedOutcome:
        """The outcome of a `when` rule (or of the default)."""
        if self.default is not None:
            return self.default
        return ScriptedOutcome(
            output=self.output,
            error=self.error,
            raise_=self.raise_,
            hang=self.hang,
            delay_ms=self.delay_ms,
            jitter_ms=self.jitter_ms,
        )

    def matches(self, args: dict[str, Any]) -> bool:
        """True when every `when` key equals the dispatched argument (a default always matches)."""
        if self.when is None:
            return True
        return all(key in args and args[key] == value for key, value in self.when.items())


class ScenarioTool(_Model):
    """A scripted tool: a name, a schema and its rules."""

    name: _Name
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    responses: list[ScriptedRule] = Field(default_factory=list)
    read_only: bool = False
    """Declares the tool read-only: it may run under `autonomy: read_only` (LIFECYCLE §5)."""
    annotations: dict[str, Any] = Field(default_factory=dict)
    """MCP tool annotations as a server lists them; `readOnlyHint: true` declares it read-only."""


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


class ScenarioMcpServer(_Model):
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

    name: _Name
    deferred: bool = False
    tools: list[ScenarioTool] = Field(default_factory=list)
    """Scripted tools; only for a scripted server."""
    command: _Name | None = None
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


class ScenarioProvider(_Model):
    """The `provider:` section: the scripted model, or a real backend (DESIGN §7).

    A real backend (`kind: openai | anthropic`) needs `model`; its key is read at run start
    from the environment variable `api_key_env` names (never from the file: a key-like field
    here is refused at load, see `reject_keys_in_file`).
    """

    kind: ProviderKind = "scripted"
    native_tools: bool = True
    """False: the text protocol over the same API."""
    name: _Name = "scripted"
    """`gen_ai.provider.name`; defaults to `kind`."""
    model: _Name | None = None
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


_TOOL_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


def _tool_paths(paths: list[str]) -> list[str]:
    for index, path in enumerate(paths):
        if not _TOOL_PATH.fullmatch(path):
            raise FieldProblem((index,), "expected `package.module:function`")
    return paths


class ScenarioToolCall(_Model):
    """A native tool call in a scripted response."""

    id: str | None = None
    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class ScenarioUsage(_Model):
    """Token usage reported with a scripted response."""

    input_tokens: int = Field(default=0, ge=0, le=MAX_COUNT)
    output_tokens: int = Field(default=0, ge=0, le=MAX_COUNT)


class ScenarioProviderError(_Model):
    """A provider failure a recording ends with: replay raises it as the backend did."""

    error_type: _Name
    """The error's machine word (`http_500`, `rate_limit_error`, `timeout`, …)."""
    status: int | None = Field(default=None, ge=100, le=599)
    """The HTTP status, when the backend answered with one."""


class ScenarioResponse(_Model):
    """One reply of the model: text, native tool calls, or both; or the provider's failure."""

    text: str | None = None
    tool_calls: list[ScenarioToolCall] | None = None
    usage: ScenarioUsage | None = None
    delay_ms: float = Field(default=0, ge=0)
    model: str | None = None
    """The model that answered (`gen_ai.response.model`); the provider's model when None."""
    response_id: str | None = None
    """The backend's response id (`gen_ai.response.id`), as a recording keeps it."""
    finish_reasons: list[str] = Field(default_factory=list)
    """Why generation stopped (`gen_ai.response.finish_reasons`), as a recording keeps it."""
    error: ScenarioProviderError | None = None
    """The provider failed instead of answering (a recorded run that ended on a provider
    error): the scripted provider raises it, and the turn ends as `error` (exit 3)."""

    @model_validator(mode="after")
    def _not_empty(self) -> ScenarioResponse:
        if self.error is not None:
            if self.text is not None or self.tool_calls:
                raise ValueError("a response with `error` takes no `text` or `tool_calls`")
            return self
        if self.text is None and not self.tool_calls:
            raise ValueError("a response needs `text` or `tool_calls`")
        return self


class Scenario(_Model):
    """A whole scripted turn."""

    agent: ScenarioAgent = Field(default_factory=ScenarioAgent)
    user: str | None = Field(default=None, min_length=1)
    """The user message; an agent file may leave it to the command line (`run … MESSAGE`)."""
    config: RuntimeConfig = Field(default_factory=RuntimeConfig)
    provider: ScenarioProvider = Field(default_factory=ScenarioProvider)
    tools: list[ScenarioTool] = Field(default_factory=list)
    python_tools: list[str] = Field(default_factory=list)
    """`@tool` functions imported by path, `package.module:function` (`tools/python_tools.py`)."""
    mcp_servers: list[ScenarioMcpServer] = Field(default_factory=list)
    responses: list[ScenarioResponse] = Field(default_factory=list)
    """The scripted model's replies, in order: required for `kind: scripted`, refused for a
    real backend (a file without them is an agent file)."""
    cancel_after_ms: float | None = Field(default=None, ge=0)
    system_prompt: str | None = None
    description: str | None = None
    """Free text for humans; the engine ignores it."""

    @field_validator("python_tools")
    @classmethod
    def _python_tool_paths(cls, paths: list[str]) -> list[str]:
        return _tool_paths(paths)

    @model_validator(mode="after")
    def _responses_match_the_provider(self) -> Scenario:
        if self.provider.real:
            if self.responses:
                raise FieldProblem(
                    ("responses",),
                    f"a real provider (kind: {self.provider.kind}) replays nothing: remove "
                    "`responses`, or use kind: scripted",
                )
            return self
        if self.user is None:
            raise FieldProblem(("user",), "Field required")
        if not self.responses:
            raise FieldProblem(
                ("responses",),
                "a scripted provider needs at least one response (an agent file names a real "
                "provider: kind: openai or anthropic)",
            )
        return self

    @model_validator(mode="after")
    def _unique_server_names(self) -> Scenario:
        # A server's name is its identity (tool prefix, restarts, "not available" reports).
        seen: dict[str, int] = {}
        for index, server in enumerate(self.mcp_servers):
            first = seen.setdefault(server.name, index)
            if first != index:
                raise FieldProblem(
                    ("mcp_servers", index, "name"),
                    f"duplicate MCP server name (the same as mcp_servers.{first}.name)",
                )
        return self

    @model_validator(mode="after")
    def _unique_tool_names(self) -> Scenario:
        # Names are payloads too: the problem points at the two places, never at the name.
        seen: dict[str, tuple[str | int, ...]] = {}
        for path, name in self._tool_names():
            first = seen.setdefault(name, path)
            if first != path:
                where = ".".join(str(part) for part in first)
                raise FieldProblem(path, f"duplicate tool name (the same as {where})")
        if self._offers_tool_search():
            for path, name in self._tool_names():
                if name == TOOL_SEARCH:
                    raise FieldProblem(
                        path,
                        f"`{TOOL_SEARCH}` is the built-in tool offered beside deferred MCP "
                        "servers; choose another name",
                    )
        return self

    def _tool_names(self) -> list[tuple[tuple[str | int, ...], str]]:
        """Every name the runtime registers, with where it comes from in the file."""
        names: list[tuple[tuple[str | int, ...], str]] = [
            (("tools", i, "name"), tool.name) for i, tool in enumerate(self.tools)
        ]
        for s, server in enumerate(self.mcp_servers):
            names.extend(
                (("mcp_servers", s, "tools", t, "name"), f"{server.name}__{tool.name}")
                for t, tool in enumerate(server.tools)
            )
        return names

    def _offers_tool_search(self) -> bool:
        # A connected server's tools are known only at run time: assume it has some.
        return any(
            server.deferred and (server.tools or server.transport != "scripted")
            for server in self.mcp_servers
        )


def parse_scenario(data: Any, source: str) -> Scenario:
    """Validate already-decoded scenario data.

    Raises:
        ConfigError: one line naming `source` and the first invalid field, never a value;
            also for data past the input bounds (`check_input_shape`). Nothing else.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: (top level): expected a mapping, got {type(data).__name__}")
    problem = check_input_shape(data)
    if problem is not None:
        raise ConfigError(f"{source}: {problem}")
    reject_keys_in_file(data, source)
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(load_error_line(source, exc, data, Scenario)) from None


def load_scenario(
    path: Path | str,
    *,
    kind: Literal["auto", "json", "yaml"] = "auto",
    default_user: str | None = None,
) -> Scenario:
    """Load a scenario from a JSON or YAML file (`.json` is JSON, anything else YAML).

    `default_user` stands in for a missing `user` (server mode: each turn brings its message,
    so a scripted scenario need not name one).

    Raises:
        ConfigError: unreadable file, malformed JSON/YAML, input past the bounds (nesting
            deeper than `MAX_NESTING_DEPTH`, more than `MAX_INPUT_VALUES` values after alias
            expansion, a recursive alias, an integer of more than 4300 digits), or an invalid
            field. One line naming the file, never a value. Nothing else, whatever the bytes.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except ValueError:  # an embedded NUL in the path
        raise ConfigError(f"{path}: cannot read: invalid path") from None
    use_json = kind == "json" or (kind == "auto" and path.suffix.lower() == ".json")
    data = decode_json(text, path) if use_json else decode_yaml(text, path)
    if default_user is not None and isinstance(data, dict) and "user" not in data:
        data = {**data, "user": default_user}
    return parse_scenario(data, str(path))


register_field_names(Scenario)
