"""The code registry: one table that every other part of the library reads.

Each row says, for one stable code, what kind of failure it is, whether the identical call
may succeed (`retryable`), whether another provider could (`fallback`), the exit code
(cli-agent-spec) and HTTP status we answer with, the sentence safe to show a person, and the
default remediation. Docs, HTTP answers, exit codes and user sentences are all read from here.
What a row must be to join the table is `registration.check_row`; what a person reads for a
code that has no row here, `categories`.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .categories import GENERIC_USER_MESSAGE
from .config import CONFIG
from .registration import FixCommandRejected, check_row, checked_marks

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass  # the names as a type: importers use it for theirs

__all__ = [
    "CodeRegistry",
    "CodeRow",
    "FixCommandRejected",
    "codes",
    "register_code",
]


@dataclass(frozen=True, slots=True)
class CodeRow:
    """One row of the table."""

    code: str
    """The stable lower_snake name, category first (`provider_rate_limited`)."""
    category: str
    """The family the code belongs to (`provider`, `cli`, `run`, `tool`, `caller`, ...)."""
    retryable: bool
    """Whether the identical call may succeed if repeated (the default of a detail)."""
    fallback: bool
    """Whether another provider could succeed where this one failed."""
    exit_code: int
    """The process exit code for this failure (cli-agent-spec)."""
    http_status: int
    """The status our own server answers its client with."""
    user_message: str
    """The sentence safe to show a person; never developer text."""
    fix_required: str | None = None
    """What must change before the call can succeed (the default of a detail)."""
    fix_commands: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Exact remediation commands, keyed by `source` ("" = any source); read-only."""
    when: str = ""
    """When the code applies, for the docs."""
    suggestion: str | None = None
    """A note for the human operator that is not a recovery step (cli-agent-spec's
    `suggestion`), the default of a detail."""
    cooldown: str | None = None
    """What the failure says about the provider key, for every caller that shares it:
    `"quiet"` (retry later: nobody calls until the hint, or a short default, has passed),
    `"stop"` (out for a long time, a quota: nobody spends a call to learn it), None (about
    this call only). `Cooldowns` reads it."""
    fix_contract: str | None = None
    """What the author of the row's `fix_commands` stated at registration: `"idempotent"`
    (safe to run twice) or `"read_only"` (changes nothing but a login or a cache); None for a
    row without commands. The built-in rows' commands are idempotent."""

    def __post_init__(self) -> None:
        # A row is shared by every detail of its code: its commands must not be changed.
        if not isinstance(self.fix_commands, MappingProxyType):
            object.__setattr__(self, "fix_commands", MappingProxyType(dict(self.fix_commands)))

    def fix_command_for(self, source: str | None) -> str | None:
        """The registered command for this source, else the source-independent one."""
        if source is not None and source in self.fix_commands:
            return self.fix_commands[source]
        return self.fix_commands.get("")


# The row's old name (`detail.code` is the string), for what still names it: the moved root
# name `recoverable.Code` is typed from it, and old imports through the retired path
# `recoverable._codes` read it here. Inside the package the row is `CodeRow`.
Code = CodeRow


# --- fix_command validation -------------------------------------------------------------


def validate_fix_command(command: str) -> str:
    """Return `command` if it is safe to paste and run twice; raise `FixCommandRejected`.

    The command is read as a shell reads it (`recoverable._core.fix_commands`): text rules
    (metacharacters, placeholders, printable ASCII), a program name not a path, wrappers read
    through, interpreters and package runners with inline or fetched code refused, each
    program's destructive operations, and the subcommands a tool's author marked destructive
    (`codes.mark_destructive`). The refusal's message says which rule, in one sentence.
    """
    from .fix_commands import fix_command_refusal  # registration and payloads are rare

    refusal = fix_command_refusal(command, codes.destructive_subcommands)
    if refusal is not None:
        raise FixCommandRejected(refusal.sentence, refusal.rule)
    return command


# --- the table ----------------------------------------------------------------------------

_INSTALL_CLI = {
    "claude": "npm install -g @anthropic-ai/claude-code",
    "codex": "npm install -g @openai/codex",
    "gemini": "npm install -g @google/gemini-cli",
}
# Each CLI's own login command, where it has one (Gemini CLI logs in inside its interactive
# session only): static, changes nothing but the login, safe to run twice.
_LOGIN_CLI = {"claude": "claude auth login", "codex": "codex login"}


