"""GNU ``parallel`` and ``sem`` run a command that gets its words at run time, through
a shell (docs/permissions.md, "Commands that get more words when they run"; behaviour
49: a rule must not be smuggled past by another spelling of the same command). Each
row ran unasked under ``allow: [bash]`` before _parallel: parallel was no wrapper, so
the rules saw only the whole line ``parallel ...``. Calls go through the real
dispatcher (conftest ``judge``; the layout has ``.env``)."""

from __future__ import annotations

import pytest
from permissions_util import allowed

from dsh_permissions._commands import command_subjects
from dsh_permissions._parallel import command_words, script

pytestmark = pytest.mark.plugins("permissions")

PUSH_ASKED = {"allow": ["bash"], "ask": ["bash(git push*)"]}
PUSH_DENIED = {"allow": ["bash"], "deny": ["bash(git push*)"]}
RM_DENIED = {"allow": ["bash"], "deny": ["bash(rm *)"]}
READ_DENIED = {"allow": ["bash"], "deny": ["read(.env)"]}


@pytest.mark.parametrize(
    "command",
    [
        "parallel git ::: push",
        "parallel -j2 git {} ::: push",
        "parallel -j 2 -k git {} ::: push",
        "parallel --jobs=2 git {} ::: push",
        "parallel git {1} ::: push ::: origin",
        "parallel --pipe git push",
        "echo push | parallel git",
        "parallel 'git {}' ::: push",
        "parallel -- git ::: push",
        "sudo parallel git ::: push",
        # no command: the arguments are the commands
        "parallel ::: 'git push'",
        "echo 'git push' | parallel",
        # options not known here (-I changes the replacement string): anything
        "parallel -I XX git XX ::: push",
        "parallel --arg-sep ,, git ,, push",
        "parallel --frobnicate git ::: push",
        "sem git push",
    ],
)
async def test_b49_what_parallel_runs_is_asked_about(judge, command):
    judged = await judge(PUSH_ASKED, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    ["parallel -j2 git {} ::: push", "parallel ::: 'git push'", "parallel --frob git ::: push"],
)
async def test_b49_what_parallel_runs_is_denied_in_bypass_mode(judge, command):
    judged = await judge({"deny": ["bash(git push*)"]}, "bash", {"command": command}, "bypass")
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "parallel rm -rf / ::: x",
        "parallel 'echo {}; rm -rf /' ::: x",
        "parallel -j2 'cd /tmp && rm -rf x' ::: y",
        "sem 'true; rm -rf /'",
    ],
)
async def test_b49_parallel_runs_its_command_through_a_shell(judge, command):
    """Its words are joined and run by a shell: a deny rule covers each command of it."""
    judged = await judge(RM_DENIED, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: bash(rm *)"


@pytest.mark.parametrize(
    "command",
    [
        "parallel cat ::: .env",
        "parallel cat {} ::: .env",
        "parallel 'cat .env; true' ::: x",
        "parallel echo :::: .env",  # :::: FILE reads FILE
        "parallel -a .env echo",
    ],
)
async def test_b49_a_read_deny_rule_covers_what_parallel_reads(judge, command):
    judged = await judge(READ_DENIED, "bash", {"command": command})
    assert judged.decision != "allow", (command, judged.event["reason"])


@pytest.mark.parametrize(
    "command",
    [
        "parallel gzip ::: a.log",
        "parallel -j2 echo {} ::: a b",
        "sem make test",
        "ls | parallel wc",
    ],
)
async def test_parallel_runs_what_no_rule_could_cover(judge, command):
    """Not every parallel is asked about: only a pattern that could match once the
    arguments come (here none: 'git push*' cannot continue 'gzip ')."""
    await allowed(judge, PUSH_ASKED, command)


def test_the_command_parallel_runs():
    words = ["parallel", "-kj2", "--tag", "--jobs", "3", "git", "{}", ":::", "push", "::::", "list"]
    assert command_words(words, 0) == (5, 7)
    assert command_words(["parallel"], 0) == (1, 1)
    assert command_words(["parallel", "-j"], 0) is None  # the value is missing
    assert command_words(["parallel", "--pip", "x"], 0) is None  # --pipe or --pipepart
    assert command_words(["parallel", "--pipe", "x"], 0) == (2, 3)
    assert script("parallel", ["git"]) == "git {}"
    assert script("parallel", ["gzip", "{.}.gz", "{= s/x// =}"]) == "gzip {}.gz {}"
    assert script("sem", ["make", "test"]) == "make test"


def test_a_hole_is_cut_at_in_every_command_parallel_runs(tmp_path):
    subjects = command_subjects("parallel 'cd x; git {}' ::: push", str(tmp_path))
    assert "git " in {p for s in subjects for p in s.open}


@pytest.mark.parametrize(
    "command",
    ["find . -maxdepth 0 -exec cat {}/.env ';'", "parallel 'cat {}/.env' ::: ."],
)
async def test_b49_a_file_name_put_inside_a_word_is_not_known(judge, command):
    """find -exec and parallel put the name where ``{}`` stands inside a word too
    (``{}/.env`` is ``./.env``): such a word names a file only known at run time
    (_reads._file: it was the file ``{}/.env``, which no rule about ``.env`` covers)."""
    judged = await judge(READ_DENIED, "bash", {"command": command})
    assert judged.decision != "allow", (command, judged.event["reason"])
