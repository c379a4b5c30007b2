"""``dsh sessions list``: stored sessions as a table for people, or as JSON.

The table's columns are padded by terminal cells (a CJK character takes two, a combining
mark none), and at a terminal the titles and workspaces show their control characters
as ``\\xNN``, as ``dsh run`` shows a model's text: a prompt or a directory name must not
move the cursor or retitle the terminal it is listed in. An id that does not print is
shown escaped everywhere (``dsh.persistence.shown_id``): one session a line, piped too.
"""

from __future__ import annotations

import json
import math
import sys
import time
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh.commands import for_terminal, json_for_terminal
from dsh.persistence import shown_id

if TYPE_CHECKING:
    from collections.abc import Sequence

    from dsh.persistence import SessionHeader

__all__ = ["is_terminal", "json_rows", "table", "when"]

#: An id longer than this is cut (ending in ``…``) in the table: one odd id must not
#: push every other column off the screen. ``--json`` and ``show`` give it whole.
ID_CELLS = 48


def json_rows(headers: Sequence[SessionHeader]) -> str:
    """``list --json``: one object per session; ``error`` says why the store cannot read
    it (null when it can), and its ``created``/``updated`` are null when not known."""
    rows: list[dict[str, Any]] = [
        {
            "id": h.id,
            "created": _known(h.created, h.error),
            "updated": _known(h.updated, h.error),
            "turns": h.turns,
            "title": h.title,
            "workspace": h.workspace,
            "error": h.error or None,
        }
        for h in headers
    ]
    return json_for_terminal(json.dumps(rows, indent=2, ensure_ascii=False))


def _known(timestamp: float, error: str) -> float | None:
    """A time for ``--json``: null when not known (0 of an unreadable session) or not a
    finite number (JSON has no infinity)."""
    if not math.isfinite(timestamp) or (error and not timestamp):
        return None
    return timestamp


def table(headers: Sequence[SessionHeader], *, terminal: bool) -> str:
    """The list as lines of aligned columns: ID, UPDATED, TURNS, WORKSPACE, TITLE (for a
    session the store cannot read, its problem in parentheses)."""
    home = _home()
    shown = for_terminal if terminal else str
    rows = [
        (
            _cut(shown_id(h.id), ID_CELLS),
            when(h.updated),
            str(h.turns) if not h.error or h.turns else "?",
            shown(_place(h.workspace, home)),
            shown(f"(unreadable: {h.error})" if h.error else h.title),
        )
        for h in headers
    ]
    width = max(_cells(row[0]) for row in rows)
    room = max(len("WORKSPACE"), *(_cells(row[3]) for row in rows))
    lines = [f"{_pad('ID', width)}  {'UPDATED':<16}  TURNS  {_pad('WORKSPACE', room)}  TITLE"]
    for session, updated, turns, place, title in rows:
        lines.append(
            f"{_pad(session, width)}  {updated:<16}  {turns:>5}  {_pad(place, room)}  {title}"
        )
    return "".join(line.rstrip() + "\n" for line in lines)


def when(timestamp: float) -> str:
    """A time as the table shows it; ``?`` when not known, or out of any calendar's range
    (a damaged store's)."""
    if not timestamp:
        return "?"
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))
    except (OverflowError, ValueError, OSError):  # infinite, NaN, past time_t
        return "?"


def _cells(text: str) -> int:
    """The terminal cells ``text`` takes."""
    return sum(map(_width, text))


def _width(char: str) -> int:
    """Two cells for a wide (East Asian) character, none for a combining mark or a
    zero-width character, one for any other."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _pad(text: str, cells: int) -> str:
    return text + " " * max(0, cells - _cells(text))


def _cut(text: str, cells: int) -> str:
    """``text`` in at most ``cells`` cells, ending in ``…`` when it was cut (one pass:
    an id may be thousands of characters long)."""
    if _cells(text) <= cells:
        return text
    used = 0
    for at, char in enumerate(text):
        used += _width(char)
        if used > cells - 1:
            return text[:at] + "…"
    return text  # not reached: the text takes more than ``cells``


def _home() -> Path | None:
    """The home directory, resolved as workspaces are; None when there is none to shorten
    paths by (no HOME and no passwd entry, as for a container's user, or ``/``)."""
    try:
        home = Path.home().resolve()
    except RuntimeError:
        return None
    return None if home.parent == home else home


def _place(workspace: str, home: Path | None) -> str:
    """A workspace as the list shows it: under the home directory as ``~/...``; ``-``
    when the store does not record it."""
    if not workspace:
        return "-"
    path = Path(workspace)
    if home is None or not path.is_relative_to(home):
        return workspace
    return str(Path("~", path.relative_to(home)))


def is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # closed, or not a real stream
        return False
