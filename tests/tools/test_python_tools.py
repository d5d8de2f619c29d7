"""Python tools: `@tool` functions an agent file imports by path (`python_tools:`)."""

from __future__ import annotations

import textwrap
import uuid

import pytest

from zeroclaw_obs.errors import ConfigError
from zeroclaw_obs.tools.base import Tool
from zeroclaw_obs.tools.python_tools import import_python_tools

TOOLS = '''
from zeroclaw_obs.tools import tool

@tool(read_only=True)
async def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"18C in {city}"

class Holder:
    lookup = get_weather

not_a_tool = 42
'''


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A fresh importable package `pkg_<hex>` with a `tools` module; returns its name."""
    name = f"pkg_{uuid.uuid4().hex[:8]}"
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "tools.py").write_text(textwrap.dedent(TOOLS))
    (folder / "broken.py").write_text("raise RuntimeError('sk-proj-secret-in-a-message')\n")
    (folder / "untyped.py").write_text(
        "from zeroclaw_obs.tools import tool\n\n@tool\ndef lookup(term):\n    return term\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


class TestImportPythonTools:
    async def test_imports_a_tool_by_path(self, package):
        """`package.module:function` gives the `@tool` it names, runnable."""
        [found] = import_python_tools([f"{package}.tools:get_weather"], source="a.yaml")
        assert isinstance(found, Tool)
        assert ("get_weather", True) == (found.name, found.read_only)
        assert "18C in Oslo" == (await found.execute({"city": "Oslo"})).output

    def test_follows_a_dotted_attribute(self, package):
        """`module:Class.attribute` is followed attribute by attribute."""
        [found] = import_python_tools([f"{package}.tools:Holder.lookup"], source="a.yaml")
        assert "get_weather" == found.name

    @pytest.mark.parametrize(
        ("entry", "problem"),
        [
            ("{pkg}.missing:x", "cannot import the module (ModuleNotFoundError)"),
            ("{pkg}.broken:x", "importing the module raised RuntimeError"),
            ("{pkg}.tools:nothing", "the module has no such attribute"),
            ("{pkg}.tools:not_a_tool", "not a tool (int); decorate the function with @tool"),
        ],
    )
    def test_each_failure_is_one_line_naming_the_entry(self, package, entry, problem):
        """A bad entry is `FILE: python_tools.N: problem`, never a traceback or a message."""
        entries = [f"{package}.tools:get_weather", entry.format(pkg=package)]
        with pytest.raises(ConfigError) as info:
            import_python_tools(entries, source="a.yaml")
        assert f"a.yaml: python_tools.1: {problem}" == str(info.value)
        assert "sk-proj" not in str(info.value)

    def test_a_tool_definition_error_names_the_function(self, package):
        """A `@tool` that cannot be built is named by our own one-line message."""
        with pytest.raises(ConfigError) as info:
            import_python_tools([f"{package}.untyped:lookup"], source="a.yaml")
        message = str(info.value)
        assert message.startswith("a.yaml: python_tools.0: ")
        assert "lookup" in message
        assert "\n" not in message

    def test_a_name_already_registered_is_refused(self, package):
        """A Python tool may not take the name of a scripted tool."""
        with pytest.raises(ConfigError, match=r"^a\.yaml: python_tools\.0: a tool of that name"):
            import_python_tools(
                [f"{package}.tools:get_weather"], source="a.yaml", taken=["get_weather"]
            )
