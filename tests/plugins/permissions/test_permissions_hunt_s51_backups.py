"""Bypasses closed in session 51: a listed writer's backup is a file it writes.

``cp``, ``mv``, ``install`` and ``ln`` given ``-b`` / ``--backup`` / ``-S`` rename what
the destination held to its name plus a suffix (``-S``, ``--suffix``,
``SIMPLE_BACKUP_SUFFIX``, else ``~``), so ``cp -S v y .en`` writes ``.env``; so do
``rsync -b --suffix``, ``sed -iSUFFIX`` (``*`` in it is the file's name: ``sed -i'.e*'
... nv`` writes ``.env``) and ``patch`` (``-z``, ``-B`` and ``-Y`` prefixes, ``.orig``
on a mismatch). ``deny: bash(> .env)`` covers each; where the backup's name is only
known when the command runs (``SIMPLE_BACKUP_SUFFIX`` set, ``rsync --backup-dir``), a
deny or ask rule for a redirection asks about it (denied in bypass mode). Each row goes
through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import allowed, refused

pytestmark = pytest.mark.plugins("permissions")

DENY_ENV_WRITE = {"deny": ["bash(> .env)"], "allow": ["bash"]}
BYPASS_ENV_WRITE = {"deny": ["bash(> .env)"]}


@pytest.mark.parametrize(
    "command",
    [
        "cp -b --suffix=v y .en", "cp -bS v y .en", "cp -Sv y .en", "cp --suf v y .en",
        "mv -b --suffix=v y .en", "ln -sb --suffix=v y .en", "install -bSv y .en",
        "cp -S v -t . d/.en", "cp -S v d/.en .", "sudo cp -S v y .en",
        "SIMPLE_BACKUP_SUFFIX=v cp -b y .en", "export SIMPLE_BACKUP_SUFFIX=v; mv -b y .en",
        "env SIMPLE_BACKUP_SUFFIX=v cp --backup y .en",
        "rsync -b --suffix=v y .en", "rsync -a --backup --suffix v y .en",
        "rsync -b --backup-dir=d y x",
        "sed -iv s/a/b/ .en", "sed --in-place=v s/a/b/ .en", "sed -i'.e*' s/a/b/ nv",
        "sed -ni'*v' p .en", "sed -E -iv -e s/a/b/ .en",
        "patch -b -z v .en < p", "patch --suffix=v .en < p", "patch -B .e nv < p",
        "patch -b -Y .e nv < p", "patch --prefix=.e nv < p",
        "SIMPLE_BACKUP_SUFFIX=v patch .en < p",
    ],
)  # fmt: skip
async def test_b51_a_backup_named_by_a_suffix_is_a_write(judge, command):
    await refused(judge, DENY_ENV_WRITE, command)
    await refused(judge, BYPASS_ENV_WRITE, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "cp -b y x", "cp -S .orig y x", "mv --backup=numbered y x", "sed -i.bak s/a/b/ x",
        "sed -i s/a/b/ x", "rsync -b y x", "patch -b x < p", "patch x < p", "install -b y x",
        # patch given no file to patch: no backup of one named here, whatever the suffix
        "source .venv/bin/activate && patch -p1 < fix.diff",
        "SIMPLE_BACKUP_SUFFIX=.x patch -p1 < fix.diff",
        # rsync's --backup is not --backup-dir (of which it is a prefix)
        "rsync -a --backup y x", "rsync -av --backup --suffix=.old src/ dst/",
    ],
)  # fmt: skip
async def test_b51_backups_of_other_files_pass(judge, command):
    await allowed(judge, DENY_ENV_WRITE, command)
