"""Definitions by qualified name, in Python (ast) and through tree-sitter's grammars."""

from __future__ import annotations

import pytest

from zero_memory.workspace import symbols

PYTHON = '''import os

LIMIT = 30


@cached
def retry(attempts):
    """Back off exponentially."""
    return min(2**attempts, LIMIT)


class Client:
    def flush(self):
        pass

    async def close(self):
        pass
'''

TYPESCRIPT = """import { x } from "y";

export function retry(attempts: number): number {
  return Math.min(2 ** attempts, LIMIT);
}

export class Client {
  flush(): void {}
  private close(reason: string) {}
}

export const LIMIT = 30;
const handler = () => 1;
interface Options { attempts: number }
"""

GO = """package net

const Limit = 30

func Retry(attempts int) int { return attempts }

type Client struct{}
"""

RUST = """const LIMIT: u32 = 30;

pub fn retry(attempts: u32) -> u32 { attempts }

struct Client;
"""


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        (
            "net/client.py",
            PYTHON,
            {
                "LIMIT": "constant",
                "retry": "function",
                "Client": "class",
                "Client.flush": "method",
                "Client.close": "method",
            },
        ),
        (
            "src/client.ts",
            TYPESCRIPT,
            {
                "retry": "function",
                "Client": "class",
                "Client.flush": "method",
                "Client.close": "method",
                "LIMIT": "constant",
                "handler": "function",
                "Options": "interface",
            },
        ),
        ("net/client.go", GO, {"Limit": "constant", "Retry": "function", "Client": "type"}),
        ("src/lib.rs", RUST, {"LIMIT": "constant", "retry": "function", "Client": "class"}),
    ],
)
def test_each_language_names_its_definitions(path: str, source: str, expected: dict[str, str]) -> None:
    found = symbols.regions(path, source)
    assert {name: found[name].kind for name in expected} == expected


def test_a_region_is_the_definitions_source_with_its_decorators() -> None:
    region = symbols.find("client.py", PYTHON, "retry")
    assert region is not None
    assert region.text.splitlines()[0] == "@cached"
    assert region.text.splitlines()[-1].strip() == "return min(2**attempts, LIMIT)"
    ts = symbols.find("client.ts", TYPESCRIPT, "retry")
    assert ts is not None  # whole lines: the export keyword is part of what the region's hash covers
    assert ts.text.startswith("export function retry(attempts: number)") and ts.text.endswith("}")
    assert "class Client" not in ts.text


def test_a_bare_method_name_finds_its_one_definition() -> None:
    region = symbols.find("client.ts", TYPESCRIPT, "flush")
    assert region is not None and region.name == "Client.flush"
    both = PYTHON + "\n\nclass Other:\n    def flush(self):\n        pass\n"
    assert symbols.find("client.py", both, "flush") is None  # two: ambiguous
    assert symbols.find("client.py", both, "Other.flush") is not None


def test_unknown_languages_and_broken_files_have_no_symbols() -> None:
    assert symbols.regions("README.md", "# retry()") == {}
    assert symbols.regions("broken.py", "def (:\n") == {}
    assert not symbols.supported("notes.txt") and symbols.supported("a/b.tsx")
