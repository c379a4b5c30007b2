"""Bypasses closed in session 50 (behaviour 49): programs that print the lines of a
file they are given as a list.

``date -f FILE`` (``--file``) says ``invalid date 'LINE'`` for each line, ``file -f
FILE`` (``--files-from``) ``LINE: cannot open``, and ``du --files0-from=FILE`` ``cannot
access 'LINE'``; ``git config -f FILE`` (``--file``) prints the settings the file holds, and ``git
hash-object FILE`` prints a sum of it (as ``sha256sum``: a short secret's sum gives it
away; ``-w`` stores it in the repository, where ``git show`` prints it).
Under a ``read`` deny or ask rule they are asked about (denied in bypass mode), as
``find -files0-from`` is. And siblings of the listed readers were missing from the
list: ``vimdiff``, ``rvim``, ``gvim``, ``rview``, the pagers, comparisons and greps of
compressed files (``xzless``, ``zdiff``, ``zegrep``, ``zstdgrep``, ``zipgrep``, ...),
``gzcat``, ``lzcat``, ``unzstd``, ``bunzip2``, ``compress`` and ``pv``. Each row goes
through the real dispatcher (conftest ``judge``).
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


@pytest.mark.parametrize(
    "command",
    [
        "vimdiff .env x", "rvim .env", "gvim .env", "rview .env", "zdiff .env x",
        "zcmp .env x", "xzdiff .env x", "xzcmp .env x", "bzdiff .env x", "bzcmp .env x",
        "xzless .env", "xzmore .env", "bzless .env", "bzmore .env", "lzless .env",
        "lzmore .env", "zstdless .env", "lzcat .env", "gzcat .env", "pzstd -dc .env",
        "unzstd -c .env", "bunzip2 -c .env", "uncompress -c .env", "compress -c .env",
        "pv .env", "pv -q .env", "zegrep . .env", "zfgrep x .env", "bzegrep . .env",
        "xzegrep . .env", "xzfgrep x .env", "lzgrep . .env", "zstdgrep . .env",
        "zipgrep . .env", "sudo pv .env",
    ],
)  # fmt: skip
async def test_b50_siblings_of_the_listed_readers_are_readers(judge, command):
    # the vim, z/bz/xz/lz/zstd and compress families of listed readers, and pv
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    judged = await judge(ALLOW_ENV, "bash", {"command": command})
    assert judged.decision == "deny", (command, judged.event["reason"])


@pytest.mark.parametrize("command", ["zegrep .env src/a.py", "pv src/a.py", "vimdiff a b"])
async def test_b50_their_other_files_pass(judge, command):
    await allowed(judge, ALLOW_ENV, command)
