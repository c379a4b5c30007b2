"""The sizes a server's context-window error states: the model's window and the
refused request's tokens (``ModelError.context_window`` and ``request_tokens``).

Read from the error object's fields where a server gives them (llama.cpp: ``n_ctx``
and ``n_prompt_tokens``), else from its words, each shape with some latitude in them:

- llama.cpp: "request (14721 tokens) exceeds the available context size (2048 tokens)"
- OpenAI, vLLM: "This model's maximum context length is 8192 tokens. However, your
  messages resulted in 9000 tokens" (or "you requested 9000 tokens (8000 in the
  messages, 1000 in the completion)": the messages' count)
- Anthropic: "prompt is too long: 210000 tokens > 200000 maximum", and "input length
  and `max_tokens` exceed context limit: 178959 + 64000 > 200000" (the input's count)
- vLLM: "The decoder prompt (length 5000) is longer than the maximum model length of
  4096", and "This model's maximum context length is 4096 tokens. However, your request
  has 5000 input tokens"
- OpenRouter: "This endpoint's maximum context length is 8192 tokens. However, you
  requested about 9000 tokens (5000 of text input, 4000 in the output)": the input's
  (with tools "(81684 of text input, 3748 of tool input, 120000 in the output)": the
  inputs' sum)
- SGLang: "The input (5000 tokens) is longer than the model's context length (4096
  tokens)."
- Gemini (its OpenAI-compatible endpoint): "The input token count (132478) exceeds the
  maximum number of tokens allowed (131072)."
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["context_sizes"]

_NUMBER = r"\d{1,3}(?:,\d{3})+|\d+"  # 2048, or 2,048
_N = rf"({_NUMBER})"
_W = r"\W{0,3}"  # a bracket, a colon, a space or two
# (a window pattern, request patterns tried in turn), each with one group: a number, or
# numbers to add up
_SHAPES: Final = tuple(
    (
        re.compile(window, re.IGNORECASE),
        tuple(re.compile(words, re.IGNORECASE | re.DOTALL) for words in requests),
    )
    for window, *requests in (
        (
            rf"context (?:size|length|window){_W}(?:is |of )?{_N} tokens",
            rf"(?:request|prompt){_W}{_N} tokens\)?,? (?:exceeds?|is)",
            rf"{_N} in the messages",
            rf"((?:{_NUMBER}) of text input(?:, (?:{_NUMBER}) of [a-z]+ input)*)",
            rf"request has {_N} input tokens",
            rf"input{_W}{_N} tokens\) is longer",
            rf"(?:resulted in|requested|have) {_N} tokens",
        ),
        (rf"tokens? > {_N}(?: tokens)? maximum", rf"{_N} tokens? > \d"),
        (rf"context limit{_W}[\d,]+ \+ [\d,]+ > {_N}", rf"context limit{_W}{_N} \+"),
        (rf"maximum model length (?:of |is )?{_N}", rf"\(length {_N}\)"),
        (rf"maximum number of tokens allowed{_W}{_N}", rf"input token count{_W}{_N}"),
    )
)


def context_sizes(payload: Any, message: str) -> tuple[int | None, int | None]:
    """(the context window, the request's tokens) a context-window error states, each
    None when it does not: ``payload`` is the error's body as read (JSON), ``message``
    the server's words."""
    inner = payload.get("error", payload) if isinstance(payload, Mapping) else None
    if isinstance(inner, Mapping):
        window, request = _count(inner.get("n_ctx")), _count(inner.get("n_prompt_tokens"))
        if window is not None:
            return window, request
    for window_words, request_words in _SHAPES:
        found = window_words.search(message)
        if found is not None:
            said = (words.search(message) for words in request_words)
            request = next((_number(match) for match in said if match is not None), None)
            return _number(found), request
    return None, None


def _number(match: re.Match[str]) -> int | None:
    """The number ``match``'s group holds, or the sum of those it does."""
    return _count(sum(int(n.replace(",", "")) for n in re.findall(_NUMBER, match[1])))


def _count(value: object) -> int | None:
    """A positive count of tokens, or None (a bool, a float, zero: not one)."""
    return value if type(value) is int and value > 0 else None
