"""report/plots.py: the report's figures from real sessions and from constructed records."""

from __future__ import annotations

import dataclasses
import json
import random
import re
import select
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_ragv2.config.settings import Settings
from pytest_ragv2.deciding.decision import decide
from pytest_ragv2.deciding.records import ChatRecord, RetrievalRecord, RunRecord
from pytest_ragv2.report.case_html import case_anchor
from pytest_ragv2.report.model import Summary
from pytest_ragv2.report.plot_inputs import plot_inputs
from pytest_ragv2.report.plot_worker import PlotWorker
from pytest_ragv2.report.plots import Figure, case_link, draw, figures, run_latencies
from pytest_ragv2.report.summary import build_summary
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.scoring.veto_record import Veto
from tests.layers.test_layer_b import CHAT_CASES, CHATBOT, chat_pyproject

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert('x')</script> & co"
CATEGORIES = ("exact_lookup", "technical_table", "semantic")
RUBRIC = ("accuracy", "grounding", "completeness", "language", "format", "overall")
GRADES = ("PASS", "PARTIAL", "FAIL")


# --- constructed sessions ------------------------------------------------------------------


def retrieval_records(
    systems: dict[str, str], cases: int = 12, reps: int = 2, seed: int = 7
) -> list[RunRecord]:
    """Layer A records: each system a little better than the one before it."""
    rng = random.Random(seed)
    records: list[RunRecord] = []
    for offset, (system, role) in enumerate(systems.items()):
        for case in range(cases):
            for rep in range(1, reps + 1):
                skill = 0.35 + 0.2 * offset + rng.uniform(-0.2, 0.2)
                recall = {k: min(1.0, skill * (1 + k / 6)) for k in (1, 3, 5, 10)}
                records.append(
                    RetrievalRecord(
                        key=RunKey(f"K{case:02d}", system, rep, "en", "A"),
                        category=CATEGORIES[case % len(CATEGORIES)],
                        split="development",
                        role=role,
                        ok=rep != 2 or case != 3,  # one failed run per system
                        met=recall[5] > 0.5,
                        latency_s=rng.lognormvariate(-4 + offset, 0.4),
                        metrics={**{f"recall@{k}": v for k, v in recall.items()}, "mrr": skill},
                        returned=5,
                    )
                )
    return records


def chat_records(
    systems: dict[str, str], cases: int = 12, reps: int = 3, seed: int = 11
) -> list[RunRecord]:
    """Layer B records with rubric grades, and vetoes for the first system."""
    rng = random.Random(seed)
    records: list[RunRecord] = []
    for offset, (system, role) in enumerate(systems.items()):
        for case in range(cases):
            for rep in range(1, reps + 1):
                exact = 1.0 if rng.random() < 0.3 + 0.25 * offset else 0.0
                vetoes: tuple[Veto, ...] = ()
                if offset == 0 and case % 4 == 0:
                    vetoes = (Veto("failed_safe_refusal", 1, "", "answered"),)
                records.append(
                    ChatRecord(
                        key=RunKey(f"B{case:02d}", system, rep, "en", "B"),
                        category=CATEGORIES[case % len(CATEGORIES)],
                        split="development",
                        role=role,
                        ok=True,
                        met=exact == 1.0,
                        latency_s=rng.lognormvariate(-2 + offset, 0.5),
                        metrics={"exact_answer": exact},
                        vetoes=vetoes,
                        rubric={
                            dimension: GRADES[rng.randrange(3)] if exact < 1 else "PASS"
                            for dimension in RUBRIC
                        },
                    )
                )
    return records


def session(
    records: Sequence[RunRecord], layer: str, roles: dict[str, str], run_id: str = "plots"
) -> Summary:
    # one failed run of 24 a system (see retrieval_records): allowed, so the comparisons run
    settings = Settings.model_validate(
        {"gates": {"error_rate_max": 0.05}, "answer_gates": {"error_rate_max": 0.05}}
    )
    decision = decide(records, layer=layer, settings=settings, roles=roles)
    return build_summary(
        run_id=run_id,
        seed=1,
        layer=layer,
        results=decision.results,
        gates=decision.gates,
        passed=decision.passed,
        exit_status=0,
        interrupted=False,
        descriptors={},
        raw_runs_dir=Path("raw-runs") / run_id,
        settings=settings,
    )


ROLES_A = {"base": "baseline", "cand": "candidate"}
ROLES_B = {"base": "baseline", "cand": "candidate", "ref": "reference"}


