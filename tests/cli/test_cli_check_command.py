"""``-c`` after run/chat is refused as llm's --continue (core/src/dsh/_cli_misplaced.py
global_option_after, on what argparse left over), but not after ``--``, where it is a
word of the prompt (``dsh run -- grep -c foo``)."""

from __future__ import annotations

import pytest

from dsh._cli_args import build_parser
from dsh._cli_misplaced import global_option_after
from dsh.errors import DshError


def left_over(arguments: list[str]) -> tuple[list[str], str]:
    args, extras = build_parser({}).parse_known_args(arguments)
    return extras, args.command


def test_c_after_run_is_refused() -> None:
    line = ["run", "-c", "hi"]
    extras, _ = left_over(line)
    with pytest.raises(DshError, match="-c is dsh's option for the config file"):
        global_option_after(extras, line, build_parser({}))


def test_c_after_double_dash_is_a_word_of_the_prompt() -> None:
    assert left_over(["run", "--", "grep", "-c", "foo"]) == ([], "run")
    extras, _ = left_over(["chat", "--", "-c"])  # chat takes no words: left over
    assert extras == ["--", "-c"]
    global_option_after(extras, ["chat", "--", "-c"], build_parser({}))  # argparse's to say
