"""PostgreSQL URLs for messages: every password replaced, wherever libpq would read one.

A libpq connection string is a URL (``postgresql://user:secret@host/db?password=...``)
or key/value pairs (``host=h password='se cret'``); both may name a ``password`` and an
``sslpassword`` (the client key's), and a ``dbname`` may itself be a connection string.
``passwords_in`` collects each of them as written and as libpq decodes it, from what
psycopg's parser reads and from the text itself (so a string the parser refuses is
covered too, and a candidate too many only hides more); ``scrub`` replaces them in a
message (libpq quotes parts of a malformed string back in its errors);
``hide_password`` is the string itself scrubbed.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from dsh_persistence._errors import PersistenceError

__all__ = ["HIDDEN", "check_scheme", "hide_password", "passwords_in", "scrub"]

HIDDEN = "***"
_SECRET_KEYS = ("password", "sslpassword")
_QUERY_PASSWORD = re.compile(r"[?&](?:ssl)?password=(?P<value>[^&]*)", re.IGNORECASE)
_PAIR_PASSWORD = re.compile(
    r"(?:^|\s)(?:ssl)?password\s*=\s*(?P<value>'(?:[^'\\]|\\.)*'?|(?:\\.|[^\s\\'])+)",
    re.IGNORECASE,
)
_ESCAPE = re.compile(r"\\(.)")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_LIBPQ_SCHEMES = ("postgresql", "postgres")  # libpq compares them as written


def _is_url(conninfo: str) -> bool:
    """Any ``scheme://``, not only libpq's: a URL of another scheme (SQLAlchemy's
    ``postgresql+psycopg://``) holds its password where libpq's does, and is refused
    (``check_scheme``) with the password hidden."""
    return _SCHEME.match(conninfo) is not None


def check_scheme(conninfo: str, source: str) -> None:
    """Refuse (``PersistenceError``) a URL whose scheme libpq does not read, which it
    would take for a malformed key/value string: the message names the setting
    (``source``) and the scheme, never the rest of the URL."""
    found = _SCHEME.match(conninfo)
    if found is not None and found[1] not in _LIBPQ_SCHEMES:
        setting = source.split(";", 1)[0] if source else "the PostgreSQL URL"
        raise PersistenceError(
            f"{setting}: scheme {found[1]!r} is not one libpq reads; use postgresql://"
        )


def _written(conninfo: str) -> list[str]:
    """The passwords as the text writes them (and decoded): a URL's userinfo up to the
    first ``@`` (libpq's reading) and up to the last (an ``@`` left unencoded), its
    query's; a key/value string's values, quoted or with backslash escapes."""
    found: list[str] = []
    if _is_url(conninfo):
        rest = conninfo.split("://", 1)[1]
        if "@" in rest:
            for userinfo in (rest.split("@", 1)[0], rest.rsplit("@", 1)[0]):
                found.append(userinfo.partition(":")[2])
        found += [m["value"] for m in _QUERY_PASSWORD.finditer(conninfo)]
        found += [unquote(value) for value in found]
    else:
        for m in _PAIR_PASSWORD.finditer(conninfo):
            value = m["value"]
            found += [value, _ESCAPE.sub(r"\1", value[1:-1] if value[:1] == "'" else value)]
    return found


def _parsed(conninfo: str) -> list[str]:
    """The passwords psycopg's parser reads (none when it refuses the string or psycopg
    is not installed), a ``dbname`` that is a connection string searched too."""
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        return []
    try:
        params = conninfo_to_dict(conninfo)
    except Exception:  # a malformed string: what the text writes still counts
        return []
    found = [str(params[key]) for key in _SECRET_KEYS if params.get(key)]
    dbname = str(params.get("dbname") or "")
    if dbname != conninfo and ("=" in dbname or _is_url(dbname)):
        found += passwords_in(dbname)
    return found


def passwords_in(conninfo: str) -> list[str]:
    """Every password ``conninfo`` holds, as written and as libpq decodes it, longest
    first (so that a password containing another is replaced whole)."""
    found = {p for p in [*_written(conninfo), *_parsed(conninfo)] if p}
    return sorted(found, key=len, reverse=True)


def scrub(message: str, conninfo: str) -> str:
    """``message`` with every password of ``conninfo`` replaced by ``***``."""
    for password in passwords_in(conninfo):
        message = message.replace(password, HIDDEN)
    return message


def hide_password(conninfo: str) -> str:
    """``conninfo`` with each password in it replaced by ``***``."""
    return scrub(conninfo, conninfo)
