"""``-c`` after run/chat is refused as llm's --continue (core/src/dsh/cli.py
_check_command), but not after ``--``, where it is a word of the prompt
(``dsh run -- grep -c foo``)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh.cli import _check_command
from dsh.errors import DshError

NO_PLUGINS: Any = None  # run and chat are looked at before the plugins are


def test_c_after_run_is_refused() -> None:
    with pytest.raises(DshError, match="-c is dsh's option for the config file"):
        _check_command(["run", "-c", "hi"], {}, NO_PLUGINS)


def test_c_after_double_dash_is_a_word_of_the_prompt() -> None:
    _check_command(["run", "--", "grep", "-c", "foo"], {}, NO_PLUGINS)
    _check_command(["chat", "--", "-c"], {}, NO_PLUGINS)
