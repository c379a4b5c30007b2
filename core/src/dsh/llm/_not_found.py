"""The hint an HTTP 404 gets: where the request went, when the words do not name the model."""

from __future__ import annotations

import re
from typing import Final

# A 404's words that name the model (Ollama's "model 'qwen' not found", OpenAI's
# model_not_found): the address is right, the model is not.
_NAMES_MODEL: Final = re.compile(r"\bmodel", re.IGNORECASE)


def not_found_hint(message: str, address: tuple[str, str] | None) -> str:
    """``address``: (base_url without its query, which may hold a key; the API's path),
    named with the setting that makes it (a base_url without ``/v1`` is the likeliest
    mistake); "" when not known or when ``message`` names the model."""
    if address is None or _NAMES_MODEL.search(message):
        return ""
    (root, path), usual = address, "; it usually ends in /v1"
    usual = "" if root.endswith("/v1") else usual
    return f" (requests go to {root}{path}, base_url + {path}: check base_url{usual})"