Y, N = True, False

# code, category, R, F, exit, http, user sentence, fix_required, fix_commands, when
_TABLE: tuple[CodeRow, ...] = (
    CodeRow("provider_rate_limited", "provider", Y, Y, 11, 503,
         "The AI service is busy right now. Please try again in a moment.",
         when="429 rate limit (not quota)", cooldown="quiet"),
    CodeRow("provider_overloaded", "provider", Y, Y, 12, 503,
         "The AI service is overloaded right now. Please try again in a moment.",
         when="503/529, in-stream overloaded_error (status 200)", cooldown="quiet"),
    CodeRow("provider_server_error", "provider", Y, Y, 12, 503,
         "The AI service had a problem. Please try again in a moment.",
         when="other 5xx"),
    CodeRow("provider_timeout", "provider", Y, Y, 10, 503,
         "The AI service took too long to answer. Please try again.",
         when="408, SDK request timeout"),
    CodeRow("provider_unreachable", "provider", Y, Y, 12, 503,
         "The AI service could not be reached. Please try again in a moment.",
         when="connect failed, nothing sent"),
    CodeRow("provider_connection_lost", "provider", Y, Y, 12, 503,
         "The connection to the AI service was lost. Please try again.",
         when="dropped after the request was sent or mid-stream"),
    CodeRow("provider_bad_response", "provider", Y, Y, 12, 503,
         "The AI service sent an incomplete answer. Please try again.",
         when="empty/malformed reply, stream ended without finish"),
    CodeRow("provider_quota_exceeded", "provider", N, Y, 9, 502,
         "The AI service account has run out of credit or quota.",
         "Add credit or raise the quota of the provider account, or use another provider",
         when="billing: insufficient_quota, 402, credit balance, Gemini PerDay",
         cooldown="stop"),
    CodeRow("provider_auth_failed", "provider", N, Y, 8, 502,
         "The AI service did not accept our credentials.",
         "Configure a valid API key or log in to the provider again",
         when="401, invalid key"),
    CodeRow("provider_permission_denied", "provider", N, Y, 7, 502,
         "The AI service account is not allowed to do this.",
         "Grant the account access to this model or feature, or use another provider",
         when="403"),
    CodeRow("provider_model_not_found", "provider", N, Y, 5, 502,
         "The requested AI model is not available.",
         "Choose a model name this account can use",
         when="unknown or inaccessible model"),
    CodeRow("provider_invalid_request", "provider", N, N, 2, 500,
         "The request to the AI service was not valid.",
         "Correct the request parameters",
         when="400/422 not covered below"),
    CodeRow("provider_context_too_long", "provider", N, Y, 2, 400,
         "The conversation is too long for the AI model. Please shorten it or start a new one.",
         "Shorten the input or use a model with a larger context window",
         when="context window exceeded"),
    CodeRow("provider_content_filtered", "provider", N, Y, 2, 400,
         "The request was blocked by the AI service's content policy.",
         "Change the content of the request",
         when="content policy"),
    CodeRow("provider_refused", "provider", N, Y, 1, 422,
         "The AI model declined to answer this request.",
         when="the model refused"),
    CodeRow("provider_output_truncated", "provider", N, N, 3, 502,
         "The answer was cut off because it was too long.",
         "Raise the output token limit or ask for a shorter answer",
         when="stopped at max output tokens"),
    CodeRow("cli_not_found", "cli", N, Y, 4, 500,
         "The AI assistant tool is not installed.",
         "Install the CLI", _INSTALL_CLI,
         when="binary missing (spawn ENOENT)", fix_contract="idempotent"),
    CodeRow("cli_not_authenticated", "cli", N, Y, 8, 500,
         "The AI assistant tool is not signed in.",
         "Log the CLI in to its provider account", _LOGIN_CLI,
         when='"Not logged in", Gemini exit 41', fix_contract="idempotent"),
    CodeRow("cli_spawn_failed", "cli", N, Y, 4, 500,
         "The AI assistant tool could not be started.",
         "Make the CLI executable and runnable by this user",
         when="EACCES and other spawn errors"),
    CodeRow("cli_version_unsupported", "cli", N, Y, 4, 500,
         "The installed AI assistant tool is too old.",
         "Upgrade the CLI", _INSTALL_CLI,
         when="older than we support", fix_contract="idempotent"),
    CodeRow("cli_untrusted_workspace", "cli", N, Y, 4, 500,
         "The AI assistant tool does not trust this folder.",
         "Mark the working directory as trusted in the CLI",
         when="Gemini exit 55"),
    CodeRow("cli_invalid_arguments", "cli", N, N, 2, 500,
         "The AI assistant tool was started with settings it does not accept.",
         "Correct the options passed to the CLI",
         when="the CLI rejected its flags"),
    CodeRow("cli_crashed", "cli", N, N, 1, 500,
         "The AI assistant tool stopped unexpectedly.",
         when="non-zero exit nothing explains"),
    CodeRow("cli_killed", "cli", N, N, 1, 500,
         "The AI assistant tool was stopped unexpectedly.",
         when="a signal we did not send (OOM, outside kill)"),
    CodeRow("cli_output_invalid", "cli", N, N, 1, 500,
         "The AI assistant tool produced output that could not be read.",
         when="unparseable output, line over the cap"),
    CodeRow("run_cancelled", "run", N, N, 130, 499,
         "The request was cancelled.",
         when="the caller cancelled: never retried"),
    CodeRow("run_timeout", "run", N, N, 10, 504,
         "The request took too long and was stopped.",
         when="our total or idle deadline; retryable only when no tool had started"),
    CodeRow("run_max_turns", "run", N, N, 3, 502,
         "The assistant reached its step limit before finishing.",
         "Raise the turn limit or split the task",
         when="turn limit reached"),
    CodeRow("run_budget_exceeded", "run", N, N, 3, 502,
         "The assistant reached its spending limit before finishing.",
         "Raise the budget or split the task",
         when="cost limit reached"),
    CodeRow("run_guardrail_triggered", "run", N, N, 3, 422,
         "The request was stopped by a safety check.",
         "Change the input or output so the guardrail passes, or adjust the guardrail",
         when="an agent framework's own guardrail tripped (OpenAI Agents SDK tripwires)"),
    CodeRow("run_tool_failures", "run", N, N, 3, 502,
         "The assistant stopped after its tools failed repeatedly.",
         when="N consecutive tool failures (guardrail)"),
    CodeRow("tool_input_invalid", "tool", N, N, 2, 400,
         "A tool was called with input it does not accept.",
         "Correct the tool input", when="invalid tool arguments"),
    CodeRow("tool_not_found", "tool", N, N, 5, 404,
         "The assistant tried to use a tool that does not exist.",
         when="unknown tool; a program that is not there (spawn ENOENT, exit 127)"),
    CodeRow("tool_not_executable", "tool", N, N, 4, 500,
         "A tool the assistant used could not be started.",
         "Make the program executable by this user, or call the right file",
         when="exit 126; a spawn refused (EACCES, ENOEXEC)"),
    CodeRow("tool_execution_failed", "tool", N, N, 1, 500,
         "A tool the assistant used did not work.",
         when="the tool raised, or exited non-zero and nothing says more"),
    CodeRow("tool_killed", "tool", N, N, 1, 500,
         "A tool the assistant used was stopped unexpectedly.",
         when="a signal ended it (a negative return code, 128+N): no exit code is invented"),
    CodeRow("tool_output_invalid", "tool", N, N, 1, 502,
         "A tool the assistant used gave an answer that could not be read.",
         when="a malformed envelope: no error key, data and error both null, not JSON"),
    CodeRow("tool_timeout", "tool", N, N, 10, 504,
         "A tool the assistant used took too long.",
         when="the tool exceeded its time limit (exit 124, subprocess's TimeoutExpired)"),
    CodeRow("invalid_input", "caller", N, N, 2, 400,
         "Some of the information provided is not valid.",
         "Correct the input", when="validation"),
    CodeRow("not_supported", "caller", N, Y, 2, 501,
         "This is not supported here.",
         "Leave the option unset, or use a CLI or provider that supports it",
         when="an option a CLI cannot honour, a feature a surface lacks (the seeds' "
              "NOT_SUPPORTED)"),
    CodeRow("not_found", "caller", N, N, 5, 404,
         "The requested item could not be found.",
         when="missing resource"),
    CodeRow("conflict", "caller", N, N, 6, 409,
         "This conflicts with a change made elsewhere. Please reload and try again.",
         "Reload the current state and reconcile", when="conflicting state"),
    CodeRow("precondition_failed", "caller", N, N, 4, 412,
         "This cannot be done yet because something it needs is not ready.",
         "Satisfy the precondition first", when="precondition unmet"),
    # Sessions and their streams (Helix's state_* family): the wire's `Sessions` and
    # `StreamLog` raise them; a user's own session store may too.
    CodeRow("state_already_running", "state", Y, N, 12, 409,
         "This conversation is still answering an earlier message. Please try again when it "
         "has finished.",
         when="a session already has a live run (a second start through the wire's `Sessions`); "
              "retryable once that run ends"),
    CodeRow("state_session_not_found", "state", N, N, 5, 404,
         "This conversation could not be found.",
         "Start a new conversation",
         when="a session (or its stream) this server does not know, as a resume names it"),
    CodeRow("state_not_resumable", "state", N, N, 6, 410,
         "This conversation cannot be continued from where it stopped. Please reload it.",
         "Reload the conversation from its current state",
         when="a resume from a Last-Event-ID the stream never gave out or no longer keeps"),
    CodeRow("state_run_superseded", "state", N, N, 6, 409,
         "This answer was replaced by a newer request.",
         when="a newer run of the same session took over (`Sessions.start(supersede=True)`): "
              "never retried"),
    CodeRow("state_concurrency_conflict", "state", N, N, 6, 409,
         "This conversation was changed by another request at the same time. Please reload "
         "it and try again.",
         "Reload the current state and try again",
         when="a second writer on one stream (a `StreamLog` another publisher writes or wrote)"),
    CodeRow("state_request_key_conflict", "state", N, N, 6, 409,
         "This request was already sent with different content. Please send it again as a "
         "new request.",
         "Send the new request with a new request key",
         when="a keyed run start (`Sessions.start(request_key=...)`, the `Idempotency-Key` "
              "header) reused its key for other input: nothing started; never retried"),
    CodeRow("unauthenticated", "auth", N, N, 8, 401,
         "Please sign in to continue.",
         "Provide credentials", when="no or invalid credentials"),
    CodeRow("credentials_expired", "auth", N, N, 8, 401,
         "Your session has expired. Please sign in again.",
         "Refresh the credentials", when="expired credentials"),
    CodeRow("permission_denied", "auth", N, N, 7, 403,
         "You do not have permission to do this.",
         when="insufficient permission"),
    CodeRow("payment_required", "billing", N, N, 9, 402,
         "This needs an active plan or more credit.",
         "Add credit or upgrade the plan", when="payment required"),
    CodeRow("rate_limited", "rate", Y, N, 11, 429,
         "Too many requests right now. Please wait a moment and try again.",
         when="the caller's own rate"),
    CodeRow("unavailable", "service", Y, N, 12, 503,
         "The service is temporarily unavailable. Please try again in a moment.",
         when="service unavailable"),
    CodeRow("timeout", "service", N, N, 10, 504,
         "The request took too long.",
         when="generic; side effects unknown"),
    CodeRow("network_error", "network", Y, N, 12, 503,
         "A network problem interrupted the request. Please try again.",
         when="refused, reset, DNS, with no provider context"),
    CodeRow("internal_error", "internal", N, N, 1, 500,
         GENERIC_USER_MESSAGE, when="our own bug"),
    CodeRow("unknown", "unknown", N, N, 1, 500,
         GENERIC_USER_MESSAGE, when="unclassified"),
)  # fmt: skip


