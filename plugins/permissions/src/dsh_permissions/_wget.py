"""wget's ``-e`` / ``--execute`` commands (``.wgetrc`` lines) that run nothing
(``-e robots=off``): taken out of its arguments before ``_command_options`` looks for
what makes it run a command (any other ``-e`` may: ``-e use_askpass=CMD``).
"""

from __future__ import annotations

from typing import Final

from dsh_permissions._getopt import long_option

__all__ = ["without_plain_commands"]

#: wget's ``-e`` commands that run nothing (lower case, without ``-`` and ``_``)
_PLAIN_WGETRC: Final = frozenset(
    {"robots", "tries", "timeout", "wait", "waitretry", "verbose", "quiet", "progress"}
    | {"checkcertificate", "useragent", "maxredirect", "retryconnrefused"}
)


def without_plain_commands(args: list[str]) -> list[str]:
    """``args`` of wget without its ``-e``/``--execute`` commands that run nothing
    (``-e robots=off``: ``_PLAIN_WGETRC``)."""
    out: list[str] = []
    skip = False
    for at, text in enumerate(args):
        if skip:
            skip = False
            continue
        execute = text.startswith("--") and long_option(text, "--execute")
        if (text == "-e" or (execute and "=" not in text)) and _plain_wgetrc(
            args[at + 1] if at + 1 < len(args) else ""
        ):
            skip = True
        elif not (
            (text.startswith("-e") and _plain_wgetrc(text[2:]))
            or (execute and _plain_wgetrc(text.partition("=")[2]))
        ):
            out.append(text)
    return out


def _plain_wgetrc(command: str) -> bool:
    """Whether the wgetrc ``command`` (``NAME=VALUE``) runs nothing (``_PLAIN_WGETRC``)."""
    name, equals, value = command.partition("=")
    key = name.strip().lower().replace("-", "").replace("_", "")
    return bool(equals) and "\n" not in value and key in _PLAIN_WGETRC
