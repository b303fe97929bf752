"""The classifier's and the detail's names the CLI parsers use, loaded when a failure is read.

A run that succeeds classifies nothing, yet the parsers name `from_http`, `codes`,
`unvalidated` and a `PhraseTable` at their top: imported from their homes, they would load
`recoverable._classify` and `recoverable._core.detail` (~30 ms, half of what `recoverable run`
adds over the CLI it runs) on every run. Here each name loads its home on first use: a
function imports the real one when called (a dict lookup after the first), a table builds the
real table on its first match, and `ErrorDetail` answers `isinstance` without loading its
module (no detail can exist before it is loaded). Type checkers read the real names.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .._classify.http import from_http
    from .._classify.phrases import PhraseTable
    from .._core.codes import codes
    from .._core.detail import ErrorDetail, unvalidated
else:
    from collections.abc import Mapping, Sequence
    from typing import Any

    def from_http(*args: Any, **kwargs: Any) -> Any:
        """`recoverable._classify.http.from_http`."""
        from .._classify.http import from_http as classify

        return classify(*args, **kwargs)

    def unvalidated(*args: Any, **kwargs: Any) -> Any:
        """`recoverable._core.detail.unvalidated`."""
        from .._core.detail import unvalidated as made

        return made(*args, **kwargs)

    class _Codes(Mapping[str, Any]):
        """`recoverable._core.codes.codes`, read through."""

        __slots__ = ()

        def __getitem__(self, code: str) -> Any:
            from .._core.codes import codes as table

            return table[code]

        def __iter__(self) -> Any:
            from .._core.codes import codes as table

            return iter(table)

        def __len__(self) -> int:
            from .._core.codes import codes as table

            return len(table)

    codes = _Codes()

    class PhraseTable:
        """`recoverable._classify.phrases.PhraseTable`, built on its first match."""

        __slots__ = ("_table", "codes", "phrases")

        def __init__(self, phrases: Sequence[tuple[str, str]]) -> None:
            self.phrases = tuple(phrases)
            self.codes = tuple(code for _, code in self.phrases)
            self._table: Any = None

        def _real(self) -> Any:
            table = self._table
            if table is None:
                from .._classify.phrases import PhraseTable as Table

                table = self._table = Table(self.phrases)
            return table

        def code(self, text: str) -> Any:
            return self._real().code(text)

        def in_line(self, line: str) -> Any:
            return self._real().in_line(line)

        def in_lines(self, text: str) -> Any:
            return self._real().in_lines(text)

    _DETAIL_MODULE = "recoverable._core.detail"

    class _DetailCheck(type):
        """`isinstance(value, ErrorDetail)` without loading the detail's module."""

        def __instancecheck__(cls, value: object) -> bool:
            module = sys.modules.get(_DETAIL_MODULE)
            return module is not None and isinstance(value, module.ErrorDetail)

        def __subclasscheck__(cls, kind: type) -> bool:
            module = sys.modules.get(_DETAIL_MODULE)
            return module is not None and issubclass(kind, module.ErrorDetail)

    class ErrorDetail(metaclass=_DetailCheck):
        """Stands for `recoverable._core.detail.ErrorDetail` in `isinstance` checks."""

        __slots__ = ()


__all__ = ["ErrorDetail", "PhraseTable", "codes", "from_http", "unvalidated"]
