"""Build tools told on their command line or in the line's environment to run a program
the line names (``_command_options.hidden`` asks this module): ``go``'s ``-exec``,
``-toolexec`` and ``-vettool`` (also in ``GOFLAGS``; ``GOENV`` names a file of them,
``go env -w`` stores them there), cargo's ``--config`` and the variables naming the
compiler, its wrapper, a linker or a runner (``RUSTC_WRAPPER``,
``CARGO_TARGET_<TRIPLE>_RUNNER``, ``-C linker=`` in ``RUSTFLAGS``), and npm's and
pnpm's script shell and the configuration files that may name one.

What a project's own build runs (a ``Makefile``, ``build.rs``, a ``package.json``
script, a test) is not looked into (docs/permissions.md, Limits); this is only what
the line itself names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from dsh_permissions._option_variables import (
    CARGO_VARIABLES,
    NPM_VARIABLES,
    RUSTFLAGS_VARIABLES,
    line_snapshot,
    named,
)

__all__ = ["build_runs"]

#: go's flags that run a program (one dash or two, ``-exec=CMD`` or ``-exec CMD``)
_GO_RUNS: Final = re.compile(r"--?(?:exec|toolexec|vettool)(?:=.*)?", re.DOTALL)
#: ``go env -w`` keys that run nothing (anything else may: GOFLAGS, CC, CGO_CFLAGS)
_GO_PLAIN_KEYS: Final = frozenset(
    {"GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOSUMDB", "GO111MODULE"}
    | {"GOINSECURE", "GOTELEMETRY", "GOAMD64", "GOARCH", "GOOS", "CGO_ENABLED"}
)
#: a target's runner or linker (``CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER``)
_CARGO_TARGET: Final = re.compile(r"CARGO_(?:TARGET_[A-Z0-9_]+_|HOST_)(?:RUNNER|LINKER)\b")
#: ``-C`` settings that run and load nothing; lint levels; ``--cfg``
_PLAIN_CODEGEN: Final = re.compile(
    r"(?:opt-level|target-cpu|debuginfo|codegen-units|panic|strip|lto|overflow-checks"
    r"|debug-assertions|force-frame-pointers|target-feature|embed-bitcode"
    r"|relocation-model|code-model)(?:=[A-Za-z0-9_.,+-]*)?"
)
_PLAIN_LINT: Final = re.compile(r"[A-Za-z0-9_:-]+")
_PLAIN_CFG: Final = re.compile(r"[A-Za-z0-9_]+(?:=\"?[A-Za-z0-9_.-]*\"?)?")
#: npm's and pnpm's settings that name a program or a configuration file naming one
_NPM_KEYS: Final = ("script-shell", "userconfig", "globalconfig", "node-options", "shell")
_NPM_VARIABLE: Final = re.compile(
    r"npm_config_(?:script_shell|userconfig|globalconfig|node_options|shell)=", re.IGNORECASE
)
_NPMS: Final = frozenset({"npm", "pnpm"})


def build_runs(
    name: str, args: list[str], before: list[str], set_here: Callable[[str], bool]
) -> str | None:
    """Why the build tool ``name`` given ``args`` (``before``: the words before it;
    ``set_here``: whether the line sets a variable) runs a program the line names, or
    None."""
    if name == "go":
        return _go(args, before, set_here)
    if name == "cargo":
        return _cargo(args, before, set_here)
    if name in _NPMS:
        return _npm(name, args, before, set_here)
    return None


def _go(args: list[str], before: list[str], set_here: Callable[[str], bool]) -> str | None:
    if flag := next((a for a in args if _GO_RUNS.fullmatch(a)), None):
        return f"go {flag.split('=', 1)[0]} runs a command that is not looked into"
    if args[:2] == ["env", "-w"] and any(
        a.split("=", 1)[0] not in _GO_PLAIN_KEYS for a in args[2:] if not a.startswith("-")
    ):
        return "go env -w stores a setting that may run a command, which is not looked into"
    if set_here("GOENV"):
        return "GOENV may make go run a command that is not looked into"
    values = _values("GOFLAGS", before)
    if any(_GO_RUNS.fullmatch(w) for v in values for w in v.split()) or (
        set_here("GOFLAGS") and not values
    ):
        return "GOFLAGS may make go run a command that is not looked into"
    return None


def _cargo(args: list[str], before: list[str], set_here: Callable[[str], bool]) -> str | None:
    if any(a == "--config" or a.startswith("--config=") for a in args):
        return "cargo --config may name a program it runs, which is not looked into"
    found = [v for v in CARGO_VARIABLES if set_here(v)]
    found += [m.group(0) for t in before if (m := _CARGO_TARGET.match(t))]
    found += [n for n in line_snapshot() if _CARGO_TARGET.fullmatch(n)]  # export ..._RUNNER
    found += [v for v in RUSTFLAGS_VARIABLES if set_here(v) and not _plain_rustflags(v, before)]
    if found:
        return f"{found[0]} may make cargo run a command that is not looked into"
    return None


def _plain_rustflags(name: str, before: list[str]) -> bool:
    """Whether ``name`` is set before cargo, each time to flags known to run nothing."""
    values = _values(name, before)
    if not values or len(values) != sum(named(name, t) for t in before):
        return False  # set earlier in the line, or in another way (+=)
    return all(_plain_flags(v.split()) for v in values)


def _plain_flags(words: list[str]) -> bool:
    i = 0
    while i < len(words):
        word = words[i]
        option, value = (word, None) if word.startswith("--") else (word[:2], word[2:] or None)
        if option not in ("-C", "-D", "-W", "-A", "-F", "--cfg", "--cap-lints"):
            return False
        if value is None:
            i += 1
            if i == len(words):
                return False
            value = words[i]
        plain = {"-C": _PLAIN_CODEGEN, "--cfg": _PLAIN_CFG}.get(option, _PLAIN_LINT)
        if not plain.fullmatch(value):
            return False
        i += 1
    return True


def _npm(
    name: str, args: list[str], before: list[str], set_here: Callable[[str], bool]
) -> str | None:
    for arg in args:
        if arg.startswith("--") and arg[2:].split("=", 1)[0] in _NPM_KEYS:
            return f"{name} {arg.split('=', 1)[0]} names a program it runs, not looked into"
    setting = args[1:] if args[:1] == ["set"] else args[2:] if args[:2] == ["config", "set"] else []
    if any(a.split("=", 1)[0] in _NPM_KEYS for a in setting):
        return f"{name} config set stores a program it runs, which is not looked into"
    found = [m.group(0) for t in before if (m := _NPM_VARIABLE.match(t))]  # Npm_Config_...
    if found := found + [v for v in NPM_VARIABLES if set_here(v)]:
        return f"{found[0]} may make {name} run a command that is not looked into"
    return None


def _values(name: str, before: list[str]) -> list[str]:
    """The values ``before`` assigns to ``name`` (``NAME=value``)."""
    return [t.split("=", 1)[1] for t in before if t.startswith(f"{name}=")]
