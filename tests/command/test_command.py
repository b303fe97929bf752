"""The `recoverable` command, run as a user runs it: a subprocess."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import recoverable as rc


def _run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recoverable", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_codes_prints_every_row() -> None:
    result = _run("codes")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split()[:6] == ["code", "category", "retryable", "fallback", "exit", "http"]
    assert len(lines) == 1 + len(rc.codes)
    assert lines[1].split()[:6] == ["provider_rate_limited", "provider", "yes", "yes", "11", "503"]


def test_codes_as_markdown_and_json_read_the_registry() -> None:
    markdown = _run("codes", "--markdown").stdout.splitlines()
    assert markdown[2].startswith("| `provider_rate_limited` | provider | yes | yes | 11 | 503 |")
    rows = json.loads(_run("codes", "--json").stdout)
    assert [row["code"] for row in rows] == [row.code for row in rc.codes]
    not_found = next(row for row in rows if row["code"] == "cli_not_found")
    assert not_found["fix_commands"]["codex"] == "npm install -g @openai/codex"


def test_classify_reads_text() -> None:
    result = _run("classify", stdin="Connection refused\n")
    detail = json.loads(result.stdout)
    assert (result.returncode, detail["code"], detail["retryable"]) == (0, "network_error", True)


def test_classify_reads_an_openai_2x_error_line() -> None:
    line = (
        "Error code: 429 - {'error': {'message': 'You exceeded your current quota', "
        "'type': 'insufficient_quota', 'param': None, 'code': 'insufficient_quota'}}"
    )
    detail = json.loads(_run("classify", stdin=line).stdout)
    assert (detail["code"], detail["status"], detail["retryable"]) == (
        "provider_quota_exceeded",
        429,
        False,
    )


def test_classify_reads_an_http_answer_with_headers() -> None:
    answer = {
        "status": 429,
        "headers": {"retry-after": "3"},
        "source": "anthropic",
        "body": {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}},
    }
    detail = json.loads(_run("classify", stdin=json.dumps(answer)).stdout)
    assert (detail["code"], detail["retry_after_ms"], detail["source"]) == (
        "provider_rate_limited",
        3000,
        "anthropic",
    )


def test_classify_reads_a_google_error_body() -> None:
    body = {"error": {"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded."}}
    detail = json.loads(_run("classify", stdin=json.dumps(body)).stdout)
    assert (detail["code"], detail["status"]) == ("provider_overloaded", 503)


def test_classify_reads_a_payload_back() -> None:
    payload = rc.ErrorDetail.create("conflict", "stale").to_dict()
    detail = json.loads(_run("classify", stdin=json.dumps(payload)).stdout)
    assert detail == payload


def test_classify_reads_bytes_and_prints_valid_json() -> None:
    stdin = b"bad \xff\xfe bytes \xed\xa0\x80 and sk-proj-abcdefghijklmnopqrstuvwxyz123"
    result = subprocess.run(
        [sys.executable, "-m", "recoverable", "classify"],
        input=stdin,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, b"")
    detail = json.loads(result.stdout)
    assert detail["code"] == "unknown"
    assert detail["message"].startswith("bad \ufffd\ufffd bytes \ufffd")
    assert detail["message"].endswith("and sk-[REDACTED]")
    json.dumps(detail).encode("utf-8")  # no lone surrogate anywhere


def test_classify_of_json_nested_past_the_parser_is_text() -> None:
    result = _run("classify", stdin="{" + '"a":[' * 100_000)
    assert result.returncode == 0
    assert "Traceback" not in result.stderr
    assert json.loads(result.stdout)["code"] == "unknown"


def test_a_bad_subcommand_exits_2() -> None:
    result = _run("nonsense")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


# The command may import recoverable.testing, lazily, for `fake-provider` and `run --fake`;
# nothing else in the library may (see the docstring of recoverable.command._cli). The
# `fake-provider` command's own module imports it at its top, and is itself imported only
# inside the function that runs that command.
SRC = Path(rc.__file__).resolve().parent
MAY_IMPORT_TESTING = {
    "recoverable.command._arguments",
    "recoverable.command._cli",
    "recoverable.command._codes",
    "recoverable.command._plain",
    "recoverable.command._run",
    "recoverable.command._fake_provider",
}
AT_ITS_TOP = {"recoverable.command._fake_provider"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.Import | ast.ImportFrom, module: str, package: bool) -> list[str]:
    """The absolute names an import statement loads, relative ones resolved."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    parts = module.split(".") if package else module.split(".")[:-1]
    base = ".".join(parts[: len(parts) - node.level + 1]) if node.level else ""
    target = ".".join(name for name in (base, node.module or "") if name)
    return [target, *(f"{target}.{alias.name}" for alias in node.names)]


