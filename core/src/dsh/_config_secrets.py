"""A value that is a secret by its key's name (``named_secret``: the one rule, wherever
dsh hides or refuses one), and a secret's name given a value outside a model's entry
(``misplaced_key``): at the top of dsh.yml, in an agent's options, in options given in
code. A key there would do nothing, and options are stored with the session.

What ``named_secret`` finds is hidden alike in ``repr()`` of the settings
(``dsh._config_repr``) and in the options stored with a session (``dsh._stored_meta``),
so neither shows what the other hides. A string under a cookie's name (``cookies``) is
a secret only when it looks like a credential (``session=...``, a token): ``cookies:
cookies.txt`` names a file, which a resume rebuilding the options from the stored ones
needs as it is. A typo of a core option (``max_token``) is refused as a typo where the
options are checked, but it is a secret's name all the same, hidden wherever it is."""

from __future__ import annotations

import re

from dsh._header_secrets import credential_like
from dsh._nested import Path, walk
from dsh._options import CORE_OPTIONS, option_typo
from dsh._secret_names import COOKIE_NAMES, bare_name
from dsh._secrets import is_secret_name

__all__ = ["hidden_by_name", "key_like_name", "misplaced_key", "named_secret", "nested_misplaced"]

#: what separates the words of a model's name (``meta-llama/Llama-3.1-8B``)
_NAME_WORDS = re.compile(r"[\s\-_/.:]+")


def misplaced_key(key: str, value: object) -> str | None:
    """Why ``api_key``, ``api_key_env`` or another name of a secret given a string
    (``openai_api_key``, ``apiKey``, ``gateway_token``: ``dsh._secrets.is_secret_name``)
    is refused outside an entry of ``models:`` (at the top of dsh.yml, in an agent's
    options, in options given in code); None for any other key, and for a section (a
    plugin named ``auth`` has one). A key there would do nothing, and options are
    stored with the session."""
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
    # a typo of a core option (max_token) is told as one where options are checked
    if named_secret(key, value) and not option_typo(key, list(CORE_OPTIONS)):
        return (
            f"{key!r} names a secret (a key, a token, a password): secrets go neither in "
            "dsh.yml nor in an agent's options (options are stored with the session); put "
            "it in an environment variable (a model's key: name it with api_key_env on the "
            "model's entry)"
        )
    return None


def named_secret(key: object, value: object) -> bool:
    """Whether ``value`` is a secret by ``key``'s name: a string under a name of a
    secret's (``token``, ``gatewayToken``, ``cookie``: ``is_secret_name``), under a
    cookie's name only one that looks like a credential (``credential_like``; not
    ``cookies.txt``). ``api_key_env`` names a variable, not a secret."""
    if not isinstance(key, str) or not isinstance(value, str):
        return False
    if not is_secret_name(key, query=False):
        return False
    return bare_name(key) not in COOKIE_NAMES or credential_like(value)


def hidden_by_name(key: object, value: object) -> bool:
    """Whether ``value`` is shown and stored as ``***`` (``named_secret``): not an empty
    string, which holds nothing to hide (and a resume gets it back as it was)."""
    return value != "" and named_secret(key, value)


def nested_misplaced(value: object) -> tuple[Path, str] | None:
    """The place under a free option's ``value`` (``("gateway", "api_key")``,
    ``("hosts", 1, "token")``) of the first key named as a secret given a string, at any
    depth of its mappings and lists, and why it is refused (``misplaced_key``'s reason):
    an option's value is stored with the session as it is, so a secret nested in it
    would be too. ``api_key_env`` is a variable's name there, not refused. None when
    there is none."""
    for path, key, inner in walk(value):  # shallowest first
        if isinstance(key, str) and key != "api_key_env":
            misplaced = misplaced_key(key, inner)
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
