#!/usr/bin/env python3
"""The two halves of bench/arx/compare.sh that are easier in Python than in the shell.

  compare.py sql ADULT_X10_CSV WARMUPS RUNS > ours.sql
      our side of one round: one session that loads the tables once, then for every
      configuration WARMUPS untimed and RUNS timed `kanon_anonymize` statements under `\\timing`
      (wall and process CPU, every thread), each followed by its node and nodes checked.
  compare.py table OUT_DIR
      the markdown table from OUT_DIR/arx_*.csv (ArxKanon's lines) and OUT_DIR/ours_*.log.

Before each statement a hierarchy of the source is declared again (untimed): the session's
frequency-table cache keys on the hierarchy objects, so every timed statement aggregates its
source as ARX's `anonymize()` encodes its data on every call.
"""
import csv
import glob
import os
import statistics
import sys

QI7 = ["age", "sex", "race", "marital_status", "education", "native_country", "workclass"]
HIER = "data/adult/adult_hierarchy_{}.csv"

# name, table, k, options, description: the rows of docs/kanon.md's table (the order of
# ArxKanon.CONFIGS).
CONFIGS = [
    ("adult7_k5", "adult", 5, "", "Adult, 7 QIs, k=5, 0 %"),
    ("adult7_k5_supp2", "adult", 5, "suppression=2%", "Adult, 7 QIs, k=5, 2 %"),
    ("adult7_k5_l3_supp2", "adult", 5, "suppression=2%, distinct_l=3", "+ distinct 3-diversity, 2 %"),
    ("adult7_k5_t0.15_supp2", "adult", 5, "suppression=2%, t=0.15", "+ t = 0.15 (equal distance), 2 %"),
    ("adult7_k10", "adult", 10, "", "Adult, 7 QIs, k=10, 0 %"),
    ("adult7x10_k5", "adult_x10", 5, "", "Adult x10, 7 QIs, k=5, 0 %"),
    ("adult9_k5", "adult9", 5, "", "Adult, 9 QIs, k=5, 0 %"),
    ("adult9x10_k5", "adult9_x10", 5, "", "Adult x10, 9 QIs, k=5, 0 %"),
]


def hierarchy_file(column):
    return HIER.format(column.replace("_", "-"))


def declare(table, qis):
    """Roles and ARX's hierarchy files for a table read from a CSV."""
    roles = [q + "=qi" for q in qis] + ([] if "occupation" in qis else ["occupation=sensitive"])
    sql = [f"SELECT COUNT(*) FROM declare_roles('{table}', '{', '.join(roles)}')"]
    for column in qis + (["occupation"] if "occupation" not in qis else []):
        sql.append(f"SELECT COUNT(*) FROM load_hierarchy('{table}', '{column}', '{hierarchy_file(column)}')")
    return sql


def our_sql(x10_csv, warmups, runs):
    qi9 = QI7 + ["occupation", "salary_class"]
    # Columns in the order of ARX's quasi-identifiers (age first), the order of our report's node.
    columns = 'CAST(age AS BIGINT) AS age, sex, race, "marital-status" AS marital_status, education, ' \
        '"native-country" AS native_country, workclass, occupation, "salary-class" AS salary_class'
    sql = [
        "SELECT COUNT(*) FROM load_dataset('adult')",
        f"CREATE TABLE adult9 AS SELECT {columns.replace(chr(34), '').replace('-', '_')} FROM adult",
        f"CREATE EXTERNAL TABLE x10_csv STORED AS CSV LOCATION '{x10_csv}' "
        "OPTIONS ('format.delimiter' ';', 'format.has_header' 'true')",
    ]
    sql += declare("adult9", qi9)
    for table, qis in (("adult_x10", QI7), ("adult9_x10", qi9)):
        sql.append(f"CREATE TABLE {table} AS SELECT {columns} FROM x10_csv")
        sql += declare(table, qis)
    lines = [s + ";" for s in sql]
    for name, table, k, options, _ in CONFIGS:
        for run in range(-warmups, runs):
            lines.append(f"SELECT COUNT(*) FROM load_hierarchy('{table}', 'sex', '{hierarchy_file('sex')}');")
            lines.append(f"SELECT 'run,{name},{run}' AS marker;")
            lines.append("\\timing")
            lines.append(f"SELECT COUNT(*) FROM kanon_anonymize('{table}', 'out', {k}, '{options}');")
            lines.append("\\timing")
            lines.append("SELECT 'node,' || node || ',' || CAST(nodes_evaluated AS VARCHAR) || ',' || "
                         "CAST(aggregate_ms AS VARCHAR) || ',' || CAST(search_ms AS VARCHAR) || ',' || "
                         "CAST(materialize_ms AS VARCHAR) || ',' || CAST(time_ms AS VARCHAR) AS node FROM out_report;")
            lines.append("DROP TABLE out;")
            lines.append("DROP TABLE out_report;")
    return "\n".join(lines) + "\n"


