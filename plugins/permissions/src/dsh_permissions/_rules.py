"""Rules: ``ToolName`` or ``ToolName(pattern)``, in allow / ask / deny lists.

A rule without a pattern matches every call of the tool. A pattern is matched against
what the tool declared: path arguments (``Tool.path_args``) as canonical paths (see
``_paths``), command arguments (``Tool.command_args``) as the text of each simple
command the line runs (see ``_commands``). In command patterns ``*`` matches any
characters, spaces and ``/`` included; nothing else is special. Tool names may use
``*`` too (``mcp_*``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal

from dsh_permissions._path_braces import alternatives
from dsh_permissions._paths import PathPattern

__all__ = ["Action", "Rule", "TextPattern", "parse_rule"]

Action = Literal["allow", "ask", "deny"]

_NAME: Final = re.compile(r"[A-Za-z0-9_.:*-]+")
_SPACES: Final = re.compile(r"\s+")


def parse_rule(text: str) -> tuple[str, str | None]:
    """``(tool, pattern)`` of a rule; ValueError with the reason when it is malformed."""
    text = text.strip()
    name, paren, rest = text.partition("(")
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"{text!r} is not a rule: write ToolName or ToolName(pattern), e.g. "
            "bash(git status*) or read(src/**)"
        )
    if not paren:
        return name, None
    if not rest.endswith(")"):
        raise ValueError(f"{text!r}: the pattern must end with ')'")
    pattern = rest[:-1].strip()
    if not pattern:
        raise ValueError(f"{text!r}: the pattern is empty; write {name} to match every call")
    if "\x00" in pattern:
        raise ValueError(f"{text!r}: the pattern contains a NUL byte")
    if not _balanced(pattern):
        raise ValueError(
            f"{text!r}: the parentheses in the pattern {pattern!r} do not balance "
            "(a pattern that ends in ')' matches nothing that does not); write "
            "ToolName(pattern) with one ')' closing it"
        )
    return name, pattern


def _balanced(pattern: str) -> bool:
    """Whether each ``)`` in ``pattern`` closes a ``(`` before it, and each ``(`` is
    closed (``bash(rm *))`` would be the pattern ``rm *)``)."""
    depth = 0
    for char in pattern:
        depth += (char == "(") - (char == ")")
        if depth < 0:
            return False
    return depth == 0


@dataclass(frozen=True, slots=True)
class TextPattern:
    """A command pattern: ``*`` matches anything; whitespace runs count as one space;
    a final `` *`` also matches nothing (``rm *`` covers a bare ``rm``)."""

    source: str
    regex: re.Pattern[str]
    #: the pattern's alternatives (``rm *`` is also ``rm``), whitespace runs as one space
    texts: tuple[str, ...] = ()

    @classmethod
    def compile(cls, pattern: str) -> TextPattern:
        text = _SPACES.sub(" ", pattern.strip())
        body = _body(text)
        texts: tuple[str, ...] = (text,)
        if text.endswith(" *"):
            body = f"(?:{body}|{_body(text[:-2])})"
            texts = (text, text[:-2])
        return cls(pattern, re.compile(f"(?s:{body})\\Z"), texts)

    def matches(self, text: str) -> bool:
        return self.regex.match(text) is not None

    def could_continue(self, prefix: str) -> bool:
        """Whether some text beginning with ``prefix`` matches (``git `` could go on to
        ``git push``, which ``git push*`` matches). A pattern without ``*`` must begin
        with the prefix. One with a ``*`` needs only its literal head to agree with the
        prefix (either begins with the other): the first ``*`` can take whatever of the
        prefix is left over, and the rest of the pattern's literals can follow."""
        for text in self.texts:
            head, star, _ = text.partition("*")
            if text.startswith(prefix) or (star and prefix.startswith(head)):
                return True
        return False


def _body(text: str) -> str:
    pieces = [re.escape(p) for p in text.split("*")]
    if len(pieces) == 1:
        return pieces[0]
    # Atomic lazy groups: each literal piece binds to its earliest occurrence, which
    # is always right for a single kind of wildcard and never backtracks (a long
    # hostile command cannot make matching slow).
    middle = "".join(f"(?>.*?{p})" for p in pieces[1:-1])
    return f"{pieces[0]}{middle}.*{pieces[-1]}"


