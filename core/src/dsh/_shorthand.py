"""Where the base URL starts in the ``-m`` shorthand ``provider:model@base_url``: at the
first ``@`` followed by ``http://`` or ``https://`` (a model's name may hold ``@`` and
``:``, as ``claude-3-5-sonnet@20240620`` does). One rule for the two readers of a
``-m``: ``dsh.llm.providers`` builds the model from it, and the ``dsh`` command's error
path (``dsh._cli_keys``) finds the keys written into it, without importing httpx. And
how a ``-m`` is shown where it is quoted (an error, a command to paste): its secrets
hidden (``hidden_shorthand``)."""

from __future__ import annotations

import re
from typing import Final

from dsh._secrets import hide_parameters, redact

__all__ = ["hidden_shorthand", "split_base_url"]

_URL_START: Final = re.compile(r"@(?=https?://)")
_USERINFO: Final = re.compile(r"(?<=://).*@")  # to the last @: a password may hold / @ # or spaces


def split_base_url(text: str) -> tuple[str, str | None]:
    """``text`` before its first ``@http://`` or ``@https://``, and the URL after that
    ``@`` (None without one): ``"p:m@http://h/v1"`` -> ``("p:m", "http://h/v1")``. The
    URL is all the rest, spaces and further ``@http://`` included."""
    head, *url = _URL_START.split(text, maxsplit=1)
    return head, (url[0] if url else None)


def hidden_shorthand(text: str) -> str:
    """``text``, a ``-m`` shorthand, with what may be a secret as ``***``: a URL's
    ``user:password@``, the value of a secret-named query or fragment parameter
    (``?api-key=...``), a port that is not a number (a key pasted there), and each key
    dsh knows (``redact``). The part before the base URL and the URL are each hidden
    alone: a model part's ``?key=...`` ends at its ``@``."""
    head, url = split_base_url(text)
    if url is None:
        return redact(hide_parameters(_USERINFO.sub("***@", text)))
    hidden_url = hide_parameters(_hide_port(_USERINFO.sub("***@", url)))
    return redact(f"{hide_parameters(_USERINFO.sub('***@', head))}@{hidden_url}")


def _hide_port(url: str) -> str:
    """``url`` with a port that is not a number (a key pasted there) as ``***``."""
    scheme, sep, rest = url.partition("://")
    end = min((at for at in map(rest.find, "/?#") if at != -1), default=len(rest))
    host, colon, port = rest[:end].rpartition(":")
    if colon and port and not port.isdigit() and "]" not in port:
        return f"{scheme}{sep}{host}:***{rest[end:]}"
    return url
