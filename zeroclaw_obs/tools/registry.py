"""Tool assembly: the scoped registry and the rules that decide which tools a turn may offer.

This module owns the static half of LIFECYCLE §2. Each rule is one small piece with one
behaviour, tested on its own, and `turn/specs.py` composes them for a turn:

- `ToolRegistry` is a scoped name → tool map; it decides which static tools exist.
- `excluded_tools` is applied twice, with two different matchers: `visible_after_exclusion`
  (exact names, before tools are shown to the model) and `ExcludedNames` / `is_excluded`
  (trimmed and case-insensitive, when a call executes).
- `McpToolFilter` (behind `mcp_tool_visible` and `filter_mcp_tools`) applies
  `tool_filter_groups` to MCP tool names; `always_group_matches` selects deferred stubs to
  pre-activate.
- `ToolPolicy` (carried by the registry) decides which of the scope's tools, MCP wrappers
  included, its turns may offer at all: the agent's `ToolBundle`s grant tools, its
  `RiskProfile` and any per-run narrowing (`ToolPolicy.narrowed`) only remove them.
  `profile_approval` maps the risk profile onto the approval config.

Risky part: the two exclusion matchers differ on purpose. Display removes exactly the names the
operator listed; execution folds whitespace and case and is checked on both the called and the
resolved name, so no spelling of a call reaches an excluded tool. Merging them into one helper
would weaken one of the two checks. Filter groups only ever hide MCP tools: they grant nothing
and never touch built-ins, so callers apply them to MCP wrappers only. The policy never adds a
tool: a tool no bundle grants does not exist for the agent (a call to it is unknown), and what
the profile or a narrowing removes is excluded through the same `excluded_tools` machinery
(`ToolPolicy.excluded_names`), so the spec list, the deferred catalog, `tool_search` and the
execution-time check cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, TypeVar

from ..config import ApprovalAutonomy, ApprovalConfig, FilterMode, ToolFilterGroup
from .base import Tool
from .mcp import McpToolWrapper

__all__ = [
    "ExcludedNames",
    "McpToolFilter",
    "Named",
    "RiskProfile",
    "ToolBundle",
    "ToolPolicy",
    "ToolRegistry",
    "always_group_matches",
    "declares_read_only",
    "filter_mcp_tools",
    "is_excluded",
    "mcp_tool_visible",
    "pattern_matches",
    "pattern_reaches_server",
    "profile_approval",
    "visible_after_exclusion",
]


class Named(Protocol):
    """Anything the rules can filter by name: a `Tool`, a `DeferredStub`, a `ToolSpec`."""

    @property
    def name(self) -> str:
        """The name the model calls it by."""
        ...


_NamedT = TypeVar("_NamedT", bound=Named)


class ToolRegistry:
    """The static tools of one scope (an agent, a channel runtime), by name.

    Registration order is kept: it is the order in which the tools are offered to the model.
    The registry says which tools exist, and its `policy` which of them (and of the scope's MCP
    tools) its turns may offer; exclusion and filtering are separate rules.

    Args:
        tools: tools to register now, in order.
        scope: a label for the scope this registry serves (for logs and debugging).
        policy: the scope's bundles, risk profile and narrowing; the default admits everything.

    Raises:
        ValueError: two of `tools` share a name, or a name is blank.
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        scope: str = "default",
        policy: ToolPolicy | None = None,
    ) -> None:
        self._scope = scope
        self._policy = policy if policy is not None else ToolPolicy()
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.register(item)

    @property
    def scope(self) -> str:
        """The scope label given at construction."""
        return self._scope

    @property
    def policy(self) -> ToolPolicy:
        """Which tools the scope's turns may offer; read by `turn/specs.py` every turn."""
        return self._policy

    def narrowed(self, allowed: Iterable[str]) -> ToolRegistry:
        """The same tools under `policy.narrowed(allowed)`: a view for one run or one turn.

        The tools are shared, not copied; this registry is left as it was.
        """
        return ToolRegistry(self, scope=self._scope, policy=self._policy.narrowed(allowed))

    def register(self, tool: Tool) -> Tool:
        """Add `tool` under its name and return it (so it can be used as a decorator).

        Raises:
            ValueError: the name is blank, or a tool with that name is already registered.
        """
        if not tool.name or not tool.name.strip():
            raise ValueError(f"tool name must not be blank (scope {self._scope!r})")
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered in scope {self._scope!r}")
        self._tools[tool.name] = tool
        return tool

    def get(self, name: str) -> Tool | None:
        """The tool registered under exactly `name`, or None."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry(scope={self._scope!r}, names={self.names()!r})"


def _fold(name: str) -> str:
    return name.strip().lower()


class ExcludedNames:
    """The execution-time `excluded_tools` check, with the names folded once.

    A name is excluded when, trimmed and lowercased, it equals a trimmed and lowercased entry of
    `excluded`. The dispatcher checks both the name the model called and the resolved tool's
    real name; building this once per turn keeps each check one set lookup.
    """

    __slots__ = ("_folded",)

    def __init__(self, excluded: Iterable[str]) -> None:
        self._folded = frozenset(_fold(name) for name in excluded)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _fold(name) in self._folded

    def __bool__(self) -> bool:
        return bool(self._folded)


def is_excluded(name: str, excluded: Iterable[str]) -> bool:
    """Whether a call to `name` is refused at execution time (trimmed, case-insensitive).

    Args:
        name: the called name or the resolved tool's real name; callers check both.
        excluded: the configured `excluded_tools`.

    Returns:
        True when `name` matches an entry after trimming and lowercasing both.
    """
    return name in ExcludedNames(excluded)


def visible_after_exclusion(tools: Iterable[_NamedT], excluded: Iterable[str]) -> list[_NamedT]:
    """Drop the items whose name is exactly in `excluded`, before they are shown to the model.

    Display-time exclusion is an exact match; execution-time exclusion (`is_excluded`) is the
    looser check that catches every other spelling.

    Returns:
        The remaining items, in their original order.
    """
    hidden = frozenset(excluded)
    return [item for item in tools if item.name not in hidden]


def pattern_matches(pattern: str, name: str) -> bool:
    """Whether a `tool_filter_groups` pattern matches a tool name.

    A pattern without `*` must equal the name. Otherwise it is split at the first `*`: the name
    must start with the text before it and end with the text after it. Any further `*` in that
    suffix is removed rather than matched literally (there is no multi-wildcard matching: `a*b*c`
    matches `axbc` but not `axbxc`), and prefix and suffix may not overlap, so `ab*ba` does not
    match `aba`.

    Examples: `srv__*` matches `srv__read`; `*_read` matches `fs_read`; `a*b` matches `ab` and
    `axyzb`; `*` matches everything.
    """
    star = pattern.find("*")
    if star < 0:
        return pattern == name
    prefix = pattern[:star]
    suffix = pattern[star + 1 :].replace("*", "")
    return (
        len(name) >= len(prefix) + len(suffix) and name.startswith(prefix) and name.endswith(suffix)
    )


class McpToolFilter:
    """`tool_filter_groups` compiled for one user message; call it with an MCP tool name.

    With no groups every MCP tool is visible. Otherwise a tool is visible when some group
    includes it: one of the group's patterns matches the name, and the group is `always` or the
    lowercased user message contains one of its lowercased keywords. Which groups are active
    depends only on the message, so that is decided once here and each call only matches
    patterns.

    Apply it to MCP tools only: built-in tools are never excluded by groups.
    """

    __slots__ = ("_active_patterns", "_has_groups")

    def __init__(self, groups: Iterable[ToolFilterGroup], user_message: str) -> None:
        groups = tuple(groups)
        message = user_message.lower()
        self._has_groups = bool(groups)
        self._active_patterns = tuple(
            pattern
            for group in groups
            if group.mode == FilterMode.ALWAYS
            or any(keyword.lower() in message for keyword in group.keywords)
            for pattern in group.tools
        )

    def __call__(self, name: str) -> bool:
        if not self._has_groups:
            return True
        return any(pattern_matches(pattern, name) for pattern in self._active_patterns)


def mcp_tool_visible(name: str, groups: Iterable[ToolFilterGroup], user_message: str) -> bool:
    """Whether the MCP tool `name` is shown to the model this turn (see `McpToolFilter`)."""
    return McpToolFilter(groups, user_message)(name)


def filter_mcp_tools(
    tools: Iterable[_NamedT], groups: Iterable[ToolFilterGroup], user_message: str
) -> list[_NamedT]:
    """The MCP tools whose schemas are visible this turn, in their original order.

    Args:
        tools: MCP tool wrappers (never built-ins: groups do not apply to them).
        groups: the configured `tool_filter_groups`.
        user_message: the message that started the turn; dynamic groups look for keywords in it.
    """
    visible = McpToolFilter(groups, user_message)
    return [item for item in tools if visible(item.name)]


def always_group_matches(name: str, groups: Iterable[ToolFilterGroup]) -> bool:
    """Whether an `always` group has a pattern matching `name` (deferred stubs to pre-activate)."""
    return any(
        pattern_matches(pattern, name)
        for group in groups
        if group.mode == FilterMode.ALWAYS
        for pattern in group.tools
    )


class RiskProfile(StrEnum):
    """How much an agent may do unasked (`agent.risk_profile`): a ceiling on its approval policy.

    `read_only` also removes every tool that does not declare itself read-only
    (`declares_read_only`). See `profile_approval` for what each profile does to the approval
    config.
    """

    FULL = "full"
    SUPERVISED = "supervised"
    READ_ONLY = "read_only"


def declares_read_only(tool: Tool) -> bool:
    """Whether `tool` may run under the `read_only` risk profile.

    A tool declares itself read-only (`Tool.read_only`: `@tool(read_only=True)`, scripted
    `read_only: true`, MCP `readOnlyHint: true`, `tool_search`). An MCP tool that also declares
    `destructiveHint: true` contradicts itself and counts as destructive, as approval reads it.
    """
    if not tool.read_only:
        return False
    if isinstance(tool, McpToolWrapper):
        return tool.annotations.get("destructiveHint") is not True
    return True


def profile_approval(approval: ApprovalConfig, profile: RiskProfile | None) -> ApprovalConfig:
    """The approval config an agent runs with under `profile`.

    The profile is a ceiling: it never loosens a stricter setting of the config, and a config
    looser than the profile is lowered to it (the safer reading of the two).

    - None (no `risk_profile`): the config as written.
    - `supervised`: the config, with `autonomy: full` lowered to `supervised`.
    - `read_only`: `autonomy: read_only`, whatever the config says: read-only tools run
      unasked (the profile's auto-approve list is every read-only tool) and every other tool
      is removed from the turn (`ToolPolicy`); `always_ask` has no effect, as under
      `autonomy: read_only` today.
    - `full`: under `autonomy: supervised`, `*` joins `auto_approve`, so every call runs unasked
      except the tools `always_ask` names and MCP tools that are destructive or declare
      nothing, which still need approval by name (DESIGN §7). `autonomy: full` or `read_only`
      in the config is kept.

    Returns:
        `approval` itself when nothing changes, else a copy.
    """
    autonomy = approval.autonomy
    if profile is RiskProfile.READ_ONLY and autonomy is not ApprovalAutonomy.READ_ONLY:
        return approval.model_copy(update={"autonomy": ApprovalAutonomy.READ_ONLY})
    if profile is RiskProfile.SUPERVISED and autonomy is ApprovalAutonomy.FULL:
        return approval.model_copy(update={"autonomy": ApprovalAutonomy.SUPERVISED})
    if (
        profile is RiskProfile.FULL
        and autonomy is ApprovalAutonomy.SUPERVISED
        and "*" not in approval.auto_approve
    ):
        return approval.model_copy(update={"auto_approve": [*approval.auto_approve, "*"]})
    return approval


@dataclass(frozen=True, slots=True)
class ToolBundle:
    """A named set of tools an agent can be granted (`bundles:` in the agent file).

    A tool is in the bundle when one of `tools` matches its name (`pattern_matches`: exact, or
    `prefix*` / `*suffix` / `a*b`), or when it is an MCP tool of a server listed in
    `mcp_servers`.
    """

    name: str
    """The bundle's key in the file (an operator's word: never printed)."""

    tools: tuple[str, ...] = ()
    """Tool names or patterns; an MCP tool is matched by its full `server__tool` name."""

    mcp_servers: tuple[str, ...] = ()
    """Servers whose every tool the bundle grants, the ones listed later included."""

    def grants(self, tool: Tool) -> bool:
        """Whether `tool` is in this bundle."""
        if isinstance(tool, McpToolWrapper) and tool.server in self.mcp_servers:
            return True
        return any(pattern_matches(pattern, tool.name) for pattern in self.tools)

    def may_reach_server(self, server: str) -> bool:
        """Whether this bundle can grant some tool of `server` (named `server__…`)."""
        return server in self.mcp_servers or any(
            pattern_reaches_server(pattern, server) for pattern in self.tools
        )


def pattern_reaches_server(pattern: str, server: str) -> bool:
    """Whether `pattern` can match a tool of the MCP server `server` (a name `server__…`).

    Lets the wiring leave unconnected a server no bundle can reach, and hold back the
    "matches nothing" check of a pattern until the server's tools are known.
    """
    prefix = f"{server}__"
    star = pattern.find("*")
    if star < 0:
        return pattern.startswith(prefix) and len(pattern) > len(prefix)
    head = pattern[:star]
    return head.startswith(prefix) or prefix.startswith(head)


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """Which tools of a scope its turns may offer: grants, then removals.

    Three rules, each on its own and each tested on its own:

    - **grant** (`grants`): with `bundles` None every tool is granted (an agent file without
      `agent.bundles`); otherwise a tool some bundle grants. A tool that is not granted does
      not exist for the agent: it is never offered and a call to it is `Unknown tool: …`.
    - **risk profile** (`keeps`): under `read_only` only tools that `declares_read_only`.
    - **narrowing** (`keeps`): each narrowing (a run's `--allow-tool` list, a server turn's
      `allowed_tools`) keeps only the tools one of its patterns matches. Narrowings only
      intersect: naming a tool that is not granted grants nothing.

    What the profile or a narrowing removes is turned into exclusions (`excluded_names`) so
    that it reads `Tool not available in this turn: …` at every spelling. `tool_search` never
    goes through the policy: it is offered exactly when some deferred tool remains.

    A sub-agent's policy (`within`) is its delegating agent's policy intersected with its own:
    it grants only what both grant and keeps only what both keep, so a sub-agent never has a
    tool its parent lacks (`ToolPolicy.for_subagent`).
    """

    bundles: tuple[ToolBundle, ...] | None = None
    """The bundles the agent is granted; None grants every tool."""

    profile: RiskProfile | None = None
    """The agent's risk profile; only `read_only` removes tools."""

    narrowings: tuple[tuple[str, ...], ...] = ()
    """Per-run allow lists, each a tuple of names or patterns; a tool must match all of them."""

    within: ToolPolicy | None = None
    """The delegating agent's policy, for a sub-agent: nothing it does not grant is granted
    here, nothing it removes is kept. None for a top-level agent."""

    def for_subagent(
        self, bundles: tuple[ToolBundle, ...] | None, profile: RiskProfile | None
    ) -> ToolPolicy:
        """The policy of a sub-agent this agent delegates to: its own bundles and risk profile,
        inside this policy (narrowings included).

        Args:
            bundles: the sub-agent's bundles; None grants whatever this policy grants.
            profile: the sub-agent's risk profile; it can only remove more.
        """
        return ToolPolicy(bundles=bundles, profile=profile, within=self)

    def grants(self, tool: Tool) -> bool:
        """Whether the agent's bundles (and the delegating agent's) grant `tool`."""
        if self.within is not None and not self.within.grants(tool):
            return False
        return self.bundles is None or any(bundle.grants(tool) for bundle in self.bundles)

    def keeps(self, tool: Tool) -> bool:
        """Whether the risk profile and every narrowing (the delegating agent's included)
        leave `tool` in the turn."""
        if self.within is not None and not self.within.keeps(tool):
            return False
        if self.profile is RiskProfile.READ_ONLY and not declares_read_only(tool):
            return False
        return all(
            any(pattern_matches(pattern, tool.name) for pattern in allowed)
            for allowed in self.narrowings
        )

    def admits(self, tool: Tool) -> bool:
        """Granted and kept: the tool may be offered."""
        return self.grants(tool) and self.keeps(tool)

    def narrowed(self, allowed: Iterable[str]) -> ToolPolicy:
        """This policy with one more allow list: it can only remove tools, never add one."""
        return ToolPolicy(
            bundles=self.bundles,
            profile=self.profile,
            narrowings=(*self.narrowings, tuple(allowed)),
            within=self.within,
        )

    def may_reach_server(self, server: str) -> bool:
        """Whether the bundles can grant a tool of the MCP server `server` (narrowings aside).

        A server no bundle can reach need not be connected at all.
        """
        if self.within is not None and not self.within.may_reach_server(server):
            return False
        return self.bundles is None or any(b.may_reach_server(server) for b in self.bundles)

    def excluded_names(self, granted: Iterable[Tool]) -> list[str]:
        """The names of `granted` that the profile or a narrowing removes.

        Execution folds case and whitespace (`ExcludedNames`), so a kept tool whose folded name
        equals a removed one's is listed too: display and execution then agree even for two
        tools that differ only in case.

        Args:
            granted: the granted tools of a turn (static, MCP, activated).

        Returns:
            Names to add to the turn's `excluded_tools`, in the order of `granted`.
        """
        granted = list(granted)
        removed = ExcludedNames(item.name for item in granted if not self.keeps(item))
        if not removed:
            return []
        return [item.name for item in granted if item.name in removed]
