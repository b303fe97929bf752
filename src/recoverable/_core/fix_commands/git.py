"""git, read as git reads itself: the options before its command, then the command's own.

Refused: whatever makes git run another program (`-c`, `--config-env`, `--exec-path`,
`--upload-pack`, `--receive-pack`, `--exec`, clone's and ls-remote's `-u`, rebase `-x`, the
`ext::` and `fd::` transports, `git config` setting a key that can hold a command), and the
operations that destroy work (clean, reset moving HEAD or discarding changes, push with
force or deleting, checkout over changes, restore, switch discarding, stash clear/drop,
branch/tag deletion, update-ref, reflog expire, filter-branch, gc --prune=now). Short options
are read through clusters (`-fu`, `-dfx`), long ones through git's abbreviations (`--har`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from .generic import destructive_verb, subcommand_refusal
from .model import Context, Refusal, refuse
from .words import abbreviates, cluster, is_option, long_hit, long_names, positional

_RUNS = "git_runs_command"
_DESTROYS = "git_destructive"

# Options before git's command: with a value, without, and the ones that make git run one.
_GLOBAL_VALUES = frozenset(
    {"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds",
     "--attr-source"}
)  # fmt: skip
_GLOBAL_FLAGS = frozenset(
    {"-p", "--paginate", "-P", "--no-pager", "--bare", "--no-replace-objects",
     "--no-lazy-fetch", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
     "--icase-pathspecs", "--no-optional-locks", "--no-advice", "--html-path", "--man-path",
     "--info-path", "--version", "-v", "--help", "-h"}
)  # fmt: skip
_GLOBAL_RUNS = ("-c", "--config-env", "--exec-path")
# Options of every command that name a program for git to run on the other side.
_ANY_RUNS = frozenset({"upload-pack", "receive-pack", "exec"})
_TRANSPORTS = ("ext::", "fd::")


@dataclass(frozen=True, slots=True)
class GitCommand:
    """What one git command's options and subcommands do, for the reader."""

    values: str = ""
    """Short options taking a value (a cluster stops there)."""
    runs: str = ""
    """Short options that make git run a program."""
    runs_long: frozenset[str] = frozenset()
    """Long options that do."""
    destroys: str = ""
    """Short options that destroy work."""
    destroys_long: frozenset[str] = frozenset()
    """Long options that do."""
    does: str = "destroys work"
    """What the destructive options do, for the refusal."""
    subcommands: Mapping[str, tuple[str, str]] = field(default_factory=lambda: MappingProxyType({}))
    """Its own subcommands that are refused: name to (rule, what it does)."""


def _subs(**does: tuple[str, str]) -> Mapping[str, tuple[str, str]]:
    return MappingProxyType(does)


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


