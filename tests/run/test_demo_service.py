"""The embedded demo's start in the background: it survives CPython 3.11's interpreter-wide
AST conversion state being disturbed by another thread, once, and says why it failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragv2.run.demo import DemoService, DemoUnavailable

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def test_a_start_failed_by_another_threads_ast_conversion_is_made_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = DemoService._started
    calls: list[int] = []

    def disturbed_once(self: DemoService) -> object:
        calls.append(1)
        if len(calls) == 1:  # what another thread's ast.parse at that moment causes
            raise SystemError("AST constructor recursion depth mismatch (before=33, after=215)")
        return real(self)

    monkeypatch.setattr(DemoService, "_started", disturbed_once)
    service = DemoService(CORPUS).start()
    try:
        assert service.url.startswith("http://127.0.0.1:")
        assert len(calls) == 2
    finally:
        service.stop()


def test_any_other_failure_is_the_reason_the_demo_is_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(self: DemoService) -> object:
        raise SystemError("something else")

    monkeypatch.setattr(DemoService, "_started", broken)
    service = DemoService(CORPUS).start()
    with pytest.raises(DemoUnavailable, match="something else"):
        _ = service.url
    service.stop()
