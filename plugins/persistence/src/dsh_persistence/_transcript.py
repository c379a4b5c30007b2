"""A session log as a person reads it (``dsh sessions show`` and ``resume``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh.session import SessionEvent

__all__ = ["Transcript"]

_RESULT_CHARS = 400
_RESULT_LINES = 8
_ARGUMENT_CHARS = 200


class Transcript:
    """Turns events into text, one event at a time.

    ``live=True`` is for a log being written: streamed text chunks are shown as they
    come and the complete assistant message only ends the line. Otherwise chunks are
    skipped and each assistant message is shown whole. Plain ASCII markers, so any
    terminal encoding can print it.
    """

    def __init__(self, *, live: bool = False) -> None:
        self.live = live
        self._streaming = False

    def feed(self, event: SessionEvent) -> str:
        """The text for ``event`` (possibly empty), ending with a newline unless it is a
        streamed chunk."""
        kind, data = event.type, event.data
        text = ""
        if self._streaming and kind != "assistant/chunk":
            self._streaming = False
            text = "\n"
        if kind == "assistant/chunk":
            return text + self._chunk(data)
        return text + _line(kind, data, self.live)

    def _chunk(self, data: dict[str, Any]) -> str:
        if not self.live or data.get("kind") != "text" or not data.get("text"):
            return ""
        prefix = "" if self._streaming else "assistant: "
        self._streaming = True
        return prefix + str(data["text"])


def _line(kind: str, data: dict[str, Any], live: bool) -> str:
    if kind == "turn/start":
        return f"\n--- turn {data.get('turn')} ---\n"
    if kind == "user/message":
        return _block("you", data.get("content"))
    if kind == "steering/message":
        who = "steering (plugin)" if data.get("source") == "plugin" else "you (steering)"
        return _block(who, data.get("content"))
    if kind == "assistant/message":
        return "" if live else _assistant(data.get("message") or {})
    if kind == "tool/call":
        arguments = _cut(str(data.get("arguments", "")), _ARGUMENT_CHARS)
        return f"  -> {data.get('name')} {arguments}\n"
    if kind == "tool/result":
        mark = "  <- error: " if data.get("is_error") else "  <- "
        return _block(mark, _cut_lines(str(data.get("content", ""))), indent="     ")
    if kind == "turn/end":
        return _turn_end(data)
    if kind in ("step/start", "step/end"):
        return ""
    shown = _cut(json.dumps(data, ensure_ascii=False), _ARGUMENT_CHARS)
    return f"  [{kind}] {shown}\n"


def _assistant(message: dict[str, Any]) -> str:
    out = []
    for block in message.get("content") or ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            out.append(_block("assistant", block["text"]))
        elif block.get("type") == "reasoning" and block.get("text"):
            out.append(f"  (thinking: {_cut(' '.join(str(block['text']).split()), 100)})\n")
    return "".join(out)


def _turn_end(data: dict[str, Any]) -> str:
    usage = data.get("usage") or {}
    tokens = ""
    if usage.get("input_tokens") or usage.get("output_tokens"):
        tokens = f", {usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out"
    line = f"--- turn {data.get('turn')} ended: {data.get('reason')}{tokens} ---\n"
    error = data.get("error")
    if isinstance(error, dict) and error.get("message"):
        line = f"  error: {error['message']}\n" + line
    return line


def _block(who: str, content: Any, indent: str = "  ") -> str:
    lines = str(content if content is not None else "").splitlines() or [""]
    prefix = who if who.endswith(" ") else f"{who}: "
    return prefix + lines[0] + "".join(f"\n{indent}{line}" for line in lines[1:]) + "\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _cut_lines(text: str) -> str:
    lines = text.splitlines()
    if len(lines) > _RESULT_LINES:
        lines = [*lines[:_RESULT_LINES], f"... ({len(lines) - _RESULT_LINES} more lines)"]
    return _cut("\n".join(lines), _RESULT_CHARS)
