from __future__ import annotations

import inspect
import os
from importlib.metadata import entry_points

import pytest

pytest_plugins = ["dsh.testing"]

#: The backend the async tests run on. Unset: asyncio, by pytest-asyncio (pyproject's
#: asyncio_mode = "auto"). ``DSH_TEST_BACKEND=trio`` (the tests-trio session) runs them
#: on trio by anyio's pytest plugin instead, and deselects the sync tests, which have no
#: backend and run in the asyncio sessions. A test of asyncio itself is marked
#: ``@pytest.mark.asyncio_only(reason)``: skipped on any other backend.
BACKEND = os.environ.get("DSH_TEST_BACKEND") or "asyncio"
BACKENDS = ("asyncio", "trio")
#: On trio, a body read stopped early leaves httpx's and httpcore's own async generators
#: (those inside the ``aiter_bytes()`` that dsh closes) to the garbage collector, which
#: trio warns of: upstream's (encode/httpx#3686). Only those are ignored: one of dsh's
#: own left open (``aiter_bytes`` itself) still fails its test.
HTTPX_LEFT_OPEN = (
    r"ignore:Async generator 'http(x\._models\.Response\.aiter_raw|x\._client\."
    r"|x\._transports\.|core\.):ResourceWarning"
)


def pytest_configure(config: pytest.Config) -> None:
    """The `dsh` children of the tests inherit stdin: make it empty, whatever runs the
    tests (a CI runner may hand it a pipe), so that a child never sees input its test
    did not give it. Not with ``-s``, where a debugger may need the terminal."""
    # Tests patch dsh.plugins.create_plugin_manager; dsh.harness binds it at import, so a
    # harness module first imported under a patch would keep the patched one for every
    # later test of the process. Imported here, it binds the real one in every worker.
    import dsh.harness  # noqa: F401

    config.addinivalue_line(
        "markers", "asyncio_only(reason): a test of asyncio itself; skipped on other backends"
    )
    if BACKEND not in BACKENDS:
        raise pytest.UsageError(f"DSH_TEST_BACKEND={BACKEND!r}: not one of {BACKENDS}")
    if BACKEND != "asyncio":  # pytest-asyncio runs only tests marked for it
        config.option.asyncio_mode = "strict"
    if BACKEND == "trio":
        config.addinivalue_line("filterwarnings", HTTPX_LEFT_OPEN)

    if config.getoption("capture") != "no":
        empty = os.open(os.devnull, os.O_RDONLY)
        os.dup2(empty, 0)
        os.close(empty)


@pytest.hookimpl(tryfirst=True)  # before anyio's, which runs the tests marked anyio
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Off asyncio: mark every async test ``anyio`` (anyio's auto mode, which would
    conflict with pyproject's asyncio_mode = "auto" that pytest-asyncio keeps reading)."""
    if (
        BACKEND != "asyncio"
        and isinstance(collector, pytest.Module | pytest.Class)
        and collector.istestfunction(obj, name)
        and inspect.iscoroutinefunction(obj)
    ):
        pytest.mark.anyio(obj)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """The backend of anyio's plugin (it would run each test on every installed one)."""
    return BACKEND


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``@pytest.mark.plugins("a", ...)``: skip unless those dsh plugins are installed.
    Off asyncio: only the async tests, and not the ``asyncio_only`` ones."""
    if BACKEND != "asyncio":
        runs = {item: "anyio_backend" in getattr(item, "fixturenames", ()) for item in items}
        config.hook.pytest_deselected(items=[item for item in items if not runs[item]])
        items[:] = [item for item in items if runs[item]]
    installed = {ep.name for ep in entry_points(group="dsh")}
    for item in items:
        for marker in item.iter_markers("plugins"):
            missing = [name for name in marker.args if name not in installed]
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"needs dsh plugins: {', '.join(missing)}"))
        if BACKEND != "asyncio":
            for marker in item.iter_markers("asyncio_only"):
                item.add_marker(pytest.mark.skip(reason=f"asyncio only: {marker.args[0]}"))
