"""The code registry: every row complete, fix commands validated, user codes registered."""

from __future__ import annotations

import re

import pytest

import recoverable as rc
from recoverable._core.codes import validate_fix_command
from recoverable._core.registration import check_row

ROWS = list(rc.codes)


def test_the_table_holds_every_code_of_the_design() -> None:
    # 52, not_supported (the seeds' NOT_SUPPORTED), and Helix's six state_* rows for the
    # sessions and streams the wire keeps (already running, not found, not resumable,
    # superseded, concurrency conflict, a request key reused for other input)
    assert len(ROWS) == 59
    assert {row.category for row in ROWS} == {
        "provider",
        "cli",
        "run",
        "tool",
        "caller",
        "auth",
        "billing",
        "rate",
        "service",
        "network",
        "state",
        "internal",
        "unknown",
    }


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.code)
def test_every_row_is_complete_and_valid(row: rc.CodeRow) -> None:
    check_row(row, rc.codes.destructive_subcommands)  # the same check a user's registration gets
    assert row.user_message.strip()
    assert 0 < row.exit_code <= 13 or row.exit_code == 130  # the spec's table, and Ctrl-C
    assert 100 <= row.http_status <= 599
    assert row.when


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.code)
def test_user_sentences_name_no_code_id_or_cause(row: rc.CodeRow) -> None:
    sentence = row.user_message
    assert sentence[0].isupper() and sentence.endswith(".")
    assert "_" not in sentence  # no code names
    assert not re.search(r"\d", sentence)  # no statuses, ids or exit codes
    assert not re.search(r"\b(error|exception|stack|http|api|cli|errno)\b", sentence, re.I)


@pytest.mark.parametrize(
    ("code", "retryable", "fallback", "exit_code", "http_status"),
    [
        ("provider_rate_limited", True, True, 11, 503),
        ("provider_quota_exceeded", False, True, 9, 502),
        ("provider_invalid_request", False, False, 2, 500),
        ("cli_not_found", False, True, 4, 500),
        ("run_cancelled", False, False, 130, 499),
        ("run_timeout", False, False, 10, 504),
        ("rate_limited", True, False, 11, 429),
        ("unknown", False, False, 1, 500),
        ("state_already_running", True, False, 12, 409),
        ("state_session_not_found", False, False, 5, 404),
        ("state_not_resumable", False, False, 6, 410),
        ("state_run_superseded", False, False, 6, 409),
        ("state_concurrency_conflict", False, False, 6, 409),
        ("state_request_key_conflict", False, False, 6, 409),
    ],
)
def test_rows_carry_the_designed_decisions(
    code: str, retryable: bool, fallback: bool, exit_code: int, http_status: int
) -> None:
    row = rc.codes[code]
    assert (row.retryable, row.fallback, row.exit_code, row.http_status) == (
        retryable,
        fallback,
        exit_code,
        http_status,
    )


def test_retryable_rows_never_ask_for_a_fix() -> None:
    for row in ROWS:
        if row.retryable:
            assert row.fix_required is None and not row.fix_commands, row.code


def test_install_commands_are_per_cli() -> None:
    row = rc.codes["cli_not_found"]
    assert row.fix_command_for("claude") == "npm install -g @anthropic-ai/claude-code"
    assert row.fix_command_for("codex") == "npm install -g @openai/codex"
    assert row.fix_command_for("gemini") == "npm install -g @google/gemini-cli"
    assert row.fix_command_for(None) is None


@pytest.mark.parametrize(
    "command",
    [
        "npm install -g @openai/codex",
        "gcloud auth application-default login",
        "mytool auth refresh",
        "git fetch --prune-tags origin",
        'tool config set region "eu west"',
    ],
)
def test_safe_fix_commands_are_accepted(command: str) -> None:
    assert validate_fix_command(command) == command


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("", "empty"),
        (" tool login", "whitespace"),
        ("tool login; rm -rf /", "metacharacters"),
        ("tool login && tool run", "metacharacters"),
        ("tool login | tee log", "metacharacters"),
        ("tool login > out", "metacharacters"),
        ("tool auth --token $TOKEN", "metacharacters"),
        ("tool auth --token `cat t`", "metacharacters"),
        ("tool login\ntool run", "metacharacters"),
        ("tool auth --token <your-token>", "metacharacters"),
        ("tool auth --token {token}", "placeholder"),
        ("tool auth --token YOUR_TOKEN", "placeholder"),
        ("tool auth --project ...", "placeholder"),
        ("tool 'unbalanced", "parse"),
        ("/usr/bin/tool login", "program_path"),
        ("./tool login", "program_path"),
        ("rm -rf build", "deletes_files"),
        ("tool cache delete", "destructive_subcommand"),
        ("psql -c drop", "database"),
        ("git reset --hard", "git_destructive"),
        ("git clean -fdx", "git_destructive"),
        ("git push --force origin main", "git_destructive"),
        ("sudo tool login", "privilege"),
        ("npm uninstall -g @openai/codex", "destructive_subcommand"),
        ("bash -c tool", "inline_code"),
        ("curl -o x https://example.invalid", "downloads"),
    ],
)
def test_unsafe_fix_commands_are_refused(command: str, rule: str) -> None:
    """The whole corpus is tests/core/test_fix_command_validator.py; these are the registry's
    door."""
    with pytest.raises(rc.tools.FixCommandRejected) as refused:
        validate_fix_command(command)
    assert refused.value.rule == rule
    assert str(refused.value).startswith("fix_command ")


