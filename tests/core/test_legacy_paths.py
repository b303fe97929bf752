"""The old tree's module paths: each still imports, warning, as the module now at its new path.

The floor plan moved every module into a folder (`recoverable._detail` ->
`recoverable._core.detail`, ...). A pickle names its classes by module path, so a pickle made
before the move (a stored `RecoverableError`; DBOS pickles a step's error) must still load: the
bytes below were made by the code at 556fbe8, the commit before the move, with

    git archive 556fbe8 src | tar -x -C old && PYTHONPATH=old/src python -c '...pickle.dumps(...)'

of the objects `_objects_now()` builds today.
"""

from __future__ import annotations

import importlib
import pickle
import sys

import pytest

import recoverable as rc
from recoverable import agents
from recoverable._core.exports import LEGACY_PATHS, LegacyPaths, install_legacy_paths
from recoverable.integrations import dbos as rdb

# {"error": RecoverableError, "detail": its detail, "event": agents.Error(detail, "warning"),
#  "result": RunResult(False, error=detail, exit_code=1, cli="claude"),
#  "policy": RetryPolicy(attempts=4), "step_error": dbos.RecoverableStepError(detail)},
# pickled at 556fbe8 (protocol 4): it names recoverable._detail, recoverable._policy and
# recoverable.agents._events.
PICKLED_BEFORE_THE_MOVE = (
    b"\x80\x04\x95\xf6\x02\x00\x00\x00\x00\x00\x00}\x94(\x8c\x05error\x94\x8c\x13recoverable"
    b"._detail\x94\x8c\x10RecoverableError\x94\x93\x94\x8c\x15429 from the provider\x94}\x94"
    b"(\x8c\x04code\x94\x8c\x15provider_rate_limited\x94\x8c\x07message\x94h\x05\x8c\x08cate"
    b"gory\x94\x8c\x08provider\x94\x8c\tretryable\x94\x88\x8c\x0eretry_after_ms\x94M\xd0\x07"
    b"\x8c\x0cfix_required\x94N\x8c\x0bfix_command\x94N\x8c\x0cuser_message\x94\x8c?The AI s"
    b"ervice is busy right now. Please try again in a moment.\x94\x8c\x06status\x94N\x8c\x06"
    b"source\x94\x8c\x06openai\x94\x8c\x05cause\x94N\x8c\x07details\x94}\x94\x8c\nsuggestion"
    b"\x94Nu\x86\x94R\x94\x8c\x06detail\x94h\x02\x8c\x0bErrorDetail\x94\x93\x94)\x81\x94]"
    b"\x94(h\x08h\x05h\x0b\x88M\xd0\x07NNh\x11Nh\x14N}\x94Neb\x8c\x05event\x94\x8c\x1arecove"
    b"rable.agents._events\x94\x8c\x05Error\x94\x93\x94)\x81\x94]\x94(h\x1e\x8c\x07warning"
    b'\x94eb\x8c\x06result\x94h"\x8c\tRunResult\x94\x93\x94)\x81\x94]\x94(\x89\x8c\x00\x94h'
    b"\x1eK\x01NNNNh-)\x8c\x06claude\x94)eb\x8c\x06policy\x94\x8c\x13recoverable._policy\x94"
    b"\x8c\x0bRetryPolicy\x94\x93\x94)\x81\x94]\x94(K\x04G?\xf0\x00\x00\x00\x00\x00\x00G@"
    b"\x00\x00\x00\x00\x00\x00\x00G@>\x00\x00\x00\x00\x00\x00\x88NM`\xeaeb\x8c\nstep_error"
    b"\x94\x8c\x1drecoverable.integrations.dbos\x94\x8c\x14RecoverableStepError\x94\x93\x94h"
    b"\x05}\x94(h\x07h\x08h\th\x05h\nh\x0bh\x0c\x88h\rM\xd0\x07h\x0eNh\x0fNh\x10h\x11h\x12Nh"
    b"\x13h\x14h\x15Nh\x16}\x94h\x18Nu\x86\x94R\x94u."
)


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """No old path imported yet in this process (each test sees its first import warn)."""
    for name in list(sys.modules):
        if LegacyPaths(LEGACY_PATHS).homes(name) is not None:
            monkeypatch.delitem(sys.modules, name)


def test_a_pickle_made_before_the_move_loads(fresh: None) -> None:
    with pytest.deprecated_call() as caught:
        loaded = pickle.loads(PICKLED_BEFORE_THE_MOVE)
    assert sorted(str(w.message).split()[0] for w in caught) == [
        "recoverable._detail",
        "recoverable._policy",
        "recoverable.agents._events",
    ]
    assert {w.filename for w in caught} == {__file__}
    detail = rc.RecoverableError(
        "provider_rate_limited", "429 from the provider", retry_after_ms=2000, source="openai"
    ).detail
    assert type(loaded["error"]) is rc.RecoverableError
    assert loaded["error"].detail.to_dict() == detail.to_dict()
    assert type(loaded["detail"]) is rc.ErrorDetail
    assert loaded["detail"].to_dict() == detail.to_dict()
    assert type(loaded["event"]) is agents.ErrorEvent
    assert loaded["event"].severity == "warning"
    assert agents.event_to_dict(loaded["event"])["type"] == "error"
    assert type(loaded["result"]) is agents.RunResult
    assert (loaded["result"].success, loaded["result"].cli) == (False, "claude")
    assert loaded["result"].error.code == "provider_rate_limited"
    assert loaded["policy"] == rc.RetryPolicy(attempts=4)
    assert type(loaded["step_error"]) is rdb.RecoverableStepError
    assert loaded["step_error"].detail.code == "provider_rate_limited"


