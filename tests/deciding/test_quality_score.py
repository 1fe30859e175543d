"""The weighted quality score: exact values on hand-made figures, VETO behind a hard veto,
the weights' configuration, and every report of a bundled session showing it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.config.file import SettingsError
from pytest_ragv2.config.settings import load_settings
from pytest_ragv2.deciding.quality_score import (
    MetricValue,
    SystemFigures,
    Weights,
    score_system,
)


def figures(vetoes: tuple[str, ...] = (), **metrics: float | None) -> SystemFigures:
    return SystemFigures(
        "v2",
        tuple(MetricValue(name.replace("_at_", "@"), value) for name, value in metrics.items()),
        error_rate=0.1,
        p95_s=4.0,
        vetoes=vetoes,
    )


RETRIEVAL = {
    "recall_at_5": 0.8,
    "mrr": 0.6,
    "exact_metadata": None,  # no exact lookup among the cases: not measured
    "table_integrity": 1.0,
    "duplicate_rate": 0.2,
}
ANSWERS = {
    "exact_answer": 0.5,
    "claim_correctness": 0.9,
    "grounded_rate": 0.8,
    "citation_correctness": 1.0,
    "citation_completeness": 0.6,
    "fabrications": 1.0,
    "completeness": 0.7,
    "safe_refusal": None,
    "over_refusal": 0.25,
    "constraint_ok": 0.75,
}


def test_layer_a_reads_retrieval_quality_and_latency_renormalised() -> None:
    score = score_system(figures(**RETRIEVAL), answers=False, weights=Weights(), p95_limit_s=2.0)
    by_area = {component.area: component for component in score.components}
    # retrieval quality: mean of 0.8, 0.6, 1.0 and 1 - 0.2 (exact_metadata not measured)
    assert by_area["retrieval_quality"].value == pytest.approx((0.8 + 0.6 + 1.0 + 0.8) / 4)
    # latency and reliability: mean of 1 - 0.1 and min(1, 2 / 4)
    assert by_area["latency_reliability"].value == pytest.approx((0.9 + 0.5) / 2)
    for area in ("answer_correctness", "citation_grounding", "completeness"):
        assert not by_area[area].measured
        assert by_area[area].effective_weight == 0.0
    # weights renormalised: 0.25 / 0.30 and 0.05 / 0.30
    assert by_area["retrieval_quality"].effective_weight == pytest.approx(0.25 / 0.30)
    assert by_area["latency_reliability"].effective_weight == pytest.approx(0.05 / 0.30)
    assert score.score == pytest.approx((0.25 * 0.8 + 0.05 * 0.7) / 0.30)
    assert score.shown == f"{(0.25 * 0.8 + 0.05 * 0.7) / 0.30:.3f}" == "0.783"


def test_an_answer_layer_reads_the_answer_areas_without_retrieval() -> None:
    score = score_system(figures(**ANSWERS), answers=True, weights=Weights(), p95_limit_s=45.0)
    by_area = {component.area: component.value for component in score.components}
    assert by_area["answer_correctness"] == pytest.approx(0.7)  # (0.5 + 0.9) / 2
    # (0.8 + 1.0 + 0.6 + 1 / (1 + 1.0)) / 4
    assert by_area["citation_grounding"] == pytest.approx(0.725)
    assert by_area["completeness"] == pytest.approx(0.7)
    # safe_refusal not measured: (1 - 0.25 + 0.75) / 2
    assert by_area["refusal_constraints"] == pytest.approx(0.75)
    assert by_area["latency_reliability"] == pytest.approx(0.95)  # (0.9 + 1.0) / 2
    assert by_area["retrieval_quality"] is None
    expected = (0.30 * 0.7 + 0.20 * 0.725 + 0.10 * 0.7 + 0.10 * 0.75 + 0.05 * 0.95) / 0.75
    assert score.score == pytest.approx(expected)
    assert score.shown == "0.730"


def test_a_hard_veto_shows_veto_never_a_number() -> None:
    perfect = dict.fromkeys(("exact_answer", "claim_correctness", "completeness"), 1.0)
    score = score_system(
        figures(("fabricated_identifier", "failed_safe_refusal"), **perfect),
        answers=True,
        weights=Weights(),
        p95_limit_s=45.0,
    )
    assert score.score is None
    assert score.shown == "VETO (fabricated_identifier, failed_safe_refusal)"
    assert score.to_json()["score"] is None
    # the components are still shown behind the veto
    assert any(component.value == 1.0 for component in score.components)


def test_custom_weights_are_normalised_by_their_sum() -> None:
    weights = Weights(retrieval_quality=3.0, latency_reliability=1.0)
    score = score_system(figures(**RETRIEVAL), answers=False, weights=weights, p95_limit_s=2.0)
    assert score.score == pytest.approx((3.0 * 0.8 + 1.0 * 0.7) / 4.0)


def test_weights_are_configured_and_validated(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.ragv2.score_weights]\nanswer_correctness = 0.5\nretrieval_quality = 0.0\n"
    )
    settings = load_settings(tmp_path, None)
    assert settings.score_weights.answer_correctness == 0.5
    assert settings.score_weights.retrieval_quality == 0.0
    assert settings.score_weights.completeness == 0.10
    (tmp_path / "pyproject.toml").write_text(
        "[tool.ragv2.score_weights]\nanswer_correctness = -0.3\n"
    )
    with pytest.raises(SettingsError) as negative:
        load_settings(tmp_path, None)
    message = str(negative.value)
    assert "pyproject.toml:2: " in message
    assert "score_weights.answer_correctness" in message
    (tmp_path / "pyproject.toml").write_text("[tool.ragv2.score_weights]\nlatency = 0.1\n")
    with pytest.raises(
        SettingsError, match=r"pyproject\.toml:2: score_weights\.latency: unknown key"
    ):
        load_settings(tmp_path, None)
    zeros = "\n".join(
        f"{area} = 0"
        for area in (
            "answer_correctness",
            "retrieval_quality",
            "citation_grounding",
            "completeness",
            "refusal_constraints",
            "latency_reliability",
        )
    )
    (tmp_path / "pyproject.toml").write_text(f"[tool.ragv2.score_weights]\n{zeros}\n")
    with pytest.raises(SettingsError, match=r"score_weights: .*at least one weight"):
        load_settings(tmp_path, None)


def test_every_report_shows_the_score_behind_the_vetoes(bundled: pytest.Pytester) -> None:
    result = bundled.runpytest(
        "--ragv2-layer=A", "--ragv2-run-id=q", "-k", "K01 or K11 or B05", "--ragv2-seed=20261130"
    )
    assert result.ret in (0, 1)
    report = bundled.path / "reports" / "q"
    summary: dict[str, Any] = json.loads((report / "summary.json").read_text())
    found = summary["quality_score"]
    assert found["layer"] == "A"
    assert list(found["systems"]) == ["demo-v1", "demo-v2"]
    for system in found["systems"].values():
        components = system["components"]
        assert components["retrieval_quality"]["measured"]
        assert not components["answer_correctness"]["measured"]
        if system["vetoes"]:
            assert system["score"] is None
            assert system["shown"].startswith("VETO")
        else:
            assert 0.0 <= system["score"] <= 1.0
            assert system["shown"] == f"{system['score']:.3f}"
    out = result.stdout.str()
    assert "Weighted quality score" in out
    assert "weighted score" in out
    assert "## Weighted quality score" in (report / "summary.md").read_text()
    assert "Weighted quality score" in (report / "report.html").read_text()
    # the score decides no gate
    assert not any("quality" in gate["name"] for gate in summary["gates"])
