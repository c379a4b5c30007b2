"""Fixtures for the permissions tests.

``layout`` builds a workspace with the traps the corpus needs: a ``.env``, a symlink to
it, symlinks out of the workspace (to a sibling ``outside`` directory and to ``/etc``)
and a ``.git`` directory. ``judge(rules, tool, arguments, mode=...)`` sends one tool
call through the real dispatcher — dsh-permissions first, the core executor last —
with a front end that records every question and answers "deny", and reports what
happened: ``allow`` (the call went on to the executor), ``ask`` (the front end was
asked) or ``deny`` (refused without asking). Every call is checked for consistency on
the way: a denied call never ran, an allowed one did, and exactly one decision was
logged.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from permissions_util import Judged, Layout

if find_spec("dsh_permissions") is None:  # not installed: nothing here can run
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    from permissions_util import Layout

    root = tmp_path.resolve()
    ws, outside = root / "ws", root / "outside"
    for directory in (ws / "src" / "config", ws / "src" / "secrets", ws / ".git", outside):
        directory.mkdir(parents=True)
    (ws / "src" / "a.py").write_text("print('a')\n")
    (ws / ".env").write_text("TOKEN=x\n")
    (ws / ".git" / "config").write_text("[core]\n")
    (outside / "secret.txt").write_text("top secret\n")
    (ws / "innocent.txt").symlink_to(ws / ".env")
    (ws / "link_out").symlink_to(outside)
    (ws / "src" / "escape").symlink_to(outside)
    (ws / "link_etc").symlink_to("/etc")
    return Layout(root, ws, outside)


Judge = Callable[..., Awaitable["Judged"]]


@pytest.fixture
def judge(layout: Layout) -> Judge:
    from permissions_util import Asker, FakeAgent, Judged, make_tools

    import dsh_permissions
    from dsh import ToolCall, create_plugin_manager
    from dsh_permissions import PermissionAnswer

    async def run(
        rules: dict[str, Any],
        name: str,
        arguments: dict[str, Any] | str,
        mode: str = "default",
        answer: Any = None,
    ) -> Judged:
        asker = Asker(answer or PermissionAnswer.deny("corpus"))
        pm = create_plugin_manager(
            [("permissions", dsh_permissions), ("asker", asker)], load_entry_points=False
        )
        ran: list[str] = []
        options = {"permissions": {"mode": mode, **rules}}
        agent = FakeAgent(layout.ws, make_tools(ran), pm.relay, options)
        if isinstance(arguments, str):
            raw = arguments
        else:
            raw = json.dumps({k: _fill(layout, v) for k, v in arguments.items()})
        call = ToolCall(id="c1", name=name, arguments=raw)
        result = await pm.relay.tools_execute(agent, call, 1, 1)
        events = [e.data for e in agent.session.events if e.type == "permission/decision"]
        assert len(events) == 1, events
        (event,) = events
        asked = bool(asker.requests)
        decision = "ask" if asked else event["decision"]
        if event["decision"] == "allow":  # passed on to the core executor
            assert result is not None and not result.content.startswith("Permission denied")
            assert bool(ran) == (agent.tools.get(name) is not None), (ran, result)
        else:
            assert ran == [] and result is not None and result.is_error, (ran, result)
            # arguments that cannot be read are not a permission matter: said as such
            unreadable = "arguments" in event["reason"] and not event["parts"]
            prefix = f"{name!r} was not run: the arguments" if unreadable else "Permission denied:"
            assert result.content.startswith(prefix), result.content
        if asked:
            assert event["decision"] == "deny" and event["front_end"] == "asker"
        return Judged(decision, result, event, ran, asker.requests)

    return run


def _fill(layout: Layout, value: Any) -> Any:
    if isinstance(value, str):
        return layout.fill(value)
    if isinstance(value, list):
        return [_fill(layout, v) for v in value]
    return value
