"""Point the real AI coding CLIs (Claude Code, Codex, Gemini CLI) at a `FakeProvider`.

`cli_setup()` returns the environment variables, extra arguments and settings files that
make one CLI talk only to the fake on loopback, with a throwaway home, fake keys, its
telemetry, update checks and plugin sync off, and its own retries turned down.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ._server import FakeProvider

__all__ = ["CLI_NAMES", "DROP_PREFIXES", "CliName", "CliSetup", "cli_setup"]

CliName = Literal["claude", "codex", "gemini"]
CLI_NAMES: tuple[CliName, ...] = ("claude", "codex", "gemini")

# Fake credentials: syntactically plausible, valid nowhere.
_ANTHROPIC_KEY = "sk-ant-fake-0000000000"
_OPENAI_KEY = "sk-fake-0000000000000000"
_GEMINI_KEY = "fake-gemini-key-0000000000"
_CODEX_KEY_VAR = "FAKE_OPENAI_KEY"

# Codex 0.171's default model is offered a JavaScript "code mode" `exec` tool; gpt-5.5 has
# model metadata (no fallback-metadata warning item) and the plain `exec_command` function.
CODEX_MODEL = "gpt-5.5"
# An explicit Gemini model skips the `auto` router's classifier call.
GEMINI_MODEL = "gemini-2.5-flash"

# Inherited variables that could send a CLI elsewhere or hand it real credentials.
DROP_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_")
_PROXY_VARS = frozenset({"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"})
_LOOPBACK = "127.0.0.1,::1,localhost"


@dataclass(frozen=True, slots=True)
class CliSetup:
    """How to run one CLI against a FakeProvider: `env` to add, `args` to pass, `files` written."""

    env: dict[str, str]
    """Environment variables to add to the CLI's (see `environ()`)."""
    args: tuple[str, ...] = ()
    """Extra command-line arguments (none today: every CLI is set up through its environment
    and files, so that setups merge)."""
    files: dict[str, str] = field(default_factory=dict)
    """The files written for the CLI: path -> text (Gemini's settings.json)."""

    def environ(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """A whole child environment: `base` (default `os.environ`), cleaned, plus `env`.

        Proxy variables and inherited ``ANTHROPIC_*``, ``CLAUDE_*``, ``OPENAI_*``,
        ``CODEX_*``, ``GEMINI_*`` and ``GOOGLE_*`` variables are dropped, so no real
        credential, endpoint or proxy leaks into the run.
        """
        source = os.environ if base is None else base
        kept = {
            key: value
            for key, value in source.items()
            if key.lower() not in _PROXY_VARS and not key.upper().startswith(DROP_PREFIXES)
        }
        return {**kept, **self.env}


def _claude(fake: FakeProvider, root: str, max_retries: int) -> CliSetup:
    """Claude Code: the base URL, a fake key, its retries, nonessential traffic off."""
    return CliSetup(
        {
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": _ANTHROPIC_KEY,
            "CLAUDE_CODE_MAX_RETRIES": str(max_retries),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
    )


def _codex(fake: FakeProvider, root: str, max_retries: int) -> CliSetup:
    """Codex: its own home, whose config.toml names a fake Responses provider and the model.

    A file rather than `-c` flags: the setup is then environment and files only, so several
    CLIs' setups merge into one (a run that falls back from one CLI to another)."""
    codex_home = os.path.join(root, ".codex")
    os.makedirs(codex_home, exist_ok=True)
    config = (
        'model_provider = "fake"\n'
        f'model = "{CODEX_MODEL}"\n'
        "\n"
        "[model_providers.fake]\n"
        'name = "fake"\n'
        f'base_url = "{fake.openai_url}"\n'
        f'env_key = "{_CODEX_KEY_VAR}"\n'
        'wire_api = "responses"\n'
        f"request_max_retries = {max_retries}\n"
        f"stream_max_retries = {max_retries}\n"
        "\n"
        "[features]\n"
        "plugins = false\n"  # else Codex syncs curated plugins from github.com, even offline
    )
    path = os.path.join(codex_home, "config.toml")
    _write(path, config)
    env = {"CODEX_HOME": codex_home, _CODEX_KEY_VAR: _OPENAI_KEY}
    return CliSetup(env, (), {path: config})


def _gemini(fake: FakeProvider, root: str, max_retries: int) -> CliSetup:
    """Gemini CLI: the base URL, a fake key, and a settings.json (auth, model, attempts)."""
    settings: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
            "maxAttempts": max_retries + 1,
        },
        "model": {"name": GEMINI_MODEL},
    }
    path = os.path.join(root, ".gemini", "settings.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = json.dumps(settings, indent=2) + "\n"
    _write(path, text)
    env = {
        "GEMINI_CLI_HOME": root,
        "GOOGLE_GEMINI_BASE_URL": fake.url,
        "GEMINI_API_KEY": _GEMINI_KEY,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    return CliSetup(env, (), {path: text})


def _write(path: str, text: str) -> None:
    """Write a settings file (os.path, not pathlib: `run --fake` does not load pathlib)."""
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)


# Each CLI's own part of the setup, given the fake, the home and the retries.
_SETUPS: dict[str, Callable[[FakeProvider, str, int], CliSetup]] = {
    "claude": _claude,
    "codex": _codex,
    "gemini": _gemini,
}


def cli_setup(
    cli: str | Sequence[str],
    fake: FakeProvider,
    home: str | os.PathLike[str],
    *,
    max_retries: int = 1,
) -> CliSetup:
    """Point `cli` ("claude", "codex" or "gemini", or several: one setup for them all, for a
    run that falls back along them) at `fake`, with `home` as its home.

    `home` (created if missing) becomes ``HOME`` and holds the CLI's state, any
    settings file written here, and ``TMPDIR`` (``home/tmp``). `max_retries` sets the
    CLI's own retries: ``CLAUDE_CODE_MAX_RETRIES``, Codex's ``request_max_retries`` and
    ``stream_max_retries``, Gemini's ``general.maxAttempts`` (``max_retries + 1``).
    The fake must be running (its port goes into the setup).
    """
    if not isinstance(cli, str):  # each CLI's variables and files differ: they merge
        setups = [cli_setup(name, fake, home, max_retries=max_retries) for name in cli]
        return CliSetup(
            {key: value for setup in setups for key, value in setup.env.items()},
            tuple(arg for setup in setups for arg in setup.args),
            {path: text for setup in setups for path, text in setup.files.items()},
        )
    if not 0 <= max_retries <= 15:
        raise ValueError("max_retries must be between 0 and 15")
    root = os.path.abspath(home)
    tmp = os.path.join(root, "tmp")  # scratch files and Gemini's error reports stay out of /tmp
    os.makedirs(tmp, exist_ok=True)
    setup = _SETUPS.get(cli)
    if setup is None:
        raise ValueError(f"unknown CLI {cli!r}; expected one of {', '.join(CLI_NAMES)}")
    own = setup(fake, root, max_retries)
    env = {"HOME": root, "TMPDIR": tmp, "NO_PROXY": _LOOPBACK, "no_proxy": _LOOPBACK}
    return replace(own, env={**env, **own.env})
