"""The key-name rule (``dsh._secrets.is_secret_name``: a ``base_url``'s query
parameters, the names refused as agent options) takes a name with a number or a
separator after its secret's word (``apikey2``, ``api_key_2``, ``token-1``), and the
names ``jwt``, ``bearer`` (as an end: ``id_jwt``) and ``access``, for a secret's.

Before: ``?jwt=...&apikey2=...`` were shown whole in httpx's INFO record of each
request, and in every error quoting the address."""

from __future__ import annotations

import pytest

from dsh._secrets import is_secret_name, query_secrets

VALUE = "eyJhbGciOiJIUzI1NiJ9.payload-0123"


@pytest.mark.parametrize(
    "name",
    ["apikey2", "api_key_2", "API_KEY-3", "token1", "token_", "secret-2", "sig2", "jwt",
     "id_jwt", "idJwt", "JWT", "bearer", "Bearer", "x-bearer", "access", "Access", "access2"],
)  # fmt: skip
def test_a_name_with_a_number_after_its_word_or_a_common_name_is_a_secrets(name: str) -> None:
    assert is_secret_name(name)
    assert query_secrets(f"https://h/v1?{name}={VALUE}&v=1") == (VALUE,)


@pytest.mark.parametrize(
    "name", ["v2", "page2", "monkey2", "access_level", "accessible", "jwt_issuer", "model3"]
)
def test_other_names_with_numbers_are_not(name: str) -> None:
    assert not is_secret_name(name)
    assert query_secrets(f"https://h/v1?{name}={VALUE}") == ()
