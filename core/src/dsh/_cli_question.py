"""The call a permission question is about, as the terminal shows it: whole, never cut
(what is approved is what was seen), its control characters escaped (``visible``). A
string argument with line breaks (write's ``content``, edit's ``old`` and ``new``) is
shown below the call, a line of the terminal for each of its lines, each marked
``│``; the call's line names it ``<N lines below>``."""

from __future__ import annotations

import json
from typing import Any

from dsh._visible import visible

__all__ = ["call_shown"]

#: Begins each line of a value shown below the call: text of the call cannot pass for
#: dsh's own lines (``allow? ...``).
MARK = "  │ "


class _Repeated(ValueError):
    """A key given twice: which value the tool takes is not for the question to guess."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Repeated
    return dict(pairs)


def call_shown(tool: str, arguments: str) -> tuple[str, list[str]]:
    """``tool(arguments)`` for the question's first line, and the lines of the values
    shown below it. Arguments that are not a JSON object with each key once are shown
    as they came (whole, escaped)."""
    try:
        parsed = json.loads(arguments, object_pairs_hook=_pairs)
    except (ValueError, RecursionError):
        parsed = None
    if not isinstance(parsed, dict):  # one line: its line breaks could forge dsh's own
        return f"{_one_line(tool)}({_one_line(arguments)})", []
    inline: list[str] = []
    below: list[str] = []
    for key, value in parsed.items():
        name = json.dumps(key, ensure_ascii=False)
        if isinstance(value, str) and "\n" in value.replace("\r\n", "\n").rstrip("\n"):
            lines = value.replace("\r\n", "\n").split("\n")
            ends = lines[-1] == ""
            if ends:
                lines.pop()
            said = f"{len(lines)} lines below" + ("" if ends else ", no line break at the end")
            inline.append(f"{name}: <{said}>")
            below.append(f"  {visible(name)}:")
            below.extend(MARK + visible(line) for line in lines)
        else:
            inline.append(f"{name}: {json.dumps(value, ensure_ascii=False)}")
    return f"{_one_line(tool)}({visible('{' + ', '.join(inline) + '}')})", below


def _one_line(text: str) -> str:
    """``text`` shown (``visible``) on one line: its line breaks and tabs as escapes."""
    return visible(text).replace("\n", "\\n").replace("\t", "\\t")
