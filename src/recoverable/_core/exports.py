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
    from collections.abc import Callable, Mapping

__all__ = ["REMOVED_IN", "Face", "moved", "resolve"]

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
        caller = sys._getframe(2).f_code
        if caller.co_name != "_handle_fromlist" or "importlib" not in caller.co_filename:
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

    def _load(self, name: str, home: str) -> object:
        if self._first_use is not None:
            with self._lock:
                if self._first_use is not None:
                    self._first_use()
                    self._first_use = None
        namespace = self._namespace
        if name not in namespace:  # else `first_use` bound it
            module = importlib.import_module(home)
            own = self._own(name, home)
            namespace[name] = module if own else getattr(module, self._renamed.get(name, name))
        return namespace[name]


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
