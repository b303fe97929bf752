"""The fleet: cooldowns and breakers shared by every process that calls one key."""
