#!/usr/bin/env python3
"""DP microdata peers (issues 23 and 33): SmartNoise Synth's MST and AIM against the engine's
own releases, every release scored by the engine: the two-way-marginal score
(metric_value(..., 'two_way_marginal'), issue 33) on every dataset, and on the NPS-like table
also Q1-Q4 by query_error over the original's groups (one scorer for every release).

    python3 bench/peers/peers.py --engine target/debug/anonfusion                  # NPS, eps = 1
    python3 bench/peers/peers.py --engine ... --dataset adult --epsilons 0.5,1,2   # Adult
    python3 bench/peers/peers.py --engine ... --engine-only                        # only the engine's rows

Needs, for the peers, a Python with smartnoise-synth 1.0.8 (mbi 1.1) and pyarrow: see
bench/peers/README.md. The engine's rows need only the anonfusion binary.

Setup, as the issues describe it. The table is exported from the engine (load_dataset). Every
column is coded against bounds fixed in advance, never read from the data, so no privacy
budget goes to preprocessing: on the NPS-like table (1,375,900 rows) age in 20 five-year bins,
length_of_stay in the 22 bins of LOS_EDGES, sex, location, surgery and disease against the
dataset's declared category lists (src/datasets/nps.rs); on Adult (30,162 rows; its 7
quasi-identifiers and occupation) age in the bins of its declared hierarchy's first level
(5-year bands), every other column against its declared hierarchy's leaves
(data/adult/adult_hierarchy_*.csv). delta = 1e-9. Each peer is fitted by SmartNoise, then
sampled i.i.d. from the fitted model (mbi's synthetic_data(method="sample")): the default
"round" sampler of mbi 1.1 draws every column with uniforms ranked within the parent's group,
which couples siblings that the model holds independent. The synthetic rows are written as a
generalized release (age label, age_lo, age_hi, ...), which the engine's harness reads as
uniform over each bin.

Output: a markdown table (mean +- sample standard deviation over runs; time per run; peak
memory) and a JSON file of every run, so that --engine-only can rewrite the table with fresh
engine rows and the peers' rows kept.
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
DELTA = 1e-9
QUERIES = {f"Q{i}": os.path.join(REPO, "sql", f"q{i}.sql") for i in range(1, 5)}
ADULT_COLUMNS = ["age", "sex", "race", "marital_status", "education", "native_country", "workclass", "occupation"]


def edge_bins(edges):
    """Bins [lo, hi] (inclusive) with labels from ascending edges."""
    return [(a, b - 1, f"{a}-{b - 1}") for a, b in zip(edges[:-1], edges[1:])]


def adult_hierarchy(column):
    """Rows of the declared ARX hierarchy of an Adult column (public: shipped with the engine)."""
    path = os.path.join(REPO, "data", "adult", f"adult_hierarchy_{column.replace('_', '-')}.csv")
    return [line.rstrip("\r\n").split(";") for line in open(path) if line.strip()]


def level_bins(rows):
    """Numeric bins from a hierarchy's first level: (lowest leaf, highest leaf, label) per node."""
    bins = {}
    for row in rows:
        leaf = int(row[0])
        lo, hi = bins.get(row[1], (leaf, leaf))
        bins[row[1]] = (min(lo, leaf), max(hi, leaf))
    return sorted(((lo, hi, label) for label, (lo, hi) in bins.items()), key=lambda b: b[0])


def coding(dataset):
    """(columns, numeric bins by column, categorical value lists by column): public, declared."""
    if dataset == "nps":
        locations, diseases = public_lists()
        cols = ["age", "sex", "length_of_stay", "location", "surgery", "disease"]
        numeric = {"age": edge_bins(AGE_EDGES), "length_of_stay": edge_bins(LOS_EDGES)}
        lists = {"sex": SEX, "location": locations, "surgery": SURGERY, "disease": diseases}
        return cols, numeric, lists
    numeric = {"age": level_bins(adult_hierarchy("age"))}
    lists = {c: [row[0] for row in adult_hierarchy(c)] for c in ADULT_COLUMNS if c != "age"}
    return ADULT_COLUMNS, numeric, lists


def public_lists():
    """Locations and diseases as the dataset declares them (its source, not its rows)."""
    src = open(os.path.join(REPO, "src", "datasets", "nps.rs")).read()
    locations = re.findall(r'^\s*\("([A-Za-z]+)", "[A-Za-z ]+", [0-9.]+\),$', src, re.M)
    diseases = re.findall(r'^\s*Disease\("([a-z_]+)", "[a-z_]+",', src, re.M)
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
    path = os.path.join(args.work, f"{args.dataset}.parquet")
    if not os.path.exists(path):
        d = args.dataset
        engine(args, f"SELECT COUNT(*) FROM load_dataset('{d}')", f"COPY {d} TO '{path}' STORED AS PARQUET")
    return path