_REMOVES = (_DESTROYS, "removes what it names")
_FETCH = GitCommand(
    values="oj",
    runs="u",
    runs_long=_set("upload-pack"),
    destroys="f",
    destroys_long=_set("force"),
    does="overwrites local branches",
)
COMMANDS: Mapping[str, GitCommand] = MappingProxyType(
    {
        "clone": GitCommand(values="bcjou", runs="cu",
                            runs_long=_set("config", "template", "upload-pack")),
        "init": GitCommand(runs_long=_set("template")),
        "fetch": _FETCH,
        "pull": _FETCH,
        "ls-remote": GitCommand(runs="u", runs_long=_set("upload-pack")),
        "fetch-pack": GitCommand(runs_long=_set("upload-pack", "exec")),
        "send-pack": GitCommand(runs_long=_set("receive-pack", "exec")),
        "archive": GitCommand(values="o", destroys="o", destroys_long=_set("output"),
                              does="writes over the file it names"),
        "push": GitCommand(
            values="o", destroys="fd",
            destroys_long=_set("force", "force-with-lease", "force-if-includes", "delete",
                               "mirror", "prune"),
            does="overwrites or deletes remote branches",
        ),
        "rebase": GitCommand(values="sX", runs="x", runs_long=_set("exec")),
        "difftool": GitCommand(values="t", runs="x", runs_long=_set("extcmd")),
        "grep": GitCommand(values="efABCm", runs="O", runs_long=_set("open-files-in-pager")),
        "reset": GitCommand(destroys_long=_set("hard", "merge", "keep"),
                            does="discards uncommitted changes"),
        "checkout": GitCommand(
            values="bB", destroys="fBp",
            destroys_long=_set("force", "ours", "theirs", "patch", "pathspec-from-file"),
            does="discards changes or resets a branch",
        ),
        "switch": GitCommand(values="cC", destroys="fC",
                             destroys_long=_set("force", "discard-changes", "force-create",
                                                "orphan"),
                             does="discards changes or resets a branch"),
        "branch": GitCommand(values="u", destroys="dDfMC", destroys_long=_set("delete", "force"),
                             does="deletes or overwrites branches"),
        "tag": GitCommand(values="mFu", destroys="df", destroys_long=_set("delete", "force"),
                          does="deletes or overwrites tags"),
        "mv": GitCommand(destroys="f", destroys_long=_set("force"), does="overwrites files"),
        "symbolic-ref": GitCommand(destroys="d", destroys_long=_set("delete"),
                                   does="deletes a ref"),
        "replace": GitCommand(destroys="d", destroys_long=_set("delete"), does="deletes a ref"),
        "stash": GitCommand(subcommands=_subs(clear=(_DESTROYS, "deletes every stash"),
                                              drop=(_DESTROYS, "deletes a stash"))),
        "reflog": GitCommand(subcommands=_subs(expire=_REMOVES, delete=_REMOVES, drop=_REMOVES)),
        "worktree": GitCommand(subcommands=_subs(remove=_REMOVES, prune=_REMOVES)),
        "remote": GitCommand(subcommands=_subs(remove=_REMOVES, rm=_REMOVES, prune=_REMOVES)),
        "notes": GitCommand(subcommands=_subs(remove=_REMOVES, prune=_REMOVES)),
        "lfs": GitCommand(subcommands=_subs(prune=_REMOVES)),
        "submodule": GitCommand(subcommands=_subs(
            foreach=(_RUNS, "runs a command in every submodule"),
            deinit=(_DESTROYS, "removes submodules' working trees"))),
        "bisect": GitCommand(subcommands=_subs(run=(_RUNS, "runs a command it is given"))),
        "hook": GitCommand(subcommands=_subs(run=(_RUNS, "runs a hook"))),
    }
)  # fmt: skip
# Commands refused whatever their words.
REFUSED_COMMANDS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "filter-branch": (_DESTROYS, "rewrites history"),
        "filter-repo": (_DESTROYS, "rewrites history"),
        "update-ref": (_DESTROYS, "rewrites a ref directly"),
        "prune": (_DESTROYS, "deletes unreachable objects"),
        "restore": (_DESTROYS, "discards changes to files"),
        "checkout-index": (_DESTROYS, "overwrites files with the index"),
        "read-tree": (_DESTROYS, "overwrites the index and files"),
        "send-email": (_RUNS, "sends mail and runs the programs it is given"),
        "instaweb": (_RUNS, "starts a web server it is given"),
        "daemon": (_RUNS, "serves repositories to the network"),
        "web--browse": (_RUNS, "starts a browser it is given"),
        "shell": (_RUNS, "runs commands"),
        "upload-pack": (_RUNS, "serves a repository"),
        "receive-pack": (_RUNS, "receives into a repository and runs its hooks"),
        "upload-archive": (_RUNS, "serves a repository"),
    }
)
# Commands with nothing to refuse beyond the options every command is read for.
PLAIN_COMMANDS = frozenset(
    {"status", "log", "diff", "show", "add", "commit", "merge", "am", "apply", "blame",
     "describe", "shortlog", "ls-files", "ls-tree", "rev-parse", "rev-list", "cat-file",
     "cherry-pick", "revert", "format-patch", "help", "version", "maintenance",
     "sparse-checkout", "range-diff", "whatchanged", "stage", "annotate", "bundle",
     "count-objects", "fsck", "mergetool", "rerere", "request-pull", "show-branch",
     "show-ref", "var", "verify-commit", "verify-tag", "cherry", "bugreport", "for-each-ref",
     "hash-object", "merge-base", "name-rev", "repack", "pack-refs", "credential", "gui",
     "citool", "gitk", "config", "gc", "clean", "rm"}
)  # fmt: skip
# `git config` keys a fix may set: two-part keys of these sections (a three-part key names a
# driver, filter, remote or alias, which hold commands), and a few of core's.
_SAFE_SECTIONS = frozenset(
    {"user", "pull", "push", "fetch", "init", "color", "advice", "rerere", "status", "log",
     "column", "commit", "tag", "merge", "rebase", "branch", "format", "feature", "gc",
     "index", "pack", "checkout", "clone", "blame", "grep", "am", "apply", "i18n", "diff"}
)  # fmt: skip
_UNSAFE_KEYS = frozenset({"diff.external", "init.templatedir", "merge.tool", "diff.tool"})
_SAFE_CORE_KEYS = frozenset(
    {"core.autocrlf", "core.eol", "core.filemode", "core.ignorecase", "core.longpaths",
     "core.quotepath", "core.safecrlf", "core.symlinks", "core.untrackedcache",
     "core.preloadindex", "core.fscache", "core.compression", "core.whitespace",
     "core.precomposeunicode"}
)  # fmt: skip
_CONFIG_VERBS = frozenset(
    {"get", "set", "unset", "list", "rename-section", "remove-section", "edit", "get-color",
     "get-colorbool"}
)  # fmt: skip
_CONFIG_READS = ("get", "get-all", "get-regexp", "get-urlmatch", "get-color", "get-colorbool",
                 "list")  # fmt: skip


