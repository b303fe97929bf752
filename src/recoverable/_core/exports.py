"""How a package shows its names: one helper for every package face.

A face is its `__all__`, a `Face` built from a literal table (public name -> the absolute
module that defines it: the layer test reads these strings), two one-line module functions
and an `if TYPE_CHECKING:` block of the same imports for mypy and the API reference:

    _FACE = Face(__name__, {"Cooldowns": "recoverable.fleet._cooldowns"})
    def __getattr__(name: str) -> object: return _FACE.attribute(name)
    def __dir__() -> list[str]: return _FACE.names()

A name loads on its first use and is then cached in the face's globals, so `import recoverable`
costs next to nothing and a second use never comes back here. A table entry naming the face's
own submodule (`"asgi": "recoverable.wire.asgi"`) is that submodule, imported on use (and, as
in any package, listed by `dir()` once imported). `dir()` shows what can be used: `__all__`,
the table and the module's dunders (no `importlib`, `annotations` or `TYPE_CHECKING`). A name
that left a face (`moved`) still resolves, to the object at its new home, with a
`DeprecationWarning` at each use that names the new home.

The legacy-path finder (`LEGACY_PATHS`, one `sys.meta_path` entry the root face installs)
keeps every module path of the old flat tree importable for one release, with a
`DeprecationWarning`, as the module now at its new path (so a pickle made before the move, which
names `recoverable._detail.RecoverableError`, still loads: DBOS pickles a step's error); a module
split in several is a stand-in that reads each name from its new homes in turn.

Imports nothing heavy (no `typing`): the root face imports it, on the path of every
`import recoverable`.
"""

from __future__ import annotations

import _thread
import importlib
import sys
import warnings

# Not `typing.TYPE_CHECKING`: this module is on the path of `import recoverable`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec
    from types import FrameType, ModuleType
else:
    Loader = object  # importlib.abc is not cheap to import; the protocol is two methods

__all__ = [
    "LEGACY_PATHS",
    "REMOVED_IN",
    "Face",
    "LegacyPaths",
    "install_legacy_paths",
    "moved",
    "resolve",
]

REMOVED_IN = "0.3.0"
"""The release that drops the moved names and the legacy module paths."""


class Face:
    """A package face: names loaded on first use, moved names warned about, `dir()` honest."""

    __slots__ = ("_first_use", "_lock", "_moved", "_names", "_namespace", "_renamed", "module")

    def __init__(
        self,
        module: str,
        names: Mapping[str, str],
        *,
        renamed: Mapping[str, str] | None = None,
        moved: Mapping[str, str] | None = None,
        first_use: Callable[[], object] | None = None,
    ) -> None:
        """`names`: public name -> the module that defines it; `renamed`: public name -> the
        name it has in that module, where the two differ; `moved`: old name -> its new home
        (`recoverable.fleet.Cooldowns`); `first_use`: run once, before the first name loads
        (it may bind names itself)."""
        self.module = module
        self._namespace = sys.modules[module].__dict__
        self._names = dict(names)
        self._renamed = dict(renamed or {})
        self._moved = dict(moved or {})
        self._first_use = first_use
        # From _thread, as threading has it: a Temporal workflow's sandbox refuses
        # threading's own names (its lock, called in a workflow, fails the task).
        self._lock = _thread.RLock()

    def attribute(self, name: str) -> object:
        """The face's `__getattr__`: a table name loaded (and cached), a moved name resolved
        with a warning, anything else an AttributeError."""
        home = self._names.get(name)
        if home is not None:
            return self._load(name, home)
        new = self._moved.get(name)
        if new is None:
            raise AttributeError(f"module {self.module!r} has no attribute {name!r}")
        # `from face import old` asks twice: the import system's probe (`hasattr`), then the
        # statement itself. Only the statement warns, so the warning names the user's line.
        if not _import_probe(sys._getframe(1).f_back):  # the frame above `__getattr__`
            warnings.warn(moved(f"{self.module}.{name}", new), DeprecationWarning, stacklevel=3)
        return resolve(new)

    def names(self) -> list[str]:
        """The face's `__dir__`: what it exports and what it can load, with the dunders; a
        submodule once imported, as a package shows it."""
        namespace = self._namespace
        names = self._names.items()
        loadable = (name for name, home in names if name in namespace or not self._own(name, home))
        dunders = (name for name in namespace if name[:2] == "__" == name[-2:])
        return sorted({*namespace.get("__all__", ()), *loadable, *dunders})

    def _own(self, name: str, home: str) -> bool:
        """Whether a table entry is the face's own submodule (`"asgi": "recoverable.wire.asgi"`)."""
        return home == f"{self.module}.{name}"

    def _installed(self, home: str) -> str:
        """`home` in the package this face belongs to: a second copy installed under another
        name loads its own modules, never this one's."""
        top = self.module.partition(".")[0]
        if top == "recoverable" or not home.startswith("recoverable."):
            return home
        return top + home.removeprefix("recoverable")

    def _load(self, name: str, home: str) -> object:
        if self._first_use is not None:
            with self._lock:
                if self._first_use is not None:
                    self._first_use()
                    self._first_use = None
        namespace = self._namespace
        if name not in namespace:  # else `first_use` bound it
            module = importlib.import_module(self._installed(home))
            own = self._own(name, home)
            namespace[name] = module if own else getattr(module, self._renamed.get(name, name))
        return namespace[name]