@pytest.fixture(scope="module")
def layer_a() -> tuple[Summary, list[RunRecord]]:
    records = retrieval_records(ROLES_A)
    return session(records, "A", ROLES_A), records


@pytest.fixture(scope="module")
def layer_b() -> tuple[Summary, list[RunRecord]]:
    records = chat_records(ROLES_B)
    return session(records, "B", ROLES_B), records


def by_title(made: Sequence[Figure]) -> dict[str, Figure]:
    return {figure.title.split(" (")[0]: figure for figure in made}


def texts(figure: Figure) -> list[str]:
    root = ET.fromstring(figure.svg)
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]


def ids(figure: Figure) -> list[str]:
    return [node.attrib["id"] for node in ET.fromstring(figure.svg).iter() if "id" in node.attrib]


# --- which figures, and what they show -----------------------------------------------------


def test_layer_a_figures(layer_a: tuple[Summary, list[RunRecord]]) -> None:
    summary, records = layer_a
    made = by_title(figures(summary, records))
    assert list(made) == [
        "Recall@k by system",
        "Latency distribution by system",
        "Candidate − baseline by category",
        "Candidate − baseline per case",
    ]
    for figure in made.values():
        root = ET.fromstring(figure.svg)  # each figure parses as XML, an <svg> root
        assert root.tag == f"{SVG}svg"
        assert figure.caption.endswith(".")
        assert figure.caption.count(". ") == 0, "one sentence"
    recall = made["Recall@k by system"]
    assert texts(recall).count("base (baseline)") == 1
    assert texts(recall).count("cand (candidate)") == 1
    assert {"1", "3", "5", "10"} <= set(texts(recall))
    # one curve per system: a line through the four k, in the system's colour
    assert len(re.findall(r'<path d="M [^"]*(?:L [^"]*){3}"[^>]*stroke: #0072b2', recall.svg)) >= 1
    assert len(re.findall(r'<path d="M [^"]*(?:L [^"]*){3}"[^>]*stroke: #e69f00', recall.svg)) >= 1


def test_latency_marks_p50_and_p95_over_successful_runs(
    layer_a: tuple[Summary, list[RunRecord]],
) -> None:
    summary, records = layer_a
    latency = by_title(figures(summary, records))["Latency distribution by system"]
    shown = texts(latency)
    for name in ROLES_A:
        p50 = summary.systems[name].latency_p50.value
        p95 = summary.systems[name].latency_p95.value
        assert any(text.startswith("p50 ") for text in shown)
        assert f"p50 {p50 * 1000:.3g} ms" in shown, shown
        assert f"p95 {p95 * 1000:.3g} ms" in shown, shown
    # 24 runs each, one failed: the distribution is over the 23 successful ones
    assert sum("23 runs" in text for text in shown) == 2
    assert "successful runs" in latency.caption


def test_category_intervals_are_the_gates_own(layer_a: tuple[Summary, list[RunRecord]]) -> None:
    summary, records = layer_a
    figure = by_title(figures(summary, records))["Candidate − baseline by category"]
    gate = next(g for g in summary.gates if g.name == "category_regression")
    shown = texts(figure)
    for category in CATEGORIES:
        assert any(text.startswith(category) for text in shown), shown
        assert any(line.startswith(f"{category}: Δ ") for line in gate.details)
    assert any(text.startswith("all cases (n=12)") for text in shown)
    assert any(text.startswith("regression margin -0.050") for text in shown)
    assert "category_regression" in figure.caption


def test_plotted_intervals_are_the_gates_numbers(
    layer_a: tuple[Summary, list[RunRecord]],
) -> None:
    from pytest_ragv2.deciding.verdict import fmt_delta
    from pytest_ragv2.report.plots import _overall_interval, _regression_intervals

    summary, _ = layer_a
    gate = next(g for g in summary.gates if g.name == "category_regression")
    intervals = _regression_intervals(plot_inputs(summary))
    assert len(intervals) == len(gate.details) == len(CATEGORIES)
    for item in intervals:
        assert item.low is not None
        assert item.high is not None
        shown = f"{item.name}: Δ {fmt_delta(item.estimate)} [{fmt_delta(item.low)}, "
        assert any(line.startswith(shown + f"{fmt_delta(item.high)}]") for line in gate.details)
    overall = _overall_interval(plot_inputs(summary))
    evidence = next(g for g in summary.gates if g.name == "recall_improvement").evidence
    assert overall is not None
    assert evidence is not None
    assert (overall.estimate, overall.low, overall.high) == (
        evidence["estimate"],
        evidence["low"],
        evidence["high"],
    )


