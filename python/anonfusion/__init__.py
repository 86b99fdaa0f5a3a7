"""anonfusion: SQL-queryable anonymization of health data, on Apache DataFusion.

A :class:`Session` is the command-line tool's session: the same SQL, table functions
(``load_dataset``, ``hceil_anonymize``, ``query_error``, ...), registry of roles and hierarchies
and privacy ledger. ``Session.sql`` returns a :class:`Relation`, an Arrow result that
``to_arrow()``, ``to_pandas()``, ``to_polars()`` and any reader of the Arrow PyCapsule interface
(``pyarrow.table(rel)``, ``polars.DataFrame(rel)``, DuckDB) take without copies.
``Session.register(name, frame)`` adds a pandas or Polars DataFrame or a pyarrow Table.
A statement the engine refuses raises :class:`Error` with the engine's message.
"""

from ._anonfusion import Error, Relation, Session

__all__ = ["Error", "Relation", "Session"]
