"""Which git commands make a line's later reads unknown (usability review of session
32's stricter permissions).

A git command that writes the work tree may put a committed symbolic link there, so a
file read later in the line is asked about under a ``read`` deny rule. That test
matched any word of the command: ``git log --grep revert`` and ``git stash list`` were
asked, while ``git -c alias.co=checkout co main`` (an alias) was allowed. Now git's
subcommand is found after its global options, a short list of subcommands that keep
the work tree is let through, and any other (an alias, one not known) is not.
"""

from __future__ import annotations

import pytest
from permissions_util import allowed

pytestmark = pytest.mark.plugins("permissions")

RULES = {"allow": ["bash(*)"], "deny": ["read(.env)"]}


@pytest.mark.parametrize(
    "git",
    [
        "git stash list",
        "git stash show -p",
        "git worktree list",
        "git grep merge",
        "git log --grep revert",
        "git commit -m reset",
        "git checkout -b x",
        "git checkout -q -B x",
        "git switch -c x",
        "git -C . status",
        "git --no-pager diff HEAD~1",
        "git -c core.pager=cat show HEAD",
        "git rev-parse --abbrev-ref HEAD",
        "git branch -a",
        "git fetch origin",
        "git --version",
    ],
)
async def test_a_git_command_that_keeps_the_work_tree_leaves_later_reads_known(judge, git):
    await allowed(judge, RULES, f"{git} && cat src/a.py")


@pytest.mark.parametrize(
    "git",
    [
        "git -c alias.co=checkout co main",  # an alias: what it runs is not told here
        "git co main",
        "git checkout main",
        "git checkout -b x origin/main",  # a start point: the tree is rewritten
        "git checkout -f -b x",
        "git switch -c x main",
        "git -C . checkout main",
        "git --git-dir .git reset --hard",
        "git stash",
        "git stash pop",
        "git worktree add ../w",
        "git pull",
        "git $SUB",
        "git stash $WHAT",
    ],
)
async def test_a_git_command_that_may_write_the_work_tree_makes_later_reads_unknown(judge, git):
    judged = await judge(RULES, "bash", {"command": f"{git} && cat src/a.py"})
    assert judged.decision == "ask", judged.event["reason"]
    assert "git may write symbolic links" in judged.requests[0].reason