def read_git(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """git: its global options, then its command."""
    index = 0
    while index < len(args) and is_option(args[index]):
        word = args[index]
        if word.startswith(_GLOBAL_RUNS):
            return refuse(_RUNS, f"runs {name} with {word}, which can make git run any command")
        option = word.partition("=")[0]
        if option in _GLOBAL_VALUES:
            index += 1 if "=" in word else 2
        elif word in _GLOBAL_FLAGS:
            index += 1
        else:
            return refuse(
                _RUNS,
                f"gives {name} an option before its command that this reader does not "
                f"know ({word!r})",
            )
    if index >= len(args):
        return None
    return read_git_command(name, args[index], args[index + 1 :], ctx)


def read_git_command(name: str, command: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """One git command and its words (`git-clean -f` is read as `git clean -f`)."""
    label = f"{name}'s {command}"
    # A case-insensitive file system finds git-push for `git PUSH`.
    command = command.lower()
    transport = next((word for word in args if _transport(word)), None)
    if transport is not None:
        return refuse(_RUNS, f"runs {label} with {transport!r}, a transport that runs a command")
    if command in REFUSED_COMMANDS:
        rule, does = REFUSED_COMMANDS[command]
        return refuse(rule, f"runs {label}, which {does}")
    spec = COMMANDS.get(command)
    if spec is None and command not in PLAIN_COMMANDS:  # an alias, an extension, git-lfs...
        return _long_options(label, GitCommand(), args) or subcommand_refusal(
            name, [command, *args], ctx
        )
    spec = spec or GitCommand()
    return _options(label, spec, args) or _READERS.get(command, _no_more)(label, spec, args)


def _transport(word: str) -> bool:
    target = word.partition("=")[2] if is_option(word) else word
    return target.lower().startswith(_TRANSPORTS)


def _options(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    """The options that make git run a program or destroy work, then the refused
    subcommands of a command that has them (`stash clear`)."""
    return (
        _long_options(label, spec, args)
        or _short_options(label, spec, args)
        or _subcommand(label, spec, args)
    )


def _long_options(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    runs = long_hit(args, _ANY_RUNS | spec.runs_long)
    if runs is not None:
        return refuse(_RUNS, f"runs {label} with --{runs}, which names a program for git to run")
    destroys = long_hit(args, spec.destroys_long)
    if destroys is not None:
        return refuse(_DESTROYS, f"runs {label} with --{destroys}, which {spec.does}")
    return None


def _short_options(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    for word in args:
        letters = cluster(word, spec.values)
        ran = next((letter for letter in letters if letter in spec.runs), None)
        if ran is not None:
            return refuse(
                _RUNS, f"runs {label} with -{ran} ({word!r}), which names a program for git to run"
            )
        destroyed = next((letter for letter in letters if letter in spec.destroys), None)
        if destroyed is not None:
            return refuse(
                _DESTROYS, f"runs {label} with -{destroyed} ({word!r}), which {spec.does}"
            )
    return None


def _subcommand(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    sub = next((word for word in args if not is_option(word)), None)
    if sub is None or not spec.subcommands:
        return None
    if sub in spec.subcommands:
        rule, does = spec.subcommands[sub]
        return refuse(rule, f"runs {label} {sub}, which {does}")
    if destructive_verb(sub):
        return refuse(_DESTROYS, f"runs {label} {sub}, which removes what it names")
    return None


def _no_more(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    return None


def _before_dashes(args: Sequence[str], spec: GitCommand) -> list[str]:
    words = list(args[: list(args).index("--")]) if "--" in args else list(args)
    return positional(words, spec.values)


def _reset(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    moved = [word for word in _before_dashes(args, spec) if word != "HEAD"]
    if moved:
        return refuse(
            _DESTROYS, f"runs {label} with {moved[0]}, which moves the branch to another commit"
        )
    return None


def _refspecs(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    forced = next(
        (word for word in positional(args, spec.values) if word.startswith(("+", ":"))), None
    )
    if forced is not None:
        return refuse(
            _DESTROYS, f"runs {label} with {forced}, which force-updates or deletes a branch"
        )
    return None


def _checkout(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    if "--" in args:
        return refuse(
            _DESTROYS, f"runs {label} with --, which discards changes to the files it names"
        )
    named = positional(args, spec.values)
    if len(named) > 1 or any("." in word or word.startswith(":") for word in named):
        return refuse(
            _DESTROYS, f"runs {label} with {' '.join(named)}, which may discard changes to files"
        )
    return None


def _clean(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    letters = "".join(cluster(word) for word in args)
    dry = "n" in letters or long_hit(args, ("dry-run",)) is not None
    if not dry or "i" in letters or long_hit(args, ("interactive",)) is not None:
        return refuse(_DESTROYS, f"runs {label}, which deletes untracked files")
    return None


def _rm(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    letters = "".join(cluster(word) for word in args)
    if long_hit(args, ("cached", "dry-run")) is None and "n" not in letters:
        return refuse(_DESTROYS, f"runs {label}, which deletes files")
    return None


def _gc(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    for name, value in long_names(args):
        if value is not None and abbreviates(name, ("prune",)):
            return refuse(
                _DESTROYS, f"runs {label} with --prune={value}, which deletes unreachable objects"
            )
    return None


def _config(label: str, spec: GitCommand, args: Sequence[str]) -> Refusal | None:
    letters = "".join(cluster(word, "f") for word in args)
    named = positional(args, "f")
    verb = named[0] if named and named[0] in _CONFIG_VERBS else None
    if verb in ("unset", "remove-section", "rename-section") or long_hit(
        args, ("unset", "unset-all", "remove-section", "rename-section")
    ):
        return refuse(_DESTROYS, f"runs {label}, removing settings")
    if verb == "edit" or "e" in letters or long_hit(args, ("edit",)):
        return refuse(_RUNS, f"runs {label} with --edit, which runs an editor")
    keys = named[1:2] if verb == "set" else named[:1]
    reading = (
        verb in ("get", "list", "get-color", "get-colorbool")
        or "l" in letters
        or (long_hit(args, _CONFIG_READS) is not None)
    )
    adds = len(named) >= 2 or long_hit(args, ("add", "replace-all")) is not None
    writes = verb == "set" or (verb is None and not reading and adds)
    if writes and ("f" in letters or long_hit(args, ("file",))):
        return refuse(_DESTROYS, f"runs {label} with --file, which writes the file it names")
    unsafe = next((key for key in keys if writes and not _safe_key(key)), None)
    if unsafe is not None:
        return refuse(
            _RUNS,
            f"runs {label} with {unsafe}, a setting that can make git run a command or "
            "weaken its checks",
        )
    return None


def _safe_key(key: str) -> bool:
    lowered = key.lower()
    section, _, name = lowered.partition(".")
    if lowered in _SAFE_CORE_KEYS:
        return True
    return (
        bool(name) and "." not in name and section in _SAFE_SECTIONS and lowered not in _UNSAFE_KEYS
    )


_Reader = Callable[[str, GitCommand, Sequence[str]], "Refusal | None"]
_READERS: Mapping[str, _Reader] = MappingProxyType(
    {
        "reset": _reset, "push": _refspecs, "fetch": _refspecs, "pull": _refspecs,
        "checkout": _checkout, "clean": _clean, "rm": _rm, "gc": _gc, "config": _config,
    }
)  # fmt: skip
