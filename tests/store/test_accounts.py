"""Users, bearer tokens and provider keys."""

from __future__ import annotations

from tests.store.factories import at, user
from zero_memory.store import Store


def test_a_user_reads_back_as_written(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_user(user("alice", local=True))
    with store.tx() as tx:
        assert tx.get_user("alice") == user("alice", local=True)
        assert tx.get_user("bob") is None


def test_users_are_listed_oldest_first(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_user(user("carol", minutes=2))
        tx.add_user(user("bob", minutes=1))
        tx.add_user(user("alice", minutes=2))
    with store.tx() as tx:
        assert [u.id for u in tx.list_users()] == ["bob", "alice", "carol"]


def test_a_token_is_found_until_revoked(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_user(user("alice"))
        tx.add_token("tok_1", "alice", "hash-1", at(0))
        tx.add_token("tok_2", "alice", "hash-2", at(1))
    with store.tx() as tx:
        assert tx.get_token("tok_1") == ("alice", "hash-1")
        assert tx.get_token("tok_missing") is None
    with store.tx(write=True) as tx:
        assert tx.revoke_tokens("alice", at(5)) == 2
        assert tx.revoke_tokens("alice", at(6)) == 0
    with store.tx() as tx:
        assert tx.get_token("tok_1") is None
        assert tx.get_token("tok_2") is None


def test_a_provider_key_is_replaced_not_duplicated(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_user(user("alice"))
        tx.set_provider_key("alice", "openai", "cipher-1", at(0))
        tx.set_provider_key("alice", "openai", "cipher-2", at(1))
    with store.tx() as tx:
        assert tx.get_provider_key("alice", "openai") == "cipher-2"
        assert tx.get_provider_key("alice", "anthropic") is None
