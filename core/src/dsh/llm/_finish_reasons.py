"""The ``finish_reason`` words of OpenAI-compatible servers, and gateways passing on
other APIs' words (Anthropic's, Gemini's), as dsh's stop reasons."""

from __future__ import annotations

from typing import Final

from dsh.messages import StopReason

__all__ = ["finish_detail", "stop_reason"]

#: The ``finish_reason``s dsh knows, looked up in lower case (Gemini through some proxies
#: says ``STOP``). Any other is the model's end, as ``stop``, unless a tool call's
#: arguments are cut: then it is ``error`` (its word the finish's detail), so none of
#: the answer's calls runs.
_STOP_REASONS: Final[dict[str, StopReason]] = {
    "stop": "stop",
    "eos": "stop",  # Together: the model's end of sequence
    "eos_token": "stop",  # older text-generation-inference (before its PR #2344), others
    "stop_sequence": "stop",  # text-generation-inference: a stop sequence came
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "tool_call": "tool_calls",  # mlx_lm.server before its PR #782
    "tool_use": "tool_calls",  # gateways passing Anthropic's words on
    "end_turn": "stop",
    "length": "max_tokens",
    "model_length": "max_tokens",  # Mistral: the context window is full
    "max_tokens": "max_tokens",  # Anthropic's and Gemini's (MAX_TOKENS) words, passed on
    "model_context_window_exceeded": "max_tokens",  # Anthropic's, passed on
    "content_filter": "error",
    "refusal": "error",  # Anthropic's, passed on
    "error": "error",  # OpenRouter, vLLM, Mistral: the provider failed mid-answer
    "insufficient_system_resource": "error",  # DeepSeek: cut off by the server
    "abort": "error",  # vLLM, SGLang: the server aborted the request
    "repetition": "error",  # vLLM: output that repeated itself was stopped
    # Gemini's FinishReason, passed on by a gateway: each but STOP and MAX_TOKENS means
    # the answer was blocked, cut or broken
    "safety": "error",
    "recitation": "error",
    "prohibited_content": "error",
    "blocklist": "error",
    "spii": "error",
    "language": "error",
    "other": "error",
    "malformed_function_call": "error",
    "unexpected_tool_call": "error",
    "too_many_tool_calls": "error",
    "missing_thought_signature": "error",
    "image_safety": "error",
    "image_prohibited_content": "error",
    "image_recitation": "error",
    "image_other": "error",
    "no_image": "error",
}
#: What a word that does not say it itself means, after it in the finish's detail.
_MEANING: Final = {
    "malformed_function_call": "the model's tool call was malformed",
    "unexpected_tool_call": "a tool call, with no tools in the request",
    "language": "a language the model does not support",
}


def stop_reason(finish: str, cut: bool) -> StopReason:
    """The stop reason of ``finish``, a server's ``finish_reason`` (any case); ``cut``:
    a tool call's arguments are unfinished, which makes a word dsh does not know
    ``error``."""
    known = _STOP_REASONS.get(finish.lower())
    return known if known is not None else "error" if cut else "stop"


def finish_detail(finish: str) -> str:
    """The detail of an ``error`` stop for the server's word ``finish``: the word, and
    what it means when it does not say it (``MALFORMED_FUNCTION_CALL: ...``)."""
    meaning = _MEANING.get(finish.lower())
    return f"{finish}: {meaning}" if meaning else finish
