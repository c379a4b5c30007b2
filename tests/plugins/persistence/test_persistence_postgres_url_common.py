"""A PostgreSQL password that is short, or also a user, database, host, port or scheme
name, is hidden where it stands, and nowhere else.

``scrub``/``hide_password`` replaced every occurrence of the password in the text: the
everyday ``postgres:postgres`` turned the URL into ``***ql://***:***@localhost:5432/***``
and libpq's ``database "postgres" does not exist`` into ``database "***"``; a password
``s`` made ``ho***t=db1``. Now the password is hidden by its place (a URL's userinfo, a
``password=`` value, a query parameter), and elsewhere in a message only as a whole
token, and only when it is not such a common word.
"""

from __future__ import annotations

import pytest

from dsh_persistence._postgres_url import hide_password, scrub

pytestmark = pytest.mark.plugins("persistence")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://postgres:postgres@localhost:5432/postgres",
            "postgresql://postgres:***@localhost:5432/postgres",
        ),
        ("postgresql://app:5432@db1:5432/app", "postgresql://app:***@db1:5432/app"),
        ("postgresql://app:db1@db1/app?password=db1", "postgresql://app:***@db1/app?password=***"),
        (
            "host=db1 port=5432 user=dsh password=s dbname=sessions",
            "host=db1 port=5432 user=dsh password=*** dbname=sessions",
        ),
        ("host=h user=postgresql password=postgresql", "host=h user=postgresql password=***"),
        ("dbname='postgresql://me@h/db?password=db'", "dbname='postgresql://me@h/db?password=***'"),
        (
            "postgresql://me:pw@h/db?application_name=a@b",
            "postgresql://me:***@h/db?application_name=a@b",
        ),
        # libpq percent-decodes a query's keys too: these are passwords
        ("postgresql://u@h/db?pass%77ord=s3cr3tpw", "postgresql://u@h/db?pass%77ord=***"),
        ("postgresql://u@h/db?%73slPassword=k3y&x=1", "postgresql://u@h/db?%73slPassword=***&x=1"),
        ("postgresql://u@h/db?passwords=not-one", "postgresql://u@h/db?passwords=not-one"),
    ],
)
def test_a_common_or_short_password_is_hidden_only_where_it_stands(url: str, shown: str) -> None:
    assert hide_password(url) == shown
    assert scrub(f"cannot connect to {url}: refused", url) == (
        f"cannot connect to {shown}: refused"
    )


def test_libpqs_words_are_kept_when_the_password_is_a_common_one() -> None:
    url = "postgresql://postgres:postgres@localhost:5432/postgres"
    message = (
        'connection to server at "localhost" (127.0.0.1), port 5432 failed: FATAL:  '
        'database "postgres" does not exist'
    )
    assert scrub(message, url) == message
    assert scrub("host=db1 user=dsh: no", "host=db1 user=dsh password=s") == (
        "host=db1 user=dsh: no"
    )


def test_a_distinct_password_is_hidden_as_a_whole_token_wherever_it_stands() -> None:
    url = "postgresql://app:Tr0ub4dor-long@db1/app"
    said = 'invalid value "Tr0ub4dor-long" for x; Tr0ub4dor-longer and xTr0ub4dor-long kept'
    assert (
        scrub(said, url) == 'invalid value "***" for x; Tr0ub4dor-longer and xTr0ub4dor-long kept'
    )


def test_distinct_passwords_leave_out_the_common_and_the_short() -> None:
    """What may be hidden in any text (``Harness.add_secrets``) without mangling it."""
    from dsh_persistence._postgres_url import distinct_passwords

    assert distinct_passwords("postgresql://postgres:postgres@localhost/db") == []
    assert distinct_passwords("postgresql://me:localhost@localhost/db") == []
    assert distinct_passwords("host=h user=me password=shorty") == []
    assert distinct_passwords("postgresql://me:s3cr%40t-pass@h/db") == [
        "s3cr%40t-pass",
        "s3cr@t-pass",
    ]
