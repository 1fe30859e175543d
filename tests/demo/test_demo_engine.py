"""The demo retrieval engine: analysis, V1 (vector only) and V2 (hybrid) on hand-made chunks."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragv2_demo.analysis import analyze, fold
from ragv2_demo.chunks import Chunk
from ragv2_demo.engine import DemoIndex
from ragv2_demo.retrieval_v1 import V1Retriever, VectorIndex
from ragv2_demo.retrieval_v2 import V2Retriever

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "nimbus-analytics"

CHUNKS = [
    Chunk(
        "contrat#0",
        "contrat",
        "contrat.docx",
        "Le prestataire garantit une disponibilité mensuelle du service de 99,7 %, "
        "hors fenêtres de maintenance planifiées.",
        section="5.1 Niveau de service",
    ),
    Chunk(
        "contrat#1",
        "contrat",
        "contrat.docx",
        "En cas de dépassement, un avoir de 5 % de la redevance mensuelle par heure "
        "d'indisponibilité est accordé, plafonné à 30 %.",
        section="5.2 Pénalités",
    ),
    Chunk(
        "contrat#2",
        "contrat",
        "contrat.docx",
        "Le contrat est conclu pour une durée de 36 mois. La résiliation exige un préavis "
        "de 90 jours avant l'échéance.",
        section="8 Durée et résiliation",
    ),
    Chunk(
        "catalogue#0",
        "catalogue",
        "catalogue.pdf",
        "Le compresseur NX-450B délivre 450 bar pour un débit de 32 m3/h.",
        page=3,
    ),
    Chunk(
        "catalogue#1",
        "catalogue",
        "catalogue.pdf",
        "Le compresseur NX-450 délivre 350 bar pour un débit de 25 m3/h, "
        "comme le NX-450 Plus et le NX-450 Eco.",
        page=4,
    ),
    Chunk(
        "catalogue#2",
        "catalogue",
        "catalogue.pdf",
        "Le modèle NX-300 est destiné à la plongée loisir, pression 300 bar.",
        page=5,
    ),
    Chunk(
        "finances#0",
        "finances",
        "finances.xlsx",
        "Sheet CA 2025 | Trimestre: T3 | CA (k€): 1 456 | Nouveaux clients: 21",
        table="CA 2025",
        row=3,
        row_key="T3",
        kind="table_row",
    ),
    Chunk(
        "finances#1",
        "finances",
        "finances.xlsx",
        "Sheet CA 2025 | Trimestre: T4 | CA (k€): 1 689 | Nouveaux clients: 33",
        table="CA 2025",
        row=4,
        row_key="T4",
        kind="table_row",
    ),
    Chunk(
        "securite#0",
        "securite",
        "securite.pdf",
        "Les sauvegardes sont chiffrées en AES-256. Le RPO est de 15 minutes et le RTO de 4 h.",
        page=2,
    ),
]


def ids(results: list[tuple[Chunk, float]]) -> list[str]:
    return [chunk.chunk_id for chunk, _ in results]


@pytest.fixture(scope="module")
def v1() -> V1Retriever:
    return V1Retriever(CHUNKS)


@pytest.fixture(scope="module")
def v2() -> V2Retriever:
    return V2Retriever(CHUNKS)


def test_fold_strips_accents_case_and_exotic_spaces() -> None:
    assert fold("Disponibilité GARANTIE\u202f: 99,7\u00a0%") == "disponibilite garantie : 99,7 %"
    assert fold("L’œuvre — Straße") == "l'oeuvre - strasse"


def test_analyze_keeps_identifiers_and_numbers_as_extra_tokens() -> None:
    analysis = analyze("Le NX-450B, ISO 27001 : CA de 1 689 k€, SLA 99,7 %, tél. +33 2 85 52 41 90")
    assert {"nx450b", "iso27001", "1689", "99.7", "33285524190"} <= set(analysis.extra)
    assert "nx" in analysis.words
    assert "450b" in analysis.words
    assert "le" not in analysis.content  # stop word


def test_analyze_reads_german_thousands_and_quarters() -> None:
    assert {"1689", "1.689", "q4"} <= set(analyze("Umsatz im vierten Quartal: 1.689").extra)
    assert "q4" in analyze("au quatrième trimestre").extra
    assert "q4" in analyze("Sheet CA | Trimestre: T4").extra
    assert "q2" in analyze("in the second quarter").extra


def test_v2_ranks_the_exact_part_number_first(v2: V2Retriever) -> None:
    results = v2.search("Quelle pression délivre le NX-450B ?", 3)
    assert ids(results)[0] == "catalogue#0"


def test_v2_exact_number_with_french_separator_finds_the_table_row(v2: V2Retriever) -> None:
    assert ids(v2.search("1689", 2))[0] == "finances#1"
    assert ids(v2.search("chiffre d'affaires du quatrième trimestre", 2))[0] == "finances#1"


def test_vector_path_finds_a_paraphrase(v1: V1Retriever, v2: V2Retriever) -> None:
    # No word of the question is in the chunk: only stems, characters and concepts meet.
    query = "How long is the notice period to terminate the agreement?"
    assert ids(v1.search(query, 1)) == ["contrat#2"]
    assert ids(v2.search(query, 1)) == ["contrat#2"]


def test_v1_scores_are_cosine_distances(v1: V1Retriever) -> None:
    results = v1.search("disponibilité garantie du service", 9)
    distances = [d for _, d in results]
    assert distances == sorted(distances)
    assert all(0.0 <= d <= 1.0 + 1e-9 for d in distances)
    assert ids(results)[0] == "contrat#0"
    assert len(results) == len(CHUNKS)  # a vector store always answers k items


@pytest.mark.parametrize("query", ["NX-450B", "préavis de résiliation", "RPO et RTO", "zzz"])
def test_v2_distances_are_monotonic_in_unit_interval(v2: V2Retriever, query: str) -> None:
    distances = [d for _, d in v2.search(query, 9)]
    assert distances == sorted(distances)
    assert all(0.0 <= d <= 1.0 for d in distances)


@pytest.mark.parametrize("retriever_type", [V1Retriever, V2Retriever])
def test_file_id_filter(retriever_type: type[V1Retriever] | type[V2Retriever]) -> None:
    retriever = retriever_type(CHUNKS)
    results = retriever.search("NX-450B pression", 10, file_ids=["contrat", "securite"])
    assert results
    assert {c.file_id for c, _ in results} <= {"contrat", "securite"}
    assert retriever.search("NX-450B", 5, file_ids=["unknown"]) == []
    assert retriever.search("NX-450B", 5, file_ids=[]) == []
    assert retriever.search("NX-450B", 0) == []
    only = retriever.search("chiffrement des sauvegardes", 5, file_ids=["securite"])
    assert ids(only) == ["securite#0"]


@pytest.mark.parametrize("retriever_type", [V1Retriever, V2Retriever])
def test_results_are_deterministic(retriever_type: type[V1Retriever] | type[V2Retriever]) -> None:
    query = "Quel est le niveau de disponibilité garanti et la pénalité ?"
    first = retriever_type(CHUNKS).search(query, 5)
    second = retriever_type(CHUNKS).search(query, 5)
    assert first == second
    assert retriever_type(CHUNKS).search(query, 5) == retriever_type(CHUNKS).search(query, 5)


def test_v2_drops_near_duplicate_chunks() -> None:
    text = "Le RPO est de 15 minutes et le RTO de 4 heures pour la production."
    chunks = [
        Chunk("a#0", "a", "a.md", text, section="Reprise"),
        Chunk("b#0", "b", "b.md", text.replace("4 heures", "4 heures."), section="Copie"),
        Chunk("c#0", "c", "c.md", "Les tests de reprise ont lieu en mars et en octobre."),
    ]
    results = V2Retriever(chunks).search("RPO RTO reprise", 3)
    assert ids(results) == ["a#0", "c#0"]
    assert len(V1Retriever(chunks).search("RPO RTO reprise", 3)) == 3  # V1 does not dedupe


def test_v2_quoted_phrase_is_matched_literally(v2: V2Retriever) -> None:
    assert ids(v2.search("« plongée loisir »", 1)) == ["catalogue#2"]


def test_empty_chunk_list() -> None:
    assert V1Retriever([]).search("x", 3) == []
    assert V2Retriever([]).search("x", 3) == []


def test_vector_index_lsa_reduction_keeps_the_best_match() -> None:
    texts = [c.text for c in CHUNKS]
    exact = VectorIndex(texts)
    reduced = VectorIndex(texts, dim=4)
    assert not exact.reduced
    assert reduced.reduced
    query = "compresseur NX-300 plongée"
    assert int(exact.similarities(query).argmax()) == 5
    assert int(reduced.similarities(query).argmax()) == 5


def _synthetic_chunks(n: int) -> list[Chunk]:
    vocabulary = (
        "disponibilité contrat résiliation préavis maintenance sauvegarde chiffrement client "
        "trimestre chiffre affaires effectif support délai astreinte plafond avoir redevance "
        "objectif lancement bureau intégration certification conservation purge export tarif"
    )
    words = vocabulary.split()
    chunks = []
    for i in range(n):
        body = " ".join(words[(i * 7 + j * 3) % len(words)] for j in range(45))
        chunks.append(
            Chunk(f"f{i % 6}#{i}", f"f{i % 6}", f"f{i % 6}.md", f"{body} NX-{i}B {i * 13} bar.")
        )
    return chunks


def test_both_retrievers_answer_over_500_chunks() -> None:
    """Their cost (~0.3 s to build, ~1 ms a query) is the layer-A benchmark's to measure."""
    chunks = _synthetic_chunks(500)
    v1, v2 = V1Retriever(chunks), V2Retriever(chunks)
    queries = ["disponibilité du contrat", "NX-42B", "délai de support pour le tarif", "546 bar"]
    for i in range(8):
        assert len(v1.search(queries[i % 4], 10)) == 10
        found = v2.search(queries[i % 4], 10, None if i % 2 else ["f1", "f2"])
        assert 0 < len(found) <= 10
    assert ids(v2.search("NX-42B", 1)) == ["f0#42"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the Nimbus Analytics corpus is not rendered")
def test_v2_finds_the_sla_clause_on_the_real_corpus() -> None:
    index = DemoIndex.from_corpus(CORPUS)
    query = "Quel est le niveau de disponibilité garanti dans le contrat avec Meridia ?"
    top3 = index.v2.search(query, 3)
    assert any(
        "99,7" in chunk.text and chunk.file_id == "contrat-cadre-meridia" for chunk, _ in top3
    )
    assert index.path("v1") is index.v1
    assert index.path("v2") is index.v2
