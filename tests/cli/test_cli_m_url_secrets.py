"""A ``-m provider:model@URL`` refused for its URL (a mistyped scheme, a ``#fragment``,
no scheme at all) is quoted in the one-line error, and with ``-v`` in its traceback:
the value of a secret-named query or fragment parameter (``?api-key=...``) is ``***``
there, as a ``user:password@`` is.

Before: ``dsh.llm.providers.parse_model_shorthand`` (and ``dsh.llm.choose._register``)
quoted the whole shorthand, its ``?api-key=`` value included."""

from __future__ import annotations

import pytest

from dsh.cli import main

KEY = "SUPERSECRET-Qz7Lm2Xc91"


@pytest.mark.parametrize(
    ("model", "shown"),
    [
        (f"openai-compatible:x@htps://gw.example/v1?api-key={KEY}", "?api-key=***"),
        (f"openai-compatible:x@https://gw.example/v1#top?api-key={KEY}", "#top?api-key=***"),
        (f"openai-compatible:x@https://gw.example/v1#access_token={KEY}", "#access_token=***"),
        (f"openai-compatible:x@gw.example/v1?x=1&key={KEY}", "?x=1&key=***"),
        (f"openai-compatible:x@https://gw.example/v1?sig={KEY[:6]}#a", "?sig=***#a"),
    ],
)
@pytest.mark.parametrize("verbose", [[], ["-v"]])
def test_a_refused_m_url_shows_its_secret_parameters_hidden(
    model: str, shown: str, verbose: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*verbose, "-m", model, "run", "hi"]) == 2
    err = capsys.readouterr().err
    assert shown in err and "gw.example/v1" in err
    assert KEY[:6] not in err


def test_a_refused_m_url_keeps_its_other_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    model = "openai-compatible:x@htps://gw.example/v1?api-version=2024-10-21"
    assert main(["-m", model, "run", "hi"]) == 2
    assert "?api-version=2024-10-21" in capsys.readouterr().err


def test_a_model_name_holding_a_secret_parameter_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the URL without its scheme is read as part of the model's name; a provider with an
    # endpoint of its own built it: the name, key and all, was shown on every line that
    # names the model, stored with the session and sent to the provider as the model
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["-m", f"openai:x@gw.example/v1?api-key={KEY}", "run", "hi"]) == 2
    err = capsys.readouterr().err
    assert "openai:x@gw.example/v1?api-key=***" in err and "http://" in err
    assert KEY[:6] not in err and "AUTH" not in err


def test_an_error_of_the_dsh_command_hides_the_key_in_its_m_url(tmp_path: object) -> None:
    # a command's error quoting the -m URL (a plugin command's, one failing before the
    # model was built) had only the keys dsh had read hidden, not the -m's own
    import argparse

    from dsh._cli_keys import hide_keys

    secret = "MQUERY-Wv83Kd02Lp"
    args = argparse.Namespace(model=f"openai-compatible:x@https://gw/v1#a?token={secret}")
    assert hide_keys(f"cannot use gw/v1?token={secret} now", args) == (
        "cannot use gw/v1?token=*** now"
    )


