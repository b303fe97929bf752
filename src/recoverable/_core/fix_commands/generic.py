"""Any program's subcommands and options, read for what they would destroy or run.

A program this package has no reader for (`mytool purge-all`, `gh repo delete`, `aws s3 rm`,
`heroku apps:destroy`) is read by the words tools share: a subcommand or option whose parts
name a destructive verb (`purge-all`, `factory-reset`, `db:drop`, `--delete-branch`,
`--action=wipe`), `clean` or `clear` with force, `--force` itself, an option naming a command
to run (`--exec`, `--eval`, `--command`), and the subcommands the tool's author marked
destructive. The operands of an install (`npm install remove-markdown`) are package names,
not subcommands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .model import Context, Refusal, refuse
from .words import abbreviates, is_option, long_name, parts, short_letters

# Verbs that destroy what they name. A part that is one of these, or one of them with an
# ending (`resets`, `purged`, `deleteall`), is destructive; the longer ones also at the start
# of a glued word (`resetdb`, `dropdatabase` is `drop` + `database`).
DESTRUCTIVE_VERBS = frozenset(
    {
        "purge", "wipe", "wipeout", "destroy", "nuke", "erase", "reset", "delete", "del",
        "remove", "rm", "rmi", "rmdir", "drop", "dropdb", "truncate", "uninstall", "unlink",
        "prune", "kill", "shred", "obliterate", "clobber", "flush", "flushall", "flushdb",
        "expunge", "zap", "autoremove", "autopurge", "deregister", "unregister", "revoke",
        "discard", "annihilate", "teardown", "terminate", "decommission", "rollback",
        "overwrite", "unpublish",
    }
)  # fmt: skip
# Longest first, so that a part names the verb it is (`flushall`, not `flush`).
_VERBS_LONGEST_FIRST = tuple(sorted(DESTRUCTIVE_VERBS, key=lambda verb: (-len(verb), verb)))
_GLUED_MIN = 5
_ENDINGS = ("s", "es", "d", "ed", "all")
# Verbs that are destructive with force only (`cache clean` is a fix; `clean -f` is not).
FORCE_VERBS = frozenset({"clean", "clear"})
# Subcommand words that hand the rest of the words to another program.
RUNS_WORDS = frozenset({"exec", "eval", "shell", "sh", "ssh"})
# Option-name parts that name a program or code to run.
COMMAND_PARTS = frozenset(
    {"exec", "execdir", "eval", "command", "cmd", "shell", "hook", "pager", "editor",
     "program", "interpreter"}
)  # fmt: skip
# Subcommands whose operands are packages (or other names), not subcommands.
INSTALL_VERBS = frozenset({"install", "i", "in", "add", "upgrade", "update", "reinstall"})
# Package managers, whose install of an address runs what is there (`pip install
# git+https://...` runs its setup; `npm install github:x/y` its scripts).
PACKAGE_MANAGERS = frozenset(
    {"pip", "uv", "pipx", "npm", "pnpm", "yarn", "bun", "gem", "cargo", "poetry", "pdm",
     "composer", "conda", "mamba", "brew"}
)  # fmt: skip
_ADDRESSES = ("git+", "github:", "gitlab:", "bitbucket:", "file:", "http:", "https:")


def install_from_address(program: str, args: Sequence[str]) -> Refusal | None:
    """A package manager installing what an address names, not a package by name."""
    if program not in PACKAGE_MANAGERS:
        return None
    installing = False
    for word in args:
        if (
            installing
            and not is_option(word)
            and ("://" in word or word.lower().startswith(_ADDRESSES))
        ):
            return refuse(
                "remote_code", f"runs {program} to install {word!r}, code fetched from an address"
            )
        installing = installing or word.lower() in INSTALL_VERBS
    return None


def destructive_verb(word: str) -> str | None:
    """The destructive verb one of a word's parts names, if any."""
    for part in parts(word):
        for verb in _VERBS_LONGEST_FIRST:
            if part == verb or (
                part.startswith(verb) and (part[len(verb) :] in _ENDINGS or len(verb) >= _GLUED_MIN)
            ):
                return verb
    return None


