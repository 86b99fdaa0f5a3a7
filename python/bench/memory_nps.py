"""Peak memory of registering and anonymizing the NPS-like table from pandas, against the
command-line tool doing the same anonymization (issue 20: under 2x the CLI's peak RSS).

    python python/bench/memory_nps.py prepare DIR ANONFUSION   # the table as Parquet + ARX files
    /usr/bin/time -v python python/bench/memory_nps.py run DIR   # what is measured (Python)
    /usr/bin/time -v ANONFUSION -c "SELECT COUNT(*) FROM load_dataset('nps')" \
        -c "SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 10, 0.2, 'seed=1')"   # the CLI

Same build profile for both (the ratio means little otherwise). `run` reads the table into
pandas (the user's frame), registers it, declares the same roles and hierarchies that
load_dataset('nps') declares, and runs the same hceil_anonymize call.
"""

import subprocess
import sys
from pathlib import Path

QIS = {"age": "numeric", "sex": "categorical", "length_of_stay": "numeric", "location": "categorical",
       "surgery": "categorical"}
HCEIL = "SELECT COUNT(*) AS released FROM hceil_anonymize('nps', 'nps_h', 10, 0.2, 'seed=1')"


def prepare(out: Path, anonfusion: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    statements = ["SELECT COUNT(*) FROM load_dataset('nps')", f"COPY nps TO '{out / 'nps.parquet'}'"]
    for column in QIS:
        statements.append(
            f"COPY (SELECT * FROM hierarchy('nps', '{column}')) TO '{out / column}.csv' "
            "STORED AS CSV OPTIONS (has_header false, delimiter ';')"
        )
    subprocess.run([anonfusion, *(arg for s in statements for arg in ("-c", s))], check=True)


def run(data: Path) -> None:
    import pandas as pd

    import anonfusion as af

    frame = pd.read_parquet(data / "nps.parquet")
    s = af.Session(ledger=str(data / "ledger.tsv"), progress=False)
    s.register("nps", frame)
    roles = ", ".join(f"{c}=qi" for c in QIS) + ", disease=sensitive"
    s.sql(f"SELECT * FROM declare_roles('nps', '{roles}')")
    for column, kind in QIS.items():
        s.sql(f"SELECT * FROM load_hierarchy('nps', '{column}', '{data / column}.csv', '{kind}')")
    print(s.sql(HCEIL).to_pandas())


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(Path(sys.argv[2]), sys.argv[3])
    else:
        run(Path(sys.argv[2]))
