"""What a Python user expects beside datafusion-python and DuckDB: exceptions that pickle,
parameters, display, schema, iteration, streaming, the catalog, a context manager, typing."""

import ast
import concurrent.futures
import html
import importlib.metadata
import multiprocessing
import pickle
import random
from pathlib import Path

import anonfusion as af
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest


def test_version_is_the_package_s():
    assert af.__version__ == importlib.metadata.version("anonfusion")
    assert af.__version__.count(".") == 2


# --- exceptions -------------------------------------------------------------------------------


def failing_call(sql):
    """Run in a worker process: a fresh session, one statement the engine refuses."""
    import tempfile

    with af.Session(ledger=str(Path(tempfile.mkdtemp()) / "ledger.tsv"), progress=False) as s:
        s.sql("SELECT * FROM load_dataset('adult', 200)")
        s.sql(sql)


def test_an_engine_error_survives_a_process_pool():
    # spawn, not fork: a forked child would inherit the engine's runtime without its threads.
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        future = pool.submit(failing_call, "SELECT * FROM hceil_anonymize('adult', 'adult_h', 0, 0.3)")
        with pytest.raises(af.ArgumentError, match="hceil_anonymize: argument 'k'"):
            future.result(timeout=120)


@pytest.mark.parametrize(
    "sql, cls",
    [
        ("SELECT * FROM hceil_anonymize('adult', 'adult_h', 0, 0.3)", af.ArgumentError),
        ("SELECT * FROM kanon_anonymize('nowhere', 'x', 5)", af.TableError),
        ("SELECT * FROM ipa_release('adult', 'adult_dp', 1.0)", af.BudgetError),
        ("SELECT * FROM no_such_table", af.Error),
    ],
    ids=["argument", "table", "budget", "datafusion"],
)
def test_errors_are_distinct_classes_that_pickle(session, sql, cls):
    session.sql("SELECT * FROM load_dataset('adult', 200)")
    with pytest.raises(af.Error) as caught:
        session.sql(sql)
    err = caught.value
    assert type(err) is cls, (type(err), str(err))
    assert type(err).__module__ == "anonfusion" and type(err).__qualname__ == cls.__name__
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is cls and str(again) == str(err)


def test_the_hierarchy():
    for cls in (af.ArgumentError, af.TableError, af.BudgetError, af.Cancelled):
        assert issubclass(cls, af.Error)
    assert issubclass(af.ArgumentError, ValueError)
    assert len({af.ArgumentError, af.TableError, af.BudgetError, af.Cancelled}) == 4


# --- parameters -------------------------------------------------------------------------------


def test_positional_and_named_parameters(session):
    session.register("t", pa.table({"n": [1, 2, 3, 4], "s": ["a", "b", "c", "d"]}))
    rel = session.sql("SELECT n FROM t WHERE n > $1 AND s <> $2 ORDER BY n", [1, "c"])
    assert rel.to_arrow().column("n").to_pylist() == [2, 4]
    rel = session.sql("SELECT n FROM t WHERE n BETWEEN $lo AND $hi ORDER BY n", {"lo": 2, "$hi": 3})
    assert rel.to_arrow().column("n").to_pylist() == [2, 3]
    assert session.sql("SELECT $1 AS x, $2 AS y, $3 AS z", [None, 2.5, True]).to_arrow().to_pylist() == [
        {"x": None, "y": 2.5, "z": True}
    ]


def test_a_parameter_is_a_value_never_sql(session):
    session.register("t", pa.table({"s": ["a", "b"]}))
    hostile = "a' OR '1'='1"
    assert len(session.sql("SELECT s FROM t WHERE s = $1", [hostile])) == 0
    assert len(session.sql("SELECT s FROM t WHERE s = $1", ["a"])) == 1


def test_a_table_function_s_arguments_are_literals(session):
    with pytest.raises(af.Error, match="Placeholder"):
        session.sql("SELECT * FROM generate_series(1, $1)", [5])


def test_a_parameter_of_an_unknown_type_is_refused(session):
    with pytest.raises(TypeError, match=r"parameter \$1: a list"):
        session.sql("SELECT $1", [[1, 2]])
    with pytest.raises(TypeError, match="not a string"):
        session.sql("SELECT $1", "abc")


# --- results ----------------------------------------------------------------------------------


def test_repr_html_escapes_and_counts(session):
    session.register("t", pa.table({"<col>": ["<b>x</b>", None] * 10}))
    page = session.sql("SELECT * FROM t")._repr_html_()
    assert page.startswith("<table>") and "<b>" not in page
    assert html.escape("<col>") in page and html.escape("<b>x</b>") in page and "NULL" in page
    assert page.count("<tr>") == 1 + 10 and "20 rows (10 shown)" in page


