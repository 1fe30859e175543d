"""The ``ragv2`` command: work on cases and gold outside a test session.

- ``ragv2 validate`` checks every case file, the gold files and (when there is one) the file
  allow-list, prints each error as ``file:line: case ID: field: message``, and exits 1 when
  there is any error.
- ``ragv2 schema`` prints (or writes) the JSON Schema of a case file for editors;
  ``ragv2 schema config`` that of the configuration, ``ragv2 schema summary`` that of
  summary.json and ``ragv2 schema raw-run`` that of a raw-run line.
- ``ragv2 rescore RUN_DIR`` recomputes a run's tables, gates and verdict from its raw runs
  against the current gold (no pytest, no live system) and exits with the verdict.
- ``ragv2 compare RUN_A RUN_B`` compares two runs, rescored with one configuration: per
  system and metric the paired difference b − a with its interval, the cases that changed
  outcome, the vetoes that appeared or went (:mod:`pytest_ragv2.tools.compare`); exits 0.
- ``ragv2 merge RUN_DIR …`` makes one decision from every shard of a run
  (``--ragv2-shard``), refusing shards that do not make one run (:mod:`pytest_ragv2.tools.merge`).
- ``ragv2 export trec RUN_DIR`` writes TREC run and qrels files of a layer-A run
  (:mod:`pytest_ragv2.tools.export_trec`) for trec_eval or ranx.
- ``ragv2 demo serve`` starts the embedded demo retrieval server.

Configuration is read as the plugin reads it (:func:`pytest_ragv2.config.settings.load_settings`):
``--config PATH``, else ``ragv2.yaml`` (or ``ragv2.yml``), else ``[tool.ragv2]`` of
``pyproject.toml`` in the current folder, relative paths taken from the file's folder.
``validate``'s ``--cases``/``--gold``/``--allowlist`` override it. ``rescore`` uses the
configuration the run was made with, as its manifest records it (``--config`` overrides).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pytest_ragv2.config.file import SettingsError
from pytest_ragv2.config.inputs import present
from pytest_ragv2.tools.settings import load_cli_settings, rescore_settings

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings

ALLOWLIST_NAME = "allowlist.yaml"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _shown(path: Path, cwd: Path) -> Path:
    """A path as the user reads it: relative to the current folder when inside it."""
    try:
        return path.relative_to(cwd)
    except ValueError:
        return path


def validate(
    cases_dir: Path,
    gold_dir: Path | None,
    allowlist_path: Path | None,
    out: TextIO,
    *,
    config: Path | None = None,
    systems: Sequence[str] = (),
    categories: Sequence[str] = (),
) -> int:
    """Print every error and a count per file; 0 when everything is clean, else 1.
    ``systems`` (the configured ones) are what an adjudication may name; ``categories``
    the project's own, beside the documented ones."""
    from pytest_ragv2.config.located_yaml import CaseError, CaseLoadError
    from pytest_ragv2.gold.allowlist import Allowlist, load_allowlist
    from pytest_ragv2.gold.cases import load_catalog, warning_text

    errors: list[CaseError] = []
    allowlist: Allowlist | None = None
    if allowlist_path is not None:
        try:
            allowlist = load_allowlist(allowlist_path)
        except CaseLoadError as exc:
            errors.extend(exc.errors)
    catalog = load_catalog(cases_dir, gold_dir, allowlist=allowlist, categories=categories)
    errors.extend(catalog.errors)
    if systems and catalog.adjudications:
        errors.extend(catalog.adjudications.check_systems(systems)[1])
    for error in errors:
        print(error, file=out)
    for warning in catalog.warnings:  # they fail nothing
        print(warning_text(warning), file=out)
    if errors or catalog.warnings:
        print(file=out)

    by_path = Counter(error.path for error in errors)
    for case_file in catalog.files:
        warned = f", {_plural(len(case_file.warnings), 'warning')}" if case_file.warnings else ""
        split = "excluded: invalid split" if case_file.excluded else case_file.split
        print(
            f"{case_file.path}: {_plural(len(case_file.cases), 'case')} ({split}), "
            f"{_plural(by_path[case_file.path], 'error')}{warned}",
            file=out,
        )
    for gold_file in catalog.gold_files:
        print(f"{gold_file}: {_plural(by_path[gold_file], 'error')}", file=out)
    if allowlist_path is not None:
        listed = f"{_plural(len(allowlist.files), 'file')}, " if allowlist is not None else ""
        print(f"{allowlist_path}: {listed}{_plural(by_path[allowlist_path], 'error')}", file=out)
    if config is not None:
        print(f"configuration: {config}", file=out)

    total = len(catalog.cases())
    status = "FAILED" if errors else "OK"
    warned = f", {_plural(len(catalog.warnings), 'warning')}" if catalog.warnings else ""
    print(
        f"{status}: {_plural(total, 'case')} loaded, {_plural(len(errors), 'error')}{warned}",
        file=out,
    )
    return 1 if errors else 0


