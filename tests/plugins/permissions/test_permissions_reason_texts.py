"""What a question or a denial says is read by a person deciding: it names the file
that cannot be checked, not an option (usability review of session 32).

``grep -rn TODO dir`` after a line's ``ln -s`` was asked about because ``'-rn' may
lead elsewhere``, and ``tar xzf a.tgz -C dir`` because ``'xzf' may name another
file``: the words a command's options hold are taken for files too (generously, so
``grep -rf.env`` is checked), and the first such word was the one named. The reason
now names a word that is a file (``_reasons.unclear_read``); the decision is the same.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.plugins("permissions")

READ_DENY = {"allow": ["bash"], "deny": ["read(.env)"]}


@pytest.fixture
def files(layout):
    """``a.tgz``, ``dir/`` and ``link-dir`` (a link to ``src``) in the workspace."""
    (layout.ws / "a.tgz").write_bytes(b"\x1f\x8b")
    (layout.ws / "dir").mkdir()
    (layout.ws / "link-dir").symlink_to(layout.ws / "src")
    return layout


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("ln -s a b; grep -rn TODO link-dir", "link-dir"),
        ("ln -s a b; grep -r -n TODO src", "src"),
        ("ln -s a b; cat -n src/a.py", "src/a.py"),
        ("ln -s a b; cp -r src x", "src"),
        ("ln -s a b; rsync -a src/ x", "src/"),
        ("ln -s a b && tar -C dir -xzf a.tgz", "a.tgz"),
        ("ln -s a b && tar xzf a.tgz", "a.tgz"),
        ("tar -C dir xzf a.tgz", "a.tgz"),
        ("tar xzf a.tgz -C dir", "a.tgz"),
        ("tar -xzf a.tgz -C dir", "a.tgz"),
        ("tar czf out.tgz -C link-dir .", "."),
        ("cd src; grep -rn TODO config", "config"),
        ("cd src; cat -n a.py", "a.py"),
        ("cd src && head -n 3 a.py", "a.py"),
    ],
)
async def test_an_unchecked_read_is_named_by_its_file_not_an_option(
    judge, files, command, named
):
    judged = await judge(READ_DENY, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    reason = judged.requests[0].reason
    assert f"so {named!r} may" in reason, reason
    assert "'-" not in reason and "'xzf'" not in reason and "'czf'" not in reason, reason
