"""The process-wide state of `_core` lives on `CONFIG`: values replaced whole, under its lock.

The scrubber's patterns and its memos are the process's (`CONFIG.secret_patterns`,
`CONFIG.scrubbed`, `CONFIG.scrubbed_keys`); no module of `_core` keeps state of its own in a
`global`.
"""

from __future__ import annotations

import ast
import re
import threading
from pathlib import Path

import recoverable as rc
from recoverable._core.config import CONFIG, Config
from recoverable._core.secrets import entry_name, forget, scrub
from recoverable._core.untrusted import json_safe_dict

CORE = Path(__file__).resolve().parents[2] / "src" / "recoverable" / "_core"


def test_no_module_of_core_keeps_state_in_a_global() -> None:
    found = [
        f"{path.relative_to(CORE)}:{node.lineno}"
        for path in sorted(CORE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Global)
    ]
    assert found == []


def test_a_pattern_added_is_the_config_s_and_the_memos_start_over() -> None:
    text, key = "ref qv-123456 refused", "qv-654321"
    assert scrub(text) is text
    assert entry_name(key) == (key, False)
    patterns, scrubbed, keys = CONFIG.secret_patterns, CONFIG.scrubbed, CONFIG.scrubbed_keys
    assert text in scrubbed and key in keys
    rc.secrets.add_secret_pattern(r"(qv-)[0-9]{6}")
    assert CONFIG.secret_patterns[: len(patterns)] == patterns  # a new tuple, the old kept
    assert CONFIG.secret_patterns[-1].pattern == r"(qv-)[0-9]{6}"
    assert patterns is not CONFIG.secret_patterns
    assert CONFIG.scrubbed is not scrubbed and CONFIG.scrubbed_keys is not keys
    assert scrub(text) == "ref qv-[REDACTED] refused"
    assert json_safe_dict({key: 1}) == {"qv-[REDACTED]": 1}  # the key memo forgot it too


def test_forget_gives_new_memos_and_keeps_the_patterns() -> None:
    scrub("something seen")
    patterns, scrubbed = CONFIG.secret_patterns, CONFIG.scrubbed
    forget()
    assert CONFIG.scrubbed is not scrubbed and CONFIG.scrubbed == {}
    assert CONFIG.secret_patterns is patterns


def test_patterns_added_at_once_from_many_threads_are_all_kept() -> None:
    config = Config()  # its own: the process's scrubber keeps its patterns
    barrier = threading.Barrier(8)

    def add(thread: int) -> None:
        barrier.wait()
        for number in range(25):
            config.add_secret_pattern(re.compile(f"t{thread}-{number}"))

    threads = [threading.Thread(target=add, args=(thread,)) for thread in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    added = sorted(pattern.pattern for pattern in config.secret_patterns)
    assert added == sorted(f"t{thread}-{number}" for thread in range(8) for number in range(25))
    assert config.scrubbed == {} and config.scrubbed_keys == {}
