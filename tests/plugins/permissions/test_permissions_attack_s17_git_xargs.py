"""Attacks on git's global options for deny and ask rules, and on what xargs, find or GNU
parallel may make of a command (docs/permissions.md). Behaviour 49: a rule must not be
smuggled past by another spelling of the same command. Each row leaked (the call ran
unasked) before the fix named in its test's docstring. Calls go through the real
dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from permissions_util import allowed

from dsh_permissions._rules import TextPattern

pytestmark = pytest.mark.plugins("permissions")


@pytest.mark.parametrize(
    "command",
    ["env -S'git -C . push'", "env --split-string='git -C . push'", "env --split='git push'"],
)
async def test_b49_git_push_in_an_env_split_string_is_asked_about(judge, command):
    """Leaked: only a separate ``-S`` word was split for git's global options."""
    rules = {"allow": ["bash"], "ask": ["bash(git push*)"]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "ask"
    assert judged.event["rule"] == "ask: bash(git push*)", judged.event["reason"]


# -- commands that get more words at run time: xargs, find -exec {} ----------------------

PUSH_ASKED = {"allow": ["bash"], "ask": ["bash(git push*)"]}


PUSH_DENIED = {"allow": ["bash"], "deny": ["bash(git push*)"]}


@pytest.mark.parametrize(
    "command",
    [
        "echo push | xargs git",
        "echo push | xargs -I{} git {}",
        "echo push | xargs -I {} git {}",
        "echo push | xargs -i git {}",
        "echo push | xargs --replace git {}",
        "echo push | xargs -J % git %",  # BSD
        "echo sh | xargs -I{} git pu{}",
        "echo push | xargs -0 -r git",
        "echo push | xargs -n 1 -P 2 git",
        "echo push | xargs --max-args=1 git",
        "echo push | xargs -- git",
        "echo push | xargs /usr/bin/git",
        "echo push | xargs git -C .",
        # behind other wrappers, and wrappers behind xargs
        "echo push | sudo xargs git",
        "echo push | timeout 5 xargs git",
        "echo push | A=1 nice -n 5 xargs -r git",
        "echo push | env xargs git",
        "echo git push | xargs sudo",
        "echo git push | xargs env",
        # a shell behind xargs runs its input (or the replaced string) as code
        "echo push | xargs -I{} sh -c 'git {}'",
        "echo 'git push' | xargs sh -c",
        # an option not known here: where the command starts is not known
        "echo push | xargs --frobnicate git",
        # find -exec: {} is each file name found (find push -name x runs git push)
        "find push -maxdepth 0 -exec git {} ';'",
        "find push -maxdepth 0 -exec git {} +",
        "find push -maxdepth 0 -exec sh -c 'git {}' ';'",
    ],
)
@pytest.mark.parametrize("rules", [PUSH_ASKED, PUSH_DENIED], ids=["ask-rule", "deny-rule"])
async def test_b49_what_xargs_or_find_may_make_of_a_command_is_asked_about(judge, rules, command):
    """Leaked: the part behind xargs was ``git``, which ``git push*`` does not match,
    yet ``echo push | xargs git`` runs ``git push``. Now a deny or ask pattern that
    could match the command's text followed by more words (at the replace string,
    at ``{}`` of find -exec) asks about it (_xargs, ``Rule.could_continue``), even
    under ``allow: [bash]``; it is no match, so a deny rule asks rather than denies."""
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    assert "only complete when it runs" in judged.event["asked"]


@pytest.mark.parametrize(
    "command",
    ["echo push | xargs git", "echo push | xargs -I{} git {}", "find push -exec git {} +"],
)
async def test_b49_what_xargs_may_make_of_a_command_is_denied_in_bypass_mode(judge, command):
    """Leaked in bypass mode (which asks nobody): such a command now is denied."""
    judged = await judge({"deny": ["bash(git push*)"]}, "bash", {"command": command}, mode="bypass")
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: bash(git push*)"


@pytest.mark.parametrize(
    ("rules", "command"),
    [
        ({"allow": ["bash"], "deny": ["bash(rm -rf*)"]}, "echo -rf / | xargs rm"),
        ({"allow": ["bash"], "deny": ["bash(rm -rf*)"]}, "echo rf | xargs -I% rm -% /"),
        (
            {"allow": ["bash(ls*)", "bash(xargs *)", "bash(git *)"], "ask": ["bash(git push*)"]},
            "ls | xargs git",
        ),
        ({"allow": ["bash"], "ask": ["bash(chmod 777 *)"]}, "ls | xargs -I% chmod % x"),
    ],
)
async def test_b49_a_deny_pattern_xargs_input_could_complete_asks(judge, rules, command):
    """Leaked: ``rm`` or ``rm -%`` behind xargs missed ``rm -rf*``; ``xargs git`` was
    allowed by ``bash(xargs *)`` past ``git push*``; ``chmod %`` missed
    ``chmod 777 *`` though the input may be ``777``."""
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    ("rules", "command"),
    [
        (PUSH_ASKED, "ls | xargs ls"),
        (PUSH_ASKED, "ls | xargs -I{} git add {}"),
        (PUSH_ASKED, "ls | xargs git add"),
        (PUSH_ASKED, "ls | sudo xargs -0 wc -l"),
        (PUSH_ASKED, "find . -name '*.py' -exec git add {} +"),
        ({"allow": ["bash(xargs ls*)", "bash(ls*)"], "ask": ["bash(git push*)"]}, "xargs ls"),
        ({"allow": ["bash(xargs ls*)", "bash(ls*)"], "ask": ["bash(git push*)"]}, "xargs ls -l"),
        ({"allow": ["bash"], "deny": ["bash(rm -rf*)"]}, "ls | xargs rm -f"),
    ],
)
async def test_xargs_commands_no_pattern_could_become_are_still_allowed(judge, rules, command):
    """What xargs runs is only asked about when a deny or ask pattern could match what
    it becomes: allow rules still allow ordinary xargs commands."""
    await allowed(judge, rules, command)


async def test_xargs_under_a_deny_rule_it_matches_is_still_denied(judge):
    """``xargs -n1 rm`` already matched ``rm *`` (a final `` *`` matches nothing): it
    stays denied, not merely asked about."""
    rules = {"allow": ["bash"], "deny": ["bash(rm *)"]}
    judged = await judge(rules, "bash", {"command": "ls | xargs -n1 rm"})
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: bash(rm *)"


async def test_git_push_through_parallel_is_asked_about(judge):
    """Leaked: GNU parallel was not a wrapper, so the ask rule saw only 'parallel git
    ::: push' (now _parallel: its command gets its arguments at run time, as xargs's)."""
    judged = await judge(PUSH_ASKED, "bash", {"command": "parallel git ::: push"})
    assert judged.decision == "ask"


_GLOB = st.text(alphabet="ab *", max_size=5)


@settings(max_examples=300, deadline=None)
@given(pattern=_GLOB.filter(lambda p: p.strip()), prefix=st.text(alphabet="ab *", max_size=6))
def test_could_continue_agrees_with_trying_every_short_continuation(pattern, prefix):
    """``TextPattern.could_continue(prefix)`` is whether some text beginning with the
    prefix matches. Were there one, a continuation made of the pattern's own characters,
    no longer than the pattern, would do: every such one over the alphabet is tried."""
    compiled = TextPattern.compile(pattern)
    letters = "ab *"
    tails = [""]
    for _ in range(len(pattern)):
        tails += [t + c for t in tails if len(t) == len(tails[-1]) for c in letters]
    expected = any(compiled.matches(prefix + tail) for tail in tails)
    assert compiled.could_continue(prefix) == expected
