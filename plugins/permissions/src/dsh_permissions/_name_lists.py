"""Programs told to read the files named in a list or in their input (``tar -T list``,
``tar --files-from=-``, ``zip -@``, ``xz --files=list``, ``7z a x.7z @list``,
``7z a x.7z -i@list`` / ``'-i!.env'``, ``cpio -o``, ``sort --files0-from=-``,
``wc --files0-from=list``, ``ack -x``, ``find -files0-from list``, ``sha256sum -c
list``; ``date -f``, ``file -f`` and ``du --files0-from``, which print each line they
cannot read), or in a config
file (``curl -K cfg``, ``wget --config=cfg``): which files they read is not known
when the command is checked, as for ``xargs cat`` (``_reads`` takes them for unknown
reads). Long options are matched as getopt matches them, shortened to any prefix
(``--files`` is tar's ``--files-from``), an exact option name first (tar's ``--file``
is its archive); find's, as find matches them: whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from dsh_permissions._getopt import long_in
from dsh_permissions._shell_words import Word

__all__ = ["LISTERS", "LIST_ONLY", "names_listed"]


@dataclass(frozen=True)
class _Lists:
    #: short option letters (also in a cluster) that make it read names from a list
    letters: str = ""
    #: long options that do (any prefix of them), and options of the same program
    #: that an exact name means instead
    long: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    #: the first word may be a cluster of letters without ``-`` (``tar cTf list``)
    old_style: bool = False
    #: a word starting with ``@`` names a list (``7z a x.7z @list``)
    at_word: bool = False
    #: switches that name files by a list or a wildcard (7z ``-i@list``, ``-ir!*.env``)
    switches: tuple[str, ...] = ()
    #: options written as one word with one dash, matched whole (find's ``-files0-from``)
    words: tuple[str, ...] = ()


_TAR: Final = _Lists("T", ("--files-from",), ("--file",), old_style=True)
_XZ: Final = _Lists(long=("--files", "--files0"))
_LISTS: Final = {
    **dict.fromkeys(("tar", "gtar", "bsdtar"), _TAR),
    "zip": _Lists("@", ("--names-stdin",)),
    **dict.fromkeys(("xz", "unxz", "lzma", "unlzma"), _XZ),
    "zstd": _Lists(long=("--filelist",)),
    "7z": _Lists(at_word=True, switches=("-i", "-ai")),
    **dict.fromkeys(("sort", "wc"), _Lists(long=("--files0-from",))),
    "ack": _Lists("x", ("--files-from",)),
    "pax": _Lists("w"),  # pax -w: the names come from its input when none is given
    # a config file names files to send (upload-file = .env, post_file = .env)
    "curl": _Lists("K", ("--config",)),
    "wget": _Lists(long=("--config",)),
    # cpio -o / -p take the names of the files from their input
    "cpio": _Lists("op", ("--create", "--pass-through")),
    # -c / --check: the sums of the files a list names are compared (a guessed sum of
    # a short secret is told right or wrong)
    **dict.fromkeys(
        (
            *("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum"),
            *("b2sum", "cksum", "shasum", "sha3sum", "b3sum", "xxhsum", "rhash"),
        ),
        _Lists("c", ("--check",)),
    ),
}
#: programs whose operands are no files they read, only the list (GNU find 4.9's
#: ``-files0-from FILE``: its starting points; its errors print them; ``file``'s only
#: say what kind of file each is)
_ONLY_LISTS: Final = {
    "find": _Lists(words=("-files0-from",)),
    # they print each line of the list they cannot read: date's ``invalid date 'LINE'``,
    # file's ``LINE: cannot open``, du's ``cannot access 'LINE'``
    **dict.fromkeys(("date", "gdate"), _Lists("f", ("--file",))),
    "file": _Lists("f", ("--files-from",)),
    **dict.fromkeys(("du", "gdu"), _Lists(long=("--files0-from",))),
}
#: the programs looked at here that read their operands too, and those that do not
LISTERS: Final = frozenset(_LISTS)
LIST_ONLY: Final = frozenset(_ONLY_LISTS)


def names_listed(program: str, args: tuple[Word, ...]) -> str | None:
    """Why the files ``program`` reads are not known (it reads their names from a list
    or its input), or None."""
    lists = _LISTS.get(program) or _ONLY_LISTS.get(program)
    if lists is None:
        return None
    for index, word in enumerate(args):
        text = word.text
        if word.dynamic or text == "--":
            continue  # a word only the shell fills in is checked as a file
        if text.startswith("--"):
            name = text.split("=", 1)[0]
            if name not in lists.exact and long_in(name, lists.long):
                return _why(program, text)
        elif text in lists.words:
            return _why(program, text)
        elif text.startswith(lists.switches):
            return f"{program} reads the files a list or a wildcard names ({text})"
        elif text.startswith("-") or (lists.old_style and index == 0):
            if any(letter in lists.letters for letter in text.lstrip("-")):
                return _why(program, text)
        elif lists.at_word and text.startswith("@"):
            return f"{program} reads the files named in the list {text[1:]!r}"
    return None


def _why(program: str, option: str) -> str:
    return f"{program} reads the files named in a list, a config file or its input ({option})"
