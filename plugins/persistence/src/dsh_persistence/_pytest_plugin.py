"""dsh-persistence's pytest plugin (entry point ``pytest11``): while pytest runs, sessions
go to a temporary directory, never to ``~/.local/share/dsh/sessions``.

A test suite that starts harnesses with the installed plugins (``scripted_harness``
loads entry points by default) would otherwise store every test's session in the
developer's own session directory. ``$DSH_PERSISTENCE_DIR`` is pointed at a directory
of the pytest run for the whole session, whatever it held before; a test that wants a
place of its own sets it with ``monkeypatch.setenv``, or gives ``persistence.directory``
in its config.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

#: ``dsh_persistence._settings.ENV_DIRECTORY``, not imported: that module loads pydantic,
#: and pytest loads this plugin in every run of every project that has dsh-persistence.
ENV_DIRECTORY = "DSH_PERSISTENCE_DIR"


@pytest.fixture(autouse=True, scope="session")
def _dsh_sessions_in_a_temp_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_DIRECTORY, str(tmp_path_factory.mktemp("dsh-sessions")))
        yield
