"""What the three CLI parsers share: their state, the line reader and the module contract.

A CLI module is pure: `new_state()` starts a run's state (the shared `ParseState`, or the
CLI's own subclass of it), `parse_line(line, state) -> list[Event]` maps one stdout line (plus
that state) to events, and `outcome(state, exit_code, stderr_tail)` decides how a finished run
ended. The terminal event decides; the exit code and stderr only explain what the stream did
not.
"""

from __future__ import annotations

import re
import signal as signals
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .._core.events import Error, Event, Raw
from .._core.untrusted import clean_text, json_safe_dict
from ._answer import AnswerText
from ._deferred import ErrorDetail, unvalidated
from ._line_json import read_json
from ._options import DEFAULT_MAX_TEXT_CHARS, RunOptions

if TYPE_CHECKING:
    from .._classify.phrases import PhraseTable
    from .._core.code_names import BuiltinCode

__all__ = [
    "HANDLERS",
    "KEPT_ERRORS",
    "KEPT_TOOLS",
    "CliModule",
    "Handlers",
    "LineEvents",
    "ParseState",
    "StateT",
    "as_dict",
    "as_int",
    "as_number",
    "as_str",
    "bad_line",
    "crash_evidence",
    "invalid_field",
    "killed",
    "line_parser",
    "no_stderr_events",
    "phrase_code",
    "signal_name",
    "stderr_phrase",
    "tool_failure",
    "unexplained_exit",
    "usage_of",
]


KEPT_ERRORS = 16
"""The failures a `ParseState` keeps (the last ones: the outcome reads the last)."""
KEPT_LOOSE_LINES = 32
"""The stdout lines that are not JSON a `ParseState` keeps (the last ones, clipped)."""
KEPT_TOOLS = 1024
"""The tool ids a `ParseState` keeps a name for (the latest: a tool's end names its start)."""


class ParseState:
    """What a parser remembers between lines (mutable: one per run), in bounded memory.

    A plain slotted class, not a dataclass: it is created on the import path of `recoverable
    run`, where creating a dataclass costs ~1 ms."""

    __slots__ = (
        "cli",
        "consecutive_tool_failures",
        "cost_usd",
        "errors",
        "last_failed_tool",
        "loose_lines",
        "session_id",
        "terminal",
        "text_parts",
        "tool_names",
        "tool_order",
        "tool_started",
        "usage",
    )

    def __init__(self, cli: str) -> None:
        self.cli = cli
        """The CLI's name (the `source` of what it reports)."""
        self.session_id: str | None = None
        self.text_parts = AnswerText(DEFAULT_MAX_TEXT_CHARS)
        """The answer's text deltas so far (their last characters: `RunOptions.max_text_chars`)."""
        self.usage: dict[str, Any] | None = None
        self.cost_usd: float | None = None
        self.terminal: ErrorDetail | str | None = None
        """The terminal event: None until seen; then "success" or the failure it reported."""
        self.tool_names: dict[str, str] = {}
        """Tool id -> name, once started (the last KEPT_TOOLS)."""
        self.tool_order: deque[str] = deque()
        """The ids in `tool_names`, oldest first (`next(iter(tool_names))` would walk past
        every slot the evictions emptied since the dict last resized)."""
        self.tool_started = False
        """A tool ran: a timeout is no longer safe to retry (the tool may have changed things)."""
        self.consecutive_tool_failures = 0
        self.last_failed_tool: str | None = None
        self.errors: deque[ErrorDetail] = deque(maxlen=KEPT_ERRORS)
        """Failures the stream reported, fatal or not yet (the last KEPT_ERRORS): the last one
        explains a run that ends without its terminal event."""
        self.loose_lines: deque[str] = deque(maxlen=KEPT_LOOSE_LINES)
        """The last stdout lines that were not JSON (clipped): with stderr, they may say why
        a run died before its terminal event."""

    @property
    def text(self) -> str:
        """The assistant's answer so far (its last `max_text_chars`)."""
        return self.text_parts.text()

    def start_tool(self, tool_id: str, name: str) -> None:
        tools = self.tool_names
        if tool_id not in tools:
            if len(tools) >= KEPT_TOOLS:
                del tools[self.tool_order.popleft()]  # the oldest
            self.tool_order.append(tool_id)
        tools[tool_id] = name
        self.tool_started = True

    def end_tool(self, tool_id: str, success: bool) -> None:
        """Count consecutive failures for the guardrail (a success resets the count)."""
        if success:
            self.consecutive_tool_failures = 0
        else:
            self.consecutive_tool_failures += 1
            self.last_failed_tool = self.tool_names.get(tool_id, tool_id)

    def terminal_failure(self, detail: ErrorDetail) -> Error:
        """The terminal event reported `detail`: the run failed; its error event."""
        self.terminal = detail
        self.errors.append(detail)
        return Error(detail)


