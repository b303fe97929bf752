"""Agent tools built with `recoverable.tools.toolkit` for the tests: run as scripts
(`recoverable exec` runs them as real processes) and imported for the frameworks' own test
runners."""
