"""``python -m dsh.llm.llama start`` records its server without secrets, and two at once
start one server (with a fake llama-server: no build, no model)."""

from __future__ import annotations

import argparse
import json
import stat
import threading
import typing

import pytest

from dsh.llm import _llama_build, llama
from dsh.llm.llama import main

SECRET = "sk-live-SECRET123"


class Held:
    """Holds a ``start`` getting its server ready (under the lock) until another caller
    waits for that lock (says "waiting for another process"), once ``on``: the other
    comes while it is under way, however slowly the threads are scheduled."""

    def __init__(self) -> None:
        self.on = False
        self.entered = threading.Event()  # a start is getting its server ready
        self.waited = threading.Event()  # another waits for the lock


@pytest.fixture
def gate() -> Held:
    return Held()


@pytest.fixture
def held(gate: Held, monkeypatch: pytest.MonkeyPatch) -> Held:
    """``gate`` on: each start waits for another caller to wait for the lock."""
    gate.on = True
    say = _llama_build.say

    def said(message: str) -> None:
        say(message)
        if message.startswith("waiting for another process"):
            gate.waited.set()

    monkeypatch.setattr(_llama_build, "say", said)
    return gate


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch, tmp_path: typing.Any, gate: Held) -> list[int]:
    """The pids of the servers ``start`` spawned (held until another caller waits for
    the lock, with ``held``)."""
    pids: list[int] = []

    def start(**given: object) -> typing.Any:
        gate.entered.set()
        if gate.on:
            assert gate.waited.wait(30), "no other caller waited for the lock"
        pids.append(4242 + len(pids))
        return argparse.Namespace(pid=pids[-1], base_url=f"http://127.0.0.1:{9100 + len(pids)}/v1")

    monkeypatch.setenv("DSH_LLAMA_CACHE", str(tmp_path))
    monkeypatch.setattr(llama, "start", start)
    monkeypatch.setattr(llama, "_is_server", lambda pid: pid in pids)
    return pids


@pytest.mark.parametrize("secret", [["--api-key", SECRET], [f"--api-key={SECRET}"]])
def test_a_secret_option_is_neither_recorded_nor_shown(
    spawned: list[int],
    tmp_path: typing.Any,
    capsys: pytest.CaptureFixture[str],
    secret: list[str],
) -> None:
    """server.json (mode 0644) held ``--api-key sk-...``, and the refusal printed it."""
    state = tmp_path / "server.json"
    state.write_text("{}")
    state.chmod(0o644)
    assert main(["start", "--", "--flash-attn", *secret]) == 0
    assert SECRET not in state.read_text()
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert json.loads(state.read_text())["options"] == [
        *("--port", "9101", "--ctx-size", str(llama.LOCAL_CONTEXT), "--threads", "1"),
        *("--", "other llama-server options"),
    ]
    capsys.readouterr()
    # as asked: the same key; not as asked: another key, or the same with another size
    assert main(["start", "--", "--flash-attn", *secret]) == 0
    assert capsys.readouterr().out == "http://127.0.0.1:9101/v1\n"
    assert main(["start", "--", "--flash-attn", "--api-key", "sk-other"]) == 1
    assert main(["start", "--ctx-size", "2048", "--", "--flash-attn", *secret]) == 1
    err = capsys.readouterr().err
    assert SECRET not in err and "sk-other" not in err
    assert err.endswith(
        "--threads 1 -- other llama-server options), not as asked (--ctx-size 2048 "
        "--threads 1 -- other llama-server options); stop it first: "
        "python -m dsh.llm.llama stop\n"
    )
    assert spawned == [4242]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".server-")]


def test_options_without_secrets_are_shown(
    spawned: list[int], tmp_path: typing.Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["start", "--", "--api-key-files", "x", "--flash-attn"]) == 0
    options = json.loads((tmp_path / "server.json").read_text())["options"]
    assert options[-4:] == ["--", "--api-key-files", "x", "--flash-attn"]


def test_two_starts_at_once_start_one_server(
    held: Held, spawned: list[int], tmp_path: typing.Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both spawned one; the second record replaced the first, whose server ``stop``
    never found."""
    codes: list[int] = []
    starts = [threading.Thread(target=lambda: codes.append(main(["start"]))) for _ in "ab"]
    for thread in starts:
        thread.start()
    for thread in starts:
        thread.join()
    assert codes == [0, 0]
    assert spawned == [4242]
    assert json.loads((tmp_path / "server.json").read_text())["pid"] == 4242
    assert capsys.readouterr().out == "http://127.0.0.1:9101/v1\n" * 2


@pytest.mark.parametrize(
    "given", [["--api-key=sk-live-SECRET123"], ["--api-key", "sk-live-SECRET123"]]
)
def test_a_secret_option_given_before_the_separator_is_not_echoed(
    given: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse's "unrecognized arguments: --api-key=sk-..." printed the key."""
    with pytest.raises(SystemExit) as exited:
        main(["start", *given])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "SECRET" not in err
    assert "unrecognized options --api-key: llama-server's go after --" in err


def test_stop_during_a_start_stops_the_server_it_starts(
    held: Held,
    spawned: list[int],
    tmp_path: typing.Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``stop`` while ``start`` was getting its server ready found no record, said "no
    background server is running", and the server started a moment later ran on."""
    killed: list[int] = []

    def kill(pid: int, signum: int) -> None:
        killed.append(pid)
        spawned.remove(pid)  # it is gone: _is_server says so

    monkeypatch.setattr(llama.os, "kill", kill)
    codes: list[int] = []
    starting = threading.Thread(target=lambda: codes.append(main(["start"])))
    starting.start()
    assert held.entered.wait(30)  # the start holds the lock, its server not ready yet
    assert main(["stop"]) == 0
    starting.join()
    assert codes == [0]
    assert killed == [4242]
    assert capsys.readouterr().err.endswith("stopped\n")
    assert not (tmp_path / "server.json").exists()


def test_the_server_log_is_readable_by_its_owner_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: typing.Any
) -> None:
    """llama-server may write its command line (an ``--api-key``) to its log: a
    server.log left 0644 by an earlier run stayed so, and a new one got the umask's."""
    server = tmp_path / "llama-server"
    server.write_text('#!/bin/sh\necho "started with $*"\nexit 3\n')
    server.chmod(0o755)
    monkeypatch.setattr(llama, "ensure_built", lambda: server)
    monkeypatch.setattr(llama, "ensure_model", lambda: tmp_path / "model.gguf")
    for log in (tmp_path / "old.log", tmp_path / "new.log"):
        if log.name == "old.log":
            log.write_text("an earlier run's output\n")
            log.chmod(0o644)
        with pytest.raises(llama.ServerError, match="started with"):
            llama.start(log=log, timeout=30, extra_args=["--api-key", SECRET])
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
        assert "earlier" not in log.read_text()
