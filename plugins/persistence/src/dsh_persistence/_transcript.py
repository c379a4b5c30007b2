"""A session log as a person reads it (``dsh sessions show``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

    from dsh.session import SessionEvent

__all__ = ["transcript"]

_RESULT_CHARS = 400
_RESULT_LINES = 8
_ARGUMENT_CHARS = 200
_CUT_OFF = ("aborted", "error")


def transcript(events: Iterable[SessionEvent]) -> str:
    """Stored events as text: each assistant message is shown whole, once; the text a
    step streamed before it was cut off (an abort, an error) is shown as it was seen,
    from its message or, in a log written before dsh kept that text, its chunks.
    Plain ASCII markers, so any terminal encoding can print it."""
    out: list[str] = []
    streamed: list[str] = []  # the text chunks of the step whose message is not logged
    for event in events:
        kind, data = event.type, event.data
        if kind == "assistant/chunk" and data.get("kind") == "text":
            streamed.append(str(data.get("text", "")))
        elif kind in ("assistant/message", "step/start"):
            streamed.clear()
        elif kind == "turn/end" and "".join(streamed).strip():
            out.append(_block("assistant (cut off)", "".join(streamed).strip()))
            streamed.clear()
        out.append(_line(kind, data))
    return "".join(out)


def _line(kind: str, data: dict[str, Any]) -> str:
    if kind == "turn/start":
        return f"\n--- turn {data.get('turn')} ---\n"
    if kind == "user/message":
        return _block("you", data.get("content"))
    if kind == "steering/message":
        who = "steering (plugin)" if data.get("source") == "plugin" else "you (steering)"
        return _block(who, data.get("content"))
    if kind == "assistant/message":
        return _assistant(data.get("message") or {})
    if kind == "tool/call":
        arguments = _cut(str(data.get("arguments", "")), _ARGUMENT_CHARS)
        return f"  -> {data.get('name')} {arguments}\n"
    if kind == "tool/result":
        mark = "  <- error: " if data.get("is_error") else "  <- "
        return _block(mark, _cut_lines(str(data.get("content", ""))), indent="     ")
    if kind == "turn/end":
        return _turn_end(data)
    if kind in ("step/start", "step/end", "assistant/chunk"):
        return ""
    return f"  [{kind}] {_cut(_fields(data), _ARGUMENT_CHARS)}\n"


def _fields(data: dict[str, Any]) -> str:
    """Another plugin's event, read at a glance: its plain values as ``key=value``; ids,
    empty and nested values are left out (``show --json`` has them all)."""
    shown = []
    for key, value in data.items():
        if key.endswith("id") or value is None or value == "" or isinstance(value, dict | list):
            continue
        spaced = isinstance(value, str) and (" " in value or not value.isprintable())
        shown.append(f"{key}={json.dumps(value, ensure_ascii=False) if spaced else value}")
    return " ".join(shown)


def _assistant(message: dict[str, Any]) -> str:
    out = []
    # the text a step had streamed when it was aborted or its stream failed
    who = "assistant (cut off)" if message.get("stop_reason") in _CUT_OFF else "assistant"
    for block in message.get("content") or ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            out.append(_block(who, block["text"]))
        elif block.get("type") == "reasoning" and block.get("text"):
            out.append(f"  (thinking: {_cut(' '.join(str(block['text']).split()), 100)})\n")
        elif block.get("type") == "provider" and isinstance(block.get("data"), dict):
            # a provider's own block (a server tool's call or results): its kind, a glance
            data = block["data"]
            what = f"{block.get('provider')} {data.get('type')}"
            shown = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
            out.append(f"  ({what}: {_cut(shown, 100)})\n")
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
    lines = _lines(str(content if content is not None else "")) or [""]
    prefix = who if who.endswith(" ") else f"{who}: "
    return prefix + lines[0] + "".join(f"\n{indent}{line}" for line in lines[1:]) + "\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _lines(text: str) -> list[str]:
    """``text``'s lines, broken at ``\\n`` only (a final one ends the last line): a
    ``\\r`` (a progress bar's, a Windows line end's), a form feed or U+2028, which
    ``str.splitlines`` breaks at too, stays in its line, as stored (at a terminal
    ``for_terminal`` shows it as ``\\x0d``; ``\\r\\n`` there is a line end)."""
    return text.removesuffix("\n").split("\n") if text else []


def _cut_lines(text: str) -> str:
    lines = _lines(text)
    if len(lines) > _RESULT_LINES:
        lines = [*lines[:_RESULT_LINES], f"... ({len(lines) - _RESULT_LINES} more lines)"]
    return _cut("\n".join(lines), _RESULT_CHARS)
