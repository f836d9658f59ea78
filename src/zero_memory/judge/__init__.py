"""The judge: an LLM that answers questions about memories, behind a one-method port.

Import what you use from its modules; this package imports nothing, so a pure
module that needs a verdict type (``zero_memory.domain.verdicts``) never
loads a provider or the test fake.

    judge = build_judge(settings)                   # judge.factory: openai, anthropic or none
    result = judge.ask(PairRequest(a, b, Purpose.SCAN))   # judge.questions.pair
    match result:
        case Judged(answer=v): ...                  # v.verdict, v.confidence, v.rationale
        case Unjudged(): ...                        # offer mode: park as `unjudged`
        case JudgeFailure(kind=k): ...              # no judgement: no action, retry later

The port is ``judge.base``, the shape of a question ``judge.question``, the
questions ``judge.questions``. See docs/judge.md.
"""
