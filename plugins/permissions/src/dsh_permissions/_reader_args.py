"""Which words of a reading program's arguments may name a file it reads (``_reads``).

Generously: every operand, what follows ``=`` or ``@`` in a word (``--file=.env``,
``dd if=.env``, ``curl -d @.env``), the file of a curl form (``-F 'f=<.env'``,
``-F 'f=@".env";type=text/plain'``), what follows the first letter of a short option
(``-T.env``) and ``f`` in a cluster of them (``-rf.env``). A value of an option known
to take one is skipped (``head -n 5``, ``grep -e PAT``), and so is the pattern or
program of ``grep``, ``sed``, ``awk``, ``jq`` (their first operand, unless an option
such as ``-e`` / ``--regexp`` / ``-f`` gives it). Options are read as GNU getopt reads
them: a long option may be shortened to any prefix (``--regex=`` is ``--regexp=``),
and a cluster of short ones ends at the first that takes a value (``-drecurse`` is
``-d recurse``, no ``-e``). A word only the shell fills in (``$x``) where a value or
the pattern is taken may split into more words, or be an option (``-r``): it is taken
for a file, which the shell only names when it runs (asked about), unless it is
quoted in a value's place or in the pattern's place after ``--``. With
``POSIXLY_CORRECT`` set (``_option_variables``) getopt stops at the first operand: every
later word is an operand as well (``head x -n .env`` reads ``-n`` and ``.env``), and the
words of both readings are given (the pattern may be another word: stricter).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from dsh_permissions._file_words import part
from dsh_permissions._getopt import long_option
from dsh_permissions._shell_words import Word

__all__ = ["GREPS", "file_words", "searches_here"]

GREPS: Final = frozenset(
    {"grep", "egrep", "fgrep", "ggrep", "zgrep", "bzgrep", "xzgrep", "rg", "ag", "ack"}
    # the compressed files' greps (gzip's, bzip2's, xz's, zstd's, unzip's zipgrep)
    | {"zegrep", "zfgrep", "bzegrep", "bzfgrep", "xzegrep", "xzfgrep", "lzgrep"}
    | {"lzegrep", "lzfgrep", "zstdgrep", "zipgrep"}
)
#: searches that search the current directory when given no file (``grep -r`` only
#: with its recursive option)
_RECURSIVE: Final = frozenset({"rg", "ag", "ack"})
#: grep's options that search below the directories given, or the current one
_RECURSE_SHORT: Final = frozenset({"-r", "-R"})
_RECURSE_LONG: Final = ("--recursive", "--dereference-recursive")
#: grep's options whose value says what to do with a directory (``recurse``)
_DIRECTORIES: Final = frozenset({"-d", "--directories"})


@dataclass(frozen=True)
class _Grammar:
    """What a reading program's options are, as far as the files it reads go."""

    #: short letters and long options whose value is the next word (or the rest of it)
    short: str = ""
    long: tuple[str, ...] = ()
    #: long options that take no value (known, so a prefix of one is placed)
    flags: tuple[str, ...] = ()
    #: options that give the pattern or program (the first operand is then a file)
    script: frozenset[str] = frozenset()
    #: options whose value is a file it reads
    files: frozenset[str] = frozenset()
    #: its first operand is its pattern or program unless an option gives it
    scripted: bool = False


