"""One turn of the agent loop: its steps, each a model call (or more, when a failed one
is retried) and the tool calls of its answer, logged as they happen.

Every exit path of a turn, including an abort, a raising plugin, a model error or an
outer cancellation, ends with the closers that keep the log balanced (``dsh._closers``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import anyio

from dsh._answer import streamed
from dsh._call_ids import renamed_repeats
from dsh._closers import (
    call_data,
    closers,
    error_code,
    model_error,
    named,
    result_data,
)
from dsh._config_models import DEFAULT_MAX_WAIT
from dsh._options import request_options, retry_allowance, step_limit
from dsh._quoted import shown
from dsh._ready import READY
from dsh._secrets import get_logger, redact
from dsh._stray import cancelled_only, failed, failure_words
from dsh._turn_state import TurnState
from dsh.errors import DshError, HookError, ModelError, StepLimitError, retry_seconds
from dsh.llm._hidden_args import Guard
from dsh.messages import (
    ContinuationDecision,
    ModelRequest,
    RequestErrorDecision,
    ToolCall,
    ToolResult,
    trusted,
)

if TYPE_CHECKING:
    from dsh.llm.base import Model
    from dsh.llm.registry import ModelRegistry
    from dsh.loop import ReactLoopAgent
    from dsh.tools import ToolRegistry

__all__ = ["StepRunner"]

log = get_logger("dsh.loop")
#: Stop reasons whose answer's tool calls never run: cut off by the output limit, or
#: stopped by the provider (a refusal, a content filter, an error mid-answer, an abort,
#: or a reason the adapter does not know after a tool call cut in the middle:
#: ``Finish.detail`` names it).
_CUT: Final = frozenset({"max_tokens", "error"})
_REFUSED: Final = (
    "the provider stopped the answer (a refusal, a content filter or an "
    "error inside the answer: stop reason 'error'); none of its tool calls ran"
)
_SAID: Final = 80  # characters of the provider's own reason named, at most


def _refused(said: str | None) -> str:
    """REFUSED's message, naming the provider's own reason for the stop when the model
    gave one (``Finish.detail``: ``content_filter``, ``refusal``...), on one line."""
    if said is None:
        return _REFUSED
    said = " ".join(said.split())[:_SAID]
    return (
        f"the provider stopped the answer (its reason: {said!r}; stop reason 'error'); "
        "none of its tool calls ran"
    )


CONTINUE: Final = ContinuationDecision(action="continue")
STOP: Final = ContinuationDecision(action="stop")
FAIL: Final = RequestErrorDecision(action="fail")


class StepRunner:
    """Runs turns for one agent."""

    __slots__ = ("_scope_class", "agent", "guard", "models", "tools")

    def __init__(self, agent: ReactLoopAgent, models: ModelRegistry, tools: ToolRegistry) -> None:
        self.agent = agent
        self.models = models
        self.tools = tools
        # the backend's cancel scope class (``anyio.CancelScope()`` looks it up: ~1 %)
        self._scope_class: type[anyio.CancelScope] | None = None
        self.guard = Guard(agent.session.events)

    async def run_turn(
        self, turn: TurnState, prompts: list[str], refused: DshError | None = None
    ) -> None:
        """Run ``turn`` on ``prompts``; ``refused``: why it may not run (a bad option
        read as it took them), which ends it ``error`` before its first step."""
        emit = self.agent.session._record
        error: dict[str, Any] | None = None
        try:
            await emit("turn/start", {"turn": turn.number})
            for prompt in prompts:
                # a prompt() caller's Prompt is logged as the plain str it equals
                content = prompt if prompt.__class__ is str else str(prompt)
                content = self._hidden(content, "prompt")
                await emit("user/message", {"content": content})
            if refused is not None:
                raise refused
            await self._steps(turn)
        except ModelError as exc:
            error = model_error(exc, named(exc.message, turn))
            cause = exc.__cause__
            if cause is not None and not isinstance(cause, DshError):  # unexpected
                self._failed(turn, exc)
        except HookError as exc:
            error = {"code": exc.code, "message": str(exc), "plugin": exc.plugin, "hook": exc.hook}
            self._failed(turn, exc)
        except DshError as exc:
            error = {"code": exc.code, "message": str(exc)}
        except Exception as exc:
            log.exception("agent %r: turn %d failed", self.agent.id, turn.number)
            error = {"code": "INTERNAL", "message": failure_words(exc)}
        except BaseException as exc:
            if not failed(exc):  # a real cancellation ends the turn aborted
                if cancelled_only(exc):
                    turn.abort("aborted")
                    self.agent.grace.start("cancellation")
                elif turn.ended_by is None:  # a KeyboardInterrupt: not ``completed``
                    error = {"code": "INTERNAL", "message": failure_words(exc)}
                raise
            # raised by something the turn awaited (a stray cancellation, a SystemExit):
            # its failure, not an abort (unless one was ending the turn already: a
            # tool's SystemExit grouped with the abort that interrupted it)
            if turn.ended_by is None:
                log.error("agent %r: turn %d failed", self.agent.id, turn.number, exc_info=exc)
                error = {"code": "INTERNAL", "message": failure_words(exc)}
        finally:
            turn.settled = True  # what the closers log is this outcome, whatever aborts now
            if error is not None:  # an exception may quote a key
                error["message"] = redact(error["message"], self.agent.secrets)
            # The closers run on every exit path, a cancellation included: each event is
            # appended synchronously, and only an observer with async work is awaited,
            # shielded (a scope per such event, so the common case pays for none).
            emit = self.agent.session._record
            for event_type, data in closers(turn, error):
                pending = emit(event_type, data)
                if pending is not READY:
                    with anyio.CancelScope(shield=True):
                        await pending

    def _failed(self, turn: TurnState, exc: DshError) -> None:
        """The traceback of a failure that ends the turn and is not dsh's own words (a
        hook impl's exception, a model's unexpected one): a DEBUG record, which ``dsh
        -v`` and pytest's caplog show; its keys are hidden by the logger's filter. A
        hook's failure goes to the harness's ``turn_failures`` too."""
        log.debug("agent %r: turn %d ended: %s", self.agent.id, turn.number, exc, exc_info=exc)
        harness = self.agent.harness
        if isinstance(exc, HookError) and harness is not None:
            for record in harness.pm.turn_failures:
                record(exc)

    async def _steps(self, turn: TurnState) -> None:
        max_steps = step_limit(self.agent.id, self.agent.options)
        # One cancel scope for the turn's steps: abort() and cancel() stop the turn
        # wherever it waits (a hook, the model stream, a tool). Events are appended
        # synchronously and observers are shielded, so an abort never tears an event;
        # the closers then answer whatever the step left open.
        scope_class = self._scope_class
        if scope_class is None:
            scope_class = self._scope_class = type(anyio.CancelScope())
        with scope_class() as scope:
            turn.scope = scope
            step = 0
            while not turn.stopping():
                step += 1
                if step > max_steps:
                    steps = "1 step" if max_steps == 1 else f"{max_steps} steps"
                    why = f"turn {turn.number} stopped after {steps} (max_steps)"
                    if turn.unsent is not None:
                        why += f"; a plugin's reason to go on was not sent: {shown(turn.unsent)}"
                    raise StepLimitError(why)
                if await self._step(turn, step, step < max_steps):
                    break
        turn.scope = None

    async def _step(self, turn: TurnState, step: int, more: bool) -> bool:
        """One step (``more``: the step limit allows another); True when the turn
        should end after it."""
        agent = self.agent
        session = agent.session
        emit = session._record
        relay = agent.relay
        options = agent.options
        number = turn.number
        turn.open_step = step
        await emit("step/start", {"turn": number, "step": step})
        if agent.inbox.steering:
            await self._drain_steering()
        retries = 0
        while True:  # one model call, or more when agent_request_error says retry
            # checked again: the options may have changed since agent creation
            name, system, limit = request_options(agent.id, options)
            request = trusted(
                ModelRequest,
                {
                    "model": name,
                    "system": system,
                    "messages": session.history,
                    "tools": self.tools.specs(),
                    "max_tokens": limit,
                    "options": {},
                },
            )
            request = await relay.agent_request(agent, request, number, step)
            model: Model | None = None
            try:
                model = self.models.get(request.model, agent=agent.id)
                message, detail = await streamed(emit, self.guard, model, request, turn)
                break
            except ModelError as error:
                try:
                    allowed = retry_allowance(agent.id, options)
                except DshError as bad:  # changed since creation: named, from the failure
                    raise bad from error
                if retries >= allowed:
                    raise
                # the server's wait (a retry sooner fails again), if the model's
                # max_wait allows it; a longer one ends the turn without asking
                wait = retry_seconds(error.retry_after)
                longest = DEFAULT_MAX_WAIT if model is None else model.info.max_wait
                if wait is not None and wait > longest:
                    raise
                on_error = await relay.agent_request_error(
                    agent, request, error, FAIL, number, step
                )
                if on_error.action != "retry":
                    raise
                turn.streaming = None  # the retry's answer replaces what this one streamed
                retries += 1
                data = {"turn": number, "step": step, "attempt": retries, "code": error_code(error)}
                data["message"] = redact(error.message, self.agent.secrets)  # as turn/end's
                if on_error.reason:  # a plugin's words, which may quote the error
                    data["reason"] = redact(on_error.reason, self.agent.secrets)
                if wait:
                    data["wait"] = wait
                await emit("step/retry", data)
                if wait:  # inside the turn's cancel scope: an abort ends the wait
                    await anyio.sleep(wait)
        said = detail if message.stop_reason == "error" else None  # the provider's word
        message = await relay.agent_step_result(agent, message, number, step)
        turn.streaming = None  # from here, the answer is logged as the hook returned it
        calls = message.tool_calls
        repeats = None
        if len(calls) > 1:  # a repeated call id: renamed, not run
            message, calls, repeats = renamed_repeats(message, calls)
        stop = message.stop_reason
        if stop == "max_tokens":
            turn.max_tokens = True
        if calls and stop in _CUT:  # a cut-off or refused answer's calls: none of them run
            content = tuple(b for b in message.content if not isinstance(b, ToolCall))
            message = message.model_copy(update={"content": content})
            calls = []
        turn.usage += message.usage
        turn.pending = list(calls)
        dumped = {"message": message.to_data()}
        if stop == "error":  # refused: the turn fails once the answer is logged
            turn.settled = True
        await emit("assistant/message", dumped, message)
        if stop == "error":
            who = f"model {message.model!r}: " if message.model else ""
            raise ModelError("REFUSED", who + _refused(said))
        guard = self.guard  # refuses a call that had a secret hidden (dsh.llm._hidden_args)
        for call in calls:
            if turn.stopping():
                return True
            turn.logged.add(call.id)
            await emit("tool/call", call_data(call))
            if turn.stopping():  # aborted while the call was being logged: never run it
                return True
            why = guard.refusal(call) if guard.clean is not None or guard.refused else None
            if repeats and call.id in repeats:
                why = repeats[call.id]
            if why is not None:  # run so, the call would do something else: never asked
                result: ToolResult | None = ToolResult(call_id=call.id, content=why, is_error=True)
            else:
                turn.running = call.id
                result = await relay.tools_execute(agent, call, number, step)
                turn.running = None
            if result is None:
                result = ToolResult(
                    call_id=call.id,
                    content=f"tool {call.name!r} was not run: no plugin answered tools_execute",
                    is_error=True,
                )
            # bookkeeping before each emit: an abort can land inside the emit's await,
            # after the event is already in the log
            turn.pending.pop(0)
            turn.logged.discard(call.id)
            answer = result_data(call, result)
            secrets = agent.secrets
            if secrets:  # a command can print dsh's own environment (/proc/$PPID/environ)
                answer["content"] = redact(result.content, secrets)
            await emit("tool/result", answer)
        steered = bool(agent.inbox.steering)
        default = CONTINUE if calls or steered or stop == "paused" else STOP
        decision = await relay.agent_turn_continuation(agent, default, number, step)
        # Steering is logged only when a step of this turn will answer it; else it stays
        # queued, to be the next turn's prompt (requeue_steering): never left unanswered.
        # (not after an abort during the decision: no step would answer it)
        if agent.inbox.steering and decision.action == "continue" and more and not turn.stopping():
            await self._drain_steering()
        if decision.reason:
            if decision.action != "continue":  # told with the turn's end (a budget guard's)
                turn.stopped = redact(decision.reason, self.agent.secrets)
            elif more and not turn.stopping():
                data = {
                    "content": self._hidden(decision.reason, "plugin's steer"),
                    "source": "plugin",
                }
                await emit("steering/message", data)
            else:  # no step of this turn would answer it: said in the step limit's error
                turn.unsent = self._hidden(decision.reason, "plugin's steer")
        turn.open_step = None
        last = decision.action == "stop"
        if last:  # the turn ends with this step/end: nothing is in flight to abort
            turn.settled = True
        await emit("step/end", {"turn": number, "step": step})
        return last

    async def _drain_steering(self) -> int:
        items = self.agent.inbox.take_steering()
        for item in items:
            data = {"content": self._hidden(str(item), "steer")}
            await self.agent.session._record("steering/message", data)
        return len(items)

    def _hidden(self, content: str, what: str) -> str:
        """``content`` with each secret dsh holds (a model API key typed into a prompt)
        as ``***``, before it enters the log, the session's title and the request; said
        in a warning that names no key."""
        secrets = self.agent.secrets
        if not secrets:
            return content
        hidden = redact(content, secrets)
        if hidden != content:
            log.warning(
                "agent %r: the %s held a secret dsh holds (a model API key, or a plugin's "
                "secret): it is logged, stored and sent to the model with *** in its place",
                self.agent.id,
                what,
            )
        return hidden
