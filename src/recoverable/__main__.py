"""`python -m recoverable` runs the `recoverable` command."""

from .cli import main

raise SystemExit(main())
