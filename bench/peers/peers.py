#!/usr/bin/env python3
"""DP microdata peers (issue 23): SmartNoise Synth's MST and AIM against the engine's own DP
releases on the NPS-like table, Q1-Q4 scored by the engine's query_error over the original's
groups (one scorer for every release).

    python3 bench/peers/peers.py --engine target/debug/anonfusion      # everything
    python3 bench/peers/peers.py --engine ... --engine-only            # rerun only the engine's rows

Needs, for the peers, a Python with smartnoise-synth 1.0.8 (mbi 1.1) and pyarrow: see
bench/peers/README.md. The engine's rows need only the anonfusion binary.

Setup, as the issue describes it. The table is exported from the engine (load_dataset('nps'),
1,375,900 rows). Every column is coded against bounds fixed in advance, never read from the
data, so no privacy budget goes to preprocessing: age in 20 five-year bins (0-4 ... 95-99),
length_of_stay in the 22 bins of LOS_EDGES, sex, location, surgery and disease against the
dataset's declared category lists (src/datasets/nps.rs). epsilon = 1, delta = 1e-9. Each peer is
fitted by SmartNoise, then sampled i.i.d. from the fitted model (mbi's
synthetic_data(method="sample")): the default "round" sampler of mbi 1.1 draws every column
with uniforms ranked within the parent's group, which couples siblings that the model holds
independent. The synthetic rows are written as a generalized release (age label, age_lo,
age_hi, ...), which the engine's harness reads as uniform over each bin.

Output: a markdown table (mean +- sample standard deviation over runs of the ARE over the
original's groups; time per run; peak memory) and a JSON file of every run, so that
--engine-only can rewrite the table with fresh engine rows and the peers' rows kept.
"""

import argparse
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# Length of stay (days, 0-359): single days to 9, then 5-day bins to 29, 10-day bins to 59,
# 30-, 60- and 90-day bins: 22 bins, unions of the hierarchy's leaves, fixed in advance.
LOS_EDGES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60, 90, 120, 180, 270, 360]
AGE_EDGES = list(range(0, 101, 5))
SEX = ["M", "F"]
SURGERY = ["N", "Y"]
EPSILON, DELTA = 1.0, 1e-9
QUERIES = {f"Q{i}": os.path.join(REPO, "sql", f"q{i}.sql") for i in range(1, 5)}


def public_lists():
    """Locations and diseases as the dataset declares them (its source, not its rows)."""
    src = open(os.path.join(REPO, "src", "datasets", "nps.rs")).read()
    locations = re.findall(r'^\s*\("([A-Za-z]+)", "[A-Za-z ]+", [0-9.]+\),$', src, re.M)
    diseases = re.findall(r'^\s*d\("([a-z_]+)", "[a-z_]+",', src, re.M)
    if len(locations) != 16 or len(diseases) != 41:
        sys.exit(f"expected 16 locations and 41 diseases in nps.rs, found {len(locations)} and {len(diseases)}")
    return locations, diseases


