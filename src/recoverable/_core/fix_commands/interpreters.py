"""Interpreters and the package managers' runners: a fix may run a script file or an installed
module, never code given inline (`python3 -Ic`, `perl -le`, `node --eval=`), read from
standard input (`python3 -`, `bash` alone), fetched from an address (`deno run https://...`),
or a package fetched to run (`uv run --with x`, `pipx run`; `npx` is refused by name).

An interpreter's options are refused before its script, whatever they are: only Python's are
read (`python3 -X dev -m pip install x` is a fix), because every interpreter spells inline
code its own way (`-e`, `-E`, `-r`, `-p`, `-c`, `--eval`, `--import=data:...`) and clusters it
(`-le`, `-pe`, `-Ic`); only the letters that give code are named, to say why.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from .generic import INSTALL_VERBS, subcommand_refusal
from .model import Context, Refusal, refuse
from .programs import read_listed
from .words import cluster, device_path, is_option, long_name, program_name

# --- Python ---------------------------------------------------------------------------------

PYTHONS = frozenset({"python", "pythonw", "pypy", "graalpy", "pyston", "jython"})


def is_python(name: str) -> bool:
    """Whether a program is a Python (python3.12, pypy3, jython, micropython, graalpy)."""
    return name in PYTHONS or name.endswith("python")


_PYTHON_FLAGS = "bBdEIOPqRsSuvx"
_PYTHON_INFO = "hV?"
_PYTHON_VALUES = "WX"
_PYTHON_INFO_LONG = frozenset({"help", "version", "help-env", "help-xoptions", "help-all"})
_PYTHON_LONG_VALUES = frozenset({"check-hash-based-pycs"})
# Standard-library modules that run code given to them (`python3 -m timeit 'code'`) or read it
# from standard input (`-m code`, `-m asyncio`): the same as `-c`.
PYTHON_CODE_MODULES = frozenset(
    {"timeit", "pdb", "code", "idlelib", "idle", "ipython", "asyncio", "runpy", "trace",
     "cprofile", "profile", "pyclbr", "ensurepip._bundled"}
)  # fmt: skip
_MODULE = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"
# Standard-library modules that serve files or open addresses (`-m http.server` shares the
# folder with the network).
PYTHON_NETWORK_MODULES = frozenset({"http.server", "pydoc", "webbrowser", "smtpd", "xmlrpc.server"})
# The Windows launcher's own words before Python's: `py -3.12 -m pip`, `py -V:3.12 x.py`.
_PY_LAUNCHER = r"^-(?:[0-9][0-9.]*(?:-(?:32|64|arm64))?|V:.+)$"


@dataclass(frozen=True, slots=True)
class _PythonOption:
    """What one of Python's option words did."""

    consumed: int = 0
    """Following words it took as its value."""
    info: bool = False
    """Whether it asks only for information (`-V`, `--help`)."""
    module: str | None = None
    """The module `-m` names."""


