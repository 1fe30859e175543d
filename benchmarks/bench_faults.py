"""The observed figures of docs/robustness.md: every fault against every HTTP adapter, and the
interrupt, disk and run-folder probes.

Runs the fault-injection suite's sessions (tests/run/test_fault_injection.py: one loopback
server, one case per fault) serially and under -n 2 for each layer, and prints per fault the
error kind each adapter recorded and the longest run, per session the exit status, wall time
and the process tree's peak RSS, and per output surface the secrets, control characters and
live HTML found. Then runs the planted-secret sessions (tests/systems/test_url_secrets.py: every
form of every credential, log_cli at INFO and DEBUG, -n 2, -l) and prints per session its
wall time and per channel the planted forms found. Then the side routes
(tests/systems/test_bounded_requests.py): a session per route answering a gzip bomb (``/ids``,
``/documents``, ``/models``) with its peak RSS, and a session interrupted while its
ceiling's ``/documents`` listing hangs, with the time from the signal to its exit. Finally
the interrupt, disk and run-folder tests with their outcomes and durations.

    python benchmarks/bench_faults.py [--sessions A-0,A-2,B-0,B-2] [--no-planted]
        [--no-side-routes] [--no-probes]
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.run.test_fault_injection import (  # noqa: E402
    CONTROL,
    DEADLINE_S,
    EXPECTED,
    HTML_SURFACES,
    LAYER_A,
    LAYER_B,
    LIVE_IMG,
    SURFACES,
    TAGS,
    Session,
    applies,
    leaks,
    run_session,
    secrets_of,
)
from tests.systems.test_bounded_requests import (  # noqa: E402
    SIDE_BOMB_BYTES,
    SIDE_ROUTES,
    bombed_side_route,
    interrupted_ceiling_read,
)
from tests.systems.test_url_secrets import (  # noqa: E402
    PLANTED_CHANNELS,
    PLANTED_SESSIONS,
    planted_labels,
    planted_leaks,
    run_planted_session,
)

PROBES = [
    "tests/plugin/test_signals.py",
    "tests/run/test_disk_faults.py",
    "tests/run/test_rawruns.py",
    "tests/run/test_resume.py",
]


def report_session(session: Session, label: str) -> None:
    tags = list(LAYER_A.values() if session.layer == "A" else LAYER_B.values())
    names = {tag: adapter for adapter, tag in TAGS.items()}
    runs = session.runs()
    print(
        f"\n## session {label}: exit {session.exit_status}, wall {session.wall_s:.1f} s, "
        f"peak RSS {session.peak_rss_mb:.0f} MB (process tree), "
        f"{len(runs)} of {len(tags) * len(session.faults)} runs recorded, "
        f"knowledge-base searches run {session.searches}"
    )
    print(f"{'fault':<18} {'expected':<12} " + " ".join(f"{names[tag]:<22}" for tag in tags))
    for fault in session.faults:
        cells = []
        for tag in tags:
            if not applies(tag, fault):
                cells.append(f"{'-':<22}")
                continue
            run = runs.get((tag, fault))
            if run is None:
                cells.append(f"{'LOST':<22}")
                continue
            kind = (run.get("error") or {}).get("kind") or "ok"
            flag = "" if kind == (EXPECTED[fault] or "ok") else "!"
            latency = float(run["latency_s"])
            over = "" if latency <= DEADLINE_S + 1 else " OVER"
            cell = f"{flag}{kind} {latency:.2f}s{over}"
            cells.append(f"{cell:<22}")
        print(f"{fault:<18} {EXPECTED[fault] or 'ok':<12} " + " ".join(cells))
    secrets = [secret for tag in tags for secret in secrets_of(session, tag)]
    written = session.written()
    print(f"{'surface':<14} {'secrets':>8} {'control':>8} {'live html':>10}")
    for name, belongs in SURFACES.items():
        texts = [text for path, text in written.items() if belongs(path)]
        found_secrets = sum(len(leaks(text, secrets)) for text in texts)
        control = sum(len(CONTROL.findall(text)) for text in texts)
        html = sum(len(LIVE_IMG.findall(text)) for text in texts) if name in HTML_SURFACES else "-"
        print(f"{name:<14} {found_secrets:>8} {control:>8} {html!s:>10}")


def report_planted(directory: Path) -> None:
    """Each planted-secret session: its wall time, and per channel the planted forms found
    (each named by the value it belongs to and the form it took)."""
    for key, options in PLANTED_SESSIONS.items():
        started = time.monotonic()
        session = run_planted_session(directory / f"planted-{key}", options)
        wall_s = time.monotonic() - started
        print(f"\n## planted secrets, {key}: exit {session.exit_status}, wall {wall_s:.1f} s")
        labels = planted_labels(session.minted)
        written = session.written()
        print(f"{'channel':<14} {'forms':>6}  which")
        for channel, belongs in PLANTED_CHANNELS.items():
            found = sorted(
                {
                    labels.get(form, form)
                    for name, text in written.items()
                    if belongs(name)
                    for form in planted_leaks(text, session.minted)
                }
            )
            print(f"{channel:<14} {len(found):>6}  {', '.join(found)}")


def report_side_routes(directory: Path) -> None:
    print(f"\n## side routes: a gzip bomb ({SIDE_BOMB_BYTES // 2**20} MB inflated) on each")
    for route, layer in SIDE_ROUTES.items():
        ended = bombed_side_route(directory / f"side-{route}", route)
        warned = "preflight warning (too_large)" if "(too_large)" in ended.text else "-"
        print(
            f"/{route:<10} layer {layer}: exit {ended.status}, wall {ended.seconds:.1f} s, "
            f"peak RSS {ended.peak_rss_mb:.0f} MB (process tree), {warned}"
        )
    print("\n## an interrupt while the ceiling's /documents listing hangs (timeout_s = 30)")
    for sent in (signal.SIGTERM, signal.SIGINT):
        ended = interrupted_ceiling_read(directory / f"ceiling-{sent.name}", sent)
        print(
            f"{sent.name:<8} exit {ended.status}, {ended.seconds:.2f} s from the signal to "
            f"the exit, traceback: {'Traceback' in ended.text}"
        )


def report_probes() -> None:
    print("\n## interrupt, disk and run-folder probes")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-rA",
            "--durations=0",
            "--durations-min=0",
            *PROBES,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    durations = re.findall(r"^([\d.]+)s call\s+(\S+)$", done.stdout, re.MULTILINE)
    outcomes = dict(
        (test, outcome)
        for outcome, test in re.findall(
            r"^(PASSED|FAILED|XFAIL|SKIPPED|ERROR) (\S+)", done.stdout, re.MULTILINE
        )
    )
    for seconds, test in sorted(durations, key=lambda pair: pair[1]):
        print(f"{outcomes.get(test, '?'):<8} {float(seconds):6.2f} s  {test}")
    print(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", default="A-0,A-2,B-0,B-2", help="layer-workers, ...")
    parser.add_argument("--no-planted", action="store_true")
    parser.add_argument("--no-side-routes", action="store_true")
    parser.add_argument("--no-probes", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        for label in filter(None, args.sessions.split(",")):
            layer, workers = label.split("-")
            session = run_session(Path(directory) / label, layer, int(workers))
            report_session(
                session, f"layer {layer}, " + (f"-n {workers}" if int(workers) else "serial")
            )
        if not args.no_planted:
            report_planted(Path(directory))
        if not args.no_side_routes:
            report_side_routes(Path(directory))
    if not args.no_probes:
        report_probes()


if __name__ == "__main__":
    main()
