"""``~`` and ``cd`` after a line may have set ``HOME``, ``OLDPWD`` or bash's
``cdable_vars`` (noted with the other variables a line sets, ``_option_variables``).

``~`` is the shell's ``HOME`` where the word is expanded, ``cd`` with no directory goes
to ``HOME``, ``cd -`` to ``OLDPWD``, and with ``cdable_vars`` on, ``cd NAME`` goes to
the directory ``$NAME`` holds. The checker reads ``~`` as dsh's own home and follows
``cd`` to a directory it can name (``_moved``), which a line may change first:
``HOME=/etc; cat ~/passwd`` reads ``/etc/passwd``. So the commands of a line (with the
lines it runs in turn: ``sh -c``, ``eval``, ``find -exec``) are looked at in order, and
from the first one that may set one of them on (that one included):

- each word bash tilde-expands is dynamic (``noted``): only known when the shell
  runs, so unknown to the rules, as ``$HOME/x`` is. Those are a word starting with an
  unquoted ``~`` (``~/x``, ``~``, ``~+``, ``~user``) and an assignment-like word
  (``NAME=...``, an argument too) with an unquoted ``~`` right after the ``=`` or a
  ``:`` (``P=~/a``, ``PATH=/x:~/bin``); so is an option's value starting with ``~``
  (``--file=~/x``, ``-f~/x``, curl's ``-d@~/x``), which the checker and many programs
  read in ``$HOME`` too. Not ``HEAD~1`` or ``'s/~/-/'``;
- a ``cd`` (``pushd``) whose directory comes from it goes somewhere not known
  (``unfollowed``): it is not followed, and it is itself unknown.

A command may set ``HOME`` or ``OLDPWD`` when any word of it names one, as a whole
name (``_option_variables.named``: ``HOME=x``, not ``JAVA_HOME=x``;
``export HOME``, ``env -u HOME``, ``read HOME``, ``declare -n r=HOME``, even ``$HOME``;
but for a command known to set none that way, ``grep HOME``, ``echo HOME``: see
``_option_variables``),
a builtin or ``env`` is given it as an option's value (``printf -vHOME``, ``read
-aHOME``, ``env -uHOME``: ``_evaluated.set_names`` reads the builtins' options),
``env`` may clear the environment (``env -i``), a builtin takes a name only the shell
knows for a variable to set (``read "$v"``, ``printf -v "$v"``, ``export A{B,}=1``:
then every variable ``_option_variables`` watches may be set), or it may set any
variable (``source``, ``set -a``, ``export $v``: ``_option_variables``); ``eval``'s
words are a line of their own, looked at in turn. A redirection ``{HOME}>x`` puts a
file descriptor's number in it. ``cdable_vars`` is taken to be on after a word naming
it (``shopt -s cdable_vars``, ``bash -O cdable_vars``, ``BASHOPTS=...``) or a
``shopt`` with a word only the shell knows. What a
wrapper running it as another user runs (``sudo sh -c 'cat ~/x'``, ``su -c``) has that
user's ``HOME``: ``~`` and ``cd`` there are unknown too (``switched_home``). This is
stricter than bash (``HOME=/etc echo ~`` prints the old home; ``sh -c 'HOME=x'`` sets it
in another shell), never looser.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from dsh_permissions._evaluated import set_names
from dsh_permissions._option_variables import SHELL_PLACES, WATCHED, named, note, set_in_line
from dsh_permissions._shell_words import Command, Redirect, Word

__all__ = ["noted", "switched_home", "unfollowed"]

#: builtins whose words may name variables they set (``_evaluated.set_names``)
_SETTERS: Final = frozenset(
    {"read", "printf", "mapfile", "readarray", "getopts", "wait", "unset"}
    | {"declare", "typeset", "local", "export", "readonly"}
)
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MOVERS: Final = frozenset({"cd", "pushd"})
#: wrappers that run a command as another user, with that user's HOME
_SWITCHERS: Final = frozenset({"sudo", "su", "doas", "pkexec", "runuser", "machinectl"})
#: checking what such a wrapper runs: HOME is another user's
_SWITCHED: ContextVar[bool] = ContextVar("dsh_permissions_switched_home", default=False)
#: a word bash takes for an assignment (as an argument too), with an unquoted ``~``
#: right after its ``=`` or a later ``:`` (a leading one is ``Word.tilde``, or dynamic:
#: ``~user``, ``~+``); fail closed: a quoted one counts too (``P="a:~"``)
_ASSIGNED_TILDE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=(.*:)?~")
#: an option's value the checker (``_file_words.part``, ``_reader_args._marked``) and
#: many programs read as in ``$HOME``: ``--file=~/x``, ``-f~/x``, ``a:~/x``, curl's
#: ``-d@~/x``, ``@~/x`` and form files ``f=@~/x``, ``f=<~/x``
_VALUE_TILDE: Final = re.compile(r"(^-[A-Za-z0-9]+|[=:@<])~(/|:|$)")


def noted(command: Command) -> Command:
    """Note what ``command`` may set (``_option_variables.note``), and ``command`` with
    each word holding ``~`` dynamic once ``HOME`` may have been set (by it too)."""
    words = command.words
    also: list[str] = []
    for index, word in enumerate(words):
        name = os.path.basename(word.text)
        if name == "shopt" and any(w.dynamic for w in words[index + 1 :]):
            also.append("cdable_vars")
        elif name == "env":
            also.extend(_unsets(words[index + 1 :]))  # env -i: any; env -uHOME: HOME
        elif name in _SETTERS:  # printf -vHOME; read "$v", export A{B,}: any may be
            found = set_names(words[index:])
            if found is not None and name == "unset":  # unset GIT_PAGER runs nothing
                found = tuple(n for n in found if n in SHELL_PLACES)
            also.extend(WATCHED if found is None else found)
    # {HOME}>x puts a file descriptor's number in HOME
    also.extend(n for n in WATCHED for r in command.redirects if named(n, r.fd))
    note([w.text for w in words], also)
    if not _home_set():
        return command
    return Command(
        tuple(_unknown(w) for w in words),
        tuple(Redirect(r.kind, _unknown(r.target), r.fd) for r in command.redirects),
        command.piped,
    )


def unfollowed(name: str, operands: Sequence[str]) -> str | None:
    """Why the directory ``cd OPERANDS`` (``pushd``; options taken off) goes to is not
    known because the line may have set where it reads it, or None."""
    if name not in _MOVERS:
        return None
    home = _home_set()
    if home and name == "cd" and not operands:
        return "the line may set HOME, where cd with no directory goes"
    if home and any(o.startswith("~") or _VALUE_TILDE.search(o) for o in operands):
        return "the line may set HOME, which ~ names"
    if list(operands) == ["-"] and set_in_line(("OLDPWD",)):
        return "the line may set OLDPWD, where cd - goes"
    # only a word naming it turns cdable_vars on (not source, which would make every
    # cd NAME after source .venv/bin/activate unknown)
    cdable = set_in_line(("cdable_vars", "BASHOPTS"), anything=False)
    if cdable and len(operands) == 1 and _NAME.fullmatch(operands[0]):
        return (
            f"the line may turn on cdable_vars, with which {name} {operands[0]} goes to "
            f"the directory ${operands[0]} holds"
        )
    return None


@contextmanager
def switched_home(words: Sequence[Word]) -> Iterator[None]:
    """What the command ``words`` runs in turn (``sh -c``, ``su -c``) is checked inside:
    behind ``sudo``, ``su``, ``doas``, ``pkexec``, ``runuser`` (any word naming one) it
    runs with the target user's ``HOME``, so ``~`` and ``cd`` there are unknown."""
    if _SWITCHED.get() or not any(os.path.basename(w.text) in _SWITCHERS for w in words):
        yield
        return
    token = _SWITCHED.set(True)
    try:
        yield
    finally:
        _SWITCHED.reset(token)


def _home_set() -> bool:
    return _SWITCHED.get() or set_in_line(("HOME",))


def _unsets(args: Sequence[Word]) -> Sequence[str]:
    """The variables ``env ARGS`` may clear besides the ones its words name as a whole
    (``-u HOME``, ``--unset=HOME``): every one watched when it may clear the environment
    (``-i``, ``-``, ``--ignore-environment``) or unset a variable only the shell names
    (``-u "$V"``), and the value attached to ``-u`` (``-uHOME``)."""
    found: list[str] = []
    for word in args:
        text = word.text
        if not (text.startswith("-") or "=" in text or word.dynamic):
            break  # the command
        if word.dynamic or text == "-" or text.startswith("--i"):
            return WATCHED
        if text.startswith("-") and not text.startswith("--"):
            if "i" in text:
                return WATCHED
            if "u" in text:
                found.append(text.split("u", 1)[1])
    return found


def _unknown(word: Word) -> Word:
    if word.dynamic or not (
        word.tilde or _ASSIGNED_TILDE.match(word.raw) or _VALUE_TILDE.search(word.text)
    ):
        return word
    return Word(word.text, word.raw, dynamic=True, tilde=word.tilde, quoted=word.quoted)
