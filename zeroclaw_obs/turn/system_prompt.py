"""The system message at the head of the history: the agent's prompt and the tool sections.

`SystemPrompt` is the loop's (`loop.py`): it installs the message before the first request
and keeps it current as the offered tools change.
"""

from __future__ import annotations

from typing import Any

from ..providers.text_protocol import build_tool_instructions
from ..redaction import Redactor
from ..tools.base import ToolSpec
from .context import ResolvedAgentExecution
from .specs import EffectiveTools

__all__ = ["SystemPrompt"]


class _RuntimeSystemMessage(dict[str, Any]):
    """A system message the loop built (a plain dict to every reader): a later turn of the
    conversation (or the same turn after a model switch) rebuilds it, where a system message
    the caller put in the history is kept as the prompt when the agent has none."""

    def __init__(self, content: str, *, kept: str) -> None:
        super().__init__(role="system", content=content)
        self.kept = kept
        """The caller's system text this message was built on ('' when none), kept again
        when it is rebuilt."""


class SystemPrompt:
    """Keeps the system message (operator prompt + tool sections) current, in place.

    The agent's prompt (`system_prompt`) replaces a system message already at the head of
    the history. With no agent prompt (None or empty), a system message the caller put
    there is kept as the prompt, with the tool sections after it; one an earlier turn of the
    conversation installed is rebuilt.

    The message is rebuilt only when the offered tools change (after a `tool_search`
    activation), so the per-iteration cost does not grow with the history.

    With a redactor (`redact_history` on) the operator's prompt, the deferred-tools section and
    the text protocol's tool list are redacted, tool names included: a registry name that
    holds a secret is listed under its shown form, and `aliases` maps that form back to the
    real name, so a text-protocol model can still call the tool (native specs carry the real
    names in the request, never in the history). Parameter schemas are listed as they are:
    masking a property named `password` would break the schema the model reads.
    """

    def __init__(
        self, execution: ResolvedAgentExecution, *, text_protocol: bool, redactor: Redactor | None
    ) -> None:
        base = execution.system_prompt
        self._base = redactor.redact_text(base) if redactor is not None and base else base
        self._redactor = redactor
        self._names = execution.shown
        self.aliases: dict[str, str] = {}
        """Shown tool name → real name, for the tools the prompt lists under a redacted name."""
        self._text_protocol = text_protocol
        self._signature: tuple[str, ...] | None = None
        self._index: int | None = None
        self._kept = ""
        """The caller's system text found at the head of the history ('' when none)."""

    def install(self, messages: list[dict[str, Any]], tools: EffectiveTools) -> None:
        signature = tuple(sorted(tools.names()))
        if signature == self._signature:
            return
        self._signature = signature
        if self._index is None and messages and messages[0].get("role") == "system":
            self._index = 0
            head = messages[0]
            # With no agent prompt, the caller's own system message stays the prompt and the
            # tool sections follow it; one the loop built carries the caller's text it kept.
            if isinstance(head, _RuntimeSystemMessage):
                self._kept = head.kept
            else:
                self._kept = _text_of(head.get("content"))
            if not self._base:
                self._base = self._kept
        parts = [p for p in (self._base, tools.prompt_section(self._redactor)) if p]
        if self._text_protocol:
            specs = tools.specs()
            if self._redactor is not None:
                specs = [self._shown_spec(spec, self._redactor) for spec in specs]
            parts.append(build_tool_instructions(specs))
        content = "\n\n".join(parts)
        if self._index is None:
            if not content:
                return
            messages.insert(0, _RuntimeSystemMessage(content, kept=self._kept))
            self._index = 0
        else:
            messages[self._index] = _RuntimeSystemMessage(content, kept=self._kept)

    def _shown_spec(self, spec: ToolSpec, redactor: Redactor) -> ToolSpec:
        """`spec` as the text protocol's list shows it: name and description redacted."""
        name = self._names.tool(spec.name)
        if name != spec.name:
            self.aliases[name] = spec.name
        description = redactor.redact_text(spec.description)
        if (name, description) == (spec.name, spec.description):
            return spec
        return ToolSpec(name=name, description=description, parameters=spec.parameters)


def _text_of(content: Any) -> str:
    """The text of a caller's system message: its string, or the text parts of a list of
    content parts (`{"type": "text", "text": …}` or plain strings, joined by a line break).

    Any other content (an image part, a dict, a number) adds nothing: its Python repr in the
    prompt would be noise to the model, and the rebuilt message is text only.
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        part if isinstance(part, str) else part.get("text")
        for part in content
        if isinstance(part, str) or (isinstance(part, dict) and part.get("type") == "text")
    ]
    return "\n".join(t for t in texts if isinstance(t, str) and t)
