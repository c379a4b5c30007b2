"""The built-in providers' facts, written once: the protocol each speaks (which adapter),
its default ``base_url`` and key variable, and the header each protocol's adapter sends
the key in. Read by ``dsh.llm.providers`` (``PROVIDERS``), the adapters, the check of a
model's ``headers`` (``dsh._config_models``) and the key variables hidden from tool
results (``dsh._secrets``). Plain data, no HTTP client: the config and the secrets read
it without importing httpx."""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

__all__ = ["BUILT_IN", "KEY_HEADERS", "KEY_VARIABLES", "Facts", "key_header", "sends_own_key"]

Protocol = Literal["openai", "anthropic"]


class Facts(NamedTuple):
    """A built-in provider: the protocol it speaks, its default endpoint and key
    variable (none: the model names its own). A NamedTuple: a dataclass costs more to
    make at import, and every ``dsh`` start imports this table."""

    protocol: Protocol
    base_url: str | None = None
    api_key_env: str | None = None


#: The header each protocol's adapter sends the key in, ``api_key_header`` unset.
KEY_HEADERS: Final[dict[str, str]] = {"openai": "authorization", "anthropic": "x-api-key"}

BUILT_IN: Final[dict[str, Facts]] = {
    "openai-compatible": Facts("openai"),
    "openai": Facts("openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "deepseek": Facts("openai", "https://api.deepseek.com", "DEEPSEEK_API_KEY"),
    "anthropic": Facts("anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
}

#: The built-in providers' key variables.
KEY_VARIABLES: Final = tuple(f.api_key_env for f in BUILT_IN.values() if f.api_key_env)


def key_header(provider: str) -> str | None:
    """The header built-in ``provider``'s adapter sends the key in (lowercase); None for
    a provider that is not built in (a plugin's)."""
    facts = BUILT_IN.get(provider)
    return None if facts is None else KEY_HEADERS[facts.protocol]


def sends_own_key(provider: str) -> bool:
    """Whether ``provider`` sends a key with no ``api_key_env`` (its own variable's, to
    its own endpoint)."""
    facts = BUILT_IN.get(provider)
    return facts is not None and facts.api_key_env is not None
