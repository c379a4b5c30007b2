"""Subjects: the things a tool call does that must each be allowed.

Each subject carries *readings*: ``allow`` readings must each be matched by an allow
rule; ``deny`` readings (more spellings: raw text, the command without its wrappers,
look-alike characters folded) are checked against deny and ask rules, any one
matching being enough. So an extra way of reading a value can only ever make a call
stricter, never let it through.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from dsh_permissions._links import links_below
from dsh_permissions._paths import folded, inside, path_readings, path_written

if TYPE_CHECKING:
    from dsh.tools import Tool

__all__ = ["Subject", "SubjectKind", "ToolFacts", "path_subject", "with_folded"]

SubjectKind = Literal["tool", "path", "command", "redirect"]


@dataclass(frozen=True, slots=True)
class Subject:
    """One thing a call does that must be allowed."""

    kind: SubjectKind
    #: what a person is shown and what an "always" answer remembers
    value: str
    #: readings that allow rules must each match; empty: only a rule without pattern
    allow: tuple[str, ...] = ()
    #: readings that deny and ask rules are checked against (any one is enough)
    deny: tuple[str, ...] = ()
    #: why the subject cannot be checked at all (it is asked about, never allowed)
    problem: str | None = None
    #: why the value is only known at run time (never allowed by a pattern)
    unknown: str | None = None
    #: every reading is inside the workspace (paths only)
    inside: bool = False
    #: some reading names an existing directory (paths only): the tool may read or
    #: change what is inside it, so rules about paths beneath it cover the call too
    directory: bool = False
    #: the targets of the symlinks below that directory (only looked for when a deny or
    #: ask rule with a pattern applies to the tool), checked like paths inside it
    links: tuple[str, ...] = ()
    #: why ``links`` may be incomplete (the rules are then taken to cover the call)
    links_unknown: str | None = None
    #: the files a command reads (``path`` subjects; commands only, and only when the
    #: ``read`` tool has deny or ask rules): checked against those rules (see ``_reads``)
    reads: tuple[Subject, ...] = ()
    #: beginnings of the text a command may become at run time (what xargs runs gets
    #: more words, ``{}`` of find -exec is a file name; see ``_xargs``): a deny or ask
    #: pattern that could match a text beginning so covers it as an unknown value would
    open: tuple[str, ...] = ()

    @property
    def rememberable(self) -> bool:
        return self.problem is None and self.unknown is None


@dataclass(frozen=True, slots=True)
class ToolFacts:
    """What the registry says about the called tool (unknown tools: the strictest)."""

    name: str
    known: bool
    mutating: bool
    path_args: tuple[str, ...] = ()
    command_args: tuple[str, ...] = ()
    #: the tool may show what the files its path arguments name hold: the ``read``
    #: tool's deny and ask rules cover it (see ``Rule.applies_to``)
    reads_paths: bool = False

    @classmethod
    def of(cls, name: str, tool: Tool | None) -> ToolFacts:
        if tool is None:
            # Another plugin may serve a tool the registry does not know: treat it as
            # one that changes things and whose arguments cannot be matched.
            return cls(name, known=False, mutating=True)
        # A tool that runs commands can change anything, whatever it declares.
        mutating = tool.mutating or bool(tool.command_args)
        # Any tool given paths may read them unless it says it does not (fails closed).
        reads = bool(tool.path_args) and tool.reads
        return cls(name, True, mutating, tool.path_args, tool.command_args, reads)

    @property
    def edits_files(self) -> bool:
        """A file-editing tool: mutating, with path arguments, running no commands."""
        return self.mutating and bool(self.path_args) and not self.command_args


def path_subject(value: str, root: str, links: bool = False) -> Subject:
    """The subject of one path value. ``links``: when it names a directory, look for
    the symlinks below it too (a deny or ask rule applies to the tool)."""
    try:
        readings = path_readings(value, root)
    except ValueError as exc:
        return Subject("path", value, problem=str(exc))
    # the names as written too (deny and ask rules only): a wildcard before a symlink
    deny = with_folded(dict.fromkeys((*readings, *path_written(value, root, readings))))
    shown = " | ".join(readings)
    directories = [r for r in readings if os.path.isdir(r)]
    targets: dict[str, None] = {}
    unknown: str | None = None
    for directory in directories if links else ():
        found, why = links_below(directory)
        targets.update(dict.fromkeys(found))
        unknown = unknown or why
    return Subject(
        "path",
        shown,
        allow=readings,
        deny=deny,
        inside=all(inside(r, root) for r in readings),
        directory=bool(directories),
        links=with_folded(targets) if targets else (),
        links_unknown=unknown,
    )


def with_folded(readings: Iterable[str]) -> tuple[str, ...]:
    out = list(readings)
    for reading in list(out):
        variant = folded(reading)
        if variant not in out:
            out.append(variant)
    return tuple(out)
