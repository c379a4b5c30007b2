"""The credentials written into the proxy variables (``HTTP_PROXY``, ``HTTPS_PROXY``,
``ALL_PROXY``, in any case): ``http://user:pass@host:port``. The HTTP client sends them
to the proxy (``Proxy-Authorization: Basic <base64 of user:pass>``), and a proxy, or a
server behind a forward proxy, may quote that header or the password in an error
answer: so they are secrets as the model API keys are
(``dsh._secrets.secret_values``), hidden from error messages, log records, session
files and tool results.

Every name of the environment is looked at, in any case as the client reads them,
where the secrets are gathered once: when dsh.yml is loaded, a harness or a loop
starts, and an HTTP client is made (``dsh.llm._pool.client``, which reads its proxies
then: what it finds is remembered, so hidden from then on). The keys gathered for each
log record and each HTTP model step (``known_keys``) look up only the six names in
lower and upper case: one of another case (``Http_Proxy``) set in the process after it
started is hidden from log records once a client has been made."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import unquote, urlsplit

#: The proxy variables the HTTP client reads, by their names in lower case: httpx takes
#: its proxies from urllib's ``getproxies()``, which reads a name in any case
#: (``Http_Proxy`` too), and uses the http, https and all ones; not ``NO_PROXY`` (the
#: hosts reached directly) nor another scheme's (``wss_proxy``, ``ftp_proxy``).
PROXY_VARIABLES: Final = frozenset(("http_proxy", "https_proxy", "all_proxy"))

#: Their names as they are written most often, in lower and in upper case: all that is
#: looked up when the keys are gathered for a log record or an HTTP model step
#: (``dsh._secrets.known_keys``), ~2x cheaper than a look at every name of the
#: environment.
WRITTEN: Final = tuple(spelt for name in sorted(PROXY_VARIABLES) for spelt in (name, name.upper()))


def proxy_variables(env: Mapping[str, str]) -> list[str]:
    """The names of ``env``'s variables the HTTP client takes a proxy from (any case of
    ``PROXY_VARIABLES``), each name of ``env`` looked at."""
    return [name for name in env if name.lower() in PROXY_VARIABLES]


def proxy_secrets(env: Mapping[str, str] | None = None, *, every_case: bool = True) -> set[str]:
    """The password, ``user:pass`` and the base64 of ``user:pass`` of each proxy
    variable of ``env`` (default: the process's) whose URL has them, as written and
    percent-decoded (the client decodes them before it sends them); short ones are
    dropped later (``longest_first``). Every name of ``env`` is looked at, as the
    client reads them; with ``every_case`` false, only those in lower and upper case
    (``WRITTEN``) are looked up."""
    found: set[str] = set()
    values = os.environ if env is None else env
    for name in proxy_variables(values) if every_case else WRITTEN:
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
