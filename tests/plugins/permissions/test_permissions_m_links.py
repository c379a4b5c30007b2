"""The walk for symlinks below a directory (``_links``) and its two bounds, entries and
time (behaviour 49: a symlink inside a directory is checked where it leads; a
directory the walk cannot finish is taken as covered, never as checked). The clock is
the module's ``monotonic``, replaced here, so no test waits for real time to pass."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import dsh_permissions._links as links

pytestmark = pytest.mark.plugins("permissions")


def tree(root: Path, files: int) -> Path:
    """``root/tree`` holding ``files`` entries, the first a symlink to ``root/target``."""
    (root / "target").write_text("x\n")
    (root / "tree" / "sub").mkdir(parents=True)
    (root / "tree" / "link").symlink_to(root / "target")
    for i in range(files - 2):
        (root / "tree" / "sub" / f"f{i}").touch()
    return root / "tree"


def late_clock(monkeypatch: pytest.MonkeyPatch, on_time: int) -> list[int]:
    """After its first ``on_time`` readings, the clock says the deadline is long past;
    the returned list counts the readings."""
    readings: list[int] = []
    ticks = itertools.chain(itertools.repeat(0.0, on_time), itertools.repeat(1e6))

    def clock() -> float:
        readings.append(1)
        return next(ticks)

    monkeypatch.setattr(links, "monotonic", clock)
    return readings


def test_b49_a_walk_stopped_by_time_takes_the_directory_as_covered(tmp_path, monkeypatch):
    directory = str(tree(tmp_path, links.CHECK_EVERY + 5))
    # read at the start, before listing tree/ and tree/sub/, then at CHECK_EVERY entries
    readings = late_clock(monkeypatch, on_time=3)
    found, why = links.links_below(directory)
    assert why == (
        f"looking for symlinks in {directory} took too long: stopped after "
        f"{links.MAX_SECONDS:g} seconds and {links.CHECK_EVERY} entries"
    )
    assert len(readings) == 4
    assert found == (str(tmp_path / "target"),)  # what was found before is still checked
    # the bound given like ``limit`` is the one named
    late_clock(monkeypatch, on_time=3)
    assert "stopped after 0.25 seconds" in str(links.links_below(directory, seconds=0.25)[1])


def test_b49_a_walk_of_small_directories_is_stopped_by_time_between_them(tmp_path, monkeypatch):
    """Listing a directory can take long (a network mount) however few entries it has:
    the clock is read before each one is listed."""
    directory = str(tree(tmp_path, 10))
    readings = late_clock(monkeypatch, on_time=2)  # the start, tree/; late at tree/sub/
    found, why = links.links_below(directory)
    assert why == (
        f"looking for symlinks in {directory} took too long: stopped after "
        f"{links.MAX_SECONDS:g} seconds and 2 entries"
    )
    assert len(readings) == 3
    assert found == (str(tmp_path / "target"),)


def test_b49_the_entry_bound_still_stops_a_walk_and_names_the_directory(tmp_path, monkeypatch):
    directory = str(tree(tmp_path, 10))
    why = links.links_below(directory, limit=5)[1]
    assert why == f"{directory} holds more than 5 entries, too many to check for symlinks"
    # with the clock past its deadline inside tree/sub/ too, the entry bound (hit first)
    # is the reason
    late_clock(monkeypatch, on_time=3)
    assert links.links_below(directory, limit=5)[1] == why


def test_b49_a_walk_done_in_time_is_whole(tmp_path, monkeypatch):
    directory = tree(tmp_path, links.CHECK_EVERY - 1)
    whole = ((str(tmp_path / "target"),), None)
    assert links.links_below(str(directory)) == whole
    readings = late_clock(monkeypatch, on_time=3)
    assert links.links_below(str(directory)) == whole
    assert len(readings) == 3  # the start and once per directory: never per entry
