"""The credentials written into the proxy variables (``HTTP_PROXY``, ``HTTPS_PROXY``,
``ALL_PROXY``, in upper or lower case): ``http://user:pass@host:port``. The HTTP
client sends them to the proxy (``Proxy-Authorization: Basic <base64 of user:pass>``),
and a proxy, or a server behind a forward proxy, may quote that header or the password
in an error answer: so they are secrets as the model API keys are
(``dsh._secrets.secret_values``), hidden from error messages, log records, session
files and tool results."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import unquote, urlsplit

#: The proxy variables the HTTP client reads, as they are written: in lower and in upper
#: case. (It reads any case, ``Http_Proxy`` too; looking each name up is ~6x cheaper
#: than scanning the environment, and this runs with every gathering of the keys: once
#: an HTTP model step, once a log record.)
PROXY_VARIABLES: Final = tuple(
    spelt for name in ("http_proxy", "https_proxy", "all_proxy") for spelt in (name, name.upper())
)


def proxy_secrets(env: Mapping[str, str] | None = None) -> set[str]:
    """The password, ``user:pass`` and the base64 of ``user:pass`` of each proxy
    variable of ``env`` (default: the process's) whose URL has them, as written and
    percent-decoded (the client decodes them before it sends them); short ones are
    dropped later (``longest_first``)."""
    found: set[str] = set()
    values = os.environ if env is None else env
    for name in PROXY_VARIABLES:
        value = values.get(name)
        if value and "@" in value:
            found.update(_userinfo_secrets(value.strip()))
    return found


def _userinfo_secrets(url: str) -> Iterable[str]:
    """The secrets of ``url``'s user name and password: the password and the base64 of
    ``user:pass`` (none without a password: a user name alone is no credential)."""
    try:
        netloc = urlsplit(url if "://" in url else f"http://{url}").netloc
    except ValueError:  # a bad IPv6 address: its userinfo is still before the last @
        netloc = url.partition("://")[2] or url
    userinfo = netloc.rpartition("@")[0]
    user, colon, password = userinfo.partition(":")
    if not colon or not password:
        return ()
    found: set[str] = set()
    for each_user, each_password in ((user, password), (unquote(user), unquote(password))):
        # not ``user:pass`` itself: redact hides a long enough start of a secret too, so
        # the user name (often the login: home paths) would be *** everywhere
        found.update((each_password, _basic(f"{each_user}:{each_password}")))
    return found


def _basic(pair: str) -> str:
    """The base64 of ``pair`` (``user:pass``) as HTTP Basic authentication sends it."""
    return base64.b64encode(pair.encode("utf-8", "surrogateescape")).decode("ascii")