# ---- peers (run in a child process: python peers.py --child mst SEED OUT) ----

def child(kind, seed, out_path, table_path, dataset, epsilon):
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    import resource
    from snsynth import Synthesizer
    from snsynth.transform import BinTransformer, TableTransformer

    cols, numeric, lists = coding(dataset)
    t = pq.read_table(table_path).to_pandas()
    start = time.perf_counter()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_start = usage.ru_utime + usage.ru_stime
    np.random.seed(seed)
    coded, sizes = {}, {}
    for c, bins in numeric.items():
        lows = np.asarray([b[0] for b in bins])
        coded[c] = np.searchsorted(lows, t[c].to_numpy(), side="right") - 1
        sizes[c] = len(bins)
    for c, values in lists.items():
        index = {v: i for i, v in enumerate(values)}
        coded[c] = t[c].map(index).to_numpy()
        sizes[c] = len(values)
    df = pd.DataFrame({c: coded[c].astype(int) for c in cols})
    # Code i of a column with k public values: one bin of width 1 around i (bounds given, so
    # the transformer spends no budget and the domain is the public one, not the data's).
    transformer = TableTransformer([BinTransformer(bins=sizes[c], lower=-0.5, upper=sizes[c] - 0.5) for c in cols])
    synth = Synthesizer.create(kind, epsilon=epsilon, delta=DELTA)
    synth.fit(df, transformer=transformer, preprocessor_eps=0.0)
    n = len(df)
    model = synth.synthesizer.synthetic_data(rows=n, method="sample")
    if kind == "mst":
        model = synth.undo_compress_fn(model)
    names = ["col" + str(i) for i in range(len(cols))]
    sample = {c: model.df[name].to_numpy() for c, name in zip(cols, names)}
    elapsed = time.perf_counter() - start
    release = {}
    for c, bins in numeric.items():
        release[c] = np.asarray([b[2] for b in bins], dtype=object)[sample[c]]
        release[c + "_lo"] = np.asarray([b[0] for b in bins])[sample[c]].astype("int64")
        release[c + "_hi"] = np.asarray([b[1] for b in bins])[sample[c]].astype("int64")
    for c, values in lists.items():
        release[c] = np.asarray(values, dtype=object)[sample[c]]
    pq.write_table(pa.table(release), out_path)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu_start
    print(json.dumps({"seconds": elapsed, "cpu_seconds": cpu, "peak_mb": usage.ru_maxrss / 1024}))


def run_peer(args, kind, seed, table_path, epsilon):
    out = os.path.join(args.work, f"{args.dataset}_{kind}_{epsilon}_{seed}.parquet")
    child_args = [kind, str(seed), out, table_path, args.dataset, str(epsilon)]
    stdout, _, _ = run_measured([sys.executable, os.path.abspath(__file__), "--child", *child_args])
    m = json.loads(stdout.strip().splitlines()[-1])
    return {"release": out, "seconds": m["seconds"], "cpu_seconds": m["cpu_seconds"], "peak_mb": m["peak_mb"]}


# ---- the engine's releases ----

# Label and call of each engine release; {t} the table, {eps} epsilon, {seed} the seed.
NODES = {"nps": "2,0,5,0,0", "adult": "4,0,0,1,3,2,2"}  # k-anonymity's node at k = 10
# The h-ceiling: on Adult no node within h = 0.2 conceals its counterfeits (at most 10 %).
H = {"nps": "0.2", "adult": "0.3"}
ENGINE = {
    "ipa_approx": ("ipa_release, guarantee=approx (δ = 1e-9)", "ipa_release('{t}', 'r', {eps}, 'guarantee=approx, seed={seed}')"),
    "ipa_pure": ("ipa_release, default (pure)", "ipa_release('{t}', 'r', {eps}, 'seed={seed}')"),
    "dp_histogram": ("DP histogram at k-anonymity's node (pure)", "dp_histogram('{t}', 'r', {eps}, '{node}', 'seed={seed}')"),
    "dp_synthesize": ("dp_synthesize (issue 33)", "dp_synthesize('{t}', 'r', {eps}, '{synth}seed={seed}')"),
}
NOT_DP = {
    "kanon": ("k-anonymity, k = 10 (not DP)", "kanon_anonymize('{t}', 'r', 10)"),
    "hceil": ("h-ceiling, k = 10, h = {h} (not DP)", "hceil_anonymize('{t}', 'r', 10, {h}, 'seed={seed}')"),
}