def read_python(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """Python: harmless options, then a script, `-m module`, or only `--version`/`--help`."""
    index, info = 0, False
    while index < len(args):
        word = args[index]
        if word == "--":
            index += 1
            break
        if not is_option(word):
            break
        step = _python_option(name, word, args[index + 1 : index + 2])
        if isinstance(step, Refusal):
            return step
        index, info = index + 1 + step.consumed, info or step.info
        if step.module is not None:
            return _module(name, step.module, args[index:], ctx)
    if index >= len(args):
        return None if info else _stdin(name)
    return run_script(name, args[index], args[index + 1 :], ctx)


def read_py_launcher(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """The Windows `py` launcher: its version words, then Python's."""
    skipped = 0
    while skipped < len(args) and re.match(_PY_LAUNCHER, args[skipped]):
        skipped += 1
    if args[skipped:] in (["-0"], ["-0p"], ["--list"], ["--list-paths"]):
        return None
    return read_python(name, args[skipped:], ctx)


def _python_option(name: str, word: str, following: Sequence[str]) -> Refusal | _PythonOption:
    """One of Python's option words, read as CPython reads it (a cluster stops at the letter
    whose value is the rest of the word or the next one)."""
    named = long_name(word)
    if named is not None:
        return _python_long(name, word, named)
    info = False
    for position, letter in enumerate(word[1:], start=1):
        if letter in "cim":
            return _python_code_option(name, word, word[position + 1 :], following)
        if letter in _PYTHON_VALUES:
            return _PythonOption(consumed=int(position == len(word) - 1), info=info)
        if letter not in _PYTHON_FLAGS + _PYTHON_INFO:
            return _unknown_option(name, word)
        info = info or letter in _PYTHON_INFO
    return _PythonOption(info=info)


def _python_long(name: str, word: str, named: tuple[str, str | None]) -> Refusal | _PythonOption:
    if named[0] in _PYTHON_INFO_LONG:
        return _PythonOption(info=True)
    if named[0] in _PYTHON_LONG_VALUES:
        return _PythonOption(consumed=int(named[1] is None))
    return _unknown_option(name, word)


def _python_code_option(
    name: str, word: str, rest: str, following: Sequence[str]
) -> Refusal | _PythonOption:
    """Python's `-c` (code inline), `-i` (code from standard input) and `-m` (a module, the
    rest of the word or the next one)."""
    letter = word[len(word) - len(rest) - 1]
    if letter == "c":
        return inline(name, word)
    if letter == "i":
        return refuse("stdin_code", f"runs {name} with -i, which reads code from standard input")
    if rest:
        return _PythonOption(module=rest)
    return _PythonOption(consumed=1, module=following[0] if following else "")


def _module(name: str, module: str, rest: Sequence[str], ctx: Context) -> Refusal | None:
    """`python -m module ...`: the module is read as the program it is (`-m pip uninstall x`
    is pip uninstall), unless it runs code given to it."""
    if not re.match(_MODULE, module):
        return refuse("program_path", f"runs {name} with -m {module!r}, which is not a module name")
    lowered = module.lower()
    if lowered in PYTHON_CODE_MODULES or lowered.split(".")[0] in PYTHON_CODE_MODULES:
        return refuse("inline_code", f"runs {name} with -m {module}, which runs code given to it")
    if lowered in PYTHON_NETWORK_MODULES:
        return refuse("remote", f"runs {name} with -m {module}, which serves or opens addresses")
    return ctx.again([module, *rest])


# --- every other interpreter ------------------------------------------------------------------

# Interpreters that may run a script file, with the letters and long options that give them
# code inline (named in the refusal; any option before the script is refused).
_SHELL = ("c", frozenset({"command"}))
SCRIPT_INTERPRETERS: Mapping[str, tuple[str, frozenset[str]]] = MappingProxyType(
    {
        "node": ("ep", frozenset({"eval", "print"})),
        "nodejs": ("ep", frozenset({"eval", "print"})),
        "ts-node": ("ep", frozenset({"eval", "print"})),
        "tsx": ("ep", frozenset({"eval", "print"})),
        "perl": ("eE", frozenset()), "ruby": ("e", frozenset()),
        "php": ("rBRFE", frozenset()), "lua": ("e", frozenset()), "luajit": ("e", frozenset()),
        "rscript": ("e", frozenset()), "r": ("e", frozenset()),
        "julia": ("eE", frozenset({"eval", "print"})),
        "osascript": ("e", frozenset()), "tclsh": ("", frozenset()), "wish": ("", frozenset()),
        "elixir": ("e", frozenset({"eval"})), "iex": ("e", frozenset({"eval"})),
        "erl": ("", frozenset({"eval"})), "escript": ("", frozenset()),
        "guile": ("c", frozenset()), "racket": ("e", frozenset({"eval"})),
        "ocaml": ("", frozenset()), "groovy": ("e", frozenset()), "scala": ("e", frozenset()),
        "qjs": ("e", frozenset({"eval"})), "d8": ("e", frozenset()), "jsc": ("e", frozenset()),
        "rhino": ("e", frozenset()), "gjs": ("c", frozenset({"command"})),
        "raku": ("e", frozenset()), "perl6": ("e", frozenset()), "rakudo": ("e", frozenset()),
        "hhvm": ("", frozenset()), "rbash": _SHELL, "posh": _SHELL, "oksh": _SHELL,
        "gnuplot": ("e", frozenset()), "swift": ("e", frozenset()), "ghc": ("e", frozenset()),
        "ghci": ("e", frozenset()), "runghc": ("e", frozenset()),
        "runhaskell": ("e", frozenset()), "clisp": ("x", frozenset()),
        "sbcl": ("", frozenset({"eval"})), "ecl": ("", frozenset({"eval"})),
        "octave": ("", frozenset({"eval"})), "matlab": ("r", frozenset()),
        "wolframscript": ("", frozenset({"code"})), "sage": ("c", frozenset()),
        "kotlin": ("e", frozenset()), "jshell": ("", frozenset()),
        "bb": ("e", frozenset({"eval"})), "clojure": ("e", frozenset({"eval"})),
        "sh": _SHELL, "bash": _SHELL, "zsh": _SHELL, "dash": _SHELL, "ksh": _SHELL,
        "mksh": _SHELL, "ash": _SHELL, "csh": _SHELL, "tcsh": _SHELL, "fish": _SHELL,
        "yash": _SHELL, "nu": ("c", frozenset({"commands"})), "elvish": _SHELL,
        "xonsh": _SHELL,
    }
)  # fmt: skip
_INFO = frozenset({"--version", "-v", "-V", "--help", "-h"})


def read_script_interpreter(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """An interpreter other than Python: a script file and its arguments, no options before
    it; or only `--version`/`--help`."""
    if args and all(word in _INFO for word in args):
        return None
    if not args or args[0] == "-":
        return _stdin(name)
    first = args[0]
    if is_option(first) or first.startswith("+"):
        letters, longs = SCRIPT_INTERPRETERS.get(program_name(name), ("", frozenset()))
        named = long_name(first)
        if set(cluster(first)) & set(letters) or (named is not None and named[0] in longs):
            return inline(name, first)
        return refuse(
            "interpreter_option",
            f"passes {name} an option ({first!r}) before its script; a fix runs a script "
            "file with no interpreter options",
        )
    return run_script(name, first, args[1:], ctx)


def run_script(name: str, script: str, rest: Sequence[str], ctx: Context) -> Refusal | None:
    """An interpreter running a script file: not standard input, not an address; its words
    are read as the script's own subcommands."""
    if script == "-" or device_path(script):
        return _stdin(name)
    if "://" in script or script.lower().startswith(("data:", "npm:", "jsr:")):
        return refuse("remote_code", f"runs {name} on code fetched from {script!r}")
    base = posixpath.basename(script).lower()
    return subcommand_refusal(base, rest, ctx, known_as=(base.rsplit(".", 1)[0],))


def inline(name: str, word: str) -> Refusal:
    """The refusal of code given inline to an interpreter."""
    return refuse("inline_code", f"runs {name} with code given inline ({word!r})")


def _stdin(name: str) -> Refusal:
    return refuse("stdin_code", f"runs {name} on code read from standard input")


def _unknown_option(name: str, word: str) -> Refusal:
    return refuse(
        "interpreter_option", f"gives {name} an option this reader does not know ({word!r})"
    )


# --- Deno and Bun: interpreters and package managers in one ----------------------------------

_REMOTE_PREFIXES = ("npm:", "jsr:", "data:", "http:", "https:")


def read_deno(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """Deno: no `eval`, `repl` or `x`, nothing fetched (`run https://...`, `npm:`, `jsr:`)."""
    if not args:
        return _stdin(name)
    remote = _remote(name, args)
    if remote is not None:
        return remote
    words = [word for word in args if not is_option(word)]
    if words[:1] in (["eval"], ["repl"]):
        return refuse("inline_code", f"runs {name}'s {words[0]}, which runs code given to it")
    if words[:1] == ["x"]:
        return _package_runner(f"{name}'s x")
    return read_listed(name, args, ctx)


def read_bun(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """Bun: no `-e`/`-p`/`--eval`/`--print` (before its subcommand: `bun install -p` is
    --production), no `bun x`/`bun create`, nothing fetched."""
    for word in args:
        if not is_option(word):
            break
        named = long_name(word)
        if set(cluster(word)) & set("ep") or (named is not None and named[0] in ("eval", "print")):
            return inline(name, word)
    remote = _remote(name, args)
    if remote is not None:
        return remote
    words = [word for word in args if not is_option(word)]
    if words[:1] in (["x"], ["create"]):
        return _package_runner(f"{name}'s {words[0]}")
    return read_listed(name, args, ctx)


def _remote(name: str, args: Sequence[str]) -> Refusal | None:
    for word in args:
        target = word.partition("=")[2] if is_option(word) else word
        if "://" in target or target.lower().startswith(_REMOTE_PREFIXES):
            return refuse("remote_code", f"runs {name} on code fetched from {target!r}")
    return None


def _package_runner(what: str) -> Refusal:
    return refuse("package_runner", f"runs {what}, which downloads and runs a package")


# --- package managers that run a command (`uv run x`) -------------------------------------------

# (program, subcommand) whose following words are a command: read through when it follows
# the subcommand directly (`uv run pytest`); options between are refused (`uv run --with x`
# fetches a package, others move where the command starts).
RUN_THROUGH = frozenset(
    {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
     ("rye", "run"), ("conda", "run"), ("mamba", "run"), ("micromamba", "run"),
     ("pixi", "run"), ("bundle", "exec")}
)  # fmt: skip
RUN_THROUGH_PROGRAMS = frozenset(program for program, _ in RUN_THROUGH)


def read_run_through(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """A package manager with a subcommand that runs a command (`uv run`, `poetry run`,
    `bundle exec`); `uv tool run` runs a package, as `uvx` does."""
    program = program_name(name)
    runs = next((sub for prog, sub in RUN_THROUGH if prog == program), "")
    if list(args[:1]) == [runs]:
        return _run_through(name, runs, args[1:], ctx)
    head = []  # the subcommand words, before an install's package names
    for word in (word for word in args if not is_option(word)):
        if word.lower() in INSTALL_VERBS:
            break
        head.append(word.lower())
    if runs in head and program == "uv" and "tool" in head:
        return _package_runner(f"{name}'s tool run")
    if runs in head:
        return refuse(
            "wrapper_option",
            f"puts words between {name} and {runs}; a fix names {runs} right after {name}",
        )
    return read_listed(program, args, ctx)


def _run_through(name: str, runs: str, rest: Sequence[str], ctx: Context) -> Refusal | None:
    """The command after `uv run`: named right after it, never with options between."""
    if rest and is_option(rest[0]):
        if rest[0].startswith("--with"):
            return _package_runner(f"{name}'s {runs} with {rest[0]}")
        return refuse(
            "wrapper_option",
            f"passes {name} {runs} an option ({rest[0]!r}); a fix names the program right "
            f"after {runs}",
        )
    return ctx.again(rest) if rest else None