def marked(word: str, marks: frozenset[str]) -> str | None:
    """The author's mark a subcommand hits: the word itself, or one of its parts."""
    lowered = word.lower()
    if lowered in marks:
        return lowered
    return next((part for part in parts(word) if part in marks), None)


def option_refusal(program: str, word: str) -> Refusal | None:
    """An option of a program this package has no reader for, read by its name and value
    (`--delete-all`, `--exec=...`, `--mode=wipe`; `-delete` as find and terraform spell it)."""
    named = long_name(word)
    if named is None:
        if not is_option(word) or len(word) <= 2:
            return None
        named = (word[1:].lower(), None)
    name, value = named
    if not name.startswith("no-"):
        verb = destructive_verb(name)
        if verb is not None:
            return refuse(
                "destructive_option", f"passes {program} {word!r}, a destructive option ({verb})"
            )
        if COMMAND_PARTS.intersection(parts(name)):
            return refuse(
                "command_option", f"passes {program} {word!r}, which names a command to run"
            )
        if len(name) >= 3 and abbreviates(name, ("force",)):
            return refuse("destructive_option", f"passes {program} {word!r}, which forces")
    verb = destructive_verb(value) if value else None
    if verb is not None:
        return refuse(
            "destructive_option", f"passes {program} {word!r}, a destructive value ({verb})"
        )
    return None


def _forced(args: Sequence[str]) -> bool:
    return "f" in short_letters(args) or any(
        (named := long_name(word)) is not None and abbreviates(named[0], ("force",)) is not None
        for word in args
    )


Alias = tuple[str, str]
"""How one program spells a refused subcommand its own way: (rule, what it does), as in
`npm un` ("destructive_subcommand", "uninstalls a package")."""


def subcommand_refusal(
    program: str,
    args: Sequence[str],
    ctx: Context,
    aliases: Mapping[str, Alias] | None = None,
    known_as: Sequence[str] = (),
) -> Refusal | None:
    """Read the subcommands and options of `program`, with the subcommands it spells its own
    way (`aliases`); its author's marks are found under its name and any of `known_as` (a
    script's name without `.py`)."""
    aliases = aliases or {}
    marks = frozenset().union(
        *(ctx.marks.get(known, frozenset()) for known in (program, *known_as))
    )
    operands = False
    for word in args:
        if is_option(word):
            found = option_refusal(program, word)
        else:
            found = _word_refusal(program, word, marks, aliases, operands=operands)
            found = found or _clean_with_force(program, word, args, operands=operands)
            operands = operands or word.lower() in INSTALL_VERBS
        if found is not None:
            return found
    return None


def _word_refusal(
    program: str,
    word: str,
    marks: frozenset[str],
    aliases: Mapping[str, Alias],
    *,
    operands: bool,
) -> Refusal | None:
    if marked(word, marks) is not None:
        return refuse(
            "marked_destructive",
            f"runs {program}'s {word}, which its author marked destructive",
        )
    if operands:  # a package name (`npm install remove-markdown`)
        return None
    found = _word_rule(word, aliases)
    if found is None:
        return None
    rule, what = found
    return refuse(rule, f"runs {program}'s {word}, {what}")


def _word_rule(word: str, aliases: Mapping[str, Alias]) -> tuple[str, str] | None:
    """(rule, what the word is) for a subcommand word that is refused."""
    lowered = word.lower()
    if lowered in aliases:
        rule, does = aliases[lowered]
        return rule, f"which {does}"
    verb = destructive_verb(word)
    if verb is not None:
        return "destructive_subcommand", f"a destructive subcommand ({verb})"
    if word.startswith("!"):
        return "command_option", "an alias that runs a shell command"
    if lowered in RUNS_WORDS:
        return "runs_other_program", "which runs a command given to it"
    if COMMAND_PARTS.intersection(parts(word)):
        return "command_option", "which names a command to run"
    return None


def _clean_with_force(
    program: str, word: str, args: Sequence[str], *, operands: bool
) -> Refusal | None:
    if operands or not FORCE_VERBS.intersection(parts(word)) or not _forced(args):
        return None
    return refuse("destructive_subcommand", f"runs {program}'s {word} with force")
