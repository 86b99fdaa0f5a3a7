"""The Python package as a user meets it: SQL in, Arrow / pandas / Polars out, frames in."""

import os
import signal
import threading

import anonfusion as af
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

# Ages and sexes of 40 patients: every (age band, sex) class holds at least 5 once ages are
# generalized to 10-year bands, so k = 5 is reachable.
AGES = [21, 23, 25, 27, 29, 31, 33, 35, 37, 39] * 4
SEXES = ["F"] * 20 + ["M"] * 20
DISEASES = ["flu", "asthma", "stroke", "diabetes"] * 10


def test_install_exposes_the_api():
    assert {"Session", "Relation", "Error"} <= set(af.__all__)
    assert issubclass(af.Error, Exception)


def test_sql_round_trip(session):
    rel = session.sql("SELECT 1 AS one, 'a' AS letter UNION ALL SELECT 2, 'b' ORDER BY one")
    assert rel.columns == ["one", "letter"]
    assert len(rel) == 2
    assert rel.to_arrow().to_pydict() == {"one": [1, 2], "letter": ["a", "b"]}
    assert "2 rows" in repr(rel)


def test_tables_persist_across_statements(session):
    session.sql("CREATE TABLE t AS SELECT * FROM (VALUES (1), (2), (3)) AS v(x)")
    assert session.sql("SELECT SUM(x) AS s FROM t").to_pandas()["s"].tolist() == [6]


def test_pycapsule_consumers_read_results(session):
    rel = session.sql("SELECT * FROM (VALUES (1, 'x'), (2, 'y')) AS v(n, s)")
    table = pa.table(rel)
    assert table.num_rows == 2 and table.column_names == ["n", "s"]
    assert pl.DataFrame(rel).shape == (2, 2)
    # Every export is a fresh stream over the same batches.
    assert pa.table(rel).equals(table)


def test_numeric_results_are_not_copied(session):
    rel = session.sql("SELECT CAST(value AS BIGINT) AS v FROM generate_series(1, 100000)")
    first = pa.table(rel).column("v").chunks[0].buffers()[1].address
    again = pa.table(rel).column("v").chunks[0].buffers()[1].address
    assert first == again, "each export should share the engine's buffer"


def test_register_pandas_frame(session):
    df = pd.DataFrame({"age": AGES, "sex": SEXES, "disease": DISEASES})
    session.register("patients", df)
    out = session.sql("SELECT sex, COUNT(*) AS n FROM patients GROUP BY sex ORDER BY sex").to_pandas()
    assert out.to_dict("list") == {"sex": ["F", "M"], "n": [20, 20]}


def test_register_polars_frame_and_pyarrow_table(session):
    session.register("p", pl.DataFrame({"age": AGES, "sex": SEXES}))
    session.register("a", pa.table({"age": AGES}))
    assert session.sql("SELECT COUNT(*) AS n FROM p JOIN a USING (age)").to_polars()["n"][0] == 160


def test_register_refuses_to_replace_a_table(session):
    session.register("patients", pa.table({"x": [1]}))
    with pytest.raises(af.Error, match="patients"):
        session.register("patients", pa.table({"x": [2]}))
    assert session.sql("SELECT x FROM patients").to_arrow().to_pydict() == {"x": [1]}


def test_register_rejects_what_is_not_a_table(session):
    with pytest.raises(TypeError, match="pandas or Polars DataFrame"):
        session.register("t", [1, 2, 3])


def anonymize_registered(session, frame):
    session.register("patients", frame)
    session.sql("SELECT * FROM declare_roles('patients', 'age=qi, sex=qi, disease=sensitive')")
    session.sql("SELECT * FROM interval_hierarchy('patients', 'age', '10,20,*', 0, 120)")
    session.register("sex_hierarchy", pa.table({"leaf": ["F", "M"], "top": ["*", "*"]}))
    session.sql("SELECT * FROM hierarchy_from_table('patients', 'sex', 'sex_hierarchy')")
    return session.sql("SELECT * FROM kanon_anonymize('patients', 'patients_k5', 5)")


