"""Bypasses closed in session 50 (behaviour 49): programs that print the lines of a
file they are given as a list.

``date -f FILE`` (``--file``) says ``invalid date 'LINE'`` for each line, ``file -f
FILE`` (``--files-from``) ``LINE: cannot open``, and ``du --files0-from=FILE`` ``cannot
access 'LINE'``; ``git config -f FILE`` (``--file``) prints the settings the file holds, and ``git
hash-object FILE`` prints a sum of it (as ``sha256sum``: a short secret's sum gives it
away; ``-w`` stores it in the repository, where ``git show`` prints it).
Under a ``read`` deny or ask rule they are asked about (denied in bypass mode), as
``find -files0-from`` is. Each row goes through the real dispatcher (conftest
``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_ENV, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

ALLOW_ENV = {"allow": ["bash"], "deny": ["read(.env)"]}


@pytest.mark.parametrize(
    "command",
    [
        "date -f .env", "date --file=.env", "date -uf .env", "date --fi .env",
        "file -f .env", "file --files-from .env", "file -bf.env",
        "du --files0-from=.env", "du --files0-from .env", "sudo date -f .env",
        "git config -f .env --list", "git config --file=.env -l",
        "git config --file .env --get-regexp .", "git -C . config -f .env -l",
        "git config list -f .env", "git config --blob=HEAD:x -f .env -l",
        "git hash-object .env", "git hash-object -w .env", "git hash-object --stdin < .env",
    ],
)  # fmt: skip
async def test_b50_a_list_read_line_by_line_is_covered(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    await refused(judge, ALLOW_ENV, command)


@pytest.mark.parametrize(
    "command",
    [
        "date -u", "date +%s", "date -d tomorrow", "file src/a.py", "du -sh src",
        "git config --list", "git config user.name", "git config -l --show-origin",
    ],
)  # fmt: skip
async def test_b50_plain_uses_pass(judge, command):
    await allowed(judge, ALLOW_ENV, command)
    await allowed(judge, BYPASS_ENV, command, mode="bypass")
