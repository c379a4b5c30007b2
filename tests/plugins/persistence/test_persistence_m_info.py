"""What a backend records once about a session (``SessionInfo``): the title and the
working directory, as docs/persistence.md describes the header's ``title`` ("the first
prompt, on one line, at most 120 characters") and ``cwd``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh.session import Session
from dsh_persistence import PersistenceSettings, SessionInfo, open_backend

pytestmark = pytest.mark.plugins("persistence")


def title(prompt: str) -> str:
    session = Session("s")
    session._append("turn/start", {"turn": 1})
    session._append("user/message", {"content": prompt})
    return SessionInfo.of(session).title


def test_a_prompt_of_exactly_120_characters_is_the_title_unchanged() -> None:
    prompt = "x" * 119 + "y"
    assert title(prompt) == prompt


def test_a_longer_prompt_is_cut_to_120_characters_with_an_ellipsis() -> None:
    shown = title("a" * 119 + "bc")
    assert len(shown) == 120
    assert shown == "a" * 119 + "…"


def test_the_title_is_the_prompt_on_one_line_with_spaces_collapsed() -> None:
    assert title("  what does\n\tsrc/app.py   do?\r\n") == "what does src/app.py do?"


def test_a_working_directory_that_is_not_utf8_is_stored_readably(
    settings: PersistenceSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A working directory whose name is not UTF-8 (a lone surrogate once decoded) is
    recorded with U+FFFD, so every backend can store the session and list it."""
    odd = os.fsencode(tmp_path) + b"/caf\xe9"
    os.mkdir(odd)
    monkeypatch.chdir(odd)
    session = Session("s")
    session._append("turn/start", {"turn": 1})
    session._append("user/message", {"content": "hi"})

    info = SessionInfo.of(session)
    assert info.cwd.endswith("/caf\ufffd")
    backend = open_backend(settings)
    try:
        backend.append(info, session.events, durable=True)
        assert [h.id for h in backend.headers()] == ["s"]
    finally:
        backend.close()


@pytest.mark.xfail(
    strict=True,
    reason="the stored workspace is for display (U+FFFD for each byte not UTF-8, as above): "
    "a command a hint builds from it (--continue's `--cwd DIR` of the session above) names "
    "another directory; keeping it losslessly needs a store format change in every backend",
)
def test_a_working_directory_that_is_not_utf8_is_stored_as_its_bytes(tmp_path: Path) -> None:
    """Found by a review of the go-on hints: ``dsh run --continue`` from a subdirectory
    of a non-UTF-8 directory names the session above with U+FFFD in its ``--cwd``."""
    odd = os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9")
    session = Session("s")
    session._append("turn/start", {"turn": 1})
    # as bytes: a lone surrogate in the assertion's message would break xdist's report
    assert os.fsencode(SessionInfo.of(session, odd).cwd) == os.fsencode(odd)
