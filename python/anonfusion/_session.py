"""The Python face of the engine's session and results (the engine is ``anonfusion._anonfusion``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence, Union

from . import _anonfusion

if TYPE_CHECKING:
    import pandas
    import polars
    import pyarrow

    Params = Union[Sequence[Any], Mapping[str, Any]]

__all__ = ["Session", "Relation"]


def _needs(module: str, what: str) -> Any:
    """Import an optional dependency, or raise ImportError saying what needs it and how to get it."""
    try:
        return __import__(module)
    except ImportError as e:
        extra = "polars" if module == "polars" else "pandas"
        raise ImportError(
            f"{what} needs the Python package {module}: pip install 'anonfusion[{extra}]' ({e})"
        ) from e


class Relation:
    """A statement's result, held by the engine: Arrow record batches and their schema.

    Any reader of the Arrow PyCapsule interface takes it without copies (``pyarrow.table(rel)``,
    ``polars.DataFrame(rel)``, DuckDB); ``to_arrow()`` and ``to_polars()`` share its buffers,
    ``to_pandas()`` converts (pandas holds its own arrays). Iterating gives its
    ``pyarrow.RecordBatch``es.
    """

    __slots__ = ("_rel",)

    def __init__(self, rel: _anonfusion.Relation) -> None:
        self._rel = rel

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self._rel.__arrow_c_stream__(requested_schema)

    def __arrow_c_schema__(self) -> object:
        return self._rel.__arrow_c_schema__()

    @property
    def columns(self) -> list[str]:
        """Column names, in order."""
        return self._rel.columns

    @property
    def schema(self) -> pyarrow.Schema:
        """The result's Arrow schema (a ``pyarrow.Schema``)."""
        return _needs("pyarrow", "Relation.schema").schema(self)

    def __len__(self) -> int:
        return len(self._rel)

    def __repr__(self) -> str:
        return repr(self._rel)

    def _repr_html_(self) -> str:
        """The first rows as an HTML table, for Jupyter."""
        return self._rel._repr_html_()

    def __iter__(self) -> Iterator[pyarrow.RecordBatch]:
        return iter(self.to_reader())

    def to_reader(self) -> pyarrow.RecordBatchReader:
        """A ``pyarrow.RecordBatchReader`` over the batches (no copies)."""
        return _needs("pyarrow", "Relation.to_reader()").RecordBatchReader.from_stream(self)

    def to_arrow(self) -> pyarrow.Table:
        """A ``pyarrow.Table`` sharing the result's buffers (no copies)."""
        return _needs("pyarrow", "to_arrow()").table(self)

    def to_pandas(self, **kwargs: Any) -> pandas.DataFrame:
        """A pandas DataFrame. This converts and copies: pandas holds its own arrays.

        ``kwargs`` go to ``pyarrow.Table.to_pandas`` (``types_mapper``, ``self_destruct``, ...).
        Integer columns that hold NULL (the bounds of a suppressed record, say) become float64
        with NaN, as NumPy integers have no NULL; ``types_mapper=pandas.ArrowDtype`` keeps the
        Arrow types (int64 with ``<NA>``). Arrow's view types (``string_view``, as in ArtUC's
        ``codes``), which pyarrow cannot convert to pandas, are cast to their plain forms first.
        """
        _needs("pandas", "to_pandas()")
        return _without_views(self.to_arrow()).to_pandas(**kwargs)

    def to_polars(self) -> polars.DataFrame:
        """A Polars DataFrame sharing the result's buffers where Polars' types allow."""
        return _needs("polars", "to_polars()").from_arrow(self.to_arrow())


