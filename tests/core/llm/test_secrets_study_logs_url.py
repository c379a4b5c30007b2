"""A model API key written into ``base_url``'s query, or echoed in a response header,
and the log records of a request (a study; the adapters' other log paths are in
test_secrets_study_errors.py, the core's loggers in tests/core/test_secrets_study_logs.py).

Before: httpx logs each request's URL at INFO on its own logger (httpx/_client.py), and
httpcore the response's headers at DEBUG on its own (httpcore.http11), neither of which
dsh filtered in library use (HideKeys was on the core's loggers and the dsh command's
handler only). Now ``dsh.llm._http`` puts HideKeys on those loggers too.

A key belongs in api_key_env, but one written only into base_url's query (kept on every
request since test_base_url_query.py) was not among the keys HideKeys hides (those dsh
read from the environment): httpx's record showed it. Now the value of a query
parameter named like a secret's (``key``, ``api-key``, ``access_token``, ``sig``...)
counts as a key dsh has read (``dsh._secrets.query_secrets``) as soon as a model is
built with that base_url, and as a secret of a harness whose config has it."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from llm_wire import Reply, WireServer, collect, recorded, sse

from dsh._secrets import query_secrets, redact
from dsh.config import ModelConfig, load_config
from dsh.harness import Harness
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage

KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"  # sk-test- and 40 more


async def one_request(
    query: str, env: Mapping[str, str] | None = None, **settings: Any
) -> tuple[str, ModelConfig]:
    """One request of the OpenAI-compatible adapter to a local server, ``?QUERY`` on
    its base_url: the path the server was asked for, and the model's config."""
    async with WireServer([sse(b"data: [DONE]\n\n")]) as server:
        config = ModelConfig(
            provider="openai-compatible",
            model="m",
            base_url=f"{server.url}?{query}",
            max_retries=0,
            **settings,
        )
        model = OpenAICompatibleModel("wire", config, env=dict(env or {}))
        await collect(model, ModelRequest(messages=(UserMessage(content="hi"),)))
    return server.requests[0].path, config


async def test_a_key_in_the_base_urls_query_stays_out_of_the_request_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Leak path: base_url ``...?key=KEY`` -> httpx's INFO record "HTTP Request: POST
    URL", with the key read from $K too (so dsh knows it as a key)."""
    with caplog.at_level(logging.INFO):
        await one_request(f"key={KEY}", {"K": KEY}, api_key_env="K")
    assert any(r.name == "httpx" for r in caplog.records)
    for record in caplog.records:
        assert redact(record.getMessage(), (KEY,)) == record.getMessage(), record.name


async def test_a_key_a_server_echoes_in_a_header_stays_out_of_httpcores_debug_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Leak path: a response header holding the key -> httpcore's DEBUG record of the
    headers received ("receive_response_headers.complete return_value=...")."""
    headers = {"content-type": "text/event-stream", "x-echo": f"Bearer {KEY}"}
    with caplog.at_level(logging.DEBUG):
        async with WireServer([Reply(200, b"data: [DONE]\n\n", headers)]) as server:
            config = ModelConfig(
                provider="openai-compatible",
                model="m",
                base_url=server.url,
                api_key_env="K",
                max_retries=0,
            )
            model = OpenAICompatibleModel("wire", config, env={"K": KEY})
            await collect(model, ModelRequest(messages=(UserMessage(content="hi"),)))
    assert any(r.name == "httpcore.http11" and "x-echo" in r.getMessage() for r in caplog.records)
    for record in caplog.records:
        assert redact(record.getMessage(), (KEY,)) == record.getMessage(), record.name


async def test_a_key_written_only_into_the_query_stays_out_of_the_request_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Leak path: base_url ``...?key=VALUE``, no key variable holding VALUE -> httpx's
    INFO record of the request."""
    only_here = "qk-only-in-the-query-7f3a9c2e5b1d"  # read from no variable by any test
    with caplog.at_level(logging.INFO):
        path, _ = await one_request(f"key={only_here}")
    assert path == f"/v1/chat/completions?key={only_here}"
    assert any(r.name == "httpx" for r in caplog.records)
    for record in caplog.records:
        assert only_here not in record.getMessage(), record.name


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("api-key", "azure-query-key-4c1d9e7a"),  # Azure OpenAI's query key
        ("subscription-key", "apim-query-key-8b2e6f0c"),  # Azure API Management's
        ("access_token", "bearer-in-query-3a7c5e9b"),
        ("X-Amz-Signature", "5d0f2b8a6c4e1d3f"),  # a presigned address's
        ("sig", "sas-signature-9e8d7c6b"),  # Azure SAS
        ("code", "function-key-2f4a6c8e"),  # Azure Functions
    ],
)
async def test_keys_under_other_secret_names_stay_out_of_the_request_log(
    caplog: pytest.LogCaptureFixture, name: str, value: str
) -> None:
    """Other names a service reads a key from, beside a parameter that is no secret
    (``api-version``, shown as it is), through the Anthropic adapter."""
    with caplog.at_level(logging.INFO):
        async with WireServer([sse(recorded("anthropic_max_tokens.sse"))]) as server:
            query = f"api-version=2024-10-21&{name}={value}"
            config = ModelConfig(
                provider="anthropic", model="m", base_url=f"{server.url}?{query}", max_retries=0
            )
            model = AnthropicModel("wire", config, env={})
            await collect(model, ModelRequest(messages=(UserMessage(content="hi"),)))
        assert server.requests[0].path == f"/v1/messages?{query}"
    [record] = [r for r in caplog.records if r.name == "httpx"]
    assert f"?api-version=2024-10-21&{name}=*** " in record.getMessage()
    assert value not in repr(model)