class CodeRegistry:
    """The table, plus users' own codes. Reads are lock-free; registration is serialised."""

    def __init__(self, rows: tuple[CodeRow, ...]) -> None:
        # The built-in rows are checked by the test suite, not at every import.
        self._rows: dict[str, CodeRow] = {row.code: row for row in rows}
        # From _thread, as threading has it: a Temporal workflow's sandbox refuses
        # threading's own names (its lock, called in a workflow, fails the task).
        self._lock = _thread.allocate_lock()
        self._unknown = self._rows["unknown"]
        self._marks: Mapping[str, frozenset[str]] = MappingProxyType({})

    def get(self, code: str) -> CodeRow | None:
        """The row for `code`, or None when it is not registered."""
        return self._rows.get(code)

    def resolve(self, code: str) -> CodeRow:
        """The row for `code`; an unregistered code (registered only in the process that sent
        it, say) reads as `unknown`."""
        return self._rows.get(code) or self._unknown

    def __getitem__(self, code: str) -> CodeRow:
        return self._rows[code]

    def __contains__(self, code: object) -> bool:
        return code in self._rows

    def __iter__(self) -> Iterator[CodeRow]:
        return iter(list(self._rows.values()))

    def __len__(self) -> int:
        return len(self._rows)

    def register(  # noqa: PLR0913 -- one keyword per field of the row it adds
        self,
        code: str,
        *,
        category: str | None = None,
        retryable: bool = False,
        fallback: bool = False,
        exit_code: int = 1,
        http_status: int = 500,
        user_message: str,
        fix_required: str | None = None,
        fix_command: str | Mapping[str, str] | None = None,
        when: str = "",
        suggestion: str | None = None,
        cooldown: str | None = None,
        fix_contract: str | None = None,
        replace: bool = False,
    ) -> CodeRow:
        """Add a code (validating it and its `fix_command`) and return its row.

        A `fix_command` needs `fix_contract`: the author's word that the command is
        `"idempotent"` (safe to run twice) or `"read_only"` (changes nothing but a login or a
        cache); a command without one is refused (`FixCommandRejected`)."""
        commands = {"": fix_command} if isinstance(fix_command, str) else dict(fix_command or {})
        row = CodeRow(
            code=code,
            category=category if category is not None else code.split("_", 1)[0],
            retryable=retryable,
            fallback=fallback,
            exit_code=exit_code,
            http_status=http_status,
            user_message=user_message,
            fix_required=fix_required,
            fix_commands=commands,
            when=when,
            suggestion=suggestion,
            cooldown=cooldown,
            fix_contract=fix_contract,
        )
        check_row(row, self._marks)
        with self._lock:
            if row.code in self._rows and not replace:
                raise ValueError(f"code {row.code!r} is already registered (pass replace=True)")
            self._rows = {**self._rows, row.code: row}  # copy-on-write keeps reads lock-free
        CONFIG.forget_scrubbed()  # after the rows: the memos decided under the old ones go
        return row

    def unregister(self, code: str) -> None:
        """Remove a code a user registered (the built-in rows stay)."""
        if code in _BUILT_IN:
            raise ValueError(f"code {code!r} is built in")
        with self._lock:
            self._rows = {name: row for name, row in self._rows.items() if name != code}
        CONFIG.forget_scrubbed()

    @property
    def destructive_subcommands(self) -> Mapping[str, frozenset[str]]:
        """The subcommands tool authors marked destructive, by program (lower case)."""
        return self._marks

    def mark_destructive(self, program: str, *subcommands: str) -> Callable[[], None]:
        """Refuse `program`'s `subcommands` in every fix command from now on, wherever they
        stand (`mytool purge`, `nice mytool purge`, `python -m mytool purge`, and any compound
        word one of them is a part of: `purge-all`); returns a function that removes the marks
        this call added. Refused (`FixCommandRejected`) when a registered code's fix_command
        would be one of them."""
        from .fix_commands import fix_command_refusal, program_name

        name = program_name(program)
        added = checked_marks(program, subcommands)
        with self._lock:
            before = self._marks.get(name, frozenset())
            marks = {**self._marks, name: before | added}
            for row in self._rows.values():
                for command in row.fix_commands.values():
                    refusal = fix_command_refusal(command, marks)
                    if refusal is not None:
                        raise FixCommandRejected(
                            f"code {row.code!r}: {refusal.sentence}; unregister it before "
                            "marking this subcommand destructive",
                            refusal.rule,
                        )
            self._marks = MappingProxyType(marks)
        new = added - before

        def remove() -> None:
            with self._lock:
                kept = self._marks.get(name, frozenset()) - new
                rest = {key: value for key, value in self._marks.items() if key != name}
                self._marks = MappingProxyType({**rest, name: kept} if kept else rest)

        return remove


_BUILT_IN = frozenset(row.code for row in _TABLE)
codes = CodeRegistry(_TABLE)
"""The registry: every code's row (`rc.codes.get(code)`, `code in rc.codes`, iterate it)."""
register_code = codes.register
"""`codes.register`: add a code of your own (see `CodeRegistry.register`)."""
