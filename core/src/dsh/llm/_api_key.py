"""An HTTP model's API key: read at each request, sent in its header, hidden from errors.

``KeyedModel`` is ``HttpModel``'s base (``dsh.llm._http``), which sets what it reads:
the model's name and settings, where the key is read (``env``), whether a missing key
is an error and where the settings come from (``origin``), and the keys written into
the settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dsh._secrets import key_is_blank, known_keys, longest_first
from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm import _origin as words
from dsh.llm._unsendable import unsendable, unsendable_part

__all__ = ["KeyedModel"]


class KeyedModel:
    """Reading, sending and hiding the API key of an HTTP model (``HttpModel``)."""

    name: str
    config: ModelConfig
    _env: Mapping[str, str] | None
    _key_optional: bool
    _origin: words.Origin
    _written_secrets: tuple[str, ...]

    def error_secrets(self, key: str | None) -> tuple[str, ...]:
        """What an error message of this model is cleared of, longest first: ``key``
        (the API key sent), the keys written into ``base_url``'s query (a server may quote
        the address) and into ``headers`` (a gateway's token), and every other key dsh has
        read (another model's: a proxy may quote it) and a proxy variable's password,
        ``user:pass`` and its base64 (``known_keys``), as its answer is (``stream``).
        Those of ``MIN_LENGTH`` characters or more, as in the answer: a local server's
        placeholder key (``none``, ``EMPTY``) is a word of its messages too. Asked for
        on the way to an error only."""
        return longest_first({key or "", *known_keys(), *self._written_secrets})

    def api_key(self) -> str | None:
        """The key from ``$api_key_env``, read now; a one-line AUTH error if it is unset,
        or holds a character no HTTP header can (see ``_unsendable``)."""
        if self.config.api_key_env is None:
            return None
        key = self.config.api_key(self._env)
        if key is None:
            if self._key_optional:
                return None
            blank = key_is_blank(self.config.api_key_env, self._env)
            said = words.key_unset(self.name, self.config, self._origin, blank=blank)
            raise ModelError("AUTH", f"model {self.name!r}: {said}")
        if unsendable_part(key) is not None:
            raise ModelError("AUTH", self._unsendable(key))
        return key

    def _said(self, about: Callable[[str, ModelConfig, words.Origin], str]) -> str:
        """What ``about`` (of ``dsh.llm._origin``) says of this model's key."""
        return about(self.name, self.config, self._origin)

    def _unsendable(self, key: str) -> str:
        """The message for a key holding a character an HTTP header cannot (a header
        holds printable ASCII: the HTTP client refuses anything else, quoting the key):
        its place and what it is, never the key."""
        return (
            f"model {self.name!r}: the API key in {self._said(words.key_place)} {unsendable(key)}"
        )

    def key_header(self, key: str | None, default: str) -> dict[str, str]:
        """The header that carries ``key`` (none without a key): the config's
        ``api_key_header``, else ``default``, the provider's. ``Authorization`` carries
        ``Bearer <key>``, any other header the bare key."""
        if not key:
            return {}
        name = self.config.api_key_header or default
        return {name: f"Bearer {key}" if name.lower() == "authorization" else key}
