"""``dsh.persistence.started_in``, ``last_in`` and ``last_above`` leave out a session
the store cannot read (``SessionHeader.error``): it says nothing of where it ran, and
its empty workspace, which means "not recorded", used to put it in every workspace, so
``dsh run --continue`` anywhere took another program's file and failed with its error."""

from __future__ import annotations

from dsh.persistence import SessionHeader, last_above, last_in, started_in

BROKEN = SessionHeader("notes", 0.0, 0.0, 0, error="notes.jsonl: not a dsh session file")
MOVED = SessionHeader("nice", 5.0, 9.0, 2, "hi", "/p/q", error="file name says 'nice'")
OLD = SessionHeader("old", 1.0, 2.0, 1, "hello", "")  # a store that records no workspace
HERE = SessionHeader("here", 1.0, 3.0, 1, "hello", "/p/q")


def test_an_unreadable_session_is_in_no_workspace() -> None:
    assert started_in([BROKEN, MOVED], "/p/q") == []
    assert last_in([BROKEN, MOVED], "/p/q") is None
    assert last_in([BROKEN, MOVED, HERE], "/p/q") == HERE
    assert started_in([BROKEN, OLD, HERE], "/p/q") == [OLD, HERE]  # "" still matches


def test_an_unreadable_session_is_no_session_above() -> None:
    assert last_above([MOVED], "/p/q/sub") is None
    assert last_above([MOVED, HERE], "/p/q/sub") == HERE


def test_continue_counts_unreadable_sessions_by_the_foreign_field() -> None:
    """``--continue`` skips and counts sessions it cannot read, but not entries the store
    marks as no session at all (``foreign``), whatever their error says: it matched the
    words "not a dsh session file", which another store need not use."""
    from dsh._cli_continue import _unreadable

    other = SessionHeader("train", 0.0, 0.0, 0, error="no header", foreign=True)
    newer = SessionHeader("newer", 0.0, 0.0, 0, error="x: not a dsh session file v9")
    assert not _unreadable(other)
    assert _unreadable(newer)
    assert not _unreadable(HERE)
