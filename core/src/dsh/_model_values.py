"""The checks of the values of a model's entry in ``dsh.yml`` (``ModelConfig``'s
validators): its ``base_url``, ``headers``, ``api_key_env`` and ``api_key_header``, in
words that never quote a value (it may be a key)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit

from dsh._config_yaml import AtKey
from dsh._unexpanded import HEADER_VARIABLE, VARIABLE

__all__ = [
    "checked_headers",
    "checked_key_header",
    "checked_url",
    "checked_variable",
    "may_be_a_key",
]

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# an HTTP header name (RFC 9110's token)
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# headers the adapters set themselves: the key cannot travel in one of them
_OWN_HEADERS = frozenset(
    {"accept", "anthropic-version", "connection", "content-length", "content-type", "host"}
)
# a header's value: visible ASCII, spaces and tabs inside (no line break, no control)
_HEADER_VALUE = re.compile(r"[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?|")


def _url_problem(error: ValueError) -> str:
    """What urllib found wrong with a URL, in words that quote none of it."""
    text = str(error)
    if "cast to integer" in text:
        return "the port is not a number"
    if "out of range" in text:
        return "the port is out of range (0-65535)"
    if "IPv6" in text:
        return "its [IPv6 address] is not valid"
    return "urllib cannot read it"


def checked_url(value: str) -> str:
    """A ``base_url``: an http(s) URL with a host, no credentials, variable or fragment."""
    if "@" in value.partition("://")[2]:  # before parsing: a password may hold / or #
        raise ValueError(
            "must not hold a user name or password (user:password@): they would be "
            "shown in errors, logs and sessions; name the key with api_key_env"
        )
    hint = "; dsh.yml does not expand variables: write the URL itself"
    if not (VARIABLE.search(value.partition("?")[0]) or "${" in value):
        hint = ""  # a query's $top=10 is the server's
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:  # urllib's text quotes the port: a key pasted there
        raise ValueError(f"is not a valid URL ({_url_problem(exc)}){hint}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"must be an http:// or https:// URL with a host, e.g. http://host:port/v1{hint}"
        )
    if hint:  # sent as written: a host named ${HOST}, a key ${AZURE_KEY}
        raise ValueError(f"holds a variable ($NAME or ${{NAME}}){hint}")
    if "[" in value or not (value.isascii() and value.isprintable()):  # httpx, which
        from httpx import URL, InvalidURL  # sends the requests, must take it

        try:
            URL(value)
        except InvalidURL as exc:  # a zero-width space in the host, a control character
            raise ValueError(f"is not a valid URL ({str(exc).rstrip('.')})") from None
    if "#" in value:  # never sent to the server: a part that would be silently lost
        raise ValueError(
            "must not hold a fragment (#...): it is never sent to the server; "
            "a query (?key=value) is kept on every request"
        )
    return value


def checked_headers(value: dict[str, str]) -> dict[str, str]:
    """``headers``: HTTP header names, each value one line of printable ASCII."""
    seen: dict[str, str] = {}  # lowercased: the name that set it first
    for name, text in value.items():
        first = seen.setdefault(name.lower(), name)
        if first != name:  # HTTP's names know no case: both would be sent
            raise AtKey(
                (name,),
                f"{name!r} names the same header as {first!r} (header names are not "
                "case-sensitive): both would be sent; keep one of them",
            )
        if not _HEADER_NAME.fullmatch(name):
            raise AtKey(
                (name,),
                "is not an HTTP header name (letters, digits and - mostly, e.g. X-Title)",
            )
        if HEADER_VARIABLE.search(text):  # sent as written: Bearer ${GW_TOKEN}
            raise AtKey(
                (name,),
                "holds a variable ($NAME or ${NAME}); dsh.yml does not expand variables: "
                "a gateway's token goes in a variable named by api_key_env (with "
                "api_key_header for its header), other values are written as they are",
            )
        if "\n" in text or "\r" in text:
            raise AtKey((name,), "must not hold a line break: a header's value is one line")
        if not _HEADER_VALUE.fullmatch(text):
            raise AtKey(
                (name,),
                "must be ASCII text (printable characters, spaces and tabs inside): "
                "HTTP sends nothing else in a header",
            )
    return value


def checked_variable(value: str) -> str:
    """``api_key_env``: the name of an environment variable, not ``$NAME`` nor a key."""
    if not _ENV_NAME.fullmatch(value):
        variable = VARIABLE.fullmatch(value)
        if variable is not None:  # only a name: no key to hide
            name = variable[1] or variable[2]
            raise ValueError(
                "must be the name of an environment variable; dsh.yml does not expand "
                f"variables: drop the $ (api_key_env: {name})"
            )
        raise ValueError(
            "must be the name of an environment variable (letters, digits and _), "
            "not the key itself"
        )
    return value


def checked_key_header(value: str, headers: Mapping[str, str]) -> str:
    """``api_key_header``: a header name dsh does not set, nor one ``headers`` sets."""
    if not _HEADER_NAME.fullmatch(value):
        raise ValueError("must be an HTTP header name (letters, digits and - mostly), e.g. api-key")
    if value.lower() in _OWN_HEADERS:
        raise ValueError(f"must not be {value!r}: dsh sets that header itself")
    given = [name for name in headers if name.lower() == value.lower()]
    if given:
        raise ValueError(
            f"names a header that headers also sets ({given[0]!r}): the key would be "
            "replaced; drop it from headers"
        )
    return value


def may_be_a_key(variable: str) -> bool:
    """Whether an ``api_key_env`` value may be a key pasted into that field rather than
    a variable's name, and so is not repeated in a message: what the check of the field
    refuses (not letters, digits and ``_``; a config made without its checks), and what
    it lets through that keys are made of, judged part by part between the ``_``: a
    part of 16 characters or more (``hf_QjWpuSAo...``, a hex key), one that mixes lower
    and upper case (``gsk_8fJ2kL...``), or one with 4 digits or more
    (``tok_9f8e7d6c...``), or a digit before a letter (``cd18fc9f``). ``OPENAI_API_KEY``,
    ``AZURE_OPENAI_API_KEY`` and ``gw_key_2`` are names."""
    if not _ENV_NAME.fullmatch(variable):
        return True
    return any(_key_like(part) for part in variable.split("_"))


def _key_like(part: str) -> bool:
    mixed = any(c.islower() for c in part) and any(c.isupper() for c in part)
    digits = sum(c.isdigit() for c in part)
    return mixed or len(part) >= 16 or digits >= 4 or _DIGIT_LETTER.search(part) is not None


#: A digit before a letter inside a part (``cd18fc9f``, ``t3j2p3sc``): a random key's,
#: where names keep their digits at a part's end (``GW_KEY_2``, ``S3_KEY``).
_DIGIT_LETTER: Final = re.compile("[0-9][A-Za-z]")