def engine_functions(args):
    """The table functions this engine binary has (\\df), so rows of newer functions are skipped
    by older binaries rather than failing the run."""
    out = engine(args, "\\df")[0]
    return set(re.findall(r"^([a-z_]+): ", out, re.M))


def run_engine_release(args, call, seed, baseline):
    """One release in its own process; its time less `baseline` (wall, CPU) of generating the table."""
    out = os.path.join(args.work, f"engine_{abs(hash(call)) % 10**8}_{seed}.parquet")
    catalog = None
    statements = [
        f"SELECT COUNT(*) FROM load_dataset('{args.dataset}')",
        # Seeds make runs reproducible; a seeded DP release says it is not private.
        "SET anonfusion.seeded_dp = true",
        f"SELECT COUNT(*) FROM {call.format(seed=seed)}",
    ]
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
    """Per run: the two-way-marginal score, and on the NPS-like table the ARE over the
    original's groups of Q1-Q4 with the union ARE beside it."""
    d = args.dataset
    # Strings read back from Parquet as plain Utf8, as the engine's own tables have them.
    statements = [
        "SET datafusion.execution.parquet.schema_force_view_types = false",
        f"SELECT COUNT(*) FROM load_dataset('{d}')",
    ]
    selects = []
    for i, r in enumerate(runs):
        statements.append(f"CREATE EXTERNAL TABLE rel_{i} STORED AS PARQUET LOCATION '{r['release']}'")
        cat = ""
        if r.get("catalog"):
            statements.append(f"CREATE EXTERNAL TABLE cat_{i} STORED AS PARQUET LOCATION '{r['catalog']}'")
            cat = f", 'cat_{i}'"
        catalog_arg = cat or ", ''"
        selects.append(
            f"SELECT {i} AS run, 'marginal' AS query, 'two_way_marginal' AS group_key, value AS rel_error, "
            f"0 AS groups FROM metric_value('{d}', 'rel_{i}', 'two_way_marginal'{catalog_arg})"
        )
        for q, path in (QUERIES.items() if d == "nps" else []):
            sql = "\n".join(l for l in open(path).read().splitlines() if not l.startswith("--")).strip().rstrip(";")
            sql = sql.replace("'", "''")
            selects.append(
                f"SELECT {i} AS run, '{q}' AS query, group_key, rel_error, groups FROM "
                f"query_error('{sql}', '{d}', 'rel_{i}'{cat}) WHERE group_key IN ('SUMMARY', 'SUMMARY union', 'SUMMARY spurious', 'SUMMARY missing')"
            )
    statements.append(" UNION ALL ".join(selects))
    out = engine(args, *statements, fmt="csv")[0]
    # The last result set is the scores: the rows after its header.
    text = out[out.rindex("run,query,group_key"):]
    keys = {"SUMMARY": "are", "SUMMARY union": "union_are", "SUMMARY spurious": "spurious", "SUMMARY missing": "missing"}
    for row in csv.DictReader(io.StringIO(text)):
        r = runs[int(row["run"])]
        if row["group_key"] == "two_way_marginal":
            r["two_way_marginal"] = float(row["rel_error"])
            continue
        key = keys[row["group_key"]]
        value = row["rel_error"] if key.endswith("are") else row["groups"]
        r.setdefault(key, {})[row["query"]] = float(value) if value else None


# ---- the table ----

def fmt(values, digits=2):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{statistics.mean(values):.{digits}f} ± {statistics.stdev(values):.{digits}f}"


