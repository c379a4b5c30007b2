"""Many sessions in one store, from the command line (a user study): `dsh sessions list`
over 1,000 sessions, and `dsh run --continue` picking the latest of them, a long one.

What the `dsh` child reads is recorded by a ``sitecustomize`` module put first on its
``PYTHONPATH``: the bytes it reads with ``os.pread`` (how the listing reads a file's
head and tail) and the session files it opens with ``open()`` (how a whole file is
read to load it)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply

pytestmark = pytest.mark.plugins("persistence")

SITECUSTOMIZE = """
import atexit, json, os, sys

_out = os.environ.get("SCALE_STUDY_READS")
if _out:
    _stats = {"pread_bytes": 0, "opened_whole": []}
    _pread = os.pread

    def _counted(fd, size, offset):
        data = _pread(fd, size, offset)
        _stats["pread_bytes"] += len(data)
        return data

    os.pread = _counted

    _names = {}  # fd -> the session file os.open() opened it on
    _os_open = os.open

    def _opened(path, flags, *args, **kwargs):
        fd = _os_open(path, flags, *args, **kwargs)
        _names[fd] = os.path.basename(os.fspath(path))
        return fd

    os.open = _opened

    def _audit(event, args):
        if event != "open" or not isinstance(args[1], str):  # open(), not os.open()
            return
        name = _names.get(args[0]) if isinstance(args[0], int) else args[0]  # open(fd)
        if isinstance(name, str) and name.endswith(".jsonl"):
            _stats["opened_whole"].append(os.path.basename(name))

    sys.addaudithook(_audit)

    @atexit.register
    def _write():
        with open(_out, "w") as file:
            json.dump(_stats, file)
"""

SESSIONS = 1000


def make_store(store: Path, workspace: Path, turns: int, long_turns: int) -> int:
    """``SESSIONS`` sessions of ``turns`` turns last run in ``workspace``, and a last one
    (updated most recently) of ``long_turns``; returns the bytes stored."""
    from dsh_persistence import PersistenceSettings, SessionInfo, open_backend
    from dsh_persistence.testing import LogBuilder

    backend = open_backend(PersistenceSettings(directory=store, fsync="never"))
    try:
        short = LogBuilder()
        for turn in range(turns):
            short.turn(f"task {turn}", calls=[("read", {"path": f"f{turn}.py"})])
        for n in range(SESSIONS - 1):
            info = SessionInfo(f"s{n:04d}", 1.0 + n, {}, str(workspace), f"session {n}")
            backend.append(info, short.events, durable=False)
        long = LogBuilder(start=1_800_000_000.0)  # the latest
        for turn in range(long_turns):
            long.turn(f"step {turn}", calls=[("read", {"path": f"f{turn}.py"})])
        info = SessionInfo("z-long", 2.0, {"agent": "main"}, str(workspace), "the long one")
        for start in range(0, len(long.events), 5000):
            backend.append(info, long.events[start : start + 5000], durable=False)
    finally:
        backend.close()
    return sum(path.stat().st_size for path in store.glob("*.jsonl"))


@pytest.fixture
def env(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path = cli_env.get("PYTHONPATH")
    return {
        **cli_env,
        "DSH_LOAD_PLUGINS": "persistence",
        "PYTHONPATH": f"{hooks}:{path}" if path else str(hooks),
        "SCALE_STUDY_READS": str(tmp_path / "reads.json"),
    }


def reads(env: dict[str, str]) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(Path(env["SCALE_STUDY_READS"]).read_text())
    return found


def test_sessions_list_over_1000_sessions_reads_heads_and_tails_only(
    env: dict[str, str], tmp_path: Path
) -> None:
    workspace = tmp_path / "w"
    workspace.mkdir()
    size = make_store(Path(env["DSH_PERSISTENCE_DIR"]), workspace, 20, 200)
    start = time.perf_counter()
    done = dsh("sessions", "list", "--json", env=env, cwd=workspace)
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    seen = reads(env)
    print(
        f"\n{len(listed)} sessions, {size / 1e6:.1f} MB stored: listed in {seconds:.2f} s, "
        f"{seen['pread_bytes'] / 1e3:.0f} KB read, whole files opened: "
        f"{len(seen['opened_whole'])}"
    )
    assert len(listed) == SESSIONS
    assert listed[0]["id"] == "z-long" and listed[0]["turns"] == 200
    assert seen["opened_whole"] == []
    # a header block and a tail block of each session: a fifth of what is stored
    assert seen["pread_bytes"] <= 8192 * SESSIONS <= size / 4


def test_run_continue_among_1000_sessions_reads_the_one_it_continues(
    env: dict[str, str], tmp_path: Path, model_server: Any
) -> None:
    """`dsh run --continue` picks the latest session of the workspace (a long one, of
    ~30,000 events) from the headers and reads that one file whole, no other."""
    workspace = tmp_path / "w"
    workspace.mkdir()
    store = Path(env["DSH_PERSISTENCE_DIR"])
    make_store(store, workspace, 5, 2000)
    server = model_server([text_reply("Still here.")])
    model = f"openai-compatible:tiny@{server.url}"
    start = time.perf_counter()
    done = dsh("-m", model, "run", "--continue", "one more", env=env, cwd=workspace)
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    seen = reads(env)
    print(f"\ncontinued a 30,000-event session among {SESSIONS} in {seconds:.2f} s; {seen}")
    assert "dsh: continuing session z-long ('step 0', 2000 turns so far)" in done.stderr
    assert done.stdout == "Still here.\n"
    assert seen["opened_whole"] == ["z-long.jsonl"]
    last = (store / "z-long.jsonl").read_bytes().splitlines()[-1]
    assert json.loads(last)["data"]["turn"] == 2001
