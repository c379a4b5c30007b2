"""Two holes a security-minded reading of docs/permissions.md found (behaviour 49).

- git's global options: ``git -C . push`` runs ``git push``, but its text does not
  start with it, so ``ask: bash(git push*)`` let it through under ``bash(git *)``.
  Fixed in _git / _commands: deny and ask rules also see git without its global
  options (allow rules do not).
- accept-edits auto-accepted edits of files that run code later outside any rule:
  ``.git/hooks/*`` and ``.git/config`` (git runs them on a person's next git command),
  ``.envrc`` (direnv), pre-commit's and husky's hooks. Fixed in _guarded: they are
  asked about, as dsh.yml and the session store are; so is an edit given a directory.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.plugins("permissions")

GIT = {"allow": ["bash(git *)"], "ask": ["bash(git push*)"]}
OPEN = {"allow": ["bash(*)"], "ask": ["bash(git push*)"], "deny": ["bash(git clean *)"]}


@pytest.mark.parametrize(
    ("rules", "command", "expected"),
    [
        (GIT, "git -C . push", "ask"),
        (GIT, "git -C src push origin main", "ask"),
        (GIT, "git -c core.pager=cat push", "ask"),
        (GIT, "git --no-pager push", "ask"),
        (GIT, "git -P push", "ask"),
        (GIT, "git --git-dir=.git --work-tree=. push", "ask"),
        (GIT, "git --git-dir .git --work-tree . push", "ask"),
        (GIT, "git --namespace x --bare push", "ask"),
        (OPEN, "timeout 5 git -C . push", "ask"),
        (OPEN, "nice -n 5 git --no-pager push", "ask"),
        (OPEN, "command git -C . push", "ask"),
        (OPEN, "env GIT_DIR=.git git -C . push", "ask"),
        (OPEN, "sudo -u me git -C . push", "ask"),
        (OPEN, "/usr/bin/git -C . push", "ask"),
        (OPEN, "env -S 'git -C . push'", "ask"),  # env splits the string
        (OPEN, "git -C . clean -fdx", "deny"),
        (OPEN, "git status && git -c x=y clean -f", "deny"),
        # what is not a push stays allowed
        (GIT, "git -C . status", "allow"),
        (GIT, "git log -- push", "allow"),
        (GIT, "git -C . log --grep push", "allow"),
        (OPEN, "git -C . pull", "allow"),
    ],
)
async def test_b49_git_global_options_do_not_hide_the_subcommand(judge, rules, command, expected):
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == expected, judged.event["reason"]


async def test_b49_busybox_is_a_wrapper(judge):
    """``busybox rm -rf /`` runs ``rm``: it was not seen through, so ``deny: bash(rm *)``
    let it pass under ``allow: bash(*)``."""
    judged = await judge(OPEN | {"deny": ["bash(rm *)"]}, "bash", {"command": "busybox rm -rf x"})
    assert judged.decision == "deny", judged.event["reason"]
    judged = await judge({"allow": ["bash"]}, "bash", {"command": "busybox sh"})
    assert judged.decision == "ask"  # a shell reading its input, as for sh alone


async def test_git_global_options_do_not_widen_an_allow_rule(judge):
    """``-c core.pager=...`` changes what an allowed command runs: allow rules see the
    command as written."""
    rules = {"allow": ["bash(git status*)"]}
    judged = await judge(rules, "bash", {"command": "git -c core.pager='touch x' status"})
    assert judged.decision == "ask"


@pytest.mark.parametrize(
    ("tool", "path", "kept"),
    [
        ("write", ".git/hooks/pre-commit", "git's own files"),
        ("edit", ".git/config", "git's own files"),
        ("write", "src/../.git/config", "git's own files"),
        ("write", "hooks/post-checkout", "git's own files"),  # a symlink to .git/hooks
        ("write", "vendor/lib/.git", "git's own files"),  # a submodule's .git file
        ("write", ".envrc", "direnv"),
        ("write", "src/.envrc", "direnv"),
        ("write", ".pre-commit-config.yaml", "pre-commit"),
        ("write", ".husky/pre-commit", "husky"),
        # review of session 43, finding 4: hg runs the hooks its config names
        ("edit", ".hg/hgrc", "Mercurial's own files"),
        ("write", "vendor/.hg/hgrc", "Mercurial's own files"),
        ("write", ".HG/hgrc", "Mercurial's own files"),
        ("write", ".hg/sharedpath", "Mercurial's own files"),  # whose hgrc is read
        ("write", "src", "a directory"),  # the tool may create src/.envrc
    ],
)
async def test_accept_edits_asks_about_files_that_run_code_later(judge, layout, tool, path, kept):
    (layout.ws / ".git" / "hooks").mkdir()
    (layout.ws / "hooks").symlink_to(layout.ws / ".git" / "hooks")
    judged = await judge({}, tool, {"path": path}, mode="accept-edits")
    assert judged.decision == "ask", judged.event["reason"]
    assert "accept-edits does not cover" in judged.event["asked"]
    assert kept in judged.event["asked"]


@pytest.mark.parametrize(
    "path", ["Makefile", "src/a.py", ".gitignore", "notes.git", ".github/workflows/ci.yml"]
)
async def test_accept_edits_still_accepts_other_files(judge, path):
    judged = await judge({}, "write", {"path": path}, mode="accept-edits")
    assert judged.decision == "allow", judged.event["reason"]


async def test_an_allow_rule_still_covers_git_files_in_accept_edits(judge):
    """As for dsh.yml and the store: accept-edits keeps them out, a rule may let them in."""
    judged = await judge({"allow": ["write(.git/**)"]}, "write", {"path": ".git/config"})
    assert judged.decision == "allow"
