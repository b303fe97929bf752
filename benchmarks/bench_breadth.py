"""Accuracy on the breadth corpus: ours, LiteLLM's and pydantic-ai's, per SDK and overall.

Run: .venv/bin/python benchmarks/bench_breadth.py [--quick] [--json]

Each SDK's real client meets each failure on FakeProvider (127.0.0.1; `_breadth.py`), and
each library names what it caught: ours is `rc.classify`; LiteLLM's is the class its
`exception_type` raises (the mapping every LiteLLM call goes through); pydantic-ai's the
class its model's error-mapping context raises, for the SDKs it has a model class for. A
peer's class is put in our vocabulary by the tables in `_cases.py`, and right means the
truth's family (`_breadth.FAMILY`). `--quick` (CI) runs a few SDKs only.
"""

from __future__ import annotations

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before anything imports litellm

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any

import recoverable as rc
from _breadth import FAILURES, SDKS, Sample, Sdk, corpus, right
from _cases import LITELLM_TO_OURS, PYDANTIC_AI_TO_OURS, peer_code

LIBRARIES = ("ours", "litellm", "pydantic_ai")
NOT_APPLICABLE = "n/a"


@dataclass(frozen=True, slots=True)
class Verdict:
    said: str  # our code, or the peer's class name
    code: str  # in our vocabulary; NOT_APPLICABLE where the peer has no such provider

    def to_dict(self) -> dict[str, str]:
        return {"said": self.said, "code": self.code}


def ours(sample: Sample) -> Verdict:
    code = rc.classify(sample.exc).code
    return Verdict(code, code)


def _peer(mapped: BaseException | None, table: dict[str, str], package: str) -> Verdict:
    """The peer's class in our words; an exception from outside the peer's package is one it
    let through unmapped (crediting it would credit the SDK)."""
    if mapped is None:
        return Verdict("(returned, raised nothing)", "unknown")
    if type(mapped).__module__.partition(".")[0] != package:
        return Verdict(f"{type(mapped).__name__} (let through)", "unknown")
    name, code = peer_code(table, type(mapped))
    if code == "provider_unreachable" and getattr(mapped, "phase", None) in ("read", "write"):
        code = "provider_connection_lost"  # pydantic-ai knows the request may have been sent
    return Verdict(name, code)


def litellm(sample: Sample) -> Verdict:
    from bench_classify import _litellm  # the same entry point, set up the same way

    exception_type = _litellm()
    try:
        exception_type(
            model=sample.sdk.model,
            original_exception=sample.exc,
            custom_llm_provider=sample.sdk.litellm_provider,
        )
    except Exception as mapped:
        return _peer(mapped, LITELLM_TO_OURS, "litellm")
    return _peer(None, LITELLM_TO_OURS, "litellm")


def pydantic_ai(sample: Sample) -> Verdict:
    if sample.sdk.pydantic_ai is None:
        return Verdict(NOT_APPLICABLE, NOT_APPLICABLE)
    mapper = sample.sdk.pydantic_ai()
    try:
        with mapper():
            raise sample.exc.with_traceback(None)
    except Exception as mapped:
        if mapped is sample.exc:
            return Verdict(f"{type(mapped).__name__} (let through)", "unknown")
        return _peer(mapped, PYDANTIC_AI_TO_OURS, "pydantic_ai")
    return _peer(None, PYDANTIC_AI_TO_OURS, "pydantic_ai")


JUDGES = {"ours": ours, "litellm": litellm, "pydantic_ai": pydantic_ai}


def run(sdks: list[Sdk]) -> dict[str, Any]:
    cases: list[dict[str, Any]] = []
    for sample in corpus(sdks):
        row: dict[str, Any] = {
            "sdk": sample.sdk.name,
            "failure": sample.failure,
            "truth": sample.truth,
            "raised": f"{type(sample.exc).__module__}.{type(sample.exc).__qualname__}",
        }
        for name, judge in JUDGES.items():
            verdict = judge(sample)
            row[name] = {**verdict.to_dict(), "right": right(sample.truth, verdict.code)}
        cases.append(row)
    return {"cases": cases, "accuracy": accuracy(cases, [s.name for s in sdks])}


