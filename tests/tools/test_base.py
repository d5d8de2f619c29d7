"""Tool definition: `@tool` schemas, argument validation, `ToolResult`."""

from __future__ import annotations

from typing import Literal

import pytest

from zeroclaw_obs.errors import ToolDefinitionError
from zeroclaw_obs.tools.base import ArgumentError, Provenance, Tool, ToolResult, ToolSpec, tool


@tool
async def get_weather(city: str, units: Literal["c", "f"] = "c") -> str:
    """Current weather for a city.

    Longer text that is not part of the description.
    """
    return f"{city}: 18{units.upper()}"


@tool(name="count_words", provenance=Provenance.EXTENSION)
def count(text: str, minimum: int = 0) -> ToolResult:
    """Count words."""
    return ToolResult.ok(str(max(minimum, len(text.split()))))


class TestToolResult:
    def test_ok_and_fail(self):
        """`ToolResult.ok` succeeds with output; `ToolResult.fail` carries the error."""
        assert ToolResult(True, "x", None) == ToolResult.ok("x")
        assert ToolResult(False, "", "boom") == ToolResult.fail("boom")


class TestToolDecorator:
    def test_schema_from_type_hints(self):
        """The JSON schema comes from the hints: types, required, defaults and enums."""
        expected = {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "units": {"enum": ["c", "f"], "type": "string", "default": "c"},
            },
            "required": ["city"],
            "additionalProperties": False,
        }
        assert expected == get_weather.parameters_schema()

    def test_description_is_first_docstring_paragraph(self):
        """The description is the docstring's first paragraph."""
        assert "Current weather for a city." == get_weather.description

    def test_spec_is_what_the_model_sees(self):
        """`spec` carries name, description and parameters only."""
        spec = count.spec
        assert isinstance(spec, ToolSpec)
        assert ("count_words", "Count words.") == (spec.name, spec.description)
        assert Provenance.EXTENSION == count.provenance

    async def test_execute_async_and_sync_functions(self):
        """Async and sync functions both execute; a plain return value becomes `ok`."""
        assert ToolResult.ok("Oslo: 18C") == await get_weather.execute({"city": "Oslo"})
        assert ToolResult.ok("2") == await count.execute({"text": "a b"})

    def test_validation_coerces_and_fills_defaults(self):
        """Validation returns the arguments to dispatch, defaults included."""
        assert {"city": "Oslo", "units": "c"} == get_weather.validate_arguments({"city": "Oslo"})

    def test_validation_failure_is_a_value(self):
        """A schema violation is an `ArgumentError` naming the field, never an exception."""
        problem = get_weather.validate_arguments({"units": "k"})
        assert isinstance(problem, ArgumentError)
        assert "city" in problem.message
        assert "units" in problem.message

    def test_unexpected_argument_is_rejected(self):
        """Arguments the function does not take are rejected."""
        problem = get_weather.validate_arguments({"city": "Oslo", "country": "NO"})
        assert isinstance(problem, ArgumentError)
        assert "country" in problem.message

    def test_definition_errors_list_every_problem(self):
        """A bad definition fails at decoration with one error naming the function and problems."""

        def bad(a, *args: int, b: int, **kwargs: str) -> str:
            return ""

        with pytest.raises(ToolDefinitionError) as info:
            tool(bad)
        message = str(info.value)
        assert "bad" in message
        assert "'a' has no type hint" in message
        assert "'args'" in message
        assert "'kwargs'" in message

    async def test_direct_call_validates(self):
        """Calling a tool directly validates first and reads a failure as a failed result."""
        result = await get_weather()
        assert not result.success
        assert result.error.startswith("invalid arguments: city")


class SchemaTool(Tool):
    name = "schema_tool"

    def __init__(self, schema: dict) -> None:
        self._schema = schema

    def parameters_schema(self) -> dict:
        return self._schema

    async def execute(self, args: dict) -> ToolResult:
        return ToolResult.ok("ran")


SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "mode": {"enum": ["fast", "slow"]},
        "extra": {"type": ["string", "null"]},
    },
    "required": ["city"],
    "additionalProperties": False,
}


class TestJsonSchemaValidation:
    @pytest.mark.parametrize(
        ("args", "fragment"),
        [
            ({}, "city: required property is missing"),
            ({"city": 3}, "city: expected string, got integer"),
            ({"city": ""}, "city: must have at least 1 characters"),
            ({"city": "a", "days": True}, "days: expected integer, got boolean"),
            ({"city": "a", "days": 9}, "days: must be <= 7"),
            ({"city": "a", "tags": ["x", 1]}, "tags[1]: expected string"),
            ({"city": "a", "tags": ["x", "y", "z"]}, "tags: must have at most 2 items"),
            ({"city": "a", "mode": "warp"}, "mode: must be one of"),
            ({"city": "a", "other": 1}, "other: unexpected property"),
        ],
    )
    def test_violations_name_the_field(self, args, fragment):
        """Each violation is reported with its path and what is wrong."""
        problem = SchemaTool(SCHEMA).validate_arguments(args)
        assert isinstance(problem, ArgumentError)
        assert fragment in problem.message

    def test_valid_arguments_pass_unchanged(self):
        """Valid arguments are returned as given."""
        args = {"city": "a", "days": 3, "tags": ["x"], "mode": "fast", "extra": None}
        assert args == SchemaTool(SCHEMA).validate_arguments(args)

    def test_top_level_must_be_an_object(self):
        """A non-object where the schema wants one fails at the top level."""
        problem = SchemaTool({"type": "object"}).validate_arguments([])  # type: ignore[arg-type]
        assert isinstance(problem, ArgumentError)
        assert problem.message.startswith("arguments: expected object")
