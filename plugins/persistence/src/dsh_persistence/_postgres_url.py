"""PostgreSQL URLs for messages: the password replaced, wherever libpq would read it.

A libpq connection string is a URL (``postgresql://user:secret@host/db?password=...``)
or key/value pairs (``host=h password='se cret'``). ``hide_password`` gives the string
with every password in it shown as ``***``; ``scrub`` removes the same passwords from a
message (libpq quotes parts of a malformed string back in its errors).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["HIDDEN", "hide_password", "passwords_in", "scrub"]

HIDDEN = "***"
#: The userinfo of a URL: ``scheme://`` then everything up to the last ``@`` of the
#: authority (a password may hold ``@`` where it is not percent-encoded).
_USERINFO = re.compile(r"^(?P<head>postgres(?:ql)?://)(?P<userinfo>[^/?#]*)@", re.IGNORECASE)
_QUERY_PASSWORD = re.compile(r"(?P<key>[?&]password=)(?P<value>[^&#]*)", re.IGNORECASE)
_PAIR_PASSWORD = re.compile(
    r"(?P<key>(?:^|\s)password\s*=\s*)(?P<value>'(?:[^'\\]|\\.)*'?|\S*)", re.IGNORECASE
)


def _is_url(conninfo: str) -> bool:
    return conninfo[:13].lower().startswith(("postgresql://", "postgres://"))


def hide_password(conninfo: str) -> str:
    """``conninfo`` with each password in it replaced by ``***``."""
    if not _is_url(conninfo):
        return _PAIR_PASSWORD.sub(lambda m: m["key"] + HIDDEN if m["value"] else m[0], conninfo)

    def userinfo(match: re.Match[str]) -> str:
        user, colon, password = match["userinfo"].partition(":")
        shown = HIDDEN if password else ""
        return f"{match['head']}{user}{colon}{shown}@"

    hidden = _USERINFO.sub(userinfo, conninfo, count=1)
    return _QUERY_PASSWORD.sub(lambda m: m["key"] + (HIDDEN if m["value"] else ""), hidden)


def passwords_in(conninfo: str) -> list[str]:
    """Every password ``conninfo`` holds, as written and as libpq decodes it."""
    found: list[str] = []
    if _is_url(conninfo):
        match = _USERINFO.match(conninfo)
        if match is not None:
            found.append(match["userinfo"].partition(":")[2])
        found += [m["value"] for m in _QUERY_PASSWORD.finditer(conninfo)]
        found += [unquote(value) for value in found]
    else:
        for m in _PAIR_PASSWORD.finditer(conninfo):
            value = m["value"]
            found.append(value)
            if value.startswith("'"):
                found.append(re.sub(r"\\(.)", r"\1", value.strip("'")))
    # longest first, so that a password containing another is replaced whole
    return sorted({p for p in found if p}, key=len, reverse=True)


def scrub(message: str, conninfo: str) -> str:
    """``message`` with every password of ``conninfo`` replaced by ``***``."""
    for password in passwords_in(conninfo):
        message = message.replace(password, HIDDEN)
    return message
