"""The agent-tool envelope (cli-agent-spec): one JSON object per invocation, on stdout. Pure.

    {"ok": false, "data": null,
     "error": {"code": "CREDENTIALS_EXPIRED", "message": "...", "retryable": false, ...},
     "warnings": [], "meta": {"duration_ms": 120}}

All five keys are always written; `data` is null on a failure and `error` null on a success;
`meta.duration_ms` is always there. `error` is an `ErrorDetail` payload (`to_dict`), its codes
and its causes' codes in UPPER_SNAKE: the one mapping is `to_envelope_code` (upper case) and
`from_envelope_code` (lower case), exact both ways for every lower_snake code, a user's own
included. Reading also takes the spec's other spellings (`ALIASES`) when the lowered name is
not a registered code; the spelling read is kept in `details["envelope_code"]`.

`Envelope.parse` applies the spec's reading rules to what another process printed, under the
payload rules of `ErrorDetail.from_dict` (a refused `fix_command`, `refresh_command`,
`reauth_command` or `redirect.command` is dropped, texts cleaned, hints capped). Every
command read is a payload's: shown, never run because it arrived (`_fix_gate`). The spec's
`refresh_command` and `reauth_command` are read as what they are, the credential codes'
fix (`CREDENTIAL_CODES`): where this registry holds a fix for that code (and source), that
registered command becomes `fix_command`, the one that may run; the payload's own strings
stay in `details` (`refresh_command`, `reauth_command`, `suggested_command` for a replaced
`fix_command`), for a person.

| what was read                                    | the envelope                         |
|--------------------------------------------------|--------------------------------------|
| an exit code (`exit_code=`)                      | it decides `ok`, whatever `ok` says  |
| not JSON, not an object, too large or too deep   | malformed                            |
| no `error` key                                   | malformed                            |
| `data` and `error` both null                     | malformed (but `meta.not_modified`)  |
| a failure whose `error` is not a payload         | malformed                            |
| a failure whose `error` is null, exit code N > 0 | the code the spec's exit table names |
| a success that also carries an error             | a success; the error kept as warning |
| retryable without `retry_after_ms`               | `retry_after_ms` = DEFAULT_WAIT_MS   |

Malformed is `tool_output_invalid`: GENERAL_ERROR's exit code 1, never retried.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .codes import FixCommandRejected, codes, validate_fix_command
from .config import CONFIG
from .detail import MAX_CAUSE_DEPTH, ErrorDetail, PayloadError, copy_with, unvalidated
from .fix_gate import SUGGESTED_COMMAND
from .public import DEFAULT_WAIT_MS
from .strict_json import STRICT_JSON
from .untrusted import clean_text, json_safe_dict, safe_str

if TYPE_CHECKING:
    from .code_names import BuiltinCode

__all__ = [
    "ALIASES",
    "CREDENTIAL_CODES",
    "MAX_ENVELOPE_CHARS",
    "SPEC_EXIT_CODES",
    "Envelope",
    "error_payload",
    "from_envelope_code",
    "load_json_object",
    "looks_like_envelope",
    "to_envelope_code",
]

MAX_ENVELOPE_CHARS = 16 * 1024 * 1024
"""The longest envelope text `parse` reads; a longer one is malformed."""
_MAX_WARNINGS = 100
_MAX_WARNING_CHARS = 1000

ALIASES: Mapping[str, BuiltinCode] = {
    # The spec's auth names: one family, two codes (cli-agent-spec F-063 and the guide).
    "TOKEN_EXPIRED": "credentials_expired",
    "AUTH_TOKEN_EXPIRED": "credentials_expired",
    "TOKEN_MISSING": "unauthenticated",
    "TOKEN_INVALID": "unauthenticated",
    "AUTH_REQUIRED": "unauthenticated",
    # The exit table's constants and C-014's example, as the codes we have for them.
    "GENERAL_ERROR": "unknown",
    "ARG_ERROR": "invalid_input",
    "VALIDATION_ERROR": "invalid_input",
    "PRECONDITION": "precondition_failed",
}
"""Spellings other producers use, read as the code named (never written)."""

SPEC_EXIT_CODES: Mapping[int, BuiltinCode] = {
    1: "unknown",
    2: "invalid_input",
    4: "precondition_failed",
    5: "not_found",
    6: "conflict",
    7: "permission_denied",
    8: "unauthenticated",
    9: "payment_required",
    10: "timeout",
    11: "rate_limited",
    12: "unavailable",
}
"""The spec's exit table read backwards: only for a tool that printed an envelope (so speaks
the spec) and exited non-zero without saying which error. Other statuses are `unknown`."""

_COMMAND_FIELDS = ("refresh_command", "reauth_command")  # the spec's specialised fix commands

CREDENTIAL_CODES: frozenset[BuiltinCode] = frozenset(
    {"credentials_expired", "unauthenticated", "cli_not_authenticated", "provider_auth_failed"}
)
"""The codes whose fix is getting credentials again: what the spec's `refresh_command`
(F-063) and `reauth_command` (section 53) are for. For these, a command an envelope names is
replaced by the one this registry holds for the code, when it holds one."""


def to_envelope_code(code: str) -> str:
    """A code as the envelope writes it: `provider_rate_limited` -> `PROVIDER_RATE_LIMITED`."""
    return code.upper()


def from_envelope_code(code: str) -> str:
    """A code as the envelope wrote it, as every other surface names it (lower_snake).

    Exact for whatever `to_envelope_code` wrote; the spec's other spellings (`ALIASES`) are read
    as our code for them unless their lowered name is registered here."""
    lowered = code.lower()
    if lowered in codes:
        return lowered
    return ALIASES.get(code.upper(), lowered)


@dataclass(frozen=True, slots=True)
class Envelope:
    """One invocation's answer: its data on success, its `ErrorDetail` on failure."""

    ok: bool
    """Whether the invocation succeeded (written from the exit code; it beats this on read)."""
    data: Any = None
    """The result (JSON data) on success; None on failure."""
    error: ErrorDetail | None = None
    """The failure; None on success."""
    warnings: tuple[Any, ...] = ()
    """Notes that did not stop the invocation: strings, objects or details."""
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """`duration_ms` (always), and `request_id`, `schema_version`, `not_modified`,
    `truncated`, `cursor` or any other fact about the invocation."""

    def __post_init__(self) -> None:
        if self.ok and self.error is not None:
            raise ValueError("a successful envelope carries no error")
        if not self.ok and (self.error is None or self.data is not None):
            raise ValueError("a failed envelope carries an error and no data")
        error = self.error
        if error is not None and error.retryable and error.retry_after_ms is None:
            # The reading rule, written out: every reader then waits the same.
            object.__setattr__(self, "error", copy_with(error, retry_after_ms=DEFAULT_WAIT_MS))
        object.__setattr__(
            self, "meta", {**self.meta, "duration_ms": _duration(self.meta.get("duration_ms"))}
        )
        object.__setattr__(self, "warnings", tuple(self.warnings))

    @classmethod
    def success(
        cls,
        data: Any = None,
        *,
        warnings: Sequence[Any] = (),
        duration_ms: int = 0,
        meta: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """The envelope of a success. `data` None is written as `{}`: both `data` and
        `error` null would read as malformed."""
        return cls(
            True,
            {} if data is None else data,
            None,
            tuple(warnings),
            {**(meta or {}), "duration_ms": duration_ms},
        )

    @classmethod
    def failure(
        cls,
        error: object,
        *,
        warnings: Sequence[Any] = (),
        duration_ms: int = 0,
        meta: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """The envelope of a failure: `error` is an `ErrorDetail`, or anything `classify`
        takes (an exception, a `RecoverableError`, a payload)."""
        if not isinstance(error, ErrorDetail):
            error = CONFIG.classify(error)
        return cls(
            False, None, error, tuple(warnings), {**(meta or {}), "duration_ms": duration_ms}
        )

    @property
    def exit_code(self) -> int:
        """The process exit code that goes with it: 0, or the error's code's (the registry)."""
        return 0 if self.error is None else self.error.exit_code

    @property
    def duration_ms(self) -> int:
        """`meta.duration_ms`."""
        duration: int = self.meta["duration_ms"]
        return duration

    def to_dict(self) -> dict[str, Any]:
        """The five keys, codes in UPPER_SNAKE."""
        return {
            "ok": self.ok,
            "data": self.data if self.ok else None,
            "error": None if self.error is None else error_payload(self.error),
            "warnings": [_warning_payload(warning) for warning in self.warnings],
            "meta": dict(self.meta),
        }

    def to_json(self, *, indent: int | None = None) -> str:
        """`to_dict` as JSON (what a value JSON cannot hold becomes its text). Never raises:
        data, warnings or meta that JSON cannot write at all (NaN, a cycle, keys that are not
        text, nesting past the recursion limit, an integer past 4300 digits) make the answer
        the typed failure `tool_output_invalid`, saying why, with `duration_ms` kept."""
        return written(self, indent)[0]

    @classmethod
    def parse(cls, value: object, *, exit_code: int | None = None) -> Envelope:
        """Read an envelope another process printed (text, bytes or a parsed object) by the
        spec's reading rules (the module's table). Never raises: what cannot be read is the
        malformed envelope, `tool_output_invalid`, not retryable."""
        try:
            return _read(value, exit_code)
        except Exception as exc:  # a bug of ours must not become the caller's exception
            return _malformed(f"could not be read ({type(exc).__name__})", exit_code)


def written(envelope: Envelope, indent: int | None = None) -> tuple[str, Envelope]:
    """(the JSON text, the envelope it says): `envelope` itself, or, when JSON cannot write
    its data, warnings or meta, the typed failure that replaces it (whose `exit_code` is then
    the one to exit with)."""
    try:
        text = json.dumps(envelope.to_dict(), indent=indent, default=safe_str, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        unwritable = unvalidated(
            "tool_output_invalid",
            f"the answer could not be written as JSON ({type(exc).__name__})",
            details={"unwritable": clean_text(str(exc), 200)},
        )
        failure = Envelope(False, None, unwritable, (), {"duration_ms": envelope.duration_ms})
        return json.dumps(failure.to_dict(), indent=indent, default=safe_str), failure
    return text, envelope


def _duration(value: object) -> int:
    """A duration in ms as the envelope holds it: a whole number >= 0 (else 0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return round(value) if math.isfinite(value) and value > 0 else 0


def error_payload(detail: ErrorDetail) -> dict[str, Any]:
    """A detail as the envelope's `error`: `to_dict`, each code of the chain in UPPER_SNAKE."""
    payload = detail.to_dict()
    link: Any = payload
    while isinstance(link, dict):
        link["code"] = to_envelope_code(link["code"])
        link = link["cause"]
    return payload


def _warning_payload(warning: Any) -> Any:
    return error_payload(warning) if isinstance(warning, ErrorDetail) else warning


def looks_like_envelope(value: object) -> bool:
    """Whether parsed output claims to be an envelope: an object with a boolean `ok` and at
    least two of the other four keys (so `{"ok": true}` from some API is just output)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("ok"), bool):
        return False
    return sum(key in value for key in ("data", "error", "warnings", "meta")) >= 2


# --- reading ---------------------------------------------------------------------------------


def load_json_object(value: object) -> tuple[Mapping[str, Any] | None, str]:
    """(the object `value` holds, "") or (None, why not): bounded, finite numbers only."""
    if isinstance(value, Mapping):
        return value, ""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value[: MAX_ENVELOPE_CHARS + 1]).decode("utf-8", "replace")
    why = (
        f"not text or an object ({type(value).__name__})"
        if not isinstance(value, str)
        else f"over {MAX_ENVELOPE_CHARS} characters"
        if len(value) > MAX_ENVELOPE_CHARS
        else ""
    )
    if why:
        return None, why
    assert isinstance(value, str)
    try:
        parsed = STRICT_JSON.decode(value)
    except RecursionError:
        return None, "nested too deep"
    except ValueError:
        return None, "not JSON"
    if not isinstance(parsed, Mapping):
        return None, "not a JSON object"
    return parsed, ""


def _read(value: object, exit_code: int | None) -> Envelope:
    data, why = load_json_object(value)
    if data is None:
        return _malformed(why, exit_code)
    if not isinstance(value, (str, bytes, bytearray)) and not _writable(data.get("data")):
        # a parsed object given as it is: its data must be JSON this envelope can write again
        return _malformed("its data is not JSON (NaN, infinity or an object JSON lacks)", exit_code)
    if "error" not in data:
        return _malformed("no error key", exit_code)
    meta = _read_meta(data.get("meta"))
    if data.get("data") is None and data["error"] is None and meta.get("not_modified") is not True:
        return _malformed("data and error are both null", exit_code)
    warnings = _read_warnings(data.get("warnings"))
    ok = data.get("ok")
    if exit_code is not None:
        ok = exit_code == 0  # the exit code beats ok
    elif not isinstance(ok, bool):
        ok = data["error"] is None
    if ok:
        return _read_success(data, meta, warnings)
    return _read_failure(data["error"], meta, warnings, exit_code)


def _writable(data: object) -> bool:
    """Whether strict JSON (no NaN or infinity, text keys) can write `data`."""
    try:
        json.dumps(data, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


def _read_success(data: Mapping[str, Any], meta: dict[str, Any], warnings: list[Any]) -> Envelope:
    result, error = data.get("data"), data["error"]
    if error is not None:  # a success says so (the exit code, else ok): keep what it said
        kept = json_safe_dict(error) if isinstance(error, Mapping) else clean_text(safe_str(error))
        warnings.append({"ignored_error": kept, "why": "the invocation succeeded"})
    return Envelope(True, result, None, tuple(warnings), meta)


def _read_failure(
    error: object, meta: dict[str, Any], warnings: list[Any], exit_code: int | None
) -> Envelope:
    if error is None:
        if exit_code:  # the spec's exit table says which error it was
            code = SPEC_EXIT_CODES.get(exit_code, "unknown")
            why = f"exited {exit_code}; its envelope named no error"
            detail = unvalidated(code, why, details={"exit_code": exit_code})
            return Envelope(False, None, detail, tuple(warnings), meta)
        return _malformed("a failure with a null error", exit_code)
    if not isinstance(error, Mapping):
        return _malformed("error is not an object", exit_code)
    try:
        detail = ErrorDetail.from_dict(_lowered_chain(error))
    except PayloadError as refused:
        return _malformed(f"error is not a payload: {refused}", exit_code)
    if exit_code:
        detail = copy_with(detail, details={**detail.details, "exit_code": exit_code})
    return Envelope(False, None, _checked_commands(detail), tuple(warnings), meta)


def _lowered_chain(error: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the error's cause chain (at most MAX_CAUSE_DEPTH links, cycles cut) with
    every code read back to lower_snake; an alias read keeps its spelling in details."""
    head: dict[str, Any] = dict(error)
    link, seen = head, {id(error)}
    for _ in range(MAX_CAUSE_DEPTH):
        code = link.get("code")
        if isinstance(code, str):
            link["code"] = from_envelope_code(code)
            if link["code"] != code.lower():
                link["envelope_code"] = code
        cause = link.get("cause")
        if not isinstance(cause, Mapping) or id(cause) in seen:
            break
        seen.add(id(cause))
        link["cause"] = link = dict(cause)
    return head


def _checked_commands(detail: ErrorDetail) -> ErrorDetail:
    """The spec's specialised commands obey `fix_command`'s rules (a refused one is dropped),
    and a credential code's command is the one registered here (`_registered_reauth`)."""
    details = detail.details
    found = [name for name in _COMMAND_FIELDS if name in details]
    redirect = details.get("redirect")
    if not found and not (isinstance(redirect, Mapping) and "command" in redirect):
        return _registered_reauth(detail)
    kept = dict(details)
    for name in found:
        _keep_if_safe(kept, name, kept, name)
    if isinstance(redirect, Mapping) and "command" in redirect:
        kept["redirect"] = dict(redirect)
        _keep_if_safe(kept["redirect"], "command", kept, "redirect_command")
    return _registered_reauth(copy_with(detail, details=kept))


def _registered_reauth(detail: ErrorDetail) -> ErrorDetail:
    """A credential code whose envelope names a command (`fix_command`, `refresh_command`,
    `reauth_command`, kept or dropped): the fix this registry holds for the code and source
    is `fix_command`; the envelope's own `fix_command`, when it differs, is only
    `details["suggested_command"]`. Without a registered fix, the detail as read."""
    if detail.code not in CREDENTIAL_CODES or detail.retryable:
        return detail
    row = codes.get(detail.code)
    registered = None if row is None else row.fix_command_for(detail.source)
    if row is None or registered is None or registered == detail.fix_command:
        return detail
    names = ("fix_command", *_COMMAND_FIELDS)
    named = detail.fix_command is not None or any(
        name in detail.details or f"{name}_dropped" in detail.details for name in names
    )
    if not named:
        return detail
    details = dict(detail.details)
    if detail.fix_command is not None:
        details[SUGGESTED_COMMAND] = detail.fix_command
    fix_required = detail.fix_required or row.fix_required
    return copy_with(detail, fix_command=registered, fix_required=fix_required, details=details)


def _keep_if_safe(holder: dict[str, Any], key: str, details: dict[str, Any], name: str) -> None:
    """Drop `holder[key]` unless it is a command `validate_fix_command` accepts; say why in
    `details[name + "_dropped"]`."""
    try:
        validate_fix_command(holder[key])
    except FixCommandRejected as refused:
        del holder[key]
        details[f"{name}_dropped"] = clean_text(str(refused))


def _read_meta(meta: object) -> dict[str, Any]:
    return json_safe_dict(meta) if isinstance(meta, Mapping) else {}


def _read_warnings(warnings: object) -> list[Any]:
    if not isinstance(warnings, list):
        return []
    kept: list[Any] = []
    for warning in warnings[:_MAX_WARNINGS]:
        if isinstance(warning, Mapping):
            kept.append(json_safe_dict(warning))
        else:
            text = warning if isinstance(warning, str) else safe_str(warning)
            kept.append(clean_text(text, _MAX_WARNING_CHARS))
    return kept


def _malformed(why: str, exit_code: int | None) -> Envelope:
    details: dict[str, Any] = {"malformed": why}
    if exit_code is not None:
        details["exit_code"] = exit_code
    detail = unvalidated("tool_output_invalid", f"malformed envelope: {why}", details=details)
    return Envelope(False, None, detail)


# Their names before 0.2.0 (`recoverable.envelope_code` and `.code_from_envelope` warn, then
# read these).
envelope_code = to_envelope_code
code_from_envelope = from_envelope_code
