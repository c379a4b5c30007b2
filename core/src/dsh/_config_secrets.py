"""A secret's name given a value outside a model's entry (``misplaced_key``): at the top
of dsh.yml, in an agent's options, in options given in code. A key there would do
nothing, and options are stored with the session."""

from __future__ import annotations

from dsh._header_secrets import credential_like
from dsh._options import CORE_OPTIONS, option_typo
from dsh._secret_names import COOKIE_NAMES, bare_name
from dsh._secrets import is_secret_name

__all__ = ["misplaced_key"]


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
    secret = isinstance(value, str) and is_secret_name(key, query=False)
    if secret and bare_name(key) in COOKIE_NAMES:  # cookies: cookies.txt is a file's name
        secret = credential_like(str(value))
    if secret and not option_typo(key, list(CORE_OPTIONS)):
        return (
            f"{key!r} names a secret (a key, a token, a password): secrets go neither in "
            "dsh.yml nor in an agent's options (options are stored with the session); put "
            "it in an environment variable (a model's key: name it with api_key_env on the "
            "model's entry)"
        )
    return None
