"""Start-up figures for bench/run.py: wall time of whole processes, in interleaved rounds.

Every command runs once per round (order rotated each round, one warm-up round first,
so .pyc files exist); a figure is the median over rounds, and an import's *net* cost is
the per-round difference to ``python -c pass`` of the same venv (same interpreter
build, so the difference is the import itself).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _peers import PEERS, venv_python
from _util import summarize

DSH_IMPORT = "import dsh, dsh_compaction, dsh_permissions, dsh_persistence"


def commands(peers_ok: bool) -> dict[str, tuple[list[str], str]]:
    """name -> (argv, the name of its baseline)."""
    py = sys.executable
    dsh_cli = str(Path(py).with_name("dsh"))
    out: dict[str, tuple[list[str], str]] = {
        "python -c pass": ([py, "-c", "pass"], ""),
        "import dsh + 3 plugins": ([py, "-c", DSH_IMPORT], "python -c pass"),
        "dsh --help": ([dsh_cli, "--help"], "python -c pass"),
        "dsh plugins": ([dsh_cli, "plugins"], "python -c pass"),
    }
    if peers_ok:
        peer_py = str(venv_python())
        out["peers venv: python -c pass"] = ([peer_py, "-c", "pass"], "")
        for name, spec in PEERS.items():
            out[f"import {name}"] = ([peer_py, "-c", spec["import"]], "peers venv: python -c pass")
    return out


def _time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv} failed: {done.stderr.decode(errors='replace')[-500:]}")
    return elapsed * 1000


def measure(peers_ok: bool, rounds: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_")}
    # the three plugins, whatever else the venv holds (the dev venv has examples/dsh-shout,
    # whose module-level import of dsh's message classes alone costs ~90 ms)
    env["DSH_LOAD_PLUGINS"] = "compaction,permissions,persistence"
    env.pop("PYTHONPATH", None)
    # the warm-up round writes .pyc files, as on any machine a program ran on before
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmds = commands(peers_ok)
    names = list(cmds)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds + 1):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            ms = _time(cmds[name][0], env)
            if index:  # round 0 warms the caches
                samples[name].append(ms)
    out: dict[str, Any] = {}
    for name, (argv, base) in cmds.items():
        row: dict[str, Any] = {"argv": argv[1:], "ms": summarize(samples[name]).as_dict(2)}
        if base:
            net = [a - b for a, b in zip(samples[name], samples[base], strict=True)]
            row["net_ms"] = summarize(net).as_dict(2)
            row["baseline"] = base
        out[name] = row
    return out
