"""The ``dsh.builtin_tools`` core plugin: what it registers, what each tool declares to
policy plugins, what the model is told, and that loading it stays cheap."""

from __future__ import annotations

import datetime
import enum
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import AnyUrl, BaseModel, Field, SecretStr

from dsh import DshError, ToolCall, hookimpl
from dsh.builtin_tools import builtin_tools
from dsh.plugins import CORE_DEFAULTS, create_plugin_manager, list_plugins
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls
from dsh.tools import Tool, ToolContext, ToolRegistry, tool

#: these tools are made to check their arguments; a description is not the point
pytestmark = pytest.mark.filterwarnings("ignore::dsh.tools.ToolDescriptionWarning")

DECLARED = {
    # name: (mutating, path_args, command_args, reads, required arguments)
    "read": (False, ("path",), (), True, ["path"]),
    "write": (True, ("path",), (), False, ["path", "content"]),
    "edit": (True, ("path",), (), True, ["path", "old", "new"]),
    "ls": (False, ("path",), (), False, []),
    "glob": (False, ("path",), (), False, ["pattern"]),
    "grep": (False, ("path",), (), True, ["pattern"]),
    "bash": (True, (), ("command",), True, ["command"]),
}


def test_each_tool_declares_what_permissions_match_on() -> None:
    declared = {
        t.name: (
            t.mutating,
            t.path_args,
            t.command_args,
            t.reads,
            t.spec.parameters.get("required", []),
        )
        for t in builtin_tools()
    }
    assert declared == DECLARED
    for built_in in builtin_tools():
        properties = built_in.spec.parameters["properties"]
        assert set(built_in.path_args + built_in.command_args) <= set(properties)
        assert "context" not in properties  # the ToolContext is never shown to the model
        assert built_in.wants_context and built_in.is_async
        assert all(p.get("description") for p in properties.values()), built_in.name
        assert built_in.description


def test_the_plugin_is_a_core_default_listed_with_its_hook() -> None:
    assert "dsh.builtin_tools" in CORE_DEFAULTS
    pm = create_plugin_manager(load_entry_points=False)
    [info] = [i for i in list_plugins(pm) if i.name == "dsh.builtin_tools"]
    assert (info.distribution, info.hooks) == ("dsh-core", ("register_tools",))


async def test_the_model_is_told_about_every_tool(tmp_path: Path) -> None:
    model = ScriptedModel([text("hi")])
    async with scripted_harness(model, load_entry_points=False, workspace=tmp_path) as harness:
        assert {harness.tools.origin(name) for name in DECLARED} == {"dsh.builtin_tools"}
        agent = await harness.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hello")
    told = [spec.name for spec in model.requests[0].tools]
    assert told == list(DECLARED)
    bash = model.requests[0].tools[-1].parameters["properties"]["timeout"]
    assert (bash["default"], bash["minimum"], bash["maximum"]) == (120, 1, 600)


async def test_a_plugin_tool_with_a_builtin_name_replaces_the_builtin(tmp_path: Path) -> None:
    @tool(name="bash", mutating=True, command_args=("command",))
    def sandboxed(command: str) -> str:
        "Run a command in a sandbox."
        return f"sandboxed: {command}"

    class Sandbox:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(sandboxed)

    model = ScriptedModel([tool_calls(("bash", {"command": "ls"})), text("done")])
    async with scripted_harness(
        model, plugins=[("sandbox", Sandbox())], load_entry_points=False, workspace=tmp_path
    ) as harness:
        assert harness.tools.origin("bash") == "sandbox"
        assert harness.tools.origin("read") == "dsh.builtin_tools"
        agent = await harness.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "go")
    told = [spec.name for spec in model.requests[0].tools]
    assert sorted(told) == sorted(DECLARED)
    [result] = [e.data for e in events if e.type == "tool/result"]
    assert result["content"] == "sandboxed: ls"


DOCS = Path(__file__).parents[3] / "docs" / "tools.md"
HEADING = re.compile(r"^## `(\w+)\((.*)\)`$\n\n\*\*Declares:\*\* (.+)$", re.MULTILINE)


def signature(built_in: Tool) -> str:
    """``read(path, offset=1, limit=2000)`` as the docs write it."""
    parts = []
    for name, schema in built_in.spec.parameters["properties"].items():
        if name in built_in.spec.parameters.get("required", []):
            parts.append(name)
        elif isinstance(schema["default"], str):
            parts.append(f'{name}="{schema["default"]}"')
        else:
            parts.append(f"{name}={schema['default']!r}")
    return ", ".join(parts)


