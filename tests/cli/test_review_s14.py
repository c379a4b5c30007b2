"""Review of `--continue` per workspace (session 14): the path rules of
dsh.persistence.started_in / last_in / last_above, and the WORKSPACE column of `dsh
sessions list`."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh.persistence import SessionHeader, last_above, last_in, started_in


def header(session_id: str, workspace: str) -> SessionHeader:
    return SessionHeader(session_id, 1.0, 2.0, 1, "t", workspace)


# -- dsh.persistence ---------------------------------------------------------------------------


def test_a_workspace_recorded_with_a_trailing_slash_is_the_same_workspace() -> None:
    # A third-party store may keep the path as it was given ("/p/alpha/", "/p/./alpha");
    # last_above compares paths (and so skipped it: not *above*), started_in compared
    # strings (and so skipped it too): --continue found no session, and its error named
    # neither this one nor how to take it.
    headers = [header("s-1", "/p/alpha/"), header("s-2", "/p/./beta")]
    assert last_in(headers, "/p/alpha") == headers[0]
    assert started_in(headers, "/p/beta") == [headers[1]]


def test_a_store_that_keeps_lone_surrogates_still_matches() -> None:
    # A store that does not write UTF-8 (one in memory, or a third-party one) keeps
    # os.fsdecode's lone surrogates; started_in replaced them in the workspace only.
    where = "/p/caf\udce9"
    headers = [header("s-1", where)]
    assert last_in(headers, where) == headers[0]
    assert last_above(headers, where + "/sub") == headers[0]


def test_last_above_names_a_parent_not_the_workspace_itself_nor_a_sibling() -> None:
    headers = [
        header("s-same", "/p/alpha"),
        header("s-sibling", "/p/alphabet"),
        header("s-unknown", ""),
        header("s-parent", "/p"),
    ]
    assert last_above(headers, "/p/alpha") == headers[3]
    assert last_above(headers, "/p/alpha/") == headers[3]
    assert last_above(headers[:3], "/p/alpha") is None


def test_the_root_directory_holds_every_workspace_and_has_none_above() -> None:
    headers = [header("s-root", "/")]
    assert last_in(headers, "/") == headers[0]
    assert last_above(headers, "/") is None
    assert last_above(headers, "/p/alpha") == headers[0]


def test_last_above_matches_a_workspace_that_is_not_utf8_as_the_store_wrote_it() -> None:
    headers = [header("s-1", "/p/caf\ufffd")]
    assert last_above(headers, "/p/caf\udce9/src") == headers[0]
    assert last_in(headers, "/p/caf\udce9") == headers[0]


def test_a_session_that_does_not_say_where_it_was_started_is_everywhere() -> None:
    headers = [header("s-elsewhere", "/q"), header("s-unknown", "")]
    assert started_in(headers, "/p") == [headers[1]]
    assert last_in(headers, "/p") == headers[1]


# -- the WORKSPACE column --------------------------------------------------------------------


@pytest.mark.plugins("persistence")
def test_the_workspace_column(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from dsh_persistence._listing import _home, _place

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    here = _home()
    assert here == home.resolve()
    assert _place("", here) == "-"
    assert _place(str(home.resolve()), here) == "~"
    assert _place(str(home.resolve() / "src" / "webapp"), here) == "~/src/webapp"
    assert _place("/elsewhere/x", here) == "/elsewhere/x"
    assert _place(str(home.resolve()) + "x/y", here) == str(home.resolve()) + "x/y"
    monkeypatch.setenv("HOME", "/")  # a home of / would make every path ~/...
    assert _home() is None
    assert _place("/srv/app", _home()) == "/srv/app"


@pytest.mark.plugins("persistence")
def test_the_workspace_column_without_a_home_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    # A container user without HOME and without a passwd entry: Path.home() raises
    # RuntimeError, and `dsh sessions list` failed with a traceback over a display nicety.
    from dsh_persistence import _listing

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(_listing.Path, "home", staticmethod(no_home))
    assert _listing._home() is None
