"""The package faces: one export helper (`recoverable._core.exports.Face`) behind every one.

Per face: its table, its `TYPE_CHECKING` imports and its `__all__` name the same things (so
mypy and the API reference see what runs), each name resolves to the object its module
defines, `dir()` shows what can be used and nothing of the face's own machinery, and no module
of ours writes a lazy `__getattr__` of its own.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path
from types import ModuleType

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

# Every face built with the helper.
FACES = [
    "recoverable",
    "recoverable._classify",
    "recoverable._retry",
    "recoverable.adapters",
    "recoverable.agents",
    "recoverable.command",
    "recoverable.fleet",
    "recoverable.instrumentation",
    "recoverable.integrations",
    "recoverable.secrets",
    "recoverable.testing",
    "recoverable.tools",
    "recoverable.tools.toolkit",
    "recoverable.wire",
]
# Modules that keep only old names, as moved ones (the integrations' readers are `read_*`).
MOVED_ONLY = [
    "recoverable.integrations.celery",
    "recoverable.integrations.dbos",
    "recoverable.integrations.temporal",
]


def _path(module: str) -> Path:
    base = SRC.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _absolute(face: str, path: Path, level: int, name: str | None) -> str:
    parts = face.split(".") if path.name == "__init__.py" else face.split(".")[:-1]
    base = parts[: len(parts) - level + 1] if level else []
    return ".".join([*base, *filter(None, [name])])


def _face_call(tree: ast.Module) -> ast.Call:  # the one `Face(...)` of a module
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("Face", "_Face"):
            return node
    raise AssertionError("no Face(...) call")


def _literal(node: ast.expr | None) -> dict[str, str]:
    return {} if node is None else ast.literal_eval(node)


def table_of(face: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """The face's (table, renamed, moved), read from its source as the layer test reads it."""
    call = _face_call(ast.parse(_path(face).read_text()))
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    return (
        _literal(call.args[1]),
        _literal(keywords.get("renamed")),
        _literal(keywords.get("moved")),
    )


def type_imports(face: str) -> dict[str, tuple[str, str]]:
    """Each name the face's `TYPE_CHECKING` block imports: (its module, its name there)."""
    path = _path(face)
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if not isinstance(statement, ast.ImportFrom):
                    continue  # `import asyncio`: a type the face's own body needs
                module = _absolute(face, path, statement.level, statement.module)
                for alias in statement.names:
                    own = f"{module}.{alias.name}"
                    where = (own, "") if _path(own).exists() else (module, alias.name)
                    found[alias.asname or alias.name] = where
    return found


def _submodule(face: str, name: str, home: str) -> bool:
    return home == f"{face}.{name}"


@pytest.mark.parametrize("face", FACES)
def test_the_table_is_the_type_checking_imports(face: str) -> None:
    table, renamed, _ = table_of(face)
    typed = type_imports(face)
    runs = {
        name: (home, "") if _submodule(face, name, home) else (home, renamed.get(name, name))
        for name, home in table.items()
    }
    # A face may type a name its own body needs (agents: `asyncio`, `CancelSignal`).
    assert {name: typed[name] for name in runs if name in typed} == runs
    assert set(runs) <= set(typed)


def _eager(face: str) -> set[str]:
    """The public names a face binds as it runs (the agents face's own functions, ...)."""
    module = importlib.import_module(face)
    table, _, _ = table_of(face)
    return {name for name in module.__all__ if name not in table}


@pytest.mark.parametrize("face", FACES)
def test_all_is_the_table_and_what_the_face_defines(face: str) -> None:
    module = importlib.import_module(face)
    table, _, _ = table_of(face)
    lazy = {name for name, home in table.items() if not _submodule(face, name, home)}
    assert len(module.__all__) == len(set(module.__all__))
    assert set(module.__all__) == lazy | _eager(face)
    tree = ast.parse(_path(face).read_text())
    bound = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    assert not lazy & bound, "a lazy name is also bound as the face runs"


def _every_name(face: str) -> list[tuple[str, str, str]]:
    table, _, _ = table_of(face)
    return [(face, name, home) for name, home in table.items()]


