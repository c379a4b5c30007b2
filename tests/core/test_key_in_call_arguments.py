"""A tool call whose arguments held a secret dsh knows (a model API key) is not run: the
redactor hides the key as ``***`` (``dsh.llm._redact_answer``), so the call left is not
the one the model asked for. It is logged as any call, with ``***``, and answered with
an error result the model can act on (``dsh.llm._hidden_args.NOT_RUN``), without asking
a plugin (``tools_execute``) whether it may run.

Before: the call ran with ``***`` in the key's place. ``***`` is a shell glob: ``bash``
ran ``rm -f <key>`` as ``rm -f ***`` and removed every file of the workspace; a
``write`` of ``GW_KEY=<key>`` wrote ``GW_KEY=***`` and said it had."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh import ToolResultMessage, hookimpl
from dsh.harness import Harness
from dsh.llm import Assembler, Finish, ToolCallDelta
from dsh.llm._hidden_args import NOT_RUN, HiddenArguments
from dsh.llm._redact_answer import AnswerRedactor
from dsh.testing import ScriptedModel, check_invariants, run_turn, scripted_harness, text
from dsh.testing import tool_calls as calls

KEY = "sk-test-SECRETSECRETSECRET123456"


class Secret:
    """Adds ``KEY`` to the harness's secrets, as a model's API key is."""

    @hookimpl
    def harness_started(self, harness: Harness) -> None:
        harness.add_secrets([KEY])


async def turn(
    script: list[Any], workspace: Path, *plugins: Any
) -> tuple[list[Any], ScriptedModel]:
    model = ScriptedModel([*script, text("understood")])
    extra = [("secret", Secret()), *plugins]
    async with scripted_harness(
        model, plugins=extra, load_entry_points=False, workspace=workspace
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(20):
            events = await run_turn(agent, "go")
    assert check_invariants(events) == []
    assert KEY not in json.dumps([e.data for e in events])
    return events, model


def names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def results(events: list[Any]) -> dict[str, dict[str, Any]]:
    return {e.data["call_id"]: e.data for e in events if e.type == "tool/result"}


async def test_a_bash_call_with_the_key_is_not_run_and_the_model_reads_why(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("important\n")
    command = f"rm -f {KEY}; echo ran > ran.txt"
    events, model = await turn([calls(("bash#c1", {"command": command}))], tmp_path)
    assert names(tmp_path) == ["notes.txt"]  # nothing ran
    [call] = [e.data for e in events if e.type == "tool/call"]
    assert json.loads(call["arguments"]) == {"command": "rm -f ***; echo ran > ran.txt"}
    assert results(events)["c1"] == {
        "call_id": "c1",
        "name": "bash",
        "content": NOT_RUN,
        "is_error": True,
    }
    seen = model.requests[1].messages[-1]
    assert isinstance(seen, ToolResultMessage) and seen.is_error and seen.content == NOT_RUN
    assert [e.data["reason"] for e in events if e.type == "turn/end"] == ["completed"]


async def test_a_write_of_the_key_writes_nothing(tmp_path: Path) -> None:
    arguments = {"path": "config.env", "content": f"GW_KEY={KEY}\n"}
    events, _ = await turn([calls(("write#w1", arguments))], tmp_path)
    assert not (tmp_path / "config.env").exists()
    assert results(events)["w1"]["content"] == NOT_RUN


async def test_only_the_call_that_held_the_key_and_those_of_its_answer_with_stars_are_refused(
    tmp_path: Path,
) -> None:
    script = [
        calls(
            ("bash#c1", {"command": f"echo {KEY} > key.txt"}),
            # the model's own ***, in an answer that had a key hidden (by another model
            # around this one, the mark may be lost: dsh.llm._hidden_args): not run either
            ("bash#c2", {"command": "echo '***' > stars.txt"}),
            ("bash#c3", {"command": "echo ok > ok.txt"}),
        )
    ]
    events, _ = await turn(script, tmp_path)
    assert names(tmp_path) == ["ok.txt"]
    found = results(events)
    assert [found[c]["content"] for c in ("c1", "c2")] == [NOT_RUN, NOT_RUN]
    assert found["c3"]["is_error"] is False


class Asked:
    """A permission front end that records each question and allows."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    @hookimpl(optionalhook=True)
    async def permission_ask(self, request: Any) -> Any:
        from dsh_permissions import PermissionAnswer

        self.asked.append(request)
        return PermissionAnswer.once()


@pytest.mark.plugins("permissions")
async def test_with_permissions_no_question_is_asked_for_it(tmp_path: Path) -> None:
    import dsh_permissions

    asked = Asked()
    (tmp_path / "notes.txt").write_text("important\n")
    said = calls(("bash#c1", {"command": f"rm -f {KEY}"}), ("bash#c2", {"command": "touch made"}))
    events, _ = await turn([said], tmp_path, ("permissions", dsh_permissions), asked)
    assert [r.call_id for r in asked.asked] == ["c2"]  # asked about the other call only
    assert names(tmp_path) == ["made", "notes.txt"]
    assert results(events)["c1"]["content"] == NOT_RUN
    assert [e.data["call_id"] for e in events if e.type == "permission/decision"] == ["c2"]


def redacted(chunks: list[Any], secrets: tuple[str, ...] = (KEY,)) -> list[Any]:
    hide = AnswerRedactor(secrets)
    return [shown for chunk in chunks for shown in hide.take(chunk)]


def hidden_calls(chunks: list[Any]) -> frozenset[str]:
    assembler = Assembler()
    for chunk in chunks:
        assembler.add(chunk)
    assembler.message()
    return assembler.hidden_calls()


@pytest.mark.parametrize("size", [1, 3, 7, 1000])
def test_the_redactor_marks_the_calls_it_changed_and_no_other(size: int) -> None:
    raw = json.dumps({"command": f"echo {KEY} '***'"})
    pieces = [raw[i : i + size] for i in range(0, len(raw), size)]
    said = [
        ToolCallDelta(0, "c1", "bash"),
        *(ToolCallDelta(0, arguments=piece) for piece in pieces),
        ToolCallDelta(1, "c2", "bash", '{"command": "echo \'***\'"}'),
        Finish("tool_calls"),
    ]
    shown = redacted(said)
    assert hidden_calls(shown) == {"c1"}
    assert any(isinstance(c, HiddenArguments) for c in shown)
    # a redactor around another (a plugin's model wrapping an HTTP model) passes the
    # mark on, though it finds no key in what the inner one shows
    assert hidden_calls(redacted(shown, ("another-secret-value",))) == {"c1"}
    assert hidden_calls(said) == frozenset()  # the model's own ***: nothing marked


def test_a_redactor_around_another_keeps_the_mark_of_what_it_holds_back() -> None:
    # the outer redactor holds "abc" (it may start its own secret) and shows the piece
    # without it: a piece of its own, which is marked as the inner redactor's was
    said = [
        HiddenArguments(0, "c1", "bash", '{"command": "echo *** abc'),
        ToolCallDelta(0, arguments='xyz"}'),
        Finish("tool_calls"),
    ]
    shown = redacted(said, ("abcdefghijkl",))
    assert "".join(c.arguments for c in shown[:-1]) == '{"command": "echo *** abcxyz"}'
    assert shown[0] != said[0] and hidden_calls(shown) == {"c1"}
