"""The profile written beside bench/run.py's table where a dsh target is missed.

``profile_run`` profiles ``run(turns)`` (a case as ``_util`` takes it: plain or
``async def``) with pyinstrument when it can be imported from ``tools_dir`` (appended to
sys.path, so it never shadows the project's packages), else with cProfile. The report
is text (``<out>.txt``), plus ``<out>.html`` (pyinstrument) or ``<out>.prof`` (cProfile).
"""

from __future__ import annotations

import cProfile
import inspect
import io
import pstats
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

Run = Callable[[int], Awaitable[Any] | Any]


async def profile_run(run: Run, turns: int, out: Path, tools_dir: Path | None) -> Path:
    """Profile ``run(turns)``; returns the text report written."""
    text = _beside(out, ".txt")
    profiler = _pyinstrument(tools_dir)
    if profiler is not None:
        profiler.start()
        await _call(run, turns)
        profiler.stop()
        text.write_text(profiler.output_text(unicode=True, color=False), encoding="utf-8")
        _beside(out, ".html").write_text(profiler.output_html(), encoding="utf-8")
        return text
    prof = cProfile.Profile()
    prof.enable()
    await _call(run, turns)
    prof.disable()
    prof.dump_stats(str(_beside(out, ".prof")))
    buffer = io.StringIO()
    stats = pstats.Stats(prof, stream=buffer).sort_stats("cumulative")
    stats.print_stats(60)
    stats.sort_stats("tottime").print_stats(40)
    text.write_text(buffer.getvalue(), encoding="utf-8")
    return text


def _beside(out: Path, suffix: str) -> Path:
    """``out`` + ``suffix`` (not ``with_suffix``: ``run.v2-profile-x`` has a dot)."""
    return out.with_name(out.name + suffix)


async def _call(run: Run, turns: int) -> None:
    pending = run(turns)
    if inspect.isawaitable(pending):
        await pending


def _pyinstrument(tools_dir: Path | None) -> Any:
    if tools_dir is not None and tools_dir.is_dir() and str(tools_dir) not in sys.path:
        sys.path.append(str(tools_dir))
    try:
        from pyinstrument import Profiler
    except ImportError:
        return None
    return Profiler(interval=0.0001, async_mode="disabled")  # every task: the loop task
