"""The judge the settings ask for.

``build_judge(settings)`` is the server's judge; ``build_judge(settings,
api_key=owner_key)`` is the same judge paying with an owner's own provider
key (``zm user key set``; the store keeps it encrypted, see
``zero_memory.crypto``). Building a judge sends nothing: a missing key shows
up as an ``unavailable`` failure on the first call, not as a server that
refuses to start.
"""

from __future__ import annotations

from zero_memory import errors
from zero_memory.judge.anthropic_provider import AnthropicJudge
from zero_memory.judge.base import Judge
from zero_memory.judge.none_provider import NoneJudge
from zero_memory.judge.openai_provider import OpenAIJudge
from zero_memory.judge.provider import RetryPolicy
from zero_memory.settings import JUDGE_PROVIDERS, Settings

PROVIDERS = {"openai": OpenAIJudge, "anthropic": AnthropicJudge}


def build_judge(settings: Settings, api_key: str | None = None, *, retry: RetryPolicy | None = None) -> Judge:
    """A judge for ``settings.judge_provider``; ``api_key``, when given, replaces the configured key."""
    provider = settings.judge_provider
    if provider == "none":
        return NoneJudge()
    cls = PROVIDERS.get(provider)
    if cls is None:
        raise errors.validation(f"ZM_JUDGE_PROVIDER: {provider!r} is not one of {', '.join(JUDGE_PROVIDERS)}")
    return cls(
        api_key=api_key or settings.judge_api_key,
        base_url=settings.judge_base_url,
        model=settings.hygiene_model,
        fast_model=settings.hygiene_fast_model,
        timeout_s=settings.judge_timeout_s,
        retry=retry,
    )
