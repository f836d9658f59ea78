"""The shape every judge question shares, and the typing that makes an unknown question impossible."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import zero_memory.judge.questions as questions

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = ("purpose", "tier", "prompt", "parse", "fake_answer")


def question_classes(module_name: str) -> list[type]:
    module = importlib.import_module(f"{questions.__name__}.{module_name}")
    return [
        cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == module.__name__ and all(hasattr(cls, m) or m == "purpose" for m in MEMBERS)
    ]


def test_each_question_module_holds_one_question_and_its_instructions() -> None:
    names = [info.name for info in pkgutil.iter_modules(questions.__path__)]
    assert {"pair", "portability", "extraction", "loop_closure"} <= set(names)
    for name in names:
        found = question_classes(name)
        assert len(found) == 1, (name, found)
        assert "purpose" in found[0].__dataclass_fields__, name
        assert (Path(questions.__path__[0]) / f"{name}_prompt.txt").is_file(), name


def test_mypy_refuses_what_is_not_a_question_and_types_each_answer(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        textwrap.dedent(
            """
            from zero_memory.domain.verdicts import HygieneVerdict, PortabilityVerdict
            from zero_memory.judge.base import Judge, Result
            from zero_memory.judge.prompt import JudgedMemory
            from zero_memory.judge.questions.pair import PairRequest

            def use(judge: Judge, memory: JudgedMemory) -> None:
                fine: Result[HygieneVerdict] = judge.ask(PairRequest(memory, memory))
                wrong: Result[PortabilityVerdict] = judge.ask(PairRequest(memory, memory))  # line 9
                judge.ask(memory)  # line 10
                judge.ask("how do these relate?")  # line 11
            """
        ),
        encoding="utf-8",
    )
    # From the repository root, where pyproject.toml's mypy_path finds the package.
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", str(probe), "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    out = checked.stdout
    assert checked.returncode == 1, out + checked.stderr
    lines = sorted(int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line)
    assert lines == [9, 10, 11], out
