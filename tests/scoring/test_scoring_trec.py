"""Cross-check recall@k and MRR against trec_eval (pytrec_eval) on randomized cases and runs.

The mapping to TREC: a required evidence entry is a relevant document (relevance 1); a
retrieved item is a retrieved document whose id is the file (document-level gold) or
"file#page" (page-level gold). trec_eval ranks by score descending, then docno descending,
so every run gets distinct scores that follow our rank order; and trec_eval counts a
relevant document once however often it is retrieved, so runs here never repeat a document
(what our recall does with repeats is tested by hand in test_scoring_retrieval.py).
"""

from __future__ import annotations

import random

import pytest

from pytest_ragv2.gold.schema import Case, Evidence
from pytest_ragv2.scoring.retrieval import score_retrieval
from pytest_ragv2.systems.outputs import RetrievedItem

pytrec_eval = pytest.importorskip("pytrec_eval")

KS = (1, 3, 5, 10)
MEASURES = {"recall.1,3,5,10", "recip_rank"}
FILES = [f"doc{i:02d}.pdf" for i in range(25)]
PAGES = range(1, 5)

Document = tuple[str, int | None]  # (filename, page or None for document-level)


def docno(document: Document) -> str:
    filename, page = document
    return filename if page is None else f"{filename}#{page}"


def random_trial(
    rng: random.Random, page_level: bool
) -> tuple[Case, list[RetrievedItem], dict[str, int], dict[str, float]]:
    universe: list[Document] = [
        (name, page if page_level else None) for name in FILES for page in PAGES
    ]
    if not page_level:
        universe = sorted(set(universe))
    relevant = rng.sample(universe, rng.randint(1, 4))
    # Bias runs towards relevant documents so every rank position gets exercised.
    pool = list(dict.fromkeys(relevant + rng.sample(universe, 8)))
    others = [document for document in universe if document not in pool]
    candidates = pool + rng.sample(others, 6)
    rng.shuffle(candidates)
    run = candidates[: rng.randint(0, 12)]

    case = Case(
        id="R",
        category="semantic",
        prompt_en="q",
        required_evidence=[Evidence(filename=name, page=page) for name, page in relevant],
    )
    items = [
        RetrievedItem(rank=position, text=f"text {position}", filename=name, page=page)
        for position, (name, page) in enumerate(run, start=1)
    ]
    rng.shuffle(items)  # the scorer must sort by rank
    qrel = {docno(document): 1 for document in relevant}
    scores = {docno(document): float(100 - position) for position, document in enumerate(run)}
    return case, items, qrel, scores


@pytest.mark.parametrize("page_level", [False, True], ids=["document", "page"])
def test_recall_and_mrr_equal_trec_eval(page_level: bool) -> None:
    rng = random.Random(20240611 + page_level)
    cases: dict[str, tuple[Case, list[RetrievedItem]]] = {}
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, float]] = {}
    for index in range(300):
        qid = f"q{index:03d}"
        case, items, qrels[qid], runs[qid] = random_trial(rng, page_level)
        cases[qid] = (case, items)

    results = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(runs)

    assert set(results) == set(cases)
    nonzero_mrr = 0
    recall_values: set[float] = set()
    for qid, (case, items) in cases.items():
        ours = score_retrieval(case, items, ks=KS)
        theirs = results[qid]
        for k in KS:
            assert ours.recall[k] == pytest.approx(theirs[f"recall_{k}"], abs=1e-9), (qid, k)
        assert ours.mrr == pytest.approx(theirs["recip_rank"], abs=1e-9), qid
        nonzero_mrr += ours.mrr > 0
        recall_values.add(round(ours.recall[5], 6))
    # The generator must exercise hits at various ranks, partial recall and complete misses.
    assert 100 < nonzero_mrr < 300
    assert {0.0, 0.25, 0.333333, 0.5, 0.666667, 1.0} <= recall_values
