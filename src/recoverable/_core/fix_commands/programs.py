"""The programs a fix may not run, and the options and subcommands of the ones it may.

Three tables, read by name (lower case, without a Windows suffix or a version): programs
refused whatever their words (`rm`, `dd`, `shutdown`, `curl`, `sudo`, `xargs`, `awk`, `npx`);
options refused in clusters and abbreviations (`psql -c`, `tar --to-command`, `chmod -R`,
`cp -f`); subcommands a program spells its own way (`npm un`, `pnpm dlx`, `systemctl stop`).
A few programs have a reader of their own (crontab, redis-cli, sqlite3, the file movers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from .generic import Alias, install_from_address, subcommand_refusal
from .model import Context, Refusal, refuse
from .words import cluster, device_path, is_option, long_hit, positional

Reader = Callable[[str, Sequence[str], Context], "Refusal | None"]
"""A program's reader: its name, its arguments, the context; the refusal, or None."""

# --- programs refused whatever their words ----------------------------------------------------

_DELETES = ("deletes_files", "deletes files")
_DEVICES = ("devices", "writes over disks or devices")
_STOPS = ("stops_processes", "stops processes or the machine")
_DOWNLOADS = ("downloads", "downloads from the network; a fix installs through a package manager")
_REMOTE = ("remote", "connects to another machine and can run commands there")
_PRIVILEGE = ("privilege", "runs a command as another user")
_INPUT = ("runs_other_program", "builds the command it runs from its input")
_FOLLOWS = ("runs_other_program", "runs another program in a way this reader does not follow")
_TEXT = ("runs_text", "runs the program text it is given")
_EDITOR = ("runs_text", "is an editor, and can run commands")
_RUNNER = ("package_runner", "downloads and runs a package")
_WRITES = ("writes_file", "writes over the files it names")
_DROPS = ("database", "drops a database or its users")
_SCHEDULES = ("schedule", "schedules commands to run later")
_SHELL_STATE = (
    "shell_state",
    "changes the shell it is pasted into (its variables, aliases, traps)",
)


def _kind(kind: tuple[str, str], *names: str) -> dict[str, tuple[str, str]]:
    return dict.fromkeys(names, kind)


REFUSED_PROGRAMS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        **_kind(_DELETES, "rm", "rmdir", "unlink", "shred", "srm", "truncate", "del", "erase",
                "rd", "wipe"),
        **_kind(_DEVICES, "dd", "wipefs", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk",
                "parted", "mkswap", "blkdiscard", "hdparm", "format", "mke2fs", "mkdosfs",
                "mkntfs", "mkexfatfs"),
        **_kind(_STOPS, "kill", "pkill", "killall", "skill", "xkill", "taskkill", "shutdown",
                "reboot", "halt", "poweroff", "init", "telinit"),
        **_kind(_DOWNLOADS, "curl", "wget", "aria", "axel", "http", "https", "xh", "curlie",
                "certutil", "bitsadmin"),
        **_kind(_REMOTE, "ssh", "scp", "sftp", "rsync", "mosh", "nc", "ncat", "netcat",
                "socat", "telnet", "ftp", "rsh", "rlogin"),
        # run0 reads as "run": a name is read without its version
        **_kind(_PRIVILEGE, "sudo", "sudoedit", "sudo-rs", "doas", "su", "pkexec", "runuser",
                "run", "gosu", "su-exec"),
        **_kind(_INPUT, "xargs", "parallel", "sem"),
        **_kind(_FOLLOWS, "strace", "ltrace", "valgrind", "gdb", "lldb", "perf", "chroot",
                "unshare", "nsenter", "firejail", "bwrap", "fakeroot", "proot", "systemd-run",
                "flock", "script", "watch", "entr", "xvfb-run", "unbuffer", "rlwrap",
                "numactl", "prlimit", "cgexec", "caffeinate", "sandbox-exec", "catchsegv",
                "dbus-run-session", "sg", "newgrp", "torsocks", "proxychains", "faketime",
                "cpulimit", "trickle", "ssh-agent", "direnv", "dotenv", "tini", "dumb-init",
                "tmux", "screen", "byobu", "xdg-open", "open", "start", "winpty", "wsl",
                "builtin", "expect", "tsocks", "torify", "setpriv", "setarch", "linux32",
                "linux64", "runcon", "wine", "ld.so"),
        **_kind(_TEXT, "awk", "gawk", "mawk", "nawk", "sed", "gsed", "pwsh", "powershell",
                "cmd", "eval", "source", "mshta", "wscript", "cscript", "rundll", "regsvr",
                "m4", "dc", "iex", "icm", "invoke-expression", "invoke-command", "saps",
                "start-process"),
        **_kind(_EDITOR, "vi", "vim", "nvim", "view", "vimdiff", "ex", "ed", "emacs",
                "emacsclient"),
        **_kind(_RUNNER, "npx", "pnpx", "bunx", "uvx", "dnx"),
        **_kind(_WRITES, "tee", "sponge", "set-content", "out-file"),
        **_kind(_DOWNLOADS, "iwr", "irm", "invoke-webrequest", "invoke-restmethod"),
        **_kind(_DELETES, "ri", "remove-item"),
        **_kind(_STOPS, "stop-process", "stop-computer", "restart-computer"),
        **_kind(_SHELL_STATE, "export", "set", "unset", "declare", "typeset", "readonly",
                "local", "setenv", "unsetenv", "alias", "unalias", "trap", "enable", "hash",
                "fc", "history", "bind", "shopt", "ulimit", "umask", "exit", "logout", "call",
                "sal", "set-alias", "new-alias"),
        **_kind(_DROPS, "dropdb", "dropuser"),
        **_kind(_SCHEDULES, "at", "batch", "schtasks"),
    }
)  # fmt: skip
# Families refused by the start of their name (mkfs.ext4, mkfs.vfat).
REFUSED_PREFIXES: Mapping[str, tuple[str, str]] = MappingProxyType({"mkfs": _DEVICES})


