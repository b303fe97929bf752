"""Which CLIs are here: where, which version, whether they can authenticate. For `doctor`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .._detail import ErrorDetail, RecoverableError, unvalidated
from ._cli_modules import CLI_NAMES, module_for

__all__ = ["CliInfo", "choose", "discover", "find_executable", "inspect_cli"]

# The versions this library is tested against; an older one is reported, not refused.
TESTED_VERSIONS = {"claude": (2, 1, 197), "codex": (0, 171, 0), "gemini": (0, 61, 0)}

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True, slots=True)
class CliInfo:
    """One CLI as found on this machine."""

    name: str
    """The CLI's name: claude, codex or gemini."""
    path: str | None
    """Where its executable is; None when it is not installed."""
    version: str | None = None
    """The version `--version` prints, when it was asked and answered."""
    authenticated: bool = False
    """Credentials were found (no request is made to check them)."""
    auth_source: str | None = None
    """Where they were found: `$VARIABLE` or a file's path."""
    problems: tuple[ErrorDetail, ...] = field(default=())
    """What keeps it from working, or may: not installed, no credentials, an older version."""

    @property
    def usable(self) -> bool:
        """Installed and able to authenticate."""
        return self.path is not None and self.authenticated

    def to_dict(self) -> dict[str, object]:
        """JSON-safe."""
        return {
            "name": self.name,
            "path": self.path,
            "version": self.version,
            "authenticated": self.authenticated,
            "auth_source": self.auth_source,
            "usable": self.usable,
            "problems": [problem.to_dict() for problem in self.problems],
        }


def _usual_places(name: str, home: Path, cwd: Path) -> Iterable[Path]:
    yield cwd / "node_modules" / ".bin" / name
    yield home / ".npm-global" / "bin" / name
    yield home / ".local" / "bin" / name
    yield home / "node_modules" / ".bin" / name
    yield home / ".yarn" / "bin" / name
    yield Path("/usr/local/bin") / name
    if name == "claude":
        yield home / ".claude" / "local" / "claude"


def find_executable(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """PATH first, then the usual npm and local install places."""
    env = os.environ if env is None else env
    found = shutil.which(name, path=env.get("PATH"))
    if found:
        return found
    home = Path(env.get("HOME") or Path.home())
    for place in _usual_places(name, home, Path.cwd()):
        if place.is_file() and os.access(place, os.X_OK):
            return str(place)
    return None


def _version(path: str) -> str | None:
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=20,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(done.stdout or done.stderr or "")
    return match.group(0) if match else None


def _credentials(name: str, env: Mapping[str, str]) -> str | None:
    """Where the CLI would find credentials (an env var or a file), or None."""
    home = Path(env.get("HOME") or Path.home())
    variables = {
        "claude": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
        "codex": ("CODEX_API_KEY", "OPENAI_API_KEY"),
        "gemini": (
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "GOOGLE_GENAI_USE_VERTEXAI",
            "GOOGLE_GENAI_USE_GCA",
        ),
    }[name]
    for variable in variables:
        if env.get(variable):
            return f"${variable}"
    codex_home = Path(env.get("CODEX_HOME") or home / ".codex")
    gemini_home = Path(env.get("GEMINI_CLI_HOME") or home) / ".gemini"
    files = {
        "claude": (home / ".claude" / ".credentials.json",),
        "codex": (codex_home / "auth.json",),
        "gemini": (gemini_home / "oauth_creds.json",),
    }[name]
    for path in files:
        if path.is_file():
            return str(path)
    if name == "gemini" and _gemini_auth_selected(gemini_home / "settings.json"):
        return str(gemini_home / "settings.json")
    return None


def _gemini_auth_selected(settings: Path) -> bool:
    try:
        data = json.loads(settings.read_text())
    except (OSError, ValueError):
        return False
    auth = data.get("security", {}).get("auth", {}) if isinstance(data, dict) else {}
    return isinstance(auth, dict) and bool(auth.get("selectedType"))


def _older(version: str | None, tested: tuple[int, int, int]) -> bool:
    match = _VERSION.search(version or "")
    return match is not None and tuple(int(part) for part in match.groups()) < tested


def inspect_cli(
    name: str, env: Mapping[str, str] | None = None, *, version: bool = True
) -> CliInfo:
    """Everything `doctor` says about one CLI."""
    env = os.environ if env is None else env
    module_for(name)  # an unknown name is a ValueError here
    path = find_executable(name, env)
    if path is None:
        problem = unvalidated("cli_not_found", f"{name} is not installed", source=name)
        return CliInfo(name, None, problems=(problem,))
    found_version = _version(path) if version else None
    source = _credentials(name, env)
    problems = []
    if source is None:
        problems.append(
            unvalidated("cli_not_authenticated", f"{name} has no credentials", source=name)
        )
    if _older(found_version, TESTED_VERSIONS[name]):
        tested = ".".join(str(part) for part in TESTED_VERSIONS[name])
        older = f"{name} {found_version} is older than {tested}, the version tested"
        problems.append(unvalidated("cli_version_unsupported", older, source=name))
    return CliInfo(name, path, found_version, source is not None, source, tuple(problems))


def discover(
    names: Sequence[str] = CLI_NAMES, env: Mapping[str, str] | None = None
) -> list[CliInfo]:
    """Each CLI in `names`, in order."""
    return [inspect_cli(name, env) for name in names]


def choose(
    order: Sequence[str] = CLI_NAMES,
    env: Mapping[str, str] | None = None,
    *,
    need_auth: bool = True,
) -> CliInfo:
    """The first CLI in `order` that is installed (and can authenticate, when asked)."""
    infos = [inspect_cli(name, env, version=False) for name in order]
    for info in infos:
        if info.path is not None and (info.authenticated or not need_auth):
            return info
    missing = [info for info in infos if info.path is None]
    code = "cli_not_found" if len(missing) == len(infos) else "cli_not_authenticated"
    raise RecoverableError(code, f"no usable CLI among {', '.join(order)}")
