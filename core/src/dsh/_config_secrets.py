"""A value that is a secret by its key's name (``named_secret``: the one rule, wherever
dsh hides or refuses one), and a secret's name given a value outside a model's entry
(``misplaced_key``): at the top of dsh.yml, in an agent's options, in options given in
code. A key there would do nothing, and options are stored with the session.

What ``named_secret`` finds is hidden alike, by one walk (``named_hidden``), in
``repr()`` of the settings (``dsh._config_repr``) and in the options stored with a
session (``dsh._stored_meta``), so neither shows what the other hides: a string, or a
list or a mapping holding one, whole. A string under a cookie's name (``cookies``) is
a secret only when it looks like a credential (``session=...``, a token): ``cookies:
cookies.txt`` names a file, which a resume rebuilding the options from the stored ones
needs as it is. A typo of a core option (``max_token``) is refused as a typo at the top
of an agent's options, but it is a secret's name all the same: refused as one nested in
a free option (which is free-form: no core option is meant there), and hidden wherever
it is."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from dsh._header_secrets import credential_like
from dsh._nested import Path, every_value, walk
from dsh._options import CORE_OPTIONS, option_typo
from dsh._secret_names import COOKIE_NAMES, bare_name
from dsh._secrets import HIDDEN, is_secret_name

__all__ = [
    "free_misplaced",
    "hidden_by_name",
    "key_like_model",
    "key_like_name",
    "misplaced_key",
    "named_hidden",
    "named_secret",
    "nested_misplaced",
]

#: what separates the words of a model's name (``meta-llama/Llama-3.1-8B``)
_NAME_WORDS = re.compile(r"[\s\-_/.:]+")


def misplaced_key(key: str, value: object, *, nested: bool = False) -> str | None:
    """Why ``api_key``, ``api_key_env`` or another name of a secret given a string, or
    a list or a mapping holding one (``openai_api_key``, ``apiKey``, ``gateway_token``:
    ``named_secret``) is refused outside an entry of ``models:`` (at the top of dsh.yml,
    in an agent's options, in options given in code); None for any other key, and for
    a mapping not ``nested`` in an option: a section (a plugin named ``auth`` has one),
    whose own keys are looked at (one no loaded plugin reads: ``free_misplaced``). A
    key there would do nothing, and options are stored with the session."""
    if key == "api_key":
        return (
            "API keys go neither in dsh.yml nor in an agent's options (options are stored "
            "with the session): put the key in an environment variable and name it with "
            "api_key_env on the model's entry (models: {NAME: {api_key_env: OPENAI_API_KEY}})"
        )
    if key == "api_key_env":
        return (
            "api_key_env names the variable of a model's key: it goes on the model's entry "
            "(models: {NAME: {api_key_env: OPENAI_API_KEY}}), where it is read"
        )
    if isinstance(value, Mapping) and not nested:
        return None
    # a typo of a core option (max_token) is told as one where options are checked;
    # nested in an option it is no typo of anything, only a secret's name
    typo = not nested and option_typo(key, list(CORE_OPTIONS))
    if named_secret(key, value) and not typo:
        return (
            f"{key!r} names a secret (a key, a token, a password): secrets go neither in "
            "dsh.yml nor in an agent's options (options are stored with the session); put "
            "it in an environment variable (a model's key: name it with api_key_env on the "
            "model's entry)"
        )
    return None


def named_secret(key: object, value: object) -> bool:
    """Whether ``value`` is a secret by ``key``'s name (``token``, ``gatewayToken``,
    ``cookie``: ``is_secret_name``): a string, or a list or mapping holding one at any
    depth (``token: [...]``, ``client_secret: {x: ...}``), whole: what is in it is not
    named by keys of its own. Not a number, a bool nor None (``cache_key: 3``), nor what
    holds none of them. Under a cookie's name, a string only when it looks like a
    credential (``credential_like``; not ``cookies.txt``), a list when a string in it
    does (not ``[cookies.txt]``), and a mapping holding a string (cookies by name).
    ``api_key_env`` names a variable, not a secret."""
    if not isinstance(key, str) or not is_secret_name(key, query=False):
        return False
    texts = [inner for inner in every_value(value) if isinstance(inner, str)]
    if bare_name(key) not in COOKIE_NAMES:
        return bool(texts)
    if isinstance(value, Mapping):
        return bool(texts)
    return any(credential_like(text) for text in texts)


def hidden_by_name(key: object, value: object) -> bool:
    """Whether ``value`` is shown and stored as ``***`` (``named_secret``): not an empty
    string, which holds nothing to hide (and a resume gets it back as it was)."""
    return value != "" and named_secret(key, value)


def named_hidden(
    value: Any, *, sections: Path | None = None, text: Callable[[str], str] | None = None
) -> tuple[Any, list[tuple[Path, object]]]:
    """A copy of ``value`` (an agent's options, a session's meta) with each value under
    a key named as a secret's (``hidden_by_name``) as ``***``, at any depth, and where
    each was with what it was: the one walk (``dsh._nested.walk``) both ``repr()`` of
    the settings and the options stored with a session hide by. Its mappings are copied
    as dicts, its lists and tuples as lists (a value met twice, or inside itself, copied
    once); anything else is kept. ``sections``: the place in ``value`` of the options,
    whose mappings right under it are sections (a plugin's settings under its name,
    ``auth: {...}``), their own keys looked at, not hidden whole. ``text``: what each
    string left is shown as (``value`` one too), keys kept."""
    if isinstance(value, str):
        return (value if text is None else text(value)), []
    # Not dsh._json.copied: it copies lossless JSON (no other mapping, nothing that
    # holds itself); here each container is copied as the walk first meets it.
    copies: dict[int, Any] = {}  # by the id of what each copies
    originals: dict[Path, Any] = {(): value}
    top = _copy_of(value, copies)
    hidden: list[tuple[Path, object]] = []
    for path, key, inner in walk(value):  # each container's entries once
        originals[path] = inner
        copy = _copy_of(inner, copies)  # made before the walk fills it
        holder = copies.get(id(originals[path[:-1]]))
        if holder is None:  # a set's: kept as it is
            continue
        section = path[:-1] == sections and isinstance(inner, Mapping)
        if not section and hidden_by_name(key, inner):
            holder[key] = HIDDEN  # what is in it is walked too: another may hold it
            hidden.append((path, copy))
        else:
            holder[key] = text(inner) if text is not None and isinstance(inner, str) else copy
    return top, hidden


def _copy_of(item: Any, copies: dict[int, Any]) -> Any:
    """``named_hidden``'s copy of ``item``: a new dict for a mapping, a new list for a
    list or a tuple (the one already made, by id, in ``copies``), filled by its walk;
    anything else itself."""
    if not isinstance(item, Mapping | list | tuple):
        return item
    if id(item) not in copies:
        copies[id(item)] = {} if isinstance(item, Mapping) else [None] * len(item)
    return copies[id(item)]


def free_misplaced(key: str, value: object) -> tuple[Path, str] | None:
    """``nested_misplaced`` for a free option ``key`` (one no loaded plugin reads)
    given ``value``, the option itself first. A mapping under a secret's name, which
    ``misplaced_key`` takes for a section (``auth: {mode: sso}``, a plugin's that reads
    its options without settings), is refused whole, at the path ``()``, when it holds
    a secret after all: cookies by name (``cookies: {session: ...}``), or a string that
    looks like a credential (``credential_like``: ``token: {x: <token>}``)."""
    if isinstance(value, Mapping) and named_secret(key, value):
        texts = [inner for inner in every_value(value) if isinstance(inner, str)]
        if bare_name(key) in COOKIE_NAMES or any(credential_like(text) for text in texts):
            misplaced = misplaced_key(key, value, nested=True)
            return (), f"{misplaced}; no loaded plugin takes settings named {key!r}"
    return nested_misplaced(value)


def nested_misplaced(value: object) -> tuple[Path, str] | None:
    """The place under a free option's ``value`` (``("gateway", "api_key")``,
    ``("hosts", 1, "token")``) of the first key named as a secret given a string (or a
    list or mapping holding one), at any depth of its mappings and lists, and why it is
    refused (``misplaced_key``'s reason): an option's value is stored with the session
    as it is, so a secret nested in it would be too. ``api_key_env`` is a variable's
    name there, not refused. None when there is none."""
    for path, key, inner in walk(value):  # shallowest first
        if isinstance(key, str) and key != "api_key_env":
            misplaced = misplaced_key(key, inner, nested=True)
            if misplaced is not None:
                return path, misplaced
    return None


def key_like_name(name: str) -> bool:
    """Whether ``name``, given where a model's name goes (``model:``), looks like a key
    pasted there by mistake: credential-like (``credential_like``) as a whole and in one
    of its words (``sk-proj-<token>``), not only as a whole: a model's name of short
    words with a date or a size (``claude-3-5-sonnet-20241022``) is one."""
    return credential_like(name) and any(
        credential_like(word) for word in _NAME_WORDS.split(name) if word
    )


def key_like_model(rest: str) -> str:
    """How an error refuses a model's name that looks like a key (``key_like_name``)
    without showing it, wherever the name was given (dsh.yml's ``model:``, ``-m``, a
    model named in options given in code): ``rest`` ends its parentheses (the models
    there are)."""
    return (
        "unknown model (the name given looks like an API key, not shown: put the key in "
        "an environment variable and name it with api_key_env on the model's entry; "
        f"{rest})"
    )