def _import_probe(frame: FrameType | None) -> bool:
    """Whether `frame` is the import system's `hasattr` probe of `from face import name`."""
    return (
        frame is not None
        and frame.f_code.co_name == "_handle_fromlist"
        and "importlib" in frame.f_code.co_filename
    )


def moved(old: str, new: str, what: str = "name") -> str:
    """The warning for a name (or a module `path`) that moved."""
    return f"{old} moved to {new}; the old {what} goes in {REMOVED_IN}"


def resolve(new: str) -> object:
    """The object a moved name now is: `recoverable.fleet.Cooldowns`, or `type(...)` of one
    (a name retired for an expression of a public one)."""
    if new.startswith("type(") and new.endswith(")"):
        return type(resolve(new[5:-1]))
    module, _, name = new.rpartition(".")
    return getattr(importlib.import_module(module), name)


# -- the old tree's module paths ---------------------------------------------------------------

# Every module path the floor plan's move retired (0.2.0) -> the module now there, or, for a
# module split in several, the modules its names are read from, in order. A package's modules
# follow it (`recoverable.toolkit._click` -> `recoverable.tools.toolkit._click`).
LEGACY_PATHS: Mapping[str, str | tuple[str, ...]] = {
    "recoverable._cancel": "recoverable._core.cancel",
    "recoverable._classify._pipeline": "recoverable._classify.pipeline",
    "recoverable._classify.bedrock": "recoverable._classify.sdks.bedrock",
    "recoverable._classify.compatible_bodies": (
        "recoverable._classify.http.compatible",
        "recoverable._classify.http.bodies",
        "recoverable._classify.http.messages",
        "recoverable._classify.http.raw",
    ),
    "recoverable._classify.grpc_errors": "recoverable._classify.sdks.grpc",
    "recoverable._classify.http_answers": (
        "recoverable._classify.http",
        "recoverable._classify.http.answers",
        "recoverable._classify.http.retry_after",
        "recoverable._classify.http.bodies",
        "recoverable._classify.http.messages",
        "recoverable._classify.http.raw",
        "recoverable._classify.http.clients",
    ),
    "recoverable._cli_agents": "recoverable.command._run",
    "recoverable._cli_exec": "recoverable.tools._exec",
    "recoverable._cli_output": "recoverable.command._output",
    "recoverable._codes": (
        "recoverable._core.codes",
        "recoverable._core.categories",
        "recoverable._core.registration",
    ),
    "recoverable._cooldown_rules": "recoverable.fleet._rules",
    "recoverable._cooldown_stores": "recoverable.fleet._stores",
    "recoverable._cooldowns": "recoverable.fleet._cooldowns",
    "recoverable._detail": (
        "recoverable._core.detail",
        "recoverable._core.error",
        "recoverable._core.given",
        "recoverable._core.payload",
    ),
    "recoverable._engine_scope": "recoverable._retry.engine_scope",
    "recoverable._envelope": "recoverable._core.envelope",
    "recoverable._fault_matrix": "recoverable.testing._fault_matrix",
    "recoverable._fix_commands": "recoverable._core.fix_commands",
    "recoverable._fix_commands._generic": "recoverable._core.fix_commands.generic",
    "recoverable._fix_commands._git": "recoverable._core.fix_commands.git",
    "recoverable._fix_commands._interpreters": "recoverable._core.fix_commands.interpreters",
    "recoverable._fix_commands._model": "recoverable._core.fix_commands.model",
    "recoverable._fix_commands._programs": "recoverable._core.fix_commands.programs",
    "recoverable._fix_commands._text": "recoverable._core.fix_commands.text",
    "recoverable._fix_commands._words": "recoverable._core.fix_commands.words",
    "recoverable._fix_commands._wrappers": "recoverable._core.fix_commands.wrappers",
    "recoverable._fix_gate": "recoverable._core.fix_gate",
    "recoverable._instrumentation": "recoverable._core.failures",
    "recoverable._ladder": "recoverable.tools._ladder",
    "recoverable._log_text": "recoverable._core.log_text",
    "recoverable._policy": "recoverable._retry.policy",
    "recoverable._process_exit": "recoverable._classify.process_exit",
    "recoverable._public": "recoverable._core.public",
    "recoverable._recover": "recoverable.tools._recover",
    "recoverable._retry_adapters": "recoverable._retry.adapters",
    "recoverable._run_process": "recoverable.tools._run_process",
    "recoverable._sdk_retries": "recoverable._retry.sdk_retries",
    "recoverable._secrets": "recoverable._core.secrets",
    "recoverable._strict_json": "recoverable._core.strict_json",
    "recoverable._untrusted": "recoverable._core.untrusted",
    "recoverable.agents._events": "recoverable._core.events",
    "recoverable.cli": (
        "recoverable.command._cli",
        "recoverable.command._arguments",
        "recoverable.command._codes",
        "recoverable.command._classify",
    ),
    "recoverable.testing._command": "recoverable.command._fake_provider",
    "recoverable.toolkit": "recoverable.tools.toolkit",
}


