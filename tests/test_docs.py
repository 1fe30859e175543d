"""The README's examples stay true: its configuration and case examples load."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from pytest_ragv2.config.settings import load_settings
from pytest_ragv2.gold.schema import Case
from tests.conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_configuration_example_is_valid(tmp_path: Path) -> None:
    block = re.search(r"```toml\n(.*?)```", README, re.S)
    assert block is not None
    (tmp_path / "pyproject.toml").write_text(block.group(1), encoding="utf-8")
    settings = load_settings(tmp_path, None)
    assert settings.systems["v1"].role == "baseline"
    assert settings.systems["v2"].role == "candidate"
    assert settings.repetitions == 5


def test_readme_case_example_is_valid() -> None:
    block = re.search(r"```yaml\n(- id: B07.*?)```", README, re.S)
    assert block is not None
    (case,) = yaml.safe_load(block.group(1))
    loaded = Case.model_validate(case)
    assert loaded.all_prompts().keys() == {"en", "de", "fr"}
    assert loaded.evidence[0].page == 2


def test_readme_starts_with_the_two_commands() -> None:
    first_block = README.split("```bash\n", 1)[1].split("```", 1)[0]
    assert "python -m pytest --ragv2-layer=A" in first_block
    assert "python -m pytest -n 2" in first_block
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest -n 2" in ci


CONFIGURATION = (REPO_ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")


def test_configuration_doc_tables_are_current() -> None:
    from pytest_ragv2.config.docs import adapter_tables

    start, end = "<!-- adapter-fields:start -->\n", "<!-- adapter-fields:end -->"
    shown = CONFIGURATION.split(start, 1)[1].split(end, 1)[0]
    assert shown == adapter_tables(), "regenerate docs/configuration.md's adapter tables"


def test_configuration_doc_examples_load(tmp_path: Path) -> None:
    yaml_block = re.search(r"```yaml\n(# ragv2.yaml.*?)```", CONFIGURATION, re.S)
    toml_block = re.search(r"```toml\n(.*?)```", CONFIGURATION, re.S)
    assert yaml_block is not None
    assert toml_block is not None
    (tmp_path / "ragv2.yaml").write_text(yaml_block.group(1), encoding="utf-8")
    settings = load_settings(tmp_path, None)
    assert settings.systems["v2"].retrieval is not None
    assert settings.categories == ["warranty_lookup"]
    (tmp_path / "ragv2.yaml").unlink()
    (tmp_path / "pyproject.toml").write_text(toml_block.group(1), encoding="utf-8")
    assert load_settings(tmp_path, None).systems["v2"].role == "candidate"


def test_committed_config_schema_is_current() -> None:
    from pytest_ragv2.config.docs import config_schema_text

    committed = REPO_ROOT / "schemas" / "ragv2-config.schema.json"
    assert committed.read_text(encoding="utf-8") == config_schema_text(), (
        "regenerate it: ragv2 schema config --output schemas/ragv2-config.schema.json"
    )


def test_the_readme_gate_tables_are_the_declared_gates() -> None:
    """The gates are declared once (``deciding/gate_specs.py``): the README shows them."""
    from pytest_ragv2.deciding.gate_specs import ANSWER_GATES, RETRIEVAL_GATES, gate_table

    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert gate_table(RETRIEVAL_GATES, "gates") in readme
    assert gate_table(ANSWER_GATES, "answer_gates") in readme


def test_every_setting_a_gate_names_is_a_gate_setting() -> None:
    from pytest_ragv2.config.settings import AnswerGateSettings, GateSettings
    from pytest_ragv2.deciding.gate_specs import ANSWER_GATES, RETRIEVAL_GATES

    for gates, model in ((RETRIEVAL_GATES, GateSettings), (ANSWER_GATES, AnswerGateSettings)):
        for gate in gates:
            unknown = [name for name in gate.setting_names if name not in model.model_fields]
            assert unknown == [], (gate.name, unknown)