def _testing_imports(source: str, module: str, package: bool = False) -> list[tuple[int, bool]]:
    """(line, inside a function) of each import of recoverable.testing in `source` that runs
    (a `TYPE_CHECKING` block's, for the type checker only, loads nothing)."""
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = _imported(node, module, package)
            if any(name.split(".")[:2] == ["recoverable", "testing"] for name in names):
                found.append((node.lineno, in_function))
        inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for child in ast.iter_child_nodes(node):
            visit(child, inside)

    visit(ast.parse(source), in_function=False)
    return found


def test_the_import_scan_sees_every_form() -> None:
    source = (
        "from ..testing import FakeProvider\n"
        "def f():\n"
        "    from .. import testing\n"
        "    import recoverable.testing._faults\n"
        "from .._detail import make\n"
        "from . import testing_like\n"
    )
    assert _testing_imports(source, "recoverable.agents._x") == [(1, False), (3, True), (4, True)]
    assert _testing_imports("from .testing import x\n", "recoverable", package=True) == [(1, False)]
    typed = "if TYPE_CHECKING:\n    from . import testing as testing\n"
    assert _testing_imports(typed, "recoverable", package=True) == []


def test_only_the_command_imports_testing_and_only_inside_functions() -> None:
    importers = {}
    for path in sorted(SRC.rglob("*.py")):
        if "testing" in path.relative_to(SRC).parts:
            continue
        module = _module_name(path)
        found = _testing_imports(path.read_text(), module, path.name == "__init__.py")
        if found:
            importers[module] = found
    assert set(importers) == MAY_IMPORT_TESTING
    at_module_level = {
        module: [line for line, lazy in found if not lazy] for module, found in importers.items()
    }
    assert {module for module, lines in at_module_level.items() if lines} == AT_ITS_TOP
    lazily = [
        (module, line, lazy)
        for module, found in _imports_of(AT_ITS_TOP).items()
        for line, lazy in found
    ]
    assert lazily and all(lazy for _, _, lazy in lazily), lazily


def _imports_of(targets: set[str]) -> dict[str, list[tuple[int, bool]]]:
    """(line, inside a function) of each import of one of `targets`, per importing module."""
    found: dict[str, list[tuple[int, bool]]] = {}
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text())

        def visit(node: ast.AST, inside: bool, module: str = module, path: Path = path) -> None:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = _imported(node, module, path.name == "__init__.py")
                if targets & set(names):
                    found.setdefault(module, []).append((node.lineno, inside))
            deeper = inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for child in ast.iter_child_nodes(node):
                visit(child, deeper)

        visit(tree, False)
    return found


# -- classify reads a text as exec and from_process read a failed tool's stderr --------------

ONE_TEXT = [
    ("rate limit exceeded", "rate_limited"),
    ("429 Too Many Requests", "rate_limited"),
    ("error: Could not resolve host: example.invalid", "network_error"),
    ("curl: (7) Failed to connect to 127.0.0.1 port 9: Connection refused", "network_error"),
    ("Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error'}}",
     "provider_overloaded"),
    ("panic at foo.go:429", "unknown"),  # no phrase: unknown here, a plain failure for exec
]  # fmt: skip


def test_classify_and_from_process_give_one_code_for_one_text() -> None:
    for text, code in ONE_TEXT:
        done = _run("classify", stdin=text)
        assert (text, done.returncode, json.loads(done.stdout)["code"]) == (text, 0, code)
        by_process = rc.from_process(1, stderr=text).code
        assert by_process == (code if code != "unknown" else "tool_execution_failed")


def test_classify_with_nothing_to_read_is_a_usage_error() -> None:
    for stdin in ("", "  \n\t\n"):
        done = _run("classify", stdin=stdin)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            "recoverable classify: error: nothing to classify on stdin (see: recoverable "
            "classify --help)\n"
        )
    assert "a failed tool's stderr" in " ".join(_run("classify", "--help").stdout.split())


# -- usage errors that say what happened (issue 26) -------------------------------------------


@given(st.text(max_size=300))
def test_a_fault_argument_is_a_fault_or_a_one_line_reason(text: str) -> None:
    import argparse

    from recoverable.command._arguments import fault_argument
    from recoverable.testing._faults import FAULT_NAMES

    try:
        assert fault_argument(text) == text
        assert text in ("", *FAULT_NAMES)
    except argparse.ArgumentTypeError as refused:
        reason = str(refused)
        assert text and text not in FAULT_NAMES
        assert reason.isprintable() and len(reason) < 400  # one line, whatever was given
        assert reason.endswith(f"expected one of {', '.join(FAULT_NAMES)}")
        assert ("a prompt goes first" in reason) == (len(text.split()) > 1)


@given(st.text(max_size=30), st.integers(-5, 5))
def test_a_whole_number_names_its_own_bound(text: str, minimum: int) -> None:
    import argparse

    from recoverable.command._arguments import whole_number

    try:
        assert whole_number(text, minimum) >= minimum
    except argparse.ArgumentTypeError as refused:
        assert str(refused) == f"expected a whole number >= {minimum}, got {text!r}"