def table(results, dataset):
    queries = list(QUERIES) if dataset == "nps" else []
    head = ["release", "ε", "runs", "2-way marginal (0–1000)", *queries]
    if queries:
        head += ["union ARE Q1 / Q2", "spurious groups Q1–Q4"]
    head += ["time per run, wall (CPU)", "peak memory"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, row in results.items():
        runs = row["runs"]
        cells = [row["label"], row.get("epsilon", "–"), str(len(runs)), fmt([r.get("two_way_marginal") for r in runs], 1)]
        cells += [fmt([r.get("are", {}).get(q) for r in runs]) for q in queries]
        if queries:
            cells.append(" / ".join(fmt([r.get("union_are", {}).get(q) for r in runs]) for q in ("Q1", "Q2")))
            cells.append(f"{statistics.mean(sum(r.get('spurious', {}).get(q) or 0 for q in QUERIES) for r in runs):.1f}")
        secs = statistics.mean(r["seconds"] for r in runs)
        cpu = statistics.mean(r["cpu_seconds"] for r in runs)
        peak = max(r["peak_mb"] for r in runs)
        cells += [f"{secs:.1f} s ({cpu:.1f} s)", f"{peak / 1024:.2f} GB"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, seed, out, table_path, dataset, epsilon = sys.argv[2:8]
        return child(kind, int(seed), out, table_path, dataset, float(epsilon))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", required=True, help="the anonfusion binary")
    p.add_argument("--dataset", choices=["nps", "adult"], default="nps")
    p.add_argument("--epsilons", default="1", help="comma-separated epsilons of the DP rows (e.g. 0.5,1,2)")
    p.add_argument("--work", default="/tmp/anonfusion-peers", help="directory for the exported table and releases")
    p.add_argument("--mst-runs", type=int, default=6)
    p.add_argument("--aim-runs", type=int, default=5)
    p.add_argument("--engine-runs", type=int, default=10, help="seeds 1..n of each engine DP release")
    p.add_argument("--engine-only", action="store_true", help="rerun the engine's rows, keep the peers' from --json")
    p.add_argument("--synth-options", default="", help="options of the dp_synthesize row (e.g. 'triples=0')")
    p.add_argument("--only", help="comma-separated rows to (re)compute, the others kept from --json ('' renders only)")
    p.add_argument("--first-seed", type=int, default=1, help="number runs (and seed numpy's sampling) from here")
    p.add_argument("--merge", nargs="*", default=[], help="JSON files of other calls whose runs join these rows")
    p.add_argument("--json", help="every run's numbers (default docs/results/peers_<dataset>.json)")
    p.add_argument("--out", default="-", help="markdown table file ('-': standard output)")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    args.engine = os.path.abspath(args.engine)
    args.json = args.json or os.path.join(REPO, "docs", "results", f"peers_{args.dataset}.json")
    epsilons = [float(e) for e in args.epsilons.split(",") if e.strip()]

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
            results.setdefault(key, {**row, "runs": []})["runs"] += row["runs"]
    if args.merge:
        json.dump(results, open(args.json, "w"), indent=1)

    def save(key, label, epsilon, runs):
        results[key] = {"label": label, "epsilon": epsilon, "runs": runs}
        json.dump(results, open(args.json, "w"), indent=1)

    def eps_text(e):
        return f"{e:g}"

    if wanted:
        table_path = export_table(args)
    for kind, n in (("mst", args.mst_runs), ("aim", args.aim_runs)):
        if kind in wanted and n > 0:
            for eps in epsilons:
                seeds = range(args.first_seed, args.first_seed + n)
                runs = [run_peer(args, kind, seed, table_path, eps) for seed in seeds]
                score(args, runs)
                save(f"{kind}@{eps_text(eps)}", f"SmartNoise {kind.upper()} (δ = 1e-9)", eps_text(eps), runs)
    if any(k in engine_rows for k in wanted):
        have = engine_functions(args)
        # The time of an engine call: its process less generating the table (measured here).
        _, base_wall, _, base_cpu = engine(args, f"SELECT COUNT(*) FROM load_dataset('{args.dataset}')")
        for key in (k for k in engine_rows if k in wanted):
            label, call = engine_rows[key]
            if call.split("(")[0] not in have:
                print(f"skipped {key}: this engine has no {call.split('(')[0]}", file=sys.stderr)
                continue
            for eps in epsilons if key in ENGINE else [None]:
                seeds = range(args.first_seed, args.first_seed + (args.engine_runs if key in ENGINE else 1))
                call_e = call.replace("{t}", args.dataset).replace("{node}", NODES[args.dataset])
                call_e, label = call_e.replace("{h}", H[args.dataset]), label.replace("{h}", H[args.dataset])
                call_e = call_e.replace("{eps}", str(eps)).replace("{synth}", f"{args.synth_options}, " if args.synth_options else "")
                if key == "dp_synthesize" and args.synth_options:
                    label = f"{label}, {args.synth_options}"
                runs = [run_engine_release(args, call_e, seed, (base_wall, base_cpu)) for seed in seeds]
                score(args, runs)
                save(f"{key}@{eps_text(eps)}" if eps else key, label, eps_text(eps) if eps else "–", runs)
    order = {k: i for i, k in enumerate(every)}
    results = dict(sorted(results.items(), key=lambda kv: (order.get(kv[0].split("@")[0], 99), kv[0])))
    md = table(results, args.dataset)
    if args.out == "-":
        print(md)
    else:
        open(args.out, "w").write(md + "\n")


if __name__ == "__main__":
    main()