def schema_text() -> str:
    from pytest_ragv2.gold.case_schema import case_file_json_schema

    return json.dumps(case_file_json_schema(), indent=2, ensure_ascii=False) + "\n"


def config_schema_text() -> str:
    from pytest_ragv2.config.docs import config_schema_text as text

    return text()


def summary_schema_text() -> str:
    from pytest_ragv2.report.summary_document import summary_schema

    return json.dumps(summary_schema(), indent=2, ensure_ascii=False) + "\n"


def raw_run_schema_text() -> str:
    from pytest_ragv2.run.raw_models import raw_run_schema

    return json.dumps(raw_run_schema(), indent=2, ensure_ascii=False) + "\n"


# ragv2 schema WHAT: each committed as schemas/<file> (a test keeps them current)
SCHEMAS: dict[str, Callable[[], str]] = {
    "case": schema_text,
    "config": config_schema_text,
    "summary": summary_schema_text,
    "raw-run": raw_run_schema_text,
}
SCHEMA_FILES = {
    "case": "case-file.schema.json",
    "config": "ragv2-config.schema.json",
    "summary": "summary.schema.json",
    "raw-run": "raw-run.schema.json",
}


def validate_paths(
    settings: Settings,
    raw: dict[str, Any],
    cwd: Path,
    *,
    cases: Path | None = None,
    gold: Path | None = None,
    allowlist: Path | None = None,
) -> tuple[Path, Path, Path | None]:
    """Cases, gold and allow-list to check: the command line's, else the configuration's.

    The configured allow-list is checked when the file exists, or when the configuration
    names one explicitly (a missing file is then an error). With ``--gold`` and no
    allow-list named anywhere, ``<gold>/allowlist.yaml`` is checked when it exists.
    """
    cases_dir = cases if cases is not None else _shown(settings.cases, cwd)
    gold_dir = gold if gold is not None else _shown(settings.gold, cwd)
    if allowlist is not None:
        return cases_dir, gold_dir, allowlist
    configured = "allowlist" in raw
    if gold is not None and not configured:
        beside = gold / ALLOWLIST_NAME
        return cases_dir, gold_dir, beside if present(beside) else None
    path = settings.allowlist
    if path is None or not (configured or present(path)):
        return cases_dir, gold_dir, None
    return cases_dir, gold_dir, _shown(path, cwd)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragv2", description="pytest-ragv2: gold cases, schema and demo server."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    config_help = "ragv2.yaml or pyproject.toml with [tool.ragv2] (default: ./ragv2.yaml, else"

    validate_help = (
        "check case files, gold files and the allow-list; exit 0 when they are valid, 1 on "
        "any error in them, 2 on a configuration error (no file is then checked)"
    )
    check = commands.add_parser("validate", help=validate_help, description=validate_help)
    check.add_argument(
        "--config", default=None, help=f"{config_help} ./pyproject.toml, as the plugin reads it)"
    )
    check.add_argument(
        "--cases", type=Path, default=None, help="directory of case files (default: configured)"
    )
    check.add_argument(
        "--gold",
        type=Path,
        default=None,
        help="directory of answers.yaml/evidence.yaml (default: configured)",
    )
    check.add_argument(
        "--allowlist",
        type=Path,
        default=None,
        help="file allow-list (default: configured; with --gold, <gold>/allowlist.yaml)",
    )

    schema = commands.add_parser(
        "schema",
        help="print the JSON Schema of a case file, the configuration, summary.json or a "
        "raw-run line",
    )
    schema.add_argument(
        "what",
        nargs="?",
        choices=tuple(SCHEMAS),
        default="case",
        help="(default: case)",
    )
    schema.add_argument("--output", type=Path, default=None, help="write to FILE instead of stdout")

    rescore = commands.add_parser(
        "rescore",
        help="recompute a run's gates and verdict from raw-runs/<run-id>; exit with the verdict",
    )
    rescore.add_argument("run_dir", type=Path, help="a raw-runs/<run-id> directory")
    rescore.add_argument(
        "--config",
        default=None,
        help="ragv2.yaml or pyproject.toml with [tool.ragv2] (default: the configuration the"
        " run's manifest records)",
    )
    rescore.add_argument(
        "--output",
        type=Path,
        default=None,
        help="where to write the summaries (default: <reports>/<run-id>/rescored)",
    )

    compare = commands.add_parser(
        "compare",
        help="compare two runs: per system and metric the paired difference b - a with its "
        "interval, changed outcomes, vetoes; writes <reports>/compare-<a>-vs-<b>; exit 0",
    )
    compare.add_argument("run_a", type=Path, help="the earlier raw-runs/<run-id> directory")
    compare.add_argument("run_b", type=Path, help="the later raw-runs/<run-id> directory")
    compare.add_argument(
        "--config",
        default=None,
        help="ragv2.yaml or pyproject.toml with [tool.ragv2] for both runs (default: the"
        " configuration run a's manifest records)",
    )
    compare.add_argument(
        "--output",
        type=Path,
        default=None,
        help="where to write the comparison (default: <reports>/compare-<a>-vs-<b>)",
    )

    merge = commands.add_parser(
        "merge",
        help="one decision from every shard of a run (--ragv2-shard): checks the shards, "
        "writes raw-runs/<run-id> and its reports; exits with the verdict",
    )
    merge.add_argument(
        "run_dirs", type=Path, nargs="+", metavar="RUN_DIR", help="each shard's raw-runs/<id>"
    )
    merge.add_argument(
        "--config",
        default=None,
        help="ragv2.yaml or pyproject.toml with [tool.ragv2] (default: the configuration the"
        " first shard's manifest records)",
    )
    merge.add_argument(
        "--run-id", default=None, help="the merged run's id (default: UTC time + seed)"
    )

    freeze = commands.add_parser(
        "freeze",
        help="freeze one system's evidence of a layer-A run into a package for layer C",
    )
    freeze.add_argument("run_dir", type=Path, help="a raw-runs/<run-id> directory of layer A")
    freeze.add_argument("--system", required=True, help="the system whose evidence to freeze")
    freeze.add_argument("--k", type=int, default=5, help="items per case and language (5)")
    freeze.add_argument(
        "--output", type=Path, default=None, help="the package (default: evidence/<run-id>.json)"
    )

    lock = commands.add_parser(
        "freeze-gates",
        help="freeze the gates, cases, gold and repetitions in ragv2-gates.lock.json before "
        "the holdout run (refused once the holdout was seen)",
    )
    lock.add_argument("--config", default=None, help=f"{config_help} ./pyproject.toml)")

    export = commands.add_parser("export", help="export a run for other tools")
    formats = export.add_subparsers(dest="export_format", required=True, metavar="FORMAT")
    trec = formats.add_parser(
        "trec", help="TREC run and qrels files of a layer-A run, for trec_eval or ranx"
    )
    trec.add_argument("run_dir", type=Path, help="a raw-runs/<run-id> directory of layer A")
    trec.add_argument(
        "--config", default=None, help="as for rescore (default: the run's configuration)"
    )
    trec.add_argument(
        "--out", type=Path, default=None, help="folder to write (default: <reports>/<run-id>/trec)"
    )

    demo = commands.add_parser("demo", help="the embedded demo systems")
    demo_commands = demo.add_subparsers(dest="demo_command", required=True, metavar="COMMAND")
    # The arguments after "demo serve" belong to the server; main() hands them over untouched.
    demo_commands.add_parser(
        "serve", help="serve the demo retrieval API (options: ragv2 demo serve --help)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:2] == ["demo", "serve"]:
        # imported here so the CLI never pays for the demo's dependencies otherwise
        server = importlib.import_module("ragv2_demo.server")
        status: int = server.main(arguments[2:])
        return status
    args = _build_parser().parse_args(arguments)
    if args.command == "validate":
        return _validate_command(args)
    if args.command == "schema":
        text = SCHEMAS[args.what]()
        if args.output is None:
            sys.stdout.write(text)
        else:
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(text, encoding="utf-8")
            print(f"wrote {args.output}")
        return 0
    if args.command == "rescore":
        return rescore(args.run_dir, args.config, args.output, sys.stdout)
    if args.command == "compare":
        from pytest_ragv2.tools.compare import compare_command

        return compare_command(args.run_a, args.run_b, args.config, args.output, sys.stdout)
    if args.command == "merge":
        from pytest_ragv2.tools.merge import merge_command

        return merge_command(args.run_dirs, args.config, args.run_id, sys.stdout)
    if args.command == "freeze":
        from pytest_ragv2.layers.frozen.package import freeze_command

        return freeze_command(args.run_dir, args.system, args.k, args.output, sys.stdout)
    if args.command == "export":
        from pytest_ragv2.tools.export_trec import export_command

        return export_command(args.run_dir, args.config, args.out, sys.stdout)
    if args.command == "freeze-gates":
        return _freeze_gates_command(args.config, sys.stdout)
    raise AssertionError(f"unhandled command {args.command!r}")  # argparse requires one


def _freeze_gates_command(config: str | None, out: TextIO) -> int:
    from pytest_ragv2.deciding.formal import ProtocolError, freeze_gates, lock_path

    cwd = Path.cwd().resolve()
    try:
        settings, _ = load_cli_settings(cwd, config)
        path = lock_path(settings, cwd)
        lock = freeze_gates(settings, cwd, path)
    except (SettingsError, ProtocolError) as exc:
        out.write(f"{exc}\n")
        return 2
    out.write(
        f"froze the gates, {lock.fingerprint.repetitions or 'the default'} repetition(s), the "
        f"cases and the gold in {_shown(path, cwd)} (commit {lock.commit or 'unknown'}); "
        "commit it with the project\n"
    )
    return 0


def _validate_command(args: argparse.Namespace) -> int:
    cwd = Path.cwd().resolve()
    try:
        settings, raw = load_cli_settings(cwd, args.config)
        cases, gold, allowlist = validate_paths(
            settings, raw, cwd, cases=args.cases, gold=args.gold, allowlist=args.allowlist
        )
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    source = _shown(settings.source, cwd) if settings.source is not None else None
    return validate(
        cases,
        gold,
        allowlist,
        sys.stdout,
        config=source,
        systems=list(settings.systems),
        categories=settings.categories,
    )


def rescore(run_dir: Path, config: str | None, output: Path | None, out: TextIO) -> int:
    """Rescore a run; print its gates and verdict; 0 when every gate holds, 1 otherwise."""
    from pytest_ragv2.report.adjudication import adjudication_lines
    from pytest_ragv2.report.tables import gate_table
    from pytest_ragv2.report.text_table import render_text
    from pytest_ragv2.run.rawruns import MANIFEST_NAME
    from pytest_ragv2.tools.rescore import rescore_run, write_rescored

    manifest_path = run_dir / MANIFEST_NAME
    if not manifest_path.is_file():
        out.write(f"{run_dir}: not a raw-runs/<run-id> directory (no manifest.json)\n")
        return 2
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        settings, which = rescore_settings(run_dir, manifest, config, Path.cwd().resolve())
    except (OSError, ValueError) as exc:  # SettingsError and JSON errors are ValueErrors
        out.write(f"{exc}\n")
        return 2
    out.write(f"configuration: {which}\n")
    rescored = rescore_run(run_dir, settings)
    target = output or settings.reports / str(rescored.summary.run_id) / "rescored"
    path = write_rescored(rescored, target)
    for summary in rescored.summaries.values():  # the reviewers' rulings, before the gates
        for line in adjudication_lines(summary):
            out.write(line + "\n")
    for line in render_text(gate_table(rescored.gates)):
        out.write(line + "\n")
    out.write(f"verdict: {'PASS' if rescored.passed else 'FAIL'} (summary: {path})\n")
    return 0 if rescored.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
