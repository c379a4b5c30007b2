"""The files a command reads, for the ``read`` tool's deny and ask rules.

``deny: read(.env)`` keeps ``.env`` out of the ``read`` tool (and ``grep``); a command
allowed by ``bash(cat *)`` would print it all the same. So for a command of a known
program that reads the files it is given (``READERS``: ``cat``, ``head``, ``grep``,
``sed``, ``tar``, ``cp``, ...; also behind a wrapper such as ``sudo`` or ``timeout``),
and for a shell given a script or startup file (``sh -v .env`` prints it, no ``-c``; its
arguments read by ``_shell_args``), each word that may name a file is resolved as a
``read`` path is (from the workspace, ``..`` and symlinks resolved, and for a directory
the symlinks below it; a symbolic link's target made by ``ln -s``, or kept by
``mv``/``cp`` moving a link, also from where the link lands, ``_made_links``), and the
``read`` tool's deny and ask rules are checked against it. After a command that may make
or move a link, each file a later command of the line reads through a place that command
writes is unknown (``_relinked``). So is the file of every input redirection
(``< .env``), whatever the program. The words taken for files are a generous guess (an
option's value may be taken for a file too; ``_reader_args``), which can only make a
call stricter; but the destination of ``mv`` and ``cp`` is written, not read, and left
out (``_destinations.written``). What a file word only gets its value from when the
shell runs (``cat $F``, ``cat *.env``, ``find -exec cat {}``, ``xargs cat``, a relative
path after ``cd``, behind ``env -C dir`` or in ``find -execdir``, a path through
``/proc/self``), what a program reads when it takes its files' names from a list or its
input (``tar -T list``, ``zip -@``: ``_name_lists``), and what one whose own name is
only known then reads (``$c .env``) cannot be checked: it is asked about when such a
rule has a pattern. So is what a command that may become any command reads
(``parallel --slf .env ...``: ``_command_text.any_command``).
Other programs (``python``, ``git show HEAD:.env``, a script) are not looked into.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Final

from dsh_permissions._destinations import written
from dsh_permissions._fetchers import fetched_unknown
from dsh_permissions._file_words import file_path, part, per_process, unknown
from dsh_permissions._getopt import long_option
from dsh_permissions._git import reads_worktree
from dsh_permissions._located import located
from dsh_permissions._made_links import LINKERS, link_targets, moved_targets
from dsh_permissions._name_lists import LIST_ONLY, LISTERS, names_listed
from dsh_permissions._option_variables import POSIXLY_CORRECT, set_for
from dsh_permissions._path_search import looked_up
from dsh_permissions._reader_args import GREPS, file_words, searches_here
from dsh_permissions._relinked import (
    MOVERS,
    leads_elsewhere,
    relinked,
    relinks,
    set_relinked,
)
from dsh_permissions._shell_args import SCRIPT_SHELLS, shell_args
from dsh_permissions._shell_words import Command, Word
from dsh_permissions._subjects import Subject, path_subject
from dsh_permissions._tar import TARS, options_set, reads_there
from dsh_permissions._wrapper_grammar import unmodelled
from dsh_permissions._wrappers import (
    MAX_CANDIDATES,
    WRAPPERS,
    behind,
    changes_directory,
    skip_assignments,
)

__all__ = ["READERS", "command_reads", "read_subjects"]

READERS: Final = frozenset(
    {
        # print and dump
        *("cat", "gcat", "tac", "nl", "head", "ghead", "tail", "gtail", "less", "zless"),
        *("more", "zmore", "most", "bat", "batcat", "view", "strings", "od", "xxd"),
        *("hexdump", "hd", "base64", "base32", "basenc", "uuencode", "pr", "fold", "fmt"),
        *("expand", "unexpand", "rev", "column", "iconv", "ptx", "tsort", "look", "m4"),
        *("cpp", "source", ".", "pygmentize", "pv"),
        # the pagers and comparisons of compressed files (gzip's, xz's, bzip2's, zstd's)
        *("xzless", "xzmore", "bzless", "bzmore", "lzless", "lzmore", "zstdless"),
        *("zdiff", "zcmp", "xzdiff", "xzcmp", "bzdiff", "bzcmp"),
        # editors (they read the file named, and may print or send it on)
        *("ed", "ex", "vi", "vim", "nvim", "nano", "emacs", "vimdiff", "rvim", "gvim"),
        *("rview",),
        # count and sum (a short secret's sum gives it away)
        *("wc", "sum", "cksum", "b2sum", "md5sum", "sha1sum", "sha224sum", "sha256sum"),
        *("sha384sum", "sha512sum", "shasum", "sha3sum", "xxhsum", "b3sum", "rhash"),
        *("crc32",),
        # search and transform
        *GREPS,
        *("sed", "gsed", "awk", "gawk", "mawk", "nawk", "jq", "yq", "sort", "uniq"),
        *("shuf", "cut", "paste", "join", "comm", "diff", "diff3", "sdiff", "cmp"),
        # copy, move, link, split, pack, encrypt, send
        *("cp", "mv", "ln", "link", "install", "rsync", "scp", "dd", "split", "csplit"),
        *("tar", "zip", "unzip", "7z", "gzip", "gunzip", "bzip2", "xz", "zstd", "zcat"),
        *("bzcat", "xzcat", "zstdcat", "lz4", "lz4cat", "unlz4", "openssl", "gpg", "curl", "wget"),
        *("pigz", "unpigz", "lzip", "lzop", "brotli", "lzcat", "gzcat", "pzstd", "unzstd"),
        *("bunzip2", "compress", "uncompress"),
        # HTTPie and xh send a file a request item names (f@.env, f=@.env, f:=@.env)
        *("http", "https", "xh", "xhs"),
        *LISTERS,
    }
)
#: builtins that look a script's name up in PATH (``_path_search``)
_SOURCES: Final = frozenset({"source", "."})
#: programs that take their files' names from their input: what they read is unknown
_FROM_INPUT: Final = frozenset({"xargs", "parallel"})
#: the programs whose words are looked at for files read (``find`` for a list only,
#: git for its subcommands reading the directory's files: ``_git.reads_worktree``)
_LOOKED_AT: Final = READERS | SCRIPT_SHELLS | LIST_ONLY | {"git"}


def command_reads(
    command: Command, root: str, moved: bool, reads: bool | None, dirs: tuple[str, ...]
) -> tuple[Subject, ...]:
    """The files ``command`` reads (see the module), when they are looked for."""
    start = skip_assignments([w.text for w in command.words])
    if reads is None:  # the links it may make still count for later program words
        if (relinking := relinks(command.words[start:], root, moved, start > 0)) is not None:
            set_relinked(*relinking)
        return ()
    return read_subjects(command, start, root, moved, reads, dirs)


def read_subjects(
    command: Command,
    start: int,
    root: str,
    moved: bool,
    links: bool,
    dirs: tuple[str, ...] = (),
) -> tuple[Subject, ...]:
    """The ``path`` subjects of the files one simple command reads (``start``: where
    its words begin after its ``NAME=value`` assignments). ``moved``: an
    earlier ``cd`` changed the directory; ``links``: look for the symlinks below a
    directory; ``dirs``: the directories it may run in then (a relative name is not
    known, and is also read as the file it names in each, for deny and ask rules)."""
    words = command.words[start:]
    files = [r.target for r in command.redirects if r.kind == "<"]
    # rg, ag and ack search their input, not the directory, when it is a pipe or a
    # file (rg not when it is a device: /dev/null)
    fed = command.piped or any(not w.text.startswith("/dev/") for w in files)
    # an earlier cd, or tar -C, makes a relative file name another file
    elsewhere = (
        "an earlier cd (find -execdir, a trap) may have changed the directory" if moved else None
    )
    shifted = moved  # it runs elsewhere (tar -C only unpacks elsewhere: _destinations)
    found: dict[Subject, None] = {}
    made: list[tuple[Word, str]] = []  # a symbolic link's target, and where the link lies
    texts = [w.text for w in words]
    programs = _programs(texts)
    if programs is None:
        why = f"more than {MAX_CANDIDATES} words behind a wrapper may be the command it runs"
        found[unknown(texts[0], why)] = None
        programs = []
    # su -c, flock -c, unshare; tar --to-command, RSYNC_RSH=... rsync (its assignments too)
    if texts and (hidden := unmodelled([w.text for w in command.words])) is not None:
        found[unknown(texts[0], hidden)] = None
    if (named_later := _unnamed(words, texts)) is not None:  # $c .env, sudo $(echo cat)
        why = (
            f"the program {named_later.raw!r} only gets its name when the shell runs: "
            "it may be any program, reading any file"
        )
        found[unknown(named_later.raw, why)] = None
    for index, from_input in programs:
        program = os.path.basename(texts[index])
        if program == "git":  # git grep --no-index TOKEN; git's other reads: docs, Limits
            if (tree := reads_worktree(texts[index:])) is not None:
                found[unknown(program, tree)] = None
            continue
        if program in _FROM_INPUT:  # xargs -a FILE: the names come from FILE
            files.extend(_arg_files(words[index + 1 :]))
            continue
        if (listed := names_listed(program, words[index + 1 :])) is not None:
            found[unknown(program, listed)] = None  # tar -T list, zip -@
        if program in LIST_ONLY:
            continue  # find -files0-from: only the list; its operands are no reads
        if from_input:
            found[unknown(program, f"the files {program} reads come from its input")] = None
        before = (*command.words[:start], *words[:index])
        if (fetched := fetched_unknown(program, words[index + 1 :], before)) is not None:
            found[unknown(program, fetched)] = None  # curl -T '{a,.env}', CURL_HOME=.
        if program in TARS and (hidden := options_set(w.text for w in before)) is not None:
            found[unknown(program, hidden)] = None  # TAR_OPTIONS=-C/etc tar cf x.tar pw
        if changes_directory(texts, index):
            elsewhere = elsewhere or "a wrapper runs it in another directory"
            shifted = True
        args = words[index + 1 :]
        if program in SCRIPT_SHELLS:  # sh -v .env: the script file
            script_files, not_known = _script_files(program, args)
            searched, not_found = looked_up(program, script_files, (w.text for w in before))
            files.extend([*script_files, *searched])  # bash NAME: also NAME in PATH
            if (not_known := not_known or not_found) is not None:
                found[unknown(program, not_known)] = None
            continue
        # rg --files lists the files below its operands: each one is a path, none a pattern
        listing = program == "rg" and any(a.text == "--files" for a in args)
        # POSIXLY_CORRECT=1 head x -n .env: getopt stops at x, -n and .env are files
        posix = set_for(POSIXLY_CORRECT, (w.text for w in before))
        found_words = list(file_words(program, args, pattern=not listing, posix=posix))
        dests = written(program, args)
        if posix:  # cp x -t .env y: -t and .env are sources; only the last is written
            dests = tuple(d for d in dests if d is args[-1])
        if dests:  # cp a.txt keys/, tar x -C out: not read
            found_words = [
                (w, operand)
                for w, operand in found_words
                if not any(w is d for d in dests) and (operand or w not in dests)
            ]
        operands = [w for w, _ in found_words]
        named = any(operand for _, operand in found_words)  # an operand, not an option's
        if not named and searches_here(program, args, fed=fed):
            operands.append(Word(".", "."))  # rg PATTERN, grep -r PATTERN: the directory
        if program in TARS and reads_there([a.text for a in args]):
            elsewhere = elsewhere or "tar -C changes the directory"
        files.extend(operands)
        if program in _SOURCES:  # . NAME: also NAME in PATH
            searched, not_found = looked_up(program, operands, (w.text for w in before))
            files.extend(searched)
            if not_found is not None:
                found[unknown(program, not_found)] = None
        bases = dirs if elsewhere is not None else (root,)
        if program in LINKERS:  # ln -s ../.env src/x: a target is named from src
            made.extend(link_targets(args, bases))
        if program in MOVERS:  # mv a x/y/: a's relative target is named from x/y
            made.extend(moved_targets(args, bases))
    earlier = relinked()  # ln -s ../../.env a && mv a x/y/ && cat x/y/a
    for word in dict.fromkeys(files):  # each file once (cat a a a ...)
        if not word.text:  # an empty word (``--file=``) names no file
            continue
        path = file_path(word, root, elsewhere)
        if earlier is not None and (
            not isinstance(path, str) or leads_elsewhere(os.path.join(root, path))
        ):
            lead = (
                f"{earlier} earlier in the line, so {word.raw!r} may lead elsewhere (run "
                "as a command of its own, the read is checked once the links are made)"
            )
            found[unknown(word.raw, lead)] = None
        else:
            found[path_subject(path, root, links) if isinstance(path, str) else path] = None
            if elsewhere is not None:
                found.update(dict.fromkeys(_there(word, root, dirs, links)))
    for word, directory in dict.fromkeys(made):
        if per_process(os.path.join(directory, word.text)):
            why = f"{word.raw!r} is the target of a link made through /proc ({directory})"
            found[unknown(word.raw, why)] = None
        elif (place := located(word, directory)) is not None:
            found.update(dict.fromkeys(path_subject(p, root, links) for p in place.both()))
    if (relinking := relinks(words, root, shifted, start > 0)) is not None:
        set_relinked(*relinking)  # for what the rest of the line reads
    return tuple(found)


def _there(word: Word, root: str, dirs: tuple[str, ...], links: bool) -> list[Subject]:
    """The file a relative ``word`` names in each of ``dirs`` (its lexical and real
    path), as subjects only deny and ask rules of the read tool see."""
    if "://" in word.text:  # a URL to curl, wget or git, not a file here
        return []
    out: list[Subject] = []
    for directory in dirs:
        place = located(word, directory)
        if place is None or per_process(os.path.join(directory, word.text)):
            continue
        out.extend(path_subject(p, root, links) for p in place.both())
    return out


def _arg_files(args: tuple[Word, ...]) -> Iterator[Word]:
    """The files of xargs's ``-a FILE`` / ``--arg-file=FILE`` (also ``-0a FILE``,
    ``-aFILE``). Which of its options take a value is not known, nor so where the
    command it runs starts: every later word is looked at (stricter, never looser).
    Also parallel's ``:::: FILE ...``: the files after it, up to the next ``:::``."""
    take = listed = False
    for word in args:
        text = word.text
        if text in ("::::", "::::+", ":::", ":::+"):
            listed = text.startswith("::::")
        elif take or listed:
            yield word
            take = False
        elif text.startswith("--") and long_option(text, "--arg-file"):
            value = text.partition("=")[2]
            if value:
                yield part(word, value)
            else:
                take = True
        elif text.startswith("-") and not text.startswith("--") and "a" in text:
            value = text.split("a", 1)[1]
            if value:
                yield part(word, value)
            else:
                take = True


