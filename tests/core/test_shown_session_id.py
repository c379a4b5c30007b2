"""A session id as dsh prints it (``dsh.persistence.shown_id``): as it is when plain, else
quoted and escaped as ``repr`` shows it. Only a backend used directly stores an id
holding a line end, a control or a bidi character; printed raw, ``find_session``'s
"matches N sessions" error broke across lines and could reorder what followed it. One
helper for the core's messages and a persistence plugin's ``dsh sessions``: it is public
(the plugins may use dsh's public modules only)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from dsh.errors import DshError
from dsh.persistence import SessionHeader, StoredSession, find_session, shown_id

#: What must never reach a message raw: C0 controls, DEL, C1, bidi controls, U+2028/9.
RAW = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
ODD = ["line\nbreak", "bidi\u202eevil", "esc\x1b[2Jx", "tab\tx", "cr\rx", "para\u2029x"]


class Listed:
    """A persistence service that only lists ids (what ``find_session`` reads)."""

    def __init__(self, *ids: str) -> None:
        self.ids = ids

    async def list(self) -> list[SessionHeader]:
        return [SessionHeader(session_id, 0.0, 0.0, 0) for session_id in self.ids]

    async def load(self, session_id: str) -> StoredSession | None:
        return None

    async def delete(self, session_id: str) -> bool:
        return False


@pytest.mark.parametrize("odd", ODD)
def test_an_id_that_does_not_print_is_shown_as_repr(odd: str) -> None:
    assert shown_id(odd) == repr(odd)
    assert not RAW.search(shown_id(odd))


@pytest.mark.parametrize("plain", ["main-session-3f0c", "plain id é", "会话-1"])
def test_a_plain_id_is_shown_as_it_is(plain: str) -> None:
    assert shown_id(plain) == plain


@pytest.mark.parametrize("looks_quoted", ["'line\\nbreak'", '"x"', "", " x", "x "])
def test_an_id_that_could_be_read_as_another_is_quoted(looks_quoted: str) -> None:
    """An id written as another's repr, an empty one and one with spaces at its ends
    are quoted too: what is shown names one id only."""
    assert shown_id(looks_quoted) == repr(looks_quoted)


async def test_the_matches_error_shows_the_ids_it_lists_escaped() -> None:
    ids = ("odd\nA", "odd\u202eB", "odd\x1b[2JC")
    with pytest.raises(DshError) as raised:
        await find_session(Listed(*ids), "odd")
    said = str(raised.value)
    assert not RAW.search(said)
    assert said.endswith(": " + ", ".join(repr(i) for i in sorted(ids)))


@pytest.mark.parametrize("above", [True, False])
def test_continue_names_the_last_session_escaped(above: bool) -> None:
    """``--continue`` with nothing to take here names the store's last session (or the
    last one of a directory above): by its id escaped, and a ``--session`` that pastes."""
    from dsh._cli_continue import _none_here

    odd = "odd\nid\u202e"
    header = SessionHeader(odd, 0.0, 0.0, 1, workspace="/work" if above else "/elsewhere")
    said = _none_here([header], Path("/work/sub"), argparse.Namespace(command="chat"))
    assert not RAW.search(said)
    assert f" is {odd!r}: " in said if above else f"the last one, {odd!r}, is from" in said
