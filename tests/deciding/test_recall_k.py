"""The gates' recall_k is the recall every report shows: the headline and its interval, the
category, language and case tables, the ceiling, the diagnosis and the quality score."""

from __future__ import annotations

import json
from typing import Any

import pytest


def _layer_a(bundled: pytest.Pytester, run_id: str, recall_k: int | None) -> dict[str, Any]:
    gates = f"\n[tool.ragv2.gates]\nrecall_k = {recall_k}\n" if recall_k is not None else ""
    (bundled.path / "pyproject.toml").write_text(f'[tool.ragv2]\ncorpus = "corpus"\n{gates}')
    result = bundled.runpytest(
        "--ragv2-layer=A", f"--ragv2-run-id={run_id}", "-k", "B06 or K01 or T01", "-p", "html"
    )
    assert result.ret in (0, 1), result.stdout.str()
    data: dict[str, Any] = json.loads(
        (bundled.path / "reports" / run_id / "summary.json").read_text(encoding="utf-8")
    )
    return data


def test_every_table_reads_the_configured_recall_k(bundled: pytest.Pytester) -> None:
    summary = _layer_a(bundled, "k10", 10)
    assert summary["recall_k"] == 10
    candidate = summary["systems"]["demo-v2"]
    assert "recall@10_ci" in candidate
    assert "recall@5_ci" not in candidate
    markdown = (bundled.path / "reports" / "k10" / "summary.md").read_text(encoding="utf-8")
    assert "Recall@10 by category" in markdown
    assert "Recall@10 by language" in markdown
    assert "Recall@5" not in markdown
    page = (bundled.path / "reports" / "k10" / "report.html").read_text(encoding="utf-8")
    assert "demo-v2 R@10" in page  # the case table
    assert "demo-v2 R@5" not in page
    assert "demo-v2 R@10 / ceiling" in page
    diagnosis = json.dumps(summary["diagnosis"])
    assert "recall@10" in diagnosis
    assert "recall@5" not in diagnosis
    parts = summary["quality_score"]["systems"]["demo-v2"]["components"]["retrieval_quality"]
    assert "recall@10" in parts["parts"]
    assert "recall@5" not in parts["parts"]


def test_the_default_recall_k_is_five(bundled: pytest.Pytester) -> None:
    summary = _layer_a(bundled, "k5", None)
    assert summary["recall_k"] == 5
    assert "recall@5_ci" in summary["systems"]["demo-v2"]
    markdown = (bundled.path / "reports" / "k5" / "summary.md").read_text(encoding="utf-8")
    assert "Recall@5 by category" in markdown