def test_per_case_win_tie_loss(layer_a: tuple[Summary, list[RunRecord]]) -> None:
    summary, records = layer_a
    figure = by_title(figures(summary, records))["Candidate − baseline per case"]
    deltas = [
        summary.by_case["cand"][case].metrics["recall@5"]
        - summary.by_case["base"][case].metrics["recall@5"]
        for case in summary.by_case["cand"]
    ]
    wins = sum(delta > 1e-9 for delta in deltas)
    losses = sum(delta < -1e-9 for delta in deltas)
    ties = len(deltas) - wins - losses
    assert f"cand − base: {wins} wins, {ties} ties, {losses} losses" in texts(figure)
    assert {f"K{case:02d}" for case in range(12)} <= set(texts(figure))


def test_layer_b_figures(layer_b: tuple[Summary, list[RunRecord]]) -> None:
    summary, records = layer_b
    made = by_title(figures(summary, records))
    assert list(made) == [
        "Latency distribution by system",
        "Candidate − baseline by category",
        "Candidate − baseline per case",
        "Rubric grades by dimension and system",
        "Vetoes by kind and system",
    ]
    rubric = texts(made["Rubric grades by dimension and system"])
    assert {"base", "cand", "ref", *RUBRIC, *GRADES} <= set(rubric)
    vetoes = texts(made["Vetoes by kind and system"])
    assert "failed_safe_refusal" in vetoes
    assert summary.vetoes_by_system is not None
    tripped = summary.vetoes_by_system["base"]["failed_safe_refusal"]
    assert tripped == 9
    assert " 9" in vetoes
    assert "base (baseline), 36 runs" in vetoes
    # the chat layers compute no per-category interval: the figure says it shows means
    assert "no per-category interval" in made["Candidate − baseline by category"].caption
    gate = next(g for g in summary.gates if g.name == "case_wins")
    counts = texts(made["Candidate − baseline per case"])
    shown = next(text for text in counts if "wins" in text).removeprefix("cand − base: ")
    assert shown.split(" where")[0] in gate.reason
    # each case is named under its bar, and its bar and its name link to its case panel
    per_case = made["Candidate − baseline per case"]
    cases = sorted(set(summary.by_case["cand"]) & set(summary.by_case["base"]))
    assert set(cases) <= set(counts)
    links = re.findall(r'<a xlink:href="#(case-[^"]+)">', per_case.svg)
    assert sorted(set(links)) == sorted(f"case-{case}" for case in cases)
    assert links.count(f"case-{cases[0]}") == 2  # the bar and the name
    assert "opens its panel" in per_case.caption
    assert case_link("B01") == "#" + case_anchor("B01")  # the page's own addresses


def test_colours_are_the_systems_own_in_every_figure(
    layer_b: tuple[Summary, list[RunRecord]],
) -> None:
    summary, records = layer_b
    made = by_title(figures(summary, records))
    for title in ("Latency distribution by system", "Vetoes by kind and system"):
        svg = made[title].svg.lower()
        assert "#0072b2" in svg, title  # the baseline's colour
        assert "#e69f00" in svg, title  # the candidate's


# --- absent data ---------------------------------------------------------------------------


def test_no_baseline_no_comparison() -> None:
    records = [r for r in retrieval_records(ROLES_A) if r.key.system == "cand"]
    made = by_title(figures(session(records, "A", {"cand": "candidate"}), records))
    assert list(made) == ["Recall@k by system", "Latency distribution by system"]


def test_no_candidate_no_comparison() -> None:
    roles = {"base": "baseline", "ref": "reference"}
    records = retrieval_records(roles)
    made = by_title(figures(session(records, "A", roles), records))
    assert list(made) == ["Recall@k by system", "Latency distribution by system"]


def test_no_veto_tripped_no_veto_figure() -> None:
    records = [r for r in chat_records(ROLES_B) if r.key.system != "base"]
    roles = {"cand": "candidate", "ref": "reference"}
    made = by_title(figures(session(records, "B", roles), records))
    assert "Vetoes by kind and system" not in made
    assert "Rubric grades by dimension and system" in made


def test_interrupted_session_without_records_has_no_figure() -> None:
    summary = session([], "A", ROLES_A)
    assert figures(summary, []) == []
    summary.verdict = "interrupted"
    assert figures(summary, []) == []


