"""Fields of an OpenAI-compatible request that some servers refuse, and what to change
when one is refused: the setting that stops dsh sending it."""

from __future__ import annotations

import re
from typing import Any, Final
from urllib.parse import urlsplit

from dsh.llm._origin import Origin, setting

__all__ = ["refusal_note", "refuses_reasoning"]

#: Words of a refusal of ``reasoning_content`` for what it is missing (DeepSeek's
#: "must be passed back", pydantic's "Field required"): no hint to turn it off then.
_WANTED: Final = re.compile(r"must be passed|missing|required", re.IGNORECASE)


def refuses_reasoning(base_url: str) -> bool:
    """Whether ``base_url``'s server is known to refuse ``reasoning_content`` in a
    request: Mistral's API (HTTP 422 ``extra_forbidden``), whose reasoning models
    stream reasoning that dsh reads."""
    host = urlsplit(base_url).hostname or ""
    return host == "mistral.ai" or host.endswith(".mistral.ai")


def refusal_note(
    name: str,
    origin: Origin,
    status: int,
    said: str,
    body: dict[str, Any],
    include_usage: bool = True,
) -> str | None:
    """What to change, for model ``name``, when a 4xx's words (``said``) name a field
    of ``body`` that dsh sent: ``stream_options`` (older Azure OpenAI API versions'
    400 "Unrecognized request argument supplied", some proxies'), which the model's
    ``include_usage`` (on) added; ``reasoning_content`` (Mistral's 422
    ``extra_forbidden``, a server's "unrecognized field")."""
    if not 400 <= status < 500:
        return None
    if include_usage and "stream_options" in body and "stream_options" in said:
        return (
            "the server refuses the stream_options dsh sends to ask for the usage: "
            f"set include_usage: false for this model {_place(name, 'include_usage', origin)}"
        )
    sent = any("reasoning_content" in message for message in body.get("messages", ()))
    if not (sent and "reasoning_content" in said):
        return None
    if _WANTED.search(said):  # it wants the field (DeepSeek), not refuses it
        return None
    return (
        "the server refuses the reasoning dsh sent back as reasoning_content: "
        f"set send_reasoning: false for this model {_place(name, 'send_reasoning', origin)}"
    )


def _place(name: str, key: str, origin: Origin) -> str:
    where = setting(name, key, origin)
    return f"({where})" if where else "in a models: entry of dsh.yml"
