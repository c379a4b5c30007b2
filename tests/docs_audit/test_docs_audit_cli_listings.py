"""docs/cli.md, `dsh models` and `dsh tools`: the keys their `--json` rows have, as the
page lists them, against what the commands print."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_support import dsh

CLI_MD = " ".join((Path(__file__).parents[2] / "docs" / "cli.md").read_text().split())


def named_keys(start: str, end: str) -> set[str]:
    """The `code` words of cli.md from ``start`` up to the first ``end`` after it."""
    at = CLI_MD.index(start)
    return set(re.findall(r"`(\w+)`", CLI_MD[at : CLI_MD.index(end, at)]))


def test_dsh_models_json_rows_have_the_keys_cli_md_names(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """cli.md: "`--json` gives one object per model: `name`, `provider`, ... `used` and
    `why` (why it is the one used; null for the others)"."""
    (tmp_path / "dsh.yml").write_text("models:\n  fast: {provider: openai}\n")
    done = dsh("models", "--json", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    keys = named_keys("`--json` gives one object per model:", "null for the others")
    keys -= {"config", "cli", "local"}  # the values of `plugin` the sentence names
    assert all(set(row) == keys for row in rows), (keys, [sorted(row) for row in rows])
    assert [row["why"] is None for row in rows] == [not row["used"] for row in rows]


def test_dsh_tools_json_rows_have_the_columns_and_the_keys_cli_md_adds(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """cli.md: `dsh tools` shows NAME, PLUGIN, MUTATING, DESCRIPTION; "`--json` adds each
    tool's full description, `path_args`, `command_args` and `parameters`"."""
    done = dsh("tools", "--json", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    added = named_keys("`--json` adds each tool's full description,", "(the JSON schema")
    columns = {"name", "plugin", "mutating", "description"}
    assert all(set(row) == columns | added for row in json.loads(done.stdout))