def test_register_code_validates_and_adds_a_row() -> None:
    row = rc.register_code(
        "billing_card_declined",
        retryable=False,
        exit_code=9,
        http_status=402,
        user_message="Your card was declined.",
        fix_required="Update the card on file",
        fix_command="billing-cli card update",
        fix_contract="idempotent",
    )
    try:
        assert rc.codes.get("billing_card_declined") is row
        assert row.category == "billing"
        detail = rc.ErrorDetail.create("billing_card_declined", "declined by the issuer")
        assert detail.fix_command == "billing-cli card update"
        assert detail.exit_code == 9
        assert detail.http_status == 402
        assert detail.recovery == "fix"
        assert row.fix_contract == "idempotent"
        with pytest.raises(ValueError, match="already registered"):
            rc.register_code("billing_card_declined", user_message="Again.")
        replaced = rc.register_code("billing_card_declined", user_message="Declined.", replace=True)
        assert rc.codes["billing_card_declined"] is replaced
    finally:
        rc.codes.unregister("billing_card_declined")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"code": "Bad-Name", "user_message": "x."}, "lower_snake_case"),
        ({"code": "my_code", "user_message": "  "}, "needs a user_message"),
        ({"code": "my_code", "user_message": "x.", "exit_code": 300}, "exit_code"),
        ({"code": "my_code", "user_message": "x.", "http_status": 99}, "http_status"),
        (
            {
                "code": "my_code",
                "user_message": "x.",
                "retryable": True,
                "fix_required": "y",
                "fix_command": "tool fix",
            },
            "retryable code has no fix_command",
        ),
        (
            {"code": "my_code", "user_message": "x.", "fix_command": "tool fix"},
            "needs a fix_required",
        ),
        (
            {
                "code": "my_code",
                "user_message": "x.",
                "fix_required": "y",
                "fix_command": "tool fix; rm -rf /",
                "fix_contract": "idempotent",
            },
            "metacharacters",
        ),
        (
            {
                "code": "my_code",
                "user_message": "x.",
                "fix_required": "y",
                "fix_command": "tool fix",
            },
            "needs fix_contract",
        ),
    ],
)
def test_register_code_refuses_bad_rows(kwargs: dict[str, object], match: str) -> None:
    code = str(kwargs.pop("code"))
    with pytest.raises(ValueError, match=match):
        rc.register_code(code, **kwargs)  # type: ignore[arg-type]
    assert code not in rc.codes


def test_create_refuses_an_unregistered_unsafe_fix_command() -> None:
    with pytest.raises(rc.tools.FixCommandRejected):
        rc.ErrorDetail.create(
            "invalid_input", "bad", fix_required="fix it", fix_command="tool fix $(whoami)"
        )


def test_install_commands_name_each_clis_own_package() -> None:
    """The registry's static fix commands and the agents modules name the same npm packages."""
    from recoverable.agents._cli_modules import CLI_NAMES, module_for

    for cli in CLI_NAMES:
        expected = f"npm install -g {module_for(cli).PACKAGE}"
        assert rc.codes["cli_not_found"].fix_command_for(cli) == expected
        assert rc.codes["cli_version_unsupported"].fix_command_for(cli) == expected


def test_unregister_removes_a_users_code_and_refuses_a_built_in_one() -> None:
    rc.register_code("my_temporary_code", user_message="Temporary.")
    rc.codes.unregister("my_temporary_code")
    assert "my_temporary_code" not in rc.codes
    assert rc.codes.resolve("my_temporary_code") is rc.codes["unknown"]
    with pytest.raises(ValueError, match="built in"):
        rc.codes.unregister("provider_rate_limited")
    assert "provider_rate_limited" in rc.codes


def test_a_rows_fix_commands_cannot_be_changed() -> None:
    row = rc.codes["cli_not_found"]
    with pytest.raises(TypeError):
        row.fix_commands["claude"] = "something else"  # type: ignore[index]
