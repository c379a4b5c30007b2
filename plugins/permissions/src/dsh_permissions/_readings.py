"""The readings of a command's words: the spellings deny rules see (whole, behind
wrappers, without the program's directory) and the beginnings of the text it may
become at run time (what xargs and parallel run gets more words, ``{}`` of find -exec
is a file name; see ``_xargs`` and ``_parallel``)."""

from __future__ import annotations

import os
from typing import Final

from dsh_permissions import _xargs
from dsh_permissions._git import without_global_options
from dsh_permissions._parallel import PARALLELS, command_words
from dsh_permissions._shell_args import SCRIPT_SHELLS, shell_args
from dsh_permissions._shell_words import Word
from dsh_permissions._wrappers import MULTICALL, WRAPPERS, behind, skip_assignments

__all__ = [
    "SCRIPT_SHELLS",
    "SHELLS",
    "cut",
    "open_prefixes",
    "program_names",
    "script_runs",
    "skip_assignments",
    "starts",
    "variants",
]

#: what runs the script of its ``-c`` option (opened as ``sh -c``'s is): the shells,
#: busybox's and toybox's (``MULTICALL``), and su and script, which give it to a shell
#: (``_wrapper_grammar`` says which of their spellings are not opened)
SHELLS: Final = SCRIPT_SHELLS | MULTICALL | {"su", "script"}
#: programs that run their words as code
_CODE: Final = SHELLS | {"eval"}


def open_prefixes(words: list[str], hole: str | None, raw: list[str] | None = None) -> list[str]:
    """The beginnings of the text the command may become at run time (``_xargs``):
    ``{}`` is a file name (``hole``, find -exec), and what xargs runs gets more words.
    ``raw``: the words as written (``words`` may write a relative path ``./8/host``),
    which parallel's options are read from (``parallel -S 8/host``: a plain sshlogin)."""
    out = cut(words, hole) if hole is not None else []
    options = raw if raw is not None and len(raw) == len(words) else words
    xargs = [i for i in starts(words) if i < len(words) and os.path.basename(words[i]) == "xargs"]
    if len(xargs) > _xargs.MAX_XARGS:  # each costs the length of the command: fail closed
        return [""]
    for index in starts(words):
        if index < len(words) and os.path.basename(words[index]) in PARALLELS:
            found_command = command_words(options, index)
            # an option not known, or no command (the arguments are the commands)
            if found_command is None or found_command[0] == found_command[1]:
                out.append("")
    for index in xargs:
        found = _xargs.xargs_command(words, index)
        if found is None:  # an option not known: where the command starts is not
            out.append("")
            continue
        rest, replace = words[found[0] :] or [_xargs.XARGS_DEFAULT], found[1]
        # without a replace string the input's words follow the command's
        out += cut([*rest, _xargs.INPUT] if replace is None else rest, replace or _xargs.INPUT)
    return out


def cut(words: list[str], hole: str) -> list[str]:
    """The texts of ``words`` up to the first ``hole``; ``""`` (anything) when a shell
    or eval runs the words holding it, whose text is then code."""
    first = next((i for i, w in enumerate(words) if hole in w), None)
    if first is None:
        return []
    if any(os.path.basename(words[i]) in _CODE for i in starts(words) if i < first):
        return [""]
    return _xargs.open_prefixes(variants(words), hole)


def starts(words: list[str]) -> list[int]:
    """The indexes of the words that may be the program (see ``_wrappers.behind``)."""
    start = skip_assignments(words)
    if start < len(words) and os.path.basename(words[start]) in WRAPPERS:
        return [start, *(behind(words, start) or ())]
    return [start]


def program_names(word: str) -> list[str]:
    """The spellings of a program's word deny rules see: as it is, its bare name
    (``/bin/rm`` is also ``rm``) and, given as ``./path``, the path without ``./``
    (``./scripts/deploy.sh`` is also ``scripts/deploy.sh``)."""
    if "/" not in word:
        return [word]
    names = dict.fromkeys([word])
    if base := os.path.basename(word):
        names[base] = None
    if word.startswith("./") and len(word) > 2:
        names[word[2:]] = None
    return list(names)


def variants(words: list[str]) -> list[str | None]:
    """The spellings deny rules see: whole, without assignments, behind wrappers
    (from each word that may be the command, see ``_wrappers.behind``; None among
    them when there are too many such words), with the program's other names
    (``program_names``)."""
    out: list[str | None] = [" ".join(words)]
    start = skip_assignments(words)
    starts = [start]
    if start < len(words) and os.path.basename(words[start]) in WRAPPERS:
        candidates = behind(words, start)
        if candidates is None:
            out.append(None)
            candidates = []
        starts += candidates
    for index in starts:
        rest = words[index:]
        if not rest:
            continue
        out.append(" ".join(rest))
        if "/" in rest[0]:  # /bin/rm is also rm (program_names)
            out.extend([" ".join([name, *rest[1:]]) for name in program_names(rest[0])[1:]])
        # git -C . push: git push (split again: env -S 'git -C . push' is one word)
        tokens = " ".join(rest).split(" ")
        if os.path.basename(tokens[0]) == "git" and (plain := without_global_options(tokens)):
            out.append(" ".join(["git", *plain[1:]]))
    return out


def script_runs(text: str) -> list[str]:
    """A reading that runs a script through a shell or ``source`` (``bash deploy.sh
    prod``, ``sh ./deploy.sh``, ``. ./deploy.sh``, ``source deploy.sh``) or finds it
    through an assigned ``PATH`` (``PATH=. deploy.sh``), read as the script run as a
    program (``./deploy.sh prod``, with its ``program_names``): deny rules written for
    ``./deploy.sh`` see these too. Nothing for a shell given ``-c`` or ``-s``."""
    tokens = text.split(" ")
    start = skip_assignments(tokens)
    if start >= len(tokens):
        return []
    name = os.path.basename(tokens[start])
    at: int | None = None
    if any(t.startswith("PATH=") for t in tokens[:start]):
        at = start
    elif name in (".", "source"):
        at = start + 1 + (tokens[start + 1 : start + 2] == ["--"])
    elif name in SCRIPT_SHELLS:
        at = _script_at(name, tokens, start + 1)
    if at is None or at >= len(tokens) or not tokens[at]:
        return []
    script = tokens[at]
    if not script.startswith("/"):
        script = "./" + script.removeprefix("./")
    rest = tokens[at + 1 :]
    return [" ".join([name, *rest]) for name in program_names(script)]


def _script_at(name: str, tokens: list[str], first: int) -> int | None:
    """Where the script file of the shell ``name`` stands among ``tokens`` (its
    arguments from ``first``, read by ``_shell_args``), or None (``-c``, ``-s``, none).
    Arguments the shell reads in a way not known (asked about): the first word not
    starting with ``-`` or ``+`` may be the script."""
    args = tuple(Word(t, t) for t in tokens[first:])
    found = shell_args(name, args)
    if found.why is not None:
        return next((first + i for i, w in enumerate(args) if w.text[:1] not in "-+"), None)
    if found.command or found.stdin or not found.files:
        return None
    return first + next(i for i, w in enumerate(args) if w is found.files[0])