_GREP: Final = _Grammar(
    "efmABCdD",
    (
        *("--regexp", "--file", "--max-count", "--after-context", "--before-context"),
        *("--context", "--directories", "--devices", "--label", "--include", "--exclude"),
        *("--exclude-from", "--exclude-dir", "--binary-files", "--group-separator"),
    ),
    _RECURSE_LONG,
    frozenset({"-e", "-f", "--regexp", "--file"}),
    frozenset({"-f", "--file", "--exclude-from"}),
    scripted=True,
)
#: rg, ag and ack each their own (ag's ``-D`` is ``--debug``, ``-f`` ``--follow``); an
#: option left out is taken for a flag, so its value for the pattern (stricter). ag's
#: ``-A``/``-B``/``-C`` (and ``--after=N``) take a value only when it is a number, ack's
#: context options maybe none: flags here
_RG: Final = _Grammar(
    "ABCdEefgjMmrTt",
    (
        *("--regexp", "--file", "--after-context", "--before-context", "--context"),
        *("--max-count", "--glob", "--iglob", "--type", "--type-not", "--type-add"),
        *("--type-clear", "--max-depth", "--encoding", "--replace", "--threads"),
        *("--max-columns", "--ignore-file", "--pre", "--pre-glob", "--colors", "--color"),
        *("--context-separator", "--field-context-separator", "--field-match-separator"),
        *("--path-separator", "--sort", "--sortr", "--max-filesize", "--engine"),
        *("--dfa-size-limit", "--regex-size-limit", "--hostname-bin", "--generate"),
        "--hyperlink-format",
    ),
    script=frozenset({"-e", "-f", "--regexp", "--file"}),
    files=frozenset({"-f", "--file", "--ignore-file"}),
    scripted=True,
)
_AG: Final = _Grammar(
    "GgmpW",
    (
        *("--ackmate-dir-filter", "--color-line-number", "--color-match", "--color-path"),
        *("--depth", "--filename-pattern", "--file-search-regex", "--ignore"),
        *("--ignore-dir", "--max-count", "--pager", "--path-to-ignore", "--width"),
        "--workers",
    ),
    script=frozenset({"-g", "--filename-pattern"}),
    files=frozenset({"-p", "--path-to-ignore"}),
    scripted=True,
)
_ACK: Final = _Grammar(
    "",
    (
        *("--match", "--ackrc", "--files-from", "--ignore-dir", "--ignore-directory"),
        *("--noignore-dir", "--ignore-file", "--type", "--type-add", "--type-set"),
        *("--type-del", "--max-count", "--output", "--pager", "--range-start"),
        "--range-end",
    ),
    script=frozenset({"--match"}),
    files=frozenset({"--ackrc", "--files-from"}),
    scripted=True,
)
_SED: Final = _Grammar(
    "efl",
    ("--expression", "--file", "--line-length"),
    script=frozenset({"-e", "-f", "--expression", "--file"}),
    files=frozenset({"-f", "--file"}),
    scripted=True,
)
_AWK: Final = _Grammar(
    "fvFEeilW",
    (
        *("--file", "--exec", "--source", "--assign", "--field-separator", "--include"),
        "--load",
    ),
    script=frozenset({"-f", "-E", "-e", "--file", "--exec", "--source"}),
    files=frozenset({"-f", "-E", "-i", "--file", "--exec", "--include"}),
    scripted=True,
)
_JQ: Final = _Grammar(
    "f",
    ("--from-file",),
    script=frozenset({"-f", "--from-file"}),
    files=frozenset({"-f", "--from-file"}),
    scripted=True,
)
_HEAD: Final = _Grammar("nc", ("--lines", "--bytes"))
_NONE: Final = _Grammar()
_GRAMMARS: Final = {
    **dict.fromkeys(GREPS, _GREP),
    "rg": _RG,
    "ag": _AG,
    "ack": _ACK,
    **dict.fromkeys(("sed", "gsed"), _SED),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _AWK),
    **dict.fromkeys(("jq", "yq"), _JQ),
    **dict.fromkeys(("head", "ghead", "tail", "gtail"), _HEAD),
    "cut": _Grammar(
        "dfbc",
        ("--delimiter", "--output-delimiter", "--fields", "--bytes", "--characters"),
    ),
    "sort": _Grammar("tkS", ("--field-separator", "--key", "--buffer-size")),
}