def _program_path(pattern: str) -> str:
    """An allow pattern whose program word is a path without a leading ``./`` or ``/``
    (``.venv/bin/pip *``, ``scripts/test.sh*``), with ``./`` put before it: a word with
    a ``/`` is never looked up on ``PATH``, and a program path of the workspace is
    matched as ``./`` and its path (``_command_text.program_text``). A bare name
    (``gradlew *``) stays the program on ``PATH``; deny and ask rules see both already."""
    word = pattern.split(" ", 1)[0]
    if "/" not in word or "=" in word or word.startswith(("./", "/", "../", "~", "*", "$")):
        return pattern
    return f"./{pattern}"


@dataclass(slots=True)
class Rule:
    """One compiled rule of a policy bound to a workspace root."""

    action: Action
    source: str
    tool: str
    pattern: str | None
    root: str
    _name: TextPattern | None = field(default=None, repr=False)
    _text: TextPattern | None = field(default=None, repr=False)
    _path: tuple[PathPattern, ...] | None = field(default=None, repr=False)

    @classmethod
    def compile(cls, action: Action, source: str, root: str) -> Rule:
        tool, pattern = parse_rule(source)
        # a rule's tool name ignores case: Bash(rm *) is bash(rm *), as people used to
        # other agents write it, and a deny rule must not miss by a capital letter
        folded = tool.casefold()
        name = TextPattern.compile(folded) if "*" in folded else None
        text = None
        if pattern is not None:
            allowed = folded == "bash" and action == "allow"
            text = TextPattern.compile(_program_path(pattern) if allowed else pattern)
        return cls(action, source.strip(), folded, pattern, root, name, text)

    def __str__(self) -> str:
        return f"{self.action}: {self.source}"

    def applies_to(self, tool: str, reads_paths: bool) -> bool:
        """Whether the rule applies to calls of ``tool``; ``reads_paths``: the tool may
        show what the files its path arguments name hold (``ToolFacts.reads_paths``)."""
        tool = tool.casefold()
        if self._name is not None:
            return self._name.matches(tool)
        # a rule that keeps a file from being read (deny, ask) keeps every tool that may
        # read the paths it is given out of it too (grep, edit, a plugin's tool): a rule
        # written for one tool must not leak through another (edit's answers say
        # whether and where `old` occurs). An allow rule allows its own tool only.
        covered = reads_paths and self.tool == "read" and self.action != "allow"
        return tool == self.tool or covered

    def matches_text(self, text: str) -> bool:
        return self._text is not None and self._text.matches(text)

    def could_continue(self, prefix: str) -> bool:
        """Whether the pattern matches some command text beginning with ``prefix``."""
        return self._text is not None and self._text.could_continue(prefix)

    def matches_path(self, path: str) -> bool:
        """Whether the path pattern matches the canonical ``path``: for a deny or ask
        rule in any reading of the pattern, for an allow rule in each (``_patterns``)."""
        every = self.action == "allow"
        return any(p.matches(path, every) for p in self._patterns())

    def matches_below(self, path: str) -> bool:
        """Whether the pattern could match a path inside the directory ``path``."""
        return any(p.matches_below(path) for p in self._patterns())

    def _patterns(self) -> tuple[PathPattern, ...]:
        """The readings of the path pattern (none without one). A deny or ask pattern
        with ``[`` also names the file its text spells (``keys[prod].txt``), so it
        covers that file as well as the set's; an allow pattern is read one way only."""
        if self.pattern is None:
            return ()
        if self._path is None:  # each brace alternative: read({.env,.envrc})
            try:
                found = alternatives(self.pattern)
            except ValueError:  # refused when the harness starts (``_rule_names``)
                found = (self.pattern,)
            self._path = tuple(p for one in found for p in self._read(one))
        return self._path

    def _read(self, pattern: str) -> tuple[PathPattern, ...]:
        if self.action == "allow":
            return (PathPattern.compile(pattern, self.root),)
        # a deny or ask rule naming a directory covers what is inside it:
        # write(secrets/) and write(secrets) stop write secrets/key too
        pattern = pattern.rstrip("/") + "/**"
        spelt = (PathPattern.compile(pattern, self.root, sets=False),) if "[" in pattern else ()
        return (PathPattern.compile(pattern, self.root), *spelt)
