"""Review of the fifteenth session's key hiding (``dsh._secrets.HideKeys`` on the core's
and the first-party plugins' loggers and on the ``dsh`` command's handler, turn/end's
error message), by hand mutation and edge cases: a malformed record (arguments that do
not fit its format) is reported by its handler as logging does, never raised into the
code that logged it, and shows no key; each test named after a mutant failed on it (a
mutant the other tests let through)."""

from __future__ import annotations

import importlib
import logging
from typing import Any

import anyio
import pytest

import dsh
from dsh import RequestErrorDecision, hookimpl
from dsh._secrets import HideKeys, key_from_env, redact
from dsh.testing import ScriptedModel, fail, run_turn, scripted_harness, text

KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"


def shows(text: str) -> bool:
    return redact(text, (KEY,)) != text


class Reports(logging.Handler):
    """Keeps what it would print, and the records it could not format."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[str] = []
        self.malformed: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.shown.append(self.format(record))
        except Exception:  # as logging's own handlers do
            self.handleError(record)

    def handleError(self, record: logging.LogRecord) -> None:
        self.malformed.append(record)


def isolated(monkeypatch: pytest.MonkeyPatch) -> tuple[logging.Logger, Reports]:
    """A ``dsh.get_logger`` logger whose one handler is a ``Reports`` (pytest's capture
    handlers, which raise for a malformed record, are set aside), the key set."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    handler = Reports()
    log = dsh.get_logger("dsh_review_s15")
    monkeypatch.setattr(log, "handlers", [handler])
    monkeypatch.setattr(log, "propagate", False)
    monkeypatch.setattr(log, "level", logging.DEBUG)
    return log, handler


def test_a_malformed_record_is_reported_by_its_handler_not_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """logging never raises into the caller for a record it cannot format: the handler
    reports it (``handleError``). HideKeys formats the record first, so it must not."""
    log, handler = isolated(monkeypatch)
    log.warning("%d items", "many")  # raised TypeError here before the fix
    (record,) = handler.malformed
    assert (record.msg, record.args) == ("%d items", ("many",))  # reported as it was


def test_a_malformed_record_quoting_a_key_shows_it_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the handler's report would print (the msg and the arguments) has the key
    hidden: the record is shown as its text, with ``***``."""
    log, handler = isolated(monkeypatch)
    log.warning("%d tries with %s", f"Bearer {KEY}")  # one argument short
    assert handler.malformed == []
    (shown,) = handler.shown
    assert "Bearer ***" in shown
    assert not shows(shown)


def test_the_dsh_commands_handler_does_not_raise_for_a_librarys_malformed_record(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command's stderr handler filters every logger's records (httpx's, a
    plugin's own): a library's malformed record goes on, the key hidden."""
    from dsh._cli_logging import logging_to_stderr

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    records = [
        logging.LogRecord("lib", logging.WARNING, __file__, 1, "%d retries", ("three",), None),
        logging.LogRecord(
            "lib", logging.WARNING, __file__, 1, "%d of %s", (f"Bearer {KEY}",), None
        ),
    ]
    with logging_to_stderr(verbose=False):
        (handler,) = [
            h for h in logging.getLogger().handlers if type(h).__name__ == "_EachMessageOnce"
        ]
        for record in records:
            handler.handle(record)  # raised TypeError before the fix
    printed = capsys.readouterr().err
    assert "Bearer ***" in printed
    assert not shows(printed)


class RetryOnce:
    """Answers every model error with a retry (as dsh-compaction does on overflow)."""

    @hookimpl
    def agent_request_error(self, error: Any) -> RequestErrorDecision:
        return RequestErrorDecision(action="retry", reason="once more")


