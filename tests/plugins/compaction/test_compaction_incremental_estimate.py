"""The incremental estimate of a request (``RequestEstimator.request``, kept across
requests) is the estimate counted from scratch, whatever happened to the history
between two requests: appended to, replaced by a compaction (a summary, a prune that
keeps its length), a fork of the session, a request a plugin rebuilt, a changed system
prompt or tools (equal but new objects, and other content). The threshold decision
(behaviour 44) is made on this estimate."""

from __future__ import annotations

import pytest

from dsh import (
    AssistantMessage,
    ModelRequest,
    TextBlock,
    ToolCall,
    ToolSpec,
    UserMessage,
)
from dsh.session import CORE_REDUCERS, Session
from dsh_compaction import PRUNE, SUMMARY, HeuristicCounter, RequestEstimator, TokenCounter
from dsh_compaction._events import reduce_prune, reduce_summary

pytestmark = pytest.mark.plugins("compaction")

REDUCERS = {**CORE_REDUCERS, SUMMARY: reduce_summary, PRUNE: reduce_prune}


def scratch(counter: TokenCounter, request: ModelRequest) -> int:
    """The estimate of ``request`` counted anew, message by message."""
    return (
        counter.count_text(request.system)
        + counter.count_tools(request.tools)
        + sum(map(counter.count_message, request.messages))
    )


def turn(session: Session, index: int, *, output: str = "3") -> None:
    """A turn's four messages: prompt, a tool call, its result, the answer."""
    session._append("user/message", {"content": f"add {index} and 2, please"})
    call = ToolCall(id=f"c{index}", name="add", arguments=f'{{"a":{index},"b":2}}')
    message = AssistantMessage(content=(TextBlock(text="adding"), call))
    session._append("assistant/message", {"message": message.model_dump(mode="json")}, message)
    data = {"call_id": f"c{index}", "name": "add", "content": output, "is_error": False}
    session._append("tool/result", data)
    answer = AssistantMessage(content=(TextBlock(text=f"it is {index + 2}"),))
    session._append("assistant/message", {"message": answer.model_dump(mode="json")}, answer)


def test_the_kept_estimate_is_the_one_counted_from_scratch_after_every_change() -> None:
    counter = HeuristicCounter(chars_per_token=1.0)
    estimator = RequestEstimator(counter)
    tools = (ToolSpec(name="add", description="Add two numbers.", parameters={"a": 1}),)
    system = "You add."
    checked: list[str] = []

    def check(what: str, session: Session, **changes: object) -> None:
        fields = {"system": system, "tools": tools, "messages": session.history, **changes}
        request = ModelRequest.model_construct(**fields)  # as the loop builds it
        assert estimator.request(request) == scratch(counter, request), what
        checked.append(what)

    session = Session("s", reducers=REDUCERS)
    check("empty", session)
    for index in range(3):
        turn(session, index, output="x" * (10 + index))
        check(f"turn {index}", session)
        session._append("user/message", {"content": "and then?"})
        check(f"turn {index}, one more message", session)
        check(f"turn {index}, nothing new", session)

    # a compaction replaces the history: a summary of the first 6 messages
    session.append(SUMMARY, {"summary": "added things", "replaces": 6, "kept": [1]})
    check("summary", session)
    turn(session, 10)
    check("after the summary", session)

    # a prune: the same length, one tool result's content replaced
    history = session.history
    index = next(i for i, m in enumerate(history) if getattr(m, "role", "") == "tool")
    stub = {"index": index, "call_id": history[index].call_id, "content": "[removed]"}  # type: ignore[union-attr]
    length = len(history)
    session.append(PRUNE, {"pruned": [stub]})
    assert len(session.history) == length
    check("prune", session)

    # a fork: a session with the same events (equal messages, other objects), then each
    # appended to in turn
    fork = Session("fork", session.events, reducers=REDUCERS)
    check("fork", fork)
    session._append("user/message", {"content": "the original goes on"})
    check("original after the fork", session)
    turn(fork, 20, output="a much longer output of the fork's tool")
    check("fork goes on", fork)
    check("original again", session)

    # the system prompt and the tools: equal new objects, then other content
    check("an equal system prompt", session, system="".join(["You ", "add."]))
    check("equal tools", session, tools=tuple(tools))
    check("another system prompt", session, system="You add, and more.")
    check("other tools", session, tools=(*tools, ToolSpec(name="sub", description="Sub.")))
    check("no tools", session, tools=())
    check("back to the first", session)

    # a request a plugin rebuilt: a list, not the session's view
    check("a note appended", session, messages=[*session.history, UserMessage(content="note")])
    check("trimmed", session, messages=list(session.history)[2:])
    check("the history again", session)
    turn(session, 30)
    check("the history grown", session)
    assert len(checked) == 27


def test_a_rebuilt_request_measured_against_its_history_is_the_scratch_estimate() -> None:
    """``request(request, history)``: a plugin appended a note to the history."""
    counter = HeuristicCounter(chars_per_token=1.0)
    estimator = RequestEstimator(counter)
    session = Session("s", reducers=REDUCERS)
    for index in range(4):
        turn(session, index)
        history = session.history
        messages = [*history, UserMessage(content=f"note {index}")]
        request = ModelRequest.model_construct(system="s", messages=messages)
        assert estimator.request(request, history) == scratch(counter, request)
    session.append(SUMMARY, {"summary": "all of it", "replaces": 8})
    history = session.history
    request = ModelRequest.model_construct(
        system="s", messages=[UserMessage(content="first"), *history]
    )
    assert estimator.request(request, history) == scratch(counter, request)


def test_subclasses_of_the_message_and_block_types_count_as_their_bases() -> None:
    """``count_message`` tries the exact classes first; a subclass counts the same."""

    class MyText(TextBlock):
        pass

    class MyCall(ToolCall):
        pass

    class MyAssistant(AssistantMessage):
        pass

    class MyUser(UserMessage):
        pass

    counter = HeuristicCounter(chars_per_token=1.0)
    call = {"id": "c", "name": "add", "arguments": '{"a":1}'}
    base = AssistantMessage(content=(TextBlock(text="hello"), ToolCall(**call)))
    mine = MyAssistant(content=(MyText(text="hello"), MyCall(**call)))
    assert counter.count_message(mine) == counter.count_message(base) == 4 + 5 + 8 + 3 + 7
    assert counter.count_message(MyUser(content="four")) == 4 + 4
