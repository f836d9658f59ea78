from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.judge.conftest import FAST, PAIR, PROVISIONAL_PAIR, STRONG, settings_for
from zero_memory import errors
from zero_memory.judge.anthropic_provider import AnthropicJudge
from zero_memory.judge.base import Judge, Unjudged
from zero_memory.judge.factory import build_judge
from zero_memory.judge.none_provider import NoneJudge
from zero_memory.judge.openai_provider import OpenAIJudge
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.questions.portability import PortabilityRequest
from zero_memory.settings import DEFAULT_MODELS, Settings

PORTABILITY = PortabilityRequest(JudgedMemory("fact", 1, "x"))


@pytest.mark.parametrize(("name", "cls"), [("openai", OpenAIJudge), ("anthropic", AnthropicJudge), ("none", NoneJudge)])
def test_the_provider_setting_picks_the_implementation(tmp_path: Path, name: str, cls: type) -> None:
    judge = build_judge(settings_for(name, "http://127.0.0.1:9", tmp_path))
    assert isinstance(judge, cls)
    assert isinstance(judge, Judge)
    assert judge.provider == name


@pytest.mark.parametrize("name", ["openai", "anthropic"])
def test_the_two_paths_use_the_two_configured_models(tmp_path: Path, name: str) -> None:
    judge = build_judge(settings_for(name, "http://127.0.0.1:9", tmp_path))
    assert judge.model_for(PAIR) == STRONG
    assert judge.model_for(PROVISIONAL_PAIR) == FAST
    assert judge.model_for(PORTABILITY) == STRONG


@pytest.mark.parametrize("name", ["openai", "anthropic"])
def test_each_provider_defaults_to_its_own_strong_and_fast_models(tmp_path: Path, name: str) -> None:
    settings = Settings.from_environ({"ZM_HOME": str(tmp_path), "ZM_JUDGE_PROVIDER": name})
    judge = build_judge(settings)
    assert (judge.model_for(PAIR), judge.model_for(PROVISIONAL_PAIR)) == DEFAULT_MODELS[name]


def test_offer_mode_leaves_every_request_unjudged(tmp_path: Path) -> None:
    judge = build_judge(Settings.from_environ({"ZM_HOME": str(tmp_path)}))
    assert judge.provider == "none"
    assert judge.ask(PAIR) == Unjudged()
    assert judge.ask(PROVISIONAL_PAIR) == Unjudged()
    assert judge.ask(PORTABILITY) == Unjudged()
    assert judge.model_for(PAIR) == "none"


def test_an_unknown_provider_is_refused_with_the_list(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, database_url="sqlite://", judge_provider="gemini")
    with pytest.raises(errors.ZMError) as caught:
        build_judge(settings)
    assert caught.value.code is errors.Code.VALIDATION_FAILED
    assert "openai" in str(caught.value)


def test_building_a_judge_sends_nothing_and_reads_no_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys and URLs come from Settings only; the SDKs' own environment fallbacks stay unused."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/elsewhere")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-environment")
    for name in ("openai", "anthropic"):
        settings = settings_for(name, "", tmp_path, ZM_JUDGE_API_KEY="")
        failure = build_judge(settings).ask(PAIR)
        assert failure.outcome == "unavailable", name


def test_importing_the_judge_package_leaves_the_provider_sdks_unloaded() -> None:
    """`zm --help` and offer mode should not pay a second for SDKs they never use."""
    code = "import sys, zero_memory.judge; print(sorted({'openai', 'anthropic'} & set(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
