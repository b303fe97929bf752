"""What `agents.run` and `recoverable run` add over running the bare CLI, and `recoverable exec`
over a bare Python start, side by side.

Run: .venv/bin/python benchmarks/bench_run.py [--json] [--runs 10] [--stand-in-runs 10]
                                              [--exec-runs 20] [--cli claude codex gemini]

For each CLI, against a FakeProvider on 127.0.0.1 answering `Reply.text` ("Hello from
FakeProvider."), rounds of, interleaved:

  python  `python -c pass`: what starting any Python costs (the reference for (c));
  (a)     the bare CLI: the argv our module builds (`build_argv` + the setup's args), the
          setup's environment, stdout and stderr to files, waited for with `os.wait4`;
  (b)     `agents.run_sync(...)` in this process, the same argv, environment and cwd;
  (c)     `recoverable run "Say hello" --cli NAME --fake` as a subprocess: a Python start,
          its imports, its own FakeProvider and throwaway home, then (b)'s run.

Then the same with a stand-in for the CLI (a shell script that `cat`s the captured
tests/data/cli/NAME/text.stdout), which takes the Node start and its noise away and leaves
the wrapper's own cost; with it also (d) `recoverable run` without --fake (safe: the stand-in
makes no request). (a) and (b) get a fresh throwaway home per run, as (c) makes one, and
share one fake served by a separate process, so that serving takes no time from this
process. Prints a Markdown table per CLI: wall ms, ms added over (a), the CLI's peak RSS and
the peak RSS of the Python process around it. Every process started is waited for and its
process group killed, and no process may be left holding a run's home.

Then `recoverable exec -- true` (an agent's tool call) in rounds with `python -c pass`: its CPU
over a bare Python start. Last, where valgrind is installed, the instructions each Python
process runs itself (callgrind, not its children): `python -c pass`, `recoverable exec -- true`,
and `recoverable run` over the stand-in without and with `--fake`; those counts do not move with
the machine's load, as wall and even CPU time do.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _run_counts import exec_rounds, instruction_counts, print_exec
from _run_procs import (
    REPLY,
    TIMEOUT_S,
    Sample,
    Target,
    cpu_ms,
    fake_server,
    python_env,
    spawn,
    stand_in,
    throwaway_home,
    vm_hwm_kb,
)
from recoverable import agents
from recoverable.agents._cli_modules import module_for
from recoverable.testing import cli_setup

REPO = Path(__file__).resolve().parent.parent
BIN = REPO / "node_modules" / ".bin"
VENV_BIN = Path(sys.executable).parent
PROMPT = "Say hello"
RUNS = 10
STANDIN_RUNS = 10
RSS_RUNS = 2  # fresh Python hosts of (b), for its RSS (VmHWM varies by < 0.1 MB)
EXEC_RUNS = 20
# Issue 15, goal 3: over the bare CLI, less a bare Python start (the same interpreter,
# environment and cwd): `recoverable run` <= +30 ms and <= +20 MB, `--fake` <= +60 ms.
TARGET_RUN_MS = 30.0
TARGET_FAKE_MS = 60.0
TARGET_MB = 20.0

# A fresh Python's own peak RSS: VmHWM, the high-water mark of its own memory map. Not
# ru_maxrss: Linux starts an exec'd process's ru_maxrss at its parent's peak (exec records the
# RSS of the vforked parent's map), so a small child of a big parent reads as big.
HWM = "[print(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')]"
# A fresh Python that hosts (b) once and reports its own peak RSS and its children's.
HOST = """
import json, resource, sys
from recoverable import agents
o = json.loads(sys.argv[1])
r = agents.run_sync(o["prompt"], o["cli"], executable=o["executable"], env=o["env"],
                    inherit_env=False, extra_args=o["args"], cwd=o["cwd"])