def run_measured(cmd):
    """Run a command: (stdout, stderr, wall seconds). Peak memory comes from the child itself
    (peers) or from /usr/bin/time -v (engine)."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    elapsed = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd[:3])} ... failed ({p.returncode}):\n{err.decode()[-3000:]}")
    return out.decode(), err.decode(), elapsed


def engine(args, *statements, fmt="table"):
    """Run statements in one engine process under /usr/bin/time -v: (stdout, seconds, peak MB)."""
    cmd = ["/usr/bin/time", "-v", args.engine, "--format", fmt]
    for s in statements:
        cmd += ["-c", s]
    out, err, elapsed = run_measured(cmd)
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1)) / 1024
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([0-9.]+)", err).group(1)) for k in ("User", "System"))
    return out, elapsed, peak, cpu


def export_table(args):
    path = os.path.join(args.work, "nps.parquet")
    if not os.path.exists(path):
        engine(args, "SELECT COUNT(*) FROM load_dataset('nps')", f"COPY nps TO '{path}' STORED AS PARQUET")
    return path


# ---- peers (run in a child process: python peers.py --child mst SEED OUT) ----

def child(kind, seed, out_path, table_path):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    import resource
    from snsynth import Synthesizer
    from snsynth.transform import BinTransformer, TableTransformer

    locations, diseases = public_lists()
    t = pq.read_table(table_path).to_pandas()
    start = time.perf_counter()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_start = usage.ru_utime + usage.ru_stime
    np.random.seed(seed)
    lists = {"sex": SEX, "location": locations, "surgery": SURGERY, "disease": diseases}
    coded = {
        "age": np.searchsorted(AGE_EDGES, t["age"].to_numpy(), side="right") - 1,
        "length_of_stay": np.searchsorted(LOS_EDGES, t["length_of_stay"].to_numpy(), side="right") - 1,
    }
    for c, values in lists.items():
        index = {v: i for i, v in enumerate(values)}
        coded[c] = t[c].map(index).to_numpy()
    cols = ["age", "sex", "length_of_stay", "location", "surgery", "disease"]
    sizes = {"age": len(AGE_EDGES) - 1, "length_of_stay": len(LOS_EDGES) - 1, **{c: len(v) for c, v in lists.items()}}
    import pandas as pd

    df = pd.DataFrame({c: coded[c].astype(int) for c in cols})
    # Code i of a column with k public values: one bin of width 1 around i (bounds given, so
    # the transformer spends no budget and the domain is the public one, not the data's).
    transformer = TableTransformer([BinTransformer(bins=sizes[c], lower=-0.5, upper=sizes[c] - 0.5) for c in cols])
    synth = Synthesizer.create(kind, epsilon=EPSILON, delta=DELTA)
    synth.fit(df, transformer=transformer, preprocessor_eps=0.0)
    n = len(df)
    model = synth.synthesizer.synthetic_data(rows=n, method="sample")
    if kind == "mst":
        model = synth.undo_compress_fn(model)
    names = ["col" + str(i) for i in range(len(cols))]
    sample = {c: model.df[name].to_numpy() for c, name in zip(cols, names)}
    elapsed = time.perf_counter() - start
    release = {}
    for c, edges in [("age", AGE_EDGES), ("length_of_stay", LOS_EDGES)]:
        lo = np.asarray(edges[:-1])[sample[c]]
        hi = np.asarray(edges[1:])[sample[c]] - 1
        release[c] = [f"{a}-{b}" for a, b in zip(lo, hi)]
        release[c + "_lo"] = lo.astype("int64")
        release[c + "_hi"] = hi.astype("int64")
    for c, values in lists.items():
        release[c] = np.asarray(values, dtype=object)[sample[c]]
    pq.write_table(pa.table(release), out_path)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu_start
    print(json.dumps({"seconds": elapsed, "cpu_seconds": cpu, "peak_mb": usage.ru_maxrss / 1024}))


def run_peer(args, kind, seed, table_path):
    out = os.path.join(args.work, f"{kind}_{seed}.parquet")
    stdout, _, _ = run_measured([sys.executable, os.path.abspath(__file__), "--child", kind, str(seed), out, table_path])
    m = json.loads(stdout.strip().splitlines()[-1])
    return {"release": out, "seconds": m["seconds"], "cpu_seconds": m["cpu_seconds"], "peak_mb": m["peak_mb"]}


# ---- the engine's releases ----

ENGINE = {
    "ipa_approx": ("ipa_release, guarantee=approx (δ = 1e-9)", "ipa_release('nps', 'r', 1.0, 'guarantee=approx, seed={seed}')"),
    "ipa_pure": ("ipa_release, default (pure)", "ipa_release('nps', 'r', 1.0, 'seed={seed}')"),
    "dp_histogram": ("DP histogram at [2, 0, 5, 0, 0] (pure)", "dp_histogram('nps', 'r', 1.0, '2,0,5,0,0', 'seed={seed}')"),
}
NOT_DP = {
    "kanon": ("k-anonymity, k = 10 (not DP)", "kanon_anonymize('nps', 'r', 10)"),
    "hceil": ("h-ceiling, k = 10, h = 0.2 (not DP)", "hceil_anonymize('nps', 'r', 10, 0.2, 'seed={seed}')"),
}


def run_engine_release(args, call, seed, baseline):
    """One release in its own process; its time less `baseline` (wall, CPU) of generating the table."""
    out = os.path.join(args.work, f"engine_{abs(hash(call)) % 10**8}_{seed}.parquet")
    catalog = None
    statements = ["SELECT COUNT(*) FROM load_dataset('nps')", f"SELECT COUNT(*) FROM {call.format(seed=seed)}"]
    statements.append(f"COPY r TO '{out}' STORED AS PARQUET")
    if call.startswith("hceil"):
        catalog = out.replace(".parquet", "_catalog.parquet")
        statements.append(f"COPY r_catalog TO '{catalog}' STORED AS PARQUET")
    _, elapsed, peak, cpu = engine(args, *statements)
    return {
        "release": out,
        "catalog": catalog,
        "seconds": elapsed - baseline[0],
        "cpu_seconds": cpu - baseline[1],
        "peak_mb": peak,
    }


# ---- scoring: one engine process, query_error's SUMMARY rows ----

def score(args, runs):
    """Per run: the ARE over the original's groups of Q1-Q4, and the union ARE beside it."""
    # Strings read back from Parquet as plain Utf8, as the engine's own tables have them.
    statements = [
        "SET datafusion.execution.parquet.schema_force_view_types = false",
        "SELECT COUNT(*) FROM load_dataset('nps')",
    ]
    selects = []
    for i, r in enumerate(runs):
        statements.append(f"CREATE EXTERNAL TABLE rel_{i} STORED AS PARQUET LOCATION '{r['release']}'")
        cat = ""
        if r.get("catalog"):
            statements.append(f"CREATE EXTERNAL TABLE cat_{i} STORED AS PARQUET LOCATION '{r['catalog']}'")
            cat = f", 'cat_{i}'"
        for q, path in QUERIES.items():
            sql = "\n".join(l for l in open(path).read().splitlines() if not l.startswith("--")).strip().rstrip(";")
            sql = sql.replace("'", "''")
            selects.append(
                f"SELECT {i} AS run, '{q}' AS query, group_key, rel_error, groups FROM "
                f"query_error('{sql}', 'nps', 'rel_{i}'{cat}) WHERE group_key IN ('SUMMARY', 'SUMMARY union', 'SUMMARY spurious', 'SUMMARY missing')"
            )
    statements.append(" UNION ALL ".join(selects))
    out = engine(args, *statements, fmt="csv")[0]
    # The last result set is the scores: the rows after its header.
    text = out[out.rindex("run,query,group_key"):]
    for row in csv.DictReader(io.StringIO(text)):
        r = runs[int(row["run"])]
        key = {"SUMMARY": "are", "SUMMARY union": "union_are", "SUMMARY spurious": "spurious", "SUMMARY missing": "missing"}[row["group_key"]]
        value = row["rel_error"] if key.endswith("are") else row["groups"]
        r.setdefault(key, {})[row["query"]] = float(value) if value else None


