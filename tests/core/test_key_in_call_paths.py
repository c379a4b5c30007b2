"""The ways a call that held a secret dsh hides (a model API key, ``***`` in the log)
still ran after c2f7a1e (tests/core/test_key_in_call_arguments.py): each ran
``rm -f <key>`` as ``rm -f ***``, a shell glob that removes every file of the workspace.

- an ``agent_step_result`` hook that gives the calls ids of its own: the call's id no
  longer matched the marked one;
- the model repeating its refused call word for word, as its history shows it (a
  ``***`` it writes itself marked nothing);
- a plugin's model wrapping an HTTP model that makes new chunks of its chunks: the
  mark the inner redactor set was lost, and the outer one saw only ``***``;
- a key in a call's id or name passed the redactor as it came (to the log, the next
  request)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from loop_support import Models

from dsh import hookimpl
from dsh._config_models import ModelConfig
from dsh.harness import Harness
from dsh.llm import Finish, TextDelta, ToolCallDelta
from dsh.llm._hidden_args import NOT_RUN, NOT_RUN_CHANGED, NOT_RUN_STARS
from dsh.llm.base import ModelInfo
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import AssistantMessage, ModelRequest, ToolCall
from dsh.testing import ScriptedModel, check_invariants, run_turn, scripted_harness, text
from dsh.testing import tool_calls as calls

KEY = "sk-test-SECRETSECRETSECRET123456"


class Secret:
    """Adds ``KEY`` to the harness's secrets, as a model's API key is."""

    @hookimpl
    def harness_started(self, harness: Harness) -> None:
        harness.add_secrets([KEY])


async def turn(model: Any, workspace: Path, *plugins: Any, name: str = "scripted") -> list[Any]:
    scripted = isinstance(model, ScriptedModel)
    extra = [("secret", Secret()), *plugins, *([] if scripted else [("m", Models(model))])]
    async with scripted_harness(
        *([model] if scripted else []),
        plugins=extra,
        load_entry_points=False,
        workspace=workspace,
    ) as harness:
        agent = await harness.agents.create("a", options={"model": name})
        with anyio.fail_after(20):
            events = await run_turn(agent, "go")
    assert check_invariants(events) == []
    assert KEY not in json.dumps([e.data for e in events])
    return events


def names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def results(events: list[Any]) -> dict[str, str]:
    return {e.data["call_id"]: e.data["content"] for e in events if e.type == "tool/result"}


def populated(directory: Path) -> Path:
    (directory / "notes.txt").write_text("important\n")
    return directory


class RenameIds:
    """Gives the calls ids of its own (a plugin that normalises ids for a provider)."""

    @hookimpl
    def agent_step_result(self, message: AssistantMessage) -> AssistantMessage:
        content = tuple(
            b.model_copy(update={"id": "n-" + b.id}) if isinstance(b, ToolCall) else b
            for b in message.content
        )
        return message.model_copy(update={"content": content})


async def test_a_step_result_hook_renaming_the_ids_runs_none_of_the_answers_calls(
    tmp_path: Path,
) -> None:
    said = calls(("bash#c1", {"command": f"rm -f {KEY}"}), ("bash#c2", {"command": "touch b"}))
    model = ScriptedModel([said, text("understood")])
    events = await turn(model, populated(tmp_path), ("ids", RenameIds()))
    assert names(tmp_path) == ["notes.txt"]
    # the starred call is refused for its secret; the other, changed by the plugin after
    # the model made it, cannot be told from it
    assert results(events) == {"n-c1": NOT_RUN, "n-c2": NOT_RUN_CHANGED}


async def test_with_nothing_hidden_the_renamed_calls_run(tmp_path: Path) -> None:
    model = ScriptedModel([calls(("bash#c1", {"command": "touch made"})), text("ok")])
    events = await turn(model, tmp_path, ("ids", RenameIds()))
    assert names(tmp_path) == ["made"]
    assert list(results(events)) == ["n-c1"]


def repeat_last_call(request: ModelRequest) -> Any:
    """The model makes again the call it sees in its history, as it sees it."""
    last = [m for m in request.messages if isinstance(m, AssistantMessage)][-1]
    [call] = last.tool_calls
    return calls(("bash#c2", json.loads(call.arguments)), ("bash#c3", {"command": "touch b"}))


async def test_the_model_repeating_its_refused_call_with_the_stars_is_refused(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(
        [
            calls(("bash#c1", {"command": f"rm -f {KEY}"})),
            repeat_last_call,  # rm -f ***, and a call of its own
            calls(("bash#c4", {"command": "echo '***' > stars.txt"})),
            text("understood"),
        ]
    )
    events = await turn(model, populated(tmp_path))
    assert names(tmp_path) == ["b", "notes.txt"]  # the call without *** ran
    said = [json.loads(e.data["arguments"]) for e in events if e.type == "tool/call"]
    assert said[1] == {"command": "rm -f ***"}
    found = results(events)
    assert found == {"c1": NOT_RUN, "c2": NOT_RUN_STARS, "c3": found["c3"], "c4": NOT_RUN_STARS}
    assert "do not repeat the call with ***" in NOT_RUN and "not the secret" in NOT_RUN_STARS


async def test_an_agent_that_had_no_call_refused_runs_its_own_stars(tmp_path: Path) -> None:
    model = ScriptedModel([calls(("bash#c1", {"command": "echo '***' > s.txt"})), text("ok")])
    await turn(model, tmp_path)
    assert (tmp_path / "s.txt").read_text() == "***\n"


# -- a plugin's model wrapping an HTTP model (no network: its chunks are canned) --------


class CannedHttp(OpenAICompatibleModel):
    """An HTTP model whose server answers with ``answers`` (``stream`` hides its key)."""

    def __init__(self, answers: list[list[Any]]) -> None:
        config = ModelConfig(
            provider="openai-compatible",
            model="m",
            base_url="http://127.0.0.1:9/v1",
            api_key_env="CANNED_KEY",
        )
        super().__init__("inner", config, env={"CANNED_KEY": KEY})
        self.answers = answers

    async def chunks(self, request: ModelRequest) -> AsyncIterator[Any]:  # type: ignore[override]
        for chunk in self.answers.pop(0):
            yield chunk


class Rebuilding:
    """A plugin's model (a router, a fallback) that makes new chunks of its inner
    model's: the mark of a call that had a secret hidden is lost."""

    def __init__(self, inner: CannedHttp) -> None:
        self.inner = inner

    @property
    def info(self) -> ModelInfo:
        return ModelInfo("wrap", "wrap", context_window=8192)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        async for c in self.inner.stream(request):
            if isinstance(c, ToolCallDelta):
                c = ToolCallDelta(c.index, c.id, c.name, c.arguments)
            yield c


