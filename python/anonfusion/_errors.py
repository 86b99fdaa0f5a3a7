"""The exceptions the engine raises. They are defined here, in Python, and shown and pickled as
``anonfusion.<Class>``, so an error raised in a process pool or joblib worker reaches the parent
as the same class with the same message."""

__all__ = ["Error", "ArgumentError", "TableError", "BudgetError", "Cancelled"]


class Error(Exception):
    """A statement the engine refused or that failed; the message names the argument, column or
    table at fault, as the command-line tool prints it. Every engine error is an ``Error``."""


class ArgumentError(Error, ValueError):
    """A function argument or SQL parameter is missing, of the wrong type or out of range."""


class TableError(Error):
    """A table is unknown, lacks the declarations a method needs, or one of its columns or
    hierarchies cannot be used."""


class BudgetError(Error):
    """The privacy ledger refused a differentially private release: the table has no privacy
    budget, or the release would exceed it (``anon_privacy_ledger`` shows budgets and spends)."""


class Cancelled(Error):
    """The statement was cancelled before it published anything (Ctrl-C raises
    ``KeyboardInterrupt`` with this as its cause). A differentially private call cancelled
    after it drew noise keeps its charge, and its message says so."""


for _cls in (Error, ArgumentError, TableError, BudgetError, Cancelled):
    _cls.__module__ = "anonfusion"
del _cls
