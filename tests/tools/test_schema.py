"""Argument validation: every keyword of the subset, and the compiled `pydantic_core` path
never accepting what the hand-written validator refuses (generated schemas and values)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zeroclaw_obs.tools._schema import SchemaValidator, _compile

OBJECT = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 2, "maxLength": 5},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "units": {"type": "string", "enum": ["C", "F"]},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        "note": {"type": ["string", "null"]},
        "mode": {"const": "fast"},
        "either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
    },
    "required": ["city"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"city": "Oslo"}, None),
        ({"city": "Oslo", "days": 3, "ratio": 0.5, "units": "C", "tags": ["a"]}, None),
        ({"city": "Oslo", "note": None, "mode": "fast", "either": True}, None),
        ({}, "city: required property is missing"),
        ({"city": 3}, "city: expected string, got integer"),
        ({"city": "O"}, "city: must have at least 2 characters"),
        ({"city": "Bergen"}, "city: must have at most 5 characters"),
        ({"city": "Oslo", "days": 0}, "days: must be >= 1"),
        ({"city": "Oslo", "days": 8}, "days: must be <= 7"),
        ({"city": "Oslo", "days": True}, "days: expected integer, got boolean"),
        ({"city": "Oslo", "days": 2.0}, "days: expected integer, got number"),
        ({"city": "Oslo", "ratio": 2}, "ratio: must be <= 1"),
        ({"city": "Oslo", "units": "K"}, "units: must be one of ['C', 'F']"),
        ({"city": "Oslo", "tags": []}, "tags: must have at least 1 items"),
        ({"city": "Oslo", "tags": ["a", "b", "c"]}, "tags: must have at most 2 items"),
        ({"city": "Oslo", "tags": [1]}, "tags[0]: expected string, got integer"),
        ({"city": "Oslo", "note": 1}, "note: expected string or null, got integer"),
        ({"city": "Oslo", "mode": "slow"}, "mode: must be 'fast'"),
        ({"city": "Oslo", "either": "x"}, "either: matches none of the allowed forms"),
        ({"city": "Oslo", "extra": 1}, "extra: unexpected property"),
        ("Oslo", "arguments: expected object, got string"),
    ],
)
def test_every_keyword(value: Any, error: str | None) -> None:
    """Each keyword accepts what it allows and names the first violation, path first."""
    validator = SchemaValidator(OBJECT)
    assert validator.compiled
    assert error == validator.first_error(value)


@pytest.mark.parametrize(
    "schema",
    [
        {"enum": [1, 2]},  # not all strings: Python equality (True == 1) decides
        {"type": "integer", "minimum": 0.5},  # a bound of another type
        {"anyOf": [{"type": "string"}], "minLength": 1},  # anyOf beside other keywords
        {"anyOf": []},  # refuses everything
        {"type": "object", "properties": {"a": "not a schema"}},
    ],
)
def test_what_cannot_be_exact_keeps_the_hand_written_path(schema: dict) -> None:
    """Constructs the compiled form cannot express exactly are not compiled; the verdict is
    the hand-written validator's."""
    validator = SchemaValidator(schema)
    assert not validator.compiled
    for value in (1, True, 0.7, "x", None, [], {"a": 1}):
        assert _compile(schema)(value, "") == validator.first_error(value)


def test_unknown_keywords_and_types_are_ignored() -> None:
    validator = SchemaValidator({"type": "widget", "format": "email", "pattern": "^x$"})
    assert None is validator.first_error({"anything": [1, "two"]})


# -- generated: the compiled path never accepts what the hand-written one refuses -----------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=5),
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.text(max_size=4),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    ),
    max_leaves=8,
)
TYPE_NAMES = st.sampled_from(["string", "integer", "number", "boolean", "object", "array", "null"])


def schemas() -> st.SearchStrategy[dict]:
    def extend(inner: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
        return st.one_of(
            st.fixed_dictionaries(
                {},
                optional={
                    "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner),
                    "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2),
                    "additionalProperties": st.booleans(),
                    "type": st.just("object"),
                },
            ),
            st.fixed_dictionaries({"type": st.just("array")}, optional={"items": inner}),
            st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=3)}),
        )

    leaf = st.fixed_dictionaries(
        {},
        optional={
            "type": st.one_of(TYPE_NAMES, st.lists(TYPE_NAMES, min_size=1, max_size=3)),
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(0, 3),
            "minimum": st.one_of(st.integers(-3, 3), st.floats(-3, 3)),
            "maximum": st.one_of(st.integers(-3, 3), st.floats(-3, 3)),
            "minItems": st.integers(0, 2),
            "maxItems": st.integers(0, 2),
            "enum": st.lists(st.one_of(st.text(max_size=2), st.integers(-2, 2)), max_size=3),
        },
    )
    return st.recursive(leaf, extend, max_leaves=6)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas(), values=st.lists(VALUES, min_size=1, max_size=6))
def test_the_compiled_path_agrees_with_the_hand_written_one(schema: dict, values: list) -> None:
    """Whatever the compiled form accepts, the hand-written validator accepts; so the
    combined verdict is always the hand-written one's."""
    validator = SchemaValidator(schema)
    hand = _compile(schema)
    for value in values:
        assert hand(value, "") == validator.first_error(value)
        if validator._fast is not None:
            try:
                validator._fast.validate_python(value)
            except Exception:
                continue
            assert hand(value, "") is None, (schema, value)
