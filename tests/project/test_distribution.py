"""The release a user installs: the sdist and the wheel built as a release builds them
(`python -m build`), the wheel installed into a fresh venv away from the source tree, and what
that user gets checked: the import, the command, `py.typed`, the extras' metadata, and nothing
of the repository's own (tests, benchmarks, docs) inside."""

from __future__ import annotations

import email
import os
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

import recoverable

REPO = Path(__file__).resolve().parents[2]
NOT_SHIPPED = ("tests/", "benchmarks/", "docs/", "examples/", "scripts/", ".ci/", "node_modules/")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(sdist, wheel), built from this checkout without network (the venv has hatchling)."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


@pytest.fixture(scope="module")
def installed(built: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with only the wheel in it (no dependencies: the core needs none)."""
    where = tmp_path_factory.mktemp("venv")
    venv.create(where, with_pip=True)
    python = where / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         str(built[1])],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return where


def _run_installed(where: Path, *argv: str, cwd: Path) -> str:
    # No PYTHONPATH and a cwd outside the checkout: only the installed wheel can answer.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


def test_the_wheel_installs_into_a_fresh_venv_and_imports_away_from_the_source(
    installed: Path, tmp_path: Path
) -> None:
    python = str(installed / "bin" / "python")
    origin = _run_installed(
        installed, python, "-c", "import recoverable; print(recoverable.__file__)", cwd=tmp_path
    )
    assert origin.startswith(str(installed)), origin
    code = _run_installed(
        installed,
        python,
        "-c",
        "import recoverable as rc; print(rc.classify(ConnectionRefusedError(111, 'x')).code)",
        cwd=tmp_path,
    )
    assert code == "network_error"
    version = _run_installed(installed, str(installed / "bin" / "recoverable"), "--version",
                             cwd=tmp_path)  # fmt: skip
    assert version == f"recoverable {recoverable.__version__}"


def test_the_installed_package_is_typed(installed: Path, tmp_path: Path) -> None:
    python = str(installed / "bin" / "python")
    where = _run_installed(
        installed, python, "-c", "import recoverable, pathlib; "
        "print(pathlib.Path(recoverable.__file__).with_name('py.typed').is_file())", cwd=tmp_path,
    )  # fmt: skip
    assert where == "True"


def test_the_wheel_ships_the_package_and_nothing_of_the_repository(
    built: tuple[Path, Path],
) -> None:
    names = zipfile.ZipFile(built[1]).namelist()
    assert "recoverable/py.typed" in names
    assert "recoverable/testing/__init__.py" in names  # FakeProvider is for users too
    assert not [name for name in names if name.startswith(NOT_SHIPPED) or "__pycache__" in name]
    assert {name.split("/")[0] for name in names} == {
        "recoverable",
        f"recoverable-{recoverable.__version__}.dist-info",
    }


def test_the_sdist_holds_the_source_and_its_description_only(built: tuple[Path, Path]) -> None:
    with tarfile.open(built[0]) as sdist:
        names = [name.split("/", 1)[1] for name in sdist.getnames() if "/" in name]
    assert "src/recoverable/__init__.py" in names
    assert "pyproject.toml" in names
    assert "README.md" in names
    assert not [name for name in names if name.startswith(NOT_SHIPPED)]


def test_every_extra_of_pyproject_is_in_the_wheel_metadata(built: tuple[Path, Path]) -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wheel = zipfile.ZipFile(built[1])
    metadata = email.message_from_bytes(
        wheel.read(f"recoverable-{recoverable.__version__}.dist-info/METADATA")
    )
    extras = set(metadata.get_all("Provides-Extra") or ())
    assert extras == set(project["optional-dependencies"])
    requires = metadata.get_all("Requires-Dist") or ()
    assert "openai>=2; extra == 'openai'" in requires
    assert not [line for line in requires if "extra ==" not in line]  # the core needs nothing
    entry_points = wheel.read(f"recoverable-{recoverable.__version__}.dist-info/entry_points.txt")
    assert b"recoverable = recoverable.command:main" in entry_points
