"""The language identifier's decompressed model in the user's cache: the same verdicts as
the library's own model, never used when it does not check out, never required."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_ragv2.scoring import language_cache

TEXTS = (
    "Le contrat est prolongé d'un an sauf résiliation écrite.",
    "Die Wartung erfolgt alle zwölf Monate durch den Hersteller.",
    "The warranty covers parts and labour for two years.",
    "Il contratto si rinnova automaticamente ogni anno.",
    "Ja.",
    "",
)


@pytest.fixture(scope="module")
def langid() -> ModuleType:
    return importlib.import_module("py3langid.langid")


@pytest.fixture(scope="module")
def library_identifier(langid: ModuleType) -> Any:
    return langid.LanguageIdentifier.from_model_file(langid.MODEL_FILE, norm_probs=True)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(language_cache.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_stored_model_ranks_every_text_as_the_library_does(
    langid: ModuleType, library_identifier: Any, cache_dir: Path
) -> None:
    assert language_cache.load_cached(langid) is None  # nothing stored yet
    folder = language_cache.store(langid, library_identifier)
    assert folder is not None
    assert folder.parent == cache_dir
    assert sorted(path.name for path in folder.iterdir()) == [
        "meta.json",
        "nextmove.npy",
        "output.npy",
        "pc.npy",
        "ptc.npy",
        "row.npy",
    ]
    cached = language_cache.load_cached(langid)
    assert cached is not None
    assert cached is not library_identifier
    for text in TEXTS:
        assert cached.rank(text) == library_identifier.rank(text)
    assert [entry.name for entry in cache_dir.iterdir()] == [folder.name]  # no leftovers


def test_a_cache_that_does_not_check_out_is_not_used(
    langid: ModuleType, library_identifier: Any, cache_dir: Path
) -> None:
    folder = language_cache.store(langid, library_identifier)
    assert folder is not None
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["probe"][0][1] = 0.5  # another model (or another layout) gives another ranking
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    assert language_cache.load_cached(langid) is None
    (folder / "ptc.npy").write_bytes(b"not an array")
    assert language_cache.load_cached(langid) is None


def test_no_cache_when_it_is_switched_off_or_cannot_be_written(
    langid: ModuleType,
    library_identifier: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(language_cache.CACHE_ENV, "")
    assert language_cache.cache_root() is None
    assert language_cache.store(langid, library_identifier) is None
    assert language_cache.load_cached(langid) is None
    blocked = tmp_path / "a file"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv(language_cache.CACHE_ENV, str(blocked / "cache"))
    assert language_cache.store(langid, library_identifier) is None  # no exception
    monkeypatch.delenv(language_cache.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert language_cache.cache_root() == tmp_path / "xdg" / "pytest-ragv2"


def test_the_second_process_maps_what_the_first_stored(cache_dir: Path) -> None:
    probe = (
        "from pytest_ragv2.scoring.language import _identifier, identify_language\n"
        "guess = identify_language('Der Vertrag endet nach drei Jahren.', ['de', 'fr'])\n"
        "print(type(_identifier().nb_ptc).__name__, guess.language)\n"
    )

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert run() == "ndarray de"  # the library's model, then stored
    assert run() == "memmap de"  # the stored copy, mapped
