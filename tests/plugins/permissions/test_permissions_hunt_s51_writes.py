"""Bypasses closed in session 51: where ``cp --parents``, ``rsync -R`` and ``mv
--exchange`` write.

``cp --parents hooks/pre-commit .git`` writes ``.git/hooks/pre-commit`` (the source's
path below the destination), as does ``rsync -R`` (``--relative``; below a ``/./`` in
the source, only what follows it); ``mv --exchange a b`` swaps the two, writing the
source too. ``deny: bash(> .git/hooks/*)`` covers each. Each row goes through the real
dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import allowed, refused

pytestmark = pytest.mark.plugins("permissions")

DENY_HOOKS = {"deny": ["bash(> .git/hooks/*)"], "allow": ["bash"]}
BYPASS_HOOKS = {"deny": ["bash(> .git/hooks/*)"]}


@pytest.mark.parametrize(
    "command",
    [
        "cp --parents hooks/pre-commit .git", "cp --parents h/../hooks/x .git",
        "cp -a --par hooks/pre-commit .git/", "cp --parents -t .git hooks/pre-commit",
        "sudo cp --parents hooks/x .git", "rsync -R hooks/pre-commit .git/",
        "rsync --relative hooks/pre-commit .git", "rsync -aR src/./hooks/x .git",
        "rsync -R /tmp/./hooks/x .git", "mv --exchange .git/hooks/pre-commit y",
        "mv --exch y z .git/hooks/pre-commit",
        # cp keeps the whole path, /./ included (only rsync cuts the path there)
        "cp --parents hooks/./pre-commit .git", "cp --parents -t .git hooks/./x",
    ],
)  # fmt: skip
async def test_b51_the_path_a_source_keeps_is_written(judge, command):
    await refused(judge, DENY_HOOKS, command)
    await refused(judge, BYPASS_HOOKS, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "cp --parents src/a.py build", "rsync -R src/./a.py build", "mv --exchange a b",
        "rsync -aR hooks/x backup/",
    ],
)  # fmt: skip
async def test_b51_copies_elsewhere_pass(judge, command):
    await allowed(judge, DENY_HOOKS, command)


@pytest.mark.parametrize(
    "command",
    [
        "rsync -R --no-R d/.env .", "rsync -aR --no-relative d/.env .",
        "rsync --relative --no-R x/./d/.env ./",
    ],
)  # fmt: skip
async def test_b51_rsync_no_relative_keeps_the_last_part_only(judge, command):
    """``--no-R`` / ``--no-relative`` after ``-R`` turns it off again (rsync's own
    ``--no-OPTION``): the source's last part is a name it may write too."""
    await refused(judge, {"deny": ["bash(> .env)"], "allow": ["bash"]}, command)
    await refused(judge, {"deny": ["bash(> .env)"]}, command, mode="bypass")
