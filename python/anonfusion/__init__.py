"""anonfusion: SQL-queryable anonymization of health data, on Apache DataFusion.

A :class:`Session` is the command-line tool's session: the same SQL, table functions
(``load_dataset``, ``hceil_anonymize``, ``query_error``, ...), registry of roles and hierarchies
and privacy ledger. ``Session.sql`` returns a :class:`Relation`, an Arrow result that
``to_arrow()``, ``to_polars()`` and any reader of the Arrow PyCapsule interface
(``pyarrow.table(rel)``, ``polars.DataFrame(rel)``, DuckDB) take without copies, and
``to_pandas()`` converts; ``Session.stream`` reads a result batch by batch.
``Session.register(name, frame)`` adds a pandas or Polars DataFrame or a pyarrow Table.
A statement the engine refuses raises an :class:`Error`: :class:`ArgumentError`,
:class:`TableError`, :class:`BudgetError` or :class:`Cancelled`.
"""

from ._anonfusion import __version__
from ._errors import ArgumentError, BudgetError, Cancelled, Error, TableError
from ._session import Relation, Session

__all__ = [
    "ArgumentError",
    "BudgetError",
    "Cancelled",
    "Error",
    "Relation",
    "Session",
    "TableError",
    "__version__",
]
