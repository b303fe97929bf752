"""Instruction counts between marker calls, under callgrind: what both callgrind scripts share.

A child Python runs `script --child ...` under `valgrind --tool=callgrind`, calls
`os.getppid()` (a C function nothing else calls) between the pieces to count, and prints a JSON
list naming them as its last line; callgrind dumps its counters before each marker call, so
dump k (1-based) holds what ran before the k-th marker call (dump 1: the start-up).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

MARKER = "os_getppid"  # CPython's C function behind os.getppid()


def marked_counts(script: str, child_args: list[str]) -> tuple[Any, list[int]]:
    """(what the child printed last, parsed as JSON; the instructions of each dump, in order)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed (apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        proc = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                f"--dump-before={MARKER}",
                "--collect-jumps=no",
                sys.executable,
                script,
                "--child",
                *child_args,
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        names = json.loads(proc.stdout.strip().splitlines()[-1])
        totals = []
        for path in sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1])):
            text = Path(path).read_text()
            found = re.search(r"^summary:\s*(\d+)", text, re.M) or re.search(
                r"^totals:\s*(\d+)", text, re.M
            )
            totals.append(int(found.group(1)) if found else 0)
    return names, totals
