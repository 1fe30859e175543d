"""How far the answer scorer agrees with careful hand grades on answers nobody tuned it on.

The measure is the answer corpus in ``benchmarks/answer_corpus/`` (see its README): questions
over the bundled corpora in French, German and English, each with several answers written in
the styles local models answer in and hand-graded on the harness rubric (Accuracy, Grounding,
Completeness, Language, Format -> PASS/PARTIAL/FAIL) with the hard veto each must trip. It is
split in two halves: ``development`` may be studied; ``test`` is scored once, at the end.
Six validation sets (``validation``, ``validation2`` ... ``validation6``), each written
later by other authors who had not read the scorer, are each measured once before they are
studied: each is one more estimate of how the scorer generalises, before the test half is
spent.

Every answer is scored the way layer B scores a run (``layers.chat.chat_record``) as a
one-turn conversation whose evidence is the question's passages, numbered [1], [2], ... in
the order the corpus lists them (the structured chunk of the corpus holding each passage's
anchor, as the embedded demo's V2 retrieval returns it), so ``[n]`` citations resolve.
The question's gold is the one a gold author wrote for its prompt (``<set>/gold/<lang>.yaml``,
blind to answers and grades), else built mechanically from the corpus entry
(:func:`gold_case`, ``--gold typed``).

Printed per half and language: agreement per rubric dimension and on the case verdict,
veto recall (expected vetoes raised, by kind), correct answers vetoed, vetoes no grade
expects, and abstentions (runs the scorer marks as needing review).

    python benchmarks/bench_answer_agreement.py                    # the development half
    python benchmarks/bench_answer_agreement.py --half validation5 # then it may be studied
    python benchmarks/bench_answer_agreement.py --half test        # once, at the end
    python benchmarks/bench_answer_agreement.py --json out.json --show-disagreements
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "answer_corpus"
# the sets of the answer corpus: development (studied), validation sets measured once before
# they were studied, and the test half, scored once at the end
HALVES = (
    *("development", "validation", "validation2", "validation3", "validation4", "validation5"),
    "validation6",
    "validation7",
    "validation8",
    "validation9",
    "validation10",
    "validation11",
    "validation12",
    "validation13",
    "test",
)
DIMENSIONS = ("accuracy", "grounding", "completeness", "language", "format")
GRADES = ("PASS", "PARTIAL", "FAIL")
NUMERIC_KINDS = frozenset({"quantity", "money", "percent", "count"})


# --- the corpus ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Grade:
    dimensions: dict[str, str]
    verdict: str
    vetoes: tuple[str, ...]
    correct: bool
    why: str


@dataclass(frozen=True, slots=True)
class Answer:
    id: str
    text: str
    styles: tuple[str, ...]
    grade: Grade
    # a second grader's grade, written blind to the first and to the scorer, if any
    second: Grade | None = None


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    half: str
    language: str
    corpus: str
    prompt: str
    answerable: bool
    category: str
    expected: tuple[dict[str, Any], ...]
    tempting_wrong: tuple[dict[str, Any], ...]
    evidence: tuple[dict[str, Any], ...]
    answers: tuple[Answer, ...]
    # the claims a gold author wrote for the prompt (``<set>/gold/<lang>.yaml``), if any
    authored: dict[str, Any] | None = None


def _vetoes(raw: Any) -> tuple[str, ...]:
    if raw in (None, "none", [], ["none"]):
        return ()
    values = raw if isinstance(raw, list) else [raw]
    return tuple(str(value) for value in values if value != "none")


def _grade(grade: dict[str, Any]) -> Grade:
    return Grade(
        dimensions={name: str(grade[name]).upper() for name in DIMENSIONS},
        verdict=str(grade["verdict"]).upper(),
        vetoes=_vetoes(grade.get("veto")),
        correct=bool(grade.get("correct")),
        why=str(grade.get("why", "")),
    )


def load_questions(halves: Sequence[str], languages: Sequence[str] | None) -> list[Question]:
    questions: list[Question] = []
    for half in halves:
        for path in sorted((CORPUS / half).glob("*.yaml")):
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            language = str(data["language"])
            if languages and language not in languages:
                continue
            authored_path = CORPUS / half / "gold" / f"{language}.yaml"
            authored = (
                yaml.safe_load(authored_path.read_text(encoding="utf-8"))
                if authored_path.exists()
                else {}
            )
            second_path = CORPUS / half / "second-grades" / f"{language}.yaml"
            seconds = (
                yaml.safe_load(second_path.read_text(encoding="utf-8"))
                if second_path.exists()
                else {}
            )
            for entry in data["questions"]:
                answers = tuple(
                    Answer(
                        id=str(answer["id"]),
                        text=str(answer["text"]).strip(),
                        styles=tuple(answer.get("style") or ()),
                        grade=_grade(answer["grade"]),
                        second=_grade(seconds[answer["id"]]) if answer["id"] in seconds else None,
                    )
                    for answer in entry["answers"]
                )
                questions.append(
                    Question(
                        id=str(entry["id"]),
                        half=half,
                        language=language,
                        corpus=str(entry["corpus"]),
                        prompt=str(entry["prompt"]),
                        answerable=bool(entry.get("answerable", True)),
                        category=str(entry.get("category", "semantic")),
                        expected=tuple(entry.get("expected") or ()),
                        tempting_wrong=tuple(entry.get("tempting_wrong") or ()),
                        evidence=tuple(entry.get("evidence") or ()),
                        answers=answers,
                        authored=authored.get(str(entry["id"])),
                    )
                )
    return questions


# --- the evidence the answer was written over ---------------------------------------------


def _normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@cache
def _chunks(corpus: str) -> tuple[Any, ...]:
    from ragv2_demo.chunks import chunk_structured, load_corpus

    return tuple(chunk_structured(load_corpus(ROOT / "corpus" / corpus)))


@cache
def _synthetic_files(corpus: str) -> frozenset[str]:
    """The corpus documents its facts file declares synthetic (``meta: {synthetic: true}``)."""
    facts = yaml.safe_load((ROOT / "corpus" / corpus / "facts.yaml").read_text(encoding="utf-8"))
    return frozenset(
        str(document["filename"])
        for document in facts.get("documents", [])
        if (document.get("meta") or {}).get("synthetic") is True
    )


@dataclass(slots=True)
class EvidenceStats:
    found: int = 0
    missing: list[str] = field(default_factory=list)


def _locate(corpus: str, file_id: str, entry: dict[str, Any], anchor: str) -> Any:
    """The chunk of ``file_id`` holding ``anchor``; for a table row whose chunk renders its
    cells otherwise ("Trimestre: T4 | CA (k€): 1 689"), the row named by ``table`` and
    ``row``, or the row holding every cell of the anchor ("T4 | 1 689 | 33")."""
    chunks = [chunk for chunk in _chunks(corpus) if chunk.file_id == file_id]
    wanted = _normal(anchor)
    found = next((chunk for chunk in chunks if wanted and wanted in _normal(chunk.text)), None)
    if found is not None:
        return found
    rows = [chunk for chunk in chunks if chunk.kind == "table_row"]
    table, row = entry.get("table"), entry.get("row")
    if row is not None:
        for chunk in rows:
            if table is not None and _normal(chunk.table or "") != _normal(str(table)):
                continue
            if chunk.row == row or _normal(chunk.row_key or "") == _normal(str(row)):
                return chunk
    cells = [_normal(cell) for cell in anchor.split("|") if cell.strip()]
    if len(cells) > 1:
        for chunk in rows + chunks:
            text = _normal(chunk.text)
            if all(cell in text for cell in cells):
                return chunk
    return None


def evidence_items(question: Question, stats: EvidenceStats) -> list[Any]:
    """The passages of ``question`` as retrieved items, in the corpus's order: each is the
    structured chunk of its file holding its anchor (the anchor alone when none does)."""
    from pytest_ragv2.systems.outputs import RetrievedItem

    items: list[RetrievedItem] = []
    for entry in question.evidence:
        file_id = str(entry.get("file_id") or Path(str(entry.get("filename"))).stem)
        anchor = str(entry.get("anchor") or "")
        chunk = _locate(question.corpus, file_id, entry, anchor)
        if chunk is None:
            stats.missing.append(f"{question.id}: {file_id}: {anchor!r}")
            items.append(
                RetrievedItem(
                    rank=len(items) + 1,
                    text=anchor,
                    file_id=file_id,
                    filename=entry.get("filename"),
                )
            )
            continue
        stats.found += 1
        synthetic = chunk.filename in _synthetic_files(question.corpus)
        items.append(
            RetrievedItem(
                rank=len(items) + 1,
                text=chunk.text,
                file_id=chunk.file_id,
                filename=chunk.filename,
                page=chunk.page,
                section=chunk.section,
                table=chunk.table,
                row=chunk.row,
                row_key=chunk.row_key,
                metadata={"synthetic": True} if synthetic else {},
            )
        )
    return items


# --- the gold, built mechanically from the corpus entry ------------------------------------

_NUMBER = re.compile(r"[-+]?\d[\d\u00a0\u202f .,']*")


def _number_and_unit(value: str) -> tuple[float | None, str | None]:
    """The first number of ``value`` as its language writes it, and what follows it."""
    found = _NUMBER.search(value)
    if found is None:
        return None, None
    digits = found.group().strip().replace("\u00a0", " ").replace("\u202f", " ")
    digits = digits.replace("'", "").rstrip(".,")
    if re.fullmatch(r"\d{1,3}([ .]\d{3})+(,\d+)?", digits):  # 1 689 / 1.689,5
        digits = digits.replace(" ", "").replace(".", "").replace(",", ".")
    elif re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", digits):  # 1,689.5
        digits = digits.replace(",", "")
    else:
        digits = digits.replace(" ", "").replace(",", ".")
    try:
        number = float(digits)
    except ValueError:
        return None, None
    unit = value[found.end() :].strip().split(" ")[0] or None
    return number, unit


def old_claim(fact: dict[str, Any], *, severity: str | None = None) -> dict[str, Any]:
    """A corpus fact in the gold's untyped form: its value as the text, with the number and
    unit a gold author would write for a numeric kind."""
    value = str(fact.get("value") or fact.get("fact"))
    claim: dict[str, Any] = {"text": value, "severity": severity or fact.get("severity", "medium")}
    if fact.get("kind") in NUMERIC_KINDS:
        number, unit = _number_and_unit(value)
        if number is not None:
            claim["number"] = number
            if unit:
                claim["unit"] = unit
    return claim


def _digits(text: str) -> str:
    """A writing compared by its characters, spaces left out and a decimal comma a point."""
    return re.sub(r"\s", "", text).replace(",", ".")


def _completed(value: str, kind: str, fact: str) -> str | None:
    """A bare number the author wrote as the value ("6 000") completed with the unit the
    fact writes after it ("replaced every 6 000 operating hours"), as a gold author writing
    typed gold would write it ("6 000 operating hours") when ``ragv2 validate`` asks for
    the unit."""
    from pytest_ragv2.scoring.values import read_values

    for read in read_values(fact, None):
        if read.kind == kind and _digits(read.text).startswith(_digits(value)):
            return read.text
    return None


def typed_claim(fact: dict[str, Any], *, severity: str | None = None) -> dict[str, Any]:
    """A corpus fact as a typed claim where its kind is a value kind and the schema takes its
    value as one (:func:`typed_value_problem`); anything else as a text claim (its value,
    as written)."""
    from pytest_ragv2.gold.schema import typed_value_problem

    value = str(fact.get("value") or fact.get("fact"))
    kind = fact.get("kind")
    claim: dict[str, Any] = {"severity": severity or fact.get("severity", "medium")}
    if kind not in (None, "text") and typed_value_problem(value, kind) is not None:
        value = _completed(value, kind, str(fact.get("fact") or "")) or value
    if kind not in (None, "text") and typed_value_problem(value, kind) is None:
        # the fact as its text: what the value is for ("Business: 1 000 Anfragen pro Minute")
        return {**claim, "kind": kind, "value": value, "text": str(fact.get("fact") or value)}
    return {**claim, "text": value}


GOLD_FORMS = {"typed": typed_claim, "untyped": old_claim}


def source_type(question: Question) -> str:
    """The case's source type as a gold author states it: "synthetic_record" when every
    passage is from a document the corpus declares synthetic."""
    synthetic = _synthetic_files(question.corpus)
    names = [str(entry.get("filename") or "") for entry in question.evidence]
    hits = sum(1 for name in names if name in synthetic)
    # a mix is judged passage by passage: the synthetic passages carry it in their metadata
    return "synthetic_record" if hits and hits == len(names) else "public_document"


def gold_case(question: Question, form: str = "authored") -> Any:
    from pytest_ragv2.gold.schema import Case

    if form == "authored" and question.authored is not None:
        # the gold a gold author wrote for this prompt, without seeing answers or grades
        expected_answer = {
            key: list(question.authored.get(key) or [])
            for key in ("required_claims", "optional_claims", "forbidden_claims")
        }
    else:
        claim = GOLD_FORMS["typed" if form == "authored" else form]
        expected_answer = {
            "required_claims": [claim(fact) for fact in question.expected],
            "forbidden_claims": [
                claim(fact, severity="medium") for fact in question.tempting_wrong
            ],
        }
    return Case.model_validate(
        {
            "id": question.id,
            "category": question.category,
            "prompts": {question.language: question.prompt},
            "expected_answer": expected_answer,
            "required_evidence": [
                {
                    key: entry[key]
                    for key in ("file_id", "filename", "page", "section", "table", "row")
                    if entry.get(key) is not None
                }
                for entry in question.evidence
            ]
            if question.answerable
            else [],
            "safe_refusal_expected": not question.answerable,
            "source_type": source_type(question),
        }
    )


# --- scoring --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scored:
    question: Question
    answer: Answer
    dimensions: dict[str, str]
    verdict: str
    vetoes: tuple[str, ...]
    review: bool
    reasons: tuple[str, ...]


def score_all(
    questions: Iterable[Question], stats: EvidenceStats, form: str = "authored"
) -> list[Scored]:
    from pytest_ragv2.deciding.records import held_for_review
    from pytest_ragv2.gold.allowlist import load_allowlist
    from pytest_ragv2.layers.chat.run import chat_record, scoring_options
    from pytest_ragv2.run.keys import RunKey
    from pytest_ragv2.scoring.answers import allowed_files
    from pytest_ragv2.systems.kb_tool import resolve_citations
    from pytest_ragv2.systems.transcripts import ChatTurn, Transcript

    files = allowed_files(load_allowlist(ROOT / "gold" / "allowlist.yaml"))
    # the plugin's defaults, over the bundled corpus directory as a session's [tool.ragv2] corpus
    options = scoring_options({}, corpus=ROOT / "corpus")
    scored: list[Scored] = []
    for question in questions:
        case = gold_case(question, form)
        items = evidence_items(question, stats)
        for answer in question.answers:
            turn = ChatTurn(prompt=question.prompt, answer=answer.text)
            turn.evidence = list(items)
            turn.citations = resolve_citations(answer.text, items)
            record = chat_record(
                RunKey(question.id, "corpus", 1, question.language, "B"),
                case=case,
                split="development",
                role="candidate",
                transcript=Transcript([turn], 1.0),
                allowed_files=files,
                options=options,
            )
            rubric = dict(record.rubric)
            scored.append(
                Scored(
                    question=question,
                    answer=answer,
                    dimensions={name: str(rubric.get(name, "PASS")) for name in DIMENSIONS},
                    verdict=str(rubric.get("overall", "PASS")),
                    # a run waiting for a ruling raises only the vetoes a session keeps
                    vetoes=tuple(
                        sorted(
                            {veto.kind for veto in held_for_review(record).vetoes}  # type: ignore[attr-defined]
                        )
                    ),
                    review=bool(record.review),
                    reasons=tuple(record.reasons),
                )
            )
    return scored


# --- figures --------------------------------------------------------------------------------


def figures(scored: Sequence[Scored]) -> dict[str, Any]:
    decided = [one for one in scored if not one.review]
    agreement = {
        name: _share(one.dimensions[name] == one.answer.grade.dimensions[name] for one in decided)
        for name in DIMENSIONS
    }
    agreement["case"] = _share(one.verdict == one.answer.grade.verdict for one in decided)
    expected = Counter(kind for one in scored for kind in one.answer.grade.vetoes)
    raised = Counter(
        kind for one in scored for kind in one.answer.grade.vetoes if kind in one.vetoes
    )
    correct = [one for one in scored if one.answer.grade.correct]
    return {
        "answers": len(scored),
        "agreement": agreement,
        "veto_recall": _ratio(sum(raised.values()), sum(expected.values())),
        "veto_recall_by_kind": {
            kind: f"{raised[kind]}/{expected[kind]}" for kind in sorted(expected)
        },
        "correct_answers": len(correct),
        "correct_vetoed": sum(1 for one in correct if one.vetoes),
        "unexpected_vetoes": sum(
            1 for one in scored for kind in one.vetoes if kind not in one.answer.grade.vetoes
        ),
        "abstentions": _ratio(len(scored) - len(decided), len(scored)),
    }


def second_grader(scored: Sequence[Scored]) -> str | None:
    """How far a second grader agrees with the first (case verdict, vetoes), and the scorer
    with each: the ceiling careful human grading puts on agreement. None without seconds."""
    both = [one for one in scored if one.answer.second is not None]
    if not both:
        return None

    def second(one: Scored) -> Grade:
        assert one.answer.second is not None
        return one.answer.second

    decided = [one for one in both if not one.review]
    humans = _share(one.answer.grade.verdict == second(one).verdict for one in both)
    vetoes = _share(set(one.answer.grade.vetoes) == set(second(one).vetoes) for one in both)
    first = _share(one.verdict == one.answer.grade.verdict for one in decided)
    other = _share(one.verdict == second(one).verdict for one in decided)
    return (
        f"second grader on {len(both)} answers: graders agree on the case {_pct(humans)}, "
        f"on the vetoes {_pct(vetoes)}; scorer with the first {_pct(first)}, "
        f"with the second {_pct(other)}"
    )


def _share(values: Iterable[bool]) -> float | None:
    listed = list(values)
    return sum(listed) / len(listed) if listed else None


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def table(groups: dict[str, dict[str, Any]]) -> str:
    header = [
        "group",
        "answers",
        *DIMENSIONS,
        "case",
        "veto recall",
        "correct vetoed",
        "unexpected vetoes",
        "abstain",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, found in groups.items():
        agreement = found["agreement"]
        cells = [
            name,
            str(found["answers"]),
            *(_pct(agreement[dimension]) for dimension in DIMENSIONS),
            _pct(agreement["case"]),
            _pct(found["veto_recall"]),
            f"{found['correct_vetoed']}/{found['correct_answers']}",
            str(found["unexpected_vetoes"]),
            _pct(found["abstentions"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--half",
        choices=(*HALVES, "both"),
        default="development",
        help="both: development and test",
    )
    parser.add_argument("--lang", nargs="*", help="languages (default: every one)")
    parser.add_argument("--json", type=Path, help="write every figure and answer here")
    parser.add_argument(
        "--gold",
        choices=(*GOLD_FORMS, "authored"),
        default="authored",
        help="the claims a gold author wrote for each prompt (gold/<lang>.yaml; default), the "
        "corpus facts converted to typed claims, or to the older untyped claims",
    )
    parser.add_argument(
        "--show-disagreements",
        action="store_true",
        help="print each disagreement (never the test half's)",
    )
    args = parser.parse_args(argv)
    halves = ("development", "test") if args.half == "both" else (args.half,)
    questions = load_questions(halves, args.lang)
    stats = EvidenceStats()
    scored = score_all(questions, stats, args.gold)
    groups: dict[str, list[Scored]] = defaultdict(list)
    for one in scored:
        groups[f"{one.question.half} {one.question.language}"].append(one)
        groups[f"{one.question.half} all"].append(one)
    found = {name: figures(groups[name]) for name in sorted(groups)}
    print(table(found))
    print()
    for name, figure in found.items():
        print(f"{name}: veto recall by kind {figure['veto_recall_by_kind']}")
    for name in sorted(groups):
        if line := second_grader(groups[name]):
            print(f"{name}: {line}")
    print(f"evidence passages located: {stats.found}, not located: {len(stats.missing)}")
    for missing in stats.missing:
        print(f"  not located: {missing}", file=sys.stderr)
    if args.show_disagreements:
        for one in scored:
            grade = one.answer.grade
            if one.question.half == "test":
                continue  # the test half is a measure, never a thing to study: figures only
            if one.verdict == grade.verdict and set(one.vetoes) == set(grade.vetoes):
                continue
            print(
                f"\n{one.answer.id} [{one.question.half}]: hand {grade.verdict} "
                f"{list(grade.vetoes)} / scorer {one.verdict} {list(one.vetoes)}"
            )
            for dimension in DIMENSIONS:
                if one.dimensions[dimension] != grade.dimensions[dimension]:
                    print(
                        f"  {dimension}: hand {grade.dimensions[dimension]}, "
                        f"scorer {one.dimensions[dimension]}"
                    )
            print(f"  answer: {one.answer.text[:300]!r}")
            print(f"  hand: {grade.why}")
            for reason in one.reasons[:6]:
                print(f"  scorer: {reason}")
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "figures": found,
                    "answers": [
                        {
                            "id": one.answer.id,
                            "half": one.question.half,
                            "verdict": one.verdict,
                            "dimensions": one.dimensions,
                            "vetoes": list(one.vetoes),
                            "review": one.review,
                            "hand": {
                                "verdict": one.answer.grade.verdict,
                                "dimensions": one.answer.grade.dimensions,
                                "vetoes": list(one.answer.grade.vetoes),
                            },
                        }
                        for one in scored
                        if one.question.half != "test"  # the test half: figures only
                    ],
                },
                indent=1,
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