@pytest.mark.parametrize(
    ("face", "name", "home"), [entry for face in FACES for entry in _every_name(face)]
)
def test_each_name_is_the_object_its_module_defines(face: str, name: str, home: str) -> None:
    module = importlib.import_module(face)
    _, renamed, _ = table_of(face)
    value = getattr(module, name)
    defined = importlib.import_module(home)
    assert value is (
        defined if _submodule(face, name, home) else getattr(defined, renamed.get(name, name))
    )
    assert vars(module)[name] is value  # cached: the next use never reaches the helper


@pytest.mark.parametrize("face", FACES)
def test_dir_shows_what_can_be_used_and_nothing_else(face: str) -> None:
    module = importlib.import_module(face)
    table, _, _ = table_of(face)
    for name in table:
        getattr(module, name)  # loaded or not, dir() says the same
    shown = dir(module)
    assert shown == sorted(shown)
    public = {name for name in shown if not (name.startswith("__") and name.endswith("__"))}
    assert public == {*module.__all__, *table} - {"__version__"}
    for leak in ("importlib", "annotations", "TYPE_CHECKING", "Face", "_FACE", "_Face"):
        assert leak not in shown


@pytest.mark.parametrize("face", FACES)
def test_an_unknown_name_is_an_attribute_error(face: str) -> None:
    module = importlib.import_module(face)
    with pytest.raises(AttributeError, match=f"module '{face}' has no attribute 'nope'"):
        module.nope  # noqa: B018
    assert not hasattr(module, "__wrapped__")


