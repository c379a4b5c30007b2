"""A lone ``--`` (end of options) does not take a command out of a deny or ask rule
(behaviour 49: a rule must not be smuggled past by another spelling of the same
command). ``cat -- secrets/key`` reads what ``cat secrets/key`` reads, so deny and ask
rules also see the command's text with each lone ``--`` word taken out; allow rules
do not (that spelling can only make a call stricter)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.plugins("permissions")

DENY = {"allow": ["bash"], "deny": ["bash(cat secrets/*)"]}
ASK = {"allow": ["bash"], "ask": ["bash(cat secrets/*)"]}


@pytest.mark.parametrize(
    ("rules", "command", "expected"),
    [
        (DENY, "cat -- secrets/key", "deny"),
        (DENY, "cd secrets && cat -- key", "deny"),
        (DENY, "sudo cat -- secrets/key", "deny"),
        (DENY, "sh -c 'cat -- secrets/key'", "deny"),
        (DENY, "env -C secrets cat -- key", "deny"),
        (ASK, "cat -- secrets/key", "ask"),
        (ASK, "cd secrets; cat -- ./key", "ask"),
    ],
)
async def test_b49_an_end_of_options_word_does_not_hide_a_command(
    judge, layout, rules, command, expected
):
    judged = await judge(rules, "bash", {"command": layout.fill(command)})
    assert judged.decision == expected, judged.event["reason"]


@pytest.mark.parametrize(
    ("rules", "command", "expected"),
    [
        ({"allow": ["bash(cat *)"]}, "cat -- src/a.py", "allow"),
        # an allow rule written without the -- does not allow the command with it
        ({"allow": ["bash(cat src/*)"]}, "cat -- src/a.py", "ask"),
        (DENY, "cat -- src/a.py", "allow"),
    ],
)
async def test_b49_an_end_of_options_word_stays_for_allow_rules(
    judge, layout, rules, command, expected
):
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == expected, judged.event["reason"]
