"""Errors a user can cause. Each carries one message meant to be printed as is."""


class RegulaError(Exception):
    """Base class: the CLI prints the message on one line and exits with status 2."""


class ParamsError(RegulaError):
    """A bad key or value in params.yaml."""


class UnknownNameError(RegulaError):
    """An unknown skill, material, symbol ... ; the message lists the valid ones."""

    def __init__(self, kind: str, name: str, valid):
        valid = sorted(valid)
        super().__init__(f"unknown {kind} {name!r}; valid {kind}s: {', '.join(valid) or '(none)'}")
        self.kind, self.name, self.valid = kind, name, valid


class DataError(RegulaError):
    """A malformed or truncated artifact on disk; the message names the file (and line)."""


class EmptyEpisodeError(RegulaError):
    """An episode to be reported took no primitive step: its agent never acted (every action
    refused or failing at once), so its row would measure a broken agent, not a result."""
