"""The docs' reference tables, against the code they describe: every settings table
(docs/config.md's `models.<name>` and `agents[]`, the plugins' sections) names exactly
the keys of its pydantic model, with the defaults the model has; tools.md's tools,
models.md's providers, and the tables of the `permission/decision` and `compact/*`
events."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from docs_files import ROOT


def table_after(doc: str, anchor: str) -> dict[str, str]:
    """The `| key | default | meaning |` table after ``anchor`` in docs/``doc``: each key
    (a cell may name several: `allow`, `ask`, `deny`) with its default cell."""
    text = (ROOT / "docs" / doc).read_text("utf-8")
    lines = text[text.index(anchor) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| key | default |"))
    rows: dict[str, str] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        keys, default = line.split("|")[1:3]
        for key in re.findall(r"`(\w+)`", keys):
            rows[key] = default.strip()
    return rows


def model_of(dotted: str) -> Any:
    module, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def plugin(name: str) -> Any:
    return pytest.mark.plugins(name)


TABLES = [
    pytest.param("config.md", "### `models.<name>`", "dsh._config_models.ModelConfig", id="models"),
    pytest.param("config.md", "### `agents[]`", "dsh._config_models.AgentConfig", id="agents"),
    pytest.param(
        "compaction.md",
        "max_summary_tokens: 3000",
        "dsh_compaction._settings.CompactionSettings",
        marks=plugin("compaction"),
        id="compaction",
    ),
    pytest.param(
        "permissions.md",
        "## Settings reference",
        "dsh_permissions._settings.PermissionsSection",
        marks=plugin("permissions"),
        id="permissions",
    ),
    pytest.param(
        "persistence.md",
        "checkpoint_delay: 0.05  # seconds",
        "dsh_persistence._settings.PersistenceSettings",
        marks=plugin("persistence"),
        id="persistence",
    ),
]


@pytest.mark.parametrize(("doc", "anchor", "model"), TABLES)
def test_a_settings_table_names_exactly_the_models_keys(doc: str, anchor: str, model: str) -> None:
    rows = table_after(doc, anchor)
    fields = set(model_of(model).model_fields)
    assert set(rows) == fields, (
        f"docs/{doc}: keys not in {model}: {sorted(set(rows) - fields)}; "
        f"keys of the model the table leaves out: {sorted(fields - set(rows))}"
    )


@pytest.mark.parametrize(("doc", "anchor", "model"), TABLES)
def test_a_settings_tables_literal_defaults_are_the_models(
    doc: str, anchor: str, model: str
) -> None:
    """A default cell that is one literal (`60`, `batch`, `[]`, `{}`, `true`, `""`) is
    the field's default; words (`provider's`, `see below`) are left to the prose, and so
    is a field whose default is None (unset: the code that reads it decides, as the loop
    does for an agent's `max_steps`)."""
    fields = model_of(model).model_fields
    checked = 0
    for key, cell in table_after(doc, anchor).items():
        literal = re.fullmatch(r"`([^`]*)`", cell)
        if not literal or key not in fields or "<" in literal[1]:
            continue
        written = yaml.safe_load(literal[1])
        default = fields[key].get_default(call_default_factory=True)
        if default is None and written is not None:
            continue
        if isinstance(default, tuple):
            default = list(default)
        assert written == default, f"docs/{doc}: {key} defaults to {default!r}, not {cell}"
        checked += 1
    assert checked, f"docs/{doc}: no literal default found: the table parse is broken"


async def test_tools_md_lists_the_built_in_tools_as_they_are() -> None:
    """docs/tools.md: the table (mutating, path arguments, command arguments) and each
    tool's heading, `## \\`read(path, offset=1, limit=2000)\\``, are what the tool
    declares and the parameters, with the defaults, the model is told."""
    from dsh.testing import scripted_harness

    text = (ROOT / "docs" / "tools.md").read_text("utf-8")
    async with scripted_harness(load_entry_points=False) as harness:
        tools = {spec.name: harness.tools.get(spec.name) for spec in harness.tools.specs()}
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if len(cells) == 5 and re.fullmatch(r"`\w+`", cells[0]):
            rows[cells[0].strip("`")] = tuple(cells[1:4])
    headings = dict(re.findall(r"^## `(\w+)\((.*)\)`$", text, re.M))
    assert set(rows) == set(headings) == set(tools), (sorted(rows), sorted(headings))
    for name, tool in tools.items():
        assert tool is not None
        words = lambda names: ", ".join(f"`{n}`" for n in names)  # noqa: E731
        declared = (
            "yes" if tool.mutating else "no",
            words(tool.path_args),
            words(tool.command_args),
        )
        assert rows[name] == declared, f"tools.md's row of {name}: {rows[name]} != {declared}"
        schema = tool.spec.parameters
        parts = [
            f"{p}={json.dumps(prop['default'])}" if "default" in prop else p
            for p, prop in schema["properties"].items()
        ]
        shown = headings[name].replace("None", "null").replace("False", "false")
        assert shown == ", ".join(parts), f"tools.md's heading of {name}: {headings[name]!r}"


def test_models_md_lists_the_built_in_providers_with_their_defaults() -> None:
    """docs/models.md's first table: each built-in provider, its adapter, its default
    `base_url` and `api_key_env` ("none" where there is none)."""
    from dsh.llm.providers import PROVIDERS

    rows = {}
    for line in (ROOT / "docs" / "models.md").read_text("utf-8").splitlines():
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if len(cells) == 4 and cells[1].endswith("Model`"):
            rows[cells[0].strip("`")] = cells[1:]
    assert set(rows) == set(PROVIDERS)
    for name, provider in PROVIDERS.items():
        adapter, base_url, key = rows[name]
        assert adapter.strip("`").rsplit(".", 1)[-1] == provider.adapter.__name__, name
        assert (base_url.strip("`") if "`" in base_url else None) == provider.base_url, name
        assert (key.strip("`") if "`" in key else None) == provider.api_key_env, name


@pytest.mark.plugins("permissions")
async def test_the_permission_decision_table_names_exactly_the_events_fields(
    tmp_path: Path,
) -> None:
    """docs/permissions.md, "The `permission/decision` event": its table of fields is
    what the event holds, for an allowed call and for a denied one."""
    from permissions_audit_support import decision_events

    doc = (ROOT / "docs" / "permissions.md").read_text("utf-8")
    table = doc[doc.index("## The `permission/decision` event") :].split("\n\n")[2]
    documented = {
        f for line in table.splitlines()[2:] for f in re.findall(r"`(\w+)`", line.split("|")[1])
    }
    calls = [("ls", {"path": "."}), ("bash", {"command": "true"})]
    decisions = await decision_events(tmp_path, "permissions: {deny: [bash]}\n", *calls)
    assert [d["decision"] for d in decisions] == ["allow", "deny"]
    for data in decisions:
        assert set(data) == documented, (sorted(data), sorted(documented))


@pytest.mark.plugins("compaction")
async def test_the_compaction_event_table_names_the_events_fields() -> None:
    """docs/compaction.md, "Session events": each `compact/*` event of a compaction that
    prunes and summarises holds only the keys its row names, and every key the row
    names but `error` (only if any), `turn` and `step` for a manual compaction between
    turns (logged outside any turn), and the summariser's costs in `compact/end` (only
    when no `compact/summary` has them)."""
    from compaction_util import harness, reads, summarizer

    from dsh.testing import ScriptedModel, run_turn
    from dsh_compaction import compact_now

    rows, said = {}, {}
    for line in (ROOT / "docs" / "compaction.md").read_text("utf-8").splitlines():
        cells = line.split("|")
        if len(cells) > 3 and re.fullmatch(r" `compact/\w+` ", cells[1]):
            keys = re.sub(r"\([^()]*\)", "", cells[2])  # (the values a key takes)
            rows[cells[1].strip(" `")] = set(re.findall(r"`(\w+)`", keys))
            said[cells[1].strip(" `")] = cells[2]
    assert set(rows) == {"compact/start", "compact/prune", "compact/summary", "compact/end"}
    settings = {"model": "summarizer", "prune_chars": 100, "context_window": 4000}
    options = {"model": "scripted", "compaction": settings}
    async with harness(ScriptedModel(reads(6)), summarizer("what happened")) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "task")  # prunes on the threshold
        await compact_now(agent)  # summarises
        events = [e for e in agent.session.events if e.type.startswith("compact/")]
    assert {e.type for e in events} == set(rows), [e.type for e in events]
    for event in events:
        manual = event.data.get("reason") == "manual"
        optional = {"error", *(("turn", "step") if manual else ())}
        if event.type == "compact/end":  # the summariser's costs when no summary has them
            assert "no `compact/summary` of this compaction carries them" in said[event.type]
            optional |= {"model", "calls", "usage"}
        if manual and "turn" in rows[event.type] and "turn" not in event.data:
            said_where = said["compact/start"]
            assert "between turns" in said_where, "compact/start does not say when turn is absent"
        assert set(event.data) <= rows[event.type], (event.type, sorted(event.data))
        missing = rows[event.type] - set(event.data) - optional
        assert not missing, f"{event.type} has no {sorted(missing)}"


def documented_signature(doc: str, name: str) -> str:
    """The parameters the doc writes in the `code` span `NAME(...)`."""
    text = " ".join((ROOT / "docs" / doc).read_text("utf-8").split())
    found = re.search(rf"`{re.escape(name)}\(([^`]*)\)`", text)
    assert found, f"docs/{doc} no longer writes `{name}(...)`"
    return found[1]


Signature = tuple[list[tuple[str, Any]], dict[str, Any]]


def signature_of(target: Any) -> Signature:
    """(the positional parameters in order, the keyword-only ones) with their defaults
    ("required" for none) of what the code defines; `*models` counts as positional."""
    import inspect

    positional: list[tuple[str, Any]] = []
    keyword: dict[str, Any] = {}
    for p in inspect.signature(target).parameters.values():
        default = "required" if p.default is p.empty else p.default
        if p.kind is p.KEYWORD_ONLY:
            keyword[p.name] = default
        elif p.name != "self":
            star = "*" if p.kind is p.VAR_POSITIONAL else ""
            positional.append((star + p.name, default))
    return positional, keyword


def read_signature(text: str) -> Signature:
    """The same of the parameters a doc writes: those after `*` or `*args` are
    keyword-only."""
    import ast

    positional: list[tuple[str, Any]] = []
    keyword: dict[str, Any] = {}
    starred = False
    for part in [p.strip() for p in text.split(", ")]:
        name, _, default = part.partition("=")
        value = ast.literal_eval(default) if default else "required"
        if name == "*":
            starred = True
        elif starred:
            keyword[name] = value
        else:
            positional.append((name, value))
            starred = name.startswith("*")
    return positional, keyword


SIGNATURES = [
    ("python.md", "harness.agents.create", "dsh.agent", "AgentRegistry.create"),
    ("testing.md", "scripted_harness", "dsh.testing", "scripted_harness"),
    ("hooks.md", "dsh.commands.Command", "dsh.commands", "Command"),
    ("testing.md", "types", "dsh.testing", "EventRecorder.types"),
]


@pytest.mark.parametrize(
    ("doc", "name", "module", "path"), SIGNATURES, ids=[s[1] for s in SIGNATURES]
)
def test_a_signature_the_docs_write_is_the_codes(
    doc: str, name: str, module: str, path: str
) -> None:
    """The parameters and defaults of a documented call are those of the code (a
    keyword-only `source` of the code's, used by dsh itself, may go unsaid)."""
    written = read_signature(documented_signature(doc, name))
    owner: Any = importlib.import_module(module)
    for part in path.split("."):
        owner = getattr(owner, part)
    defined = signature_of(owner)
    defined[1].pop("source", None)
    assert written == defined, f"docs/{doc}: `{name}(...)` is {defined}"


REGISTER_CALLBACKS = [
    ("register_settings", "dsh.config", "add_settings", 2),
    ("register_models", "dsh.llm.registry", "ModelRegistry.add", 1),
    ("register_tools", "dsh.tools", "ToolRegistry.add", 1),
]


@pytest.mark.parametrize(("hook", "module", "path", "stamped"), REGISTER_CALLBACKS)
def test_a_register_hooks_section_names_every_optional_parameter_of_register(
    hook: str, module: str, path: str, stamped: int
) -> None:
    """docs/hooks.md, `## \\`HOOK(register)\\``: each optional parameter of the `register`
    callback an impl gets (past the ones dsh fills in: the plugin's name, the registry)
    shows as `register(..., NAME=...)` in that hook's section."""
    text = (ROOT / "docs" / "hooks.md").read_text("utf-8")
    start = text.index(f"## `{hook}(register)`")
    section = text[start : text.index("\n## ", start + 1)]
    owner: Any = importlib.import_module(module)
    for part in path.split("."):
        owner = getattr(owner, part)
    positional, keyword = signature_of(owner)
    optional = [n for n, d in positional[stamped:] if d != "required"] + list(keyword)
    for name in optional:
        assert re.search(rf"`register\([^`]*\b{name}=", section), f"{hook}: `{name}=` unsaid"
