"""Whether a name (a query parameter's, an option's, a header's) is a secret's:
``api_key``, ``apiKey``, ``access_token``, ``X-Amz-Signature``... by its last word."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["COOKIE_NAMES", "HEADER_NAMES", "bare_name", "is_secret_name"]

#: A query parameter holds a secret when its name, lowercased without its separators,
#: ends with one of these (``api_key``, ``apiKey``, ``wskey``, ``access_token``,
#: ``client_secret``, ``X-Amz-Signature``, ``auth``...), or is one of ``_SECRET_NAMES``
#: or ``HEADER_NAMES``
#: (Azure SAS's ``sig``, Azure Functions' ``code``). The end, not any part:
#: ``tokenizer``, ``keyspace``, ``authority``, ``auth_version`` and ``key_id`` name no
#: secret, and their values (a model's name) would be hidden everywhere.
_SECRET_ENDS: Final = (
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "signature",
    "auth",
    "credential",
    "credentials",
    "jwt",
    "bearer",
)
_SECRET_NAMES: Final = frozenset({"sig", "code", "pass", "session", "sessionid", "access"})
#: The names of HTTP headers that carry credentials (``Authorization``,
#: ``Proxy-Authorization``, ``X-Authentication``, ``Cookie``), secrets' as whole names
#: only: ``require_authorization: ask``, ``authentication: oauth``, ``accept_cookies:
#: all`` name modes.
HEADER_NAMES: Final = frozenset({
    "authorization", "proxyauthorization", "xauthentication", "cookie", "cookies",
})  # fmt: skip
#: Of those, the names an option may give a file or a mode by (``cookies: cookies.txt``):
#: an option so named is a secret's when its value looks like one (``misplaced_key``).
COOKIE_NAMES: Final = frozenset({"cookie", "cookies"})
#: Words that end with ``key`` and name no secret; a name whose last word is one of
#: them (``my_monkey``, ``x-hotkey``, ``MONkey``) is not a key's. Only whole words: any
#: other name ending with ``key`` is taken for a key's (``common_key``, ``daemonKey``,
#: ``hot_key``, ``surveymonkey``).
_WORDS_NOT_KEYS: Final = frozenset({
    "monkey", "turkey", "donkey", "hockey", "jockey", "whiskey", "lackey", "hotkey",
    "turnkey", "malarkey",
})  # fmt: skip
_NOT_NAME: Final = re.compile(r"[^a-z0-9]")
#: Where a name's words meet: what is no ASCII letter, or a small letter's capital.
_WORDS: Final = re.compile(r"[^A-Za-z]+|(?<=[a-z])(?=[A-Z])")


def is_secret_name(name: str, *, query: bool = True) -> bool:
    """Whether ``name`` (a query parameter's, an option's) is a secret's by the rule of
    ``_SECRET_ENDS``; ``query=False`` (an option's name): by its end alone, as
    ``sig``, ``code``, ``session`` and ``access`` name secrets in a URL's query only."""
    bare = bare_name(name)
    if bare in _SECRET_NAMES:
        return query
    if bare in HEADER_NAMES:
        return True
    if not bare.endswith(_SECRET_ENDS):
        return False
    words = [word for word in _WORDS.split(name) if word]
    return not words or words[-1].lower() not in _WORDS_NOT_KEYS


def bare_name(name: str) -> str:
    """``name`` lowercased, without its separators and the digits that end it
    (``apikey2``, ``api_key_2``: ``apikey``)."""
    return _NOT_NAME.sub("", name.lower()).rstrip("0123456789")
