"""The real Claude Code, Codex and Gemini CLIs, run headless against FakeProvider.

Each CLI is pointed at the fake with `cli_setup` (loopback only, fake keys, a throwaway
home) and must finish a text run and a tool run, and fail a 401 run with its documented
terminal event. The binaries come from $RECOVERABLE_CLI_BIN_DIR, else node_modules/.bin
under the repo root, else PATH; a missing binary fails the test (install them with
``npm install @anthropic-ai/claude-code @openai/codex @google/gemini-cli`` in the repo root).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from recoverable.agents import CLI_NAMES, RunOptions
from recoverable.agents._cli_modules import module_for
from recoverable.testing import FakeProvider, Fault, RecordedRequest, Reply, cli_setup

from ..support.cli import (
    API,
    REPO,
    TIMEOUT,
    TOOL_ARGS,
    TOOL_CALLS,
    TOOL_OUTPUT,
    cli_bin_dir,
    find_cli,
    processes_left_with,
    processes_with,
)


@pytest.fixture(scope="session", name="cli_bin_dir")
def _cli_bin_dir() -> Path | None:
    return cli_bin_dir()


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    events: list[dict[str, Any]]
    requests: list[RecordedRequest]

    def explain(self) -> str:
        return (
            f"exit {self.exit_code}\nstdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-3000:]}"
        )


def run_cli(
    cli: str,
    where: Path | None,
    tmp_path: Path,
    *,
    reply: Reply | None = None,
    fault: Fault | None = None,
    prompt: str = "Say hello.",
    extra: tuple[str, ...] = (),
) -> Run:
    """Run one CLI headless against a fresh fake; fail if it outlives the run."""
    binary = find_cli(cli, where)
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    faults = [(fault, None)] if fault else []
    with FakeProvider(faults=faults, reply=reply) as fake:
        setup = cli_setup(cli, fake, home)
        # The headless argv `agents.run` builds; Codex also keeps no session files.
        ephemeral = ("--ephemeral",) if cli == "codex" else ()
        options = RunOptions(extra_args=(*ephemeral, *setup.args, *extra))
        argv = module_for(cli).build_argv(binary, prompt, options)
        proc = subprocess.Popen(
            argv,
            cwd=work,
            env=setup.environ(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        marker = str(home).encode()
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
            # The CLI is done: nothing it started may still be running (give exiting
            # children a moment to be reaped).
            left = processes_left_with(marker)
            assert not left, f"{cli} left processes behind: {left}"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            for pid in processes_with(marker):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            proc.wait()
        requests = fake.requests
    stdout = out.decode(errors="replace")
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return Run(proc.returncode, stdout, err.decode(errors="replace"), events, requests)


def assert_requests(run: Run, cli: str, count: int) -> None:
    assert len(run.requests) == count, [(r.path, r.fault) for r in run.requests]
    for request in run.requests:
        assert request.api == API[cli]
        assert request.method == "POST"
        assert request.stream is True
        if cli == "claude":
            assert (request.path, request.query) == ("/v1/messages", {"beta": "true"})
            assert request.headers["x-api-key"].startswith("sk-ant-fake")
        elif cli == "codex":
            assert request.path == "/v1/responses"
            assert request.headers["authorization"].startswith("Bearer sk-fake")
        else:
            assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
            assert request.query == {"alt": "sse"}
            assert request.headers["x-goog-api-key"].startswith("fake-gemini-key")


def final_text(run: Run, cli: str) -> str:
    """The assistant's answer, read from the terminal event (and what led to it)."""
    last = run.events[-1]
    if cli == "claude":
        assert last["type"] == "result", run.explain()
        assert (last["subtype"], last["is_error"]) == ("success", False), run.explain()
        assert last["terminal_reason"] == "completed"
        return str(last["result"])
    if cli == "codex":
        assert last["type"] == "turn.completed", run.explain()
        messages = [
            e["item"]["text"]
            for e in run.events
            if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"
        ]
        assert len(messages) == 1, run.explain()
        return str(messages[0])
    assert last["type"] == "result", run.explain()
    assert last["status"] == "success", run.explain()
    return "".join(
        e["content"]
        for e in run.events
        if e["type"] == "message" and e["role"] == "assistant" and e.get("delta")
    )


@pytest.mark.parametrize("cli", CLI_NAMES)
def test_text_run(cli: str, cli_bin_dir: Path | None, tmp_path: Path) -> None:
    text = f"Hello from FakeProvider to {cli}."
    run = run_cli(cli, cli_bin_dir, tmp_path, reply=Reply.text(text))
    assert run.exit_code == 0, run.explain()
    assert final_text(run, cli) == text
    assert_requests(run, cli, 1)
    assert run.requests[0].fault is None


