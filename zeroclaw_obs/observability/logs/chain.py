"""The log chain: structlog processors that redact every line (with a fast path for text the
redactor is known to leave unchanged), the JSON renderer, a buffered writer, stdlib logging
routed through the same chain, and `LineWriter`, which runs it on a batch of lines
(`queued.QueuedLogger` renders on a worker off the turn's path) and writes the runtime's own
flat lines in one pass (`flat_json.FlatJsonRenderer`, the same bytes). `logs.py` turns
observer events into lines."""

from __future__ import annotations

import datetime
import json
import logging
import math
import time
from collections.abc import Callable
from typing import Any, TextIO

import structlog
from structlog.typing import EventDict, FilteringBoundLogger, Processor, WrappedLogger

from ...redaction import RUNTIME_IDS, CleanTextCache, FlatRecordRedactor, Redactor
from .flat_json import FlatJsonRenderer

__all__ = [
    "BufferedWriteLogger",
    "Line",
    "LineWriter",
    "RedactingProcessor",
    "add_event_time",
    "build_logger",
    "build_processors",
    "iso_utc",
    "route_stdlib_logging",
]


class RedactingProcessor:
    """Run the runtime's `Redactor` over every string of the event dict, at any depth.

    Covers the `event` text, every field value (recursively through dicts, lists and tuples),
    dict keys, and whole values under sensitive keys (`password=…`, `authorization=…`), as
    `Redactor.redact_value` does. structlog's bookkeeping (`_record`, `_from_structlog`) passes
    untouched for `ProcessorFormatter` to remove.

    Where it must sit: last before the renderer, after `format_exc_info` and every other
    processor that adds text, so that fields added late (the formatted exception and its stack
    trace, timestamps, logger names) are scrubbed too. A processor placed after it could add
    text that no one redacts. Objects the renderer cannot encode are scrubbed by
    `render_fallback`, which the JSON renderer calls for them.

    How it stays cheap: a log line is a flat record, redacted field by field once its key set
    is known harmless, with clean strings remembered (`redaction.FlatRecordRedactor`, which
    owns that fast path and the memory it shares with the span guard).

    Args:
        redactor: the runtime's one redactor.
        clean_text: the memory of clean strings, to share with the span guard (a string one
            surface scanned is not scanned again by the other); a new one when None.
        max_key_sets: the bound on remembered key sets; the memory is emptied when it is reached.
        runtime_ids: the records are the runtime's own (`build_processors`): `trace_id`,
            `span_id` and `receipt` values in the exact form the runtime generates are kept
            unscanned (`redaction.RUNTIME_IDS`; ids, not payloads). Off for foreign records
            (`route_stdlib_logging`), where those keys could hold anything.
    """

    def __init__(
        self,
        redactor: Redactor,
        *,
        clean_text: CleanTextCache | None = None,
        max_key_sets: int = 256,
        runtime_ids: bool = False,
    ) -> None:
        self._redact_value = redactor.redact_value
        self._redact_text = redactor.redact_text
        self._records = FlatRecordRedactor(
            redactor,
            clean_text=clean_text,
            max_key_sets=max_key_sets,
            verbatim=RUNTIME_IDS if runtime_ids else None,
        )

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
        redacted: EventDict = self._records.redact_record(event_dict)
        return redacted

    @property
    def records(self) -> FlatRecordRedactor:
        """The flat-record redactor this step runs (`LineWriter` writes own lines with it)."""
        return self._records

    def render_fallback(self, obj: object) -> Any:
        """Encode an object JSON cannot: structlog's `__structlog__` or its `repr`, redacted.

        Pass it as the renderer's `default`; a `repr` may hold a URL with credentials.
        """
        hook = getattr(obj, "__structlog__", None)
        value = hook() if callable(hook) else repr(obj)
        if isinstance(value, str):
            return self._redact_text(value)
        return self._redact_value(value)


