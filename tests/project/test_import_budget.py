"""What `recoverable run` imports: only what a run needs, counted (never timed).

`recoverable run` against a stand-in CLI (a shell script printing a captured Claude stream)
in a fresh Python that lists, at exit, every module loaded after its own start. The lists are
deterministic, so these tests hold the command to its import budget; the time each import
costs is measured in benchmarks/bench_run.py, never asserted.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from recoverable.testing import FakeProvider

DATA = Path(__file__).parents[1] / "data" / "cli"

# Runs the command in-process, then prints the modules it loaded (the interpreter's own start
# and this wrapper's `sys`/`json`/`atexit` excluded).
_WRAPPER = """
import atexit, json, sys
before = set(sys.modules)
atexit.register(lambda: print("\\nMODULES " + json.dumps(sorted(set(sys.modules) - before))))
sys.argv = ["recoverable", *sys.argv[1:]]
from recoverable.command import main
code = main()
sys.stdout.flush()
sys.exit(code)
"""

# What the run path may load of ours: the command, the agents package's runner and parser for
# the one CLI, the value types and the part of classify the parsers read (the HTTP answers,
# with the OpenAI-compatible services' bodies, on their common path). The floor plan's folders
# split that same code into more, smaller modules (`_core`, `_classify/http` in six, the
# command in four) and add their `__init__`s: 30 modules became 39, the code run unchanged
# (benchmarks/bench_run.py measures what the import costs). The value's modules split by idea
# (`_core/detail` into detail, given, payload, error; `_core/codes` into codes, registration,
# categories): 39 became 44; then the one line splitter (`_core/lines.py`), which the runner's
# and the wire's splitters became, the one export helper every package face is built with
# (`_core.exports`, which the root face imports) and the one speed mechanism
# (`_core/generated`): 47. Then a plain `run` reads its options without argparse (issue 27):
# the console script's entry (`command._main`), the plain reader (`_plain`) and the answer's
# guard (`_stdout`) for the parser and its types (`_cli`, `_arguments`): 48. Then a run that
# fails in nothing loads no classifier, detail or code table (`agents._deferred`): 31; its
# values made without dataclasses by the one class maker (`_core.values`): 32; the stdout
# lines' JSON reading its own module (`agents._line_json`, out of a parsing module at its size
# limit): 33.
OWN_BUDGET = 33
# Everything it loads, the standard library included (dataclasses, subprocess, ...): 99 on
# CPython 3.11.7 (52 of them the standard library's, as before the floor plan); without
# argparse, and with it the formatter's shutil and the archive modules, gettext and shlex: 90
# (41 of them the standard library's); without the classifier and the detail: 72; without
# dataclasses (and with it inspect, ast, dis, enum, copy, ...): 63; `agents._line_json`: 64.
TOTAL_BUDGET = 64

# Never on the path of a run: what `doctor`, `--fake`, the async API, `exec`, classify's
# stages and a long stream need.
NOT_ON_THE_RUN_PATH = (
    "argparse",  # a plain run's options are read without it (`command._plain`)
    "shutil",  # argparse's formatter loads it, and with it bz2, lzma, zlib
    "asyncio",
    "msgspec",  # only after ACCELERATE_AFTER_BYTES of JSON lines
    "pathlib",
    "tomllib",
    "http.server",
    "logging",
    "recoverable.testing",
    "recoverable.wire",
    "recoverable._core.envelope",
    "recoverable.tools._ladder",
    "recoverable._classify.sdks",
    "recoverable._classify.python_errors",
    "recoverable._classify.responses",
    "recoverable.agents._discovery",
    "recoverable.agents._codex",
    "recoverable.agents._gemini",
    "recoverable.agents._run_async",
)


# Never loaded before a failure is read (issue 27): a run that fails in nothing classifies
# nothing, so the classifier, the detail and its table load on first use (`agents._deferred`).
NOT_BEFORE_A_FAILURE = (
    "recoverable._classify",
    "recoverable._core.detail",
    "recoverable._core.codes",
    # `ErrorDetail` is a dataclass; the run's values are made without them (`_core.values`):
    # `dataclasses` imports `inspect` (more than a bare Python start costs).
    "dataclasses",
    "inspect",
)

# The command's run module and every CLI's parser, imported as a fresh Python prints which of
# `NOT_BEFORE_A_FAILURE` it loaded.
_IMPORT_EVERY_PARSER = """
import json, sys
import recoverable.command._run
import recoverable.agents._claude, recoverable.agents._codex, recoverable.agents._gemini
print(json.dumps(sorted(set(sys.argv[1:]) & set(sys.modules))))
"""

# Never on the path of `run --fake` either: the fake reads and writes HTTP itself
# (`testing._head`), so none of what `http.server` loads, and reads its options plainly (issue 27).
NOT_ON_THE_FAKE_PATH = (
    "argparse",  # `run --fake`'s options are plain (`command._plain`)
    "http.server",
    "http.client",
    "ssl",
    "email",
    "html",
    "mimetypes",
    "pathlib",  # the CLI's setup writes its files with os.path
    "recoverable.agents._discovery",  # a CLI named is the run's to find; only `auto` asks it
)


def _stand_in(tmp_path: Path, cli: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / cli
    script.write_text(f"#!/bin/sh\nexec cat '{DATA / cli / 'text.stdout'}'\n")
    script.chmod(0o755)
    return bin_dir


def _loaded(tmp_path: Path, *args: str) -> list[str]:
    bin_dir = _stand_in(tmp_path, "claude")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *args],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Hello from FakeProvider." in done.stdout
    line = done.stdout.rsplit("\nMODULES ", 1)[1]
    modules: list[str] = json.loads(line)
    return modules


@pytest.fixture(scope="module")
def run_modules(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _loaded(tmp_path_factory.mktemp("run"), "run", "Say hello", "--cli", "claude")


def test_a_run_loads_none_of_what_it_does_not_need(run_modules: list[str]) -> None:
    loaded = set(run_modules)
    assert [name for name in NOT_ON_THE_RUN_PATH if name in loaded] == []


def test_a_run_that_fails_in_nothing_loads_no_classifier(run_modules: list[str]) -> None:
    assert [name for name in NOT_BEFORE_A_FAILURE if name in run_modules] == []


def test_the_run_command_and_every_parser_load_no_classifier() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EVERY_PARSER, *NOT_BEFORE_A_FAILURE],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_a_run_stays_within_its_module_budget(run_modules: list[str]) -> None:
    own = [name for name in run_modules if name.split(".")[0] == "recoverable"]
    assert len(own) <= OWN_BUDGET, own
    assert len(run_modules) <= TOTAL_BUDGET, run_modules


def test_json_lines_as_a_run_prints_them_load_no_more(tmp_path: Path) -> None:
    modules = _loaded(tmp_path, "run", "Say hello", "--cli", "claude", "--json")
    assert [name for name in NOT_ON_THE_RUN_PATH if name in modules] == []
    assert "recoverable.command._output" not in modules  # what a person reads: not NDJSON


def test_the_fake_provider_loads_only_with_fake(tmp_path: Path) -> None:
    modules = set(_loaded(tmp_path, "run", "Say hello", "--cli", "claude", "--fake"))
    assert "recoverable.testing" in modules
    # Still not: the async runner, logging (the server logs lazily), the other CLIs' parsers,
    # classify's SDK tables.
    absent = (
        "asyncio",
        "msgspec",
        "logging",
        "recoverable.agents._codex",
        "recoverable._classify.sdks",
        *NOT_ON_THE_FAKE_PATH,
    )
    assert [name for name in absent if name in modules] == []


def test_classify_loads_its_stages_on_first_use() -> None:
    code = (
        "import sys, recoverable._classify.http, recoverable._classify.stderr\n"
        "assert 'recoverable._classify.sdks' not in sys.modules\n"
        "from recoverable._classify import classify\n"
        "assert 'recoverable._classify.sdks' in sys.modules\n"
        "print(classify(TimeoutError()).code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "timeout"), done.stderr


def test_the_fake_provider_still_logs_each_request_once_logging_is_in_use(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="recoverable.testing")
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
    with FakeProvider() as fake:
        request = urllib.request.Request(
            fake.openai_url + "/chat/completions",
            data=body.encode(),
            headers={"content-type": "application/json", "authorization": "Bearer sk-test"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200
    served = [r for r in caplog.records if r.levelno == logging.INFO]
    assert [r.getMessage().split()[:2] for r in served] == [["POST", "/v1/chat/completions"]]
    assert served[0].name == "recoverable.testing"
    assert served[0].funcName != "info"  # the server's own line, not the lazy logger's
