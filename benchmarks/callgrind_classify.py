"""classify's cost in instructions per call, per case, under callgrind: repeatable under load.

Run: .venv/bin/python benchmarks/callgrind_classify.py [--calls N] [--json]

Wall-clock times on a shared machine move by ±30%; instruction counts do not. This runs a
child Python under `valgrind --tool=callgrind`, which classifies each case of `_cases.py`
(and the builtins of `bench_classify.py`) N times between two calls of `os.getppid()`, a C
function nothing else here calls: callgrind dumps its counters before each, so each interval
is one case's N calls. Per call = (the interval's count less an empty loop's) / N.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from _callgrind import marked_counts

HERE = Path(__file__).resolve().parent


def child(calls: int) -> None:
    """Runs under callgrind: one interval per case (after a warm-up outside the counts)."""
    sys.path.insert(0, str(HERE))
    import recoverable as rc
    from _cases import CASES
    from bench_classify import BUILTINS

    mark = os.getppid
    classify = rc.classify
    cases = [(case.name, case.build()) for case in CASES]
    cases += [(name, build()) for name, build in BUILTINS]
    for _, exc in cases:
        classify(exc)
        classify(exc)
    names = ["(empty loop)"]
    mark()
    for _ in range(calls):
        pass
    mark()
    for name, exc in cases:
        names.append(name)
        for _ in range(calls):
            classify(exc)
        mark()
    # The mix: every SDK case in turn, `calls` rounds.
    sdk = [exc for _, exc in cases[: len(CASES)]]
    names.append("(mix of the SDK cases, per call)")
    for _ in range(calls):
        for exc in sdk:
            classify(exc)
    mark()
    print(json.dumps(names))


def measure(calls: int) -> list[tuple[str, float]]:
    names, totals = marked_counts(__file__, ["--calls", str(calls)])
    # Dump k (1-based) holds what ran before the k-th marker call: dump 1 is the start-up.
    intervals = totals[1 : 1 + len(names)]
    empty = intervals[0]
    rows = []
    for name, total in zip(names[1:], intervals[1:], strict=True):
        per = (total - empty) / calls
        if name.startswith("(mix"):
            per = (total - empty) / (calls * 13)
        rows.append((name, per))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.calls)
        return 0
    rows = measure(args.calls)
    if args.json:
        print(json.dumps(dict(rows), indent=2))
        return 0
    print("| case | instructions per classify |\n|---|---:|")
    for name, per in rows:
        print(f"| {name} | {per / 1000:.1f}k |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
