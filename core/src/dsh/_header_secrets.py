"""Which values of a model's ``headers:`` are credentials.

A header written into ``headers:`` is there to reach a gateway or a proxy, and a
credential can go under any name (``Cookie: CF_Authorization=...``,
``X-Authentication``, ``X-Goog-Iap-Jwt-Assertion``): so, failing closed, every value
that looks like a token (``_token_like``: 16 characters or more, no space, letters and
digits) is taken for one, and every value of a header named as a secret's
(``x-api-key``, ``x-gateway-token``), but not those of the headers known to carry none
(``_NOT_SECRET``: the client's name, what it accepts and sends, caching, the API's
version and beta flags, OpenAI's organization and project ids, OpenRouter's app name
and address). Words (``X-Environment: production``, ``Cache-Control: no-cache``) are
not: they are hidden wherever they are written, in a person's prompt too. A value with an
authentication scheme (``Bearer <token>``; any value of a header whose name ends with
``authorization``) is a credential after its scheme only: a placeholder token
(``Bearer ollama``) is then too short to be hidden, and hiding its scheme with it would
garble ordinary text. A cookie's values are each one too (a server may quote one).
``dsh._secrets.header_secrets`` keeps those of 8 characters or more.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from dsh._secret_names import is_secret_name

__all__ = ["credential_like", "header_credentials"]

#: Headers whose values are not secrets (lowercased); and any name ending with
#: ``-version`` or ``-beta`` (``anthropic-version``, ``OpenAI-Beta``, ``api-version``).
_NOT_SECRET: Final = frozenset({
    "user-agent", "accept", "accept-encoding", "accept-language", "accept-charset",
    "content-type", "openai-organization", "openai-project", "http-referer", "referer",
    "x-title", "cache-control", "connection", "prefer",
})  # fmt: skip
_NOT_SECRET_ENDS: Final = ("-version", "-beta")
#: Authentication schemes (lowercased) a value of any header may begin with.
_SCHEMES: Final = frozenset({"bearer", "basic", "token", "digest", "apikey", "negotiate"})


def header_credentials(headers: Mapping[str, str]) -> set[str]:
    """The credentials in ``headers``, of any length, as written and without the
    whitespace around them (as they are sent)."""
    found: set[str] = set()
    for name, value in headers.items():
        lowered = name.strip().lower()
        if lowered in _NOT_SECRET or lowered.endswith(_NOT_SECRET_ENDS):
            continue
        words = value.split(None, 1)
        if lowered.endswith("authorization") or (len(words) == 2 and words[0].lower() in _SCHEMES):
            found.add(words[-1].strip() if words else "")
            continue
        if lowered == "cookie":
            found.update((value, value.strip()))
            found.update(pair.partition("=")[2].strip() for pair in value.split(";"))
        elif _token_like(value.strip()) or _secret_named(name):
            found.update((value, value.strip()))
    return found


def credential_like(value: str) -> bool:
    """Whether ``value`` (an option's named as a cookie) looks like a credential: an
    authentication scheme and a value (``Bearer <token>``), a cookie's ``name=value``,
    or a token (``_token_like``); not a file's name nor a mode (``cookies.txt``, ``all``)."""
    words = value.split(None, 1)
    scheme = len(words) == 2 and words[0].lower() in _SCHEMES
    return scheme or "=" in value or _token_like(value.strip())


def _token_like(value: str) -> bool:
    """Whether ``value`` looks like a token, not words: 16 characters or more with no
    space, holding letters and digits (four digits, or one and letters of both cases)."""
    if len(value) < 16 or any(char.isspace() for char in value):
        return False
    digits = sum(char.isdigit() for char in value)
    mixed = any(char.islower() for char in value) and any(char.isupper() for char in value)
    letters = any(char.isalpha() for char in value)
    return letters and (digits >= 4 or (digits >= 1 and mixed))


def _secret_named(name: str) -> bool:
    return is_secret_name(name, query=False) or name.lower().endswith("authentication")