@pytest.mark.parametrize(
    "model",
    [
        f"openai-compatible:m?api-key={KEY}@http://127.0.0.1:1/v1",
        f"openai-compatible:org/m#q4&token={KEY}@https://gw.example/v1",
        f"openai-compatible:m?api-key?={KEY}@http://127.0.0.1:1/v1",
    ],
)
def test_a_model_name_holding_a_secret_parameter_before_a_url_is_refused(
    model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # refused only without a URL: before '@http://' the key was accepted, sent to the
    # server as the model's name and shown on every line naming the model
    assert main(["-m", model, "run", "hi"]) == 2
    err = capsys.readouterr().err
    assert "=***@http" in err and "secret parameter" in err
    assert KEY[:6] not in err


@pytest.mark.parametrize(
    ("text", "model", "url"),
    [
        ("openai-compatible:org/m?rev=main#q4@http://h:80/v1", "org/m?rev=main#q4", "http://h:80/v1"),
        ("openai-compatible:my?model@http://h/v1", "my?model", "http://h/v1"),
        ("openai-compatible:model#v2", "model#v2", None),
        ("openai-compatible:m@http://h/v1?api-version=2024-02-01", "m", "http://h/v1?api-version=2024-02-01"),
        (f"openai-compatible:m@http://h/v1?api-key={KEY}", "m", f"http://h/v1?api-key={KEY}"),
    ],
)  # fmt: skip
def test_a_model_name_without_a_secret_parameter_is_kept(
    text: str, model: str, url: str | None
) -> None:
    from dsh.llm.providers import parse_model_shorthand

    _, config = parse_model_shorthand(text)
    assert (config.model, config.base_url) == (model, url)


KEYS = ("KEY-ONE-Qz7Lm2Xc91", "KEY-TWO-Pw4Rt8Yb02")


@pytest.mark.parametrize(
    "model",
    [
        "  openai-compatible:m?api-key={0}@http://h/v1?key={1}  ",
        "openai-compatible:m@http://h/v1?key={0}@https://g/v1#token={1}",
        "openai-compatible:m@http://h @http://g/v1?sig={0}&x=1#access_token={1}",
        "openai-compatible:m?token={0}@https://x@http://h/v1?key={1}",
        "openai-compatible:m@http://h/v1?x=y@https://g?key={1}&sig={0}",
    ],
)
def test_the_keys_in_each_part_of_an_m_are_hidden_as_its_refusal_hides_them(
    model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # spaces around, several @http, one in a URL's query, a URL with a space: the dsh
    # command's error path (dsh._cli_keys) and the shorthand's own refusal
    # (parse_model_shorthand) split a -m where the other does
    import argparse

    from dsh._cli_keys import hide_keys
    from dsh.errors import ConfigError
    from dsh.llm.providers import parse_model_shorthand

    text = model.format(*KEYS)
    args = argparse.Namespace(model=text)
    assert hide_keys(f"failed: {KEYS[0]}, {KEYS[1]}.", args) == "failed: ***, ***."
    with pytest.raises(ConfigError) as info:
        parse_model_shorthand(text)
    assert KEYS[0][:8] not in str(info.value) and KEYS[1][:8] not in str(info.value)
    assert main(["-m", text, "run", "hi"]) == 2
    err = capsys.readouterr().err
    assert KEYS[0][:8] not in err and KEYS[1][:8] not in err


def test_a_secret_name_typed_with_a_question_mark_before_its_equals_is_hidden(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # ?api-key?=...: a model built with that URL took it for a key (query_secrets reads
    # the name without its separators); the refusal of the -m and the dsh command's
    # error path showed it (parameter_secrets, hide_parameters: no ? in a name)
    from dsh._secrets import parameter_secrets, query_secrets

    url = f"http://h/v1?api-key?={KEY}"
    assert parameter_secrets(url) == query_secrets(url) == (KEY,)
    assert main(["-m", f"nope:m@{url}", "run", "hi"]) == 2
    err = capsys.readouterr().err
    assert "?api-key?=***" in err and KEY[:6] not in err


@pytest.mark.parametrize(
    "text",
    [
        f"nope:m@http://h/v1?x?=1?key={KEY}",
        f"nope:m@http://h/v1?monkey?=a?code={KEY}",
        f"openai-compatible:m?rev?=main?api-key={KEY}",
    ],
)
def test_a_secret_parameter_after_a_name_ending_with_a_question_mark_is_hidden(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # ?x?=1?key=...: the value of x? runs on over ?key=...; a pattern that matched x?=...
    # first went on after it and never looked at key=... (the key was shown in the -m's
    # refusal, and a model named with it was accepted)
    import argparse

    from dsh._cli_keys import hide_keys
    from dsh._secrets import hide_parameters, parameter_secrets

    assert KEY in parameter_secrets(text)
    assert KEY not in hide_parameters(text)
    assert hide_keys(f"failed: {KEY}", argparse.Namespace(model=text, config="/none")) == (
        "failed: ***"
    )
    assert main(["-m", text, "run", "hi"]) == 2
    assert KEY not in capsys.readouterr().err


def test_a_password_in_the_model_part_of_a_refused_m_is_hidden(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the model part is hidden on its own when the -m has a URL: a user:password@ in it
    # was shown (only the URL part was cleared of one)
    assert main(["-m", f"nope:ftp://user:{KEY}@host@http://h/v1", "run", "hi"]) == 2
    err = capsys.readouterr().err
    assert KEY not in err and "***@" in err
