"""How the ``dsh`` command tells a plugin's failure: ``-v`` shows the traceback of a hook
or model failure that ended the turn (one line without it, as before); a failing
``register_*`` hook says how to leave the plugin out, as a failing import does; ``dsh
plugins`` lists the plugins beside one that failed to load, marking it, status 1."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from cli_m_args_support import (
    Install,
    _quiet_env,  # noqa: F401 (an autouse fixture)
)
from loop_support import Models

from dsh import hookimpl
from dsh.cli import main
from dsh.llm import ModelInfo, TextDelta
from dsh.messages import ModelRequest
from dsh.testing import ScriptedModel, text


class Broken:
    @hookimpl
    def agent_request(self) -> None:
        raise RuntimeError("the bad plugin broke")


class Boom:
    info = ModelInfo(name="boom", provider="bad")

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        yield TextDelta("half ")
        raise KeyError("choices")


@pytest.mark.parametrize("verbose", [True, False])
def test_v_shows_the_traceback_of_a_hook_that_ended_the_turn(
    with_plugins: Install, capsys: pytest.CaptureFixture[str], verbose: bool
) -> None:
    with_plugins(("models", Models(ScriptedModel([text("ok")]))), ("bad", Broken()))
    assert main([*(["-v"] if verbose else []), "-m", "scripted", "run", "hi"]) == 1
    err = capsys.readouterr().err
    assert "HOOK: plugin 'bad' failed in hook agent_request" in err
    if verbose:
        assert "Traceback" in err and 'raise RuntimeError("the bad plugin broke")' in err
    else:  # as before: the turn's one line
        assert "Traceback" not in err and "turn 1 ended" not in err


def test_v_shows_the_traceback_of_a_models_unexpected_exception(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    with_plugins(("models", Models(Boom())))
    assert main(["-v", "-m", "boom", "run", "hi"]) == 1
    err = capsys.readouterr().err
    assert "UNKNOWN: model 'boom' failed: KeyError: 'choices'" in err
    assert 'raise KeyError("choices")' in err


def test_v_shows_no_debug_record_without_a_traceback(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    import logging

    class Chatty:
        @hookimpl
        def agent_created(self) -> None:
            logging.getLogger("dsh.chatty").debug("a detail only a developer wants")

    with_plugins(("models", Models(ScriptedModel([text("ok")]))), ("chatty", Chatty()))
    assert main(["-v", "-m", "scripted", "run", "hi"]) == 0
    assert "a detail" not in capsys.readouterr().err


class RegisterRaises:
    @hookimpl
    def register_models(self, register: Any) -> None:
        raise ValueError("no config")


def test_a_failing_register_hook_of_an_installed_plugin_says_how_to_leave_it_out(
    install: Install, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (
        "from dsh import hookimpl\n\n@hookimpl\ndef register_models(register):\n"
        "    raise ValueError('no config')\n"
    )
    install("dsh-bad", "bad", "dsh_bad_mod", source)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "bad")
    assert main(["models"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dsh: error: plugin 'bad' failed in hook register_models")
    assert err.endswith(
        "ValueError: no config\n  disable it with `-p no:bad`, or choose plugins with "
        "DSH_LOAD_PLUGINS=a,b, or uninstall dsh-bad\n"
    )


def test_config_check_says_how_to_leave_out_a_plugin_whose_register_tools_fails(
    install: Install,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Any,
) -> None:
    """``dsh config check`` starts the plugins as ``dsh run`` does: a failing
    ``register_tools`` is told with the same way to leave the plugin out."""
    source = (
        "from dsh import hookimpl\n\n@hookimpl\ndef register_tools(register):\n"
        "    raise ValueError('no tools')\n"
    )
    install("dsh-bad", "bad", "dsh_bad_mod", source)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "bad")
    config = tmp_path / "dsh.yml"
    config.write_text("agents: []\n", encoding="utf-8")
    assert main(["-c", str(config), "config", "check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dsh: plugin 'bad' failed in hook register_tools")
    assert err.endswith(
        "ValueError: no tools\n  disable it with `-p no:bad`, or choose plugins with "
        "DSH_LOAD_PLUGINS=a,b, or uninstall dsh-bad\n"
    )


def test_a_failing_register_hook_of_a_plugin_given_in_code_gets_no_p_hint(
    with_plugins: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    with_plugins(("bad", RegisterRaises()))  # not an entry point: -p cannot leave it out
    assert main(["models"]) == 2
    assert "-p no:" not in capsys.readouterr().err


BROKEN = "import does_not_exist_anywhere\n"
GOOD = "from dsh import hookimpl\n\n@hookimpl\ndef agent_request(request):\n    return None\n"


def test_plugins_lists_the_loaded_plugins_and_marks_the_one_that_failed(
    install: Install, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install("dsh-broken", "broken", "dsh_broken_mod", BROKEN)
    install("dsh-good", "good", "dsh_good_mod", GOOD, version="2.5")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "broken,good")
    assert main(["plugins"]) == 1
    out, err = capsys.readouterr()
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert rows["good"].split()[1:3] == ["dsh-good", "2.5"]
    assert rows["broken"].split()[1:3] == ["dsh-broken", "1.0"]
    assert rows["broken"].endswith(
        "failed to load: ModuleNotFoundError: No module named 'does_not_exist_anywhere'"
    )
    assert err == ""  # the row says it: once
    assert main(["plugins", "--json"]) == 1
    listed = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert listed["good"]["error"] is None and listed["good"]["hooks"] == ["agent_request"]
    assert listed["broken"] == {
        "name": "broken",
        "distribution": "dsh-broken",
        "version": "1.0",
        "hooks": [],
        "error": "ModuleNotFoundError: No module named 'does_not_exist_anywhere'",
    }


WAY_OUT = (
    "\n  disable it with `-p no:bad`, or choose plugins with DSH_LOAD_PLUGINS=a,b, or "
    "uninstall dsh-bad\n"
)


@pytest.mark.parametrize(
    ("hook", "registered", "refused"),
    [
        (
            "register_tools",
            "word_count",
            "plugin 'bad' registered the function 'word_count', which is not a dsh Tool; "
            "wrap it with @dsh.tools.tool",
        ),
        (
            "register_settings",
            "{'note': str}",
            "plugin 'bad' registered settings {'note': <class 'str'>}, which is not a "
            "pydantic model class; register the class itself (register(MySettings))",
        ),
        (
            "register_commands",
            "'hello'",
            "plugin 'bad' registered 'hello', which is not a dsh Command",
        ),
    ],
)
def test_a_register_hook_registering_what_dsh_refuses_says_how_to_leave_it_out(
    install: Install,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    hook: str,
    registered: str,
    refused: str,
) -> None:
    # the core's refusal in its words (it names the plugin), then the way out, as for a
    # register_* hook that raises: a user who only installed the plugin can go on
    source = (
        "from dsh import hookimpl\n\ndef word_count(text: str) -> int:\n    return 0\n\n"
        f"@hookimpl\ndef {hook}(register):\n    register({registered})\n"
    )
    install("dsh-bad", "bad", "dsh_bad_mod", source)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "bad")
    assert main(["tools"]) == 2
    assert capsys.readouterr().err == f"dsh: error: {refused}{WAY_OUT}"


def test_config_check_says_how_to_leave_out_a_plugin_registering_a_plain_function(
    install: Install,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Any,
) -> None:
    source = (
        "from dsh import hookimpl\n\ndef word_count(text: str) -> int:\n    return 0\n\n"
        "@hookimpl\ndef register_tools(register):\n    register(word_count)\n"
    )
    install("dsh-bad", "bad", "dsh_bad_mod", source)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "bad")
    config = tmp_path / "dsh.yml"
    config.write_text("agents: []\n", encoding="utf-8")
    assert main(["-c", str(config), "config", "check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dsh: plugin 'bad' registered the function 'word_count'")
    assert err.endswith(WAY_OUT)


@pytest.mark.parametrize(("argv", "prefix"), [(["version"], "warning"), (["models"], "error")])
def test_each_plugin_that_failed_to_load_is_its_own_prefixed_paragraph(
    install: Install,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    prefix: str,
) -> None:
    # grep "dsh: warning:" (or a log tool) finds every plugin that failed, not the first
    install("dsh-broken", "broken", "dsh_broken_mod", BROKEN)
    install("dsh-worse", "worse", "dsh_worse_mod", "raise RuntimeError('no luck')\n")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "broken,worse")
    main(argv)
    lines = capsys.readouterr().err.splitlines()
    failed = [line for line in lines if "failed to load" in line]
    assert len(failed) == 2
    for line, name in zip(failed, ["broken", "worse"], strict=True):
        assert line.startswith(f"dsh: {prefix}: plugin '{name}' (distribution dsh-{name}")
    ways_out = [line for line in lines if line.startswith("  disable it with")]
    assert len(ways_out) == 2
