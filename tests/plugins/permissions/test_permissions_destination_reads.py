"""``mv``'s and ``cp``'s destination is written, not read (usability review of
session 32's stricter permissions).

Every operand of ``cp`` was taken for a file it reads, its destination too: with
``deny: read(**/*.pem)``, ``cp notes.txt keys/`` was denied because ``keys/`` holds a
``.pem`` file, though cp reads nothing there. The destination (the last operand, or
``-t DIR``) is now left out of the files read; the sources are still read (``cp -r
keys backup`` reads what is below ``keys``), a backup option keeps the destination
read (``cp -b x keys/a.pem`` keeps ``a.pem`` as ``a.pem~``), and rsync's destination
stays read: rsync reads it (``rsync -nci guess a.pem`` says whether they differ).
"""

from __future__ import annotations

import pytest
from permissions_util import allowed

pytestmark = pytest.mark.plugins("permissions")

RULES = {"allow": ["bash(*)"], "deny": ["read(**/*.pem)"]}


@pytest.fixture
def keys(layout):
    (layout.ws / "keys").mkdir()
    (layout.ws / "keys" / "a.pem").write_text("KEY\n")
    return layout


@pytest.mark.parametrize(
    "command",
    [
        "cp src/a.py keys/",
        "cp -a src/a.py keys/",
        "cp -t keys src/a.py",
        "cp -tkeys src/a.py",
        "cp --target-directory=keys src/a.py",
        "mv src/a.py keys/",
        "mv src/a.py keys/a.pem",
    ],
)
async def test_a_destination_holding_a_denied_file_is_not_read(judge, keys, command):
    await allowed(judge, RULES, command)


@pytest.mark.parametrize(
    "command",
    [
        "cp keys/a.pem x",  # a source
        "cp -r keys backup",
        "cp -t backup keys/a.pem",
        "mv keys/a.pem src/ keys/",  # each but the last is a source
        "cp -b src/a.py keys/a.pem",  # a.pem is kept as a.pem~
        "cp --backup=numbered src/a.py keys/a.pem",
        "mv -S .old src/a.py keys/a.pem",
        "mv --exchange src/a.py keys/a.pem",  # a.pem lands at src/a.py
        "rsync -ab src/a.py keys/a.pem",
        "rsync -a keys/ backup/",
        "rsync -a src/a.py keys/",  # rsync reads the destination (its delta's basis)
        "install src/a.py keys/a.pem",  # not told apart: -gt GROUP is no -t DIR
    ],
)
async def test_a_source_or_a_kept_destination_is_still_read(judge, keys, command):
    judged = await judge(RULES, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]


async def test_a_destination_the_shell_fills_in_is_still_asked_about(judge, keys):
    judged = await judge(RULES, "bash", {"command": "cp src/a.py $D"})
    assert judged.decision == "ask", judged.event["reason"]
