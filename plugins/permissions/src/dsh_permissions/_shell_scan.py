"""One shell word read as the shell splitter (``_shell``) meets it: quoting, escapes and
the ``$`` constructs in it.

A word keeps two spellings: ``text`` (after quote removal, which is what a program
receives) and ``raw`` (as written). A word whose value is only known when the shell
runs (``$VAR``, ``$(...)``, globs, brace expansion, ``~user``) is ``dynamic``. The
commands of a substitution in it (``$(...)``, backticks) are parsed by the splitter
(``_nested_group``, ``_nested_text``, which ``_shell._Parser`` gives) and returned too.
"""

from __future__ import annotations

import re
from typing import Final

from dsh_permissions._braced import evaluated
from dsh_permissions._shell_words import Unparseable, Word

__all__ = ["META", "WordReader"]

#: the characters that end an unquoted word
META: Final = frozenset(" \t\n;&|<>()")
_BRACES: Final = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")


class WordReader:
    """Reads a word of ``s`` at ``pos``; a subclass parses the commands nested in it."""

    __slots__ = ("n", "pos", "s")

    def __init__(self, s: str) -> None:
        self.s = s
        self.n = len(s)
        self.pos = 0

    def _nested_group(self) -> None:
        """Parse up to the ``)`` that closes the group starting at pos."""
        raise NotImplementedError

    def _nested_text(self, text: str) -> None:
        """Parse ``text`` (a backquoted substitution's commands)."""
        raise NotImplementedError

    def _word(self) -> Word:
        s = self.s
        start = self.pos
        text: list[str] = []
        unquoted: list[str] = []  # characters outside quotes, for globs and braces
        # zsh's =cmd is the program's path (=rm: /usr/bin/rm); in bash a word like any
        dynamic = s.startswith("=", start) and (s[start + 1 : start + 2] or " ").isalnum()
        quoted = tilde = False
        if s.startswith("~", start):
            end = start + 1
            while end < self.n and s[end] not in META and s[end] != "/":
                end += 1
            if end == start + 1:
                tilde = True
            else:
                dynamic = True  # ~user, ~+, ~- : not known here
        while self.pos < self.n:
            c = s[self.pos]
            if c in META:
                break
            if c == "\\":
                if self.pos + 1 >= self.n:
                    text.append(c)
                    self.pos += 1
                elif s[self.pos + 1] == "\n":
                    self.pos += 2
                else:
                    text.append(s[self.pos + 1])
                    quoted = True
                    self.pos += 2
            elif c == "'":
                end = s.find("'", self.pos + 1)
                if end < 0:
                    raise Unparseable("a single quote is never closed")
                text.append(s[self.pos + 1 : end])
                quoted = True
                self.pos = end + 1
            elif c == '"':
                dynamic |= self._double_quoted(text)
                quoted = True
            elif c == "`":
                text.append(self._backticks())
                dynamic = True
            elif c == "$":
                dynamic |= self._dollar(text, in_quotes=False)
            else:
                text.append(c)
                unquoted.append(c)
                self.pos += 1
        raw = s[start : self.pos]
        bare = "".join(unquoted)
        if "*" in bare or "?" in bare or ("[" in bare and "]" in bare[bare.index("[") :]):
            dynamic = True
        if "{" in bare and _BRACES.search(bare):
            dynamic = True
        return Word("".join(text), raw, dynamic=dynamic, tilde=tilde, quoted=quoted)

    def _double_quoted(self, text: list[str]) -> bool:
        s = self.s
        self.pos += 1
        dynamic = False
        while self.pos < self.n:
            c = s[self.pos]
            if c == '"':
                self.pos += 1
                return dynamic
            if c == "\\" and self.pos + 1 < self.n and s[self.pos + 1] in '$`"\\\n':
                if s[self.pos + 1] != "\n":
                    text.append(s[self.pos + 1])
                self.pos += 2
            elif c == "`":
                text.append(self._backticks(in_quotes=True))
                dynamic = True
            elif c == "$":
                dynamic |= self._dollar(text, in_quotes=True)
            else:
                text.append(c)
                self.pos += 1
        raise Unparseable("a double quote is never closed")

    def _backticks(self, *, in_quotes: bool = False) -> str:
        """A backquoted substitution: ``\\$``, ``\\```, ``\\\\`` and, inside double
        quotes, ``\\"`` lose their backslash before its text is parsed."""
        s = self.s
        start = self.pos
        i = start + 1
        inner: list[str] = []
        escaped = '$`\\"' if in_quotes else "$`\\"
        while i < self.n:
            c = s[i]
            if c == "\\" and i + 1 < self.n and s[i + 1] in escaped:
                inner.append(s[i + 1])
                i += 2
            elif c == "`":
                self.pos = i + 1
                self._nested_text("".join(inner))
                return s[start : self.pos]
            else:
                inner.append(c)
                i += 1
        raise Unparseable("a backtick is never closed")

    def _dollar(self, text: list[str], *, in_quotes: bool) -> bool:
        """Read a ``$`` construct at pos; True when it expands to an unknown value."""
        s, i = self.s, self.pos
        nxt = s[i + 1] if i + 1 < self.n else ""
        if nxt == "[":  # bash's old $[x]: evaluates x's value as $((x)) does
            raise Unparseable("arithmetic expansion $[ ] is not supported")
        if nxt == "(":
            if s.startswith("((", i + 1):
                raise Unparseable("arithmetic expansion $(( )) is not supported")
            self.pos = i + 2
            self._nested_group()
        elif nxt == "{":
            end = s.find("}", i + 2)
            body = s[i + 2 : end]
            if end < 0:
                raise Unparseable("a '${' is never closed")
            if body[:1] in (" ", "\t", "\n", "|"):  # bash 5.3: ${ cmd; }, ${| cmd; }
                raise Unparseable("a ${ ...; } command substitution (bash 5.3) is not supported")
            if any(ch in body for ch in "$`'\"\\{"):
                raise Unparseable("a ${...} expansion holds quotes or other expansions")
            if (why := evaluated(body)) is not None:
                raise Unparseable(why)
            self.pos = end + 1
        elif nxt == "'" and not in_quotes:  # $'...' (ANSI-C): value left undecoded
            j = i + 2
            while j < self.n and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            if j >= self.n:
                raise Unparseable("a $'...' string is never closed")
            self.pos = j + 1
        elif nxt == '"' and not in_quotes:  # $"...": translated by TEXTDOMAIN's catalog
            self.pos += 1
            self._double_quoted(text)  # which the line may name: only known when it runs
            return True
        elif nxt.isalpha() or nxt == "_":
            j = i + 2
            while j < self.n and (s[j].isalnum() or s[j] == "_"):
                j += 1
            self.pos = j
        elif nxt.isdigit() or (nxt and nxt in "@*#?$!-~=^+"):  # zsh's $~x, $=x: x's value
            self.pos = i + 2
        else:
            text.append("$")
            self.pos += 1
            return False
        text.append(s[i : self.pos])
        return True
