"""The generated conversation set behind benchmarks/conversations.py is well-formed (no model needed)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from conversation_set import Conversation, conversation, conversations

CATEGORIES = {"single-hop", "multi-hop", "temporal", "open-domain"}


def test_the_set_is_the_same_for_a_seed() -> None:
    assert conversation(7) == conversation(7)
    assert conversation(7) != conversation(8)


def test_every_question_points_at_its_evidence_turns() -> None:
    for convo in conversations("dev", 3):
        assert {q.category for q in convo.questions} == CATEGORIES
        for question in convo.questions:
            assert question.evidence
            assert all(0 <= i < len(convo.turns) for i in question.evidence)
        multi = [q for q in convo.questions if q.category == "multi-hop"]
        assert all(len({convo.session_of(i) for i in q.evidence}) == 2 for q in multi)


def test_turns_are_distinct_and_span_six_to_ten_months_of_sessions() -> None:
    for convo in conversations("held-out", 3):
        contents = [t.content for t in convo.turns]
        assert len(set(contents)) == len(contents)  # a store keeps an exact repeat once
        span = convo.turns[-1].at - convo.turns[0].at
        assert 170 <= span.days <= 310
        assert [t.at for t in convo.turns] == sorted(t.at for t in convo.turns)
        assert len({t.session for t in convo.turns}) >= 14


def test_the_dev_split_and_the_held_out_split_share_no_conversation() -> None:
    def texts(convos: list[Conversation]) -> set[str]:
        return {t.content for c in convos for t in c.turns if "adopted" in t.content}

    assert not texts(conversations("dev", 4)) & texts(conversations("held-out", 8))
