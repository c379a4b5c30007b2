"""A tool call whose arguments had a secret hidden from them is never run.

``dsh.llm._redact_stream.AnswerRedactor`` hides a secret dsh knows (a model API key) in
a tool call's arguments as ``***``, so that no event holds it. The call so changed is
not the one the model asked for, and may do something else altogether: ``***`` is a
shell glob (``rm -f <key>`` would run as ``rm -f ***``: every file), and a ``write`` of
``KEY=<key>`` would write ``KEY=***`` without a word. So the redactor yields each piece
of such a call's arguments, from the first that had a secret hidden on, as a
``HiddenArguments`` (and a redactor around another passes the mark on); the assembler
notes the call (``Assembler.hidden_calls``), and the step logs it as any call and
answers it with ``NOT_RUN``, an error result, without running it or asking a plugin
(``tools_execute``, a permission question) whether it may. A ``***`` the model wrote
itself is an argument like any other: only the redactor marks a call.
"""

from __future__ import annotations

from typing import Final

from dsh.llm.base import ToolCallDelta

__all__ = ["NOT_RUN", "HiddenArguments"]

NOT_RUN: Final = (
    "not run: the arguments held a secret that dsh keeps out of the conversation "
    "(an API key; the *** in them stands for it). A tool call must not carry its value: "
    "refer to it by the name of the environment variable or file that holds it, or ask "
    "the user to put it in place (tools do not get dsh's API key variables)"
)


class HiddenArguments(ToolCallDelta):
    """A piece of a tool call's arguments with a secret hidden from it, or one after
    such a piece: logged as any (``to_data``), but the call it belongs to is not run."""

    __slots__ = ()