def test_records_of_another_layer_are_left_out(layer_a: tuple[Summary, list[RunRecord]]) -> None:
    summary, _ = layer_a
    made = by_title(figures(summary, chat_records(ROLES_B)))
    assert "Latency distribution by system" not in made


def test_malformed_extras_never_raise(layer_b: tuple[Summary, list[RunRecord]]) -> None:
    summary, records = layer_b
    broken = dataclasses.replace(
        summary,
        rubric={"x": "not a table"},  # type: ignore[dict-item]
        vetoes_by_system=["nope"],  # type: ignore[arg-type]
    )
    titles = [figure.title for figure in figures(broken, records)]
    assert "Rubric grades by dimension and system" not in titles
    assert "Vetoes by kind and system" not in titles


# --- output contract -----------------------------------------------------------------------


def test_hostile_names_are_escaped() -> None:
    roles = {HOSTILE: "baseline", "$x$ & <b>": "candidate"}
    records = chat_records(roles)
    made = figures(session(records, "B", roles), records)
    assert len(made) == 5
    for figure in made:
        assert "<script" not in figure.svg
        assert "<b>" not in figure.svg
        shown = texts(figure)  # parsed back, the names read as written
        assert any(HOSTILE in text or HOSTILE[:39] in text for text in shown), figure.title
    assert any("$x$ & <b>" in text for figure in made for text in texts(figure))


def test_control_characters_in_names_keep_the_svg_well_formed() -> None:
    roles = {"base\x01line\nname": "baseline", "cand]]>\x1b": "candidate"}
    records = retrieval_records(roles)
    made = figures(session(records, "A", roles), records)
    assert len(made) == 4
    shown = texts(made[0])
    # a control character is shown as its escape (safe_text.printable), never raw
    assert "base\\x01line name (baseline)" in shown
    assert "cand]]>\\x1b (candidate)" in shown
    assert not any("\x01" in text or "\x1b" in text for text in shown)


def test_output_is_deterministic_and_ids_distinct(
    layer_a: tuple[Summary, list[RunRecord]], layer_b: tuple[Summary, list[RunRecord]]
) -> None:
    summary, records = layer_a
    first = figures(summary, records)
    assert first == figures(summary, records)
    # one page may hold both layers' figures: no id repeats across them
    every = [*first, *figures(*layer_b)]
    found = [identifier for figure in every for identifier in ids(figure)]
    assert len(found) == len(set(found))
    for figure in every:
        own = set(ids(figure))
        for reference in re.findall(r'(?:url\(#|href="#)([^)"]+)', figure.svg):
            # a link to a case panel is the page's; every other reference is the figure's
            assert reference in own or reference.startswith("case-"), (figure.title, reference)


def test_concurrent_calls_give_the_same_figures(
    layer_a: tuple[Summary, list[RunRecord]], layer_b: tuple[Summary, list[RunRecord]]
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    alone = [figures(*layer_a), figures(*layer_b)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda given: figures(*given), [layer_a, layer_b] * 2))
    assert together == alone * 2


def test_svg_is_self_contained_and_small(layer_b: tuple[Summary, list[RunRecord]]) -> None:
    for figure in figures(*layer_b):
        svg = figure.svg
        assert svg.startswith("<svg ")
        assert svg.endswith("</svg>")
        for absent in ("<?xml", "<!DOCTYPE", "<!--", "<metadata", "<image", "<script"):
            assert absent not in svg
        assert "http://" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
            'xmlns:xlink="http://www.w3.org/1999/xlink"', ""
        )
        assert "<style" not in svg or "svg *{" in svg  # the style sheet is scoped to the figure
        assert len(svg.encode()) < 200_000
        assert "<text" in svg  # text stays text (svg.fonttype none)


