"""``python -m dsh.llm.llama`` without a command names its commands, as ``dsh config``
and ``dsh sessions`` name their actions (one helper, ``dsh.commands.name_choices``)."""

from __future__ import annotations

import argparse
import json
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


@pytest.fixture
def running(monkeypatch: pytest.MonkeyPatch, tmp_path: typing.Any) -> list[list[str]]:
    """A background server recorded in the cache as ``start`` leaves it (pid 4242 taken
    for llama-server's); what ``start`` was asked to serve, in the list returned."""
    asked: list[list[str]] = []

    def start(**given: object) -> typing.Any:
        asked.append([f"{k}={v}" for k, v in sorted(given.items()) if k != "log"])
        return argparse.Namespace(pid=4343, base_url="http://127.0.0.1:9100/v1")

    monkeypatch.setenv("DSH_LLAMA_CACHE", str(tmp_path))
    monkeypatch.setattr(llama, "start", start)
    monkeypatch.setattr(llama, "_is_server", lambda pid: pid in (4242, 4343))
    assert main(["start", "--port", "9100", "--ctx-size", "4096", "--", "--flash-attn"]) == 0
    state = json.loads((tmp_path / "server.json").read_text())
    state["pid"] = 4242  # only the pid: a random salt or digest may hold "4343" too
    (tmp_path / "server.json").write_text(json.dumps(state))
    asked.clear()
    return asked


@pytest.mark.parametrize(
    "argv",
    [
        ["start", "--port", "9100", "--ctx-size", "4096", "--", "--flash-attn"],
        ["start", "--ctx-size", "4096", "--", "--flash-attn"],  # any free port: this one
    ],
)
def test_start_with_the_running_servers_options_prints_its_url(
    running: list[list[str]], capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert main(argv) == 0
    assert capsys.readouterr().out == "http://127.0.0.1:9100/v1\n"
    assert running == []  # nothing else started


@pytest.mark.parametrize(
    ("argv", "asked"),
    [
        (
            ["start", "--port", "8082", "--ctx-size", "4096", "--", "--flash-attn"],
            "--port 8082 --ctx-size 4096 --threads 1 -- --flash-attn",
        ),
        (
            ["start", "--ctx-size", "2048", "--", "--flash-attn"],
            "--ctx-size 2048 --threads 1 -- --flash-attn",
        ),
        (["start", "--ctx-size", "4096"], "--ctx-size 4096 --threads 1"),
    ],
)
def test_start_with_other_options_refuses_naming_the_running_server(
    running: list[list[str]], capsys: pytest.CaptureFixture[str], argv: list[str], asked: str
) -> None:
    """It printed the running server's URL and ignored the options: a script went on
    against a server with another port or context window than it asked for."""
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == "" and running == []
    assert err == (
        "llama-server: one is running already at http://127.0.0.1:9100/v1 (pid 4242: "
        f"--port 9100 --ctx-size 4096 --threads 1 -- --flash-attn), not as asked ({asked}); "
        "stop it first: python -m dsh.llm.llama stop\n"
    )


def test_a_server_recorded_without_its_options_is_taken_for_a_plain_start(
    running: list[list[str]], capsys: pytest.CaptureFixture[str], tmp_path: typing.Any
) -> None:
    """(As an earlier dsh recorded it.) A plain ``start`` prints its URL; asked for any
    option, its own are not known: refused."""
    (tmp_path / "server.json").write_text('{"pid": 4242, "base_url": "http://127.0.0.1:9100/v1"}')
    assert main(["start"]) == 0
    assert capsys.readouterr().out == "http://127.0.0.1:9100/v1\n"
    assert main(["start", "--ctx-size", "2048"]) == 1
    assert "(pid 4242: options not recorded), not as asked (--ctx-size 2048 --threads 1)" in (
        capsys.readouterr().err
    )
