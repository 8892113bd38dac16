"""The error the command-line functions of fmu_mb raise for what a user asked (fmu_mb.cli prints it as one line)."""
from __future__ import annotations

import difflib


class UserError(Exception):
    """An expected failure, said in one line: exit code ``code`` (2: what was asked cannot be done as asked,
    usage, files, names, values; 1: a build or a simulation that failed)."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def one_line(text) -> str:
    """``text`` (an exception or a string) on one line."""
    return " ".join(str(text).split())


def close_matches(name: str, names) -> str:
    """" (close matches: a, b)" of ``name`` among ``names``, or ""."""
    near = difflib.get_close_matches(name, list(names), n=5, cutoff=0.6)
    return f" (close matches: {', '.join(near)})" if near else ""
