"""What a question or a denial says is read by a person deciding: it names the file
that cannot be checked, not an option (usability review of session 32).

``grep -rn TODO dir`` after a line's ``ln -s`` was asked about because ``'-rn' may
lead elsewhere``, and ``tar xzf a.tgz -C dir`` because ``'xzf' may name another
file``: the words a command's options hold are taken for files too (generously, so
``grep -rf.env`` is checked), and the first such word was the one named. The reason
now names a word that is a file (``_reasons.unclear_read``); the decision is the same.

An ``edit`` a ``read`` rule keeps out says why, and what the rule leaves to other rules
(``_reasons.read_note``); those words are checked against what runs.
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
        # unzip unpacks here: a later read in the workspace may go through a link it
        # made (ln -s a b only puts one at b, which these reads do not go through)
        ("unzip x.zip; grep -rn TODO link-dir", "link-dir"),
        ("unzip x.zip; grep -r -n TODO src", "src"),
        ("unzip x.zip; cat -n src/a.py", "src/a.py"),
        ("unzip x.zip; cp -r src x", "src"),
        ("unzip x.zip; rsync -a src/ x", "src/"),
        ("unzip x.zip && tar -C dir -xzf a.tgz", "a.tgz"),
        ("unzip x.zip && tar xzf a.tgz", "a.tgz"),
        ("tar -C dir xzf a.tgz", "a.tgz"),
        # packing, tar reads from -C (unpacking, it opens a.tgz here: checked)
        ("tar czf out.tgz -C dir a.tgz", "a.tgz"),
        ("tar -czf out.tgz -C dir a.tgz", "a.tgz"),
        ("tar czf out.tgz -C link-dir .", "."),
        ("cd src; grep -rn TODO config", "config"),
        ("cd src; cat -n a.py", "a.py"),
        ("cd src && head -n 3 a.py", "a.py"),
    ],
)
async def test_an_unchecked_read_is_named_by_its_file_not_an_option(judge, files, command, named):
    judged = await judge(READ_DENY, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    reason = judged.requests[0].reason
    assert f"so {named!r} may" in reason, reason
    assert "'-" not in reason and "'xzf'" not in reason and "'czf'" not in reason, reason


EDIT = ("edit", {"path": ".env", "old": "TOKEN", "new": "KEY"})


@pytest.mark.parametrize("mode", ["default", "accept-edits", "bypass"])
async def test_an_edit_kept_out_by_a_read_rule_says_why_and_what_still_works(judge, mode):
    """``deny: read(.env)`` denies ``edit`` of ``.env`` (its answers would tell what the
    file holds) while ``echo X >> .env`` runs under ``allow: bash``: the reason only
    named the rule, and left the model guessing why a read rule stops an edit."""
    rules = {"allow": ["bash"], "deny": ["read(.env)"]}
    judged = await judge(rules, *EDIT, mode=mode)
    assert judged.decision == "deny", judged.event["reason"]
    reason = judged.event["reason"]
    assert "edit reads the file" in reason, reason
    assert "'write'" in reason and ">>" in reason, reason
    assert judged.result is not None and ">>" in judged.result.content


async def test_an_edit_asked_about_for_a_read_rule_says_why(judge):
    judged = await judge({"ask": ["read(.env)"]}, *EDIT)
    assert judged.decision == "ask"
    assert "edit reads the file" in judged.requests[0].reason


async def test_what_the_edit_reason_says_still_works_is_true(judge):
    """The reason's words checked: the read rule leaves ``write`` and an appending
    redirection to their own rules, which may ask; it still denies reading commands."""
    rules = {"allow": ["bash"], "deny": ["read(.env)"]}
    write = ("write", {"path": ".env", "content": "A=1\n"})
    assert (await judge(rules, *write, mode="accept-edits")).decision == "allow"
    assert (await judge({"deny": ["read(.env)"]}, *write)).decision == "ask"
    assert (await judge(rules, "bash", {"command": "echo X >> .env"})).decision == "allow"
    denied = {"deny": ["read(.env)"]}
    assert (await judge(denied, "bash", {"command": "echo X >> .env"})).decision == "ask"
    for command in ("sed -i s/a/b/ .env", "cat .env", "grep TOKEN .env"):
        assert (await judge(rules, "bash", {"command": command})).decision == "deny"
