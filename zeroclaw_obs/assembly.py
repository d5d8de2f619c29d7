"""Tool assembly wired from an agent file: which tools the agent has, and the checks that
refuse a bundle pattern or a narrowing entry that names nothing.

`tools/registry.py` owns the rules (`ToolPolicy`: bundles grant, the risk profile and per-run
narrowing only remove); this module applies them to what a file declares: its registry
(scripted, Python and programmatic tools) and its MCP servers. `replay.py` builds a runtime
from it, `run` checks a file with `check_tool_assembly` before any output file exists, and
`serve` checks a turn's `allowed_tools` with `unmatched_allowed`.

Risky part: a real MCP server's tools are known only once it is connected. A pattern that
could match one of them (`pattern_reaches_server`) is therefore not judged until then (the
`pending` servers), and judged again after the connection; a server no granted bundle can
reach (`reachable_real_servers`) is never connected at all.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import ConfigError
from .scenario import Scenario
from .tools.base import Provenance, Tool
from .tools.deferred import ToolSearchTool
from .tools.delegate import DELEGATE
from .tools.mcp import McpServer
from .tools.python_tools import import_python_tools
from .tools.registry import ToolPolicy, ToolRegistry, pattern_matches, pattern_reaches_server
from .tools.scripted import ScriptedTool

__all__ = [
    "agent_tools",
    "check_tool_assembly",
    "check_tool_patterns",
    "checked_agent_tools",
    "reachable_real_servers",
    "unmatched_allowed",
]


def check_tool_assembly(
    scenario: Scenario,
    *,
    source: str = "scenario",
    allowed_tools: Sequence[str] | None = None,
    allowed_tools_field: str = "allowed_tools",
) -> None:
    """What `build_replay` checks of the tool assembly, without building a runtime.

    A command calls it before it touches any output file. Patterns that could match a real MCP
    server's tools are judged when the server is connected (`Replay.run`, `serve`'s start).

    Raises:
        ConfigError: a Python tool cannot be imported, or a bundle pattern or an
            `allowed_tools` entry matches nothing (`check_tool_patterns`).
    """
    checked_agent_tools(
        scenario,
        scenario.tool_policy(),
        source=source,
        extra=[],
        allowed_tools=allowed_tools,
        allowed_tools_field=allowed_tools_field,
    )


def checked_agent_tools(
    scenario: Scenario,
    policy: ToolPolicy,
    *,
    source: str,
    extra: Sequence[Tool],
    allowed_tools: Sequence[str] | None,
    allowed_tools_field: str,
) -> tuple[ToolRegistry, list[McpServer]]:
    """`agent_tools`, then `check_tool_patterns` on them with the reachable real servers pending.

    The one path `check_tool_assembly` (before any output file) and `build_replay` (before
    the provider is built) both take, so the two can never judge a file differently.
    """
    registry, servers = agent_tools(scenario, policy, source=source, extra=extra)
    check_tool_patterns(
        scenario,
        list(registry),
        servers,
        source=source,
        allowed_tools=allowed_tools,
        allowed_tools_field=allowed_tools_field,
        pending=reachable_real_servers(scenario, policy),
    )
    return registry, servers


def check_tool_patterns(
    scenario: Scenario,
    tools: Sequence[Tool],
    servers: Sequence[McpServer],
    *,
    source: str = "scenario",
    allowed_tools: Sequence[str] | None = None,
    allowed_tools_field: str = "allowed_tools",
    pending: Sequence[str] = (),
) -> None:
    """Refuse a granted bundle's pattern, or an entry of the run's narrowing, that matches
    no tool (a typo would otherwise grant or keep nothing, silently).

    A bundle pattern is matched against every tool of the file (the registry, every MCP
    server's `server__tool` names, `tool_search` beside a deferred server); an allow-list
    entry against the tools the agent may use before narrowing (`unmatched_allowed`).

    Args:
        scenario: the file.
        tools: the registry's tools.
        servers: the MCP servers connected so far.
        source: the file's name, for the error line.
        allowed_tools: the run's narrowing, or None.
        allowed_tools_field: how the error names the narrowing (`--allow-tool`).
        pending: real MCP servers not connected yet: patterns that could match one of
            their tools are not judged now.

    Raises:
        ConfigError: `FILE: bundles.<key 2>.tools.0: matches no tool of this file`, or
            `--allow-tool entry 2: matches no tool this agent may use`; names the place,
            never the pattern or the bundle's name.
    """
    names = [t.name for t in tools] + [w.name for s in servers for w in s.wrappers()]
    if any(s.deferred for s in scenario.mcp_servers):
        names.append(ToolSearchTool.name)
    keys = list(scenario.bundles)
    for key in dict.fromkeys(scenario.agent.bundles or ()):
        for index, pattern in enumerate(scenario.bundles[key].tools):
            if _judged(pattern, pending) and not _matches_any(pattern, names):
                raise ConfigError(
                    f"{source}: bundles.<key {keys.index(key) + 1}>.tools.{index}: "
                    "matches no tool of this file"
                )
    if allowed_tools is None:
        return
    index = unmatched_allowed(
        scenario.tool_policy(),
        tools,
        servers,
        allowed_tools,
        pending=pending,
        turn_tools=[DELEGATE] if scenario.agents else [],
    )
    if index is not None:
        raise ConfigError(
            f"{allowed_tools_field} entry {index + 1}: matches no tool this agent may use"
        )


def agent_tools(
    scenario: Scenario, policy: ToolPolicy, *, source: str, extra: Sequence[Tool]
) -> tuple[ToolRegistry, list[McpServer]]:
    """The file's registry (scripted, Python and `extra` tools, under `policy`) and its
    scripted MCP servers.

    Raises:
        ConfigError: a Python tool cannot be imported.
    """
    registry = ToolRegistry(scope=scenario.agent.alias, policy=policy)
    for spec in scenario.tools:
        registry.register(ScriptedTool(spec))
    python = import_python_tools(
        scenario.python_tools, source=source, taken=[t.name for t in scenario.tools]
    )
    for tool in [*python, *extra]:
        registry.register(tool)
    # Real servers (stdio, streamable HTTP) join in `Replay.run`, which owns their connections.
    servers = [
        McpServer(
            name=server.name,
            tools=[ScriptedTool(t, provenance=Provenance.EXTENSION) for t in server.tools],
            deferred=server.deferred,
        )
        for server in scenario.mcp_servers
        if server.transport == "scripted"
    ]
    return registry, servers


def unmatched_allowed(
    policy: ToolPolicy,
    tools: Sequence[Tool],
    servers: Sequence[McpServer],
    allowed: Sequence[str],
    *,
    pending: Sequence[str] = (),
    turn_tools: Sequence[str] = (),
) -> int | None:
    """The index of the first allow-list entry that matches no tool the agent may use.

    "May use" is what `policy` admits before any narrowing: its bundles grant it and its risk
    profile keeps it (`tool_search` counts when a deferred tool is admitted, `delegate` when
    the agent has sub-agents: pass it in `turn_tools`). An entry that
    names only tools outside that set would narrow to nothing it names, so it is refused
    rather than silently ignored; it could never add a tool either way.

    Args:
        policy: the agent's policy (its own narrowings are ignored).
        tools: the registry's tools.
        servers: the MCP servers connected so far.
        allowed: the entries, names or patterns.
        pending: real servers not connected yet; entries that could match their tools pass.
        turn_tools: names of the tools each turn provides itself (`delegate`); the risk
            profile never removes them (`DelegateTool` is read-only).
    """
    agent = ToolPolicy(bundles=policy.bundles, profile=policy.profile)
    names = [t.name for t in tools if agent.admits(t)] + list(turn_tools)
    for server in servers:
        admitted = [w.name for w in server.wrappers() if agent.admits(w)]
        names.extend(admitted)
        if server.deferred and admitted and ToolSearchTool.name not in names:
            names.append(ToolSearchTool.name)
    for index, pattern in enumerate(allowed):
        if _judged(pattern, pending) and not _matches_any(pattern, names):
            return index
    return None


def _matches_any(pattern: str, names: Sequence[str]) -> bool:
    return any(pattern_matches(pattern, name) for name in names)


def _judged(pattern: str, pending: Sequence[str]) -> bool:
    """Whether `pattern` can be judged now: it could match no tool of a pending server (nor
    `tool_search`, which a pending deferred server may bring)."""
    if pending and pattern_matches(pattern, ToolSearchTool.name):
        return False
    return not any(pattern_reaches_server(pattern, server) for server in pending)


def reachable_real_servers(scenario: Scenario, policy: ToolPolicy) -> list[str]:
    """The real (stdio, HTTP) servers the run connects: those a granted bundle can reach."""
    return [
        spec.name
        for spec in scenario.mcp_servers
        if spec.transport != "scripted" and policy.may_reach_server(spec.name)
    ]
