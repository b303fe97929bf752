"""Where a CLI's executable is: PATH first, then the usual npm and local install places.

Its own module, on plain `os.path`, because every run with a named CLI asks it: `_discovery`
(`doctor`, `cli="auto"`) needs pathlib, subprocess and TOML, which a run does not.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping

__all__ = ["find_executable"]


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


def find_executable(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """PATH first, then the usual npm and local install places."""
    env = os.environ if env is None else env
    found = shutil.which(name, path=env.get("PATH"))
    if found:
        return found
    home = env.get("HOME") or os.path.expanduser("~")
    for place in _usual_places(name, home, os.getcwd()):
        if os.path.isfile(place) and os.access(place, os.X_OK):
            return place
    return None
