"""``dsh models`` and ``dsh tools``: what an agent of ``dsh run`` can use, and where
each came from (a plugin, dsh.yml, the command line).

Both enter the harness ``dsh run`` would (its plugins, dsh.yml and workspace), so they
list exactly what it would have, and nothing is contacted: models are built, not called.
They start no agent: settings in dsh.yml for a plugin that does not run, and entries
of ``models:`` that cannot be built (not listed), are warnings (as for ``dsh sessions
list``), which ``dsh run`` refuses.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import TYPE_CHECKING, Any

from dsh._cli_agent import cli_harness, first_agent
from dsh._model_values import may_be_a_key
from dsh._secrets import key_from_env, key_is_blank
from dsh._visible import visible
from dsh.config import ModelConfig
from dsh.llm._unsendable import unsendable_part

if TYPE_CHECKING:
    from dsh.harness import Harness
    from dsh.llm.choose import Choice
    from dsh.plugins import PluginManager

__all__ = ["models", "tools"]

# A period and a space end a sentence, except after "e.g.", "i.e.", "cf." and "vs.".
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bcf)(?<!\bvs)\. ", re.IGNORECASE)


async def models(args: argparse.Namespace, pm: PluginManager) -> int:
    async with cli_harness(args, pm, starts_agents=False) as harness:
        _, choice = first_agent(harness, args.model)
        rows = [_model_row(harness, name, choice) for name in harness.models.names()]
        if "local" not in harness.models and "local" not in harness.config.models:
            rows.append(_local_row(choice))
        why = choice.why
        if choice.name in harness.config.models and choice.name not in harness.models:
            why += ", which cannot be built here (see its warning): dsh run refuses the file"
        chosen = next((r for r in rows if r["name"] == choice.name), None)
        if chosen is not None and chosen.get("api_key_unsendable") is not None:
            why += (
                f", but its key cannot be sent ({chosen['api_key_unsendable']}): dsh run refuses it"
            )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    _table(
        ("NAME", "PROVIDER", "MODEL", "CONTEXT", "KEY", "FROM"),
        [
            (
                r["name"],
                r["provider"],
                r["model"] or "-",
                _count(r["context_window"]),
                _key(r),
                r["from"],
            )
            for r in rows
        ],
        right=3,
    )
    print(visible(f"dsh run and dsh chat use {choice.name}: {why}"))
    return 0


def _model_row(harness: Harness, name: str, choice: Choice) -> dict[str, Any]:
    model = harness.models.get(name, agent="dsh models")
    info = model.info
    origin = harness.models.origin(name)
    config = getattr(model, "config", None)  # models served over HTTP have one
    variable = config.api_key_env if isinstance(config, ModelConfig) else None
    # its name and whether it is set, never the key; nor a name that may be a key pasted
    # into the field (``may_be_a_key``), as the AUTH error does not repeat it
    hidden = variable is not None and may_be_a_key(variable)
    key = None if variable is None else key_from_env(variable)
    return {
        "name": name,
        "provider": info.provider,
        "model": getattr(model, "model_id", None),
        "api_key_env": None if hidden else variable,
        "api_key_env_hidden": hidden,
        "api_key_set": None if variable is None else key is not None,
        # why the key that is set cannot be sent (dsh run refuses it), or None
        "api_key_unsendable": None if key is None else unsendable_part(key),
        "api_key_blank": None if variable is None else key_is_blank(variable),
        "context_window": info.context_window,
        "max_output_tokens": info.max_output_tokens,
        "plugin": origin,
        "from": _origin(harness, origin),
        "used": name == choice.name,
        "why": choice.why if name == choice.name else None,
    }


def _origin(harness: Harness, plugin: str) -> str:
    if plugin == "config":
        return str(harness.config.source)
    if plugin == "cli":
        return "the command line (-m or a provider key)"
    return f"plugin {plugin}"


def _local_row(choice: Choice) -> dict[str, Any]:
    from dsh.llm.local import LOCAL_CONTEXT, LOCAL_MODEL_ID

    return {
        "name": "local",
        "provider": "llama.cpp",
        "model": LOCAL_MODEL_ID,
        "api_key_env": None,
        "api_key_env_hidden": False,
        "api_key_set": None,
        "api_key_blank": None,
        "api_key_unsendable": None,
        "context_window": LOCAL_CONTEXT,
        "max_output_tokens": None,
        "plugin": None,
        "from": "built in (started when used)",
        "used": choice.name == "local",
        "why": choice.why if choice.name == "local" else None,
    }


async def tools(args: argparse.Namespace, pm: PluginManager) -> int:
    async with cli_harness(args, pm, starts_agents=False) as harness:
        registry = harness.tools
        rows: list[dict[str, Any]] = []
        for spec in registry.specs():
            tool = registry.get(spec.name)
            assert tool is not None  # specs() lists the registered tools
            rows.append(
                {
                    "name": spec.name,
                    "plugin": registry.origin(spec.name),
                    "mutating": tool.mutating,
                    "path_args": list(tool.path_args),
                    "command_args": list(tool.command_args),
                    "reads": tool.reads,
                    "description": spec.description,
                    "parameters": spec.parameters,
                }
            )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    _table(
        ("NAME", "PLUGIN", "MUTATING", "DESCRIPTION"),
        [
            (r["name"], r["plugin"], "yes" if r["mutating"] else "no", _sentence(r["description"]))
            for r in rows
        ],
    )
    return 0


def _sentence(text: str) -> str:
    """The first sentence of ``text``, on one line."""
    flat = " ".join(text.split())
    end = _SENTENCE_END.search(flat)
    return flat if end is None else flat[: end.start() + 1]


def _key(row: dict[str, Any]) -> str:
    """The KEY column: the variable, or the field naming one hidden, and if it is set."""
    variable = row["api_key_env"]
    if row["api_key_env_hidden"]:
        variable = f"named by models.{row['name']}.api_key_env"
    elif variable is None:
        return "-"
    if row["api_key_blank"]:
        return f"{variable} (set but blank)"
    if row["api_key_unsendable"] is not None:
        return f"{variable} (set, cannot be sent: {row['api_key_unsendable']})"
    return f"{variable} ({'set' if row['api_key_set'] else 'not set'})"


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]], right: int = -1) -> None:
    """Columns as wide as their widest cell (the last one unpadded); column ``right``
    aligned right (numbers)."""
    rows = [tuple(map(visible, row)) for row in rows]  # a name in dsh.yml may hold escapes
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header) - 1)]
    for row in (header, *rows):
        cells = [
            cell.rjust(widths[i]) if i == right else cell.ljust(widths[i])
            for i, cell in enumerate(row[:-1])
        ]
        print("  ".join([*cells, row[-1]]))
