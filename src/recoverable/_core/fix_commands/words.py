"""How one program's words are read: names, option clusters and abbreviations, compound words.

A shell hands a program its words; the program decides what they mean. The readers here
follow the conventions most programs share, and always lean the safe way: a short cluster
(`-dfx`) is every one of its letters up to one that takes the rest as its value; a long
option (`--har`) is every option it abbreviates (GNU getopt and git accept any unambiguous
prefix); a compound word (`purge-all`, `db:drop`, `dropDatabase`) is each of its parts.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence

# Executable suffixes Windows adds; the program is the same without them.
_EXE_SUFFIXES = (".exe", ".com", ".cmd", ".bat")
# A name and its version: python3.12, pip3, node18, perl5.36.0, python3.13t, python3-dbg.
_VERSIONED = r"^([a-z][a-z_-]*?)(?:-?[0-9][0-9._]*[a-z]?)?(?:-dbg)?$"
_CAMEL = r"([a-z])([A-Z])"
# GNU tools as Homebrew installs them beside the BSD ones: grm is rm, gtimeout is timeout.
_GNU_PREFIXED = frozenset(
    {"rm", "rmdir", "unlink", "shred", "truncate", "dd", "mv", "cp", "ln", "install", "chmod",
     "chown", "chgrp", "tee", "timeout", "env", "nice", "nohup", "stdbuf", "chroot", "kill",
     "find", "xargs", "tar"}
)  # fmt: skip
_NOT_LETTERS = r"[^a-z]+"


def program_name(word: str) -> str:
    """The name a program is known by: lower case (a case-insensitive file system runs
    `PYTHON3` as python3), without a Windows suffix or a version (`python3.12` is python)."""
    name = word.lower()
    for suffix in _EXE_SUFFIXES:
        name = name.removesuffix(suffix)
    versioned = re.match(_VERSIONED, name)
    name = versioned.group(1) if versioned else name
    return name[1:] if name.startswith("g") and name[1:] in _GNU_PREFIXED else name


def parts(word: str) -> list[str]:
    """The lower-case parts of a compound word: split at anything not a letter and where a
    capital starts a part (`dropDatabase`, `db:drop`, `purge_all2` -> drop database, db drop,
    purge all)."""
    spaced = re.sub(_CAMEL, r"\1 \2", word)
    return [part for part in re.split(_NOT_LETTERS, spaced.lower()) if part]


def is_option(word: str) -> bool:
    """Whether a word is an option (`-x`, `--name`), not an operand (`-` alone is stdin)."""
    return len(word) > 1 and word.startswith("-")


def long_name(word: str) -> tuple[str, str | None] | None:
    """`--name=value` as (name, value), `--name` as (name, None); None for any other word.
    The name is lower-cased: a reader never accepts by case."""
    if not word.startswith("--") or word == "--":
        return None
    name, equals, value = word[2:].partition("=")
    return name.lower(), (value if equals else None)


def abbreviates(given: str, names: Iterable[str]) -> str | None:
    """The name among `names` that the long option `given` may stand for: itself, else the
    first (in order) it is a prefix of, as getopt and git's parse-options read an
    abbreviation."""
    ordered = sorted(names)
    if given in ordered:
        return given
    return next((name for name in ordered if name.startswith(given)), None)


def cluster(word: str, takes_value: str = "") -> str:
    """The letters of a short option cluster (`-dfx` -> dfx), stopping after the first letter
    that takes the rest of the word as its value (`-Ufoo` with U taking one -> U). Empty for a
    word that is not a short cluster."""
    if not is_option(word) or word.startswith("--"):
        return ""
    letters = []
    for letter in word[1:]:
        letters.append(letter)
        if letter in takes_value:
            break
    return "".join(letters)


def short_letters(args: Iterable[str], takes_value: str = "") -> str:
    """Every short letter given anywhere in `args`, clusters opened."""
    return "".join(cluster(word, takes_value) for word in args)


def long_names(args: Iterable[str]) -> Iterator[tuple[str, str | None]]:
    """Every long option given anywhere in `args`, as (name, value)."""
    for word in args:
        named = long_name(word)
        if named is not None:
            yield named


def long_hit(args: Iterable[str], refused: Iterable[str]) -> str | None:
    """The first refused long option that one of `args` names or abbreviates."""
    refused = tuple(refused)
    for name, _ in long_names(args):
        hit = abbreviates(name, refused) if name else None
        if hit is not None:
            return hit
    return None


def positional(args: Sequence[str], takes_value: str = "") -> list[str]:
    """The operands among `args`: not options, nor the next word a short option at the end of
    its cluster takes as its value; every word after `--`."""
    found: list[str] = []
    skip_next = False
    for index, word in enumerate(args):
        if skip_next:
            skip_next = False
            continue
        if word == "--":
            found.extend(args[index + 1 :])
            break
        if not is_option(word):
            found.append(word)
            continue
        letters = cluster(word, takes_value)
        skip_next = bool(letters) and letters[-1] in takes_value and word.endswith(letters[-1])
    return found


def device_path(word: str) -> bool:
    """Whether a word names a device or the kernel's files (`/dev/null`, `//dev/sda`,
    `/tmp/../dev/sda`, `../../dev/null`, `--target-directory=/proc/x`, `-t/dev`): an absolute
    path, or one climbing out of the working directory, whose first folder is dev, proc or
    sys (`~/dev` and `dev/` are a person's folders)."""
    candidates = [word, word.partition("=")[2]]
    if is_option(word) and not word.startswith("--"):
        candidates.append(word[2:])
    for candidate in candidates:
        if not candidate.startswith(("/", "..")):
            continue
        path = posixpath.normpath(candidate).split("/")
        rest = [part for part in path if part not in ("", "..")]
        if rest and rest[0] in ("dev", "proc", "sys"):
            return True
    return False
