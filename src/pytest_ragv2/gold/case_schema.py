"""The JSON Schema of a case file (``ragv2 schema``), for editors: YAML language servers
read JSON Schema, so a case file is checked and completed as it is typed.
"""

from __future__ import annotations

from typing import Any

from pydantic import RootModel

from pytest_ragv2.gold.schema import Case, Split, StrictModel

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _CaseFileMapping(StrictModel):
    split: Split | None = None
    cases: list[Case]


class _CaseFileDocument(RootModel[list[Case] | _CaseFileMapping]):
    pass


def case_file_json_schema() -> dict[str, Any]:
    """JSON Schema of a case file, for editors (YAML language servers read JSON Schema)."""
    schema = _CaseFileDocument.model_json_schema()
    defs = schema.get("$defs", {})
    claim = defs.get("Claim")
    if claim is not None:  # a plain string is shorthand for {text: ...}
        defs["Claim"] = {
            "anyOf": [{"type": "string"}, {k: v for k, v in claim.items() if k != "title"}],
            "title": claim.get("title", "Claim"),
            "description": claim.get("description", ""),
        }
    evidence = defs.get("Evidence")
    if evidence is not None:
        evidence["anyOf"] = [{"required": ["file_id"]}, {"required": ["filename"]}]
    mapping = defs.get("_CaseFileMapping")
    if mapping is not None:
        defs["CaseFileMapping"] = mapping
        mapping["title"] = "CaseFileMapping"
        del defs["_CaseFileMapping"]
    text = _replace_refs(schema, "#/$defs/_CaseFileMapping", "#/$defs/CaseFileMapping")
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": "pytest-ragv2 case file",
        "description": (
            "A list of gold cases, or {split: development|holdout, cases: [...]}. Without"
            " split, a file whose name contains 'holdout' is holdout, any other development."
        ),
        **{k: v for k, v in text.items() if k != "title"},
    }


def _replace_refs(value: Any, old: str, new: str) -> Any:
    if isinstance(value, dict):
        return {
            k: (new if k == "$ref" and v == old else _replace_refs(v, old, new))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_replace_refs(v, old, new) for v in value]
    return value