WHOLE = sorted((old, new) for old, new in LEGACY_PATHS.items() if isinstance(new, str))
SPLIT = sorted((old, new) for old, new in LEGACY_PATHS.items() if not isinstance(new, str))


@pytest.mark.parametrize(("old", "new"), WHOLE)
def test_an_old_path_is_the_module_at_its_new_one(fresh: None, old: str, new: str) -> None:
    with pytest.deprecated_call() as caught:
        module = importlib.import_module(old)
    assert str(caught[-1].message) == f"{old} moved to {new}; the old path goes in 0.3.0"
    assert {w.filename for w in caught} == {__file__}  # the importing line, not importlib's
    real = importlib.import_module(new)
    assert module is real
    assert real.__spec__ is not None
    assert real.__spec__.name == new  # the import system's spec for the old path put back
    assert real.__name__ == new


# A public name of each split module at 556fbe8, and where it is now.
SPLIT_NAMES = [
    ("recoverable._classify.http_answers", "from_http", "recoverable._classify.http"),
    ("recoverable._classify.http_answers", "parse_body", "recoverable._classify.http"),
    ("recoverable._classify.http_answers", "ProviderBody", "recoverable._classify.http"),
    ("recoverable._classify.compatible_bodies", "read_metadata",
     "recoverable._classify.http.compatible"),
    ("recoverable.cli", "main", "recoverable.command._cli"),
    ("recoverable.cli", "render_codes", "recoverable.command._codes"),
    ("recoverable.cli", "classify_input", "recoverable.command._classify"),
    ("recoverable.cli", "count_argument", "recoverable.command._arguments"),
]  # fmt: skip


@pytest.mark.parametrize(("old", "name", "home"), SPLIT_NAMES)
def test_a_split_module_reads_each_name_from_its_new_home(
    fresh: None, old: str, name: str, home: str
) -> None:
    homes = ", ".join(dict(SPLIT)[old])
    with pytest.deprecated_call() as caught:
        module = importlib.import_module(old)
    assert [str(w.message) for w in caught] == [
        f"{old} moved to {homes}; the old path goes in 0.3.0"
    ]
    assert getattr(module, name) is getattr(importlib.import_module(home), name)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        module.nope  # noqa: B018
    assert not hasattr(module, "__path__")  # a module, not a package


def test_a_moved_package_s_modules_follow_it(fresh: None) -> None:
    """`recoverable.toolkit` is `recoverable.tools.toolkit`, and its modules the same objects
    (loaded a second time under the old path, its classes would not be the same classes)."""
    with pytest.deprecated_call():
        from recoverable.toolkit import _click as old_click

        from recoverable import toolkit  # the path the 0.1 README gave
    from recoverable.tools import toolkit as now
    from recoverable.tools.toolkit import _click

    assert toolkit is now
    assert old_click is _click
    assert toolkit.click_tool is _click.click_tool
    with pytest.raises(ModuleNotFoundError, match=r"'recoverable\.toolkit\._nope'"):
        importlib.import_module("recoverable.toolkit._nope")


def test_the_old_fix_command_modules_drop_their_underscore(fresh: None) -> None:
    with pytest.deprecated_call():
        old = importlib.import_module("recoverable._fix_commands._git")
    assert old is importlib.import_module("recoverable._core.fix_commands.git")


def test_the_finder_answers_only_for_old_paths() -> None:
    finder = LegacyPaths(LEGACY_PATHS)
    for name in ("json", "recoverable", "recoverable.wire", "recoverable._core.detail"):
        assert finder.find_spec(name) is None
    assert finder.find_spec("recoverable._detail") is not None


def test_the_finder_is_installed_once_and_first() -> None:
    install_legacy_paths()
    install_legacy_paths()
    ours = [f for f in sys.meta_path if getattr(f, "recoverable_legacy_paths", False)]
    assert len(ours) == 1
    path_finder = next(
        i for i, f in enumerate(sys.meta_path) if getattr(f, "__name__", "") == "PathFinder"
    )
    assert sys.meta_path.index(ours[0]) < path_finder


def test_every_new_home_exists() -> None:
    for homes in LEGACY_PATHS.values():
        for home in (homes,) if isinstance(homes, str) else homes:
            assert importlib.util.find_spec(home) is not None, home


def _forged(module: str, name: str) -> bytes:
    """A pickle that imports `module`, reads `name` from it and calls it with no argument
    (GLOBAL, EMPTY_TUPLE, REDUCE): what a forged stored error would hold."""
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n)R."


NOT_OLD_PATHS = [
    "recoverable._nonexistent_module",  # no such path, old or new
    "recoverable._fix_commands._nonexistent",  # under a moved package: a module it never had
    "recoverable.toolkit._nonexistent",
    "recoverable._nonexistent_module.child",
]


@pytest.mark.parametrize("module", NOT_OLD_PATHS)
def test_a_forged_pickle_naming_no_module_is_refused_and_runs_nothing(
    fresh: None, module: str, recwarn: pytest.WarningsRecorder
) -> None:
    before = set(sys.modules)
    with pytest.raises(ModuleNotFoundError) as refused:
        pickle.loads(_forged(module, "main"))
    assert refused.value.name is not None and module.startswith(refused.value.name)
    # nothing imported under the forged name or at a "new home" built from it; a warning only
    # for the real old package above it (importing the child imports the parent first)
    new = {name for name in set(sys.modules) - before if "nonexistent" in name}
    assert new == set()
    warned = [str(w.message).split()[0] for w in recwarn]
    assert [name for name in warned if not module.startswith(name + ".")] == []


def test_the_forged_pickles_finder_answers_nothing() -> None:
    finder = LegacyPaths(LEGACY_PATHS)
    for module in NOT_OLD_PATHS:
        assert finder.find_spec(module) is None, module