@pytest.mark.parametrize("make", [pd.DataFrame, pl.DataFrame], ids=["pandas", "polars"])
def test_a_registered_frame_is_anonymized_and_read_back_as_pandas(session, make):
    anonymize_registered(session, make({"age": AGES, "sex": SEXES, "disease": DISEASES}))
    release = session.sql("SELECT * FROM patients_k5").to_pandas()
    assert len(release) == 40
    assert release.groupby(["age", "sex"]).size().min() >= 5
    verdict = session.sql("SELECT * FROM verify_release('patients', 'patients_k5', 'k=5')").to_pandas()
    assert verdict["holds"].all(), verdict


def test_hceil_release_catalog_and_truthful_view(session):
    session.sql("SELECT * FROM load_dataset('adult')")
    rel = session.sql("SELECT * FROM hceil_anonymize('adult', 'adult_h', 5, 0.3, 'seed=1')")
    release = session.sql("SELECT * FROM adult_h").to_pandas()
    assert len(release) == len(rel) and "class_id" in release.columns
    catalog = session.sql("SELECT * FROM adult_h_catalog").to_pandas()
    assert {"class_ids", "sensitive_value", "count"} <= set(catalog.columns)
    truthful = session.sql("SELECT * FROM truthful_view('adult_h', 'adult_h_catalog')").to_pandas()
    assert len(truthful) == 30162  # every real record of Adult, no counterfeit


def test_engine_errors_are_exceptions_with_the_engine_message(session):
    session.sql("SELECT * FROM load_dataset('adult')")
    with pytest.raises(af.Error) as caught:
        session.sql("SELECT * FROM hceil_anonymize('adult', 'adult_h', 0, 0.3)")
    message = str(caught.value)
    assert "hceil_anonymize" in message and "k" in message
    assert not message.startswith("External error")
    with pytest.raises(af.Error, match="no_such_table"):
        session.sql("SELECT * FROM no_such_table")
    # The failed call left nothing behind and the session goes on.
    assert session.sql("SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_name = 'adult_h'").to_arrow()[
        "n"
    ][0].as_py() == 0


def test_progress_bar_goes_to_python_stderr(tmp_path, capsys):
    session = af.Session(ledger=str(tmp_path / "ledger.tsv"))
    session.sql("SELECT * FROM load_dataset('adult')")
    session.sql("SELECT * FROM hceil_anonymize('adult', 'adult_h', 5, 0.3, 'seed=1')")
    assert "h-ceiling" in capsys.readouterr().err


def test_ctrl_c_interrupts_a_statement_and_the_session_goes_on(session):
    # A scan of ten billion rows does not end on its own within the test; SIGINT half a
    # second in is what stops it.
    interrupted(session, "SELECT COUNT(*) FROM generate_series(1, 10000000000) WHERE value % 7 = 3", 0.5)
    assert session.sql("SELECT 41 + 1 AS answer").to_arrow().to_pydict() == {"answer": [42]}


def test_ctrl_c_stops_a_search_and_registers_nothing(session):
    # A table function's search runs inside planning; Ctrl-C raises the session's cancel flag,
    # which the search reads at its next batch of nodes (the exhaustive h-ceiling search over
    # Adult takes seconds in a dev build). It must stop without registering its release.
    session.sql("SELECT COUNT(*) FROM load_dataset('adult')")
    interrupted(session, "SELECT COUNT(*) FROM hceil_anonymize('adult', 'adult_x', 5, NULL, 'search=exhaustive')", 0.3)
    # The next call waits for the interrupted search to stop, then finds no release.
    with pytest.raises(af.Error, match="adult_x"):
        session.sql("SELECT COUNT(*) FROM adult_x")
    assert session.sql("SELECT COUNT(*) AS n FROM adult").to_arrow().to_pydict() == {"n": [30162]}


def interrupted(session, sql, after):
    """Run `sql`, sending this process SIGINT (Ctrl-C) `after` seconds in; it must raise
    KeyboardInterrupt."""
    # A process that a non-interactive shell starts in the background (as a CI runner may start
    # the tests) inherits SIGINT as ignored, and Python then installs no KeyboardInterrupt
    # handler; a terminal or a notebook kernel has it. Install it for the test, as they do.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(after, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            session.sql(sql)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