def _module_getattrs() -> list[tuple[str, str]]:
    found = []
    for path in sorted((SRC / "recoverable").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
                found.append((str(path.relative_to(SRC)), ast.unparse(node.body[-1])))
    return found


def test_no_module_writes_a_lazy_getattr_of_its_own() -> None:
    """Each module-level `__getattr__` is the one-line delegation to its face's helper."""
    found = _module_getattrs()
    assert len(found) >= len(FACES)
    assert [where for where, body in found if body != "return _FACE.attribute(name)"] == []


def test_import_recoverable_loads_three_modules_of_ours() -> None:
    probe = (
        "import sys\nbefore = set(sys.modules)\nimport recoverable\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith('recoverable')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == [
        "['recoverable',",
        "'recoverable._core',",
        "'recoverable._core.config',",
        "'recoverable._core.exports']",
    ]


def test_a_face_sets_up_once_before_its_first_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """`first_use` runs once, before any name loads (the classify face sets its stages)."""
    from recoverable._core.exports import Face

    module = ModuleType("recoverable_probe_face")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    calls: list[str] = []
    face = Face(
        module.__name__, {"dumps": "json", "loads": "json"}, first_use=lambda: calls.append("set")
    )
    assert face.attribute("dumps") is importlib.import_module("json").dumps
    assert face.attribute("loads") is importlib.import_module("json").loads
    assert calls == ["set"]


def test_a_renamed_name_reads_its_module_s_own_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from recoverable._core.exports import Face

    module = ModuleType("recoverable_probe_face")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    face = Face(module.__name__, {"to_text": "json"}, renamed={"to_text": "dumps"})
    assert face.attribute("to_text") is importlib.import_module("json").dumps
    assert face.names()[-1] == "to_text"


# -- the small root face and the names that left it ------------------------------------------

ROOT = {
    # the value
    "ErrorDetail", "RecoverableError", "PayloadError",
    # classify
    "classify", "classify_known", "classify_response", "from_http", "from_process",
    "retry_after_ms", "add_classifier", "Stage",
    # the registry
    "codes", "register_code", "CodeRow",
    # retry and fallback
    "RetryPolicy", "Retrying", "retry", "fallback", "afallback", "FallbackResult",
    "without_sdk_retries", "request_key", "request_headers",
    # the ladder, the envelope
    "next_action", "Envelope",
    "__version__",
}  # fmt: skip


def test_the_root_face_is_small() -> None:
    import recoverable

    assert set(recoverable.__all__) == ROOT
    assert len(recoverable.__all__) == 26  # 25 names and __version__ (0.1.0: 44 and it)


def _moved() -> list[tuple[str, str, str]]:
    return [
        (face, old, new) for face in [*FACES, *MOVED_ONLY] for old, new in table_of(face)[2].items()
    ]


def _expected(new: str) -> object:
    if new.startswith("type("):
        return type(_expected(new[5:-1]))
    module, _, name = new.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_every_moved_name_is_listed() -> None:
    moved = {(face, old) for face, old, _ in _moved()}
    assert {old for face, old in moved if face == "recoverable"} == {
        "Action", "Answer", "BreakerPolicy", "Code", "CodeRegistry", "Cooldowns",
        "FailureEvent", "FixCommandRejected", "FixRun", "FleetPolicy", "Recovery",
        "add_secret_pattern", "code_from_envelope", "envelope_code", "get_failure_hooks",
        "recover", "retry_if_retryable", "run_fix", "scrub", "set_failure_hooks", "set_testing",
        "stamina_on", "wait_retry_after",
    }  # fmt: skip
    assert moved - {m for m in moved if m[0] == "recoverable"} == {
        ("recoverable._retry", "Answer"),
        ("recoverable.agents", "Error"),
        ("recoverable.integrations.celery", "detail_from_exception"),
        ("recoverable.integrations.celery", "detail_from_result"),
        ("recoverable.integrations.dbos", "detail_from_error"),
        ("recoverable.integrations.temporal", "detail_from_failure"),
    }


@pytest.mark.parametrize(("face", "old", "new"), _moved())
def test_a_moved_name_warns_at_each_use_and_is_the_new_object(
    face: str, old: str, new: str
) -> None:
    module = importlib.import_module(face)
    message = f"{face}.{old} moved to {new}; the old name goes in 0.3.0"
    for _ in range(2):  # not cached: every use warns
        with pytest.deprecated_call(match=f"^{re.escape(message)}$") as caught:
            value = getattr(module, old)
        assert len(caught) == 1
        assert caught[0].filename == __file__
    assert value is _expected(new)
    assert old not in vars(module)
    assert old not in dir(module)
    assert old not in getattr(module, "__all__", ())


@pytest.mark.parametrize(("face", "old", "new"), _moved())
def test_a_moved_name_is_typed_as_its_new_object(face: str, old: str, new: str) -> None:
    """mypy still sees the old name for the release that has it (as the same object)."""
    typed = type_imports(face)
    if face in MOVED_ONLY:  # a function renamed in its own module: mypy sees the new name
        return
    module, name = typed[old]
    assert getattr(importlib.import_module(module), name) is _expected(new)


def test_from_import_of_a_moved_name_warns_once_on_the_importing_line() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from recoverable import Cooldowns  # noqa: F401
    assert [(w.category, w.filename) for w in caught] == [(DeprecationWarning, __file__)]
    assert "recoverable.fleet.Cooldowns" in str(caught[0].message)


def test_the_old_event_name_keeps_its_type_key() -> None:
    from recoverable import agents
    from recoverable._core.detail import ErrorDetail

    event = agents.ErrorEvent(ErrorDetail.create("timeout", "slow"))
    assert agents.event_to_dict(event)["type"] == "error"
    with pytest.deprecated_call():
        assert isinstance(event, agents.Error)


def test_no_subpackage_shadows_a_root_name() -> None:
    """`import recoverable.retry` would rebind `rc.retry` to the module: no module of ours
    directly under the package may be named like a root name, old or new."""
    import recoverable

    names = {*recoverable.__all__, *table_of("recoverable")[2]}
    below = {path.stem for path in (SRC / "recoverable").iterdir() if path.suffix == ".py"}
    below |= {path.name for path in (SRC / "recoverable").iterdir() if path.is_dir()}
    assert below & names == set()
    assert {"retry", "classify", "fallback", "recover", "codes"} <= names


def test_set_testing_loads_no_fake_server() -> None:
    probe = (
        "import sys\nfrom recoverable.testing import set_testing\nset_testing(False)\n"
        "print(sorted(m for m in sys.modules if m.startswith('recoverable.testing')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "['recoverable.testing']"


def test_our_own_tests_fail_on_a_moved_name() -> None:
    """pyproject's pytest filter makes every moved-name and moved-path warning an error, so
    nothing of ours (tests, README, docs) keeps using an old name unnoticed."""
    from recoverable._core.exports import moved

    config = tomllib.loads((SRC.parent / "pyproject.toml").read_text())
    filters = config["tool"]["pytest"]["ini_options"]["filterwarnings"]
    ours = [f for f in filters if f.startswith("error:") and f.endswith(":DeprecationWarning")]
    (pattern,) = [f.split(":")[1] for f in ours]
    for message in (
        moved("recoverable.Cooldowns", "recoverable.fleet.Cooldowns"),
        moved("recoverable._detail", "recoverable._core.detail", "path"),
    ):
        assert re.match(pattern, message), message