def call_chunks(index: int, call_id: str, command: str, size: int) -> list[Any]:
    raw = json.dumps({"command": command})
    pieces = [raw[i : i + size] for i in range(0, len(raw), size)]
    return [
        ToolCallDelta(index, call_id, "bash"),
        *(ToolCallDelta(index, arguments=p) for p in pieces),
    ]


@pytest.mark.parametrize("size", [1, 1000])
async def test_a_plugin_model_rebuilding_an_http_models_chunks_runs_no_starred_call(
    tmp_path: Path, size: int
) -> None:
    answer = [
        *call_chunks(0, "c1", f"rm -f {KEY}", size),
        *call_chunks(1, "c2", "touch b", size),
        Finish("tool_calls"),
    ]
    inner = CannedHttp([answer, [TextDelta("done"), Finish("stop")]])
    events = await turn(Rebuilding(inner), populated(tmp_path), name="wrap")
    assert names(tmp_path) == ["b", "notes.txt"]
    assert results(events)["c1"] == NOT_RUN


@pytest.mark.parametrize("where", ["id", "name"])
async def test_a_key_in_a_calls_id_or_name_is_hidden_and_the_call_not_run(
    tmp_path: Path, where: str
) -> None:
    said = f"bash#{KEY}" if where == "id" else f"{KEY}#c1"
    model = ScriptedModel([calls((said, {"command": "touch made"})), text("understood")])
    events = await turn(model, tmp_path)  # the key is in no event
    assert names(tmp_path) == []
    [call] = [e.data for e in events if e.type == "tool/call"]
    assert "***" in call[where]
    assert list(results(events).values()) == [NOT_RUN]
    assert KEY not in json.dumps([m.model_dump() for m in model.requests[1].messages])


async def test_a_resumed_session_whose_call_was_refused_refuses_the_stars_too(
    tmp_path: Path,
) -> None:
    # the refusal was kept by the step runner only: after a resume (dsh run --continue,
    # sessions resume) the model repeating `rm -f ***` from its history ran it
    from dsh.testing import InMemoryPersistence

    store = InMemoryPersistence()
    first = ScriptedModel([calls(("bash#c1", {"command": f"rm -f {KEY}"})), text("ok")])
    async with scripted_harness(
        first,
        plugins=[("secret", Secret()), store],
        load_entry_points=False,
        workspace=populated(tmp_path),
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "go")
        session_id = agent.session.id

    def repeat_refused_call(request: ModelRequest) -> Any:
        said = [m for m in request.messages if isinstance(m, AssistantMessage) and m.tool_calls]
        arguments = json.loads(said[-1].tool_calls[0].arguments)
        return calls(("bash#c2", arguments), ("bash#c3", {"command": "touch b"}))

    again = ScriptedModel([repeat_refused_call, text("understood")])
    async with scripted_harness(
        again, plugins=[("secret", Secret()), store], load_entry_points=False, workspace=tmp_path
    ) as harness:
        agent = await harness.agents.resume("b", session_id, options={"model": "scripted"})
        with anyio.fail_after(20):
            events = await run_turn(agent, "go on")
    assert names(tmp_path) == ["b", "notes.txt"]  # the call without *** ran
    assert results(events) == {"c2": NOT_RUN_STARS, "c3": results(events)["c3"]}


def test_the_guard_reads_a_refusal_of_an_earlier_wording_and_only_an_error() -> None:
    # the refusal's text was matched whole: a log written with the first wording
    # (c2f7a1e) was not seen; a tool's ordinary output equal to one set the guard off
    from dsh.llm._hidden_args import Guard
    from dsh.session import SessionEvent

    def result(content: str, is_error: bool) -> SessionEvent:
        data = {"call_id": "c", "name": "bash", "content": content, "is_error": is_error}
        return SessionEvent(type="tool/result", seq=0, time=0.0, data=data)

    earlier = "not run: the arguments held a secret that dsh keeps out of the conversation"
    assert Guard([result(earlier, True)]).refused
    assert Guard([result(NOT_RUN_STARS, True)]).refused
    assert Guard([result("not run: *** is not the key: it stands for a secret", True)]).refused
    assert not Guard([result(NOT_RUN, False)]).refused
    assert not Guard([result("ran fine", True)]).refused
