"""Settings are read once from a mapping, with documented defaults and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from zero_memory import errors
from zero_memory.settings import Settings


def test_defaults_live_in_the_home_directory() -> None:
    settings = Settings.from_environ({"ZM_HOME": "/data/zm"})
    assert settings.home == Path("/data/zm")
    assert settings.database_url == "sqlite:////data/zm/zm.db"
    assert settings.judge_provider == "none"
    assert settings.auto_create_projects is True
    assert settings.hygiene_on_write is False
    assert settings.scan_interval_hours is None
    assert settings.judge_timeout_s == 60


def test_each_provider_gets_its_own_default_models() -> None:
    openai = Settings.from_environ({"ZM_JUDGE_PROVIDER": "openai", "OPENAI_API_KEY": "k"})
    assert (openai.hygiene_model, openai.hygiene_fast_model) == ("gpt-4.1", "gpt-4.1-mini")
    assert openai.judge_api_key == "k"
    custom = Settings.from_environ({"ZM_JUDGE_PROVIDER": "openai", "ZM_HYGIENE_MODEL": "qwen3:32b"})
    assert custom.hygiene_model == "qwen3:32b" and custom.hygiene_fast_model == "gpt-4.1-mini"


def test_extraction_runs_on_the_fast_model_unless_it_has_its_own() -> None:
    fast = Settings.from_environ({"ZM_JUDGE_PROVIDER": "openai", "ZM_HYGIENE_FAST_MODEL": "small-1"})
    assert fast.extract_model == "small-1"
    own = Settings.from_environ({"ZM_JUDGE_PROVIDER": "anthropic", "ZM_EXTRACT_MODEL": "extractor-2"})
    assert (own.extract_model, own.hygiene_fast_model) == ("extractor-2", "claude-haiku-4-5")


def test_capture_limits_have_defaults_and_read_their_variables() -> None:
    default = Settings.from_environ({}).capture
    assert (default.daily_tokens, default.retry_after_s, default.max_chunk_chars) == (200_000, 60.0, 48_000)
    tuned = Settings.from_environ({"ZM_EXTRACT_DAILY_TOKENS": "1_000_000", "ZM_EXTRACT_RETRY_SECONDS": "5"}).capture
    assert (tuned.daily_tokens, tuned.retry_after_s) == (1_000_000, 5.0)
    assert Settings.from_environ({"ZM_EXTRACT_DAILY_TOKENS": "0"}).capture.daily_tokens == 0


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"ZM_EXTRACT_DAILY_TOKENS": "lots"}, "ZM_EXTRACT_DAILY_TOKENS"),
        ({"ZM_EXTRACT_DAILY_TOKENS": "-5"}, "ZM_EXTRACT_DAILY_TOKENS"),
        ({"ZM_EXTRACT_RETRY_SECONDS": "0"}, "ZM_EXTRACT_RETRY_SECONDS"),
        ({"ZM_JUDGE_PROVIDER": "gemini"}, "ZM_JUDGE_PROVIDER"),
        ({"ZM_HYGIENE_ON_WRITE": "maybe"}, "ZM_HYGIENE_ON_WRITE"),
        ({"ZM_QUERY_PROCESS": "auto"}, "ZM_QUERY_PROCESS"),
        ({"ZM_JUDGE_TIMEOUT_S": "soon"}, "ZM_JUDGE_TIMEOUT_S"),
        ({"ZM_HYGIENE_SCAN_INTERVAL_HOURS": "-1"}, "ZM_HYGIENE_SCAN_INTERVAL_HOURS"),
    ],
)
def test_bad_values_are_refused_by_name(environ: dict[str, str], message: str) -> None:
    with pytest.raises(errors.ZMError, match=f"^validation_failed: {message}"):
        Settings.from_environ(environ)


def test_the_query_process_is_on_unless_turned_off() -> None:
    assert Settings.from_environ({}).query_process
    assert not Settings.from_environ({"ZM_QUERY_PROCESS": "0"}).query_process


def test_the_api_key_never_shows_in_the_repr() -> None:
    settings = Settings.from_environ({"ZM_JUDGE_PROVIDER": "openai", "ZM_JUDGE_API_KEY": "sk-very-secret"})
    assert "sk-very-secret" not in repr(settings)


def test_the_public_url_is_an_origin_and_oauth_lifetimes_have_defaults() -> None:
    default = Settings.from_environ({})
    assert default.public_url is None
    assert (default.oauth.access_token_ttl_s, default.oauth.refresh_token_ttl_s, default.oauth.code_ttl_s) == (
        3600,
        30 * 86_400,
        300,
    )
    proxied = Settings.from_environ(
        {"ZM_PUBLIC_URL": " https://ZM.Example.com:8443/ ", "ZM_OAUTH_ACCESS_TOKEN_TTL_S": "600"}
    )
    assert proxied.public_url == "https://zm.example.com:8443" and proxied.oauth.access_token_ttl_s == 600
    assert Settings.from_environ({"ZM_PUBLIC_URL": "http://127.0.0.1:8787"}).public_url == "http://127.0.0.1:8787"


@pytest.mark.parametrize(
    ("public_url", "message"),
    [
        ("http://zm.example.com", "expected the https:// address"),
        ("zm.example.com", "expected the https:// address"),
        ("ftp://zm.example.com", "expected the https:// address"),
        ("https://zm.example.com/memory", "give the origin only"),
        ("https://zm.example.com/?x=1", "give the origin only"),
        ("https://user:pw@zm.example.com", "give the origin only"),
    ],
)
def test_a_public_url_that_cannot_be_an_issuer_is_refused(public_url: str, message: str) -> None:
    with pytest.raises(errors.ZMError, match=f"^validation_failed: ZM_PUBLIC_URL: {message}"):
        Settings.from_environ({"ZM_PUBLIC_URL": public_url})


@pytest.mark.parametrize("name", ["ZM_OAUTH_ACCESS_TOKEN_TTL_S", "ZM_OAUTH_REFRESH_TOKEN_TTL_S", "ZM_OAUTH_CODE_TTL_S"])
def test_oauth_lifetimes_must_be_positive_numbers(name: str) -> None:
    for bad in ("soon", "0", "-5"):
        with pytest.raises(errors.ZMError, match=f"^validation_failed: {name}"):
            Settings.from_environ({name: bad})


def test_the_similarity_floors_follow_the_embedding_model() -> None:
    default = Settings.from_environ({}).hygiene
    e5 = Settings.from_environ({"ZM_EMBEDDING_MODEL": "e5-small"}).hygiene
    assert (default.sweep_similarity, default.dedup_similarity) == (0.48, 0.89)
    assert (e5.sweep_similarity, e5.dedup_similarity, e5.loop_closure_similarity) == (0.86, 0.98, 0.86)
    # What does not depend on the model is the default's.
    assert e5.auto_confidence == default.auto_confidence and e5.recall_similarity == default.recall_similarity
    assert Settings.from_environ({"ZM_EMBEDDING_MODEL": "hash:512"}).hygiene == default
