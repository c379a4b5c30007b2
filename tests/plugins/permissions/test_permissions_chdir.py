"""Behind a wrapper that runs its command in another directory (``env -C dir``,
``env --chdir=dir``, ``sudo -D dir``, parallel's ``--wd dir``), a relative path in the
command names a file of that directory: the text bash rules see must not resolve it
from the workspace root (behaviour 49: a rule must not be smuggled past by another
spelling of the same command). It is now unknown, as after a ``cd`` (_commands:
``_wrappers.moved_at``); calls go through the real dispatcher (conftest ``judge``)."""

from __future__ import annotations

import pytest

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
async def test_b49_a_relative_path_behind_a_wrapper_changing_directory_is_not_known(judge, command):
    """Leaked: ``./key`` was resolved from the workspace root (``key``), so the text
    was ``cat key``, which ``cat secrets/*`` does not match; it ran unasked."""
    judged = await judge(SECRETS, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    assert "changed the directory" in judged.event["asked"], judged.event["asked"]


async def test_the_directory_a_wrapper_is_given_is_still_resolved_from_the_root(judge):
    judged = await judge(SECRETS, "bash", {"command": "env -C . cat secrets/key"})
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.xfail(
    strict=True,
    reason="a word without '/' is not taken for a path (_commands._path_like): 'cat key' "
    "behind env -C secrets (or after cd secrets) is matched as 'cat key', which the deny "
    "rule 'cat secrets/*' does not match, though it reads secrets/key (not fixed: taking "
    "every word after a cd for a path would ask about most commands)",
)
@pytest.mark.parametrize("command", ["env -C secrets cat key", "cd secrets && cat key"])
async def test_a_bare_name_behind_a_change_of_directory_is_checked(judge, command):
    judged = await judge(SECRETS, "bash", {"command": command})
    assert judged.decision != "allow", judged.event["reason"]
