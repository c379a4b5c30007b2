"""PostgreSQL URLs for messages: every password hidden, wherever libpq would read one.

A libpq connection string is a URL (``postgresql://user:secret@host/db?password=...``)
or key/value pairs (``host=h password='se cret'``); both may name a ``password`` and an
``sslpassword`` (the client key's), and a ``dbname`` may itself be a connection string.
``hide_password`` replaces each password by its place: a URL's userinfo, a query's
``password=``, a key/value ``password=`` (anywhere in the text: a URL in a ``dbname``
too). ``scrub`` does that to a message (libpq quotes parts of a malformed string back in
its errors) and, besides, replaces each password ``passwords_in`` finds (as written and
as libpq decodes it, from what psycopg's parser reads and from the text itself) where
it stands as a whole token, unless it is short (under 8 characters, the core's minimum
for a secret) or also the user, database, host, port or scheme: replacing ``postgres``
everywhere would make ``database "postgres" does not exist`` unreadable.
``distinct_passwords`` are those that may be hidden in any text. ``check_url`` refuses
what libpq would misread (a scheme it does not know, a NUL it would cut at), and
``not_text`` says why psycopg could not read a string as UTF-8, without its password.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from dsh_persistence._errors import PersistenceError

__all__ = [
    "HIDDEN",
    "NUL",
    "check_url",
    "distinct_passwords",
    "hide_password",
    "not_text",
    "passwords_in",
    "scrub",
]

HIDDEN = "***"
_SECRET_KEYS = ("password", "sslpassword")
#: A query parameter: its key is a password's when, percent-decoded as libpq decodes
#: it, it is one of ``_SECRET_KEYS`` (``pass%77ord`` is ``password``): ``_is_secret``.
_QUERY_PASSWORD = re.compile(r"[?&](?P<key>[^=&#]*)=(?P<value>[^&]*)")
_PAIR_PASSWORD = re.compile(
    r"(?:^|\s)(?:ssl)?password\s*=\s*(?P<value>'(?:[^'\\]|\\.)*'?|(?:\\.|[^\s\\'])+)",
    re.IGNORECASE,
)
_ESCAPE = re.compile(r"\\(.)")
#: A URL's userinfo password: up to the first ``@``, or to a later one when what lies
#: between them holds no ``/`` or ``?`` (an ``@`` left unencoded in the password).
_USERINFO = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^:@/\s]*:"
    r"(?P<value>[^\s@]*(?:@[^\s@/?]*(?=@))*)@"
)
#: A query's password in a message: it ends at a space or a quote too.
_QUERY_PASSWORD_SAID = re.compile(r"[?&](?P<key>[^=&#\s\"']*)=(?P<value>[^&\s\"']*)")
#: Shorter than this, a password is not hidden in text where it does not stand as one
#: (the core's minimum for a secret, ``Harness.add_secrets``).
MIN_DISTINCT = 8
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_LIBPQ_SCHEMES = ("postgresql", "postgres")  # libpq compares them as written
#: Why a string holding a NUL is refused (``check_url``, and at the setting).
NUL = "holds a NUL character (\\0), at which libpq would cut it"
_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _is_url(conninfo: str) -> bool:
    """Any ``scheme://``, not only libpq's: a URL of another scheme (SQLAlchemy's
    ``postgresql+psycopg://``) holds its password where libpq's does, and is refused
    (``check_url``) with the password hidden."""
    return _SCHEME.match(conninfo) is not None


def check_url(conninfo: str, source: str) -> None:
    """Refuse (``PersistenceError``) a URL whose scheme libpq does not read, which it
    would take for a malformed key/value string, and a string holding a NUL, where
    libpq would cut it (connecting to what comes before): the message names the setting
    (``source``) and what is wrong, never the rest of the URL."""
    setting = source.split(";", 1)[0] if source else "the PostgreSQL URL"
    if "\0" in conninfo:
        raise PersistenceError(f"{setting}: {NUL}")
    found = _SCHEME.match(conninfo)
    if found is not None and found[1] not in _LIBPQ_SCHEMES:
        raise PersistenceError(
            f"{setting}: scheme {found[1]!r} is not one libpq reads; use postgresql://"
        )


def not_text(conninfo: str) -> str:
    """Why libpq cannot read ``conninfo``, which psycopg failed to decode or encode as
    UTF-8: a character Python could not decode (a byte of the environment that is not
    UTF-8), or a percent-encoded sequence that is not UTF-8 once decoded, named as the
    URL shows it without its password, else said to be in the password."""
    try:
        conninfo.encode()
    except UnicodeEncodeError:
        return "it holds bytes that are not UTF-8 text, which libpq needs"
    for found in _ESCAPES.finditer(hide_password(conninfo)):
        try:
            unquote(found[0], errors="strict")
        except UnicodeDecodeError:
            return (
                f"{found[0]} is a percent-encoded byte sequence that is not UTF-8 text, "
                "which libpq needs"
            )
    return (
        "the password holds a percent-encoded byte sequence that is not UTF-8 text, "
        "which libpq needs"
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
        found += [m["value"] for m in _QUERY_PASSWORD.finditer(conninfo) if _is_secret(m)]
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


def distinct_passwords(conninfo: str) -> list[str]:
    """The passwords of ``conninfo`` (``passwords_in``) that may be hidden wherever they
    appear: none shorter than ``MIN_DISTINCT``, none that is also the user, database,
    host, port or scheme the string names (or ``postgres``/``postgresql``)."""
    common = _named(conninfo)
    return [p for p in passwords_in(conninfo) if len(p) >= MIN_DISTINCT and p.lower() not in common]


def _named(conninfo: str) -> set[str]:
    """The words ``conninfo`` names besides its passwords, lower-cased."""
    words = {"postgres", "postgresql", "localhost"}
    scheme = _SCHEME.match(conninfo)
    if scheme is not None:
        words.add(scheme[1])
        user = conninfo[scheme.end() :].split("@", 1)[0].partition(":")[0]
        words.add(unquote(user))
    try:
        from psycopg.conninfo import conninfo_to_dict

        params = conninfo_to_dict(conninfo)
    except Exception:  # not installed, or a malformed string
        params = {}
    for key in ("user", "dbname", "host", "hostaddr", "port", "service"):
        words.update(str(params.get(key) or "").split(","))
    return {word.lower() for word in words if word}


def _is_secret(found: re.Match[str]) -> bool:
    """Whether a match of a pattern with a ``key`` group (a query's) names a password."""
    key = found.groupdict().get("key")
    return key is None or unquote(key).lower() in _SECRET_KEYS


def _hide(text: str, pattern: re.Pattern[str]) -> str:
    def hidden(found: re.Match[str]) -> str:
        start, end = found.span("value")
        if start == end or not _is_secret(found):
            return found[0]
        at = found.start()
        return found[0][: start - at] + HIDDEN + found[0][end - at :]

    return pattern.sub(hidden, text)


def hide_password(conninfo: str) -> str:
    """``conninfo`` with each password in it replaced by ``***`` where it stands."""
    if _is_url(conninfo):
        conninfo = _hide(conninfo, _QUERY_PASSWORD)
    return _hide_places(conninfo)


def _hide_places(text: str) -> str:
    """``text`` with the password of each URL userinfo, URL query and ``password=``
    pair in it (a URL in a ``dbname`` too) replaced by ``***``."""
    for pattern in (_USERINFO, _QUERY_PASSWORD_SAID, _PAIR_PASSWORD):
        text = _hide(text, pattern)
    return text


def scrub(message: str, conninfo: str) -> str:
    """``message`` with the passwords of ``conninfo`` replaced by ``***``: where the
    message quotes ``conninfo`` or a part of it that names a password (a userinfo, a
    ``password=``), and each distinct password (``distinct_passwords``) where it stands
    as a whole token."""
    parts = message.split(conninfo) if conninfo else [message]
    message = hide_password(conninfo).join(_hide_places(part) for part in parts)
    for password in distinct_passwords(conninfo):
        token = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(password)}(?![A-Za-z0-9_])")
        message = token.sub(HIDDEN, message)
    return message
