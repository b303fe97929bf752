"""What reading an error response costs in memory: `wire.raise_for_error` against the way an
httpx user reads one (`response.read()`, then `raise_for_status`), on a huge error body.

Run: .venv/bin/python benchmarks/bench_client_memory.py [--json] [--mb 256] [--quick]

A server on 127.0.0.1 answers 429 with a body of `--mb` MiB, written 64 KiB at a time (as a
misbehaving proxy would). Each reader streams the response (`client.stream`), in a fresh
process so that peaks do not mix; the table gives the peak RSS growth over the process before
the request, and how much of the body the server could send before the client hung up.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

from _huge_error import huge_error

_READ = """
import json, resource, sys
import httpx
from recoverable import wire
url, how = sys.argv[1], sys.argv[2]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with httpx.Client(timeout=60) as client, client.stream("GET", url) as response:
    if how == "ours":
        try:
            wire.raise_for_error(response)
        except Exception as exc:
            code = exc.detail.code
    else:
        response.read()
        code = response.status_code
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"code": code, "rss_growth_kib": peak - before}))
"""


def measure(mib: int) -> list[dict[str, Any]]:
    rows = []
    with huge_error(mib) as (url, sent):
        for how, label in (("ours", "wire.raise_for_error"), ("read", "response.read()")):
            done = subprocess.run(
                [sys.executable, "-c", _READ, url, how],
                capture_output=True,
                text=True,
                timeout=600,
                check=True,
            )
            result = json.loads(done.stdout)
            rows.append(
                {
                    "reader": label,
                    "body_mib": mib,
                    "rss_growth_mib": round(result["rss_growth_kib"] / 1024, 1),
                    "sent_mib": round(sent[-1] / 1024 / 1024, 1) if sent else None,
                    "code": result["code"],
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--mb", type=int, default=256, help="the error body's size, in MiB")
    parser.add_argument("--quick", action="store_true", help="a 16 MiB body (CI)")
    args = parser.parse_args(argv)
    rows = measure(16 if args.quick else args.mb)
    if args.json:
        print(json.dumps({"rows": rows}))
        return 0
    print("| reader | error body | peak RSS growth | body the server could send | code |")
    print("|---|---:|---:|---:|---|")
    for row in rows:
        print(
            f"| {row['reader']} | {row['body_mib']} MiB | {row['rss_growth_mib']} MiB | "
            f"{row['sent_mib']} MiB | {row['code']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
