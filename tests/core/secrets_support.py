"""What the tests of ``Harness.secrets`` share (test_harness_secrets_own_models.py,
llm/test_header_secrets.py, which finds this module through tests/core/conftest.py's
folder on ``sys.path``): an HTTP model with keys written into its settings, a
plugin's model wrapping one, and a plugin declaring a ``SecretStr`` setting."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, SecretStr

from dsh import hookimpl
from dsh.config import ModelConfig
from dsh.llm.base import ModelInfo
from dsh.llm.providers import build_model
from dsh.messages import ModelRequest


def gateway(token: str, query: str) -> Any:
    """An HttpModel with ``token`` in its ``X-Api-Key`` header and ``query`` as the
    ``api-key`` of its ``base_url``."""
    return build_model(
        "gw",
        ModelConfig(
            provider="openai-compatible",
            model="m",
            base_url=f"http://127.0.0.1:1/v1?api-key={query}",
            headers={"X-Api-Key": token},
        ),
    )


class Inner:
    """A plugin's model wrapping an HttpModel in an attribute (a router, a fallback): the
    Model protocol, info and stream."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def info(self) -> ModelInfo:
        info: ModelInfo = self.inner.info
        return info

    def stream(self, request: ModelRequest) -> Any:
        return self.inner.stream(request)


class TokenSettings(BaseModel):
    token: SecretStr = SecretStr("")


class DeclaresToken:
    """A plugin whose settings hold a ``SecretStr`` (``token``), as docs/hooks.md
    recommends for a plugin's credential."""

    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(TokenSettings)
