"""``zm judge``: measure the configured judge before trusting it with a corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from zero_memory.cli.common import JsonOption, console, handles_errors, print_json, progress, settings
from zero_memory.judge.evaluation import load_pairs, run_eval
from zero_memory.judge.factory import build_judge

group = typer.Typer(help="The LLM judge: measure a model on labelled pairs.", no_args_is_help=True)


def register(cli: typer.Typer) -> None:
    cli.add_typer(group, name="judge")


@group.command("eval")
@handles_errors
def eval_pairs(
    pairs: Annotated[
        Path, typer.Argument(help="Labelled pairs, one JSON object a line (see docs/judge.md).", show_default=False)
    ],
    provisional: Annotated[
        bool,
        typer.Option("--provisional", help="Judge on the fast path (ZM_HYGIENE_FAST_MODEL), as rank-0 pairs are."),
    ] = False,
    price_in: Annotated[
        float | None,
        typer.Option("--price-in", min=0.0, help="Dollars per million input tokens, to estimate the cost."),
    ] = None,
    price_out: Annotated[
        float | None,
        typer.Option("--price-out", min=0.0, help="Dollars per million output tokens, to estimate the cost."),
    ] = None,
    json_out: bool = JsonOption,
) -> None:
    """Judge every labelled pair once with the configured model and report how it did.

    Prints the confusion matrix, precision and recall per verdict, the
    false-supersede rate, failures, tokens and time. Uses the server's key
    (ZM_JUDGE_API_KEY); nothing is written to the usage ledger.
    """
    # Settings only: the eval needs neither the database nor the embedding model.
    judge = build_judge(settings())
    labelled = load_pairs(pairs)
    with progress(len(labelled), f"judging with {judge.provider}") as advance:
        report = run_eval(judge, labelled, provisional=provisional, on_progress=lambda done, total: advance(1))
    cost = None
    if price_in is not None or price_out is not None:
        cost = report.estimated_cost(price_in or 0.0, price_out or 0.0)
    if json_out:
        print_json({**report.to_dict(), "estimated_cost_usd": cost})
        return
    console.print(report.renderable())
    if cost is not None:
        console.print(Text(f"estimated cost: ${cost:.4f}", style="bold"))