def parse_ours(path):
    """(config, run) -> (cpu ms, wall ms, node, checked, and the report's aggregate_ms, search_ms,
    materialize_ms, time_ms) from one session's output."""
    out, current = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip().strip('"')  # CSV output quotes a value with commas
            if line.startswith("run,"):
                _, name, run = line.split(",")
                current = (name, int(run))
            elif line.startswith("Time: ") and current:
                wall, cpu = line[len("Time: "):].removesuffix(" ms").split(" ms, CPU ")
                out[current] = [float(cpu), float(wall)]
            elif line.startswith("node,") and current:
                _, rest = line.split(",", 1)
                node, checked, *passes = rest.rsplit(",", 5)
                out[current] += [node.strip('"'), int(checked)] + [float(p) for p in passes]
                current = None
    return out


def table(out_dir):
    arx, ours = {}, {}
    for path in sorted(glob.glob(os.path.join(out_dir, "arx_*.csv"))):
        with open(path, encoding="utf-8") as f:
            for name, _run, cpu, wall, node, checked in csv.reader(f):
                arx.setdefault(name, []).append((float(cpu), float(wall), node, int(checked)))
    for path in sorted(glob.glob(os.path.join(out_dir, "ours_*.log"))):
        for (name, run), v in parse_ours(path).items():
            if run >= 0:
                ours.setdefault(name, []).append(tuple(v))
    print("| configuration | ARX thread CPU ms | our statement CPU ms | our wall ms | CPU ours / ARX | "
          "report: aggregate / search / materialize / time ms | ARX node (checked) | our node (checked) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, _table, _k, _options, description in CONFIGS:
        a, o = arx.get(name, []), ours.get(name, [])
        if not a or not o:
            print(f"| {description} | missing | | | | | | |")
            continue
        a_cpu = statistics.median(x[0] for x in a)
        o_cpu = statistics.median(x[0] for x in o)
        o_wall = statistics.median(x[1] for x in o)
        passes = " / ".join(f"{statistics.median(x[i] for x in o):.1f}" for i in range(4, 8))
        a_nodes = {(x[2], x[3]) for x in a}
        o_nodes = {(x[2], x[3]) for x in o}
        same = {n for n, _ in a_nodes} == {n for n, _ in o_nodes}
        print(f"| {description} | {a_cpu:.1f} | {o_cpu:.1f} | {o_wall:.1f} | {o_cpu / a_cpu:.2f} | {passes} | "
              f"{fmt_nodes(a_nodes)} | {fmt_nodes(o_nodes)}{'' if same else ' **differs**'} |")
    print(f"\nMedians over {len(next(iter(arx.values()), []))} ARX and {len(next(iter(ours.values()), []))} "
          "of our timed runs per configuration.")


def fmt_nodes(nodes):
    return " / ".join(f"{n} ({c})" for n, c in sorted(nodes))


if __name__ == "__main__":
    if sys.argv[1] == "sql":
        sys.stdout.write(our_sql(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    else:
        table(sys.argv[2])
