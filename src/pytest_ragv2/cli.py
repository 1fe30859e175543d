"""The ``ragv2`` command: work on cases and gold outside a test session.

- ``ragv2 validate`` checks every case file, the gold files and (when there is one) the file
  allow-list, prints each error as ``file:line: case ID: field: message``, and exits 1 when
  there is any error.
- ``ragv2 schema`` prints (or writes) the JSON Schema of a case file for editors.
- ``ragv2 rescore RUN_DIR`` recomputes a run's tables, gates and verdict from its raw runs
  against the current gold (no pytest, no live system) and exits with the verdict.
- ``ragv2 demo serve`` starts the embedded demo retrieval server.

Defaults for ``--cases``/``--gold``/``--allowlist`` come from ``[tool.ragv2]`` in
./pyproject.toml (keys ``cases``, ``gold``, ``allowlist``), else ``cases`` and ``gold``; the
allow-list defaults to ``<gold>/allowlist.yaml`` when that file exists.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tomllib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from pytest_ragv2.allowlist import Allowlist, load_allowlist
from pytest_ragv2.cases import case_file_json_schema, load_catalog
from pytest_ragv2.located_yaml import CaseError, CaseLoadError

DEFAULT_CASES_DIR = "cases"
DEFAULT_GOLD_DIR = "gold"
DEFAULT_ALLOWLIST_NAME = "allowlist.yaml"


def project_settings(pyproject: Path = Path("pyproject.toml")) -> dict[str, Any]:
    """The ``[tool.ragv2]`` table of ``pyproject`` ({} when absent or unreadable)."""
    try:
        with pyproject.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    table = data.get("tool", {}).get("ragv2", {})
    return table if isinstance(table, dict) else {}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def validate(
    cases_dir: Path, gold_dir: Path | None, allowlist_path: Path | None, out: TextIO
) -> int:
    """Print every error and a count per file; 0 when everything is clean, else 1."""
    errors: list[CaseError] = []
    allowlist: Allowlist | None = None
    if allowlist_path is not None:
        try:
            allowlist = load_allowlist(allowlist_path)
        except CaseLoadError as exc:
            errors.extend(exc.errors)
    catalog = load_catalog(cases_dir, gold_dir, allowlist=allowlist)
    errors.extend(catalog.errors)
    for error in errors:
        print(error, file=out)
    if errors:
        print(file=out)

    by_path = Counter(error.path for error in errors)
    for case_file in catalog.files:
        print(
            f"{case_file.path}: {_plural(len(case_file.cases), 'case')} ({case_file.split}), "
            f"{_plural(by_path[case_file.path], 'error')}",
            file=out,
        )
    for gold_file in catalog.gold_files:
        print(f"{gold_file}: {_plural(by_path[gold_file], 'error')}", file=out)
    if allowlist_path is not None:
        listed = f"{_plural(len(allowlist.files), 'file')}, " if allowlist is not None else ""
        print(f"{allowlist_path}: {listed}{_plural(by_path[allowlist_path], 'error')}", file=out)

    total = len(catalog.cases())
    status = "FAILED" if errors else "OK"
    print(f"{status}: {_plural(total, 'case')} loaded, {_plural(len(errors), 'error')}", file=out)
    return 1 if errors else 0


def schema_text() -> str:
    return json.dumps(case_file_json_schema(), indent=2, ensure_ascii=False) + "\n"


def _build_parser(settings: dict[str, Any]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragv2", description="pytest-ragv2: gold cases, schema and demo server."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser(
        "validate", help="check case files, gold files and the allow-list; exit 1 on any error"
    )
    check.add_argument(
        "--cases",
        type=Path,
        default=Path(str(settings.get("cases", DEFAULT_CASES_DIR))),
        help="directory of case files (default: [tool.ragv2] cases, else ./cases)",
    )
    check.add_argument(
        "--gold",
        type=Path,
        default=Path(str(settings.get("gold", DEFAULT_GOLD_DIR))),
        help="directory of answers.yaml/evidence.yaml (default: [tool.ragv2] gold, else ./gold)",
    )
    check.add_argument(
        "--allowlist",
        type=Path,
        default=None,
        help="file allow-list (default: [tool.ragv2] allowlist, else <gold>/allowlist.yaml)",
    )

    schema = commands.add_parser("schema", help="print the JSON Schema of a case file")
    schema.add_argument("--output", type=Path, default=None, help="write to FILE instead of stdout")

    rescore = commands.add_parser(
        "rescore",
        help="recompute a run's gates and verdict from raw-runs/<run-id>; exit with the verdict",
    )
    rescore.add_argument("run_dir", type=Path, help="a raw-runs/<run-id> directory")
    rescore.add_argument(
        "--config",
        default=None,
        help="ragv2.yaml or pyproject.toml with [tool.ragv2] (default: as pytest finds it)",
    )
    rescore.add_argument(
        "--output",
        type=Path,
        default=None,
        help="where to write the summaries (default: <reports>/<run-id>/rescored)",
    )

    demo = commands.add_parser("demo", help="the embedded demo systems")
    demo_commands = demo.add_subparsers(dest="demo_command", required=True, metavar="COMMAND")
    # The arguments after "demo serve" belong to the server; main() hands them over untouched.
    demo_commands.add_parser(
        "serve", help="serve the demo retrieval API (options: ragv2 demo serve --help)"
    )
    return parser


def _default_allowlist(settings: dict[str, Any], gold_dir: Path) -> Path | None:
    configured = settings.get("allowlist")
    if configured:
        return Path(str(configured))
    candidate = gold_dir / DEFAULT_ALLOWLIST_NAME
    return candidate if candidate.is_file() else None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:2] == ["demo", "serve"]:
        # imported here so the CLI never pays for the demo's dependencies otherwise
        server = importlib.import_module("pytest_ragv2.demo.server")
        status: int = server.main(arguments[2:])
        return status
    settings = project_settings()
    args = _build_parser(settings).parse_args(arguments)
    if args.command == "validate":
        allowlist = args.allowlist or _default_allowlist(settings, args.gold)
        return validate(args.cases, args.gold, allowlist, sys.stdout)
    if args.command == "schema":
        text = schema_text()
        if args.output is None:
            sys.stdout.write(text)
        else:
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(text, encoding="utf-8")
            print(f"wrote {args.output}")
        return 0
    if args.command == "rescore":
        return rescore(args.run_dir, args.config, args.output, sys.stdout)
    raise AssertionError(f"unhandled command {args.command!r}")  # argparse requires one


def rescore(run_dir: Path, config: str | None, output: Path | None, out: TextIO) -> int:
    """Rescore a run; print its gates and verdict; 0 when every gate holds, 1 otherwise."""
    from pytest_ragv2.report.tables import gate_table, render_text
    from pytest_ragv2.rescore import rescore_run, write_rescored
    from pytest_ragv2.settings import SettingsError, load_settings

    if not (run_dir / "manifest.json").is_file():
        out.write(f"{run_dir}: not a raw-runs/<run-id> directory (no manifest.json)\n")
        return 2
    try:
        settings = load_settings(Path.cwd(), config)
    except SettingsError as exc:
        out.write(f"{exc}\n")
        return 2
    rescored = rescore_run(run_dir, settings)
    target = output or settings.reports / str(rescored.summary["run_id"]) / "rescored"
    path = write_rescored(rescored, target)
    for line in render_text(gate_table(rescored.gates)):
        out.write(line + "\n")
    out.write(f"verdict: {'PASS' if rescored.passed else 'FAIL'} (summary: {path})\n")
    return 0 if rescored.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