def declaration(built_in: Tool) -> str:
    """``mutating; path arguments `path`.`` as the docs write it (``, contents not read
    (`reads=False`)`` after the path arguments of a tool that does not read them)."""
    parts = ["mutating" if built_in.mutating else "read-only"]
    if built_in.path_args:
        unread = "" if built_in.reads else ", contents not read (`reads=False`)"
        parts.append("path arguments " + ", ".join(f"`{a}`" for a in built_in.path_args) + unread)
    if built_in.command_args:
        parts.append("command arguments " + ", ".join(f"`{a}`" for a in built_in.command_args))
    return "; ".join(parts) + "."


def test_docs_describe_every_tool_as_declared() -> None:
    """docs/tools.md has a ``## `name(arguments)` `` section per tool, with its real
    defaults, and a **Declares:** line matching the tool's metadata."""
    documented = {
        name: (args, declares) for name, args, declares in HEADING.findall(DOCS.read_text())
    }
    expected = {t.name: (signature(t), declaration(t)) for t in builtin_tools()}
    assert documented == expected


def test_loading_the_plugin_imports_no_tool_module() -> None:
    """``dsh --help`` and ``dsh plugins`` load every core default: the tools (and
    pydantic, anyio) must wait until tools are registered."""
    probe = (
        "import sys, dsh.builtin_tools\n"
        "heavy = [m for m in sys.modules if m.startswith(('dsh.builtin_tools._', 'pydantic', "
        "'anyio'))]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


# -- the registry and executor (dsh.tools) ------------------------------------------------


class Point(BaseModel):  # annotations in this module are strings (__future__)
    x: int
    y: int


@tool
def where(point: Point) -> str:
    "Where a point is."
    assert isinstance(point, Point), type(point)  # a model, as annotated, not a dict
    return f"{point.x},{point.y}"


@tool
def nothing() -> str:
    "Says nothing."
    return ""


@tool
def needs_context(*, context: ToolContext) -> str:
    "Tells where it runs."
    return str(context.workspace)


def call(name: str, arguments: str = "{}") -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


async def test_b19_the_executor_explains_what_it_cannot_run() -> None:
    registry = ToolRegistry()
    for each in (where, nothing, needs_context):
        registry.add("t", each)

    unknown = await registry.execute(call("nowhere"))
    assert unknown.is_error
    assert (
        unknown.content == "unknown tool 'nowhere' (available tools: where, nothing, needs_context)"
    )
    no_context = await registry.execute(call("needs_context"))
    assert (no_context.is_error, no_context.content) == (
        True,
        "tool 'needs_context' needs a context and none was given",
    )
    nested = await registry.execute(call("where", '{"point": {"x": 1, "y": 2}}'))
    assert (nested.is_error, nested.content) == (False, "1,2")
    empty = await registry.execute(call("nothing"))
    assert (empty.is_error, empty.content) == (False, "")  # an empty answer is an answer


def test_the_registry_refuses_what_is_not_a_tool_and_shows_tools_added_later() -> None:
    registry = ToolRegistry()
    with pytest.raises(DshError, match="plugin 'p' registered 'add', which is not a dsh Tool"):
        registry.add("p", "add")  # type: ignore[arg-type]

    def plain(x: int) -> int:
        """Not wrapped."""
        return x

    with pytest.raises(DshError) as plain_refused:
        registry.add("p", plain)  # type: ignore[arg-type]
    assert str(plain_refused.value) == (
        "plugin 'p' registered the function 'plain', which is not a dsh Tool; wrap it with "
        "@dsh.tools.tool"
    )
    registry.add("p", nothing)
    assert [s.name for s in registry.specs()] == ["nothing"]
    registry.add("p", where)  # after the specs were read: they are built again
    assert [s.name for s in registry.specs()] == ["nothing", "where"]
    spec = registry.specs()[1]
    assert "title" not in spec.parameters  # the model sees no pydantic model name
    assert spec.parameters["required"] == ["point"]


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("def f(*args: int) -> str: ...", "*args"),
        ("def f(**options: int) -> str: ...", "**options"),
        ("def f(a: int, /) -> str: ...", "a"),
    ],
)
def test_a_tool_takes_named_parameters_only(source: str, shown: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(DshError) as caught:
        tool(namespace["f"])
    assert str(caught.value) == (
        f"tool 'f': parameter {shown} is not a named parameter; a model sends each argument "
        "by name, so a tool takes named parameters only (no /, *args or **kwargs)"
    )


def test_a_parameter_without_a_type_is_refused_and_any_is_a_choice() -> None:
    # without one the model is told nothing about the argument and nothing is checked
    namespace: dict[str, Any] = {}
    exec("def word_count(path, limit: int = 3) -> int: ...", namespace)
    with pytest.raises(DshError) as caught:
        tool(namespace["word_count"])
    assert str(caught.value) == (
        "tool 'word_count': parameter path has no type annotation; annotate it (path: str, "
        "or Any for any JSON value) so that the model is told what to send and the call is "
        "checked"
    )

    def anything(value: Any) -> str:
        return repr(value)

    assert tool(anything).spec.parameters["required"] == ["value"]


def test_path_and_command_args_must_name_arguments() -> None:
    """A policy plugin would look for values that never come: refused when declared."""

    def copy(source: str, target: str) -> str:
        return target

    with pytest.raises(DshError) as caught:
        tool(path_args=("source", "dest", "to"))(copy)
    assert str(caught.value) == (
        "tool 'copy': path_args names 'dest', 'to', which are not arguments "
        "(its arguments: source, target)"
    )
    with pytest.raises(DshError, match=r"command_args names 'cmd', which is not an argument"):
        tool(name="run", command_args=("cmd",))(copy)
    declared = tool(path_args=("source", "target"))(copy)
    assert declared.path_args == ("source", "target")


def test_path_and_command_args_must_hold_text() -> None:
    """A path argument typed ``dict`` was accepted; with dsh-permissions every call was
    then refused, the model told to send it again (the declaration was the fault)."""

    def look(spec: dict[str, str], count: int, where: Path | None = None) -> str:
        return ""

    for name, shown in (("spec", "dict[str, str]"), ("count", "int")):
        with pytest.raises(DshError) as caught:
            tool(path_args=[name])(look)
        assert str(caught.value) == (
            f"tool 'look': path_args names {name!r}, whose type {shown} holds no text: such "
            "an argument is a str or a Path (or None), or a list of them"
        )
    with pytest.raises(DshError, match="command_args names 'count', whose type int"):
        tool(command_args=["count"])(look)
    assert tool(path_args=["where"])(look).path_args == ("where",)

    def fine(
        a: str, b: list[str], c: tuple[Path, ...], d: set[str] | None, e: Any, f: list[Any]
    ) -> str:
        return ""

    assert len(tool(path_args=list("abcdef"))(fine).path_args) == 6


class Plain(enum.Enum):
    A = "a.txt"


class Texts(enum.StrEnum):
    A = "a.txt"


@pytest.mark.parametrize(
    "kind",
    [bytes, SecretStr, datetime.datetime, uuid.UUID, AnyUrl, Plain, list[bytes], set[Plain]],
    ids=lambda kind: getattr(kind, "__name__", repr(kind)),
)
def test_a_path_arg_whose_value_is_no_str_though_its_schema_is_a_string_is_refused(
    kind: Any,
) -> None:
    """The schema of bytes, a SecretStr, a date, a UUID, a URL or a plain Enum is a
    string's: the check let them through, and dsh-permissions then refused every call
    ("should hold text, not Plain")."""

    def look(path: str) -> str:
        return ""

    look.__annotations__["path"] = kind
    with pytest.raises(DshError, match=r"path_args names .path., whose type .* holds no text"):
        tool(path_args=["path"])(look)


@pytest.mark.parametrize(
    "kind",
    [Texts, Literal["a", "b"], Annotated[str, Field(min_length=1)], list[Path] | None],
    ids=["str-enum", "literal", "annotated", "optional-list-path"],
)
def test_a_path_arg_whose_value_is_a_str_or_a_path_is_taken(kind: Any) -> None:
    def look(path: str) -> str:
        return ""

    look.__annotations__["path"] = kind
    assert tool(path_args=["path"])(look).path_args == ("path",)


def test_path_args_given_as_one_string_says_to_give_a_list() -> None:
    """``path_args="path"`` was refused as naming 'p', 'a', 't', 'h'."""

    def look(path: str) -> str:
        return path

    with pytest.raises(DshError) as caught:
        tool(path_args="path")(look)
    assert str(caught.value) == (
        "tool 'look': path_args is the string 'path'; give a list of argument names "
        "(path_args=['path'])"
    )


def test_a_tool_is_taken_to_read_its_paths_unless_it_says_otherwise() -> None:
    """``reads`` (what a permissions plugin's read rules go by) defaults to True, so a
    tool whose author says nothing is treated as one that may show what a file holds."""

    class Stamp(BaseModel):
        path: str

    def stamp(path: str) -> str:
        return path

    assert tool(path_args=["path"])(stamp).reads is True
    assert tool(path_args=["path"], reads=False)(stamp).reads is False
    by_hand = Tool(name="stamp", description="", arguments=Stamp, run=stamp, path_args=("path",))
    assert by_hand.reads is True
