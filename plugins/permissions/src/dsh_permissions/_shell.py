"""Split a shell command line into the simple commands it would run, without running it.

The splitter understands a deliberately small part of POSIX sh / bash: words with
quoting and escapes, the separators ``;`` ``&`` ``&&`` ``||`` ``|`` ``|&`` and newlines,
subshells ``( ... )``, command substitution ``$( ... )`` and backticks (whose commands
are returned too), process substitution ``<( ... )``, redirections, comments and
leading ``NAME=value`` assignments. Everything else — here-documents, ``if``/``for``/
``case`` and other compound commands, arithmetic, function definitions, control
characters — raises :class:`Unparseable`, and the caller treats the call as ``ask``.
Other shells' precommand words before a program (zsh's ``noglob``, fish's ``and``) are
taken off, as ``!`` is (``_command_start``).
A parser that understands more is not safer: whatever it cannot model must never be
allowed, so the safe move is to refuse early and say why.

Words keep two spellings, ``text`` and ``raw`` (``_shell_scan`` reads them).
The scan is linear in the input; nesting and size are bounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Final

from dsh_permissions._command_start import KEYWORDS, program_first
from dsh_permissions._paths import unencodable
from dsh_permissions._shell_scan import META, WordReader
from dsh_permissions._shell_words import Command, Redirect, Unparseable, Word

__all__ = ["MAX_LENGTH", "Command", "Redirect", "Unparseable", "Word", "split"]

MAX_LENGTH: Final = 65536
MAX_DEPTH: Final = 16
MAX_COMMANDS: Final = 256

# Characters a person cannot see or that a terminal would interpret: a command holding
# one cannot be shown faithfully to whoever approves it.
_HIDDEN: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]"
)
_REDIRECTIONS: Final = ("<<<", "&>>", "&>", ">>", ">&", ">|", "<>", "<&", ">", "<")
#: a file descriptor's number: ASCII digits only (bash takes ``\u0661`` for a word)
_FD: Final = re.compile(r"[0-9]+")
#: the word before a redirection operator bash takes for the redirection's file
#: descriptor: a number, or ``{NAME}``, the variable bash puts the one it opens in
#: (``{fd}>x rm y`` runs ``rm y``); ``{a[0]}`` stays a word, which is dynamic
_FD_WORD: Final = re.compile(r"[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\}")


def split(line: str) -> list[Command]:
    """The simple commands ``line`` runs, nested ones (``$(...)``) before their host.

    Raises :class:`Unparseable` for anything outside the supported syntax.
    """
    if len(line) > MAX_LENGTH:
        raise Unparseable(f"the command is longer than {MAX_LENGTH} characters")
    hidden = _HIDDEN.search(line)
    if hidden:
        raise Unparseable(f"it contains the invisible or control character U+{ord(hidden[0]):04X}")
    if (why := unencodable(line)) is not None:
        raise Unparseable(f"it {why}")
    out: list[Command] = []
    parser = _Parser(line, 0, out)
    parser.parse_list(closer=None)
    if parser.alongside[0]:
        return [replace(command, alongside=True) for command in out]
    return out


@dataclass
class _Pending:
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    grouped: bool = False  # a ``( ... )`` subshell stands where the command would
    piped: bool = False  # its input is the output of the command before it

    @property
    def empty(self) -> bool:
        return not (self.words or self.redirects or self.grouped)


class _Parser(WordReader):
    __slots__ = ("alongside", "depth", "out")

    def __init__(self, s: str, depth: int, out: list[Command]) -> None:
        if depth > MAX_DEPTH:
            raise Unparseable(f"commands are nested more than {MAX_DEPTH} levels deep")
        super().__init__(s)
        self.depth = depth
        self.out = out
        #: whether the line runs commands alongside each other (``_nested`` shares it)
        self.alongside = [False]

    # -- command lists ----------------------------------------------------------------

    def parse_list(self, closer: str | None) -> None:
        """Parse commands up to the end (or the ``)`` that closes a group)."""
        s = self.s
        current = _Pending()
        needs_command = False  # after && || | : a command must follow
        while True:
            self._skip_blanks()
            if self.pos >= self.n:
                if closer is not None:
                    raise Unparseable("a '(' is never closed")
                self._finish(current, needs_command)
                return
            c = s[self.pos]
            if c == "#":
                end = s.find("\n", self.pos)
                self.pos = self.n if end < 0 else end
                continue
            if c == ")":
                if closer != ")":
                    raise Unparseable("a ')' closes nothing")
                self.pos += 1
                self._finish(current, needs_command)
                return
            if c == "&" and s.startswith(">", self.pos + 1):
                self._redirect(current, "")
                continue
            if c in ";&|\n":
                op = self._operator()
                if op == "\n" and current.empty and needs_command:
                    continue  # a newline may follow && || |
                if op in ("&&", "||", "|", "|&") and current.empty:
                    raise Unparseable(f"{op!r} has no command before it")
                if op in ("&", ";", "\n") and current.empty and needs_command:
                    raise Unparseable(f"{op!r} follows an operator with no command between")
                self._finish(current, False)
                if op in ("|", "|&", "&"):
                    self.alongside[0] = True
                current = _Pending(piped=op in ("|", "|&"))
                needs_command = op in ("&&", "||", "|", "|&")
                continue
            if c == "(":
                if s.startswith("((", self.pos):
                    raise Unparseable("arithmetic (( )) is not supported")
                if not current.empty:
                    raise Unparseable(
                        "'(' inside a command (functions and arrays are not supported)"
                    )
                self.pos += 1
                self._nested_group()
                current.grouped = True
                needs_command = False
                continue
            if c in "<>":
                if s.startswith("(", self.pos + 1):  # process substitution <( ) >( )
                    self._add_word(current, self._process_substitution())
                else:
                    self._redirect(current, "")
                continue
            word = self._word()
            if s.startswith(("<", ">"), self.pos) and _FD_WORD.fullmatch(word.raw):
                self._redirect(current, word.raw)
                continue
            self._add_word(current, word)
            needs_command = False

    def _add_word(self, current: _Pending, word: Word) -> None:
        if current.grouped:
            raise Unparseable("a word follows a ')' group")
        if not current.words and not word.quoted and word.text in KEYWORDS:
            raise Unparseable(
                f"the shell keyword {word.text!r} (compound commands are not supported)"
            )
        if not current.words and not word.quoted and word.text == "!":
            return  # negates the exit status only
        current.words.append(word)

    def _finish(self, current: _Pending, needs_command: bool) -> None:
        if current.empty:
            if needs_command:
                raise Unparseable("the command line ends with an operator")
            return
        if current.words or current.redirects:
            if len(self.out) >= MAX_COMMANDS:
                raise Unparseable(f"it runs more than {MAX_COMMANDS} commands")
            words = program_first(tuple(current.words))  # zsh's noglob rm: rm
            self.out.append(Command(words, tuple(current.redirects), current.piped))

    def _operator(self) -> str:
        s, i = self.s, self.pos
        two = s[i : i + 2]
        if two in (";;", ";&"):
            raise Unparseable(f"{two!r} belongs to 'case', which is not supported")
        if two in ("&&", "||", "|&"):
            self.pos += 2
            return two
        self.pos += 1
        return s[i]

    def _skip_blanks(self) -> None:
        s = self.s
        while self.pos < self.n:
            c = s[self.pos]
            if c in " \t":
                self.pos += 1
            elif c == "\\" and s.startswith("\n", self.pos + 1):
                self.pos += 2  # a line continuation between words
            else:
                return

    # -- nesting ----------------------------------------------------------------------

    def _nested_group(self) -> None:
        """Parse up to the matching ``)`` at one level deeper; its commands go to out."""
        inner = self._nested(self.s)
        inner.pos = self.pos
        inner.parse_list(closer=")")
        self.pos = inner.pos

    def _nested_text(self, text: str) -> None:
        self._nested(text).parse_list(closer=None)

    def _nested(self, text: str) -> _Parser:
        """A parser of ``text`` one level deeper, its commands going to out."""
        inner = _Parser(text, self.depth + 1, self.out)
        inner.alongside = self.alongside
        return inner

    def _process_substitution(self) -> Word:
        start = self.pos
        self.pos += 2
        self._nested_group()
        raw = self.s[start : self.pos]
        return Word(raw, raw, dynamic=True)

    # -- redirections -----------------------------------------------------------------

    def _redirect(self, current: _Pending, fd: str) -> None:
        s = self.s
        if s.startswith("<<", self.pos) and not s.startswith("<<<", self.pos):
            raise Unparseable("here-documents (<<) are not supported")
        op = next(o for o in _REDIRECTIONS if s.startswith(o, self.pos))
        self.pos += len(op)
        self._skip_blanks()
        if s.startswith(("<(", ">("), self.pos):
            target = self._process_substitution()
        elif self.pos >= self.n or s[self.pos] in META:
            raise Unparseable(f"the redirection {fd}{op} has no target")
        else:
            target = self._word()
        duplicate = _FD.fullmatch(target.text) is not None or target.text == "-"
        if op == "<>":  # opened for reading and writing: both
            current.redirects.append(Redirect("<", target, fd))
        if op in (">&", "<&") and duplicate and not target.dynamic:
            kind = "dup"
        else:
            kind = {"<": "<", "<&": "<", "<<<": "<<<"}.get(op, ">")
        current.redirects.append(Redirect(kind, target, fd))
