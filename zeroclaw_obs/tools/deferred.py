"""Deferred MCP tools: stubs in the prompt, `tool_search`, and the turn's activated set.

Instead of every wrapper of a deferred MCP server, the model sees a prompt section listing
`server__tool - description` stubs and one `tool_search` tool. A search (keywords, or
`select:a,b` for exact names) activates the matching stubs: their tools join the turn's
`ActivatedToolSet` and are offered from the next iteration on. Each piece here has one job:
`DeferredCatalog` holds and searches the stubs, `ActivatedToolSet` remembers what was
activated, `ToolSearchTool` is the model's handle on both.

Risky part: the activated set is shared, mutable turn state. `tool_search` writes it while
`turn/specs.py` reads it every iteration, so it carries a `version` that changes on every new
activation and readers cache against that. A delegated sub-agent gets `granted(...)`, a copy
holding only what it was granted, never the parent's live set.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .base import Provenance, Tool, ToolResult

__all__ = [
    "ActivatedToolSet",
    "DeferredCatalog",
    "DeferredStub",
    "ToolSearchTool",
    "deferred_prompt_section",
]

_DEFAULT_MAX_RESULTS = 5
_SELECT_PREFIX = "select:"


def _one_line(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class DeferredStub:
    """A deferred tool as the prompt lists it: `name - description`, and the tool behind it.

    Raises:
        ValueError: `name` differs from `tool.name` (the model would call one name and be
            offered another).
    """

    name: str
    """The full `server__tool` name the model activates and then calls."""

    description: str
    """Shown in the prompt section and searched by `tool_search`."""

    tool: Tool
    """The wrapper that joins the activated set."""

    def __post_init__(self) -> None:
        if self.name != self.tool.name:
            raise ValueError(f"stub name {self.name!r} differs from tool name {self.tool.name!r}")

    @classmethod
    def for_tool(cls, tool: Tool) -> DeferredStub:
        """The stub of `tool`, under its name and description."""
        return cls(name=tool.name, description=tool.description, tool=tool)

    def line(self) -> str:
        """`name - description` on one line, as the prompt and `tool_search` show it."""
        return f"{self.name} - {_one_line(self.description)}"


class DeferredCatalog:
    """The deferred stubs of a turn, in catalog order, searchable by keyword.

    Args:
        stubs: the stubs, in the order they are listed; ties in a search keep this order.

    Raises:
        ValueError: two stubs share a name.
    """

    def __init__(self, stubs: Iterable[DeferredStub] = ()) -> None:
        self._stubs: dict[str, DeferredStub] = {}
        for stub in stubs:
            if stub.name in self._stubs:
                raise ValueError(f"deferred tool {stub.name!r} is listed twice")
            self._stubs[stub.name] = stub
        # Searched text is fixed per stub, so lowercase it once rather than on every search.
        self._haystacks = [(stub, f"{stub.name} {stub.description}".lower()) for stub in self]

    def get(self, name: str) -> DeferredStub | None:
        """The stub named exactly `name`, or None."""
        return self._stubs.get(name)

    def search(self, query: str, max_results: int) -> list[DeferredStub]:
        """Stubs ranked by how many query terms occur in `name description` (lowercase).

        The query is lowercased and split on whitespace; repeated terms count once. Stubs that
        contain no term are dropped; the rest come best first, ties in catalog order.

        Returns:
            At most `max_results` stubs.
        """
        terms = list(dict.fromkeys(query.lower().split()))
        scored: list[tuple[int, int, DeferredStub]] = []
        for position, (stub, haystack) in enumerate(self._haystacks):
            score = sum(term in haystack for term in terms)
            if score:
                scored.append((-score, position, stub))
        scored.sort(key=lambda entry: entry[:2])
        return [stub for _, _, stub in scored[: max(max_results, 0)]]

    def __contains__(self, name: object) -> bool:
        return name in self._stubs

    def __iter__(self) -> Iterator[DeferredStub]:
        return iter(self._stubs.values())

    def __len__(self) -> int:
        return len(self._stubs)


def deferred_prompt_section(stubs: Iterable[DeferredStub]) -> str:
    """The system-prompt section listing deferred tools, or "" when there are none.

    A short heading tells the model to activate tools with `tool_search`, followed by one
    `server__tool - description` line per stub.
    """
    lines = [stub.line() for stub in stubs]
    if not lines:
        return ""
    heading = (
        "## Deferred tools\n"
        "These tools exist but are not loaded yet. To use one, first call `tool_search` with "
        "keywords, or with `select:name1,name2` for exact names; activated tools can be called "
        "from the next step."
    )
    return heading + "\n" + "\n".join(f"- {line}" for line in lines)


class ActivatedToolSet:
    """The deferred tools activated in a turn, by name, in activation order.

    `tool_search` adds to it; the effective tools of each iteration offer everything in it.
    `version` changes whenever a new tool is activated, so readers can cache against it.

    Args:
        tools: tools that start activated (for example the set a sub-agent was granted).
    """

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {item.name: item for item in tools}
        self._version = 0

    @property
    def version(self) -> int:
        """Incremented on each new activation; unchanged by repeated ones."""
        return self._version

    def activate(self, stub: DeferredStub) -> bool:
        """Activate the tool behind `stub`.

        Returns:
            True when it was not active before; activating twice changes nothing.
        """
        if stub.name in self._tools:
            return False
        self._tools[stub.name] = stub.tool
        self._version += 1
        return True

    def get(self, name: str) -> Tool | None:
        """The activated tool named exactly `name`, or None."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Activated names, in activation order."""
        return list(self._tools)

    def tools(self) -> list[Tool]:
        """Activated tools, in activation order."""
        return list(self._tools.values())

    def resolve_short_name(self, name: str) -> Tool | None:
        """The one activated tool whose name ends with `__{name}`.

        Lets a model call `forecast` for an activated `wx__forecast`. The set is small (what
        one turn activated), so this is a scan; it only runs when an exact lookup missed.

        Returns:
            The tool, or None when no activated tool or more than one has that suffix.
        """
        if not name:
            return None
        suffix = f"__{name}"
        matches = [item for key, item in self._tools.items() if key.endswith(suffix)]
        return matches[0] if len(matches) == 1 else None

    def granted(self, names: Iterable[str]) -> ActivatedToolSet:
        """A new set holding only the given names that are activated here, for a sub-agent.

        The copy is independent: activations in either set do not reach the other, so a
        delegated turn never gets more than it was granted.
        """
        wanted = set(names)
        copy = ActivatedToolSet()
        copy._tools = {key: item for key, item in self._tools.items() if key in wanted}
        return copy

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ActivatedToolSet({self.names()!r})"


