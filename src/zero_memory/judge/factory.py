"""The judge the settings ask for.

``build_judge(settings)`` is the server's judge; ``build_judge(settings,
api_key=owner_key)`` is the same judge paying with an owner's own provider
key (``zm user key set``; the store keeps it encrypted, see
``zero_memory.crypto``). Building a judge sends nothing: a missing key shows
up as an ``unavailable`` failure on the first call, not as a server that
refuses to start.

A provider's SDK is imported when its judge is first built, not when this
package is: the two SDKs take over a second to import, and most commands
(and offer mode) never need them.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from zero_memory import errors
from zero_memory.judge.base import Judge
from zero_memory.judge.none_provider import NoneJudge
from zero_memory.judge.provider import RetryPolicy
from zero_memory.settings import JUDGE_PROVIDERS, Settings

PROVIDERS = {
    "openai": ("zero_memory.judge.openai_provider", "OpenAIJudge"),
    "anthropic": ("zero_memory.judge.anthropic_provider", "AnthropicJudge"),
}


def provider_class(name: str) -> Callable[..., Judge]:
    """The judge class of a model provider (keyword arguments as ``build_judge`` passes them)."""
    try:
        module, attribute = PROVIDERS[name]
    except KeyError:
        raise errors.validation(f"ZM_JUDGE_PROVIDER: {name!r} is not one of {', '.join(JUDGE_PROVIDERS)}") from None
    cls: Callable[..., Judge] = getattr(import_module(module), attribute)
    return cls


def build_judge(settings: Settings, api_key: str | None = None, *, retry: RetryPolicy | None = None) -> Judge:
    """A judge for ``settings.judge_provider``; ``api_key``, when given, replaces the configured key."""
    if settings.judge_provider == "none":
        return NoneJudge()
    cls = provider_class(settings.judge_provider)
    return cls(
        api_key=api_key or settings.judge_api_key,
        base_url=settings.judge_base_url,
        model=settings.hygiene_model,
        fast_model=settings.hygiene_fast_model,
        extract_model=settings.extract_model,
        timeout_s=settings.judge_timeout_s,
        retry=retry,
    )