# ---- the table ----

def fmt(values):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


def table(results):
    lines = [
        "| release | runs | Q1 | Q2 | Q3 | Q4 | union ARE Q1 / Q2 | spurious groups Q1–Q4 | time per run, wall (CPU) | peak memory |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, row in results.items():
        runs = row["runs"]
        are = [fmt([r["are"][q] for r in runs]) for q in QUERIES]
        union = " / ".join(fmt([r["union_are"][q] for r in runs]) for q in ("Q1", "Q2"))
        spurious = statistics.mean(sum(r["spurious"][q] for q in QUERIES) for r in runs)
        secs = statistics.mean(r["seconds"] for r in runs)
        cpu = statistics.mean(r["cpu_seconds"] for r in runs)
        peak = max(r["peak_mb"] for r in runs)
        lines.append(
            f"| {row['label']} | {len(runs)} | {' | '.join(are)} | {union} | {spurious:.1f} "
            f"| {secs:.1f} s ({cpu:.1f} s) | {peak / 1024:.2f} GB |"
        )
    return "\n".join(lines)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, seed, out, table_path = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
        return child(kind, seed, out, table_path)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", required=True, help="the anonfusion binary")
    p.add_argument("--work", default="/tmp/anonfusion-peers", help="directory for the exported table and releases")
    p.add_argument("--mst-runs", type=int, default=6)
    p.add_argument("--aim-runs", type=int, default=5)
    p.add_argument("--engine-runs", type=int, default=10, help="seeds 1..n of each engine DP release")
    p.add_argument("--engine-only", action="store_true", help="rerun the engine's rows, keep the peers' from --json")
    p.add_argument("--only", help="comma-separated rows to (re)compute, the others kept from --json ('' renders only)")
    p.add_argument("--first-seed", type=int, default=1, help="number runs (and seed numpy's sampling) from here")
    p.add_argument("--merge", nargs="*", default=[], help="JSON files of other calls whose runs join these rows")
    p.add_argument("--json", default=os.path.join(REPO, "docs", "results", "ipa_peers.json"))
    p.add_argument("--out", default="-", help="markdown table file ('-': standard output)")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    args.engine = os.path.abspath(args.engine)

    engine_rows = {**ENGINE, **NOT_DP}
    every = ["mst", "aim", *engine_rows]
    wanted = every if args.only is None else [k for k in args.only.split(",") if k]
    if args.engine_only:
        wanted = list(engine_rows)
    unknown = set(wanted) - set(every)
    if unknown:
        sys.exit(f"unknown rows {sorted(unknown)} (rows: {', '.join(every)})")
    results = json.load(open(args.json)) if os.path.exists(args.json) else {}
    # Runs made by other calls (e.g. more peer runs in parallel, --first-seed) join their rows.
    for other in args.merge:
        for key, row in json.load(open(other)).items():
            results.setdefault(key, {"label": row["label"], "runs": []})["runs"] += row["runs"]
    if args.merge:
        json.dump(results, open(args.json, "w"), indent=1)

    def save(key, label, runs):
        results[key] = {"label": label, "runs": runs}
        json.dump(results, open(args.json, "w"), indent=1)

    if wanted:
        table_path = export_table(args)
    for kind, n in (("mst", args.mst_runs), ("aim", args.aim_runs)):
        if kind in wanted and n > 0:
            seeds = range(args.first_seed, args.first_seed + n)
            runs = [run_peer(args, kind, seed, table_path) for seed in seeds]
            score(args, runs)
            save(kind, f"SmartNoise {kind.upper()} (ε = 1, δ = 1e-9)", runs)
    if any(k in engine_rows for k in wanted):
        # The time of an engine call: its process less generating the table (measured here).
        _, base_wall, _, base_cpu = engine(args, "SELECT COUNT(*) FROM load_dataset('nps')")
        for key in (k for k in engine_rows if k in wanted):
            label, call = engine_rows[key]
            seeds = range(args.first_seed, args.first_seed + (args.engine_runs if key in ENGINE else 1))
            runs = [run_engine_release(args, call, seed, (base_wall, base_cpu)) for seed in seeds]
            score(args, runs)
            save(key, label, runs)
    results = {k: results[k] for k in every if k in results}
    md = table(results)
    if args.out == "-":
        print(md)
    else:
        open(args.out, "w").write(md + "\n")


if __name__ == "__main__":
    main()
