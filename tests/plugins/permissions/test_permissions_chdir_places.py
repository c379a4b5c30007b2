"""Every directory a line may be in after a change of directory (behaviour 49: a rule
must not be smuggled past by another spelling of the same command; ``_moved.Places``).

A line was followed as one path, as if every ``cd`` ran and succeeded, so a ``cd``
that does not change the shell's directory (in a subshell, in the background, behind
``false &&``, an external ``env cd``, a failing one) hid the directory before it; and
a script run after a ``cd`` (``sh -c``, ``eval``, ``find -exec``) lost the reading
from the workspace root that denied it before the directory was followed at all. The
set of directories the shell may be in is now kept, each later word read in each, and
the root is always one of them; calls go through the real dispatcher (``judge``)."""

from __future__ import annotations

import itertools
import os

import pytest
from permissions_util import allowed

pytestmark = pytest.mark.plugins("permissions")

SECRETS = {"allow": ["bash"], "deny": ["bash(cat secrets/*)"]}
READ_SECRETS = {"allow": ["bash"], "deny": ["read(secrets/**)"]}


@pytest.mark.parametrize(
    ("rules", "command"),
    [
        (SECRETS, "cd . && sh -c 'cat ./secrets/key'"),
        (SECRETS, "cd {ws} && sh -c 'cat src/../secrets/key'"),
        (SECRETS, "cd . && eval cat ./secrets/key"),
        (SECRETS, "env -C . sh -c 'cat ./secrets/key'"),
        (SECRETS, "env -C . find . -exec cat ./secrets/key \\;"),
        (READ_SECRETS, "cd {ws} && sh -c 'cat secrets/key'"),
    ],
)
async def test_b49_a_script_after_a_cd_is_still_read_from_the_root(judge, layout, rules, command):
    """Regressed (deny became ask): inside a script run after a cd (or behind env -C)
    every relative path was unknown, and the reading from the workspace root, which
    the rule denied, was gone (``_commands._script``/``_inner``). Every directory the
    shell may be in, the root too, now reads the script's paths."""
    judged = await judge(rules, "bash", {"command": layout.fill(command)})
    assert judged.decision == "deny", judged.event["reason"]


_PREFIXES = (
    "",
    "cd . && ",
    "cd {ws} && ",
    "cd src && ",
    "cd src; cd .. && ",
    "pushd . && ",
    "env -C . ",
    "sudo -D . ",
)
_RUNNERS = (
    "{}",
    "sh -c '{}'",
    'bash -c "{}"',
    "eval {}",
    "watch {}",
    "env -S '{}'",
    "find . -exec {} \\;",
    "timeout 5 {}",
)
_READS = ("cat secrets/key", "cat ./secrets/key", "cat src/../secrets/key")


@pytest.mark.parametrize("rules", [SECRETS, READ_SECRETS], ids=["bash-rule", "read-rule"])
async def test_b49_a_sweep_of_moved_commands_is_never_looser_than_the_root_reading(
    judge, layout, rules
):
    """What a command denied as read from the workspace root stays denied when a cd
    or a wrapper's directory comes before it, however it is run (the reviewer's sweep
    found deny turned to ask for ``./`` and ``a/../`` paths in scripts)."""
    for inner in _READS:  # the root reading itself is denied
        judged = await judge(rules, "bash", {"command": inner})
        assert judged.decision == "deny", (inner, judged.event["reason"])
    looser = []
    for prefix, runner, inner in itertools.product(_PREFIXES, _RUNNERS, _READS):
        command = layout.fill(prefix) + runner.format(inner)
        judged = await judge(rules, "bash", {"command": command})
        if judged.decision != "deny":
            looser.append((command, judged.decision))
    assert not looser, looser


