"""Answer scorers of layer B on the bundled gold (cases/, gold/) and hand-built transcripts."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.gold.allowlist import load_allowlist
from pytest_ragv2.gold.cases import load_catalog
from pytest_ragv2.gold.schema import Case
from pytest_ragv2.scoring.answers import (
    AnswerScore,
    AnswerScoringOptions,
    allowed_files,
    score_transcript,
    turn_golds,
)
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.transcripts import ChatTurn, Citation, ToolCall, Transcript

ROOT = Path(__file__).resolve().parents[2]
NNBSP = "\u202f"
NO_LANGID = AnswerScoringOptions(identify_language=False)


@cache
def _catalog() -> Any:
    allowlist = load_allowlist(ROOT / "gold" / "allowlist.yaml")
    catalog = load_catalog(ROOT / "cases", ROOT / "gold", allowlist=allowlist)
    assert not catalog.errors
    return catalog, allowed_files(allowlist)


def case(case_id: str) -> Case:
    loaded = _catalog()[0].find(case_id)
    assert loaded is not None
    return loaded.case  # type: ignore[no-any-return]


def allowed() -> frozenset[str]:
    return _catalog()[1]  # type: ignore[no-any-return]


def item(file_id: str, ext: str, text: str, rank: int = 1, **extra: Any) -> RetrievedItem:
    return RetrievedItem(
        rank=rank, text=text, file_id=file_id, filename=f"{file_id}.{ext}", **extra
    )


def cite(marker: str, source: RetrievedItem) -> Citation:
    return Citation(marker, source.file_id, source.filename, source.page, source.text)


def kb_call(query: str, result: str = "{}") -> ToolCall:
    return ToolCall("call-1", "search_knowledge_base", {"query": query}, result)


def one_turn(prompt: str, answer: str, **fields: Any) -> Transcript:
    return Transcript([ChatTurn(prompt=prompt, answer=answer, **fields)], 1.0)


def kinds(score: AnswerScore) -> list[str]:
    return [veto.kind for veto in score.vetoes]


# --------------------------------------------------------------------------- T01 (fr, 10 turns)

GUIDE = item(
    "guide-produit-nimbus",
    "md",
    "2.1 Starter: Le plan Starter est facturé 89 € HT par mois. 2.2 Business: Le plan Business "
    "est facturé 290 € HT par mois. 2.3 Enterprise: établi sur devis, à partir de 1 100 € HT "
    "par mois.",
)
CONTRAT = item(
    "contrat-cadre-meridia",
    "docx",
    "4.1 Disponibilité garantie : disponibilité mensuelle de la plateforme de 99,7 %. 4.2 Les "
    "maintenances ne peuvent excéder 6 heures par mois. 4.3 avoir égal à 5 % de la redevance "
    "mensuelle par heure, plafonné à 30 %, réclamé sous 30 jours. 3.1 préavis de 90 jours "
    "avant l'échéance.",
)
CA = item(
    "resultats-financiers-2025",
    "xlsx",
    "CA 2025 (k€)\nTrimestre | CA (k€) | Nouveaux clients | Charges | Marge\n"
    "T1 | 1 240 | 18 | 212 | 1 020\nT2 | 1 378 | 24 | 231 | 1 095\n"
    "T3 | 1 456 | 21 | 246 | 1 160\nT4 | 1 689 | 33 | 272 | 1 312",
)
SECU = item(
    "politique-securite",
    "pdf",
    "L'objectif de point de reprise (RPO) est de 15 minutes, l'objectif de temps de reprise "
    "(RTO) de 4 heures. Le PRA est testé deux fois par an, en mars et en octobre.",
    page=2,
)
FAQ = item(
    "faq-support",
    "md",
    "Délais de réponse du support\nStarter | 48 h ouvrées\nBusiness | 8 h ouvrées\n"
    "Enterprise | 1 h | 24/7",
)

T01_ANSWERS: list[tuple[str, list[RetrievedItem]]] = [
    (
        "Nimbus Analytics propose trois plans : Starter à 89 € HT par mois, Business à 290 € HT "
        "par mois et Enterprise, sur devis, à partir de 1 100 € HT par mois [1].",
        [GUIDE],
    ),
    (
        "Le contrat avec Meridia Distribution garantit une disponibilité mensuelle de 99,7 %. "
        "En cas de non-respect, Meridia reçoit un avoir de 5 % de la redevance mensuelle par "
        "heure, plafonné à 30 %, à réclamer sous 30 jours [1].",
        [CONTRAT],
    ),
    ("Le préavis de résiliation est de 90 jours avant l'échéance du contrat [1].", [CONTRAT]),
    (
        f"Au quatrième trimestre 2025, le chiffre d'affaires a atteint 1{NNBSP}689 k€, avec 33 "
        "nouveaux clients signés [1].",
        [CA],
    ),
    (
        "En additionnant les quatre trimestres (1 240 k€ + 1 378 k€ + 1 456 k€ + 1 689 k€), "
        "le chiffre d'affaires annuel 2025 est de 5 763 k€ [1].",
        [CA],
    ),
    (
        "Notre RPO est de 15 minutes et notre RTO de 4 heures ; le plan de reprise est testé "
        "deux fois par an, en mars et en octobre [1].",
        [SECU],
    ),
    (
        "Oui, globalement : le contrat garantit 99,7 % de disponibilité et limite la maintenance "
        "à 6 heures par mois, tandis que la politique fixe un RPO de 15 minutes et un RTO de "
        "4 heures, compatibles avec cet engagement [1][2].",
        [CONTRAT, SECU],
    ),
    ("Cette information ne figure pas dans les documents dont je dispose.", []),
    (
        "| Plan | Délai de réponse |\n|---|---|\n| Starter | 48 h ouvrées |\n"
        "| Business | 8 h ouvrées |\n| Enterprise | 1 h, 24/7 |",
        [FAQ],
    ),
    (
        "Au quatrième trimestre, nous avons réalisé 1 689 k€ de chiffre d'affaires et signé 33 "
        "nouveaux clients.",
        [],
    ),
]


def t01_transcript(answers: list[tuple[str, list[RetrievedItem]]]) -> Transcript:
    gold = case("T01")
    turns = []
    for turn, (answer, evidence) in zip(gold.turns, answers, strict=True):
        citations = [cite(f"[{n}]", source) for n, source in enumerate(evidence, start=1)]
        calls = [kb_call("Meridia contrat préavis")] if evidence else []
        turns.append(
            ChatTurn(
                prompt=turn.prompts["fr"],
                answer=answer,
                citations=citations,
                evidence=list(evidence),
                tool_calls=calls,
            )
        )
    return Transcript(turns, 10.0)


def test_turn_golds_of_a_conversation_merge_the_case_defaults() -> None:
    golds = turn_golds(case("T01"), "fr")
    assert [gold.turn for gold in golds] == list(range(1, 11))
    assert golds[8].mandatory_constraints == {"language": "fr", "format": "table"}
    assert golds[0].mandatory_constraints == {"language": "fr"}
    assert golds[7].safe_refusal_expected
    assert not golds[6].safe_refusal_expected
    w07 = turn_golds(case("W07"), "en")
    assert w07[2].expect_tools.requires.kb
    assert not w07[2].expect_tools.requires.web
    assert w07[2].expect_tools.tools["search_knowledge_base"].min_calls == 1
    [single] = turn_golds(case("K08"), "de")
    assert {e.filename for e in single.required_evidence} == {"betriebsanleitung-tvs-75.docx"}


def test_the_seed_conversation_answered_right_passes_without_veto() -> None:
    score = score_transcript(
        case("T01"), "fr", t01_transcript(T01_ANSWERS), allowlist_files=allowed()
    )
    assert score.vetoes == []
    assert score.verdict == "PASS", score.rubric
    metrics = score.metrics()
    assert metrics["exact_answer"] is True
    assert metrics["claim_correctness"] == 1.0
    assert metrics["fabrication_count"] == 0
    assert metrics["grounded_claim_rate"] == 1.0
    assert metrics["safe_refusal_accuracy"] is True
    assert metrics["over_refusals"] == 0
    assert metrics["format_ok"] is True
    assert metrics["language_ok"] is True
    assert metrics["citation_correctness"] == 1.0
    assert score.turns[7].refused
    assert score.turns[7].refusal_phrase == (
        "Cette information ne figure pas dans les documents dont je dispose"
    )
    # completeness counts T5's optional quarterly figures too: 27 required + 6 optional
    assert metrics["completeness"] == 1.0
    assert sum(turn.optional for turn in score.turns) == 6


def test_answering_the_out_of_corpus_turn_trips_failed_safe_refusal() -> None:
    answers = list(T01_ANSWERS)
    answers[7] = ("Nous avons 12 clients au Japon.", [])
    score = score_transcript(case("T01"), "fr", t01_transcript(answers), options=NO_LANGID)
    assert "failed_safe_refusal" in kinds(score)
    [veto] = [v for v in score.vetoes if v.kind == "failed_safe_refusal"]
    assert veto.turn == 8
    assert "un nombre de clients au Japon" in veto.detail
    assert score.safe_refusal_accuracy is False
    assert score.rubric["Grounding"].verdict == "FAIL"
    assert score.rubric["Grounding"].reason.startswith("turn 8:")


def test_a_table_turn_answered_in_prose_fails_format() -> None:
    answers = list(T01_ANSWERS)
    answers[8] = ("Starter : 48 h ouvrées, Business : 8 h ouvrées, Enterprise : 1 h.", [FAQ])
    score = score_transcript(case("T01"), "fr", t01_transcript(answers), options=NO_LANGID)
    assert score.format_ok is False
    assert score.rubric["Format"].verdict == "FAIL"
    assert score.constraint_compliance is False
    assert score.verdict == "FAIL"


def test_memory_turn_must_be_one_sentence_and_may_reuse_earlier_figures() -> None:
    answers = list(T01_ANSWERS)
    answers[9] = ("Le CA du T4 était de 1 689 k€. Nous avons signé 33 nouveaux clients.", [])
    score = score_transcript(case("T01"), "fr", t01_transcript(answers), options=NO_LANGID)
    assert score.turns[9].format_ok is False
    # the figures come from turn 4's evidence: no fabrication in the memory turn
    assert score.turns[9].unsupported == []


# --------------------------------------------------------------------------- vetoes


def test_a_fabricated_part_number_given_for_the_gold_part_is_vetoed() -> None:
    k09 = case("K09")
    source = item(
        "ersatzteilliste-2025", "xlsx", "SK-22OA | Kolbenringsatz Hochdruckstufe | TVK 220"
    )
    answer = "Für die Hochdruckstufe des TVK 220 ist der Kolbenringsatz SK-22OB vorgesehen [1]."
    transcript = one_turn(
        k09.all_prompts()["de"], answer, evidence=[source], citations=[cite("[1]", source)]
    )
    score = score_transcript(k09, "de", transcript, allowlist_files=allowed(), options=NO_LANGID)
    # the typed part-number claim binds the answer's part number of the same make; one in no
    # source is invented, whatever it stands for (a real one would be the claim's wrong value)
    [veto] = score.vetoes
    assert (veto.kind, veto.turn, veto.text) == ("fabricated_identifier", 1, "SK-22OB")
    assert veto.detail.startswith("identifier in neither the evidence")
    assert score.fabrication_count == 1
    assert score.rubric["Accuracy"].verdict == "FAIL"

    right = answer.replace("SK-22OB", "SK-22OA (mit Buchstabe O statt Ziffer 0)")
    score = score_transcript(
        k09,
        "de",
        one_turn(
            k09.all_prompts()["de"], right, evidence=[source], citations=[cite("[1]", source)]
        ),
        allowlist_files=allowed(),
        options=NO_LANGID,
    )
    assert score.vetoes == []
    assert score.exact_answer is True


def test_a_citation_of_a_file_outside_the_allowlist_trips_outside_allowlist() -> None:
    w01 = case("W01")
    leaked = RetrievedItem(
        rank=1,
        text="Preisliste 2026 intern: Runtime per charge 11.5 hours",
        file_id="preisliste-intern-2026",
        filename="preisliste-intern-2026.xlsx",
    )
    answer = "The Nimbus X2 runs 11.5 hours on one charge [1]."
    transcript = one_turn(
        w01.prompt_en or "",
        answer,
        evidence=[leaked],
        citations=[cite("[1]", leaked)],
        tool_calls=[kb_call("runtime")],
    )
    score = score_transcript(w01, "en", transcript, allowlist_files=allowed(), options=NO_LANGID)
    assert kinds(score) == ["outside_allowlist", "outside_allowlist"]  # the citation, the item
    assert {v.detail for v in score.vetoes} == {"citation [1]", "evidence item rank 1"}
    assert score.rubric["Grounding"].verdict == "FAIL"
    # without an allow-list nothing is judged
    assert score_transcript(w01, "en", transcript, options=NO_LANGID).vetoes == []


def test_a_filename_named_in_the_answer_outside_the_allowlist_is_a_leak() -> None:
    w01 = case("W01")
    spec = item("nimbus-x2-product-specification", "pdf", "Runtime per charge | 11.5 hours", page=1)
    answer = "Per preisliste-intern-2026.xlsx the X2 runs 11.5 hours."
    transcript = one_turn(w01.prompt_en or "", answer, evidence=[spec])
    score = score_transcript(w01, "en", transcript, allowlist_files=allowed(), options=NO_LANGID)
    # one veto for one fact: the file is outside the allow-list (not also "fabricated")
    assert sorted(kinds(score)) == ["outside_allowlist"]
    without = score_transcript(w01, "en", transcript, options=NO_LANGID)
    assert sorted(kinds(without)) == ["fabricated_identifier"]  # no allow-list to name it


def test_a_refusal_where_an_answer_is_expected_is_an_over_refusal() -> None:
    w01 = case("W01")
    transcript = one_turn(
        w01.prompt_en or "",
        "I'm sorry, I could not find the runtime of the Nimbus X2 in the documents.",
        tool_calls=[kb_call("Nimbus X2 runtime")],
    )
    score = score_transcript(w01, "en", transcript, options=NO_LANGID)
    assert score.over_refusals == 1
    # found by the construction (the assistant looked, in the documents), not by a phrase:
    # "could not find" is no default phrase since a finding needs its finder (issue 24)
    assert "I could not find" in (score.turns[0].refusal_phrase or "")
    assert score.rubric["Completeness"].verdict == "FAIL"
    assert score.vetoes == []


def test_a_caveat_next_to_the_full_answer_is_not_an_over_refusal() -> None:
    w03 = case("W03")
    spec = item(
        "nimbus-x2-product-specification",
        "pdf",
        "5. Warranty and service: standard warranty of 30 months",
        page=2,
    )
    answer = "The standard warranty is 30 months; the documents do not mention extended options."
    transcript = one_turn(w03.prompt_en or "", answer, evidence=[spec], tool_calls=[kb_call("w")])
    score = score_transcript(w03, "en", transcript, options=NO_LANGID)
    assert score.over_refusals == 0
    assert score.verdict == "PASS"


def test_a_world_knowledge_number_trips_unsupported_high_severity_number() -> None:
    w03 = case("W03")
    spec = item(
        "nimbus-x2-product-specification",
        "pdf",
        "5. Warranty and service: standard warranty of 30 months",
        page=2,
    )
    answer = "Industrial robots usually come with 18 months of warranty."
    transcript = one_turn(w03.prompt_en or "", answer, evidence=[spec], tool_calls=[kb_call("w")])
    score = score_transcript(w03, "en", transcript, options=NO_LANGID)
    [veto] = score.vetoes
    assert (veto.kind, veto.text) == ("unsupported_high_severity_number", "18 months")


def test_the_x3_price_for_the_x2_fails_the_safe_refusal_of_w04() -> None:
    w04 = case("W04")
    roadmap = item(
        "nimbus-robotics-roadmap-notes",
        "md",
        "The X3 is planned at a target list price of €48,000.",
    )
    answer = "The Nimbus X2 costs about €48,000."
    transcript = one_turn(
        w04.prompt_en or "", answer, evidence=[roadmap], tool_calls=[kb_call("p")]
    )
    score = score_transcript(w04, "en", transcript, options=NO_LANGID)
    assert kinds(score) == ["failed_safe_refusal"]
    assert score.forbidden_claims == 2  # the adjacent fact and the invented-price pattern
    honest = "The documents do not contain a list price for the Nimbus X2."
    score = score_transcript(
        w04,
        "en",
        one_turn(w04.prompt_en or "", honest, tool_calls=[kb_call("p")]),
        options=NO_LANGID,
    )
    assert score.vetoes == []
    assert score.safe_refusal_accuracy is True
    assert score.verdict == "PASS"


def test_synthetic_records_must_be_labelled() -> None:
    k05 = case("K05")
    records = [
        RetrievedItem(
            rank=2,
            text="project_id: TW-P-25-011 | medium: hydrogen | pressure_bar: 350 bar | "
            "capacity_nm3_h: 90 Nm³/h | compressor_family: TVM | topology: 3 x 33 % parallel",
            file_id="digital-twin-projekte-2025",
            filename="digital-twin-projekte-2025.json",
            metadata={"synthetic": True},
        ),
    ]
    bare = "Matching projects: TW-P-24-003 (350 bar, 30 Nm³/h) and TW-P-25-011 (350 bar, 90 Nm³/h)."
    prompt = k05.prompt_en or ""
    score = score_transcript(
        k05,
        "en",
        one_turn(prompt, bare, evidence=records),
        allowlist_files=allowed(),
        options=NO_LANGID,
    )
    assert "synthetic_as_confirmed" in kinds(score)
    assert score.source_type_discipline is False
    labelled = bare + " Note: these are synthetic demo records, not confirmed customer projects."
    score = score_transcript(
        k05,
        "en",
        one_turn(prompt, labelled, evidence=records),
        allowlist_files=allowed(),
        options=NO_LANGID,
    )
    assert score.vetoes == []
    assert score.source_type_discipline is True
    assert score.exact_answer is True
    assert score.constraint_compliance is True


def test_a_relaxed_pressure_constraint_trips_constraint_weakened() -> None:
    k05 = case("K05")
    record = RetrievedItem(
        rank=1,
        text="project_id: TW-P-24-007 | medium: hydrogen | pressure_bar: 250 bar | TVM",
        file_id="digital-twin-projekte-2024",
        filename="digital-twin-projekte-2024.json",
    )
    # naming a supported project value is fine; relaxing the constraint is not
    fine = "TW-P-24-007 runs at 250 bar, below the required 350 bar (synthetic data)."
    score = score_transcript(
        k05, "en", one_turn(k05.prompt_en or "", fine, evidence=[record]), options=NO_LANGID
    )
    assert "constraint_weakened" not in kinds(score)
    relaxed = "For hydrogen at least 250 bar, TW-P-24-007 fits (synthetic data)."
    score = score_transcript(
        k05, "en", one_turn(k05.prompt_en or "", relaxed, evidence=[record]), options=NO_LANGID
    )
    assert "constraint_weakened" in kinds(score)
    assert score.constraint_compliance is False
    assert any("pressure_bar: 350" in v for v in score.turns[0].constraint_violations)


def test_a_forbidden_claim_with_an_explicit_veto_trips_it() -> None:
    base = case("K15").model_dump()
    base["expected_answer"]["forbidden_claims"].append(
        {
            "text": "TVS 75 for hydrogen",
            "pattern": "TVS 75[^.]*hydrogen",
            "veto": "incompatible_presented_compatible",
            "severity": "high",
        }
    )
    k15 = Case.model_validate(base)
    answer = "Order the TVS 75 for hydrogen: it handles 10 bar easily."
    score = score_transcript(k15, "en", one_turn(k15.prompt_en or "", answer), options=NO_LANGID)
    assert "incompatible_presented_compatible" in kinds(score)
    assert "failed_safe_refusal" in kinds(score)
    assert score.constraint_compliance is None or score.constraint_compliance is False


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("lang", "figure"),
    [
        ("fr", f"1{NNBSP}689 k€"),
        ("fr", "1\u00a0689 k€"),
        ("fr", "1689 k€"),
        ("de", "1.689 k€"),
        ("de", "1.689 T€"),
        ("en", "1,689 k€"),
        ("en", "€1,689,000"),
        ("fr", "1,689 M€"),
    ],
)
def test_every_writing_of_the_q4_revenue_is_supported_by_the_sheet(lang: str, figure: str) -> None:
    b04 = case("B04")
    answer = f"T4 2025: {figure}, 33."
    score = score_transcript(b04, lang, one_turn("Q4?", answer, evidence=[CA]), options=NO_LANGID)
    assert score.turns[0].unsupported == []
    assert score.claim_correctness == 1.0
    assert score.vetoes == []


def test_a_wrong_q4_figure_is_unsupported_and_vetoed() -> None:
    b04 = case("B04")
    score = score_transcript(
        b04,
        "de",
        one_turn("Q4?", "Umsatz Q4: 1.698 T€ bei 33 Neukunden.", evidence=[CA]),
        options=NO_LANGID,
    )
    assert score.turns[0].unsupported == ["1.698 T€"]
    assert kinds(score) == ["unsupported_high_severity_number"]
    assert score.claim_correctness == 0.5
    assert score.exact_answer is False


# --------------------------------------------------------------------------- citations


def test_a_dangling_or_misplaced_citation_is_wrong() -> None:
    w01 = case("W01")
    spec = item("nimbus-x2-product-specification", "pdf", "Runtime per charge | 11.5 hours", page=1)
    policy = item("nimbus-robotics-remote-work-policy", "docx", "up to 3 days per week")
    answer = "The X2 runs 11.5 hours per charge [2]. It is a robot [9]."
    transcript = one_turn(
        w01.prompt_en or "",
        answer,
        evidence=[spec, policy],
        citations=[cite("[2]", policy), Citation("[9]")],
        tool_calls=[kb_call("runtime")],
    )
    score = score_transcript(w01, "en", transcript, options=NO_LANGID)
    verdicts = [(c.marker, c.verdict) for c in score.turns[0].citation_checks]
    assert verdicts == [("[2]", "wrong"), ("[9]", "dangling")]
    assert score.citation_correctness == 0.0
    assert score.rubric["Grounding"].verdict == "PARTIAL"


@pytest.mark.parametrize("order", ["spec first", "policy first"])
def test_a_marker_naming_several_sources_is_correct_when_any_of_them_backs_it(
    order: str,
) -> None:
    w01 = case("W01")
    spec = item("nimbus-x2-product-specification", "pdf", "Runtime per charge | 11.5 hours", page=1)
    policy = item("nimbus-robotics-remote-work-policy", "docx", "up to 3 days per week", rank=2)
    group = [cite("[1, 2]", spec), cite("[1, 2]", policy)]
    transcript = one_turn(
        w01.prompt_en or "",
        "The X2 runs 11.5 hours per charge [1, 2].",
        evidence=[spec, policy],
        citations=group if order == "spec first" else group[::-1],
        tool_calls=[kb_call("runtime")],
    )
    score = score_transcript(w01, "en", transcript, options=NO_LANGID)
    assert [(c.marker, c.verdict) for c in score.turns[0].citation_checks] == [
        ("[1, 2]", "correct")
    ]


def test_citation_completeness_counts_claim_sentences_with_a_marker() -> None:
    w08 = case("W08")
    spec = item("nimbus-x2-product-specification", "pdf", "Payload capacity | 340 kg", page=1)
    policy = item(
        "nimbus-robotics-remote-work-policy", "docx", "work remotely up to 3 days per week", rank=2
    )
    answer = "The X2 carries 340 kg. [1]\nEmployees may work remotely 3 days per week."
    transcript = one_turn(
        w08.prompt_en or "",
        answer,
        evidence=[spec, policy],
        citations=[cite("[1]", spec)],
        tool_calls=[kb_call("payload capacity remote days")],
    )
    score = score_transcript(w08, "en", transcript, options=NO_LANGID)
    assert score.turns[0].claim_sentences == 2
    assert score.citation_completeness == 0.5
    assert score.citation_correctness == 1.0


def test_the_record_is_strict_json() -> None:
    score = score_transcript(case("T01"), "fr", t01_transcript(T01_ANSWERS), options=NO_LANGID)
    data = score.to_json()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert [turn["exact_answer"] for turn in data["turns"]] == [
        turn.exact_answer for turn in score.turns
    ]
    assert data["overall"] == score.overall.to_json()


def test_a_turn_that_expects_a_refusal_is_exact_only_when_it_refuses() -> None:
    b08 = case("B08")  # a refusal expected, no required claim, one forbidden claim
    prompt = b08.prompt_en or ""
    dodging = one_turn(prompt, "Nimbus builds robust products for industry.")
    score = score_transcript(b08, "en", dodging, options=NO_LANGID)
    assert not score.turns[0].forbidden_found  # nothing forbidden said, and yet no refusal
    assert score.metrics()["exact_answer"] is False
    refusing = one_turn(
        prompt, "The documents I have do not say how many customers we have in Japan."
    )
    score = score_transcript(b08, "en", refusing, options=NO_LANGID)
    assert score.turns[0].refused
    assert score.metrics()["exact_answer"] is True