class BufferedWriteLogger(structlog.WriteLogger):
    """structlog's `WriteLogger`, without a flush after every line.

    A flush per line is a system call per lifecycle fact on the turn's path. Lines go to the
    stream as they come, in order, under the same per-stream lock as `WriteLogger` (so a stdlib
    handler writing to the same stream cannot split a line), and reach the file when the
    stream's own buffer fills, when a line is a warning or worse, when `flush_interval_s` has
    passed since the last flush, and whenever `flush` is called: `LogObserver` flushes at the
    end of every turn and `Telemetry.shutdown` at exit. A process killed outright loses at
    most the lines of the last interval.

    Args:
        file: where lines go (default: `sys.stdout`).
        flush_interval_s: the longest a line waits in the stream's buffer while lines come.
    """

    def __init__(self, file: TextIO | None = None, *, flush_interval_s: float = 1.0) -> None:
        super().__init__(file)
        self._interval = flush_interval_s
        self._next_flush = time.monotonic() + flush_interval_s

    def msg(self, message: str) -> None:
        """Write `message` as one line; flush only when the interval has passed."""
        with self._lock:
            self._write(message + "\n")
            if time.monotonic() >= self._next_flush:
                self._flush_locked()

    def flush(self) -> None:
        """Hand every written line to the stream's file now."""
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        self._flush()
        self._next_flush = time.monotonic() + self._interval

    def msg_and_flush(self, message: str) -> None:
        """Write `message` as one line and flush: a warning or worse does not wait."""
        with self._lock:
            self._write(message + "\n")
            self._flush_locked()

    def write_lines(self, messages: list[str], *, urgent: bool = False) -> None:
        """Write `messages` as lines in one write; flush when `urgent` (a warning or worse
        among them) or when the interval has passed."""
        if not messages:
            return
        with self._lock:
            # Joined with an empty last line: one copy of the batch, not a second for "\n".
            self._write("\n".join([*messages, ""]))
            if urgent or time.monotonic() >= self._next_flush:
                self._flush_locked()

    log = debug = info = msg
    warn = warning = fatal = failure = err = error = critical = exception = msg_and_flush


_UTC = datetime.UTC