hwm = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
print(json.dumps({"ok": r.success and r.text == o["reply"], "self_kb": hwm,
                  "children_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


# -- the things timed ------------------------------------------------------------------------


def run_python(root: str) -> Sample:
    wall, _, usage, _, _ = spawn([sys.executable, "-c", "pass"], python_env(), root)
    return Sample(wall, cpu_ms=cpu_ms(usage))


def python_rss(root: str) -> float:
    """A bare Python's own peak RSS, MB."""
    _, _, _, _, stdout = spawn([sys.executable, "-c", HWM], python_env(), root)
    return int(stdout.split()[0]) / 1024


def run_bare(target: Target, fake: Any, root: str) -> Sample:
    with throwaway_home(root) as home:
        setup = cli_setup(target.cli, fake, home)
        work = os.path.join(home, "work")
        os.makedirs(work)
        options = agents.RunOptions(extra_args=setup.args)
        argv = module_for(target.cli).build_argv(target.executable, PROMPT, options)
        wall, _, usage, _, stdout = spawn(argv, setup.environ(), work)
    if agents.replay(target.cli, stdout).text != REPLY:  # checked after the clock stopped
        raise RuntimeError(f"bare {target.cli}: no reply in its output: {stdout[-500:]!r}")
    return Sample(
        wall, cli_rss_mb=usage.ru_maxrss / 1024 if target.real else None, cpu_ms=cpu_ms(usage)
    )


def run_in_process(target: Target, fake: Any, root: str) -> Sample:
    with throwaway_home(root) as home:
        setup = cli_setup(target.cli, fake, home)
        work = os.path.join(home, "work")
        os.makedirs(work)
        start = time.perf_counter()
        result = agents.run_sync(
            PROMPT,
            target.cli,
            executable=target.executable,
            env=setup.environ(),
            inherit_env=False,
            extra_args=setup.args,
            cwd=work,
            timeout=TIMEOUT_S,
        )
        wall = (time.perf_counter() - start) * 1000
    if not result.success or result.text != REPLY:
        raise RuntimeError(f"agents.run_sync({target.cli}) failed: {result.error}")
    return Sample(wall)


def run_recoverable(target: Target, root: str) -> Sample:
    argv = [str(VENV_BIN / "recoverable"), "run", PROMPT, "--cli", target.cli, "--fake"]
    with throwaway_home(root) as cwd:
        env = python_env()
        env["PATH"] = f"{target.bin_dir}{os.pathsep}{env.get('PATH', '')}"  # found as a user's
        env["TMPDIR"] = cwd  # its throwaway home lands here, where leftovers are looked for
        wall, _, usage, hwm, stdout = spawn(argv, env, cwd, watch_hwm=True)
    if REPLY not in stdout:
        raise RuntimeError(f"recoverable run --cli {target.cli}: no reply: {stdout[-500:]!r}")
    # wait4's ru_maxrss is the largest of the Python process and every process under it.
    return Sample(
        wall,
        cli_rss_mb=usage.ru_maxrss / 1024 if target.real else None,
        python_rss_mb=hwm / 1024 if hwm else None,
        cpu_ms=cpu_ms(usage),
    )


def run_recoverable_plain(target: Target, root: str) -> Sample:
    """`recoverable run` without --fake: only with the stand-in (a real CLI would go out)."""
    argv = [str(VENV_BIN / "recoverable"), "run", PROMPT, "--cli", target.cli]
    with throwaway_home(root) as cwd:
        env = python_env()
        env["PATH"] = f"{target.bin_dir}{os.pathsep}{env.get('PATH', '')}"
        if target.real or shutil.which(target.cli, path=env["PATH"]) != target.executable:
            raise RuntimeError("`recoverable run` without --fake runs only the stand-in")
        wall, _, usage, hwm, stdout = spawn(argv, env, cwd, watch_hwm=True)
    if REPLY not in stdout:
        raise RuntimeError(f"recoverable run --cli {target.cli}: no reply: {stdout[-500:]!r}")
    return Sample(wall, python_rss_mb=hwm / 1024 if hwm else None, cpu_ms=cpu_ms(usage))


def host_rss(target: Target, fake: Any, root: str) -> tuple[float, float]:
    """(Python host's own peak MB, its children's peak MB) for one (b) run in a fresh Python."""
    with throwaway_home(root) as home:
        setup = cli_setup(target.cli, fake, home)
        work = os.path.join(home, "work")
        os.makedirs(work)
        spec = {
            "prompt": PROMPT,
            "cli": target.cli,
            "executable": target.executable,
            "cwd": work,
            "env": setup.environ(),
            "args": list(setup.args),
            "reply": REPLY,
        }
        argv = [sys.executable, "-c", HOST, json.dumps(spec)]
        _, _, _, _, stdout = spawn(argv, python_env(), work)
    report = json.loads(stdout.strip().splitlines()[-1])
    if not report["ok"]:
        raise RuntimeError(f"the fresh host of agents.run_sync({target.cli}) failed")
    return report["self_kb"] / 1024, report["children_kb"] / 1024


# -- one CLI ------------------------------------------------------------------------------------


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def rounds(target: Target, fake: Any, root: str, runs: int) -> dict[str, Any]:
    """`runs` interleaved rounds of the steps (after a warm-up round), summarised.

    *added_ms* is the median over rounds of (step - bare) in the same round: the rounds
    share whatever load the machine had, so the pairs cancel more of it than two medians.
    """
    steps: dict[str, Callable[[], Sample]] = {
        "python": lambda: run_python(root),
        "bare": lambda: run_bare(target, fake, root),
        "in_process": lambda: run_in_process(target, fake, root),
        "recoverable": lambda: run_recoverable(target, root),
    }
    if not target.real:
        steps["recoverable_plain"] = lambda: run_recoverable_plain(target, root)
    for step in steps.values():  # warm up: page cache, .pyc files, the CLI's first start
        step()
    samples: dict[str, list[Sample]] = {name: [] for name in steps}
    for _ in range(runs):
        for name, step in steps.items():
            samples[name].append(step())
    walls = {name: [s.wall_ms for s in items] for name, items in samples.items()}
    out: dict[str, Any] = {}
    for name, items in samples.items():
        out[name] = {
            "median_ms": statistics.median(walls[name]),
            "added_ms": statistics.median(
                x - a for x, a in zip(walls[name], walls["bare"], strict=True)
            ),
            "cli_rss_mb": _median([s.cli_rss_mb for s in items]),
            "python_rss_mb": _median([s.python_rss_mb for s in items]),
            "samples_ms": [round(w, 1) for w in walls[name]],
            "cpu_ms": _median([s.cpu_ms for s in items]),
        }
    for name in ("recoverable", "recoverable_plain"):  # less a bare Python start, paired
        if name in walls:
            out[name]["added_after_python_ms"] = statistics.median(
                c - a - p
                for c, a, p in zip(walls[name], walls["bare"], walls["python"], strict=True)
            )
            cpus = {
                key: [s.cpu_ms or 0.0 for s in samples[key]] for key in (name, "bare", "python")
            }
            out[name]["added_cpu_after_python_ms"] = statistics.median(
                c - a - p for c, a, p in zip(cpus[name], cpus["bare"], cpus["python"], strict=True)
            )
    return {"runs": runs, **out}


def bench_cli(
    cli: str, runs: int, standin_runs: int, root: str, *, counts: bool = True
) -> dict[str, Any]:
    real = Target(cli, BIN, real=True)
    with fake_server() as fake:
        out = {"real": rounds(real, fake, root, runs)}
        hosts = [host_rss(real, fake, root) for _ in range(RSS_RUNS)]
        bare_python = [python_rss(root) for _ in range(RSS_RUNS)]
        if standin_runs:
            out["stand_in"] = rounds(stand_in(cli, root), fake, root, standin_runs)
    if counts:
        out["instructions"] = instruction_counts(
            stand_in(cli, root).bin_dir if standin_runs else None, cli, root
        )
    out["rss"] = {
        "runs": RSS_RUNS,
        "bare_python_mb": statistics.median(bare_python),
        "host_python_mb": statistics.median(h[0] for h in hosts),
        "host_cli_mb": statistics.median(h[1] for h in hosts),
    }
    return out


@dataclass(frozen=True, slots=True)
class Row:
    """One line of a CLI's table; None is an empty cell."""

    path: str
    ms: float | None = None
    added_ms: float | None = None
    cli_mb: float | None = None
    python_mb: float | None = None
    added_mb: float | None = None


def rows(cli: str, r: dict[str, Any]) -> list[Row]:
    """The table's rows, from one CLI's summaries."""
    rss = r["rss"]
    py_mb = rss["bare_python_mb"]
    out = [Row("`python -c pass` (reference)", r["real"]["python"]["median_ms"], python_mb=py_mb)]
    for kind in ("real", "stand_in"):
        if kind not in r:
            continue
        s, real = r[kind], kind == "real"
        bare, inproc = s["bare"], s["in_process"]
        what = f"`{cli}`" if real else f"stand-in `{cli}` (`cat` of text.stdout)"
        host_mb = rss["host_python_mb"] if real else None  # measured with the real CLI
        out += [
            Row(f"(a) bare {what}", bare["median_ms"], 0.0, bare["cli_rss_mb"], added_mb=0.0),
            Row(
                "(b) `agents.run_sync` in-process",
                inproc["median_ms"],
                inproc["added_ms"],
                rss["host_cli_mb"] if real else None,
                host_mb,
                None if host_mb is None else host_mb - py_mb,
            ),
        ]
        commands = [("recoverable", "(c) `recoverable run --fake`")]
        if "recoverable_plain" in s:
            commands.append(("recoverable_plain", "(d) `recoverable run`, no --fake"))
        for key, label in commands:
            c, c_mb = s[key], s[key]["python_rss_mb"]
            out += [
                Row(label, c["median_ms"], c["added_ms"], c["cli_rss_mb"], c_mb, c_mb),
                Row(
                    f"{label[:3]} less a bare Python start",
                    added_ms=c["added_after_python_ms"],
                    added_mb=None if c_mb is None else c_mb - py_mb,
                ),
            ]
    return out


def _num(value: float | None, digits: int = 1) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _verdict(value: float | None, limit: float) -> str:
    return "n/a" if value is None else ("ok" if value <= limit else "OVER")


def print_tables(results: dict[str, dict[str, Any]], runs: int, standin_runs: int) -> None:
    print("# What `agents.run` and `recoverable run` add over the bare CLI\n")
    print(
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} "
        f"CPUs; per CLI {runs} interleaved rounds with the real CLI and {standin_runs} with "
        "a stand-in, each after a warm-up round; prompt "
        f"{PROMPT!r}, FakeProvider replying {REPLY!r}.\n"
    )
    for cli, r in results.items():
        print(f"## {cli}\n")
        print(
            "| path | median wall ms | added ms | CLI peak RSS MB | Python peak RSS MB "
            "| RSS added MB |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        for row in rows(cli, r):
            cells = (row.ms, row.added_ms, row.cli_mb, row.python_mb, row.added_mb)
            print(f"| {row.path} | {' | '.join(_num(cell) for cell in cells)} |")
        rss = r["rss"]
        b_mb = rss["host_python_mb"] - rss["bare_python_mb"]
        parts = []
        for kind, label in (("real", "real CLI"), ("stand_in", "stand-in")):
            s = r.get(kind, {})
            for key, name, limit in (
                ("recoverable_plain", "(d) `recoverable run`", TARGET_RUN_MS),
                ("recoverable", "(c) `--fake`", TARGET_FAKE_MS),
            ):
                if key in s:
                    ms, cpu = s[key]["added_after_python_ms"], s[key]["added_cpu_after_python_ms"]
                    parts.append(
                        f"{label} {name} wall {ms:+.1f} ms {_verdict(ms, limit)}, CPU "
                        f"{cpu:+.1f} ms {_verdict(cpu, limit)} (<= +{limit:.0f} ms)"
                    )
        plain = r.get("stand_in", {}).get("recoverable_plain", {}).get("python_rss_mb")
        d_mb = None if plain is None else plain - rss["bare_python_mb"]
        counts = r.get("instructions", {})
        if counts.get("python"):
            base = counts["python"]
            over = ", ".join(
                f"{name} {(count - base) / 1e6:+.1f}M"
                for name, count in counts.items()
                if name != "python" and count
            )
            print(f"\nInstructions over `python -c pass` ({base / 1e6:.1f}M): {over}.")
        print(
            "\nGoal 3, each over (a) less that round's bare Python start (`python -c pass`: the "
            "same interpreter, environment and cwd), median of the rounds; CPU is user + sys "
            f"of the process and all it waited for (load-proof): {'; '.join(parts)}; RSS (d) "
            f"over a bare Python {_num(d_mb)} MB {_verdict(d_mb, TARGET_MB)} "
            f"(<= +{TARGET_MB:.0f} MB); (b) in-process over a bare Python {b_mb:.1f} MB.\n"
        )
    own = vm_hwm_kb(os.getpid())
    print(
        "*Instructions*: callgrind's count of the Python process alone (not the CLI it runs), "
        "after a warm run: the same to well under 1% on a loaded machine, where wall and CPU "
        "time grow with the load.\n"
    )
    print(
        "What the numbers are. *Wall*: from spawn (or the call) to the exit being reaped; "
        "median. *Added ms*: the median over rounds of (this path - (a)) within the same "
        "round (the noise of a Node CLI's start is ~±100 ms here, so read the real-CLI "
        "rows' added ms as ± tens of ms; the stand-in, a shell script that `cat`s the "
        "captured `tests/data/cli/<cli>/text.stdout`, has no Node start and measures the "
        "wrapper alone to ~1 ms). *Less a bare Python start*: also takes off that round's "
        "`python -c pass`, which any Python wrapper pays. (c) also imports the CLI, starts "
        "its own FakeProvider thread and makes its own throwaway home; (a) and (b) have "
        "theirs made before the clock starts and share a fake served by another process. "
        "*CLI peak RSS*: `ru_maxrss` from `os.wait4` (for (b): `RUSAGE_CHILDREN` of a fresh "
        "Python hosting one run), which Linux gives as the largest single process among the "
        "one waited for and the children it waited for, not a sum; for (c) that includes "
        "the `recoverable` process. It also starts at the spawning parent's peak (exec "
        "records the vforked parent's map), so it is the CLI's only when above that: this "
        f"process peaked at {_num(own / 1024 if own else None)} MB (and no stand-in row "
        "shows it). *Python peak RSS*: the process's own VmHWM (the high-water mark of its "
        "own memory map; not `ru_maxrss`, for the reason above): for the bare Python and "
        f"(b) read by a fresh Python at its end (median of {RSS_RUNS}; (b)'s imports "
        "`recoverable.agents` and makes the same run with the real CLI), for (c) sampled "
        "every 2 ms while `recoverable` runs. *RSS added*: what the bare CLI does not have: "
        "for (b) the host's peak over a bare Python (an application calling `agents.run` "
        "already has the interpreter), for (c) the whole `recoverable` process, and on its "
        "last row that peak over a bare Python."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    parser.add_argument(
        "--runs", type=int, default=RUNS, help=f"rounds per CLI with the real CLI ({RUNS})"
    )
    parser.add_argument(
        "--stand-in-runs",
        type=int,
        default=STANDIN_RUNS,
        help=f"rounds with the stand-in ({STANDIN_RUNS}; 0: none)",
    )
    parser.add_argument(
        "--no-counts", action="store_true", help="no instruction counts (callgrind: ~1 min)"
    )
    parser.add_argument(
        "--exec-runs", type=int, default=EXEC_RUNS, help=f"rounds of exec ({EXEC_RUNS})"
    )
    parser.add_argument(
        "--cli", nargs="+", default=list(agents.CLI_NAMES), choices=agents.CLI_NAMES
    )
    args = parser.parse_args(argv)
    missing = [cli for cli in args.cli if not (BIN / cli).exists()]
    if missing:
        parser.error(f"not installed in {BIN}: {', '.join(missing)} (npm install in {REPO})")
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-run-") as root:
        for cli in args.cli:
            results[cli] = bench_cli(
                cli, args.runs, args.stand_in_runs, root, counts=not args.no_counts
            )
        exec_data = exec_rounds(root, args.exec_runs)
    if args.json:
        payload = {
            cli: {**r, "rows": [asdict(row) for row in rows(cli, r)]} for cli, r in results.items()
        }
        print(
            json.dumps(
                {
                    "python": platform.python_version(),
                    "runs": args.runs,
                    "stand_in_runs": args.stand_in_runs,
                    "results": payload,
                    "exec": exec_data,
                },
                indent=2,
            )
        )
    else:
        print_tables(results, args.runs, args.stand_in_runs)
        print_exec(exec_data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