@dataclass(frozen=True)
class _Arg:
    """One word of the arguments, as the program reads it."""

    word: Word
    #: ``option``, ``value`` (of the options ``names``), ``operand``, ``end`` (``--``)
    role: str
    #: the options a word gives, or whose value it is (a shortened long option: each
    #: known one it may be)
    names: tuple[str, ...] = ()
    #: the value given in the same word (``-drecurse``, ``--dir=recurse``)
    attached: str | None = None
    #: an operand after ``--``
    after_end: bool = False


def _long_names(grammar: _Grammar, name: str) -> tuple[str, ...]:
    """The known long options ``name`` may be: itself when known, else each one it is
    a prefix of (getopt takes any unambiguous prefix); ``(name,)`` if none."""
    known = (*grammar.long, *grammar.flags, *grammar.script)
    if name in known:
        return (name,)
    found = tuple(dict.fromkeys(n for n in known if n.startswith("--") and long_option(name, n)))
    return found or (name,)


def _args(grammar: _Grammar, args: tuple[Word, ...], posix: bool = False) -> Iterator[_Arg]:
    """The words of ``args`` as getopt reads them (``posix``: ``POSIXLY_CORRECT`` is
    set, the first operand ends the options)."""
    options = True
    owed: tuple[str, ...] = ()  # the options whose value the next word is
    for word in args:
        text = word.text
        if owed:
            yield _Arg(word, "value", owed)
            owed = ()
        elif options and text == "--":
            options = False
            yield _Arg(word, "end")
        elif (
            options
            and text.startswith("-")
            and len(text) > 1
            and (not word.dynamic or _globbed_value(grammar, word))
        ):
            if text.startswith("--"):
                name, equals, value = text.partition("=")
                names = _long_names(grammar, name)
                yield _Arg(word, "option", names, value if equals else None)
                # valued only if each option it may be is (else it is ambiguous, or a
                # flag: the next word is then taken for a file, stricter)
                if not equals and all(n in grammar.long for n in names):
                    owed = names
                continue
            letters: list[str] = []
            for at, letter in enumerate(text[1:], 2):
                letters.append(f"-{letter}")
                if letter in grammar.short:  # the rest of the word, or the next one
                    yield _Arg(word, "option", tuple(letters), text[at:] or None)
                    owed = () if text[at:] else (f"-{letter}",)
                    break
            else:
                yield _Arg(word, "option", tuple(letters))
        else:
            yield _Arg(word, "operand", after_end=not options)
            options = options and not posix


def _globbed_value(grammar: _Grammar, word: Word) -> bool:
    """Whether a word only the shell fills in is a long option whose value, not a file,
    is a pattern the shell expands (``--include=*.py``): each word it becomes is that
    option, whose value is no file."""
    raw = word.raw
    name, _, value = raw.partition("=")
    names = _long_names(grammar, name)
    return (
        raw.startswith("--")
        and not any(c in raw for c in "$`\\'\"")
        and not any(c in name for c in "*?[{")
        and all(n in grammar.long and n not in grammar.files for n in names)
        and bool(value)
    )


def _splits(word: Word) -> bool:
    """Whether a word only the shell fills in may become more words (or none): any but
    one held whole in double quotes (``"$x"``)."""
    raw = word.raw
    inner = raw[1:-1].replace("\\\\", "").replace('\\"', "")
    return not (len(raw) > 1 and raw[0] == raw[-1] == '"' and '"' not in inner)


def file_words(
    program: str, args: tuple[Word, ...], *, pattern: bool = True, posix: bool = False
) -> Iterator[tuple[Word, bool]]:
    """The words of ``args`` that may name a file the program reads (see the module),
    each with whether it is an operand (not an option's value). ``posix``:
    ``POSIXLY_CORRECT`` may be set: also the words read so."""
    yield from _file_words(program, args, pattern, posix=False)
    if posix:
        yield from _file_words(program, args, pattern, posix=True)


