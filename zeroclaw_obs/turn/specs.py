"""Effective tools for a turn: what the model is offered each iteration and what a call means.

This module composes the rules of `tools/` (LIFECYCLE §2) into one per-turn view,
`EffectiveTools`. It is built once when a turn starts and answers two questions:

- `specs()`: which `ToolSpec`s the provider request carries this iteration. That is the static
  tools, the MCP tools `tool_filter_groups` leave visible, `tool_search` (when there are
  deferred tools), the turn's own tools (`delegate`, when the agent has sub-agents) and every
  activated tool, minus the names `excluded_tools` lists exactly.
- `resolve(name)`: which tool a call reaches, or why none does (`unknown`, `excluded`).

The registry's `ToolPolicy` is applied first, to every candidate (static tools, direct and
deferred MCP wrappers, tools already activated): what the agent's bundles do not grant is
dropped (a call to it is `unknown`), and what its risk profile or a per-run narrowing removes
joins `excluded_tools` (a call to it is `excluded`). Every later step (the offer, the deferred
catalog and so `tool_search` and the prompt's stubs, the execution-time check) reads the result,
so they agree by construction.

Risky part: the view must follow the live `ActivatedToolSet`, which `tool_search` changes in
the middle of a turn, while `resolve` sits on the per-call hot path. The offer is therefore
composed once per version of the activated set and cached; in the common case `resolve` is one
version check and one dict lookup.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..config import RuntimeConfig
from ..redaction import Redactor
from ..tools.base import Tool, ToolSpec
from ..tools.deferred import (
    ActivatedToolSet,
    DeferredCatalog,
    DeferredStub,
    ToolSearchTool,
    deferred_prompt_section,
)
from ..tools.mcp import McpServer
from ..tools.registry import (
    ExcludedNames,
    ToolRegistry,
    always_group_matches,
    filter_mcp_tools,
    visible_after_exclusion,
)

__all__ = ["EffectiveTools", "Resolution", "ResolutionStatus"]

ResolutionStatus = Literal["ok", "unknown", "excluded"]
"""`ok`: dispatch the tool; `unknown`: `Unknown tool: …`; `excluded`: `Tool not available in
this turn: …`."""


@dataclass(frozen=True, slots=True)
class Resolution:
    """What a called name resolves to. Only `status == "ok"` may be dispatched."""

    tool: Tool | None
    """The tool the name reaches; also set when `excluded` (for attribution) if the name
    reaches one, None when `unknown` or when an excluded name reaches no tool."""

    status: ResolutionStatus
    """Whether the call may run; read by preparation to fill the slot of refused calls."""

    resolved_name: str
    """The tool's real name, or the called name when `unknown`."""


@dataclass(frozen=True, slots=True)
class _Offer:
    """The offer for one version of the activated set."""

    version: int
    tools: tuple[Tool, ...]
    specs: tuple[ToolSpec, ...]
    names: frozenset[str]
    exact: dict[str, Resolution]


