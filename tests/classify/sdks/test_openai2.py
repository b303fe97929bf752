"""openai 2.x, side by side with 3.x: its own venv (.venv-openai2, made by scripts/test).

openai 2.x prints `Error code: 429 - {whole body}` where 3.x prints only the message; the
classification must not change, since it reads the structured fields.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from recoverable.testing import FakeProvider, Fault

ROOT = Path(__file__).resolve().parents[3]
PYTHON = ROOT / ".venv-openai2" / "bin" / "python"

SCRIPT = """
import json, sys, openai, recoverable as rc
client = openai.OpenAI(api_key="sk-test", base_url=sys.argv[1], max_retries=0)
out = {"version": openai.__version__}
try:
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
except Exception as exc:
    detail = rc.classify(exc)
    out.update(str=str(exc), detail=detail.to_dict(), from_text=rc.classify(str(exc)).code)
print(json.dumps(out))
"""


def _run_in_openai2(url: str) -> dict[str, object]:
    if not PYTHON.exists():
        pytest.fail(f"{PYTHON} is missing: run `bash scripts/test`, which makes it")
    result = subprocess.run([str(PYTHON), "-c", SCRIPT, url], capture_output=True, text=True,
                            timeout=60, check=True)  # fmt: skip
    data: dict[str, object] = json.loads(result.stdout)
    return data


@pytest.mark.parametrize(
    ("fault", "code", "retry_after_ms", "status"),
    [
        (Fault.rate_limited(retry_after=7), "provider_rate_limited", 7000, 429),
        (Fault.insufficient_quota(), "provider_quota_exceeded", None, 429),
        (Fault.context_too_long(), "provider_context_too_long", None, 400),
        (Fault.content_policy(), "provider_content_filtered", None, 400),
        (Fault.unavailable(), "provider_overloaded", None, 503),
    ],
    ids=lambda value: getattr(value, "name", None) or str(value),
)
def test_openai_2x_errors_classify_the_same(
    fault: Fault, code: str, retry_after_ms: int | None, status: int
) -> None:
    with FakeProvider() as fake:
        fake.fail(fault)
        out = _run_in_openai2(fake.openai_url)
    assert str(out["version"]).startswith("2.")
    assert str(out["str"]).startswith(f"Error code: {status} - {{")  # the 2.x format
    detail = out["detail"]
    assert isinstance(detail, dict)
    assert (detail["code"], detail["retry_after_ms"], detail["status"], detail["source"]) == (
        code, retry_after_ms, status, "openai",
    )  # fmt: skip
    # Even the bare 2.x text, pasted into `recoverable classify`, reads the same.
    assert out["from_text"] == code


OFFLINE_SCRIPT = """
import json, recoverable as rc
from recoverable.testing import Fault, sdk_error
error = sdk_error("openai", Fault.rate_limited(retry_after=7), model="gpt-4o")
detail = rc.classify(error)
print(json.dumps({"type": type(error).__name__, "str": str(error), "code": detail.code,
                  "retry_after_ms": detail.retry_after_ms}))
"""


def test_sdk_error_builds_the_2x_exception_with_2x_httpx() -> None:
    if not PYTHON.exists():
        pytest.fail(f"{PYTHON} is missing: run `bash scripts/test`, which makes it")
    result = subprocess.run([str(PYTHON), "-c", OFFLINE_SCRIPT], capture_output=True, text=True,
                            timeout=60, check=True)  # fmt: skip
    out = json.loads(result.stdout)
    assert (out["type"], out["code"], out["retry_after_ms"]) == (
        "RateLimitError", "provider_rate_limited", 7000,
    )  # fmt: skip
    assert out["str"].startswith("Error code: 429 - {")  # the 2.x format