@pytest.mark.parametrize("cli", CLI_NAMES)
def test_tool_run(cli: str, cli_bin_dir: Path | None, tmp_path: Path) -> None:
    name, arguments = TOOL_CALLS[cli]
    done = f"The tool printed {TOOL_OUTPUT}."
    run = run_cli(
        cli,
        cli_bin_dir,
        tmp_path,
        reply=Reply.tool_call(name, arguments, then=done),
        prompt=f"Run `echo {TOOL_OUTPUT}`, then say what it printed.",
        extra=TOOL_ARGS[cli],
    )
    assert run.exit_code == 0, run.explain()
    assert final_text(run, cli) == done
    # The CLI really ran the tool and reported its output.
    if cli == "claude":
        [result] = [
            block
            for e in run.events
            if e["type"] == "user"
            for block in e["message"]["content"]
            if block["type"] == "tool_result"
        ]
        assert (result["content"], result["is_error"]) == (TOOL_OUTPUT, False)
    elif cli == "codex":
        [command] = [
            e["item"]
            for e in run.events
            if e["type"] == "item.completed" and e["item"]["type"] == "command_execution"
        ]
        assert (command["aggregated_output"].strip(), command["exit_code"]) == (TOOL_OUTPUT, 0)
    else:
        [use] = [e for e in run.events if e["type"] == "tool_use"]
        [result] = [e for e in run.events if e["type"] == "tool_result"]
        assert use["tool_name"] == name
        assert (result["tool_id"], result["status"], result["output"]) == (
            use["tool_id"],
            "success",
            TOOL_OUTPUT,
        )
    # First the prompt, then the tool's output sent back (answered with the `then` text).
    assert_requests(run, cli, 2)
    first, second = (json.dumps(r.json) for r in run.requests)
    assert TOOL_OUTPUT in second
    marker = {"claude": '"tool_result"', "codex": '"function_call_output"'}
    assert marker.get(cli, '"functionResponse"') in second
    assert marker.get(cli, '"functionResponse"') not in first


def test_unauthorized_claude(cli_bin_dir: Path | None, tmp_path: Path) -> None:
    run = run_cli("claude", cli_bin_dir, tmp_path, fault=Fault.unauthorized())
    assert run.exit_code == 1, run.explain()
    last = run.events[-1]
    assert last["type"] == "result", run.explain()
    # An API failure is subtype "success" with is_error, the status and the message.
    assert (last["subtype"], last["is_error"], last["api_error_status"]) == ("success", True, 401)
    assert last["result"] == "Invalid API key · Fix external API key"
    [synthetic] = [e for e in run.events if e["type"] == "assistant"]
    assert synthetic["error"] == "authentication_failed"
    assert synthetic["message"]["model"] == "<synthetic>"
    retries = [e for e in run.events if e.get("subtype") == "api_retry"]
    assert [(e["attempt"], e["error_status"]) for e in retries] == [(1, 401)]
    assert_requests(run, "claude", 2)  # Claude retries a 401 (max_retries=1)


def test_unauthorized_codex(cli_bin_dir: Path | None, tmp_path: Path) -> None:
    run = run_cli("codex", cli_bin_dir, tmp_path, fault=Fault.unauthorized())
    assert run.exit_code == 1, run.explain()
    last = run.events[-1]
    assert last["type"] == "turn.failed", run.explain()
    message = last["error"]["message"]
    assert message.startswith("unexpected status 401 Unauthorized: Incorrect API key provided")
    assert "/v1/responses" in message
    assert [
        e["message"].startswith("Reconnecting... 1/1") for e in run.events if e["type"] == "error"
    ] == [True, False]
    assert_requests(run, "codex", 2)  # request_max_retries=1


def test_unauthorized_gemini(cli_bin_dir: Path | None, tmp_path: Path) -> None:
    run = run_cli("gemini", cli_bin_dir, tmp_path, fault=Fault.unauthorized())
    # Gemini's invalid key is an HTTP 400; the CLI exits with the status & 0xFF.
    assert run.exit_code == 144, run.explain()
    last = run.events[-1]
    assert (last["type"], last["status"]) == ("result", "error"), run.explain()
    assert last["error"]["type"] == "unknown"
    assert "API key not valid" in last["error"]["message"]
    assert "API_KEY_INVALID" in last["error"]["message"]
    assert_requests(run, "gemini", 1)  # a 400 is not retried


# -- the pieces the CLI runs rely on (no CLI needed) ---------------------------------------