def _script_files(program: str, args: tuple[Word, ...]) -> tuple[list[Word], str | None]:
    """The files the shell ``program`` reads (``_shell_args``): its startup files
    (``--rcfile FILE``) and its script file (``sh -v .env``; not the script of ``-c``,
    nor with ``-s``), and why its arguments are not known, or None. Not known: each
    word not starting with ``-`` or ``+`` may be a file it reads (stricter, never looser)."""
    found = shell_args(program, args)
    if found.why is not None:
        return [w for w in args if not w.text.startswith(("-", "+"))], found.why
    script = found.files if not found.command and not found.stdin else ()
    return [*found.startup, *script], None


def _unnamed(words: tuple[Word, ...], texts: list[str]) -> Word | None:
    """A word that may be the program the command runs, known only when the shell
    runs (``$c .env``, ``$(echo cat) .env``, ``sudo $c .env``), or None."""
    if not words:
        return None
    if words[0].dynamic:
        return words[0]
    if os.path.basename(texts[0]) in WRAPPERS:
        return next((words[i] for i in behind(texts, 0) or () if words[i].dynamic), None)
    return None


def _programs(texts: list[str]) -> list[tuple[int, bool]] | None:
    """Where a reading program (or ``xargs``) stands: the command's first word after
    its assignments, and behind a wrapper each word that may be the command it runs
    (``_wrappers.behind``), with whether a wrapper before it feeds it names from its
    input (``xargs cat``). None: too many words may be that command."""
    if not texts:
        return []
    name = os.path.basename(texts[0])
    if name in _LOOKED_AT:
        return [(0, False)]
    if name not in WRAPPERS:
        return []
    candidates = behind(texts, 0)
    if candidates is None:
        return None
    out: list[tuple[int, bool]] = [(0, False)] if name in _FROM_INPUT else []
    from_input = name in _FROM_INPUT
    for later in candidates:
        name = os.path.basename(texts[later])
        if name in _LOOKED_AT or name in _FROM_INPUT:
            out.append((later, from_input))
        from_input = from_input or name in _FROM_INPUT
    return out
