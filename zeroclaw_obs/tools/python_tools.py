"""Python tools: `@tool` functions an agent file names by path (`python_tools:`, DESIGN §7).

An entry `package.module:function` imports `package.module` and takes its attribute
`function` (a dotted attribute path is followed), which must be a `Tool` (what `@tool`
returns). The current directory is put first on `sys.path` for the import when it is not there
yet, as `python -m` does, so a module beside the agent file's working directory is found.

Risky part: importing runs the developer's code, which may raise anything. Every failure
becomes one `ConfigError` line naming the file, the entry's index and the problem (the
exception's type, never its message or a traceback, except `ToolDefinitionError`, whose message
is ours and names the function), so `run` exits 2 with that line.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable, Sequence

from ..errors import ConfigError, ToolDefinitionError
from .base import Tool

__all__ = ["import_python_tools"]


def import_python_tools(
    paths: Sequence[str],
    *,
    source: str,
    taken: Iterable[str] = (),
    field: str = "python_tools",
) -> list[Tool]:
    """Import the tools `paths` name, in order.

    Args:
        paths: entries `package.module:function` (the scenario already checked their shape).
        source: the file they come from, printed first in an error.
        taken: names already registered (the scenario's scripted tools); a Python tool may
            not reuse one.
        field: where the entries sit in the file.

    Returns:
        The tools, one per entry.

    Raises:
        ConfigError: `FILE: python_tools.N: problem` for the first entry that cannot be
            imported, is not a `Tool`, or reuses a name.
    """
    names = set(taken)
    tools: list[Tool] = []
    for index, path in enumerate(paths):
        where = f"{source}: {field}.{index}"
        found = _import_one(path, where)
        if found.name in names:
            raise ConfigError(f"{where}: a tool of that name is already registered")
        names.add(found.name)
        tools.append(found)
    return tools


def _import_one(path: str, where: str) -> Tool:
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"{where}: expected `package.module:function`")
    _with_working_directory_on_path()
    try:
        found: object = importlib.import_module(module_name)
    except ToolDefinitionError as exc:
        raise ConfigError(f"{where}: {str(exc).splitlines()[0]}") from None
    except ModuleNotFoundError:
        raise ConfigError(f"{where}: cannot import the module (ModuleNotFoundError)") from None
    except (Exception, SystemExit) as exc:
        raise ConfigError(f"{where}: importing the module raised {type(exc).__name__}") from None
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise ConfigError(f"{where}: the module has no such attribute") from None
        except Exception as exc:  # a module-level __getattr__ is user code too
            raise ConfigError(
                f"{where}: reading the attribute raised {type(exc).__name__}"
            ) from None
    if not isinstance(found, Tool):
        raise ConfigError(
            f"{where}: not a tool ({type(found).__name__}); decorate the function with @tool"
        )
    return found


def _with_working_directory_on_path() -> None:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
