"""``python -m dsh.llm.llama`` without a command names its commands, as ``dsh config``
and ``dsh sessions`` name their actions (one helper, ``dsh.commands.name_choices``)."""

from __future__ import annotations

import argparse
import typing

import pytest

from dsh.commands import name_choices
from dsh.llm import llama
from dsh.llm.llama import ServerError, main
from dsh.llm.local import LOCAL_CONTEXT


def test_no_command_names_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "the following arguments are required: {build,model,run,start,stop}" in err
    assert "usage: python -m dsh.llm.llama [-h] {build,model,run,start,stop}" in err


def test_name_choices_names_the_subparsers_added_so_far(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = argparse.ArgumentParser(prog="p")
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("one")
    actions.add_parser("two")
    name_choices(actions)
    with pytest.raises(SystemExit):
        parser.parse_args([])
    assert "required: {one,two}" in capsys.readouterr().err
    assert parser.parse_args(["two"]).action == "two"


def test_name_choices_has_type_hints_that_resolve() -> None:
    """Typed with argparse's private ``_SubParsersAction[...]`` (a string under ``from
    __future__ import annotations``), ``typing.get_type_hints`` raised TypeError (the
    class is not subscriptable at run time): documentation tools and runtime checkers
    read these hints."""
    hints = typing.get_type_hints(name_choices)
    assert hints == {"subparsers": argparse.Action, "return": type(None)}


def test_a_server_started_by_hand_has_the_context_of_dsh_m_local(
    monkeypatch: pytest.MonkeyPatch, tmp_path: typing.Any
) -> None:
    """``python -m dsh.llm.llama start`` (and ``run``) served 2,048 tokens where ``dsh
    -m local`` serves 8,192: the same model by hand overflowed on a README summary."""
    asked: list[int] = []

    def start(*, context: int, **_: object) -> None:
        asked.append(context)
        raise ServerError("not started in a test")

    monkeypatch.setenv("DSH_LLAMA_CACHE", str(tmp_path))  # no background server found
    monkeypatch.setattr(llama, "start", start)
    assert main(["start"]) == 1
    assert asked == [LOCAL_CONTEXT] == [8192]


def test_help_shows_the_module_docs_without_their_markup(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "python -m dsh.llm.llama build | model | run | start | stop" in out
    assert "``" not in out
