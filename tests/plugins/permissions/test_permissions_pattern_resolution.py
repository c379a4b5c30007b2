"""A pattern's literal directory is resolved once per checked call (permission
re-review of session 32, F2).

Each rule's directory was resolved (``os.path.realpath``) at every match: once per
rule, per reading and per symlink below a directory the command names, so
``grep -r foo t`` over 2000 symlinks with 40 deny rules took seconds. ``decide`` now
resolves each directory once (``_looked.one_resolution``); a symlink made between
calls still changes what a rule names (test_permissions_pattern_links).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from dsh_permissions._commands import command_subjects
from dsh_permissions._decide import Policy, decide
from dsh_permissions._settings import PermissionSettings
from dsh_permissions._subjects import ToolFacts

pytestmark = pytest.mark.plugins("permissions")

BASH = ToolFacts("bash", True, True, (), ("command",))


def test_each_rule_directory_is_resolved_once_per_call(layout, monkeypatch):
    root = str(layout.ws)
    tree = layout.ws / "t"
    tree.mkdir()
    for i in range(30):
        os.symlink(f"/nowhere/x{i}", tree / f"l{i}")
    deny = [f"read(secret{i}/**)" for i in range(10)]
    policy = Policy(PermissionSettings(allow=["bash(*)"], deny=deny), root)
    subjects = command_subjects("grep -r foo t", root, reads=True)
    literals = {os.path.join(root, f"secret{i}") for i in range(10)}
    calls: Counter[str] = Counter()
    realpath = os.path.realpath

    def counted(path, *args, **kwargs):
        if path in literals:
            calls[path] += 1
        return realpath(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", counted)
    assert decide(policy, "default", BASH, subjects, set()).decision == "allow"
    assert calls == Counter(dict.fromkeys(literals, 1))


def test_a_symlink_made_between_two_calls_changes_what_a_rule_names(layout):
    """Resolved once per call, not once: ``secret`` made a symlink to ``src`` after a
    first call makes ``deny: read(secret/**)`` cover ``src/a.py`` at the next."""
    root = str(layout.ws)

    def verdict() -> str:
        # a policy each time: a policy remembers its verdicts on the same subjects
        policy = Policy(PermissionSettings(allow=["bash(*)"], deny=["read(secret/**)"]), root)
        subjects = command_subjects("cat src/a.py", root, reads=True)
        return decide(policy, "default", BASH, subjects, set()).decision

    assert verdict() == "allow"
    os.symlink("src", layout.ws / "secret")
    assert verdict() == "deny"