@pytest.mark.parametrize(
    "command",
    [
        "cd secrets; (cd /); cat key",
        "cd secrets; cd / | true; cat key",
        "cd secrets; cd / & cat key",
        "cd secrets; false && cd /; cat key",
        "cd secrets; cd /nonexistent; cat key",
        "cd secrets; env cd /; cat key",
        "cd secrets; sudo cd /; cat key",
        "cd secrets; timeout 5 cd /; cat key",
        "cd secrets; echo / | xargs cd; cat key",
        "cd secrets; parallel cd ::: /; cat key",
        "cd secrets; command -v cd; cat key",
        "cd secrets; popd; cat key",
        "cd secrets; pushd; cat key",
        "cd secrets; pushd -n /; cat key",
        "cd secrets; cd a b; cat key",
        "cd secrets; cd ''; cat key",
        "cd secrets && cd - && cat key",  # cd - may go back to secrets
        "pushd secrets && popd && cat key",
        "pushd -- secrets; cat key",
        "cd -eP secrets && cat key",
        "cd -LL secrets && cat key",
        "eval cd secrets; cat key",
        "eval 'cd secrets'; cat key",
        "env --ch=secrets cat key",
    ],
)
async def test_b49_a_cd_that_may_not_run_keeps_the_directory_before_it(judge, command):
    """Leaked: ``_moved.Here.after`` followed one path, taking every cd to run and
    succeed, so a cd that does not move the shell (or fails, or is not a cd it knew)
    replaced ``secrets`` and ``cat key`` was read elsewhere only; an option cluster
    it did not know (``-eP``), ``pushd --``, ``eval cd`` and ``env --ch=`` were not
    followed at all. The set of directories is now kept (``_moved.Places``)."""
    judged = await judge(SECRETS, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]
    asking = {"allow": ["bash"], "ask": ["bash(cat secrets/*)"]}
    judged = await judge(asking, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    judged = await judge(READ_SECRETS, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]


async def test_b49_cd_reads_dot_dot_as_written_as_the_shell_does(judge, layout):
    """Leaked: ``cd secrets/door/..`` with ``secrets/door`` a symlink elsewhere goes
    to ``secrets`` in bash (a logical cd), but was resolved through the link only."""
    (layout.ws / "secrets").mkdir()
    (layout.ws / "secrets" / "door").symlink_to(layout.outside)
    for command in ("cd secrets/door/.. && cat key", "cd secrets/door && cd .. && cat key"):
        judged = await judge(SECRETS, "bash", {"command": command})
        assert judged.decision == "deny", (command, judged.event["reason"])


async def test_b49_a_line_changing_directory_too_many_ways_is_asked_about(judge):
    """The directories held are bounded (``_moved.MAX_PLACES``): beyond that the line's
    later commands are not known and are asked about, never allowed by a pattern."""
    command = "cd a; cd b; cd c; cd d; cd e; cat key"
    judged = await judge(SECRETS, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    assert "more ways than are followed" in judged.event["asked"], judged.event["asked"]
    await allowed(judge, {"allow": ["bash"]}, command)


@pytest.mark.parametrize(
    "command",
    ["cd src && ls", "cd build && make test", "cd src && cargo build"],
)
@pytest.mark.parametrize(
    "rules",
    [
        {"allow": ["bash"]},
        {"allow": ["bash"], "deny": ["bash(cat secrets/*)", "read(secrets/**)"]},
        {
            "allow": ["bash(cd *)", "bash(ls)", "bash(make *)", "bash(cargo *)"],
            "deny": ["bash(cat secrets/*)"],
        },
    ],
)
async def test_ordinary_commands_after_a_cd_ask_nothing_new(judge, rules, command):
    await allowed(judge, rules, command)


@pytest.mark.timeout(120)
def test_a_long_line_read_in_many_directories_is_decided_quickly(layout, monkeypatch):
    """Each directory held reads every later word again (a look at the file system
    each): 16 directories and 200 commands of 60 words took 6 s, ten times the line
    alone. Past ``_moved.MAX_LOOKS`` words so read, the commands are unknown instead
    (asked about under a rule with a pattern), never read less strictly. The looks are
    counted (``os.path.realpath`` calls), not timed: a busy machine takes any time."""
    from dsh_permissions._commands import command_subjects
    from dsh_permissions._moved import MAX_LOOKS

    looks = 0
    realpath = os.path.realpath

    def counted(path, *args, **kwargs):
        nonlocal looks
        looks += 1
        return realpath(path, *args, **kwargs)

    body = " ".join(f"v{i}" for i in range(60))
    line = "cd a; cd b; cd c; cd d; " + "; ".join([f"sudo nice {body} cat key"] * 200)
    monkeypatch.setattr(os.path, "realpath", counted)
    subjects = command_subjects(line, str(layout.ws), reads=True)
    monkeypatch.undo()
    assert 0 < looks <= MAX_LOOKS
    assert subjects[-1].unknown is not None and "words to read" in subjects[-1].unknown