class LegacyPaths(Loader):
    """The finder and loader of the old module paths: a retired path imports as the module
    now at its new one (the same module object: its classes, its state), once, warning."""

    recoverable_legacy_paths = True  # how a second copy of this module finds it installed

    def __init__(self, table: Mapping[str, str | tuple[str, ...]]) -> None:
        self._table = table
        self._specs: dict[str, ModuleSpec | None] = {}  # the real module's own, while loading

    def homes(self, name: str) -> str | tuple[str, ...] | None:
        """Where a retired path's names are now; None for any other path."""
        found = self._table.get(name)
        if found is None:
            parent, _, child = name.rpartition(".")
            base = self._table.get(parent)
            found = f"{base}.{child}" if isinstance(base, str) else None
        return found

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not name.startswith("recoverable.") or (homes := self.homes(name)) is None:
            return None
        from importlib.machinery import ModuleSpec, PathFinder

        if name not in self._table and PathFinder.find_spec(str(homes), path) is None:
            return None  # a module the moved package never had: not found, as before
        return ModuleSpec(name, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        homes = self.homes(spec.name)
        if isinstance(homes, str):
            module = importlib.import_module(homes)
            # The import system sets the spec it found on the module: put the real one back.
            self._specs[spec.name] = module.__spec__
            return module
        assert homes is not None
        stand_in = type(sys)(spec.name, f"{spec.name} was split into {', '.join(homes)}.")
        stand_in.__getattr__ = _reading_through(spec.name, homes)  # type: ignore[method-assign]
        return stand_in

    def exec_module(self, module: ModuleType) -> None:
        name = module.__spec__.name if module.__spec__ is not None else module.__name__
        if name in self._specs:
            module.__spec__ = self._specs.pop(name)
        homes = self.homes(name)
        new = homes if isinstance(homes, str) else ", ".join(homes or ())
        _warn_from_importer(moved(name, new, "path"))


def _warn_from_importer(message: str) -> None:
    """Warn on the line that imports: the first frame outside the import system and this
    module (`importlib.import_module` and `pickle.loads` too, not only `import`)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and (
        "importlib" in frame.f_code.co_filename or frame.f_code.co_filename == __file__
    ):
        frame = frame.f_back
    where = frame.f_globals
    warnings.warn_explicit(
        message,
        DeprecationWarning,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=where.get("__name__"),
        registry=where.setdefault("__warningregistry__", {}),
        module_globals=where,
    )


def _reading_through(name: str, homes: tuple[str, ...]) -> Callable[[str], object]:
    """A split module's `__getattr__`: each name from the first new home that has it."""

    def __getattr__(attribute: str) -> object:
        if attribute[:2] != "__":  # a dunder (`__path__`, `__all__`) is the stand-in's own
            for home in homes:
                module = importlib.import_module(home)
                if hasattr(module, attribute):
                    return getattr(module, attribute)
        raise AttributeError(f"module {name!r} has no attribute {attribute!r}")

    return __getattr__


def install_legacy_paths() -> None:
    """Put the finder first on `sys.meta_path` (before the path finder, which would load a
    moved package's modules a second time under the old name), once per process."""
    if not any(getattr(finder, "recoverable_legacy_paths", False) for finder in sys.meta_path):
        sys.meta_path.insert(0, LegacyPaths(LEGACY_PATHS))
