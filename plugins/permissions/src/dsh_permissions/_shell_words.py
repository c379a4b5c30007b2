"""What the shell splitter (``_shell.split``) returns: simple commands made of words and
redirections, and the error it raises for syntax it does not model."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Command", "Redirect", "Unparseable", "Word"]


class Unparseable(ValueError):
    """The command uses shell syntax the splitter does not model; the reason says which."""


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    raw: str
    dynamic: bool = False
    #: starts with an unquoted ``~`` or ``~/`` that the shell expands to ``$HOME``
    tilde: bool = False
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Redirect:
    #: ``<`` (input), ``>`` (output: ``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``<>``, which
    #: is an input too: it adds a ``<`` of the same file),
    #: ``<<<`` (here-string) or ``dup`` (``2>&1``, ``>&-``: no file involved)
    kind: str
    target: Word
    #: the word before the operator: a file descriptor's number, or ``{NAME}``, the
    #: variable bash sets to the one it opens (empty: none)
    fd: str = ""


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command: its words (assignments first) and its redirections."""

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...] = ()
    #: its standard input is the output of the command before it (``a | b``)
    piped: bool = False
    #: its line runs commands alongside each other (a pipeline, ``&``): one written
    #: later may do its part first
    alongside: bool = False
