"""`python -m recoverable` runs the `recoverable` command."""

from .command import main

raise SystemExit(main())
