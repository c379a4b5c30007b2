"""What the wrapper and xargs checks of docs/permissions.md cost: readings behind a
wrapper grow linearly, and a long command behind a wrapper or xargs is decided quickly.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from permissions_attack_s17_support import ALLOW_ALL

from dsh_permissions._commands import command_subjects

pytestmark = pytest.mark.plugins("permissions")

# -- cost: deny and ask readings behind a wrapper -------------------------------------


def _reading_chars(line: str, root: str) -> int:
    subjects = command_subjects(line, root, reads=True)
    return sum(len(r) for s in subjects for r in s.deny)


@pytest.mark.parametrize(
    "unit",
    ["a ", "cat a ", "env ", "-x v ", "sudo -u root "],
    ids=["words", "readers", "nested", "options", "sudo"],
)
def test_readings_behind_a_wrapper_grow_linearly(layout, unit):
    """Every suffix of a command behind a wrapper was a deny reading: 60,000
    characters behind ``env`` made 225 million characters of readings (and
    ``env env env ...`` a subject per wrapper, each with its own suffixes). Now only
    the words that may be the command are readings (``_wrappers.behind``)."""
    root = str(layout.ws)
    line = ("env " + unit * (3000 // len(unit)))[:3000]
    assert _reading_chars(line, root) <= 200 * len(line)


@pytest.mark.timeout(120)  # the quadratic checker took far longer: a failure, not a hang
def test_a_long_command_behind_a_wrapper_is_decided_quickly(judge):
    """A 60,000-character command behind ``env`` (every word a reading program)
    took minutes to decide; it now takes about as long as the same command with no
    wrapper (the split and the file look-ups, linear)."""

    def timed(command: str) -> float:
        # this process's CPU time, not the wall clock: another process on a loaded
        # machine (the other test worker) does not count against either command
        best = float("inf")
        for _ in range(2):
            start = time.process_time()
            asyncio.run(judge(ALLOW_ALL, "bash", {"command": command}))
            best = min(best, time.process_time() - start)
        return best

    plain = timed(("cat " + "cat a " * 10000)[:60000])
    wrapped = timed(("env " + "cat a " * 10000)[:60000])
    assert wrapped < 3 * plain + 0.5, (wrapped, plain)


@pytest.mark.parametrize(
    "line",
    [
        "xargs " * 60 + "git " + "a " * 30_000,
        "xargs -I{} " * 3 + "git " + "a " * 30_000 + "{}",
        "sudo -u root " * 20 + "xargs git " + "a " * 30_000,
    ],
    ids=["xargs-chain", "replace-chain", "behind-sudo"],
)
def test_what_xargs_may_make_of_a_long_command_is_cheap(layout, line):
    """Each xargs that may be the program costs the length of the command, and each
    beginning is kept whole: 60 xargs in front of 60,000 characters took a minute and
    54 million characters of beginnings. Now more than ``MAX_XARGS`` of them make the
    command anything (asked about under any pattern) and beginnings are cut at
    ``OPEN_CHARS`` (which can only make more patterns match)."""
    from dsh_permissions._xargs import MAX_XARGS, OPEN_CHARS

    subjects = command_subjects(line, str(layout.ws), reads=True)
    prefixes = [p for s in subjects for p in s.open]
    assert all(len(p) <= OPEN_CHARS for p in prefixes)
    assert sum(len(p) for p in prefixes) <= 2 * len(line)
    if line.count("xargs") > MAX_XARGS:
        assert "" in prefixes


class _Counted(str):
    """A word that counts the characters of every slice taken of it."""

    sliced = 0

    def __getitem__(self, key):  # type: ignore[override]
        part = str.__getitem__(self, key)
        if isinstance(key, slice):
            _Counted.sliced += len(part)
        return part


@pytest.mark.parametrize("line", ["sudo {} rm", "env {} rm", "read {} x"])
def test_a_long_cluster_of_short_options_costs_its_length(layout, line, monkeypatch):
    """Each letter of a cluster copied the rest of its word: 60,000 ``v`` behind
    ``sudo -`` cost as much as 20,000 words ``-v``, 20 times a plain line. Now a value
    is cut out only for a letter that takes one. Counted, not timed: the cluster's
    word is handed to ``short_cluster`` as a string that adds up what is sliced of it,
    at most its length (the quadratic reading sliced 1.8 billion characters)."""
    import dsh_permissions._getopt as getopt
    import dsh_permissions._short_options as short_options
    import dsh_permissions._wrapper_grammar as wrapper_grammar

    cluster, original, calls = "-" + "v" * 60_000, getopt.short_cluster, []

    def counting(words, i, *rest):
        if words[i] == cluster:
            calls.append(i)
            words = [*words[:i], _Counted(words[i]), *words[i + 1 :]]
        return original(words, i, *rest)

    for module in (getopt, short_options, wrapper_grammar):
        monkeypatch.setattr(module, "short_cluster", counting)
    monkeypatch.setattr(_Counted, "sliced", 0)
    command_subjects(line.format(cluster), str(layout.ws), reads=True)
    assert calls, "the cluster was not read by short_cluster"
    assert _Counted.sliced <= len(cluster) * len(calls), _Counted.sliced