StateT = TypeVar("StateT", bound=ParseState)


class CliModule(Protocol[StateT]):
    """The contract of `_claude`, `_codex` and `_gemini`, over the state each one keeps."""

    NAME: str
    PACKAGE: str  # the npm package that installs it

    def new_state(self) -> StateT:
        """A fresh state for one run."""
        ...

    def build_argv(self, executable: str, prompt: str, options: RunOptions) -> list[str]:
        """The argv of one headless run (ValueError for an option this CLI cannot apply)."""
        ...

    def parse_line(self, line: str | dict[str, Any], state: StateT) -> list[Event]:
        """One stdout line (or the JSON object it holds, already decoded) to events."""
        ...

    def outcome(self, state: StateT, exit_code: int | None, stderr_tail: str) -> ErrorDetail:
        """How a run with no terminal event and no signal ended (`_replay` decides the rest)."""
        ...

    def stderr_line(self, line: str, state: StateT) -> list[Event]:
        """Events of one stderr line as it comes, for a CLI that reports something only there
        (Gemini's own retries); most lines are none."""
        ...


def no_stderr_events(line: str, state: ParseState) -> list[Event]:
    """`stderr_line` of a CLI whose stderr only explains the end (its tail is read then)."""
    return []


_LOOSE_LINE_CHARS = 2000
_SAMPLE_CHARS = 203  # what bad_line quotes of a line: 200 characters and "..."


def bad_line(cli: str, line: str, why: str) -> Error:
    """An unreadable stdout line: an error event (the stream goes on), the line kept short
    and scrubbed (it may quote anything, a credential too).

    An oversize line comes with no sample (its bytes were skipped, never kept)."""
    sample = clean_text(line, _SAMPLE_CHARS)
    message = f"{why}: {sample}" if sample else why
    return Error(
        unvalidated("cli_output_invalid", message, source=cli, details={"bytes": len(line)}),
        severity="warning",
    )


# --- what every CLI module reads the same way ------------------------------------------------


def as_str(value: object) -> str | None:
    """`value` when it is a string."""
    return value if isinstance(value, str) else None


# Past this an integer is no count or code a CLI prints (JSON allows 4300 digits).
_MAX_INT = 2**63 - 1


def as_int(value: object) -> int | None:
    """`value` when it is an integer that fits 64 bits (JSON's true and false are not)."""
    if isinstance(value, int) and not isinstance(value, bool) and -_MAX_INT <= value <= _MAX_INT:
        return value
    return None


