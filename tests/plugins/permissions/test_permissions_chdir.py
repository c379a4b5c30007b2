"""Behind a wrapper that runs its command in another directory (``env -C dir``,
``env --chdir=dir``, ``sudo -D dir``, parallel's ``--wd dir``), a relative path in the
command names a file of that directory: the text bash rules see must not resolve it
from the workspace root (behaviour 49: a rule must not be smuggled past by another
spelling of the same command). It is now unknown, as after a ``cd`` (_commands:
``_wrappers.moved_at``); calls go through the real dispatcher (conftest ``judge``)."""

from __future__ import annotations

import pytest
from permissions_util import allowed

pytestmark = pytest.mark.plugins("permissions")

SECRETS = {"allow": ["bash"], "deny": ["bash(cat secrets/*)"]}


@pytest.mark.parametrize(
    "command",
    [
        "env -C secrets cat ./key",
        "env --chdir=secrets cat ./key",
        "env -iC secrets cat ./key",
        "sudo -D secrets cat ./key",
        "parallel --wd secrets cat ./key ::: x",
    ],
)
async def test_b49_a_relative_path_behind_a_wrapper_changing_directory_is_read_there(
    judge, command
):
    """Leaked: ``./key`` was resolved from the workspace root (``key``), so the text
    was ``cat key``, which ``cat secrets/*`` does not match; it ran unasked. It was
    then unknown (asked about); it is now also read in the directory (``_moved``)."""
    judged = await judge(SECRETS, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]


async def test_b49_a_relative_path_behind_a_root_change_is_not_known(judge):
    judged = await judge(SECRETS, "bash", {"command": "sudo -R secrets cat ./key"})
    assert judged.decision == "ask", judged.event["reason"]
    assert "changed the directory" in judged.event["asked"], judged.event["asked"]


async def test_the_directory_a_wrapper_is_given_is_still_resolved_from_the_root(judge):
    judged = await judge(SECRETS, "bash", {"command": "env -C . cat secrets/key"})
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "env -C secrets cat key",
        "env -Csecrets cat key",
        "env --chdir secrets cat key",
        "sudo -D secrets cat key",
        "cd secrets && cat key",
        "cd -P secrets; cat key",
        "builtin cd secrets && cat key",
        "pushd secrets && cat key",
        "cd secrets && sudo cat key",
        "cd secrets && /bin/cat key",
        "cd src && cd ../secrets && cat key",
        "cd secrets/deeper && cd .. && cat key",
        "cd secrets && cd src && cd - && cat key",
        "pushd secrets && pushd /tmp && popd && cat key",
        # what runs in turn runs where the shell is
        "cd secrets && sh -c 'cat key'",
        "cd secrets && eval cat key",
        "cd secrets && env -S 'cat key'",
        "env -C secrets sh -c 'cat key'",
        "cd secrets && bash -c 'cd .. && cd secrets && cat key'",
    ],
)
async def test_b49_a_bare_name_behind_a_change_of_directory_is_read_there(judge, command):
    """Leaked: a word without '/' was not taken for a path (``_commands._path_like``),
    so ``cat key`` after ``cd secrets`` was matched as ``cat key`` only. The directory
    is now followed and the text read there (``cat secrets/key``) is one more spelling
    deny and ask rules see (``_moved``)."""
    judged = await judge(SECRETS, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]
    asking = {"allow": ["bash"], "ask": ["bash(cat secrets/*)"]}
    judged = await judge(asking, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "cd a && cd b && cat key",
        "cd a/b && cat key",
        "cd a && env -C b cat key",
        "cd x && cd ../a/b && cat key",
    ],
)
async def test_b49_nested_changes_of_directory_are_followed(judge, command):
    judged = await judge(
        {"allow": ["bash"], "deny": ["bash(cat a/b/*)"]}, "bash", {"command": command}
    )
    assert judged.decision == "deny", judged.event["reason"]


async def test_b49_a_change_to_a_directory_outside_the_workspace_is_followed(judge, layout):
    rules = {"allow": ["bash"], "deny": [f"bash(cat {layout.outside}/*)"]}
    for command in ("cd {outside} && cat secret.txt", "cd {ws}/.. && cd outside && cat secret.txt"):
        judged = await judge(rules, "bash", {"command": command})
        assert judged.decision == "deny", (command, judged.event["reason"])


@pytest.mark.parametrize(
    "command",
    [
        "cd src && ls",
        "cd build && make test",
        "cd src && cat key",
        "cd secrets && cat",
    ],
)
@pytest.mark.parametrize(
    "rules",
    [
        {"allow": ["bash"], "deny": ["bash(cat secrets/*)"]},
        {
            "allow": [
                "bash(cd *)",
                "bash(ls)",
                "bash(make *)",
                "bash(cat*)",
                "bash(popd)",
                "bash(pushd *)",
            ],
            "deny": ["bash(cat secrets/*)"],
        },
    ],
)
async def test_a_change_of_directory_no_rule_covers_asks_nothing_new(judge, rules, command):
    """Reading the words where the command runs only adds spellings deny and ask rules
    see: what no rule covers there is decided as before (no question for ordinary
    commands after a cd)."""
    await allowed(judge, rules, command)


@pytest.mark.parametrize("command", ['cd "$D" && cat key', "cd $(pwd)/secrets && cat key"])
async def test_a_change_to_a_directory_only_the_shell_knows_is_asked_about(judge, command):
    """Where ``cd "$D"`` goes is not followed: the cd itself cannot be checked against
    the rule's pattern, so the line is asked about (as before)."""
    judged = await judge(SECRETS, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
