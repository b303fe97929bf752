"""`recoverable fake-provider` (testing/_command.py): serving from a shell, and its checks."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from ..support.providers import MSGS, no_proxy_opener


def test_command_serves_until_terminated() -> None:
    # The command as a user types it: its options reach its own parser.
    argv = ["fake-provider", "--fault", "overloaded", "--times", "1", "--reply", "from the cli"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "recoverable", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        assert ready, "the command printed no URL"
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        body = json.dumps({"model": "m", "max_tokens": 8, "messages": MSGS}).encode()
        headers = {"Content-Type": "application/json"}
        opener = no_proxy_opener()
        with pytest.raises(urllib.error.HTTPError) as info:
            opener.open(urllib.request.Request(url + "/v1/messages", body, headers), timeout=5)
        assert info.value.code == 529
        with opener.open(
            urllib.request.Request(url + "/v1/messages", body, headers), timeout=5
        ) as ok:
            assert json.loads(ok.read())["content"] == [{"type": "text", "text": "from the cli"}]
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    log = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert "POST /v1/messages api=anthropic stream=False fault=overloaded" in log


def test_command_rejects_a_public_host() -> None:
    from recoverable.command._fake_provider import main

    with pytest.raises(SystemExit) as info:
        main(["--host", "0.0.0.0"])
    assert info.value.code == 2


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_command_rejects_a_port_out_of_range(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    from recoverable.command._fake_provider import main

    with pytest.raises(SystemExit) as info:
        main(["--port", port])
    assert info.value.code == 2
    assert f"expected a port number 0-65535, got {port!r}" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--times", "-1"], ["--times", "two"]])
def test_times_is_a_count_in_both_commands(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from recoverable.command._cli import main as command
    from recoverable.command._fake_provider import main

    for run in (lambda: main(argv), lambda: command(["run", "hi", "--fake", "overloaded", *argv])):
        with pytest.raises(SystemExit) as info:
            run()
        assert info.value.code == 2
        assert f"expected a whole number >= 0, got {argv[1]!r}" in capsys.readouterr().err


def test_times_defaults_to_every_request_in_both_commands() -> None:
    from recoverable.command._cli import _parser as command_parser
    from recoverable.command._fake_provider import _parser

    assert _parser().parse_args(["--fault", "overloaded"]).times == 0
    # None: not given (`--times` without `--fake FAULT` is refused), which `run` reads as 0
    assert command_parser().parse_args(["run", "hi", "--fake", "overloaded"]).times is None


# -- every API's base URL (issue 26) ----------------------------------------------------------

_MESSAGES = [{"role": "user", "content": "hi"}]


def _call(name: str, url: str) -> None:
    """The provider's own SDK, pointed at `url` as the command says, makes one call."""
    import openai

    if name == "Anthropic":
        import anthropic

        client = anthropic.Anthropic(api_key="x", base_url=url, max_retries=0)
        client.messages.create(model="m", max_tokens=8, messages=_MESSAGES)
    elif name == "Gemini":
        from google import genai
        from google.genai import types

        gemini = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=url))
        gemini.models.generate_content(model="gemini-2.5-flash", contents="hi")
    elif name == "Amazon Bedrock":
        import boto3

        keys = {"aws_access_key_id": "AKIAFAKE", "aws_secret_access_key": "fake"}
        bedrock = boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1", **keys)
        bedrock.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}])
    elif name == "Azure OpenAI":
        azure = openai.AzureOpenAI(
            api_key="x", api_version="2024-10-21", azure_endpoint=url, max_retries=0
        )
        azure.chat.completions.create(model="m", messages=_MESSAGES)
    elif name == "Groq":
        import groq

        groq_client = groq.Groq(api_key="x", base_url=url, max_retries=0)
        groq_client.chat.completions.create(model="m", messages=_MESSAGES)
    elif name == "Cohere":
        import cohere

        cohere.ClientV2(api_key="x", base_url=url).chat(model="m", messages=_MESSAGES)
    elif name == "Ollama":
        import ollama

        ollama.Client(host=url).chat(model="m", messages=_MESSAGES)
    else:  # the openai SDK with a base_url: OpenAI and the services that speak its API
        compatible = openai.OpenAI(api_key="x", base_url=url, max_retries=0)
        compatible.chat.completions.create(model="m", messages=_MESSAGES)


def test_every_provider_has_a_base_url_and_its_sdk_reaches_it() -> None:
    from recoverable.command._fake_provider import BASE_URLS
    from recoverable.testing import FakeProvider
    from recoverable.testing._providers import PROVIDERS

    assert sorted(row.api for row in BASE_URLS) == sorted(p.apis[0].name for p in PROVIDERS)
    with FakeProvider() as fake:
        for row in BASE_URLS:
            _call(row.name, fake.url + row.path)
            assert fake.requests[-1].api == row.api, row


def test_the_command_prints_every_apis_base_url() -> None:
    from recoverable.command._fake_provider import BASE_URLS

    proc = subprocess.Popen(
        [sys.executable, "-m", "recoverable", "fake-provider"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        url = proc.stdout.readline().strip()
        shown = [proc.stderr.readline().rstrip("\n") for _ in range(len(BASE_URLS) + 1)]
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert shown[0] == "base URLs (Ctrl-C to stop):"
    for row, line in zip(BASE_URLS, shown[1:], strict=True):  # one line each, in order
        assert line.startswith(f"  {row.name} ")
        assert f" {url}{row.path} " in line
        assert line.endswith(f"  {row.client}")
    assert shown[2].split() == ["OpenAI", f"{url}/v1", "openai.OpenAI(base_url=URL)"]
