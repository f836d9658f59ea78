"""An owner's own provider key: encrypted at rest with ZM_SECRET_KEY, used for their calls only."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.judge.conftest import OWNER_KEY, PAIR, SERVER_KEY
from zero_memory import crypto, errors
from zero_memory.judge.base import Judge, Judged

SECRET = crypto.generate_secret_key()


def test_a_key_survives_the_round_trip() -> None:
    assert crypto.decrypt(SECRET, crypto.encrypt(SECRET, OWNER_KEY)) == OWNER_KEY


def test_the_stored_form_does_not_contain_the_key() -> None:
    token = crypto.encrypt(SECRET, OWNER_KEY)
    assert OWNER_KEY not in token
    assert OWNER_KEY[-8:] not in token
    assert token.isascii()


def test_encrypting_twice_gives_different_tokens() -> None:
    assert crypto.encrypt(SECRET, OWNER_KEY) != crypto.encrypt(SECRET, OWNER_KEY)


def test_another_secret_key_cannot_decrypt_and_says_what_to_do() -> None:
    token = crypto.encrypt(SECRET, OWNER_KEY)
    other = crypto.generate_secret_key()
    with pytest.raises(errors.ZMError) as caught:
        crypto.decrypt(other, token)
    message = str(caught.value)
    assert caught.value.code is errors.Code.UNAVAILABLE
    assert "zm user key set" in message
    for secret in (OWNER_KEY, SECRET, other, token):
        assert secret not in message


def test_a_tampered_token_does_not_decrypt() -> None:
    token = crypto.encrypt(SECRET, OWNER_KEY)
    tampered = token[:-6] + ("A" if token[-6] != "A" else "B") + token[-5:]
    with pytest.raises(errors.ZMError):
        crypto.decrypt(SECRET, tampered)
    with pytest.raises(errors.ZMError):
        crypto.decrypt(SECRET, "not a token ✗")


def test_without_a_secret_key_nothing_is_stored_or_read() -> None:
    with pytest.raises(errors.ZMError) as caught:
        crypto.encrypt(None, OWNER_KEY)
    assert "ZM_SECRET_KEY" in str(caught.value)
    with pytest.raises(errors.ZMError):
        crypto.decrypt("", "token")


def test_a_short_secret_key_is_refused() -> None:
    with pytest.raises(errors.ZMError) as caught:
        crypto.encrypt("hunter2", OWNER_KEY)
    assert caught.value.code is errors.Code.VALIDATION_FAILED
    assert "hunter2" not in str(caught.value)


def test_an_empty_key_is_not_stored() -> None:
    with pytest.raises(errors.ZMError):
        crypto.encrypt(SECRET, "")


def test_generated_secret_keys_are_long_and_unique() -> None:
    keys = {crypto.generate_secret_key() for _ in range(20)}
    assert len(keys) == 20
    assert all(len(key) >= 40 for key in keys)


def test_any_long_string_works_as_a_secret_key() -> None:
    secret = "correct horse battery staple, ünïcode too"
    assert crypto.decrypt(secret, crypto.encrypt(secret, OWNER_KEY)) == OWNER_KEY


def test_an_owner_s_stored_key_pays_for_their_calls_and_only_theirs(
    openai_server: FakeOpenAIServer, openai_judge: Callable[..., Judge]
) -> None:
    stored = crypto.encrypt(SECRET, OWNER_KEY)  # what `zm user key set` leaves in the store
    openai_server.enqueue(openai_server.verdict(), openai_server.verdict())
    owners_judge = openai_judge(api_key=crypto.decrypt(SECRET, stored))
    servers_judge = openai_judge()
    assert isinstance(owners_judge.ask(PAIR), Judged)
    assert isinstance(servers_judge.ask(PAIR), Judged)
    assert [r.api_key for r in openai_server.requests] == [OWNER_KEY, SERVER_KEY]
