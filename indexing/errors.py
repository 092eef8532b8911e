"""The error type for user mistakes (bad paths, malformed input): reported in one line, no traceback."""


class ElqueryError(Exception):
    """A problem the user can fix; its message is one line, e.g. ``path:line: reason``."""