def add_event_time(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """Write `timestamp` as ISO 8601 UTC (`…T12:00:00.000001Z`): when the line was logged.

    A float `timestamp` is that moment (`QueuedLogger` sets it on the caller's thread, so a
    line written later by the worker still says when it happened); anything else is replaced
    by now. It runs after redaction: it writes only digits formatted from a number, and a
    unique string per line would only evict useful entries from the clean-text memory.
    """
    when = event_dict.get("timestamp")
    event_dict["timestamp"] = iso_utc(when if type(when) is float else time.time())
    return event_dict


_modf = math.modf
_MAX_FAST_SECOND = 253402300800
"""The first second of the year 10000, which `datetime` cannot show."""
_last_second: tuple[int, str] = (-1, "")
"""The whole second last shown and its `YYYY-MM-DDTHH:MM:SS` (one tuple, swapped whole)."""


def iso_utc(when: float) -> str:
    """`datetime.fromtimestamp(when, UTC).isoformat()` with `Z` for `+00:00`, the date and
    time of day formatted once per second: the microseconds are rounded as `datetime` rounds
    them (half to even), and shown only when not 0, as `isoformat` does."""
    global _last_second
    fraction, whole = _modf(when)
    micro = round(fraction * 1e6)
    second = int(whole)
    if micro >= 1_000_000:
        second, micro = second + 1, micro - 1_000_000
    if when < 0 or micro < 0 or second >= _MAX_FAST_SECOND:
        moment = datetime.datetime.fromtimestamp(when, _UTC)
        return moment.isoformat().replace("+00:00", "Z")
    last, shown = _last_second
    if second != last:
        shown = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _last_second = (second, shown)
    # `%` formats the microseconds in ~2/3 of the time an f-string takes.
    return "%s.%06dZ" % (shown, micro) if micro else shown + "Z"  # noqa: UP031


def _pre_render(redacting: RedactingProcessor) -> list[Processor]:
    """Level, exception text, redaction, then the time: everything up to the renderer.

    Every processor that adds free text (`format_exc_info`: the message and stack trace) runs
    before `redacting`; after it only `add_event_time`, which writes a formatted number.
    """
    return [
        structlog.processors.add_log_level,
        structlog.processors.format_exc_info,
        redacting,
        add_event_time,
    ]


def _json(redacting: RedactingProcessor) -> structlog.processors.JSONRenderer:
    return structlog.processors.JSONRenderer(serializer=_json_encoder(redacting.render_fallback))


def _json_encoder(default: Callable[[Any], Any]) -> Callable[..., str]:
    """What `json.dumps(event_dict, default=default)` writes, with the encoder built once
    instead of once per line: the C encoder itself where there is one (`JSONEncoder.encode`
    makes a new one on every call). No circular check: a record that refers to itself fails
    with `RecursionError` instead of `ValueError`, and costs its line either way."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has it
        encode = json.JSONEncoder(default=default).encode
        return lambda event_dict, **_: encode(event_dict)
    iterencode = make(
        None, default, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
    join = "".join

    def serialize(event_dict: Any, **_: Any) -> str:
        return join(iterencode(event_dict, 0))

    return serialize


def build_processors(
    redactor: Redactor, *, clean_text: CleanTextCache | None = None
) -> list[Processor]:
    """The chain of our own records: level, ISO UTC timestamp, exception text, redaction, JSON.

    Args:
        redactor: the runtime's one redactor.
        clean_text: a memory of clean strings shared with the span guard (see
            `RedactingProcessor`).

    Returns:
        A new list: ..., `RedactingProcessor`, `add_event_time`, `JSONRenderer`.
    """
    redacting = RedactingProcessor(redactor, clean_text=clean_text, runtime_ids=True)
    return [*_pre_render(redacting), _json(redacting)]


def build_logger(
    *,
    redactor: Redactor,
    stream: TextIO,
    level: int = logging.INFO,
    clean_text: CleanTextCache | None = None,
) -> FilteringBoundLogger:
    """A JSON-lines structlog logger writing to `stream`, built without global configuration.

    Records below `level` are dropped before any processor runs. Lines are written through a
    `BufferedWriteLogger`: flush `stream` to see the latest info lines in its file at once.

    Args:
        redactor: the runtime's one redactor (see `RedactingProcessor`).
        stream: where lines go, one JSON object per line.
        level: the least severe stdlib level written.
        clean_text: a memory of clean strings shared with the span guard (see
            `RedactingProcessor`).
    """
    wrapper = structlog.make_filtering_bound_logger(level)
    processors = build_processors(redactor, clean_text=clean_text)
    return wrapper(BufferedWriteLogger(stream), processors, {})


class LineWriter:
    """Our own records, rendered by the chain of `build_processors` and written a batch at
    a time: the lines a `build_logger` logger writes, without structlog's per-call plumbing
    (a bound logger copies its context and packs a keyword dict for every line).

    `log(level, event, **fields)` is the bound logger's `log`; `QueuedLogger` calls `render`
    (or `render_own`) for each line of a batch and `write` once for the batch. Processors are
    structlog's, in the same order (redaction last before the time and the renderer).

    Args:
        redactor: the runtime's one redactor.
        stream: where lines go, one JSON object per line.
        level: the least severe stdlib level written.
        clean_text: a memory of clean strings shared with the span guard.
    """

    def __init__(
        self,
        *,
        redactor: Redactor,
        stream: TextIO,
        level: int = logging.INFO,
        clean_text: CleanTextCache | None = None,
    ) -> None:
        self._redacting = RedactingProcessor(redactor, clean_text=clean_text, runtime_ids=True)
        self._serialize = _json_encoder(self._redacting.render_fallback)
        self._flat_json = FlatJsonRenderer(self._redacting.records).render
        processors = [*_pre_render(self._redacting), _json(self._redacting)]
        self._steps = tuple(processors[:-1])
        self._renderer = processors[-1]
        self._out = BufferedWriteLogger(stream)
        self._level = level

    def log(self, level: int, event: str, **fields: Any) -> None:
        """Render and write one line now (the bound logger's `log`)."""
        line = self.render(level, event, fields)
        if line is not None:
            self.write([line], urgent=level >= logging.WARNING)

    def render(self, level: int, event: str, fields: dict[str, Any]) -> str | None:
        """One line (None: below the level, or a processor dropped it). `fields` becomes
        the record: don't reuse it. Raises what a processor raises."""
        if level < self._level:
            return None
        name = _LEVEL_NAMES.get(level) or logging.getLevelName(level).lower()
        fields["event"] = event
        record: Any = fields
        out = self._out
        try:
            for step in self._steps:
                record = step(out, name, record)
            line: str = self._renderer(out, name, record)
        except structlog.DropEvent:
            return None
        return line

    def render_own(self, level: int, event: str, fields: dict[str, Any], when: float) -> str | None:
        """`render` of `fields` with the `timestamp` `when`, for the runtime's own lines
        (`LogObserver`'s: plain fields, no exception): the line `render` writes, byte for
        byte. A flat record is redacted and encoded in one pass (`FlatJsonRenderer`);
        any other goes through the same steps as `render`, without the two that would find
        nothing to do (`format_exc_info`, the `timestamp` type check)."""
        if level < self._level:
            return None
        name = _LEVEL_NAMES.get(level) or logging.getLevelName(level).lower()
        stamp = iso_utc(when)
        line = self._flat_json(fields, stamp, event, name)
        if line is not None:
            return line
        fields["timestamp"] = when
        fields["event"] = event
        fields["level"] = name  # add_log_level
        record = self._redacting(self._out, name, fields)
        record["timestamp"] = stamp
        return self._serialize(record)

    def write(self, lines: list[str], *, urgent: bool = False) -> None:
        """Write rendered lines in one go; `urgent` flushes at once (a warning or worse)."""
        self._out.write_lines(lines, urgent=urgent)

    def flush(self) -> None:
        self._out.flush()


_LEVEL_NAMES = {
    logging.DEBUG: "debug",
    logging.INFO: "info",
    logging.WARNING: "warning",
    logging.ERROR: "error",
    logging.CRITICAL: "critical",
}


def route_stdlib_logging(
    redactor: Redactor,
    stream: TextIO,
    level: int = logging.INFO,
    *,
    logger: logging.Logger | None = None,
) -> logging.Handler:
    """Send stdlib records (from libraries) through the same redacting chain, as JSON lines.

    Attaches a handler with structlog's `ProcessorFormatter` to `logger` (default: the root
    logger). Its `foreign_pre_chain` is our chain up to and including `RedactingProcessor`,
    plus the logger name first; after it only the removal of structlog's bookkeeping keys and
    the renderer run. The logger's own level is left alone: it still filters first.

    Args:
        redactor: the runtime's one redactor.
        stream: where lines go.
        level: the handler's level.
        logger: the stdlib logger to attach to; the root logger when None.

    Returns:
        The handler; `logger.removeHandler(handler)` undoes the change.
    """
    redacting = RedactingProcessor(redactor)
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[structlog.stdlib.add_logger_name, *_pre_render(redacting)],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, _json(redacting)],
    )
    handler = logging.StreamHandler(stream)
    handler.setLevel(level)
    handler.setFormatter(formatter)
    (logger or logging.getLogger()).addHandler(handler)
    return handler


Line = tuple[int, str, dict[str, Any]]
"""One log line before rendering: (stdlib level, event name, fields)."""
