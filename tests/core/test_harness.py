"""The harness: registration at start-up, config-driven agents, clean exit."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from dsh import ConfigError, DshError, hookimpl
from dsh.errors import HookError
from dsh.harness import Harness
from dsh.testing import ScriptedModel, run_turn, scripted_harness

CONFIG = """
model: scripted
models:
  scripted: {provider: scripted}
agents:
  - id: helper
    system_prompt: You help.
    max_steps: 3
"""


async def test_agents_in_config_start_with_the_harness_and_are_disposed_on_exit() -> None:
    model = ScriptedModel(["hi"])
    async with scripted_harness(model, config_text=CONFIG, load_entry_points=False) as h:
        helper = h.agents.get("helper")
        assert helper is not None
        assert helper.agent.options["max_steps"] == 3
        events = await run_turn(helper, "hello")
        assert events[-1].data["reason"] == "completed"
        assert model.requests[0].system == "You help."
        assert model.requests[0].model == "scripted"
    assert helper.agent.status == "disposed"
    assert h.agents.list() == []
    assert h.sessions.list() == []


async def test_plugin_settings_section_is_validated_by_its_model() -> None:
    class Settings(BaseModel):
        level: int

    class Plugin:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            register(Settings)

    ok = Harness(
        plugins=[("loud", Plugin())], load_entry_points=False, config_text="loud: {level: 3}"
    )
    async with ok as h:
        assert h.config.section("loud") == Settings(level=3)
    bad = Harness(
        plugins=[("loud", Plugin())], load_entry_points=False, config_text="loud: {level: high}"
    )
    with pytest.raises(ConfigError, match=r"loud\.level"):
        async with bad:
            pass


class Level(BaseModel):
    level: int = 0


@pytest.mark.parametrize(
    ("registered", "error"),
    [
        ((dict,), "plugin 'loud' registered settings <class 'dict'>, which is not a pydantic"),
        ((Level(),), "plugin 'loud' registered settings an instance of Level, which is not a"),
        ((Level, 3), "plugin 'loud' registered settings for section 3, not a name"),
        ((Level, ""), "plugin 'loud' registered settings for section '', not a name"),
        ((Level, "x", Level, "x"), "plugin 'loud' registers settings for 'x' a second time"),
    ],
    ids=["not-a-model", "instance", "section-int", "section-empty", "twice"],
)
async def test_settings_that_cannot_be_a_section_are_refused_naming_the_plugin(
    registered: tuple[Any, ...], error: str
) -> None:
    class Plugin:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            for at in range(0, len(registered), 2):
                register(*registered[at : at + 2])

    harness = Harness(plugins=[("loud", Plugin())], load_entry_points=False)
    with pytest.raises(DshError, match=re.escape(error)):
        async with harness:
            pass


async def test_duplicate_agent_id_is_refused() -> None:
    async with scripted_harness(ScriptedModel(), load_entry_points=False) as h:
        await h.agents.create("a")
        with pytest.raises(DshError, match="agent 'a' already exists"):
            await h.agents.create("a")


async def test_agents_need_a_started_harness() -> None:
    with pytest.raises(DshError, match="not started"):
        _ = Harness(load_entry_points=False).agents


async def test_tools_can_ask_for_a_context_with_the_workspace(tmp_path: Any) -> None:
    from dsh.testing import tool_calls
    from dsh.tools import ToolContext, tool

    @tool
    def where(name: str, context: ToolContext) -> str:
        "Say where the agent works."
        return f"{name}@{context.workspace}#{context.call.id}"

    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(where)

    assert "context" not in where.spec.parameters["properties"]
    model = ScriptedModel([tool_calls(("where", {"name": "x"})), "done"])
    plugins = [("tools", Tools())]
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "where?")
    result = next(e for e in events if e.type == "tool/result")
    assert result.data["content"] == f"x@{tmp_path}#call-0"


async def test_a_tool_resolves_paths_as_the_built_in_file_tools_do(tmp_path: Path) -> None:
    from dsh.testing import tool_calls
    from dsh.tools import ToolContext, tool

    @tool
    def size(path: str, context: ToolContext) -> str:
        "The size of a file in the workspace."
        return str(context.resolve_path(path).stat().st_size)

    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(size)

    work, shared = tmp_path / "work", tmp_path / "shared"
    (work / "src").mkdir(parents=True)
    shared.mkdir()
    (work / "src" / "a.txt").write_text("four")
    (shared / "b.txt").write_text("eleven char")
    (work / "out").symlink_to(tmp_path)
    calls = [
        ("src/../src/a.txt", "4"),
        (str(work / "src" / "a.txt"), "4"),
        ("../shared/b.txt", "11"),  # an extra root
        ("out/shared/b.txt", "11"),  # a symlink into an extra root
        ("out/secret", "'out/secret' (resolves to {tmp}/secret) is outside the workspace"),
        ("/etc/passwd", "'/etc/passwd' is outside the workspace {tmp}/work or the extra"),
        ("  ", "the path is empty; use '.' for the workspace itself"),
    ]
    model = ScriptedModel([tool_calls(*[("size", {"path": path}) for path, _ in calls]), "done"])
    async with scripted_harness(
        model, plugins=[("tools", Tools())], load_entry_points=False, workspace=work
    ) as h:
        options = {"model": "scripted", "extra_roots": ["../shared"]}
        agent = await h.agents.create("a", options=options)
        events = await run_turn(agent, "sizes?")
    results = [e.data for e in events if e.type == "tool/result"]
    for (path, expected), result in zip(calls, results, strict=True):
        expected = expected.format(tmp=tmp_path)
        if expected.isdigit():
            assert (result["is_error"], result["content"]) == (False, expected), path
        else:
            assert result["is_error"] and expected in result["content"], (path, result)


async def test_harness_started_sees_validated_config_before_agents_start() -> None:
    seen: list[str] = []

    class Settings(BaseModel):
        level: int

    class Plugin:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            register(Settings)

        @hookimpl
        def harness_started(self, harness: Harness) -> None:
            section = harness.config.section("watch")
            seen.append(f"started level={section.level} agents={len(harness.agents.list())}")

        @hookimpl
        def agent_created(self, agent: Any) -> None:
            seen.append(f"created {agent.id}")

        @hookimpl
        def agent_disposed(self, agent: Any) -> None:
            seen.append(f"disposed {agent.id}")

        @hookimpl
        async def harness_stopping(self, harness: Harness) -> None:
            seen.append(f"stopping agents={len(harness.agents.list())}")

    config = CONFIG + "watch: {level: 2}\n"
    async with scripted_harness(
        ScriptedModel(), plugins=[("watch", Plugin())], load_entry_points=False, config_text=config
    ):
        pass
    assert seen == [
        "started level=2 agents=0",
        "created helper",
        "disposed helper",
        "stopping agents=0",
    ]


async def test_resume_without_options_reuses_the_stored_ones() -> None:
    from dsh.testing import InMemoryPersistence

    store = InMemoryPersistence()
    model = ScriptedModel(["one", "two"])
    options = {"model": "scripted", "system_prompt": "Be kind.", "max_steps": 4}
    plugins = [("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "hi")
        session_id = agent.session.id
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        resumed = await h.agents.resume("a", session_id)
        assert resumed.agent.options == options
        await run_turn(resumed, "again")
    assert model.requests[1].system == "Be kind."


async def test_options_that_are_not_json_are_left_out_of_the_session_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import datetime

    from dsh.testing import InMemoryPersistence

    store = InMemoryPersistence()
    model = ScriptedModel(["one", "two"])
    when = datetime.date(2026, 11, 30)  # a YAML date in agents[].options reads as this
    options = {"model": "scripted", "system_prompt": "Be kind.", "since": when}
    plugins = [("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "hi")
        session_id = agent.session.id
    assert "'since' is not stored with the session" in caplog.text
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        resumed = await h.agents.resume("a", session_id)
        assert resumed.agent.options == {"model": "scripted", "system_prompt": "Be kind."}
        await run_turn(resumed, "again")
    assert model.requests[1].system == "Be kind."


async def test_the_section_of_a_blocked_plugin_is_left_unchecked() -> None:
    from dsh import create_plugin_manager

    class Settings(BaseModel):
        level: int = 1

    class Shouty:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            register(Settings)

    text = "shouty:\n  level: not-a-number\n"
    with pytest.raises(ConfigError, match=r"shouty\.level"):  # loaded: checked
        async with Harness(plugins=[("shouty", Shouty())], config_text=text):
            pass
    pm = create_plugin_manager([], load_entry_points=False)
    pm.set_blocked("shouty")
    async with Harness(pm=pm, config_text=text) as harness:  # -p no:shouty: left alone
        assert harness.config.section("shouty") is None
    with pytest.raises(ConfigError, match="section 'shouty' is for a plugin that is not"):
        async with Harness(config_text=text, load_entry_points=False):
            pass


async def test_b40_a_resumed_session_keeps_its_stored_creation_time() -> None:
    import dataclasses

    from dsh.testing import InMemoryPersistence

    store = InMemoryPersistence()
    model = ScriptedModel(["one"])
    plugins = [("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a")
        await run_turn(agent, "hi")
        session_id = agent.session.id
    store.stored[session_id] = dataclasses.replace(store.stored[session_id], created=1000.5)
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        resumed = await h.agents.resume("a", session_id)
        assert resumed.session.created == 1000.5


async def test_resume_with_explicit_options_uses_them_not_the_stored_ones() -> None:
    from dsh.testing import InMemoryPersistence

    store = InMemoryPersistence()
    model = ScriptedModel(["one", "two"])
    plugins = [("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "system_prompt": "Old."})
        await run_turn(agent, "hi")
        session_id = agent.session.id
    explicit = {"model": "scripted", "system_prompt": "New."}
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        resumed = await h.agents.resume("a", session_id, options=explicit)
        assert resumed.agent.options == explicit
        await run_turn(resumed, "again")
    assert model.requests[1].system == "New."


async def test_agent_created_names_its_source() -> None:
    from dsh.testing import InMemoryPersistence

    seen: list[tuple[str, str]] = []

    class Watch:
        @hookimpl
        def agent_created(self, agent: Any, source: str) -> None:
            seen.append((agent.id, source))

    store = InMemoryPersistence()
    plugins = [("watch", Watch()), ("mem", store)]
    model = ScriptedModel(["one"])
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, config_text=CONFIG
    ) as h:
        made = await h.agents.create("made")
        await run_turn(made, "hi")
        session_id = made.session.id
        await made.dispose()
        await h.agents.resume("again", session_id)
    assert seen == [("helper", "startup"), ("made", "create"), ("again", "resume")]


async def test_create_keeps_the_callers_own_stored_options() -> None:
    async with scripted_harness(ScriptedModel(), load_entry_points=False) as h:
        agent = await h.agents.create(
            "a", meta={"options": {"system_prompt": "Mine."}}, options={"model": "scripted"}
        )
        assert agent.session.meta["options"] == {"system_prompt": "Mine."}
        plain = await h.agents.create("b", options={"model": "scripted"})
        assert plain.session.meta["options"] == {"model": "scripted"}


async def test_b32_a_cancelled_dispose_caller_does_not_cut_the_final_flush_short() -> None:
    import anyio

    from dsh.testing import InMemoryPersistence

    flushing = anyio.Event()
    disposed = anyio.Event()
    flushed: list[int] = []
    final = False

    class SlowStore:
        @hookimpl
        async def session_flush(self, session: Any) -> None:
            if not final:
                return  # the flush after the turn; the final one is slow
            flushing.set()
            await anyio.sleep(0.05)
            flushed.append(len(session.events))

        @hookimpl
        def agent_disposed(self, agent: Any) -> None:
            disposed.set()

    store = InMemoryPersistence()
    plugins = [("slow", SlowStore()), ("mem", store)]
    async with scripted_harness(
        ScriptedModel(["one"]), plugins=plugins, load_entry_points=False
    ) as h:
        agent = await h.agents.create("a")
        await run_turn(agent, "hi")
        final = True
        with anyio.fail_after(5):
            with anyio.CancelScope() as caller:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(agent.dispose)
                    await flushing.wait()
                    caller.cancel()  # the dispose() caller gives up mid-flush
            await disposed.wait()
        assert flushed == [len(agent.session.events)]
        assert len(store.stored[agent.session.id].events) == len(agent.session.events)
        assert h.agents.get("a") is None


async def test_b32_a_raising_final_flush_still_forgets_the_agent_and_releases_every_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import anyio

    disposed: list[str] = []
    after: list[object] = []

    class Watch:
        @hookimpl
        def agent_disposed(self, agent: Any) -> None:
            disposed.append(agent.id)

    async def broken_flush() -> None:
        raise RuntimeError("disk on fire")

    returned: list[str] = []
    # the failure surfaces from the harness's task group
    with pytest.raises(ExceptionGroup) as raised:  # noqa: PT012
        async with scripted_harness(
            ScriptedModel(), plugins=[("watch", Watch())], load_entry_points=False
        ) as h:
            handle = await h.agents.create("a")
            monkeypatch.setattr(handle.agent, "flush", broken_flush)

            async def dispose(name: str) -> None:
                await handle.dispose()
                returned.append(name)

            try:
                with anyio.fail_after(5):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(dispose, "first")
                        tg.start_soon(dispose, "second")
            finally:
                after.append(h.agents.get("a"))
                h.agents._live.pop("a", None)  # a broken teardown must not hang the exit
    assert "disk on fire" in repr(raised.value)
    assert after == [None]
    assert disposed == ["a"]
    assert sorted(returned) == ["first", "second"]


@pytest.mark.timeout(60)  # the bug was a loop spinning forever: fail, do not hang
async def test_b32_a_harness_left_by_an_outer_cancellation_still_flushes_its_agents() -> None:
    # `with anyio.move_on_after(...)` around a harness whose persistence flushes in a
    # worker thread: the final flush ran in a cancelled scope and spun forever
    import anyio

    from dsh.testing import hang

    flushed: list[list[str]] = []

    class ThreadedFlush:
        @hookimpl
        async def session_flush(self, session: Any) -> None:
            types = [event.type for event in session.events]
            await anyio.to_thread.run_sync(flushed.append, types)

    with anyio.CancelScope() as outer:

        class CancelOnChunk:
            @hookimpl
            def session_event(self, event: Any) -> None:
                if event.type == "assistant/chunk":
                    outer.cancel()  # the deadline of an outer timeout, mid-stream

        plugins = [("flush", ThreadedFlush()), ("cancel", CancelOnChunk())]
        model = ScriptedModel([hang("part")])
        async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            await run_turn(agent, "hi")
    assert outer.cancelled_caught
    assert flushed and flushed[-1][-1] == "turn/end"  # the final flush saw the turn's end


async def test_a_failing_harness_started_stops_start_up_naming_the_plugin() -> None:
    seen: list[str] = []

    class Broken:
        @hookimpl
        def harness_started(self) -> None:
            seen.append("broken started")
            raise OSError("cannot open the audit log")

        @hookimpl
        def harness_stopping(self) -> None:
            seen.append("broken stopping")

    class After:
        @hookimpl
        def harness_started(self) -> None:
            seen.append("after started")

        @hookimpl
        def agent_created(self, agent: Any) -> None:
            seen.append(f"created {agent.id}")

    model = ScriptedModel()
    # pluggy calls the last registered first: "broken" runs before "after"
    plugins = [("after", After()), ("broken", Broken())]
    with pytest.raises(HookError) as caught:
        async with scripted_harness(
            model, plugins=plugins, load_entry_points=False, config_text=CONFIG
        ):
            seen.append("entered")
    assert (caught.value.plugin, caught.value.hook) == ("broken", "harness_started")
    assert "OSError: cannot open the audit log" in str(caught.value)
    # later impls and the config's agents never start; the harness stops again
    assert seen == ["broken started", "broken stopping"]
    assert model.requests == []