def as_number(value: object, most: float) -> float | None:
    """`value` as a float when it is a number from 0 to `most` (not NaN, not infinite)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value <= most else None  # NaN compares False


def as_dict(value: object) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def usage_of(value: object) -> dict[str, Any] | None:
    """Token counts as a RunResult keeps them: a JSON object copied JSON-safe (numbers finite
    and bounded, strings scrubbed, depth and size bounded); None for anything else."""
    return json_safe_dict(value) if isinstance(value, dict) else None


def invalid_field(cli: str, name: str, why: str) -> Error:
    """A known field holding what it cannot mean: a warning, and the run goes on."""
    message = f"{cli} printed an invalid {name}: {why}"
    detail = unvalidated("cli_output_invalid", message, source=cli, details={"field": name})
    return Error(detail, severity="warning")


# What a handler makes of a line: its events, or its one event alone (no list for most lines).
LineEvents = list[Event] | Event

# What a parser does with each `type` of JSON line.
Handlers = Mapping[str, Callable[[dict[str, Any], StateT], LineEvents]]


def line_parser(
    cli: str, handlers: Handlers[StateT]
) -> Callable[[str | dict[str, Any], StateT], list[Event]]:
    """A CLI module's `parse_line`: each JSON line goes to the handler of its `type`; unknown
    types and non-JSON lines are `Raw`, a broken JSON object an error event."""
    handler_for = handlers.get

    def parse_object(data: dict[str, Any], state: StateT) -> list[Event]:
        """A line's JSON object to events: one lookup of its `type`."""
        kind: Any = data.get("type")
        try:
            handler = handler_for(kind)
        except TypeError:  # a `type` that is a list or an object: no handler's
            handler = None
        if handler is None:
            return [Raw(cli, data)]
        found = handler(data, state)
        return found if type(found) is list else [found]  # type: ignore[list-item]

    def parse_line(line: str | dict[str, Any], state: StateT) -> list[Event]:
        """One stdout line (or the JSON object it holds, already decoded) to events, updating
        `state`."""
        if isinstance(line, dict):
            return parse_object(line, state)
        found = read_json(line)
        if found is not None:
            return parse_object(found, state)
        if line.lstrip().startswith("{"):
            return [bad_line(cli, line, "unparseable JSON line")]
        state.loose_lines.append(line[:_LOOSE_LINE_CHARS])
        return [Raw(cli, line)]

    HANDLERS[parse_line] = handlers
    return parse_line


HANDLERS: dict[Callable[..., list[Event]], Handlers[Any]] = {}
"""`line_parser`'s `parse_line`s -> their handler tables: the reader of stdout (`_replay`)
dispatches a line's JSON object straight from its bytes (a module written by hand has no
table and gets its lines as text)."""


def phrase_code(table: PhraseTable, text: str) -> BuiltinCode | None:
    """The code `text` names in its opening words: the CLI's own sentences first, then the
    provider messages it passes on (the ones every SDK's errors carry too)."""
    from .._classify.http import message_code  # a failure is being read: load the classifier

    return table.code(text) or message_code(text)


def stderr_phrase(table: PhraseTable, stderr: str) -> tuple[BuiltinCode, str] | None:
    """(code, line) of the first stderr line that opens with one of `table`'s phrases, the
    line scrubbed and clipped (a CLI's stderr may print its environment)."""
    found = table.in_lines(stderr)
    return None if found is None else (found[0], clean_text(found[1]))


def crash_evidence(
    table: PhraseTable, state: ParseState, exit_code: int | None, stderr: str
) -> ErrorDetail | None:
    """What a CLI that died before its terminal event said about the API failure: its stderr,
    then the stdout lines that were not JSON, read through its own sentences and the
    providers' (at word boundaries anywhere in a line); None when they name none."""
    from .._classify.stderr import provider_failure_in
    from .._core.detail import with_details

    found = provider_failure_in(stderr, source=state.cli, table=table)
    if found is None and state.loose_lines:
        found = provider_failure_in("\n".join(state.loose_lines), source=state.cli, table=table)
    return None if found is None else with_details(found, exit_code=exit_code)


# A failed tool's text that reports an API failure (a sub-agent's: Claude's "API Error: 429
# ...", Gemini's "[API Error: ...]"), not the tool's own words.
_API_ERROR = r"\bapi error\b"
_TOOL_TEXT_READ = 16_000


def tool_failure(table: PhraseTable, cli: str, text: str | None) -> ErrorDetail:
    """A failed tool's detail: the API failure a sub-agent reports, read as the CLI's own;
    else what a failed process's output says (`classify_stderr`: the tool's own rate limit is
    `rate_limited`, not the provider's); else `tool_execution_failed`."""
    from .._classify.stderr import classify_stderr, provider_failure_in

    if text:
        found = None
        text = text[-_TOOL_TEXT_READ:]  # the end says why; a tool may print megabytes
        if re.search(_API_ERROR, text, re.IGNORECASE):
            found = provider_failure_in(text, source=cli, table=table)
        if found is None:
            found = classify_stderr(text, source=cli)
        if found is not None:
            return found
    return unvalidated("tool_execution_failed", clean_text(text or "the tool failed"), source=cli)


