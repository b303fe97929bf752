"""Where a CLI's executable is: PATH first, then the usual npm and local install places.

Its own module, on plain `os.path`, because every run with a named CLI asks it: `_discovery`
(`doctor`, `cli="auto"`) needs pathlib, subprocess and TOML, which a run does not; the PATH
search is `shutil.which`'s, written out (shutil loads the archive and compression modules:
~1.5 ms of a run).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

__all__ = ["find_executable", "which"]


def _usual_places(name: str, home: str, cwd: str) -> Iterable[str]:
    join = os.path.join
    yield join(cwd, "node_modules", ".bin", name)
    yield join(home, ".npm-global", "bin", name)
    yield join(home, ".local", "bin", name)
    yield join(home, "node_modules", ".bin", name)
    yield join(home, ".yarn", "bin", name)
    yield join("/usr/local/bin", name)
    if name == "claude":
        yield join(home, ".claude", "local", "claude")


def _runnable(path: str) -> bool:
    return os.path.exists(path) and os.access(path, os.F_OK | os.X_OK) and not os.path.isdir(path)


def which(name: str, path: str | None = None) -> str | None:
    """The first runnable `name` on `path` (None: this process's PATH), as `shutil.which`
    finds it on POSIX: a name with a directory is checked as it is; each directory of the
    search once."""
    if os.path.dirname(name):
        return name if _runnable(name) else None
    if path is None:
        path = os.environ.get("PATH")
        if path is None:
            try:
                path = os.confstr("CS_PATH")
            except (AttributeError, ValueError):
                path = os.defpath
    if not path:
        return None
    seen: set[str] = set()
    for directory in os.fsdecode(path).split(os.pathsep):
        if directory not in seen:
            seen.add(directory)
            candidate = os.path.join(directory, name)
            if _runnable(candidate):
                return candidate
    return None


def find_executable(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """PATH first, then the usual npm and local install places."""
    env = os.environ if env is None else env
    found = which(name, env.get("PATH"))
    if found:
        return found
    home = env.get("HOME") or os.path.expanduser("~")
    for place in _usual_places(name, home, os.getcwd()):
        if os.path.isfile(place) and os.access(place, os.X_OK):
            return place
    return None
