"""The words of a decision: how a call, its subjects and the rules covering them are
told in reasons, prompts and the model's denials (see ``_decide``)."""

from __future__ import annotations

import os
from typing import Final

from dsh_permissions._rules import Rule
from dsh_permissions._subjects import Subject, ToolFacts

__all__ = [
    "assumed",
    "below",
    "could_cover",
    "describe",
    "open_why",
    "plan_reason",
    "read_note",
    "reads_why",
    "unclear_read",
]

#: characters of a subject's value shown in a reason
SHOWN: Final = 200
#: characters where the literal head of a command with an unknown value ends
_DYNAMIC: Final = ("$", "`", "*", "?", "[", "{")


def plan_reason(facts: ToolFacts, allowed: bool = False) -> str:
    """``allowed``: the tool has allow rules, which plan mode sets aside (said, or an
    allowed ``git status`` denied reads as a broken rule)."""
    rules = " (allow rules do not apply in plan mode)" if allowed else ""
    return (
        f"you are in plan mode, which is read-only, and {facts.name!r} changes things{rules}. "
        "Investigate with read-only tools, then present your plan; the user decides when "
        "it is carried out"
    )


def open_why(rule: Rule) -> str:
    return (
        "its words are only complete when it runs (xargs adds the words of its input, "
        f"find -exec puts a file name for {{}}), and the rule '{rule}' could cover it then"
    )


def reads_why(rule: Rule, facts: ToolFacts, subject: Subject, read: Subject) -> str:
    return (
        f"the rule '{rule}' covers {describe(facts, subject)}, which reads "
        f"{read.value}{below(rule, read)}"
    )


def unclear_read(subject: Subject, root: str) -> str | None:
    """Why a file the command reads cannot be checked, or None. Of several, the one
    told names a file: the words in a command's options are taken for files too
    (``grep -rn`` for ``n``, tar's ``xzf``), and "'-rn' may lead elsewhere" says
    nothing a person can act on. A word not an option comes first, then one naming
    something in the workspace, a file before a directory, the last of equals (what
    ``tar -C`` moves comes after it). Words only: that any is unclear decides."""
    unclear = [r for r in subject.reads if r.unknown or r.problem]
    if not unclear:
        return None
    ranked = sorted(enumerate(unclear), key=lambda p: (*_unlike_a_file(p[1].value, root), -p[0]))
    told = ranked[0][1]
    return told.unknown or told.problem


def _unlike_a_file(value: str, root: str) -> tuple[bool, bool, bool]:
    """(an option's word, nothing of that name in the workspace, a directory)."""
    if value.startswith("-"):
        return True, True, True
    path = os.path.join(root, value)
    try:
        return False, not os.path.lexists(path), os.path.isdir(path)
    except (OSError, ValueError):
        return False, True, True


def below(rule: Rule, subject: Subject) -> str:
    """How a path rule covers a subject it does not match itself."""
    if not subject.directory or rule.pattern is None:
        return ""
    if any(rule.matches_path(r) for r in subject.deny):
        return ""
    advice = "name a narrower path the rule does not cover"
    if any(rule.matches_below(r) for r in subject.deny):
        return (
            f" (it covers paths inside that directory, which the tool may read or change; {advice})"
        )
    if subject.links_unknown is not None:
        return f" (the directory cannot be checked: {subject.links_unknown}; {advice})"
    link = next((t for t in subject.links if rule.matches_path(t) or rule.matches_below(t)), "?")
    return (
        f" (a symlink inside that directory points to {link}, which the tool would "
        f"read or change through it; {advice})"
    )


def read_note(rule: Rule, facts: ToolFacts) -> str:
    """Why a rule of the ``read`` tool covers another tool (``grep`` says so itself),
    and for ``edit`` what it leaves to other rules (a person or model otherwise
    guesses why an edit is read)."""
    if rule.tool != "read" or facts.name in ("read", "grep"):
        return ""
    if facts.name != "edit":  # a plugin's tool given paths: it may show what they hold
        return (
            f" (read rules cover every tool given paths that may read them: {facts.name!r} "
            "does not declare reads=False)"
        )
    return (
        f" ({facts.name} reads the file, and its answers (whether and where the old "
        "text is found) would tell what it holds. Read rules do not cover 'write', which "
        "replaces the whole file, nor appending with a command such as echo X >> FILE: "
        "those run where their own rules or the mode allow them, and are asked about "
        "otherwise)"
    )


def assumed(rule: Rule, facts: ToolFacts, subject: Subject) -> str:
    if rule.pattern is None or subject.kind != "tool":
        return ""
    return (
        f" (the pattern is taken to match: the call names no path or command that "
        f"{facts.name!r} declares, so there is nothing to check it against)"
    )


def describe(facts: ToolFacts, subject: Subject) -> str:
    """A subject in words, for reasons and prompts (long values shortened)."""
    value = subject.value if len(subject.value) <= SHOWN else subject.value[:SHOWN] + "…"
    if subject.kind == "tool":
        return f"calling {facts.name!r}"
    if subject.kind == "path":
        return f"{facts.name!r} on {value}"
    if subject.kind == "redirect":
        return f"the redirection {_quoted(value)}"
    return f"the command {_quoted(value)}"


def _quoted(value: str) -> str:
    """``value`` in quotes that cannot be read as its own: a command quoted for the
    shell (``echo 'a; b'``) goes in double quotes."""
    return f'"{value}"' if "'" in value else f"'{value}'"


def could_cover(rules: list[Rule], subject: Subject) -> Rule | None:
    """Which of the deny and ask ``rules`` to name in the reason why a value unknown
    until run time is asked about: for a command, the first whose pattern could match a
    text beginning with the literal head of a reading (what comes before the first
    ``$``, backquote or glob character), so ``echo $HOME`` is not said to be asked
    about for ``rm *``. Words only: the decision does not depend on it."""
    rules = [r for r in rules if r.pattern is not None]
    if subject.kind != "command":
        return rules[0] if rules else None
    heads = []
    for reading in subject.deny or (subject.value,):
        cut = min((i for i in map(reading.find, _DYNAMIC) if i >= 0), default=None)
        if cut is None:  # unknown for another reason: any rule may be the one
            return rules[0] if rules else None
        heads.append(reading[:cut])
    return next((r for r in rules if any(r.could_continue(h) for h in heads)), None)