def _file_words(
    program: str, args: tuple[Word, ...], pattern: bool, *, posix: bool
) -> Iterator[tuple[Word, bool]]:
    grammar = _GRAMMARS.get(program, _NONE)
    parsed = list(_args(grammar, args, posix))
    given = any(a.role == "option" and not grammar.script.isdisjoint(a.names) for a in parsed)
    pattern_first = pattern and grammar.scripted and not given
    for arg in parsed:
        word, text = arg.word, arg.word.text
        if arg.role == "option":
            if not text.startswith("--") and len(text) > 2:
                # a value given in the same word: tar -T.env, curl -K.env, and what
                # follows f in a cluster (grep -rf.env)
                yield part(word, text[2:]), False
                if "f" in text[2:]:
                    yield part(word, text.split("f", 1)[1]), False
        elif arg.role == "value":
            if not grammar.files.isdisjoint(arg.names) or (word.dynamic and _splits(word)):
                yield word, False  # grep -f FILE; head -n $x (5 .env)
            continue
        elif arg.role == "operand" and pattern_first:
            pattern_first = False
            if word.dynamic and (_splits(word) or not arg.after_end):
                yield word, True  # sed -n $x ('p .env'), grep "$x" (-r)
            continue
        elif arg.role == "operand":
            yield word, True
        yield from _marked(word)


def _marked(word: Word) -> Iterator[tuple[Word, bool]]:
    """What follows ``=`` or ``@`` in a word, and ``file:`` at its start (openssl's
    ``-passin file:PATH``), and the files of a curl form in it."""
    if word.dynamic:
        return
    for mark in ("=", "@"):
        if mark in word.text:
            yield part(word, word.text.split(mark, 1)[1]), False
    if word.text[:5].casefold() == "file:" and word.text[5:7] != "//":
        yield part(word, word.text[5:]), False
    for name in _form_files(word.text):
        yield part(word, name), False


def _form_files(text: str) -> list[str]:
    """The files of a curl form ``NAME=@FILE`` / ``NAME=<FILE`` (``<``: the field's
    value is the file's contents), and of each ``@``/``<`` after it (``;headers=@FILE``),
    each up to the next ``;`` attribute, unquoting a ``"..."`` name; generously each
    name of a ``,`` list too."""
    content = text.partition("=")[2]
    if content[:1] not in ("@", "<"):
        return []
    found = [_form_name(content[at + 1 :]) for at, c in enumerate(content) if c in "@<"]
    return list(dict.fromkeys(n for name in found for n in (name, *name.split(","))))


def _form_name(rest: str) -> str:
    """The file name at the start of ``rest``: a ``"..."`` one unquoted, else up to ``;``."""
    if not rest.startswith('"'):
        return rest.split(";", 1)[0]
    name: list[str] = []
    at = 1
    while at < len(rest) and rest[at] != '"':
        at += 1 if rest[at] == "\\" and at + 1 < len(rest) else 0
        name.append(rest[at])
        at += 1
    return "".join(name)


def searches_here(program: str, args: tuple[Word, ...], *, fed: bool) -> bool:
    """Whether a search given no file searches the current directory: rg, ag and ack
    unless ``fed`` (their input is a pipe or a file: they search it); grep with ``-r``
    or ``-d recurse`` whatever its input, as getopt and grep take them shortened:
    ``--recur``, ``-d rec``, ``--dir=recurse`` (or when a word only the shell fills in
    sets an option)."""
    if program in _RECURSIVE:
        # rg --files lists the names of the files it would search, reading none
        return not fed and not (program == "rg" and any(a.text == "--files" for a in args))
    if program not in GREPS:
        return False
    for arg in _args(_GREP, args):
        value = arg.word.text if arg.role == "value" else arg.attached
        if arg.role == "option" and (
            not _RECURSE_SHORT.isdisjoint(arg.names)
            or any(n.startswith("--") and n in _RECURSE_LONG for n in arg.names)
        ):
            return True
        if (
            arg.role in ("option", "value")
            and not _DIRECTORIES.isdisjoint(arg.names)
            and value is not None
            and (arg.word.dynamic or (value and "recurse".startswith(value)))
        ):
            return True
    return False
