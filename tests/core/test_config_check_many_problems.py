"""``dsh config check`` of a file with many problems: each line has the keys hidden, and
the file is read for those keys once, not again for every line it prints (a 400-model
file with a misspelt key in each took over a minute; a larger one, hours)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_m_args_support import _quiet_env  # noqa: F401 (an autouse fixture)

from dsh import _config_yaml
from dsh.cli import main

KEY = "sk-query-secret-0123456789"


def test_each_problem_is_said_with_keys_hidden_reading_the_file_once_for_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "models:\n"
    text += "".join(
        f"  m{i}:\n    provider: openai-compatible\n    base_url: http://h/v1?key={KEY}\n"
        "    timout: 3\n"
        for i in range(30)
    )
    text += f"agents:\n  - id: {KEY}\n  - id: {KEY}\n"
    (Path.cwd() / "dsh.yml").write_text(text)
    parsed: list[object] = []
    parse = _config_yaml.parse

    def counted(*args: Any, **kwargs: Any) -> Any:
        parsed.append(args[1])
        return parse(*args, **kwargs)

    monkeypatch.setattr(_config_yaml, "parse", counted)

    assert main(["config", "check"]) == 1

    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 32 and lines[-1].startswith("dsh: 31 problems in ")
    assert lines[-2].endswith("agents[1].id: duplicate agent id '***' (first at agents[0].id)")
    assert KEY not in "\n".join(lines)
    assert len(parsed) <= 2  # loaded, and read for its keys once (was: once per line too)
