"""The failures of a summary by the summariser model (``_summarise``), worded for a
person: each a ``ModelError`` (or ``HookError``) whose code ``compact/end`` logs."""

from __future__ import annotations

from collections.abc import Mapping

from dsh import HookError, ModelError
from dsh_compaction import _host

__all__ = ["limit_ran_out", "no_model", "not_text", "too_long", "unfinished"]


def too_long(
    model: str,
    window: int,
    refused: ModelError | None,
    *,
    prompt: int = 0,
    answer: int = 0,
    longer: tuple[int, int] | None = None,
) -> ModelError:
    """The failure of a summariser request too long for the summariser's window (as
    the provider ``refused`` it, or as planned: no room beside its ``prompt`` and
    ``answer``; or, ``longer``, no room beside the summary so far, an answer past
    ``max_tokens`` no shorter than what it summarised), told apart from the agent's own
    request that overflowed."""
    what = f"the summariser's request was too long for model {model!r}"
    planned = f"planned for a context window of {window:,} tokens"
    if longer is not None:
        why = (
            f"the summary so far ({longer[0]:,} tokens, past max_tokens) leaves too little "
            f"room for the next chunk, and is no shorter than the {longer[1]:,} tokens it "
            "summarised"
        )
        return ModelError("CONTEXT_WINDOW_EXCEEDED", f"{what} ({planned}): {why}")
    if refused is None:
        why = f"its prompt ({prompt:,} tokens) and answer ({answer:,}) leave too little room"
        return ModelError("CONTEXT_WINDOW_EXCEEDED", f"{what} ({planned}): {why}")
    return ModelError(
        "CONTEXT_WINDOW_EXCEEDED",
        f"{what} ({planned}): {refused.message}",
        context_window=refused.context_window,
        request_tokens=refused.request_tokens,
    )


def no_model(agent: _host.Host, name: str | None) -> ModelError:
    """The failure of a summariser ``name`` that is not registered, saying where the
    name came from when it is the agent's own option: a continued session keeps the
    options it was created with, a summariser dsh.yml may no longer define."""
    harness = getattr(agent, "harness", None)
    names = ", ".join(harness.models.names()) if harness is not None else ""
    message = f"the summariser model {name!r} is not registered (registered: {names or 'none'})"
    own = agent.options.get("compaction")
    if isinstance(own, Mapping) and own.get("model") == name:
        message += (
            f"; it is the option compaction.model of agent {agent.id!r} (a continued session "
            "keeps the options it was created with): replace it in dsh.yml with "
            f"agents: [{{id: {agent.id}, options: {{compaction: {{model: ...}}}}}}] "
            "(compaction: {} for the section's), or define the model in models:"
        )
    return ModelError("NO_MODEL", message)


def unfinished(model: str, stop: str) -> ModelError:
    """The failure of a summariser answer that stopped with ``stop``, not finished: its
    text may be a refusal or a fragment, and must not replace the history."""
    if stop == "error":
        why = "the provider stopped the answer (a refusal, a content filter or an error inside it)"
        return ModelError("REFUSED", f"summariser {model!r}: {why}: stop reason {stop!r}")
    why = "the answer did not finish"
    return ModelError("INCOMPLETE", f"summariser {model!r}: {why}: stop reason {stop!r}")


def limit_ran_out(model: str, answer_tokens: int, by: str = "setting") -> ModelError:
    """The failure of an answer cut off at ``max_tokens`` before any text (a reasoning
    model that spent them all thinking): no refusal of the model, so no fallback drops
    the history for it; a larger limit lets it finish. ``by``: what set the limit,
    ``setting`` (``max_summary_tokens``), ``output`` (the model's ``max_output_tokens``)
    or ``window`` (a quarter of its context window): the advice is to change that one."""
    if by == "output":
        how = (
            f"its max_output_tokens ({answer_tokens:,}) set it: raise that in its models: "
            "entry if the model can write more, or use another summariser (compaction.model)"
        )
    elif by == "window":
        how = (
            f"a quarter of its context window ({answer_tokens:,} tokens) set it: use a "
            "summariser with a larger window (compaction.model)"
        )
    else:
        how = "raise max_summary_tokens"
    return ModelError(
        "INCOMPLETE",
        f"summariser {model!r}: the answer limit ({answer_tokens:,} tokens) ran out before "
        "it wrote any summary (stop reason 'max_tokens'; a reasoning model may spend it "
        f"all thinking): {how}",
    )


def not_text(agent: _host.Host, plugin: str, answer: object) -> HookError:
    """The failure of ``plugin``'s ``compaction_summarize`` impl that answered
    ``answer``."""
    wrong = TypeError(f"returned {type(answer).__name__}, not str")
    return _host.wrong_result(agent, "compaction_summarize", plugin, wrong)
