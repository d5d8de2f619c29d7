"""Decoding scenario files with bounds: JSON and YAML text to plain data, or one bad-input line.

A scenario file is untrusted input. This module owns turning its text into data without an
unbounded expansion, recursion or conversion: YAML is composed by `_BoundedLoader` (nesting
deeper than `MAX_NESTING_DEPTH`, more than `MAX_INPUT_VALUES` values after aliases, an alias
inside its own anchor and integers past 4300 digits are refused while composing), JSON by the
standard decoder with its failures mapped. Every error is a `ConfigError` whose line names
the file and a position, and quotes nothing a parser quoted (`scrub_parser_message`).
`scenario.py` validates what comes out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from .config import MAX_INPUT_VALUES, MAX_NESTING_DEPTH, scrub_parser_message
from .errors import ConfigError

__all__ = ["decode_json", "decode_yaml"]


def decode_json(text: str, path: Path) -> Any:
    """The data of a JSON scenario file.

    Raises:
        ConfigError: malformed JSON, an integer past 4300 digits, or nesting too deep to
            decode; one line naming the file, never quoting it.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: malformed JSON: line {exc.lineno} column {exc.colno}: "
            f"{scrub_parser_message(exc.msg)}"
        ) from None
    except ValueError:  # int() past Python's 4300-digit conversion limit
        raise ConfigError(f"{path}: malformed JSON: an integer has more than 4300 digits") from None
    except RecursionError:
        raise ConfigError(
            f"{path}: malformed JSON: nested deeper than {MAX_NESTING_DEPTH} levels"
        ) from None


def decode_yaml(text: str, path: Path) -> Any:
    """The data of a YAML scenario file, read by `_BoundedLoader`.

    Raises:
        ConfigError: malformed YAML or input past the loader's bounds; one line naming the
            file and the position, never quoting it.
    """
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(text)  # the reader already refuses some characters here
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""
        problem = scrub_parser_message(exc.problem or type(exc).__name__)
        raise ConfigError(f"{path}: malformed YAML: {where}{problem}") from None
    except yaml.reader.ReaderError as exc:
        raise ConfigError(
            f"{path}: malformed YAML: character {exc.position + 1}: a control character "
            "YAML does not allow"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: malformed YAML: {type(exc).__name__}") from None
    except (ValueError, RecursionError):  # defence in depth: the loader's bounds come first
        raise ConfigError(f"{path}: malformed YAML: a value past the loader's bounds") from None
    finally:
        if loader is not None:
            loader.dispose()


_MAX_INT_CHARS = 4300
"""Longest integer literal read (Python refuses longer decimal conversions anyway)."""


class _BoundedLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses what would expand or recurse without bound.

    Composing counts each node once per place it is used: a node's expanded size is one plus
    its children's, an alias adds the whole size of its anchor, and a document whose size
    passes `MAX_INPUT_VALUES` is refused as it is composed, so a billion-laughs file fails in
    microseconds instead of being walked later. Nesting past `MAX_NESTING_DEPTH` is refused
    before the recursive composer goes deeper, and an alias to an anchor that is still open
    (a structure containing itself) is refused. Timestamps stay strings (a model's arguments
    are JSON, where a date is a string), and integers are read only up to 4300 characters.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[int, int] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            target = self.anchors.get(event.anchor)
            if target is not None and id(target) not in self._sizes:
                raise yaml.composer.ComposerError(
                    None, None, "an alias refers to a node that contains it", event.start_mark
                )
            return super().compose_node(parent, index)
        if self._depth >= MAX_NESTING_DEPTH:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"nested deeper than {MAX_NESTING_DEPTH} levels",
                self.peek_event().start_mark,
            )
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        size = 1 + sum(self._sizes.get(id(child), 1) for child in _children(node))
        if size > MAX_INPUT_VALUES:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"more than {MAX_INPUT_VALUES} values (after expanding aliases)",
                node.start_mark,
            )
        self._sizes[id(node)] = size
        return node


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _construct_bounded_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    if len(node.value) > _MAX_INT_CHARS:
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of more than {_MAX_INT_CHARS} characters", node.start_mark
        )
    value = loader.construct_yaml_int(node)
    # Hex, octal and sexagesimal literals can exceed 4300 decimal digits in fewer characters.
    if value.bit_length() > _MAX_INT_CHARS * 3.33:
        raise yaml.constructor.ConstructorError(
            None, None, "an integer of more than 4300 digits", node.start_mark
        )
    return value


def _construct_timestamp_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _construct_bounded_int)
_BoundedLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp_text)
