"""Errors a user can act on, and the translation of Spark/JVM failures into them."""

from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix (bad usage, input or configuration): one line, exit code 2."""

    exit_code = 2
