"""Whether a rule covers a subject: the matching ``_decide`` weighs (a deny or ask
rule covering any reading, a file a command reads, a command as it may go on at run
time; an allow rule matching every allow reading)."""

from __future__ import annotations

from dsh_permissions._rules import Rule
from dsh_permissions._subjects import Subject

__all__ = ["allowed_by", "continued", "hits", "read_hit"]


def hits(rule: Rule, subject: Subject) -> bool:
    """Whether a deny or ask rule covers the subject; when the pattern cannot be
    checked (the tool declares no matchable argument) it is taken to match."""
    if rule.pattern is None or subject.kind == "tool":
        return True
    if subject.problem is not None:
        return False  # asked about anyway; only a rule without pattern denies it
    if subject.kind != "path":
        return any(rule.matches_text(reading) for reading in subject.deny)
    if any(rule.matches_path(reading) for reading in subject.deny):
        return True
    # A tool given a directory may read or change what is inside it (grep, glob, a
    # copy): a rule about a path beneath it covers the call too, and so does a rule
    # about where a symlink beneath it points (or, when those could not all be found,
    # any rule with a pattern: it is taken to match).
    if not subject.directory:
        return False
    if any(rule.matches_below(r) for r in subject.deny) or subject.links_unknown is not None:
        return True
    return any(rule.matches_path(t) or rule.matches_below(t) for t in subject.links)


def continued(rules: list[Rule], subject: Subject) -> Rule | None:
    """The first rule with a pattern that could match the command as it may go on at
    run time (``Subject.open``)."""
    for rule in rules:
        if rule.pattern is not None and any(rule.could_continue(p) for p in subject.open):
            return rule
    return None


def read_hit(rules: list[Rule], subject: Subject) -> tuple[Rule, Subject] | None:
    """The first rule of the ``read`` tool covering a file the command reads."""
    for read in subject.reads:
        for rule in rules:
            if hits(rule, read):
                return rule, read
    return None


def allowed_by(rules: list[Rule], subject: Subject) -> Rule | None:
    for rule in rules:
        if rule.pattern is None:
            return rule
    if not subject.allow or subject.unknown is not None:
        return None
    first: Rule | None = None
    for reading in subject.allow:
        found = next((r for r in rules if _matches(r, subject, reading)), None)
        if found is None:
            return None
        first = first or found
    return first


def _matches(rule: Rule, subject: Subject, reading: str) -> bool:
    if subject.kind == "path":
        return rule.matches_path(reading)
    return rule.matches_text(reading)
