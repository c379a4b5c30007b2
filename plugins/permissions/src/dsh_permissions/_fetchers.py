"""What curl and wget read that their words do not name as they stand (``_reads``):
curl globs the files of ``-T`` and the URLs it is given (``-T '{a,.env}'``,
``file:///w/.e[n-n]v``) and decodes a file URL's escapes (``file:///w/.%65nv``), and
each reads a config file that an environment variable points to (``CURL_HOME=.``
reads ``./.curlrc``, ``WGETRC=cfg``), which may name files to send. Which files these
are is not known when the command is checked (an unknown read). A config file named
on the command line (``curl -K cfg``, ``wget --config=cfg``) is a name list
(``_name_lists``). Fail closed: a glob is taken for one even after ``-g``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from dsh_permissions._file_words import part
from dsh_permissions._getopt import long_option
from dsh_permissions._shell_words import Word

__all__ = ["fetched_unknown"]

#: the environment variables that choose a program's config file
_CONFIG_VARIABLES: Final = {
    "curl": frozenset({"CURL_HOME", "CURLRC", "HOME", "XDG_CONFIG_HOME"}),
    "wget": frozenset({"WGETRC", "SYSTEM_WGETRC", "HOME"}),
}
#: curl's short options that take a value (a cluster ends at the first of them)
_CURL_VALUES: Final = "AbcCdDeEFHKmoPQrtTuUwxXyYz"


def fetched_unknown(program: str, args: tuple[Word, ...], before: tuple[Word, ...]) -> str | None:
    """Why what curl or wget (``program``, given ``args``) reads is not known, or None.
    ``before``: the words before it (``CURL_HOME=. curl``, ``env WGETRC=cfg wget``)."""
    variables = _CONFIG_VARIABLES.get(program)
    if variables is None:
        return None
    for word in before:
        name, equals, _ = word.text.partition("=")
        if equals and name in variables:
            return (
                f"{program} reads the config file {name} points to ({word.raw}), "
                "which may name files to send"
            )
    if program == "curl":
        for word in _globbed(args):
            if any(c in word.text for c in "{[%"):
                return (
                    f"curl expands the globs and escapes in {word.raw!r}: which file it "
                    "reads is not known"
                )
    return None


def _globbed(args: tuple[Word, ...]) -> Iterator[Word]:
    """The words curl globs as files it reads: the values of ``-T`` /
    ``--upload-file``, and each file URL."""
    take = False
    for word in args:
        text = word.text
        if take:
            take = False
            yield word
        elif text[:5].casefold() == "file:":
            yield word
        elif text.startswith("--"):
            take = long_option(text, "--upload-file")
        elif text.startswith("-"):
            for at, letter in enumerate(text[1:], 2):
                if letter in _CURL_VALUES:
                    if letter == "T":
                        if text[at:]:
                            yield part(word, text[at:])
                        else:
                            take = True
                    break