class EffectiveTools:
    """The tools of one turn, per iteration; usually made by `EffectiveTools.build`.

    Args:
        tools: the tools offered from the start, in offer order (static, visible MCP,
            `tool_search`).
        catalog: the deferred stubs `tool_search` can activate.
        activated: the turn's live activated set; its tools are offered after `tools`.
        excluded_tools: the configured names; exact at display, trimmed and case-insensitive at
            execution.

    Raises:
        ValueError: two of `tools` share a name.
    """

    def __init__(
        self,
        *,
        tools: Sequence[Tool],
        catalog: DeferredCatalog,
        activated: ActivatedToolSet,
        excluded_tools: Iterable[str] = (),
    ) -> None:
        self._base: dict[str, Tool] = {}
        for item in tools:
            if item.name in self._base:
                raise ValueError(f"two tools in this turn are named {item.name!r}")
            self._base[item.name] = item
        self._catalog = catalog
        self._activated = activated
        self._hidden = tuple(excluded_tools)
        self._excluded = ExcludedNames(self._hidden)
        self._prompt_section = deferred_prompt_section(catalog) or None
        self._shown_section: str | None = None
        # A name means one tool for the whole turn, so its spec is computed once, not per version.
        self._spec_of: dict[str, ToolSpec] = {}
        self._offer = self._compose()

    @classmethod
    def build(
        cls,
        *,
        registry: ToolRegistry,
        mcp_servers: list[McpServer],
        config: RuntimeConfig,
        user_message: str,
        activated: ActivatedToolSet,
        turn_tools: Sequence[Tool] = (),
    ) -> EffectiveTools:
        """Compose the turn's tools from the registry, the MCP servers and the config.

        The registry's policy goes first: only granted tools take part, and the names its
        risk profile or narrowing removes are excluded like `excluded_tools` entries
        (`ToolPolicy.excluded_names`). Static tools come from `registry` and are never touched
        by filter groups. Wrappers of non-deferred servers are kept when `tool_filter_groups`
        make them visible for `user_message`. Wrappers of deferred servers become stubs (those
        excluded are left out); when there is at least one, `tool_search` is offered, and stubs
        matched by an `always` group are activated into `activated` now.

        `turn_tools` are the tools the turn provides itself (`delegate`, bound to this turn:
        `turn/delegation.py`). No bundle grants them (the file's `agents` do), but a narrowing
        removes them like any tool (`--allow-tool get_*` leaves no `delegate`), and so does
        `excluded_tools`. What a sub-agent may use is narrowed too, through its policy.

        Raises:
            ValueError: two tools of the turn share a name (for example a registry tool named
                like an MCP wrapper, or `tool_search`).
        """
        policy = registry.policy
        groups = config.tool_filter_groups
        static = [t for t in registry if policy.grants(t)]
        direct = [w for s in mcp_servers if not s.deferred for w in s.wrappers()]
        deferred = [w for s in mcp_servers if s.deferred for w in s.wrappers()]
        direct = [w for w in direct if policy.grants(w)]
        deferred = [w for w in deferred if policy.grants(w)]
        # An activated tool came from an earlier, possibly wider, turn of the conversation: it
        # is judged again, so a narrowed turn cannot reach it either.
        earlier = activated.tools()
        excluded = [
            *config.excluded_tools,
            *policy.excluded_names([*static, *direct, *deferred, *earlier, *turn_tools]),
            *(t.name for t in earlier if not policy.grants(t)),
        ]
        listed = visible_after_exclusion(deferred, excluded)
        catalog = DeferredCatalog(DeferredStub.for_tool(w) for w in listed)
        tools: list[Tool] = [*static, *filter_mcp_tools(direct, groups, user_message)]
        if len(catalog):
            tools.append(ToolSearchTool(catalog, activated))
        tools.extend(turn_tools)
        for stub in catalog:
            if always_group_matches(stub.name, groups):
                activated.activate(stub)
        return cls(tools=tools, catalog=catalog, activated=activated, excluded_tools=excluded)

    @property
    def activated(self) -> ActivatedToolSet:
        """The live activated set this view follows."""
        return self._activated

    @property
    def catalog(self) -> DeferredCatalog:
        """The deferred stubs of this turn."""
        return self._catalog

    def specs(self) -> list[ToolSpec]:
        """The specs for this iteration's provider request, in offer order.

        Reflects every activation made so far (by `tool_search` earlier in the turn). Cached
        until the activated set changes.
        """
        return list(self._current().specs)

    def tools(self) -> list[Tool]:
        """The tools behind `specs()`, in the same order."""
        return list(self._current().tools)

    def names(self) -> set[str]:
        """The names offered this iteration (the names in `specs()`)."""
        return set(self._current().names)

    def prompt_section(self, redactor: Redactor | None = None) -> str | None:
        """The system-prompt section listing deferred stubs, or None when there are none.

        With `redactor` (history redaction on) the section is redacted, once per turn: the
        descriptions are operator texts, and a stub whose name holds a secret is listed under
        its redacted name (it cannot then be activated by name; naming a tool with a secret
        is the operator's mistake, and showing the secret would be ours).
        """
        if redactor is None or self._prompt_section is None:
            return self._prompt_section
        if self._shown_section is None:
            self._shown_section = redactor.redact_text(self._prompt_section)
        return self._shown_section

    def resolve(self, name: str) -> Resolution:
        """What a call to `name` reaches.

        The execution-time exclusion check comes first (LIFECYCLE §2): a called name that is
        excluded (trimmed, case-insensitive) is `excluded` whether or not it reaches a tool, so
        `GET_SECRET` for an excluded `get_secret` reads `Tool not available in this turn:
        GET_SECRET`, never `Unknown tool`. Then the lookup: the exact name among the offered
        tools (including those hidden from display by `excluded_tools`), then a short name
        among activated tools, else `unknown`. A deferred tool that is not activated, or an MCP
        tool hidden by filter groups, is `unknown`. A found tool is `excluded` when its real
        name is excluded too.
        """
        hit = self._current().exact.get(name)
        if hit is not None:
            return hit
        found = self._activated.resolve_short_name(name)
        if found is not None:
            return self._judge(name, found)
        if name in self._excluded:
            return Resolution(tool=None, status="excluded", resolved_name=name)
        return Resolution(tool=None, status="unknown", resolved_name=name)

    def _current(self) -> _Offer:
        if self._offer.version != self._activated.version:
            self._offer = self._compose()
        return self._offer

    def _compose(self) -> _Offer:
        version = self._activated.version
        everything = dict(self._base)
        for item in self._activated.tools():
            everything.setdefault(item.name, item)
        shown = tuple(visible_after_exclusion(everything.values(), self._hidden))
        return _Offer(
            version=version,
            tools=shown,
            specs=tuple(self._spec(item) for item in shown),
            names=frozenset(item.name for item in shown),
            exact={key: self._judge(key, item) for key, item in everything.items()},
        )

    def _spec(self, item: Tool) -> ToolSpec:
        spec = self._spec_of.get(item.name)
        if spec is None:
            spec = self._spec_of[item.name] = item.spec
        return spec

    def _judge(self, called: str, item: Tool) -> Resolution:
        excluded = called in self._excluded or item.name in self._excluded
        return Resolution(
            tool=item, status="excluded" if excluded else "ok", resolved_name=item.name
        )