class ToolSearchTool(Tool):
    """`tool_search`: find deferred tools by keyword or exact name and activate them.

    `{"query": "select:a,b"}` activates exactly those names (comma separated, trimmed) and
    reports names that are not in the catalog. Any other query is a keyword search
    (`DeferredCatalog.search`) capped at `max_results` (default 5; values below 1 mean 1).
    An empty or blank query fails with `query parameter is required`; the schema deliberately
    has no minimum length, so the model reads that message rather than a schema error. It is
    read-only: it changes which tools the turn offers, never anything outside the turn, so
    deferred tools stay discoverable under `autonomy: read_only`.

    Args:
        catalog: the turn's deferred stubs.
        activated: the turn's activated set, which this tool writes.
    """

    name = "tool_search"
    description = (
        "Search the deferred tools listed in the system prompt and activate the matches. "
        "Pass keywords, or `select:name1,name2` to activate exact names. "
        "Activated tools can be called from the next step."
    )
    provenance = Provenance.NATIVE
    read_only = True

    def __init__(self, catalog: DeferredCatalog, activated: ActivatedToolSet) -> None:
        self.catalog = catalog
        """The stubs this tool searches."""
        self.activated = activated
        """The set this tool activates into."""

    def parameters_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "max_results": {"type": "integer", "default": _DEFAULT_MAX_RESULTS},
            },
            "required": ["query"],
        }

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult.fail("query parameter is required")
        query = query.strip()
        if query.lower().startswith(_SELECT_PREFIX):
            found, missing = self._select(query[len(_SELECT_PREFIX) :])
        else:
            found, missing = self.catalog.search(query, _max_results(args)), []
        for stub in found:
            self.activated.activate(stub)
        return ToolResult.ok(_report(found, missing))

    def _select(self, names: str) -> tuple[list[DeferredStub], list[str]]:
        wanted = list(dict.fromkeys(name.strip() for name in names.split(",") if name.strip()))
        found = [stub for name in wanted if (stub := self.catalog.get(name)) is not None]
        missing = [name for name in wanted if name not in self.catalog]
        return found, missing


def _max_results(args: dict[str, Any]) -> int:
    value = args.get("max_results", _DEFAULT_MAX_RESULTS)
    if not isinstance(value, int) or isinstance(value, bool):
        return _DEFAULT_MAX_RESULTS
    return max(value, 1)


def _report(found: list[DeferredStub], missing: list[str]) -> str:
    if found:
        lines = ["Activated tools (available from the next step):"]
        lines.extend(f"- {stub.line()}" for stub in found)
    else:
        lines = ["No matching deferred tools found."]
    if missing:
        lines.append("Not found: " + ", ".join(missing))
    return "\n".join(lines)