async def test_a_percent_encoded_key_is_hidden_as_written_and_as_decoded(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """httpx writes the address its own way (a space as %20): neither the text as
    written in base_url, nor the decoded key, nor httpx's form is logged."""
    written = "pq%2Fkey+with%7Cbars|and spaces-6e1a"
    with caplog.at_level(logging.INFO):
        _, config = await one_request(f"apikey={written}")
    [record] = [r for r in caplog.records if r.name == "httpx"]
    assert "?apikey=*** " in record.getMessage(), record.getMessage()
    assert "pq/key with|bars|and spaces-6e1a" in query_secrets(config.base_url or "")


@pytest.mark.parametrize(
    "query",
    [
        "api-version=2024-10-21&deployment=gpt-4o-mini&region=westeurope",
        # a secret's word inside another word, or before the word that says what it is
        "tokenizer=meta-llama/Llama-3.1-8B",
        "keyspace=production",
        "authority=login.example.com",
        "auth_version=2024-10-21",
        "authVersion=2024-10-21",
        "key_id=AKIDEXAMPLE01",
        "tokenType=bearer-token",
        "passage=long-enough-text",
        "codec=opus-48000",
        # a common word that merely ends with a secret's letters (any other name
        # ending with "key" is taken for a key's: wskey, mapkey)
        "monkey=banana-split-42",
        "turkey=sandwich-with-gravy",
        "hockey=stanley-cup-final",
        "donkey=kong-country-2",
        "whiskey=single-malt-12y",
        "jockey=frankie-dettori",
        "MONKEY=banana-split-42",
        "Turkey=sandwich-with-gravy",
        "my_monkey=banana-split-42",
        "MONkey=banana-split-42",
        "TURKEY=sandwich-with-gravy",
        "x-hotkey=ctrl-shift-p-1",
    ],
)
def test_parameters_that_are_no_secret_are_not_taken_for_keys(query: str) -> None:
    """Hiding every long value would garble text that happens to hold one (a date, a
    model's name in every tool result that shows it)."""
    assert query_secrets(f"https://h/v1?{query}") == ()


@pytest.mark.parametrize(
    "name",
    [
        "key",
        "api-key",
        "apiKey",
        "apikey",
        "x-api-key",
        "subscription-key",
        "access_token",
        "accessToken",
        "X-Amz-Security-Token",
        "X-Amz-Signature",
        "X-Amz-Credential",
        "client_secret",
        "password",
        "db_passwd",
        "pwd",
        "auth",
        "x-auth",
        "sig",
        "code",
        "pass",
        "session",
        "sessionid",
        # "key" as a word of its own: after a separator, a digit or a capital, any case
        "KEY",
        "keY",
        "apiKEY",
        "api_key_",
        "API_KEY",
        "api.key",
        "APIKey",
        "x-goog-api-key",
        "Ocp-Apim-Subscription-Key",
        "subscriptionKey",
        "secret_key",
        "private-key",
        "AccountKey",
        "SharedAccessKey",
        "s3key",
        # "key" after a word that makes it a secret's, in one word
        "wskey",
        # a word of the common words' list (monkey, hotkey...) ends it only as a whole
        "common_key",
        "commonKey",
        "X-Daemon-Key",
        "hot_key",
        "hotKey",
        "snapshot_key",
        "turn_key",
        "surveymonkey",
        "WSKEY",
        "skey",
        "pkey",
        "mapkey",
        "bingmapskey",
        "googlekey",
        "openaikey",
        "mykey",
        "merchantkey",
        "developerkey",
        "sitekey",
        "hapikey",
        "oauth_consumer_key",
        "APIKEY",
        "accesskey",
        "secretkey",
        "privatekey",
        "authkey",
        "appkey",
        "sharedaccesskey",
        "subscriptionkey",
        "x-apikey",
        # the other ends, in compounds
        "token",
        "refreshtoken",
        "id_token",
        "X-Auth-Token",
        "clientsecret",
        "dbpassword",
        "oauth",
    ],
)
def test_secret_parameter_names_are_taken_for_keys(name: str) -> None:
    assert query_secrets(f"https://h/v1?region=west&{name}=s3cret-value-1234") == (
        "s3cret-value-1234",
    )
    assert query_secrets(f"https://h/v1?{name}=short") == ()  # under 8 characters, as keys


async def test_a_harness_hides_a_query_key_of_its_config_in_tool_results(tmp_path: Path) -> None:
    """The secrets every tool result is cleared of (``Harness.secrets``) hold a key in a
    ``base_url`` of ``models:``, before any model is built."""
    text = "models:\n  proxy:\n    provider: openai-compatible\n"
    text += "    base_url: http://127.0.0.1:9/v1?token=cfg-query-token-5b3d1f7e\n"
    env = {"DSH_LOAD_PLUGINS": ""}
    async with Harness(config=load_config(text=text), env=env, workspace=tmp_path) as harness:
        assert "cfg-query-token-5b3d1f7e" in harness.secrets()
