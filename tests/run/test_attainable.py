"""The attainable ceiling: a perfect ranker over what a system stores."""

from __future__ import annotations

import pytest

from pytest_ragv2.gold.schema import Evidence
from pytest_ragv2.run.attainable import CaseGold, best_step, ceiling
from pytest_ragv2.systems.outputs import RetrievedItem

ROW = Evidence(file_id="fin", filename="fin.xlsx", table="CA", row=4, anchor="T4 | 1 689 | 33")
PAGE = Evidence(file_id="sec", filename="sec.pdf", page=2, anchor="RPO de 15 minutes")
SECTION = Evidence(file_id="faq", filename="faq.md", section="Astreinte", anchor="+33 2 85 52")


def chunk(file_id: str, text: str, page: int | None = None) -> RetrievedItem:
    return RetrievedItem(rank=1, text=text, file_id=file_id, filename=None, page=page)


STORED = [
    chunk("fin", "Trimestre CA\nT3 1456 21\nT4 1689 33"),  # unstructured's XLSX text
    chunk("sec", "Le RPO de 15 minutes", page=2),
    chunk("faq", "Support : du lundi au vendredi"),  # the loader lost the on-call section
]


def test_best_step_is_the_finest_granularity_any_chunk_meets() -> None:
    assert best_step(ROW, STORED) == 4
    assert best_step(PAGE, STORED) == 4
    assert best_step(SECTION, STORED) == 2  # the file (page: none given), not the section
    assert best_step(PAGE, [chunk("sec", "Le RPO de 15 minutes", page=3)]) == 1
    assert best_step(PAGE, []) == 0


def test_the_ceiling_is_a_mean_of_case_ceilings_and_names_what_cannot_be_met() -> None:
    cases = [
        CaseGold("C1", "technical_table", "en", (ROW, PAGE)),
        CaseGold("C2", "semantic", "en", (SECTION, PAGE)),
        CaseGold("C2", "semantic", "de", (PAGE,)),
        CaseGold("C3", "safe_no_answer", "en", ()),  # no evidence: no ceiling
    ]
    found = ceiling(cases, STORED)
    assert found.by_case == {"C1": 1.0, "C2": pytest.approx(0.75)}  # (0.5 + 1.0) / 2
    assert found.value == pytest.approx(0.875)
    assert found.by_category == {"semantic": pytest.approx(0.75), "technical_table": 1.0}
    assert found.unattainable == ["C2: faq.md § Astreinte anchor '+33 2 85 52' — best: document"]
    assert found.chunks == 3
