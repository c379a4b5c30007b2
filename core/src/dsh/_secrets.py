"""The secrets dsh knows of, the model API keys, and hiding their values.

A command can print the environment of dsh itself (``/proc/$PPID/environ``) even though
bash runs without the key variables, and a plugin's tool can read them anywhere: so the
values are hidden from every tool result before it is logged or sent to the model; and
every key dsh reads is remembered, so that ``HideKeys`` hides it from log records.

A key written into a ``base_url``'s query is one dsh has read too (``query_secrets``):
the value of a parameter named as a secret is. Which names are: when in doubt, hidden
(a value hidden by mistake costs a garbled line, a key shown costs the key). A name
ending, without its separators and in any case, in ``key``, ``token``, ``secret``,
``password``, ``passwd``, ``passphrase``, ``pwd``, ``signature``, ``auth``,
``credential(s)``, ``jwt``, ``bearer``, or one of ``sig``, ``code``, ``pass``,
``session``, ``sessionid``, ``access``, a number after it or not (``apikey2``);
but not a name whose last word is a common word that merely ends with ``key``
(``monkey``, ``my_turkey``: ``_WORDS_NOT_KEYS``), since anything else ending so
(``wskey``, ``mapkey``, ``common_key``) may well be a key.

So is a credential written into a model's ``headers`` (``header_secrets``): every
value but those of a few headers known to carry none (``dsh._header_secrets``), after
its scheme if it has one (``Bearer <token>``). What an ``HttpModel`` finds written into
its settings is remembered, hidden from log records (``known_keys``) whichever harness
or plugin built it; a harness's tool results are cleared of those of the models
registered in it only (``Harness.secrets``, ``ModelRegistry.written_keys``): another
harness's (another test's) would hide its text.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final
from urllib.parse import unquote, unquote_plus, urlsplit

from dsh._header_secrets import header_credentials
from dsh._provider_table import KEY_VARIABLES
from dsh._proxy_secrets import proxy_secrets
from dsh._secret_names import is_secret_name

if TYPE_CHECKING:
    from dsh.config import Config

__all__ = [
    "HIDDEN",
    "PROVIDER_KEY_VARIABLES",
    "HideKeys",
    "get_logger",
    "header_secrets",
    "hidden_runs",
    "hide_parameters",
    "is_secret_name",
    "key_from_env",
    "key_is_blank",
    "key_variables",
    "known_keys",
    "longest_first",
    "parameter_secrets",
    "query_secrets",
    "redact",
    "remember",
    "secret_values",
    "shortest_run",
]

HIDDEN: Final = "***"
#: Shorter values are not hidden: replacing a few common characters would garble text.
MIN_LENGTH: Final = 8


#: The built-in providers' key variables (their table, not dsh.llm.providers, which
#: imports httpx: a harness with no HTTP model never pays for it).
PROVIDER_KEY_VARIABLES: Final = KEY_VARIABLES

#: Every key ``key_from_env`` has returned in this process (a harness reads its keys when
#: it starts), every value of a plugin's secret variable a harness found and every key an
#: ``HttpModel`` found written into its settings (``remember``): what ``HideKeys`` hides,
#: whichever harness or environment it came from.
_READ: Final[set[str]] = set()


def remember(values: Iterable[str]) -> None:
    """Hide ``values`` (those of 8 characters or more) from log records and from
    ``redact`` from now on, as every key dsh has read is."""
    _READ.update(value for value in values if len(value) >= MIN_LENGTH)


def key_variables(config: Config | None) -> set[str]:
    """The environment variables that hold model API keys: each built-in provider's
    default and every ``api_key_env`` of ``models:`` in ``config``."""
    names = set(PROVIDER_KEY_VARIABLES)
    for model in (config.models if config is not None else {}).values():
        if model.api_key_env:
            names.add(model.api_key_env)
    return names


def key_from_env(variable: str, env: Mapping[str, str] | None = None) -> str | None:
    """The API key in ``$variable`` of ``env`` (default: the process's), without the
    whitespace around it (a line end from a file with CRLF line ends, say); None if it
    is unset or blank. Every reader of a key goes through this: the requests, the choice
    of a model by the keys that are set, and ``dsh models``."""
    value = (os.environ if env is None else env).get(variable, "").strip() or None
    if value is not None and len(value) >= MIN_LENGTH:
        _READ.add(value)
    return value


def key_is_blank(variable: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``$variable`` of ``env`` (default: the process's) is set but blank (empty
    or whitespace only): no key, which messages say as set but blank, not as unset."""
    value = (os.environ if env is None else env).get(variable)
    return value is not None and not value.strip()


def secret_values(
    config: Config | None, env: Mapping[str, str] | None = None, *, every_case: bool = True
) -> tuple[str, ...]:
    """The values of those variables in ``env`` (default: the process's), without the
    whitespace around them (as the providers send them), and the keys written into the
    query of a ``base_url`` of ``models:`` in ``config`` (``query_secrets``), longest
    first (one key may contain another), the credentials in their ``headers``
    (``header_secrets``), and the values plugins' settings declare secret
    (``SecretStr``: ``Config.declared``), and the password, ``user:pass`` and its base64
    of a proxy variable's URL (``dsh._proxy_secrets``: a proxy may echo them), of any
    case of its name, or with ``every_case`` false only in lower and upper case (cheaper:
    ``known_keys``)."""
    values = {key_from_env(name, env) or "" for name in key_variables(config)}
    for model in (config.models if config is not None else {}).values():
        if model.base_url:
            values.update(query_secrets(model.base_url))
        values.update(header_secrets(model.headers))
    values.update(config.declared if config is not None else ())
    values.update(proxy_secrets(env, every_case=every_case))
    return longest_first(values)


def longest_first(values: Iterable[str]) -> tuple[str, ...]:
    """``values`` of 8 characters or more (``MIN_LENGTH``), once each, longest first: as
    ``redact`` takes them (one key may contain another)."""
    return tuple(sorted({v for v in values if len(v) >= MIN_LENGTH}, key=len, reverse=True))


def query_secrets(url: str) -> tuple[str, ...]:
    """The values (8 characters or more) of ``url``'s query parameters whose names are a
    secret's (``?api-key=...``, ``?key=...``, ``?access_token=...``, ``?sig=...``), as
    written and percent-decoded: a key written into a ``base_url`` instead of the
    variable ``api_key_env`` names, which the request's address shows in the logs. A
    URL that cannot be split (``http://[::1``, a bad IPv6 address) raises nothing: its
    secret-named parameters found anywhere in it are (``parameter_secrets``), so an
    error that quotes it still hides them."""
    try:
        query = urlsplit(url).query
    except ValueError:
        return parameter_secrets(url)
    pairs = (pair.partition("=") for pair in re.split("[&;]", query))
    return _secret_parameters((name, value) for name, _, value in pairs)


def header_secrets(headers: Mapping[str, str]) -> tuple[str, ...]:
    """The credentials (8 characters or more) in ``headers``, a model's: every value but
    those of a few headers known to carry none, after its scheme if it has one
    (``dsh._header_secrets``). Never the scheme with a short token (``Bearer ollama``):
    ``redact`` would hide every run of 8 characters that begins or ends it in ordinary
    text."""
    return longest_first(header_credentials(headers))


#: A ``name=value`` parameter of a query or a fragment (after ``?``, ``&``, ``;``, ``#``),
#: wherever it is in a text (a URL mistyped on the command line, its query in the
#: fragment): its value goes up to the next parameter or the end of the word. A name
#: may end with ``?`` (``?api-key?=...``: a query's, so ``query_secrets``'s, secret).
# zero-width, so that every start is tried: a name ending with ? (x?=1?key=...) must not
# swallow the secret-named parameter its value holds
_PARAMETER: Final = re.compile(r"(?<=[?&;#])(?=([^=?&;#\s]+\?*)=([^&;#\s]*))")


def parameter_secrets(text: str) -> tuple[str, ...]:
    """The values (8 characters or more) of the secret-named parameters anywhere in
    ``text`` (``hide_parameters``), as written and percent-decoded, longest first. Not
    ``query_secrets`` of a URL: a fragment's are found too, and a value ends at a space
    (a URL's query, as a server reads it, may hold one in a value)."""
    return _secret_parameters((match[1], match[2]) for match in _PARAMETER.finditer(text))


def _secret_parameters(pairs: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The values of the parameters (name, value) named as a secret, as written and
    percent-decoded (``%2F``, and ``+`` for a space), ``longest_first`` (an empty
    value, a name's without ``=``, is too short)."""
    found: set[str] = set()
    for name, value in pairs:
        if is_secret_name(unquote_plus(name)):
            found.update((value, unquote(value), unquote_plus(value)))
    return longest_first(found)


def hide_parameters(text: str) -> str:
    """``text`` with the value, however short, of each parameter whose name is a secret's
    (``?api-key=...``, ``#access_token=...``, ``&sig=...``) as ``***``: a URL quoted in
    an error that it is refused for, its query or fragment maybe holding a key."""

    spans = sorted(
        (match.start() + len(match[1]) + 1, match.start() + len(match[1]) + 1 + len(match[2]))
        for match in _PARAMETER.finditer(text)
        if match[2] and is_secret_name(unquote_plus(match[1]))
    )
    parts: list[str] = []
    done = 0
    for start, end in spans:
        if end <= done:
            continue
        if start > done:
            parts += (text[done:start], HIDDEN)
        done = end
    parts.append(text[done:])
    return "".join(parts)


def known_keys() -> tuple[str, ...]:
    """Every key dsh has read in this process and the built-in providers' keys in the
    process's environment, longest first: what ``HideKeys`` and ``redact`` hide. Asked
    for with every log record and HTTP model step: the proxy variables are looked up in
    lower and upper case only (``dsh._proxy_secrets``)."""
    found = _READ.union(secret_values(None, every_case=False))
    return tuple(sorted(found, key=len, reverse=True))


def redact(text: str, secrets: tuple[str, ...] | None = None) -> str:
    """``text`` with each secret value replaced by ``***``, and so each start or end of
    one at least half its length (and 8 characters): what is left of a key that an output
    cap cut in two. A command that prints a key in pieces on purpose is not caught.
    Runs that overlap or touch are one ``***``.

    ``secrets`` (in any order) defaults to ``known_keys()``: every model API key dsh
    has read, as log records show them. Public as ``dsh.redact``, for what a plugin
    writes elsewhere (an event's data, say)."""
    if secrets is None:
        secrets = known_keys()
    # every secret's runs in the text as it is, then all hidden: hiding one secret first
    # could cut another that shares a stretch with it, which would then not match
    spans = [span for secret in secrets for span in hidden_runs(text, secret)]
    if not spans:
        return text
    parts: list[str] = []
    done = -1
    for start, end in sorted(spans):
        if start > done:  # overlapping or touching runs are hidden as one
            parts += (text[max(done, 0) : start], HIDDEN)
        done = max(done, end)
    parts.append(text[done:])
    return "".join(parts)


def shortest_run(secret: str) -> int:
    """The length from which a run that begins or ends ``secret`` is hidden: half of it
    (rounded up), at least 8 characters (the whole of a shorter one)."""
    return max(MIN_LENGTH, (len(secret) + 1) // 2)


def hidden_runs(text: str, secret: str) -> list[tuple[int, int]]:
    """The spans of ``text`` (start, end) that ``redact`` hides for ``secret``: each
    occurrence of it, each run of at least ``shortest_run`` characters that begins or
    ends it; they may overlap."""
    shortest = shortest_run(secret)
    if shortest < len(secret):  # a whole occurrence begins with the secret's half
        return _runs(text, secret, shortest)
    spans: list[tuple[int, int]] = []
    start = text.find(secret)
    while start != -1:
        spans.append((start, start + len(secret)))
        start = text.find(secret, start + 1)
    return spans


def _runs(text: str, secret: str, shortest: int) -> list[tuple[int, int]]:
    """The spans of the runs of at least ``shortest`` characters that begin or end
    ``secret``, each as long as it goes on like the secret."""
    spans: list[tuple[int, int]] = []
    start = text.find(secret[:shortest])
    while start != -1:  # a beginning, as long as it goes on like the secret
        end = start + shortest
        while end - start < len(secret) and text[end : end + 1] == secret[end - start]:
            end += 1
        spans.append((start, end))
        start = text.find(secret[:shortest], start + 1)
    tail = secret[-shortest:]
    end = text.find(tail)
    while end != -1:  # an ending, as far back as it matches
        start, end = end, end + shortest
        while end - start < len(secret) and text[start - 1 : start] == secret[start - end - 1]:
            start -= 1
        spans.append((start, end))
        end = text.find(tail, end - shortest + 1)
    return spans


class HideKeys(logging.Filter):
    """Hides every key dsh has read, and the built-in providers' keys in the process's
    environment, in a record's message, traceback and stack (a tool's or a plugin's
    exception may quote one, a frame's source line hold one). On each logger of the
    core and the first-party plugins (``get_logger``): a library installs no handler,
    but what its own records say is its business; and on the ``dsh`` command's
    handler, which shows every logger's records (other plugins' and httpx's too)."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = known_keys()
        if not secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # malformed: its handler reports msg and args (handleError)
            message = f"{record.msg!r} {record.args!r}"
            if redact(message, secrets) == message:
                message = ""  # no key in them: left as they are, for that report
        hidden = redact(message, secrets)
        if hidden != message:
            record.msg, record.args = hidden, None
        trace = record.exc_text or (
            _FORMATTER.formatException(record.exc_info) if record.exc_info else ""
        )
        hidden = redact(trace, secrets)
        if hidden != trace:
            # formatters print exc_text; one that formats exc_info itself would not hide
            record.exc_info, record.exc_text = None, hidden
        stack = record.stack_info  # stack_info=True: each frame's source line
        if stack:
            record.stack_info = redact(stack, secrets)
        return True


_FORMATTER: Final = logging.Formatter()
_HIDE_KEYS: Final = HideKeys()


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with the model API keys hidden from its records (a
    tool's or a plugin's exception may quote one), as the core's and the first-party
    plugins' loggers have them; no handler is installed. Public as ``dsh.get_logger``."""
    found = logging.getLogger(name)
    found.addFilter(_HIDE_KEYS)  # once: addFilter skips a filter it already has
    return found
