"""A front end that raises (``permission_ask`` or the core's ``tools_approval``) denies
the call, and its failure is reported as dsh reports a failure it carries on without
(an ERROR record naming the plugin and hook; ``ErrorRecorder.failures``), with the keys
dsh holds hidden. Before, the deny's reason was all there was: no record, nothing in
``failures``, and an exception with no message read ``EOFError: ``."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from permissions_util import Asker, CorpusTools

import dsh_permissions
from dsh import HookError, hookimpl
from dsh.approvals import ApprovalRequest
from dsh.testing import ErrorRecorder, ScriptedModel, run_turn, scripted_harness, text
from dsh.testing import tool_calls as calls

pytestmark = pytest.mark.plugins("permissions")

SECRET = "sk-front-end-secret-0123456789"


class Terminal:
    """A core front end (``tools_approval``) that raises ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    @hookimpl
    async def tools_approval(self, request: ApprovalRequest) -> Any:
        raise self.error


def front_end(hook: str, error: Exception) -> object:
    return Asker(error=error) if hook == "permission_ask" else Terminal(error)


async def run(hook: str, error: Exception) -> tuple[dict[str, Any], str, ErrorRecorder]:
    """One ``bash make test`` call that no rule allows, put to a front end raising
    ``error``: its decision, what the model read, and the failures recorded."""
    errors = ErrorRecorder()
    model = ScriptedModel([calls(("bash#b", {"command": "make test"})), text("ok")])
    tools = CorpusTools()
    plugins = [
        ("permissions", dsh_permissions),
        ("tools", tools),
        ("ui", front_end(hook, error)),
        errors,
    ]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        harness.add_secrets([SECRET])
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(10):
            events = await run_turn(agent, "go")
    assert tools.ran == []  # fails closed
    (decision,) = [e.data for e in events if e.type == "permission/decision"]
    seen = model.requests[1].messages[-1].content
    return decision, seen if isinstance(seen, str) else str(seen), errors


HOOKS = ["permission_ask", "tools_approval"]


@pytest.mark.parametrize("hook", HOOKS)
async def test_a_raising_front_end_denies_and_is_reported(hook, caplog):
    error = RuntimeError("tty gone")
    with caplog.at_level(logging.ERROR):
        decision, seen, errors = await run(hook, error)

    said = "the front end 'ui' failed: RuntimeError: tty gone"
    assert decision["decision"] == "deny" and decision["front_end"] == "ui"
    assert said in decision["reason"] and said in seen
    (failure,) = errors.failures
    assert isinstance(failure, HookError)
    assert (failure.plugin, failure.hook, failure.cause) == ("ui", hook, error)
    records = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in records] == [str(failure)]
    assert "plugin 'ui' failed in hook " + hook in records[0].getMessage()


@pytest.mark.parametrize("hook", HOOKS)
async def test_an_exception_without_a_message_is_named_by_its_type_alone(hook):
    decision, seen, errors = await run(hook, EOFError())

    said = "the front end 'ui' failed: EOFError"
    assert decision["reason"].endswith(said) and said + "." in seen
    assert "EOFError: " not in decision["reason"] and "EOFError: " not in seen
    (failure,) = errors.failures
    assert str(failure).endswith("): EOFError")


@pytest.mark.parametrize("hook", HOOKS)
async def test_a_key_the_failure_quotes_is_hidden_in_the_reason_and_the_log(hook, caplog):
    error = RuntimeError(f"the terminal refused token {SECRET}")
    with caplog.at_level(logging.DEBUG):
        decision, seen, errors = await run(hook, error)

    said = "the front end 'ui' failed: RuntimeError: the terminal refused token ***"
    assert said in decision["reason"] and said in seen
    assert SECRET not in repr(decision) and SECRET not in seen
    assert SECRET not in caplog.text  # the message and the traceback
    (failure,) = errors.failures
    assert failure.cause is error  # as raised (docs/testing.md)
    assert SECRET not in str(failure)
