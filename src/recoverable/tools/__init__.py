"""The agent-tool side: the envelope, the exit codes, the ladder, the fix runner, exec and the
toolkit."""
