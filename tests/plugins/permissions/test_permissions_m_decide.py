"""The decision, pinned where a hand mutation review of ``_decide`` and ``_rules`` found
no test: what a remembered verdict may depend on, what an "always" grant covers, and
how command patterns with several wildcards bind."""

from __future__ import annotations

import pytest

from dsh_permissions._commands import command_subjects
from dsh_permissions._decide import Policy, decide
from dsh_permissions._rules import TextPattern
from dsh_permissions._settings import PermissionSettings
from dsh_permissions._subjects import ToolFacts, path_subject

pytestmark = pytest.mark.plugins("permissions")

BASH = ToolFacts("bash", True, True, (), ("command",))
#: a tool naming a path and running a command (a build tool with a working directory)
RUN = ToolFacts("run", True, True, ("cwd",), ("command",))


def _policy(root: str, **settings) -> Policy:
    return Policy(PermissionSettings(**settings), root)


def test_an_allow_partly_made_by_a_grant_is_not_remembered_for_other_grants(layout):
    """A verdict is cached only when no grant made any of its parts: a call allowed
    because one part was granted and another part was allowed by a rule must be asked
    about again once the grant is gone (another session of the same agent)."""
    root = str(layout.ws)
    policy = _policy(root, allow=["bash(git status*)"])
    subjects = command_subjects("make test && git status", root)
    assert [s.value for s in subjects] == ["make test", "git status"]
    granted = {("bash", "command", "make test")}
    assert decide(policy, "default", BASH, subjects, granted).decision == "allow"
    again = command_subjects("make test && git status", root)
    assert decide(policy, "default", BASH, again, set()).decision == "ask"


def test_a_grant_covers_only_the_kind_of_subject_it_was_given_for(layout):
    """An "always" answer remembers (tool, kind, value): allowing ``run`` in the
    directory ``/x`` does not allow ``run`` to run the program ``/x``, though both
    values are the same text."""
    root = str(layout.ws)
    program = str(layout.outside / "secret.txt")
    (command,) = command_subjects(program, root)
    assert command.kind == "command"
    assert command.value == program
    grants = {("run", "path", program)}
    assert decide(_policy(root), "default", RUN, [command], grants).decision == "ask"
    # and the path itself is what the grant allows
    path = path_subject(program, root)
    assert decide(_policy(root), "default", RUN, [path], grants).decision == "allow"


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        # a literal piece that occurs again later must bind to its first occurrence
        ("*rm*-rf*", "rm -rf /tmp/rmdir"),
        ("*curl*|*", "curl x | sh curl"),
        ("git * push * --force*", "git -C push push origin --force"),
    ],
)
def test_a_deny_pattern_with_several_wildcards_matches_wherever_its_pieces_fit(
    layout, pattern, text
):
    """B49: a deny pattern whose literal pieces repeat in the command still covers it
    (each piece binds to its earliest occurrence, so a later repeat cannot hide the
    match)."""
    assert TextPattern.compile(pattern).matches(text)
    root = str(layout.ws)
    policy = _policy(root, allow=["bash(*)"], deny=[f"bash({pattern})"])
    verdict = decide(policy, "default", BASH, command_subjects("rm -rf /tmp/rmdir", root), set())
    assert verdict.decision == ("deny" if pattern == "*rm*-rf*" else "allow")


def test_the_rule_logged_for_an_allowed_path_is_the_first_one_that_allowed_it(layout):
    """When a value has two readings (``~/x``: a directory named ``~`` in the
    workspace, or the home directory) allowed by two different rules, the decision
    is logged with the rule that allowed the first reading (B47: the decision names
    the rule that decided)."""
    root = str(layout.ws)
    policy = _policy(root, allow=["write(~/**)", "write(**)"])
    write = ToolFacts("write", True, True, ("path",))
    subject = path_subject("~/notes.txt", root)
    assert len(subject.allow) == 2
    verdict = decide(policy, "default", write, [subject], set())
    assert verdict.decision == "allow"
    assert subject.allow[0] == str(layout.ws / "~" / "notes.txt")
    assert verdict.rule == "allow: write(**)"
    assert verdict.parts[0].rule is not None
    assert str(verdict.parts[0].rule) == verdict.rule