def test_schema_and_iteration_over_batches(session):
    rel = session.sql("SELECT CAST(value AS BIGINT) AS v, 'x' AS s FROM generate_series(1, 20000)")
    assert isinstance(rel.schema, pa.Schema) and rel.schema.names == ["v", "s"]
    assert rel.schema.field("v").type == pa.int64()
    batches = list(rel)
    assert all(isinstance(b, pa.RecordBatch) for b in batches) and len(batches) > 1
    assert sum(b.num_rows for b in batches) == len(rel) == 20000


def test_stream_computes_batches_as_they_are_read(session):
    # Ten billion rows: collecting them would never end; the first batch comes at once.
    reader = session.stream("SELECT value FROM generate_series(1, 10000000000)")
    assert isinstance(reader, pa.RecordBatchReader) and reader.schema.names == ["value"]
    first = reader.read_next_batch()
    assert 0 < first.num_rows <= 65536 and first.column(0)[0].as_py() == 1
    reader.close()
    rows = session.stream("SELECT value FROM generate_series(1, 100000) WHERE value > $1", [40000]).read_all()
    assert rows.num_rows == 60000
    assert pl.DataFrame(session.stream("SELECT 1 AS one")).shape == (1, 1)


def test_to_pandas_copies_and_passes_options_to_pyarrow(session):
    session.register("t", pa.table({"lo": pa.array([20, None, 40], pa.int64())}))
    rel = session.sql("SELECT lo FROM t")
    assert str(rel.to_pandas()["lo"].dtype) == "float64"  # NumPy integers have no NULL
    kept = rel.to_pandas(types_mapper=pd.ArrowDtype)["lo"]
    assert str(kept.dtype) == "int64[pyarrow]" and kept.isna().tolist() == [False, True, False]
    nullable = rel.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)["lo"]
    assert str(nullable.dtype) == "Int64"


def test_an_artuc_release_becomes_pandas(session):
    session.sql("SELECT * FROM load_dataset('informs', 400, 1)")
    session.sql("SELECT COUNT(*) FROM load_constraints('informs', 'UC1')")
    session.sql("SELECT COUNT(*) FROM artuc('informs', 'inf_a', 'informs_uc1', 5, 2, 0.5, 1000000, 'seed=1')")
    rel = session.sql("SELECT * FROM inf_a")
    assert pa.types.is_string_view(rel.schema.field("codes").type.value_type)
    frame = rel.to_pandas()
    assert len(frame) == len(rel) and all(isinstance(c, str) for c in frame["codes"].iloc[0])
    assert len(rel.to_pandas(types_mapper=pd.ArrowDtype)) == len(rel)


# --- the catalog and the session's life -----------------------------------------------------


def test_tables_and_deregister(session):
    session.register("mine", pa.table({"x": [1]}))
    assert "mine" in session.tables() and "anon_roles" in session.tables()
    assert session.tables() == sorted(session.tables())
    session.deregister("mine")
    assert "mine" not in session.tables()
    with pytest.raises(af.TableError, match="mine"):
        session.deregister("mine")


def test_context_manager_closes_the_session(tmp_path):
    with af.Session(ledger=str(tmp_path / "ledger.tsv"), progress=False) as s:
        s.register("t", pa.table({"x": [1, 2]}))
        assert len(s.sql("SELECT * FROM t")) == 2
    assert s.closed
    with pytest.raises(af.Error, match="closed"):
        s.sql("SELECT 1")


# --- typing -----------------------------------------------------------------------------------


def test_the_package_ships_typing():
    package = Path(af.__file__).parent
    assert (package / "py.typed").is_file()
    stub = ast.parse((package / "_anonfusion.pyi").read_text())
    stubbed = {n.name for n in stub.body if isinstance(n, ast.ClassDef)}
    compiled = {name for name in dir(af._anonfusion) if isinstance(getattr(af._anonfusion, name), type)}
    assert stubbed == compiled
    for cls in stub.body:
        if isinstance(cls, ast.ClassDef):
            methods = {f.name for f in cls.body if isinstance(f, ast.FunctionDef)}
            missing = {m for m in methods if not hasattr(getattr(af._anonfusion, cls.name), m)}
            assert not missing, (cls.name, missing)


def test_an_error_while_streaming_shows_no_cell(session):
    # A cast that fails on a cell fails as the batch is read, through the Arrow C stream rather
    # than as one of the package's exceptions; DataFusion's message quotes the cell, and the
    # message Python sees is scrubbed all the same. Every cell is a marker (as the engine's
    # property test plants them), each one a value the cast refuses.
    markers = [f"MK{random.randrange(10**9)}R{row}Q" for row in range(50)]
    session.register("t", pa.table({"age": markers}))
    reader = session.stream("SELECT CAST(age AS INT) AS age FROM t")
    with pytest.raises(pa.ArrowException) as streamed:
        reader.read_all()
    with pytest.raises(af.Error) as collected:
        session.sql("SELECT CAST(age AS INT) AS age FROM t")
    for failure in (streamed, collected):
        message = str(failure.value)
        assert "Int32" in message and not any(m in message for m in markers), message