def test_matplotlib_is_not_imported_at_start_up() -> None:
    import subprocess

    code = (
        "import sys, pytest_ragv2.plugin.hooks, pytest_ragv2.report.plots; "
        "print('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_global_pyplot_state_is_untouched(layer_a: tuple[Summary, list[RunRecord]]) -> None:
    import matplotlib

    before = dict(matplotlib.rcParams)
    figures(*layer_a)
    assert dict(matplotlib.rcParams) == before
    assert (
        "matplotlib.pyplot" not in sys.modules
        or not __import__("matplotlib.pyplot").pyplot.get_fignums()
    )


# --- real sessions -------------------------------------------------------------------------


def rescored(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, run_id: str
) -> tuple[Summary, list[RunRecord]]:
    """The session's summary and records, rebuilt from its raw runs as ``ragv2 rescore``."""
    import pytest_ragv2.tools.rescore as rescore
    from pytest_ragv2.tools.settings import rescore_settings

    monkeypatch.chdir(pytester.path)
    run_dir = pytester.path / "raw-runs" / run_id
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    settings, _ = rescore_settings(run_dir, manifest, None, pytester.path)
    again = rescore.rescore_run(run_dir, settings)
    return again.summary, again.records


def test_real_layer_a_session(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=plots")
    summary, records = rescored(project, monkeypatch, "plots")
    made = by_title(figures(summary, records))
    assert list(made) == [
        "Recall@k by system",
        "Latency distribution by system",
        "Candidate − baseline by category",
        "Candidate − baseline per case",
    ]
    assert {"v1 (baseline)", "v2 (candidate)"} <= set(texts(made["Recall@k by system"]))


def test_real_layer_b_session(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    (project.path / "chatbot.py").write_text(CHATBOT)
    (project.path / "cases" / "development.yaml").write_text(CHAT_CASES)
    (project.path / "pyproject.toml").write_text(chat_pyproject())
    project.runpytest("--ragv2-layer=B", "--ragv2-run-id=chatplots")
    summary, records = rescored(project, monkeypatch, "chatplots")
    made = by_title(figures(summary, records))
    assert "Rubric grades by dimension and system" in made
    assert "Latency distribution by system" in made
    assert "Recall@k by system" not in made


# --- the plot worker: the same figures from a helper process, or none (drawn here) ---------


def _ready_worker() -> tuple[PlotWorker, subprocess.Popen[bytes]]:
    """A helper process whose imports are done (a session's runs give it that time): its
    ready byte is waiting."""
    worker = PlotWorker()
    process = worker._process
    assert process is not None
    assert process.stdout is not None
    assert select.select([process.stdout], [], [], 120)[0]
    return worker, process


def test_the_plot_worker_draws_exactly_the_figures_drawn_in_process(
    layer_a: tuple[Summary, list[RunRecord]],
) -> None:
    summary, records = layer_a
    worker, _ = _ready_worker()
    made = worker.figures(summary, records)
    assert made is not None
    assert made == figures(summary, records)
    assert worker.figures(summary, records) is None  # one use: later layers draw their own


def test_a_plot_worker_still_importing_is_waited_for_and_one_too_slow_or_dead_let_go(
    layer_a: tuple[Summary, list[RunRecord]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_ragv2.report.plot_worker as plot_worker

    summary, records = layer_a
    # a bound no loaded machine reaches: this part proves the wait, not the machine's speed
    monkeypatch.setattr(plot_worker, "READY_WAIT_S", 600.0)
    early = PlotWorker()  # asked at once: still in its imports, which it began first
    assert early.figures(summary, records) == figures(summary, records)
    monkeypatch.setattr(plot_worker, "READY_WAIT_S", 0.0)
    slow = PlotWorker()
    process = slow._process
    assert slow.figures(summary, records) is None  # not ready in time: drawn in-process
    assert process is not None
    assert process.poll() is not None  # and let go
    dead = PlotWorker()
    assert dead._process is not None
    dead._process.kill()
    dead._process.wait()
    assert dead.figures(summary, records) is None


@pytest.mark.parametrize("layer", ["layer_a", "layer_b"])
def test_the_plot_helper_is_sent_only_what_the_figures_read(
    layer: str, request: pytest.FixtureRequest
) -> None:
    import pickle

    summary, records = request.getfixturevalue(layer)
    inputs = plot_inputs(summary)
    assert draw(pickle.loads(pickle.dumps(inputs)), run_latencies(summary, records)) == figures(
        summary, records
    )
    sent = {field.name for field in dataclasses.fields(inputs)}
    assert sent == {
        *("run_id", "layer", "systems", "by_category", "gates", "rubric", "vetoes_by_system"),
        *("case_values", "case_metric", "headline"),
    }
    assert (inputs.rubric, inputs.vetoes_by_system) == (summary.rubric, summary.vetoes_by_system)
    compared = {name for name, row in summary.systems.items() if row.role != "reference"}
    assert set(inputs.case_values) == compared == {"base", "cand"}
    metric = inputs.case_metric
    assert metric == ("recall@5" if layer == "layer_a" else "exact_answer")
    for name, values in inputs.case_values.items():  # a value per case, not a row
        assert values == {
            case: row.metrics.get(metric) for case, row in summary.by_case[name].items()
        }
    assert len(pickle.dumps(inputs)) < len(pickle.dumps(summary))
    # one of the two compared roles missing: no per-case row is sent at all
    alone = dataclasses.replace(
        summary,
        systems={name: row for name, row in summary.systems.items() if row.role != "baseline"},
    )
    assert plot_inputs(alone).case_values == {}


def test_the_plot_helper_unpickles_its_inputs_without_the_summarys_modules(
    layer_a: tuple[Summary, list[RunRecord]], tmp_path: Path
) -> None:
    """What the helper is sent is plain: it is ready once matplotlib is, without importing
    pytest, pydantic or httpx (through the summary's, gates' and settings' modules)."""
    import pickle

    summary, records = layer_a
    sent = tmp_path / "inputs.pickle"
    sent.write_bytes(pickle.dumps((plot_inputs(summary), run_latencies(summary, records))))
    probe = (
        "import pickle, sys\n"
        "import pytest_ragv2.report.plots as plots\n"
        "from pytest_ragv2.report.plot_inputs import PlotInputs\n"
        f"inputs, latencies = pickle.loads(open({str(sent)!r}, 'rb').read())\n"
        "assert isinstance(inputs, PlotInputs)\n"
        "heavy = ['pytest', 'pydantic', 'httpx', 'pytest_ragv2.report.summary',\n"
        "         'pytest_ragv2.deciding.gates', 'pytest_ragv2.deciding.aggregate']\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_the_figures_read_of_the_records_only_their_successful_runs_latencies(
    layer_a: tuple[Summary, list[RunRecord]],
) -> None:
    summary, records = layer_a
    key_b = dataclasses.replace(records[0].key, layer="B")
    other_layer = dataclasses.replace(records[0], key=key_b, latency_s=99.0)
    skipped = dataclasses.replace(records[1], skipped="not served", latency_s=98.0)
    latencies = run_latencies(summary, [*records, other_layer, skipped])
    assert set(latencies) == set(summary.systems)
    for system, values in latencies.items():
        counted = [r.latency_s for r in records if r.key.system == system and r.ok]
        assert sorted(values) == sorted(counted)  # neither another layer's nor a skipped run
    assert any(not r.ok for r in records)  # and no failed run either
    drawn = draw(plot_inputs(summary), latencies)
    assert drawn == figures(summary, [*records, other_layer, skipped])


def test_past_its_run_limit_the_plot_worker_is_let_go(
    layer_a: tuple[Summary, list[RunRecord]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_ragv2.report.plot_worker as plot_worker

    summary, records = layer_a
    worker, process = _ready_worker()
    monkeypatch.setattr(plot_worker, "MAX_RUNS_SENT", len(records) - 1)
    assert worker.figures(summary, records) is None  # drawn in-process instead
    assert process.poll() is not None


def test_plots_submitted_early_are_collected_later_or_let_go(
    layer_a: tuple[Summary, list[RunRecord]],
) -> None:
    summary, records = layer_a
    worker, process = _ready_worker()
    worker.submit(summary, records)  # drawn while the session builds the rest
    worker.submit(summary, records)  # once
    assert worker.figures(summary, records) == figures(summary, records)
    assert process.poll() is not None

    abandoned, process = _ready_worker()
    abandoned.submit(summary, records)
    job = abandoned._job
    assert job is not None
    abandoned.close()  # a session ending before it collects: the helper and thread end
    assert process.poll() is not None
    assert not job[0].is_alive()


def test_a_helper_started_as_the_plugin_is_configured_is_the_first_workers_or_stopped() -> None:
    """The plugin starts a helper before its own modules are imported (0.2 s sooner); the
    first PlotWorker takes it, and one nobody took is stopped at the session's cleanup."""
    probe = (
        "import sys\n"
        "from pytest_ragv2.report import plot_worker as w\n"
        "w.start_early()\n"
        "early = w._EARLY[0]\n"
        "w.start_early()\n"
        "assert len(w._EARLY) == 1  # one at most\n"
        "taken = w.PlotWorker()\n"
        "assert taken._process is early and not w._EARLY\n"
        "w.start_early()\n"
        "unused = w._EARLY[0]\n"
        "w.discard_early()\n"
        "assert unused.wait(10) is not None and not w._EARLY\n"
        "taken.close()\n"
        "assert early.wait(10) is not None\n"
        "import matplotlib.figure\n"
        "w.start_early()\n"
        "print(len(w._EARLY))  # this process draws cheaper than a helper starts\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "0", done.stderr