async def test_a_retried_model_errors_message_has_the_key_hidden_in_step_retry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = ScriptedModel([fail("SERVER_ERROR", f"upstream refused Bearer {KEY}"), text("ok")])
    async with scripted_harness(model, plugins=[RetryOnce()], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(30):
            events = await run_turn(agent, "go")
    (retry,) = [e for e in events if e.type == "step/retry"]
    assert "***" in retry.data["message"]
    assert not shows(retry.data["message"])


def filtered(msg: str, *args: object, exc_text: str | None = None) -> logging.LogRecord:
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, msg, args or None, None)
    record.exc_text = exc_text
    assert HideKeys().filter(record)
    return record


def test_a_key_of_exactly_the_shortest_length_read_by_dsh_is_hidden() -> None:
    """``MIN_LENGTH`` (8) characters are enough to be remembered. Mutant: ``>`` for
    ``>=`` in ``key_from_env``."""
    assert key_from_env("REVIEW_S15_KEY", {"REVIEW_S15_KEY": " Qz8Wx7Vy\n"}) == "Qz8Wx7Vy"
    assert filtered("sent %s", "Qz8Wx7Vy").getMessage() == "sent ***"


def test_a_providers_key_in_the_environment_is_hidden_before_dsh_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not read by any harness yet, a built-in provider's key in the environment is
    hidden all the same. Mutant: ``HideKeys`` with only the keys read (``_READ``)."""
    fresh = "sk-review-s15-Mn4Bv5Cx6Zl7Kj8Hg9Fd0Sa1"
    monkeypatch.setenv("DEEPSEEK_API_KEY", fresh)
    assert filtered("header %s", f"Bearer {fresh}").getMessage() == "header Bearer ***"


def test_a_traceback_already_formatted_as_text_is_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """A record whose ``exc_text`` another handler (or filter) already set: that text
    has the key hidden. Mutant: ``record.exc_text or`` dropped (only ``exc_info``)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    record = filtered("failed", exc_text=f"Traceback ...\nRuntimeError: Bearer {KEY}")
    assert record.exc_text == "Traceback ...\nRuntimeError: Bearer ***"


def test_a_key_containing_another_is_hidden_whole() -> None:
    """Keys are hidden longest first, so one that contains another is one ``***``, not
    the shorter one's ``***`` and the rest in pieces. Mutant: shortest first."""
    short, long = "Pw3Rt5Yu", "Pw3Rt5Yu-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9"
    key_from_env("REVIEW_S15_SHORT", {"REVIEW_S15_SHORT": short})
    key_from_env("REVIEW_S15_LONG", {"REVIEW_S15_LONG": long})
    assert filtered("with %s.", long).getMessage() == "with ***."


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("dsh.llm._http", "dsh.llm._http"),
        ("dsh._steps", "dsh.loop"),
        ("dsh.tools", "dsh.tools"),
        ("dsh._calling", "dsh.plugins"),
        ("dsh._config_validate", "dsh.config"),
    ],
)
def test_each_core_logger_hides_the_keys(module: str, name: str) -> None:
    """Each core logger has the filter. Mutant: ``logging.getLogger`` for
    ``get_logger`` in dsh/llm/_http.py (no test of a record reaches that logger)."""
    importlib.import_module(module)
    assert any(isinstance(f, HideKeys) for f in logging.getLogger(name).filters)


def test_the_option_warning_logger_hides_the_keys() -> None:
    """``storable_options`` warns through ``dsh.agent``, made when it first warns.
    Mutant: ``logging.getLogger("dsh.agent")`` there (dsh/_options.py)."""
    from dsh._options import storable_options

    assert storable_options("a", {"handle": object()}) == {}
    assert any(isinstance(f, HideKeys) for f in logging.getLogger("dsh.agent").filters)


def test_the_dsh_commands_handler_shows_escape_sequences_as_escapes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A plugin logging a file name a tool was given wrote its escape sequences raw to
    the terminal (the window retitled), where the tool line beside it showed them escaped."""
    from dsh._cli_logging import logging_to_stderr

    with logging_to_stderr(verbose=False):
        logging.getLogger("dsh.plugins.vault").warning("peek %s", "e\x1b]0;TITLE\x07.txt")
    assert capsys.readouterr().err == "dsh: peek e\\x1b]0;TITLE\\x07.txt\n"