def test_cli_setup_points_claude_at_the_fake(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        claude = cli_setup("claude", fake, tmp_path / "c", max_retries=0)
        url = fake.url
    assert claude.env["ANTHROPIC_BASE_URL"] == url
    assert claude.env["CLAUDE_CODE_MAX_RETRIES"] == "0"
    assert claude.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert (claude.args, claude.files) == ((), {})


def test_cli_setup_points_codex_at_the_fake(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        codex = cli_setup("codex", fake, tmp_path / "x", max_retries=2)
        url = fake.url
    assert codex.env["CODEX_HOME"] == str(tmp_path / "x" / ".codex")
    [(path, text)] = codex.files.items()
    assert path == str(tmp_path / "x" / ".codex" / "config.toml")
    assert Path(path).read_text() == text
    config = tomllib.loads(text)
    assert (config["model_provider"], config["features"]) == ("fake", {"plugins": False})
    provider = config["model_providers"]["fake"]
    assert provider["base_url"] == f"{url}/v1"
    assert (provider["request_max_retries"], provider["stream_max_retries"]) == (2, 2)
    assert codex.args == ()
    assert codex.env["FAKE_OPENAI_KEY"].startswith("sk-fake")


def test_cli_setup_of_several_clis_is_one_setup(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        both = cli_setup(["claude", "codex", "gemini"], fake, tmp_path / "all")
        url = fake.url
    assert (both.env["ANTHROPIC_BASE_URL"], both.env["GOOGLE_GEMINI_BASE_URL"]) == (url, url)
    assert both.env["CODEX_HOME"] == str(tmp_path / "all" / ".codex")
    assert sorted(Path(path).name for path in both.files) == ["config.toml", "settings.json"]
    assert both.args == ()


def test_cli_setup_points_gemini_at_the_fake(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        gemini = cli_setup("gemini", fake, tmp_path / "g", max_retries=3)
        url = fake.url
    [(path, text)] = gemini.files.items()
    assert path == str(tmp_path / "g" / ".gemini" / "settings.json")
    assert Path(path).read_text() == text
    settings = json.loads(text)
    assert settings["general"]["maxAttempts"] == 4
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert gemini.env["GOOGLE_GEMINI_BASE_URL"] == url


@pytest.mark.parametrize("cli", CLI_NAMES)
def test_cli_setup_gives_each_cli_a_throwaway_home(cli: str, tmp_path: Path) -> None:
    with FakeProvider() as fake:
        setup = cli_setup(cli, fake, tmp_path / "home")
    assert setup.env["HOME"] == str(tmp_path / "home")
    assert setup.env["TMPDIR"] == str(tmp_path / "home" / "tmp")
    assert "127.0.0.1" in setup.env["NO_PROXY"]


def test_cli_setup_refuses_an_unknown_cli(tmp_path: Path) -> None:
    with FakeProvider() as fake, pytest.raises(ValueError, match="unknown CLI"):
        cli_setup("aider", fake, tmp_path / "a")


def test_cli_setup_refuses_max_retries_out_of_range(tmp_path: Path) -> None:
    with FakeProvider() as fake, pytest.raises(ValueError, match="max_retries"):
        cli_setup("claude", fake, tmp_path / "a", max_retries=-1)


def test_cli_setup_environ_drops_proxies_and_real_credentials(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        setup = cli_setup("claude", fake, tmp_path)
    base = {
        "PATH": "/bin",
        "HTTPS_PROXY": "http://proxy.invalid:3128",
        "all_proxy": "socks5://proxy.invalid",
        "ANTHROPIC_AUTH_TOKEN": "real-token",
        "CLAUDE_CODE_OAUTH_TOKEN": "real-oauth",
        "OPENAI_API_KEY": "real-key",
        "GOOGLE_APPLICATION_CREDENTIALS": "/secret.json",
        "HOME": "/home/someone",
    }
    env = setup.environ(base)
    assert env["PATH"] == "/bin"
    assert env["HOME"] == str(tmp_path)
    assert env["ANTHROPIC_API_KEY"].startswith("sk-ant-fake")
    for name in (
        "HTTPS_PROXY",
        "all_proxy",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ):
        assert name not in env


DATA = REPO / "tests" / "data" / "cli"


def test_captured_cli_output_is_complete_and_machine_neutral() -> None:
    docs = sorted(DATA.glob("*/*.json"))
    assert {p.parent.name for p in docs} == set(CLI_NAMES)
    for path in docs:
        doc = json.loads(path.read_text())
        assert doc["cli"] == path.parent.name
        assert doc["scenario"] == path.stem
        assert isinstance(doc["requests"], int)
        assert doc["argv"][0] == doc["cli"]
        assert (doc["exit_code"] is None) != (doc["signal"] is None)
        for suffix in ("json", "stdout", "stderr"):
            data = path.with_suffix("." + suffix).read_bytes()
            assert len(data) <= 200 * 1024 or "truncated" in doc
            assert not re.search(rb"(127\.0\.0\.1|localhost|\[::1\]):\d", data), (path, suffix)
            for leak in (str(REPO).encode(), b"cli-capture-", b"/root/"):
                assert leak not in data, (path, suffix, leak)
    for cli in CLI_NAMES:
        for name in ("text", "tool"):
            doc = json.loads((DATA / cli / f"{name}.json").read_text())
            assert doc["exit_code"] == 0, (cli, name)
