"""Which CLIs are here: where, which version, whether they can authenticate. For `doctor`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._core.detail import ErrorDetail, copy_with, unvalidated
from .._core.error import RecoverableError
from ._cli_modules import CLI_NAMES, module_for
from ._executables import find_executable

__all__ = [
    "CliInfo",
    "choose",
    "discover",
    "find_executable",
    "inspect_cli",
    "usable_in_order",
]

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
    authenticated: bool | None = False
    """True: credentials were found (no request is made to check them); None: the CLI keeps
    its login where we cannot look (a keychain, a key helper, a cloud account), so it may be
    logged in; False: it has no login anywhere we know."""
    auth_source: str | None = None
    """Where they were found, or where the login we cannot verify lives: `$VARIABLE`, a
    file's path, or the macOS keychain."""
    problems: tuple[ErrorDetail, ...] = field(default=())
    """What keeps it from working, or may: not installed, no credentials, an older version."""

    @property
    def usable(self) -> bool:
        """Installed, and not known to be logged out."""
        return self.path is not None and self.authenticated is not False

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
    return _codex_provider_key(codex_home / "config.toml", env) if name == "codex" else None


def _codex_provider_key(config_path: Path, env: Mapping[str, str]) -> str | None:
    """A Codex provider of config.toml's own (not OpenAI's) authenticates with its `env_key`
    variable, or needs no key at all (a local model server)."""
    config = _toml_file(config_path)
    chosen, providers = config.get("model_provider"), config.get("model_providers")
    provider = providers.get(chosen) if isinstance(providers, dict) else None
    if not isinstance(provider, dict):
        return None
    env_key = provider.get("env_key")
    if env_key is None:
        return str(config_path)
    return f"${env_key}" if isinstance(env_key, str) and env.get(env_key) else None


def _json_file(path: Path) -> dict[str, Any]:
    """A JSON object file, or {} (missing, unreadable, not an object)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _gemini_auth_selected(settings: Path) -> bool:
    security = _json_file(settings).get("security")
    auth = security.get("auth") if isinstance(security, dict) else None
    return isinstance(auth, dict) and bool(auth.get("selectedType"))


# Claude's logins through a cloud account (its credentials are the cloud's, not Claude's).
_CLAUDE_CLOUD = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")


def _claude_login_elsewhere(env: Mapping[str, str], home: Path) -> str | None:
    for variable in _CLAUDE_CLOUD:
        if env.get(variable):
            return f"${variable}"
    settings = home / ".claude" / "settings.json"
    if _json_file(settings).get("apiKeyHelper"):  # a program hands Claude its key
        return str(settings)
    return "the macOS keychain" if sys.platform == "darwin" else None  # its login lives there


def _codex_login_elsewhere(env: Mapping[str, str], home: Path) -> str | None:
    config = Path(env.get("CODEX_HOME") or home / ".codex") / "config.toml"
    store = _toml_file(config).get("cli_auth_credentials_store")
    return str(config) if store in ("keyring", "auto") else None


def _gemini_login_elsewhere(env: Mapping[str, str], home: Path) -> str | None:
    gemini_home = Path(env.get("GEMINI_CLI_HOME") or home) / ".gemini"
    for dotenv in (gemini_home / ".env", home / ".env"):  # Gemini reads its keys from these
        if dotenv.is_file():
            return str(dotenv)
    settings = gemini_home / "settings.json"  # a method chosen; its token may be in a keychain
    return str(settings) if _gemini_auth_selected(settings) else None


# Where each CLI may keep a login we cannot read: None from all of them makes "logged out" a fact.
_LOGIN_ELSEWHERE: dict[str, Callable[[Mapping[str, str], Path], str | None]] = {
    "claude": _claude_login_elsewhere,
    "codex": _codex_login_elsewhere,
    "gemini": _gemini_login_elsewhere,
}


# A login with no command of its own (the registry's fix_command is one): for a person to do.
_LOGIN_SUGGESTIONS = {
    "gemini": "Gemini CLI signs in interactively: run `gemini` in a terminal and choose a "
    "method (a Google login, or set GEMINI_API_KEY)",
}


def _toml_file(path: Path) -> dict[str, Any]:
    """A TOML file's table, or {} (missing, unreadable, invalid)."""
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeError, RecursionError):
        return {}


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
    authenticated: bool | None = source is not None
    if source is None:
        source = _LOGIN_ELSEWHERE[name](env, Path(env.get("HOME") or Path.home()))
        authenticated = None if source is not None else False
    problems = []
    if authenticated is False:
        problem = unvalidated("cli_not_authenticated", f"{name} has no credentials", source=name)
        login = _LOGIN_SUGGESTIONS.get(name)
        problems.append(problem if login is None else copy_with(problem, suggestion=login))
    if _older(found_version, TESTED_VERSIONS[name]):
        tested = ".".join(str(part) for part in TESTED_VERSIONS[name])
        older = f"{name} {found_version} is older than {tested}, the version tested"
        problems.append(unvalidated("cli_version_unsupported", older, source=name))
    return CliInfo(name, path, found_version, authenticated, source, tuple(problems))


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
    """The first CLI in `order` that is installed (and not known to be logged out, when asked)."""
    return usable_in_order(order, env, need_auth=need_auth)[0]


def usable_in_order(
    order: Sequence[str] = CLI_NAMES,
    env: Mapping[str, str] | None = None,
    *,
    need_auth: bool = True,
) -> list[CliInfo]:
    """The CLIs of `order` that are installed (and not known to be logged out, when asked), in
    that order; a `RecoverableError` when there is none."""
    infos = [inspect_cli(name, env, version=False) for name in order]
    found = [
        info
        for info in infos
        if info.path is not None and (info.authenticated is not False or not need_auth)
    ]
    if found:
        return found
    missing = [info for info in infos if info.path is None]
    code = "cli_not_found" if len(missing) == len(infos) else "cli_not_authenticated"
    # One CLI asked for: its name is the source, so its own fix (the install) comes along.
    source = order[0] if len(order) == 1 else None
    raise RecoverableError(code, f"no usable CLI among {', '.join(order)}", source=source)