def signal_name(number: int) -> str:
    """`signal 15 (SIGTERM)`."""
    try:
        return f"signal {number} ({signals.Signals(number).name})"
    except ValueError:
        return f"signal {number}"


def killed(cli: str, signal: int, before: str) -> ErrorDetail:
    """A signal we did not send (the runner speaks for the ones we did): no exit code."""
    return unvalidated(
        "cli_killed",
        f"{cli} was killed by {signal_name(signal)} {before}",
        source=cli,
        details={"signal": signal},
    )


# 128 + signal: how a CLI that handles the signal itself exits (claude's SIGTERM handler: 143).
_SIGNAL_EXITS = {130: "SIGINT", 137: "SIGKILL", 143: "SIGTERM"}


# A CLI that died printing only plain words, read by the seed's rule (AgentOS's
# classifyError): the first family, in this order, whose words stderr holds, case-insensitive,
# as words (not inside a path, a file name or a number: "foo.go:429", "/src/auth/"). Each row:
# the code, the words every CLI's death is read by, the words of one CLI only.
_PLAIN_WORDS: tuple[tuple[BuiltinCode, str, dict[str, str]], ...] = (
    ("cli_invalid_arguments",
     r"invalid value for --?[\w-]+|unknown (?:option|argument)|unrecognized (?:option|argument)s?"
     r"|unexpected argument", {}),
    ("cli_not_authenticated", r"not logged in|authentication|unauthori[sz]ed",
     {"gemini": r"sign in"}),
    ("provider_rate_limited",
     r"rate limit|too many requests|429 too many|(?:http|status|code|error)[ :]+429",
     {"gemini": r"quota|resource_exhausted"}),
    ("provider_context_too_long", r"context(?: \w+){0,3} (?:too long|token limit)",
     {"gemini": r"context(?: \w+){0,3} (?:exceeds|too long|token limit)"}),
)  # fmt: skip
# Words: no letter, digit, path separator, quote, dot-and-extension or colon-number around
# them (a quoted phrase is somebody's words, not the CLI's report).
_AS_WORDS = r"(?<![\w/\\.:'\"-])(?:{})(?![\w/\\'\"]|\.\w|:\d)"


def plain_words(cli: str, stderr: str) -> BuiltinCode | None:
    """The code a CLI's plain-word death names (`_PLAIN_WORDS`), or None."""
    text = stderr[-STDERR_WORDS_READ:]
    for code, words, own in _PLAIN_WORDS:
        pattern = f"{words}|{own[cli]}" if cli in own else words
        if re.search(_AS_WORDS.format(pattern), text, re.IGNORECASE):
            return code
    return None


STDERR_WORDS_READ = 8192
"""The end of stderr the plain-word rule reads."""
_DETAIL_TAIL = 2000  # the end of stderr a crashed CLI's detail carries


def unexplained_exit(cli: str, exit_code: int | None, before: str, stderr: str = "") -> ErrorDetail:
    """An end the stream and stderr do not explain: never a success without a terminal event.
    A non-zero exit is read by the plain-word rule; what it cannot name is `cli_crashed`, with
    the end of stderr (scrubbed, bounded) in `details["stderr_tail"]` for whoever catches it."""
    if exit_code == 0:
        return unvalidated(
            "provider_bad_response",
            "stream ended without a terminal event",
            source=cli,
            details={"exit_code": 0},
        )
    if exit_code is not None and exit_code in _SIGNAL_EXITS:
        return unvalidated(
            "cli_killed",
            f"{cli} exited {exit_code} (128+{_SIGNAL_EXITS[exit_code]}) {before}",
            source=cli,
            details={"exit_code": exit_code},
        )
    tail = clean_text(stderr[-_DETAIL_TAIL:].strip()) if stderr.strip() else None
    details = {"exit_code": exit_code, **({"stderr_tail": tail} if tail else {})}
    named = plain_words(cli, stderr) if stderr else None
    if named is not None:
        return unvalidated(named, tail or named, source=cli, details=details)
    return unvalidated(
        "cli_crashed", f"{cli} exited with code {exit_code} {before}", source=cli, details=details
    )
