"""The README's flow from Python, notebook style (one cell per step), as a plain script:

    python python/examples/readme_flow.py            # the 1,375,900-row NPS-like table
    python python/examples/readme_flow.py 100000     # a smaller one, for a quick look

Load the bundled data, anonymize with the h-ceiling method, read the catalog and the truthful
view, then measure what the release costs an analyst on Q1 through query_error. With
matplotlib installed, Q1's original counts and their estimates are plotted to q1.png.
"""

import sys
import tempfile
from pathlib import Path

import anonfusion as af

rows = int(sys.argv[1]) if len(sys.argv) > 1 else None

# %% A session: the command-line tool's SQL and table functions. This example keeps its
# privacy ledger in a scratch directory, not the user's.
scratch = Path(tempfile.mkdtemp(prefix="anonfusion-example-"))
s = af.Session(ledger=str(scratch / "ledger.tsv"))

# %% Load the synthetic NPS-like patients with their hierarchies and roles.
load = f"SELECT * FROM load_dataset('nps', {rows})" if rows else "SELECT * FROM load_dataset('nps')"
print(s.sql(load).to_pandas())
print(s.sql("SELECT * FROM anon_roles WHERE table_name = 'nps'").to_pandas())

# %% Anonymize: 10-anonymity under an h-ceiling of 0.2, counterfeits padding small classes.
print(s.sql("SELECT COUNT(*) AS released FROM hceil_anonymize('nps', 'nps_h', 10, 0.2, 'seed=1')").to_pandas())
print(s.sql("SELECT node, counterfeit_records, catalog_rows, lm, rce, classes FROM nps_h_report").to_pandas())

# %% The catalog that conceals the counterfeits, and the truthful view (only real records).
print(s.sql("SELECT * FROM nps_h_catalog LIMIT 5").to_pandas())
truthful = s.sql("SELECT * FROM truthful_view('nps_h', 'nps_h_catalog')").to_polars()
print(truthful.head())

# %% Q1 (male stroke patients without surgery per 5-year age group): original vs estimate.
Q1 = (
    "SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps "
    "WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5"
)
q1 = s.sql(
    f"SELECT group_key, original, estimate, rel_error FROM query_error('{Q1}', 'nps', 'nps_h', 'nps_h_catalog')"
).to_pandas()
print(q1)

# %% A plot, if matplotlib is there.
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib not installed: no plot")
else:
    groups = q1[q1["group_key"] != "SUMMARY"]
    ax = groups.plot(x="group_key", y=["original", "estimate"], kind="bar", figsize=(10, 4))
    ax.set_xlabel("age group")
    ax.set_ylabel("patients")
    ax.set_title("Q1 on the h-ceiled release")
    plt.tight_layout()
    plt.savefig("q1.png")
    print("wrote q1.png")
