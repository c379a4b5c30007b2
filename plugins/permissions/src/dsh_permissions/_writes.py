"""The files a command writes, for deny and ask rules of the form ``bash(> path)``.

An output redirection is a part of its own, ``> path`` (``_command_text.redirect``). A
program told to write a file writes it without one: ``cp x .env``, ``echo x | tee
.env``, ``sed -i s/a/b/ .env``. So for the programs below (also behind a wrapper: each
word that may be the command it runs, ``_wrappers.behind``), each file they are told to
write is also read as ``> path``, as a redirection's target is (canonical, in each
directory the shell may be in, look-alikes folded), and those readings are added to the
command's own for deny and ask rules. Allow rules never see them: a command allowed
before is allowed still, and ``deny: bash(> .env)`` now also covers ``cp x .env``.

- ``tee``: every operand;
- ``cp``, ``mv``, ``install``, ``ln`` and ``link``: the destination (the last operand,
  or each ``-t`` directory), and the name each source gets in it (``cp src/.env .``
  writes ``./.env``; ``cp --parents``: its path); ``ln`` given one operand, its name
  here; ``mv --exchange``: its sources too;
- ``dd``: ``of=FILE``;
- ``sed -i`` / ``--in-place``: the files it edits (``_reader_args``);
- ``truncate``: every operand;
- ``sort``, ``shuf`` ``-o`` / ``--output``; ``curl -o`` / ``--output``, ``-D`` /
  ``--dump-header``, ``-c`` / ``--cookie-jar``, ``--trace``, ``--trace-ascii``,
  ``--stderr``, ``--libcurl``, ``--etag-save``; ``wget -O`` / ``--output-document``,
  ``-o`` / ``--output-file``, ``-a`` / ``--append-output``, ``--save-cookies``: the
  option's value (read generously: the letter anywhere in a cluster, ``curl -sSo
  .env``);
- ``uniq``: its second operand;
- ``find``: the file after ``-fprint``, ``-fprint0``, ``-fls`` and ``-fprintf``;
- ``rsync`` and ``scp``: every operand after the first that is not on another host,
  and the name each source gets in the last (``rsync -R``: its path too, below a
  ``/./``; ``--no-R`` may follow), and rsync's ``--log-file``, ``--write-batch``
  and ``--only-write-batch``;
  ``patch``: the file it patches (its first operand), ``-o`` and ``-r`` /
  ``--reject-file``; ``touch``: every operand;
- the backups they make of what a destination held (``cp -S v y .en`` writes ``.env``,
  ``sed -i'.e*'``, ``patch -B``: ``_backups``).

Behind ``xargs`` (or ``parallel``), or given a ``{}`` that ``find -exec`` fills in,
where a writer writes is only known when it runs: any deny or ask rule for a
redirection could cover it (``Subject.open``, as for ``xargs git``).

A word only the shell fills in makes the command a value only known when it runs
already (``_command_text``). A file reached through a link an earlier command of the
line made, or through ``/proc/self``, is not known either, as for a redirection.
Others are not looked into (see the docs' Limits): ``git checkout`` and the unpackers
write files their inputs name, ``sed``'s own ``w FILE``, ``curl -O``, ``perl -i``, a
script.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Final

from dsh_permissions._backups import backups
from dsh_permissions._file_words import part
from dsh_permissions._getopt import OPERAND, long_option, may_give, scan
from dsh_permissions._made_links import parsed
from dsh_permissions._option_variables import BACKUP_VARIABLES, set_for
from dsh_permissions._reader_args import file_words
from dsh_permissions._shell_words import Word
from dsh_permissions._subjects import Subject
from dsh_permissions._wrappers import WRAPPERS, behind, skip_assignments

__all__ = ["WRITERS", "with_writes", "written_files"]

_TEES: Final = frozenset({"tee", "gtee"})
_COPIES: Final = frozenset({"cp", "gcp", "mv", "gmv", "install", "ginstall", "ln", "gln", "link"})
_SEDS: Final = frozenset({"sed", "gsed"})
#: the programs whose files are the values of options: each one's letter ("": none)
#: and long name (curl's and wget's logs, headers and cookies: what the server sent)
_OUTPUTS: Final = {
    **dict.fromkeys(("sort", "gsort", "shuf", "gshuf"), (("o", "--output"),)),
    "curl": (
        *(("o", "--output"), ("D", "--dump-header"), ("c", "--cookie-jar")),
        *(("", "--trace"), ("", "--trace-ascii"), ("", "--stderr"), ("", "--libcurl")),
        ("", "--etag-save"),
    ),
    "wget": (
        *(("O", "--output-document"), ("o", "--output-file"), ("a", "--append-output")),
        ("", "--save-cookies"),
    ),
}
#: rsync's and patch's options that write a file (a log, a batch, the rejects)
_OTHER_OUTPUTS: Final = {
    "rsync": (("", "--log-file"), ("", "--write-batch"), ("", "--only-write-batch")),
    "patch": (("o", "--output"), ("r", "--reject-file")),
}
#: find's actions that write the file named after them
_FIND_WRITES: Final = frozenset({"-fprint", "-fprint0", "-fls", "-fprintf"})
#: rsync's and scp's short options that take a value (a remote destination writes here
#: nothing)
_REMOTE_COPIES: Final = {"rsync": "eBfMT@", "scp": "cDFiJloPSX"}
WRITERS: Final = frozenset(
    {*_TEES, *_COPIES, *_SEDS, *_OUTPUTS, "dd", "gdd", "truncate", "gtruncate", "uniq", "guniq"}
    | {"find", "gfind", "touch", "gtouch", "patch", *_REMOTE_COPIES}
)
#: they give the program behind them words from their input: where it writes is not known
_FEEDERS: Final = frozenset({"xargs", "parallel", "sem"})
#: the beginning every ``> path`` spelling has: a deny or ask rule for a redirection
#: could cover a write whose file is only known when the command runs (``_xargs``)
_ANY_WRITE: Final = "> "


def written_files(words: tuple[Word, ...]) -> tuple[list[Word], bool]:
    """The files the simple command ``words`` (its assignments first) is told to write
    (see the module), generous where a word may be the program behind a wrapper; and
    whether a writer may get more words when it runs (behind ``xargs``, or given a
    ``{}`` find -exec fills in), so that it may write any file."""
    texts = [w.text for w in words]
    start = skip_assignments(texts)
    if start >= len(words):
        return [], False
    places = [start]
    if os.path.basename(texts[start]) in WRAPPERS:
        places += behind(texts, start) or []
    found: list[Word] = []
    fed = False
    for index in places:
        name = os.path.basename(texts[index])
        if name in WRITERS:
            args = words[index + 1 :]
            written = list(_written(name, args))
            suffix_set = set_for(BACKUP_VARIABLES, texts[:index])
            made, unknown = backups(name, args, written, suffix_set)
            found.extend([*written, *made])
            fed = fed or unknown
            fed = fed or any(os.path.basename(texts[i]) in _FEEDERS for i in places if i < index)
            fed = fed or any("{}" in t for t in texts[index + 1 :])
    return found, fed


def with_writes(
    subject: Subject, writes: list[Subject], moved: bool, fed: bool, linked: bool = False
) -> Subject:
    """``subject`` (a command's) with the ``> path`` readings of the files it writes
    for deny and ask rules; one that cannot be known makes the command a value only
    known when it runs (not after a change of directory, where every relative name is
    read in each place the shell may be, unless ``linked``: an earlier command of the
    line may have made a link, which such a name may go through). ``fed``: where it
    writes comes from its input or a file name find gives (any deny or ask rule for a
    redirection could cover it)."""
    if not writes and not fed:
        return subject
    deny = tuple(dict.fromkeys([*subject.deny, *(r for w in writes for r in w.deny)]))
    why = subject.unknown
    if linked or not moved:
        why = why or next((w.unknown for w in writes if w.unknown is not None), None)
    allow = () if why else subject.allow
    opened = (*subject.open, _ANY_WRITE) if fed else subject.open
    return replace(subject, deny=deny, unknown=why, allow=allow, open=opened)


def _written(name: str, args: tuple[Word, ...]) -> Iterator[Word]:
    texts = [a.text for a in args]
    if name in _TEES:
        yield from (args[r.at] for r in scan(texts, 0) if r.option == OPERAND)
    elif name in _COPIES:
        yield from _destinations(name, args, _given(texts, "--parents"))
        if _given(texts, "--exchange"):  # mv --exchange: each source gets what was there
            yield from parsed(args)[1]
    elif name in ("dd", "gdd"):
        yield from (part(a, a.text[3:]) for a in args if a.text.startswith("of="))
    elif name in _SEDS:
        if any(_in_place(t) for t in texts):
            yield from (w for w, operand in file_words(name, args) if operand)
    elif name in ("truncate", "gtruncate"):
        reads = scan(texts, 0, "sr", ("--size", "--reference"))
        yield from (args[r.at] for r in reads if r.option == OPERAND)
    elif name in _REMOTE_COPIES:
        yield from _remote_copy(name, args)
        yield from _option_values(args, _OTHER_OUTPUTS.get(name, ()))
    elif name in ("touch", "gtouch"):
        reads = scan(texts, 0, "drt", ("--date", "--reference"))
        yield from (args[r.at] for r in reads if r.option == OPERAND)
    elif name == "patch":
        reads = scan(texts, 0, "BDFioprVYzd", ("--output", "--input", "--directory"))
        yield from [args[r.at] for r in reads if r.option == OPERAND][:1]
        yield from _option_values(args, _OTHER_OUTPUTS[name])
    elif name in ("find", "gfind"):
        yield from (args[i + 1] for i, t in enumerate(texts[:-1]) if t in _FIND_WRITES)
    elif name in ("uniq", "guniq"):
        reads = scan(texts, 0, "fsw", ("--skip-fields", "--skip-chars", "--check-chars"))
        operands = [args[r.at] for r in reads if r.option == OPERAND]
        yield from operands[1:2]
    else:
        yield from _option_values(args, _OUTPUTS[name])


def _in_place(text: str) -> bool:
    """``sed -i``, ``-i.bak``, ``-ni``, ``--in-place``: read generously (a letter
    anywhere in a cluster)."""
    if text.startswith("--"):
        return long_option(text, "--in-place")
    return may_give(text, "-i")


def _given(texts: list[str], long: str) -> bool:
    """Whether the long option ``long`` (maybe shortened) stands before ``--``."""
    options = texts[: texts.index("--")] if "--" in texts else texts
    return any(t.startswith("--") and long_option(t, long) for t in options)


def _kept(source: Word, whole: bool, cut: bool = False) -> str:
    """The name ``source`` gets in a destination directory: its last part, or, when
    ``whole`` (``cp --parents``, ``rsync -R``), its path (``cut``, rsync's: below a
    ``/./`` in it, only what follows; cp keeps all of it)."""
    if not whole:
        return os.path.basename(source.text.rstrip(os.sep))
    text = source.text.rpartition(f"{os.sep}.{os.sep}")[2] if cut else source.text
    return text.lstrip(os.sep)


def _destinations(name: str, args: tuple[Word, ...], whole: bool = False) -> Iterator[Word]:
    """Where ``cp``, ``mv``, ``install``, ``ln`` or ``link`` writes: the destination,
    and the name each source gets inside it when it is a directory (``whole``: its
    path, ``cp --parents``)."""
    _, operands, named = parsed(args)
    if named:
        places, sources = named, operands
    elif len(operands) > 1:
        places, sources = operands[-1:], operands[:-1]
    else:
        if name in ("ln", "gln") and operands:  # ln -s ../x: ./x
            yield Word(os.path.basename(operands[0].text.rstrip(os.sep)) or ".", operands[0].raw)
        return
    for place in places:
        yield place
        for source in sources:
            base = _kept(source, whole)
            if base and not source.dynamic:
                text = os.path.join(place.text, base)
                yield Word(text, text, dynamic=place.dynamic, tilde=place.tilde)


def _remote_copy(name: str, args: tuple[Word, ...]) -> Iterator[Word]:
    """rsync's and scp's operands after the first (an option's value not known may
    stand last), and the names the sources get in the last; none on another host."""
    reads = scan([a.text for a in args], 0, _REMOTE_COPIES[name])
    operands = [args[r.at] for r in reads if r.option == OPERAND]
    local = [w for w in operands if ":" not in w.text.split(os.sep, 1)[0]]
    yield from (w for w in local if w is not operands[0])
    relative = name == "rsync" and any(
        may_give(t, "-R") or (t.startswith("--") and long_option(t, "--relative"))
        for t in (a.text for a in args)
    )
    # -R read generously: its path and (--no-R, --no-relative after it) its last part
    kinds = (False, True) if relative else (False,)
    if len(operands) > 1 and operands[-1] in local:
        for source in operands[:-1]:
            on_host = source.text.split(os.sep, 1)[0]
            text = source.text.rsplit(":", 1)[-1] if ":" in on_host else source.text
            bases = dict.fromkeys(_kept(Word(text, source.raw), w, cut=True) for w in kinds)
            for base in bases:
                if base and not source.dynamic:
                    path = os.path.join(operands[-1].text, base)
                    yield Word(path, path, tilde=operands[-1].tilde)


def _option_values(args: tuple[Word, ...], options: tuple[tuple[str, str], ...]) -> Iterator[Word]:
    """The values of the ``options`` (``-LETTER`` / ``LONG``; "": no letter): a long
    one maybe shortened, ``--long=value`` or the next word; a short one wherever its
    letter stands in a cluster (``-sSo FILE``, ``-oFILE``), the rest of its word or the
    next word."""
    for i, word in enumerate(args):
        text = word.text
        if text == "--":
            return
        following = args[i + 1] if i + 1 < len(args) else None
        for letter, long in options:
            if text.startswith("--"):
                option, equals, value = text.partition("=")
                if long_option(option, long):
                    if equals:
                        yield part(word, value)
                    elif following is not None:
                        yield following
            elif text.startswith("-") and letter and letter in text[1:]:
                rest = text[text.index(letter, 1) + 1 :]
                if rest:
                    yield part(word, rest)
                elif following is not None:
                    yield following
