"""The secrets a plugin's settings declare: the values of its fields typed
``pydantic.SecretStr`` or ``SecretBytes``, found anywhere in the validated model (nested
models, lists, dicts). dsh knows them as soon as ``dsh.yml`` is validated, before any
hook runs, so a plugin failing before its ``harness_started`` could add them (reading or
checking its settings) does not show them."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import SecretBytes, SecretStr

from dsh._nested import every_value

__all__ = ["declared_secrets", "revealed"]


def declared_secrets(value: object) -> Iterator[str]:
    """Every ``SecretStr``/``SecretBytes`` value in ``value`` (``revealed``)."""
    for item in every_value(value, models=True):
        if isinstance(item, SecretStr | SecretBytes):
            yield revealed(item)


def revealed(secret: SecretStr | SecretBytes) -> str:
    """What ``secret`` holds (bytes as UTF-8, with what is not UTF-8 replaced)."""
    if isinstance(secret, SecretStr):
        return secret.get_secret_value()
    return secret.get_secret_value().decode("utf-8", "replace")
