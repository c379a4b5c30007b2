"""One answer of a model, streamed into the log for a step (``dsh._steps``): each chunk
is logged as it comes and assembled; the guard (``dsh.llm._hidden_args``) learns which
of the answer's calls had a secret hidden. While it streams, and until
``agent_step_result`` has the answer, the turn holds the assembler, so that the closers
(``dsh._closers``) log what it said if the turn ends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from dsh._stray import failed, failure_words
from dsh.errors import ModelError
from dsh.llm._hidden_args import NOTED
from dsh.llm.assemble import Assembler

if TYPE_CHECKING:
    from dsh._turn_state import TurnState
    from dsh.llm._hidden_args import Guard
    from dsh.llm.base import Model
    from dsh.messages import AssistantMessage, ModelRequest

__all__ = ["streamed"]


async def streamed(
    emit: Callable[..., Awaitable[None]],
    guard: Guard,
    model: Model,
    request: ModelRequest,
    turn: TurnState,
) -> tuple[AssistantMessage, str | None]:
    """Stream one answer, logging each chunk (``emit``: the session's ``_record``);
    the guard learns of its hidden calls. The message, and the provider's own word for
    its stop (``Finish.detail``), if the model gave one."""
    assembler = Assembler()
    name = model.info.name
    turn.streaming = (assembler, name)
    guard.noted = False
    stream: AsyncIterator[Any] = model.stream(request)
    if NOTED.get() is not guard:  # seen by the redactors the stream runs, in this task
        NOTED.set(guard)
    try:
        async for chunk in stream:
            assembler.add(chunk)  # type-checks the chunk: its data is JSON
            await emit("assistant/chunk", chunk.to_data())
    except ModelError:  # a turn names the model
        raise
    except BaseException as exc:
        if not failed(exc):  # a real cancellation (an abort) propagates
            raise
        said = failure_words(exc)
        raise ModelError("UNKNOWN", f"model {model.info.name!r} failed: {said}") from exc
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    # a ModelError: no finish, say; turn.streaming is kept until agent_step_result
    # returned (``dsh._steps``): if it raises, the closers log what was said
    message = assembler.message(model=name)
    if (hidden := assembler.hidden_calls()) or guard.noted:
        guard.answered(message, hidden)
    else:  # the usual case: every call may run
        guard.clean = None
    return message, assembler.detail
