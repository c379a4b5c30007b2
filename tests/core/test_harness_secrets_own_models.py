"""``Harness.secrets`` (what tool results are cleared of) holds the keys written into
the settings (``base_url`` query, credential ``headers``) of the HTTP models registered
in that harness, a plugin's model wrapping one too; not those of a model built
elsewhere in the process (another harness's, another test's), which only the log
records have hidden (``dsh._secrets.known_keys``).

Before: every ``HttpModel`` built in the process put its keys into a process-wide set
that every harness's ``secrets()`` held: a third-party suite (``pytest_plugins =
["dsh.testing"]``) depended on the order of its tests (a tool result ``id=***`` after a
test that built a gateway model with that token), and dsh's own suite reset the set
before each test."""

from __future__ import annotations

from typing import Any

from secrets_support import Inner, gateway

from dsh import hookimpl
from dsh._secrets import known_keys
from dsh.harness import Harness
from dsh.llm.providers import build_model, parse_model_shorthand
from dsh.testing import ScriptedModel, scripted_harness, text, tool_calls
from dsh.tools import tool

TOKEN = "own-hdr-token-Lq82Vn05"
QUERY = "own-query-key-Tp36Wd91"


@tool
def echo(s: str) -> str:
    "Echo s."
    return s


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(echo)


async def test_a_model_built_outside_the_harness_leaves_its_tool_results_alone() -> None:
    gateway(TOKEN, QUERY)  # another test's, another harness's: built, never registered here
    assert TOKEN in known_keys() and QUERY in known_keys()  # hidden from log records
    model = ScriptedModel([tool_calls(("echo", {"s": f"id={TOKEN} q={QUERY}"})), text("ok")])
    async with scripted_harness(model, plugins=[("t", Tools())], load_entry_points=False) as h:
        assert TOKEN not in h.secrets() and QUERY not in h.secrets()
        agent = await h.agents.create("a", options={"model": "scripted"})
        result = await agent.prompt("go")
    [shown] = [e.data for e in result.events if e.type == "tool/result"]
    assert f"id={TOKEN} q={QUERY}" in repr(shown)


async def test_another_harness_s_model_is_not_this_harness_s_secret() -> None:
    async with Harness(load_entry_points=False, env={}) as first:
        first.models.add("cli", gateway(TOKEN, QUERY), "gw")
        assert TOKEN in first.secrets() and QUERY in first.secrets()
        async with Harness(load_entry_points=False, env={}) as second:
            assert TOKEN not in second.secrets() and QUERY not in second.secrets()


async def test_the_m_models_query_key_is_the_harness_s_secret() -> None:
    key = "m-query-key-Zr40Bc77"
    async with Harness(load_entry_points=False, env={}) as harness:
        assert key not in harness.secrets()  # asked for before: not kept stale
        name, config = parse_model_shorthand(
            f"openai-compatible:m@http://127.0.0.1:1/v1?api-key={key}"
        )
        harness.models.add("cli", build_model(name, config), name)  # as -m does
        assert key in harness.secrets()


class Wrapped(Inner):
    """One naming it ``__wrapped__`` (as ``functools.wraps`` does), twice over."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.__wrapped__ = inner


async def test_a_plugin_model_wrapping_an_http_model_has_its_keys_in_the_secrets() -> None:
    async with Harness(load_entry_points=False, env={}) as harness:
        harness.models.add("router", Inner(gateway("inner-token-Fw19Ks44", QUERY)), "r1")
        harness.models.add("router", Wrapped(Wrapped(gateway(TOKEN, "wrapped-q-Jm50Ty63"))), "r2")
        assert "inner-token-Fw19Ks44" in harness.secrets()
        assert "wrapped-q-Jm50Ty63" in harness.secrets()


async def test_the_secrets_are_not_found_again_at_each_step(monkeypatch: Any) -> None:
    # what the registry's wrapper asks for at each request (llm/registry.py: "a call or
    # two a step"); an HttpModel built elsewhere meanwhile does not renew them either
    import dsh._secrets

    calls: list[object] = []
    found = dsh._secrets.secret_values

    def counted(*args: Any, **kwargs: Any) -> tuple[str, ...]:
        calls.append(args)
        return found(*args, **kwargs)

    steps = [tool_calls(("echo", {"s": str(i)})) for i in range(5)]
    model = ScriptedModel([*steps, text("ok")])
    async with scripted_harness(model, plugins=[("t", Tools())], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        h.secrets()
        monkeypatch.setattr(dsh._secrets, "secret_values", counted)
        gateway("elsewhere-token-Rb27Xe80", QUERY)
        await agent.prompt("go")
    assert calls == []


def test_a_plugin_model_whose_attributes_raise_is_registered_all_the_same() -> None:
    # the look for a wrapped HttpModel reads stored attributes only; a class whose
    # __dict__ is a property of its own that raises does not fail registration
    # (ModelRegistry.add raised the plugin's RuntimeError)
    from dsh.llm.registry import ModelRegistry

    class Odd(ScriptedModel):
        @property  # type: ignore[misc]
        def __dict__(self) -> Any:
            raise RuntimeError("not here")

    registry = ModelRegistry(secrets=lambda: ())
    registry.add("odd", Odd([], name="odd"))
    assert "odd" in registry.names() and registry.written_keys() == frozenset()
