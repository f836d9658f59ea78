"""Owners' provider keys: stored as given (ciphertext), one per user and provider, forgotten on request."""

from __future__ import annotations

from tests.store.factories import at, user
from zero_memory.store import Store


def test_a_provider_key_is_forgotten_for_that_provider_only(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_user(user("alice"))
        tx.set_provider_key("alice", "openai", "cipher-openai", at(0))
        tx.set_provider_key("alice", "anthropic", "cipher-anthropic", at(0))
    with store.tx(write=True) as tx:
        assert tx.delete_provider_key("alice", "openai") is True
    with store.tx() as tx:
        assert tx.get_provider_key("alice", "openai") is None
        assert tx.get_provider_key("alice", "anthropic") == "cipher-anthropic"


def test_forgetting_a_key_that_is_not_there_says_so(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_user(user("alice"))
        assert tx.delete_provider_key("alice", "openai") is False
        assert tx.delete_provider_key("nobody", "openai") is False


def test_one_user_s_key_is_not_another_s(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_user(user("alice"))
        tx.add_user(user("bob", minutes=1))
        tx.set_provider_key("alice", "openai", "cipher-alice", at(0))
        tx.set_provider_key("bob", "openai", "cipher-bob", at(1))
        assert tx.delete_provider_key("bob", "openai") is True
    with store.tx() as tx:
        assert tx.get_provider_key("alice", "openai") == "cipher-alice"
        assert tx.get_provider_key("bob", "openai") is None


def test_a_key_can_be_stored_again_after_it_was_forgotten(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_user(user("alice"))
        tx.set_provider_key("alice", "openai", "cipher-1", at(0))
        tx.delete_provider_key("alice", "openai")
        tx.set_provider_key("alice", "openai", "cipher-2", at(1))
    with store.tx() as tx:
        assert tx.get_provider_key("alice", "openai") == "cipher-2"
