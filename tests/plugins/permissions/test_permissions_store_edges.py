"""accept-edits and the session store, in-process: the edges of what
tests/cli/test_permissions_store.py shows through `dsh`. The store is where the
persistence service's optional `location` says (`dsh.persistence.store_location`); a
service of a third party that gives none keeps nothing more out, one that gives
something that is not a path fails closed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import dsh_permissions
from dsh import DshError, ToolCall, hookimpl
from dsh.harness import Harness
from dsh.persistence import SessionHeader, StoredSession, in_store, store_location
from dsh_permissions._guarded import guarded

pytestmark = pytest.mark.plugins("permissions")


class Store:
    """A third-party persistence plugin whose service gives ``location`` (or not)."""

    def __init__(self, **location: Any) -> None:
        if location:
            self.location = location["location"]

    @hookimpl
    def session_persistence(self) -> Store:
        return self

    async def list(self) -> list[SessionHeader]:
        return []

    async def load(self, session_id: str) -> StoredSession | None:
        return None

    async def delete(self, session_id: str) -> bool:
        return False


async def _write(ws: Path, store: Store, path: str, mode: str = "accept-edits") -> tuple[bool, str]:
    """Whether ``write(path)`` ran in ``ws`` (the file is there), and what the model read."""
    harness = Harness(
        plugins=[("permissions", dsh_permissions), ("store", store)],
        load_entry_points=False,
        config_text=f"permissions:\n  mode: {mode}\n",
        workspace=ws,
    )
    async with harness:
        agent = (await harness.agents.create("a")).agent
        call = ToolCall(id="c", name="write", arguments=f'{{"path": "{path}", "content": "x"}}')
        result = await harness.relay.tools_execute(agent, call, 1, 1)
    assert result is not None
    ran = (ws / path).is_file()
    assert ran is not result.content.startswith("Permission denied")
    return ran, result.content


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "keep").mkdir(parents=True)
    return tmp_path / "ws"


async def test_a_third_party_store_with_a_location_is_kept_out(ws: Path) -> None:
    kept = str((ws / "keep").resolve())
    ran, told = await _write(ws, Store(location=ws / "keep"), "keep/forged.jsonl")
    assert not ran
    assert f"accept-edits does not cover {kept}, the session store" in told


async def test_the_store_is_found_through_a_symlink(ws: Path) -> None:
    (ws / "link").symlink_to(ws / "keep")
    ran, _ = await _write(ws, Store(location=str(ws / "link")), "keep/forged.jsonl")
    assert not ran
    ran, _ = await _write(ws, Store(location=str(ws / "keep")), "link/forged.jsonl")
    assert not ran


async def test_a_service_that_gives_no_location_keeps_nothing_more_out(ws: Path) -> None:
    assert (await _write(ws, Store(), "keep/forged.jsonl"))[0]
    assert (await _write(ws, Store(location=None), "keep/forged.jsonl"))[0]


@pytest.mark.parametrize("location", ["relative/dir", 42, b"/bytes", ""])
async def test_a_location_that_is_not_an_absolute_path_fails_closed(
    ws: Path, location: object
) -> None:
    ran, told = await _write(ws, Store(location=location), "notes.txt")
    assert not ran
    assert "the permission check failed" in told and "gives location=" in told


async def test_other_modes_do_not_ask_for_the_location(ws: Path) -> None:
    """The store matters to accept-edits only: a bad location does not stop a
    default-mode decision (the write is asked about as before: no front end, denied)."""
    ran, told = await _write(ws, Store(location=42), "notes.txt", mode="default")
    assert not ran and "no rule allows" in told and "permission check failed" not in told


def test_store_location_reads_the_optional_attribute(tmp_path: Path) -> None:
    assert store_location(object()) is None
    assert store_location(Store(location=tmp_path)) == os.path.realpath(tmp_path)
    with pytest.raises(DshError, match=r"Store gives location='x': expected an absolute path"):
        store_location(Store(location="x"))


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        ("/s/db", True),
        ("/s/db-wal", True),
        ("/s/db-claims/a", True),
        ("/s/db/x", True),
        ("/s/dbx", False),
        ("/s/d", False),
        ("/s", False),
        ("/other/db", False),
    ],
)
def test_in_store_covers_the_path_what_is_below_it_and_its_dash_companions(
    path: str, inside: bool
) -> None:
    assert in_store("/s/db", path) is inside


@pytest.mark.parametrize(
    ("readings", "directory", "kept"),
    [
        (("/ws/.dsh/a.jsonl",), False, True),
        (("/ws/.dsh",), True, True),
        (("/ws",), True, True),  # a directory holding the store: the tool may change it
        (("/ws",), False, False),
        (("/ws/.dsh-other",), True, True),
        (("/ws/.dshx",), False, False),
        (("/ws/notes.txt", "/ws/.dsh/a"), False, True),  # any reading is enough
    ],
)
def test_guarded_keeps_out_the_store_and_what_holds_it(
    readings: tuple[str, ...], directory: bool, kept: bool
) -> None:
    why = guarded(readings, directory, frozenset(), "/ws/.dsh")
    assert (why is not None) is kept
    assert guarded(readings, directory, frozenset(), None) is None
