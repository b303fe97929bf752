"""The built-in codes' names as a type: `BuiltinCode`.

A `Literal` of every code of the table (`codes._TABLE`), in its order, so a misspelt code where
a constructor or a table takes one fails mypy (tests/core/test_typed_codes.py holds the two
equal). Modules on the run path import it under `TYPE_CHECKING` only.
"""

from typing import Literal

__all__ = ["BuiltinCode"]

# The built-in codes, as mypy sees them: a constructor or a table that takes one of these
# refuses a misspelt code at type-checking time (tests/core/test_typed_codes.py holds it equal
# to the table below, in order).
BuiltinCode = Literal[
    "provider_rate_limited",
    "provider_overloaded",
    "provider_server_error",
    "provider_timeout",
    "provider_unreachable",
    "provider_connection_lost",
    "provider_bad_response",
    "provider_quota_exceeded",
    "provider_auth_failed",
    "provider_permission_denied",
    "provider_model_not_found",
    "provider_invalid_request",
    "provider_context_too_long",
    "provider_content_filtered",
    "provider_refused",
    "provider_output_truncated",
    "cli_not_found",
    "cli_not_authenticated",
    "cli_spawn_failed",
    "cli_version_unsupported",
    "cli_untrusted_workspace",
    "cli_invalid_arguments",
    "cli_crashed",
    "cli_killed",
    "cli_output_invalid",
    "run_cancelled",
    "run_timeout",
    "run_max_turns",
    "run_budget_exceeded",
    "run_guardrail_triggered",
    "run_tool_failures",
    "tool_input_invalid",
    "tool_not_found",
    "tool_not_executable",
    "tool_execution_failed",
    "tool_killed",
    "tool_output_invalid",
    "tool_timeout",
    "invalid_input",
    "not_supported",
    "not_found",
    "conflict",
    "precondition_failed",
    "state_already_running",
    "state_session_not_found",
    "state_not_resumable",
    "state_run_superseded",
    "state_concurrency_conflict",
    "state_request_key_conflict",
    "unauthenticated",
    "credentials_expired",
    "permission_denied",
    "payment_required",
    "rate_limited",
    "unavailable",
    "timeout",
    "network_error",
    "internal_error",
    "unknown",
]
