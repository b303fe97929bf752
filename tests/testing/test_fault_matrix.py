"""The fault matrix, for real: every FakeProvider fault through every surface, each cell
asserted against the one table `recoverable.testing._fault_matrix` (which `recoverable codes
--markdown` prints).

The CLI cells run the real claude, codex and gemini with their own retries off
(`cli_setup(max_retries=0)`), several at a time, before their cells are checked; every
fault persists (each request gets it), so a CLI's own fallback request meets it too.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recoverable.testing import Fault
from recoverable.testing._fault_matrix import FAULTS, SURFACES, Cell, FaultRow, cell, render_matrix
from recoverable.testing._faults import FAULT_NAMES

from ..support.fault_matrix import (
    SDK_CALLS,
    Observation,
    observe_clis,
    observe_raw,
    observe_sdk,
)

CLIS = ("claude", "codex", "gemini")
RAW = ("http openai", "http anthropic", "http gemini")
# CLI runs at once: each is mostly waiting on its own startup and the fake.
PARALLEL = int(os.environ.get("RECOVERABLE_MATRIX_PARALLEL", "4"))


def _cells(surfaces: tuple[str, ...]) -> list[tuple[FaultRow, str]]:
    return [(row, surface) for row in FAULTS for surface in surfaces]


def _ids(cells: list[tuple[FaultRow, str]]) -> list[str]:
    return [f"{row.fault}-{surface}" for row, surface in cells]


def _check(row: FaultRow, surface: str, seen: Observation) -> None:
    expected: Cell = cell(row, surface)
    assert (seen.code, seen.retryable) == (expected.code, expected.retryable), seen.evidence
    if expected.shows:  # the evidence the cell rests on is what the surface really showed
        assert expected.shows.lower() in seen.evidence.lower(), seen.evidence


def test_the_table_covers_every_fault_and_surface() -> None:
    assert [row.fault for row in FAULTS] == list(FAULT_NAMES)
    assert set(SURFACES) == {*CLIS, *SDK_CALLS, *RAW}
    for row in FAULTS:
        assert set(row.cells) <= set(SURFACES), row.fault
        for found in row.cells.values():
            assert (found.code is None) == (found.retryable is None)
            assert found.why, "a cell that differs from its fault's code says why"


@pytest.fixture(scope="module")
def cli_observations(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], Observation]:
    """Every CLI cell, run side by side once for the module."""
    cells = [(row.fault, cli, Fault.named(row.fault)) for row in FAULTS for cli in CLIS]
    root = tmp_path_factory.mktemp("matrix")
    return asyncio.run(observe_clis(cells, root, PARALLEL))


CLI_CELLS = _cells(CLIS)


@pytest.mark.parametrize(("row", "surface"), CLI_CELLS, ids=_ids(CLI_CELLS))
def test_a_real_cli(
    row: FaultRow, surface: str, cli_observations: dict[tuple[str, str], Observation]
) -> None:
    _check(row, surface, cli_observations[(row.fault, surface)])


SDK_CELLS = _cells(tuple(SDK_CALLS))


@pytest.mark.parametrize(("row", "surface"), SDK_CELLS, ids=_ids(SDK_CELLS))
def test_a_real_sdk(row: FaultRow, surface: str) -> None:
    _check(row, surface, observe_sdk(surface, Fault.named(row.fault)))


RAW_CELLS = _cells(RAW)


@pytest.mark.parametrize(("row", "surface"), RAW_CELLS, ids=_ids(RAW_CELLS))
def test_the_raw_http_answer(row: FaultRow, surface: str) -> None:
    _check(row, surface, observe_raw(surface, Fault.named(row.fault)))


def test_codes_markdown_prints_the_matrix() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "recoverable", "codes", "--markdown"],
        capture_output=True, text=True, check=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")},
    ).stdout  # fmt: skip
    assert "## Fault matrix" in out
    assert render_matrix() in out
    table = render_matrix().splitlines()
    assert len(table[0].split(" | ")) == len(SURFACES) + 3
    assert len([line for line in table if line.startswith("| `")]) == len(FAULTS)