def _plain_type(t: pyarrow.DataType) -> pyarrow.DataType:
    """``t`` with every view type (string_view, binary_view, list_view) replaced by its plain form."""
    import pyarrow as pa

    types = pa.types
    if types.is_string_view(t):
        return pa.large_string()
    if types.is_binary_view(t):
        return pa.large_binary()
    if types.is_list_view(t) or types.is_list(t):
        return pa.list_(_plain_field(t.value_field))
    if types.is_large_list_view(t) or types.is_large_list(t):
        return pa.large_list(_plain_field(t.value_field))
    if types.is_fixed_size_list(t):
        return pa.list_(_plain_field(t.value_field), t.list_size)
    if types.is_map(t):
        return pa.map_(_plain_field(t.key_field), _plain_field(t.item_field), t.keys_sorted)
    if types.is_struct(t):
        return pa.struct([_plain_field(t.field(i)) for i in range(t.num_fields)])
    if types.is_dictionary(t):
        return pa.dictionary(t.index_type, _plain_type(t.value_type), t.ordered)
    return t


def _plain_field(f: pyarrow.Field) -> pyarrow.Field:
    return f.with_type(_plain_type(f.type))


def _without_views(table: pyarrow.Table) -> pyarrow.Table:
    """``table``, cast where a column's type holds a view type (otherwise untouched, no copy)."""
    schema = table.schema
    plain = [_plain_field(f) for f in schema]
    if all(p.type == f.type for p, f in zip(plain, schema)):
        return table
    import pyarrow as pa

    return table.cast(pa.schema(plain, metadata=schema.metadata))


class Session:
    """A session of the engine: the command-line tool's SQL, every table function, the registry
    of roles and hierarchies, and the privacy ledger.

    ``ledger``: the file that keeps privacy budgets across sessions; by default the CLI's
    (``$ANONFUSION_LEDGER`` or the user's data directory), so a notebook and the CLI spend from
    one budget. ``progress=False`` hides the progress bars of long searches. A ``with`` block
    closes the session at its end (its tables are dropped; the ledger stays).
    """

    __slots__ = ("_s",)

    def __init__(self, ledger: Optional[Union[str, os.PathLike[str]]] = None, progress: bool = True) -> None:
        self._s = _anonfusion.Session(None if ledger is None else os.fspath(ledger), progress)

    def sql(self, query: str, params: Optional[Params] = None) -> Relation:
        """Run one SQL statement and return its result (a table function's outputs are
        registered when this returns).

        ``params`` binds ``$1, $2, ...`` (a sequence) or ``$name`` (a mapping) as typed values
        (None, bool, int, float, str, bytes) through DataFusion's parameter binding, never by
        editing the SQL text. They bind values in a query (``WHERE age > $1``); a table
        function's arguments are literals. Ctrl-C cancels the statement, waits for it to stop
        (nothing registered, nothing charged) and raises KeyboardInterrupt.
        """
        return Relation(self._s.sql(query, params))

    def stream(self, query: str, params: Optional[Params] = None) -> pyarrow.RecordBatchReader:
        """As :meth:`sql`, but the result is computed batch by batch as the returned
        ``pyarrow.RecordBatchReader`` is read, never held whole. The statement is planned now
        (a table function runs and registers its outputs here); it is read once."""
        pa = _needs("pyarrow", "Session.stream()")
        return pa.RecordBatchReader.from_stream(self._s.stream(query, params))

    def register(self, name: str, data: Any) -> None:
        """Register ``data`` as table ``name``: a pandas or Polars DataFrame, a pyarrow Table or
        RecordBatchReader, or any object with ``__arrow_c_stream__``. Arrow data is shared, not
        copied (pandas goes through ``pyarrow.Table.from_pandas``). An existing table of that
        name is an error: nothing is replaced."""
        self._s.register(name, data)

    def deregister(self, name: str) -> None:
        """Remove table ``name``, as ``DROP TABLE name``; an unknown name is a TableError."""
        self._s.deregister(name)

    def tables(self) -> list[str]:
        """The session's table names (originals, releases, side tables, system views), sorted."""
        return self._s.tables()

    def close(self) -> None:
        """Drop the session's tables and refuse further statements (the ledger file stays)."""
        self._s.close()

    @property
    def closed(self) -> bool:
        return self._s.closed

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