def accuracy(cases: list[dict[str, Any]], sdks: list[str]) -> dict[str, Any]:
    """right / graded per SDK and overall, per library (n/a cells are not graded)."""

    def score(rows: list[dict[str, Any]]) -> dict[str, list[int] | None]:
        out: dict[str, list[int] | None] = {}
        for name in LIBRARIES:
            graded = [r[name]["right"] for r in rows if r[name]["code"] != NOT_APPLICABLE]
            out[name] = [sum(graded), len(graded)] if graded else None
        return out

    per_sdk = {sdk: score([r for r in cases if r["sdk"] == sdk]) for sdk in sdks}
    overall = score(cases)
    # pydantic-ai compared on its own ground too: only the SDKs it has.
    covered = [r for r in cases if r["pydantic_ai"]["code"] != NOT_APPLICABLE]
    return {"per_sdk": per_sdk, "overall": overall, "where_pydantic_ai_applies": score(covered)}


# -- output -----------------------------------------------------------------------------------


def _cell(score: list[int] | None) -> str:
    if score is None:
        return NOT_APPLICABLE
    got, total = score
    return f"{got}/{total} ({100 * got / total:.0f}%)"


def markdown(result: dict[str, Any]) -> str:
    acc = result["accuracy"]
    lines = [
        "| SDK | ours | LiteLLM `exception_type` | pydantic-ai |",
        "|---|---|---|---|",
    ]
    for sdk, score in acc["per_sdk"].items():
        lines.append(f"| {sdk} | {' | '.join(_cell(score[n]) for n in LIBRARIES)} |")
    overall, own = acc["overall"], acc["where_pydantic_ai_applies"]
    lines.append(f"| **overall** | {' | '.join(f'**{_cell(overall[n])}**' for n in LIBRARIES)} |")
    lines.append(
        f"| **where pydantic-ai has the provider** | "
        f"{' | '.join(_cell(own[n]) for n in LIBRARIES)} |"
    )
    wrong = [c for c in result["cases"] if not c["ours"]["right"]]
    lines.append("")
    lines.append(
        f"{len(result['cases'])} real exceptions ({len(FAILURES)} failures x "
        f"{len(acc['per_sdk'])} SDKs, less the failures an API's fake carries no evidence of)."
    )
    if wrong:
        lines.append(
            "Ours wrong: "
            + "; ".join(f"{c['sdk']} {c['failure']} -> {c['ours']['code']}" for c in wrong)
        )
    return "\n".join(lines)


def _said(verdict: dict[str, Any]) -> str:
    wrong = not verdict["right"] and verdict["code"] != NOT_APPLICABLE
    return str(verdict["said"]) + (" ✗" if wrong else "")


def misses(result: dict[str, Any]) -> str:
    """Every case a library got wrong, with what it said."""
    lines = [
        "| SDK | failure | truth | ours | LiteLLM | pydantic-ai |",
        "|---|---|---|---|---|---|",
    ]
    for c in result["cases"]:
        if all(c[n]["right"] or c[n]["code"] == NOT_APPLICABLE for n in LIBRARIES):
            continue
        cells = [_said(c[n]) for n in LIBRARIES]
        lines.append(f"| {c['sdk']} | {c['failure']} | {c['truth']} | {' | '.join(cells)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the raw verdicts as JSON")
    parser.add_argument("--quick", action="store_true", help="a few SDKs only (CI)")
    args = parser.parse_args(argv)
    sdks = [s for s in SDKS if s.quick] if args.quick else SDKS
    result = run(sdks)
    result["markdown"] = markdown(result)
    result["misses"] = misses(result)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print("# Accuracy on the breadth corpus\n")
        print(result["markdown"])
        print("\n## Every case some library got wrong\n")
        print(result["misses"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