def refused_program(name: str) -> tuple[str, str] | None:
    """(rule, what it does) for a program refused whatever its words."""
    found = REFUSED_PROGRAMS.get(name)
    if found is not None:
        return found
    return next(
        (kind for prefix, kind in REFUSED_PREFIXES.items() if name.startswith(prefix)), None
    )


def read_refused(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """The reader of a program refused whatever its words."""
    rule, does = refused_program(name) or ("unsafe", "is not safe to run")
    return refuse(rule, f"runs {name}, which {does}")


# --- options refused, in clusters and abbreviations ---------------------------------------------


@dataclass(frozen=True, slots=True)
class RefusedOptions:
    """Options of one program that are refused, and what they do."""

    rule: str
    """The rule a refusal names."""
    does: str
    """What the options do, for the refusal's sentence."""
    shorts: str = ""
    """Short letters refused anywhere in a cluster."""
    longs: tuple[str, ...] = ()
    """Long options refused, and any abbreviation of them."""
    words: tuple[str, ...] = ()
    """Words refused as they start (`-exec`, `-TT`), for programs with single-dash options."""
    values: str = ""
    """Short letters whose value is the rest of the cluster (so that `-Ufoo` is not `-f`)."""


_SQL = "runs the SQL or script it is given"
_DB = "database"
_RUNS = ("runs_other_program", "runs a program it is given")
_OVERWRITE = RefusedOptions(
    "force_overwrite",
    "forces over its target",
    shorts="f",
    longs=("force", "remove-destination"),
    values="St",
)
_RECURSIVE = RefusedOptions(
    "recursive_permissions",
    "changes permissions of a whole tree",
    shorts="R",
    longs=("recursive", "no-preserve-root"),
)
_NODE_TOOLS = RefusedOptions(
    "command_option",
    "names a program, or options for the code it runs",
    longs=(
        "script-shell",
        "node-options",
        "call",
        "git",
        "editor",
        "browser",
        "viewer",
        "shell",
    ),
)
_PSQL = "cdfhLopPRTUvF"
_MYSQL = RefusedOptions(
    _DB,
    _SQL,
    shorts="e",
    values="hPuDSp",
    longs=(
        "execute",
        "init-command",
        "init-command-add",
        "pager",
        "tee",
        "plugin-dir",
        "default-auth",
    ),
)
_MONGO = RefusedOptions(_DB, _SQL, shorts="f", longs=("eval", "file"))
_SQLITE = RefusedOptions(_DB, _SQL, words=("-cmd", "--cmd", "-init", "--init"))
_CLICKHOUSE = RefusedOptions(_DB, _SQL, shorts="q", longs=("query", "queries-file"))
_PACMAN = RefusedOptions(
    "destructive_subcommand", "uninstalls packages", shorts="R", longs=("remove",)
)
_DELETES_FILES = "deletes files"
_PIP_INDEX = RefusedOptions(
    "remote_code",
    "installs from a package index or address it names",
    shorts="if",
    longs=("index-url", "extra-index-url", "find-links", "trusted-host", "default-index", "index"),
    values="rceti",
)
_NODE_REGISTRY = RefusedOptions(
    "remote_code", "installs from a registry it names", longs=("registry",)
)
OPTIONS: Mapping[str, tuple[RefusedOptions, ...]] = MappingProxyType(
    {
        "psql": (RefusedOptions(_DB, _SQL, shorts="cf", longs=("command", "file"), values=_PSQL),
                 RefusedOptions("writes_file", "writes over a file", shorts="oL",
                                longs=("output", "log-file"), values=_PSQL)),
        "mysql": (_MYSQL,), "mariadb": (_MYSQL,),
        "mongo": (_MONGO,), "mongosh": (_MONGO,),
        "cqlsh": (RefusedOptions(_DB, _SQL, shorts="ef", longs=("execute", "file")),),
        "clickhouse-client": (_CLICKHOUSE,), "clickhouse": (_CLICKHOUSE,),
        "sqlcmd": (RefusedOptions(_DB, _SQL, shorts="Qqi"),),
        "duckdb": (RefusedOptions(_DB, _SQL, words=("-c", "-cmd", "-s", "-f", "-init")),),
        "sqlite": (_SQLITE,), "sqlite3": (_SQLITE,),
        "tar": (RefusedOptions(*_RUNS, shorts="IF",
                               longs=("to-command", "use-compress-program", "checkpoint-action",
                                      "info-script", "new-volume-script", "rsh-command",
                                      "rmt-command")),
                RefusedOptions("deletes_files", _DELETES_FILES,
                               longs=("remove-files", "recursive-unlink", "unlink-first"))),
        "zip": (RefusedOptions(*_RUNS, words=("-TT",), longs=("unzip-command",)),),
        "find": (RefusedOptions(*_RUNS, words=("-exec", "-execdir", "-ok", "-okdir")),
                 RefusedOptions("deletes_files", _DELETES_FILES, words=("-delete",)),
                 RefusedOptions("writes_file", "writes over a file",
                                words=("-fprint", "-fprint0", "-fprintf", "-fls"))),
        "chmod": (_RECURSIVE,), "chown": (_RECURSIVE,), "chgrp": (_RECURSIVE,),
        "mv": (_OVERWRITE,), "cp": (_OVERWRITE,), "ln": (_OVERWRITE,),
        "install": (RefusedOptions("force_overwrite", "forces over its target", shorts="f",
                                   longs=("force",), values="gmoSt"),),
        "npm": (_NODE_TOOLS, _NODE_REGISTRY), "pnpm": (_NODE_TOOLS, _NODE_REGISTRY),
        "yarn": (_NODE_TOOLS, _NODE_REGISTRY), "bun": (_NODE_REGISTRY,),
        "pacman": (_PACMAN,), "yay": (_PACMAN,), "paru": (_PACMAN,),
        "fuser": (RefusedOptions("stops_processes", "kills the processes using a file",
                                 shorts="k", longs=("kill",)),),
        "pip": (_PIP_INDEX,), "uv": (_PIP_INDEX,), "pipx": (_PIP_INDEX,),
    }
)  # fmt: skip


def options_refusal(name: str, args: Sequence[str]) -> Refusal | None:
    """The first refused option of `name` among `args`."""
    for spec in OPTIONS.get(name, ()):
        found = _refused_option(spec, args)
        if found is not None:
            return refuse(spec.rule, f"runs {name} with {found}, which {spec.does}")
    return None


def _refused_option(spec: RefusedOptions, args: Sequence[str]) -> str | None:
    hit = long_hit(args, spec.longs)
    if hit is not None:
        return f"--{hit}"
    for word in args:
        if spec.words and word.startswith(spec.words):
            return word
        if spec.shorts and not spec.words:
            letter = next((ch for ch in cluster(word, spec.values) if ch in spec.shorts), None)
            if letter is not None:
                return f"-{letter} ({word!r})"
    return None


# --- subcommands a program spells its own way -------------------------------------------------

_UNINSTALLS = ("destructive_subcommand", "uninstalls a package")
_CONTAINER = ("runs_other_program", "runs a command in a container")
_POWER = ("stops_processes", "stops, disables or powers off services or the machine")
_RUNS_PACKAGE = ("package_runner", "downloads and runs a package, or runs a command it is given")
_CODE = ("runs_text", "runs code given to it")


def _aliases(kind: tuple[str, str], *words: str) -> dict[str, Alias]:
    return dict.fromkeys(words, kind)


ALIASES: Mapping[str, Mapping[str, Alias]] = MappingProxyType(
    {
        "npm": {**_aliases(_UNINSTALLS, "un", "r", "unpublish", "deprecate"),
                **_aliases(_RUNS_PACKAGE, "exec", "x", "create", "explore")},
        "pnpm": {**_aliases(_UNINSTALLS, "un"), **_aliases(_RUNS_PACKAGE, "dlx", "exec", "create")},
        "yarn": _aliases(_RUNS_PACKAGE, "dlx", "exec", "create"),
        "pipx": _aliases(_RUNS_PACKAGE, "run", "runpip"),
        "gem": {**_aliases(_RUNS_PACKAGE, "exec"), **_aliases(_UNINSTALLS, "cleanup")},
        "brew": {**_aliases(_CODE, "sh", "ruby", "irb"), **_aliases(_UNINSTALLS, "untap")},
        "apt": _aliases(_UNINSTALLS, "autopurge"),
        "apt-get": _aliases(_UNINSTALLS, "autopurge"),
        "aptitude": _aliases(_UNINSTALLS, "autopurge"),
        "go": _aliases(("deletes_files", "deletes caches or build files"), "clean"),
        "aws": _aliases(("destructive_subcommand", "removes a bucket"), "rb"),
        "docker": _aliases(_CONTAINER, "run", "exec"),
        "podman": _aliases(_CONTAINER, "run", "exec"),
        "nerdctl": _aliases(_CONTAINER, "run", "exec"),
        "kubectl": {**_aliases(_CONTAINER, "exec", "run", "debug", "attach"),
                    **_aliases(_POWER, "drain")},
        "oc": _aliases(_CONTAINER, "exec", "run", "debug", "attach", "rsh"),
        "systemctl": _aliases(
            _POWER, "stop", "disable", "mask", "poweroff", "reboot", "halt", "suspend",
            "hibernate", "hybrid-sleep", "suspend-then-hibernate", "kexec", "soft-reboot",
            "emergency", "rescue", "isolate", "exit", "switch-root", "revert", "clean",
            "preset-all", "set-default"),
        "service": _aliases(_POWER, "stop"),
        "launchctl": _aliases(_POWER, "unload", "remove", "bootout", "disable", "stop"),
        "loginctl": _aliases(_POWER, "poweroff", "reboot", "halt", "suspend", "hibernate"),
        "mysqladmin": _aliases(_POWER, "shutdown"),
        "mise": _aliases(_RUNS_PACKAGE, "x", "exec"), "rtx": _aliases(_RUNS_PACKAGE, "x", "exec"),
        "nvm": _aliases(_RUNS_PACKAGE, "run", "exec"), "volta": _aliases(_RUNS_PACKAGE, "run"),
        "fnm": _aliases(_RUNS_PACKAGE, "exec"), "proto": _aliases(_RUNS_PACKAGE, "run"),
        "pixi": _aliases(_RUNS_PACKAGE, "exec", "x"),
    }
)  # fmt: skip


def read_listed(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """Any program not refused by name: its refused options, what it would install from an
    address, then its subcommands."""
    return (
        options_refusal(name, args)
        or install_from_address(name, args)
        or subcommand_refusal(name, args, ctx, ALIASES.get(name))
    )


# --- programs with a reader of their own ------------------------------------------------------


def read_file_mover(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """mv, cp, ln, install: never onto or from a device (`mv x /dev/null`), never forced."""
    device = next((word for word in args if device_path(word)), None)
    if device is not None:
        return refuse("device_target", f"runs {name} with {device!r}, a device or kernel file")
    return read_listed(name, args, ctx)


def read_crontab(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """crontab: only `-l`; `-r` deletes the schedule, `-e` edits it, a file or standard
    input replaces it."""
    if list(args) == ["-l"]:
        return None
    given = " ".join(args) or "no arguments (reading standard input)"
    return refuse(
        "schedule", f"runs {name} with {given}, which replaces, edits or deletes a schedule"
    )


def read_sqlite(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """sqlite3 and duckdb take SQL as the word after the database: never."""
    if len(positional(args)) > 1:
        return refuse(_DB, f"runs {name} with SQL after the database, which {_SQL}")
    return read_listed(name, args, ctx)


def read_mongo(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """mongo and mongosh: no `--eval`, no script file."""
    script = next(
        (word for word in positional(args) if word.lower().endswith((".js", ".mongodb"))), None
    )
    if script is not None:
        return refuse(_DB, f"runs {name} with {script}, which {_SQL}")
    return read_listed(name, args, ctx)


def read_npm(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """npm: `npm init <name>` runs the package create-<name>."""
    words = positional(args)
    if words[:1] == ["init"] and len(words) > 1:
        return refuse(
            "package_runner",
            f"runs {name}'s init of {words[1]}, which downloads and runs a package",
        )
    return read_listed(name, args, ctx)


def read_go(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """go: `go run pkg@version` downloads and runs a package."""
    words = positional(args)
    if words[:1] == ["run"] and any("@" in word for word in words[1:]):
        return refuse(
            "package_runner", f"runs {name}'s run of a package version, which downloads and runs it"
        )
    return read_listed(name, args, ctx)


# redis-cli's options: with a value, without, and refused; then its command, only a read.
_REDIS_VALUES = "hpsaunridDt"
_REDIS_FLAGS = "ce23467vV"
_REDIS_LONG_VALUES = frozenset(
    {"user", "pass", "cacert", "cacertdir", "cert", "key", "tls-ciphers", "tls-ciphersuites",
     "sni", "pattern", "quoted-pattern", "count", "memkeys-samples", "keystats-samples",
     "intrinsic-latency", "lru-test", "pipe-timeout", "top", "cursor"}
)  # fmt: skip
_REDIS_LONG_FLAGS = frozenset(
    {"askpass", "raw", "no-raw", "csv", "json", "quoted-json", "stat", "latency",
     "latency-history", "latency-dist", "bigkeys", "memkeys", "hotkeys", "keystats", "scan",
     "verbose", "no-auth-warning", "tls", "insecure", "help", "version", "resp2", "resp3",
     "show-pushes"}
)  # fmt: skip
REDIS_READS = frozenset(
    {"ping", "info", "get", "mget", "exists", "ttl", "pttl", "type", "strlen", "dbsize",
     "time", "lastsave", "scan", "hget", "hmget", "hgetall", "hkeys", "hvals", "hlen",
     "hexists", "lrange", "llen", "lindex", "smembers", "scard", "sismember", "zrange",
     "zcard", "zscore", "echo", "role", "xlen", "xrange", "getrange", "bitcount", "pfcount"}
)  # fmt: skip
_REDIS_CLIENTS = frozenset({"redis-cli", "valkey-cli", "keydb-cli"})


def read_redis(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """redis-cli: options it knows, then nothing or a command that only reads."""
    index = 0
    while index < len(args) and is_option(args[index]):
        taken = _redis_option(args[index])
        if taken is None:
            return refuse(
                _DB, f"gives {name} an option this reader does not follow ({args[index]!r})"
            )
        index += 1 + taken
    if index < len(args) and args[index].lower() not in REDIS_READS:
        return refuse(_DB, f"runs {name} with {args[index]}, a command that is not only a read")
    return None


def _redis_option(word: str) -> int | None:
    """How many words one redis-cli option takes after it; None when it is refused or
    unknown (`--eval` a script, `--pipe` and `-x` standard input, `--cluster` every node)."""
    if word.startswith("--"):
        name, equals, _ = word[2:].partition("=")
        if name in _REDIS_LONG_FLAGS:
            return 0
        return (0 if equals else 1) if name in _REDIS_LONG_VALUES else None
    letters = word[1:]
    if letters[0] in _REDIS_VALUES:
        return 0 if len(letters) > 1 else 1
    return 0 if all(letter in _REDIS_FLAGS for letter in letters) else None


def _read_tar(name: str, args: Sequence[str], ctx: Context) -> Refusal | None:
    """tar: its old form's first word is a cluster without a dash (`tar xIf x.tgz`)."""
    first = args[0] if args else ""
    if first and not is_option(first) and set(first) & set("IF"):
        return refuse(_RUNS[0], f"runs {name} with {first}, which {_RUNS[1]}")
    return read_listed(name, args, ctx)


READERS: Mapping[str, Reader] = MappingProxyType(
    {
        "mv": read_file_mover, "cp": read_file_mover, "ln": read_file_mover,
        "install": read_file_mover, "crontab": read_crontab, "sqlite": read_sqlite,
        "sqlite3": read_sqlite, "duckdb": read_sqlite, "mongo": read_mongo,
        "mongosh": read_mongo, "npm": read_npm, "go": read_go, "tar": _read_tar,
        **dict.fromkeys(_REDIS_CLIENTS, read_redis),
    }
)  # fmt: skip
