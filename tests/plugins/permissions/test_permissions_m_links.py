"""The walk for symlinks below a directory (``_links``) and its two bounds, entries and
time (behaviour 49: a symlink inside a directory is checked where it leads; a
directory the walk cannot finish is taken as covered, never as checked). The clock is
the module's ``monotonic``, replaced here, so no test waits for real time to pass."""

from __future__ import annotations

import itertools
import json
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


def trees(root: Path, names: str) -> list[str]:
    """One small ``tree`` (see ``tree``) below ``root/NAME`` for each letter of ``names``."""
    out = []
    for name in names:
        (root / name).mkdir()
        out.append(str(tree(root / name, 10)))
    return out


def test_b49_the_walks_of_one_check_share_one_time_budget(tmp_path, monkeypatch):
    """Leaked time: each directory a call named had its own half second, so a command
    naming several large directories made the person wait several times as long (in
    the event loop). Within one check the walks share one deadline: once it is past,
    a further directory is taken as covered after one look at the clock, and the
    reason names the directory where the walk stopped."""
    first, second, third = trees(tmp_path, "abc")
    # the start, before a/tree/ (on time); late before a/tree/sub/
    readings = late_clock(monkeypatch, on_time=2)
    with links.one_check():
        found = [links.links_below(d) for d in (first, second, third)]
    assert found[0][1] == (
        f"looking for symlinks in {first} took too long: stopped after "
        f"{links.MAX_SECONDS:g} seconds and 2 entries"
    )
    for directory, (_, why) in zip((second, third), found[1:], strict=True):
        assert why == (
            f"looking for symlinks in {directory} took too long: the "
            f"{links.MAX_SECONDS:g} seconds the directories of this call share ran out "
            "after 0 entries in it"
        )
    assert len(readings) == 5  # 3 for the first walk, then one per further directory
    # outside a check (or given its own seconds) a walk has a budget of its own
    late_clock(monkeypatch, on_time=0)
    assert links.links_below(second)[1] is None
    with links.one_check():
        links.links_below(first)
        assert links.links_below(second, seconds=0.25)[1] is None


def test_b49_a_call_naming_several_directories_waits_for_one_budget(tmp_path, monkeypatch):
    """Through ``_calls.subjects_of`` (one tool call's check): the second and third
    directories are not given a budget of their own, and one named twice is walked
    once."""
    from dsh import ToolCall
    from dsh.tools import tool
    from dsh_permissions._calls import subjects_of
    from dsh_permissions._subjects import ToolFacts

    @tool(path_args=("paths",))
    def search(paths: list[str]) -> str:
        "Search directories."
        return ""

    first, second, third = trees(tmp_path, "abc")
    call = ToolCall(id="c", name="search", arguments=json.dumps({"paths": [first, second, third]}))
    facts = ToolFacts.of("search", search)
    readings = late_clock(monkeypatch, on_time=2)
    subjects = subjects_of(facts, search, call, str(tmp_path), links=True)
    assert [s.links_unknown is not None for s in subjects] == [True, True, True]
    assert second in str(subjects[1].links_unknown), subjects[1].links_unknown
    assert third in str(subjects[2].links_unknown), subjects[2].links_unknown
    assert len(readings) == 5
    # the same directory twice: one walk (the start and one reading per directory)
    call = ToolCall(id="c", name="search", arguments=json.dumps({"paths": [first, first]}))
    readings = late_clock(monkeypatch, on_time=100)
    subjects = subjects_of(facts, search, call, str(tmp_path), links=True)
    assert [s.links for s in subjects] == [subjects[0].links] * 2 and subjects[0].links
    assert len(readings) == 3
