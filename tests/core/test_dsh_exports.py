"""What ``import dsh`` offers: every name of ``dsh.__all__`` can be imported from it,
``Harness`` included (the object a program starts with: ``from dsh import Harness``
was an ImportError, found by a review that wrote it so), and the heavy ones are
imported only when asked for, so ``import dsh`` stays cheap."""

from __future__ import annotations

import subprocess
import sys

import dsh
from dsh.harness import Harness


def test_every_public_name_is_importable_from_dsh() -> None:
    missing = [name for name in dsh.__all__ if not hasattr(dsh, name)]
    assert missing == []
    assert dsh.Harness is Harness


def test_import_dsh_leaves_the_harness_module_unimported() -> None:
    code = (
        "import sys, dsh; assert 'dsh.harness' not in sys.modules; "
        "from dsh import Harness; assert 'dsh.harness' in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_error_of_dsh_errors_is_exposed_by_dsh() -> None:
    """``dsh``'s list of the errors it offers (lazily: ``import dsh`` imports no
    ``dsh.errors``) is written out, not derived: an error added to ``dsh.errors`` and
    not to ``dsh`` fails here, as would a name of ``dsh``'s it no longer has."""
    import dsh.errors

    errors = {
        name
        for name in dsh.errors.__all__
        if isinstance(getattr(dsh.errors, name), type)
        and issubclass(getattr(dsh.errors, name), BaseException)
    }
    exposed = {name for name, module in dsh._LAZY.items() if module == "dsh.errors"}
    assert exposed == errors
    assert errors <= set(dsh.__all__)


def test_import_dsh_reaches_the_modules_it_always_held() -> None:
    # `import dsh` then `dsh.errors.exception_words(exc)` (as docs/writing-plugins.md
    # says it) and `dsh.hookspecs.CALL_STYLES` (docs/hooks.md); the package imported
    # them when it was imported, and now on first use: an AttributeError in between
    code = (
        "import sys, dsh; assert 'dsh.errors' not in sys.modules; "
        "assert callable(dsh.errors.exception_words); assert dsh.hookspecs.CALL_STYLES"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
