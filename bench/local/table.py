"""The markdown table of bench/local/compare.sh: one row per release and k, from the engine's
measures ($OUT/measures.csv) and ARX's own figures for its releases ($OUT/arx_k*.txt)."""
import csv
import sys

out = sys.argv[1]
NAMES = {
    "arx": "ARX 3.9.2 local recoding (optimizeIterativeFast)",
    "lr": "`local=recoding`",
    "it": "`local=iterative`",
}


def name(release):
    kind = release.split("_")[0]
    if kind.startswith("ls"):
        return f"`local=suppression, suppression={kind[2:]}%`"
    return NAMES[kind]


def arx(k):
    figures = dict(line.strip().split(",", 1) for line in open(f"{out}/arx_k{k}.txt") if "," in line)
    # ARX's quality statistics are 1 - normalized loss (1 = nothing lost).
    return f"ARX's own: loss {1 - float(figures['granularity']):.4f}, {int(float(figures['ms'])):,} ms"


rows = list(csv.DictReader(open(f"{out}/measures.csv")))
print("| k | release | records suppressed | cells at `*` | classes | LM | two-way marginal | W1 ARE | verify_release k | note |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    note = arx(r["k"]) if r["release"].startswith("arx") else ""
    holds = "holds" if r["k_holds"].lower() == "true" else "FAILS"
    print(
        f"| {r['k']} | {name(r['release'])} | {int(r['suppressed_records']):,} | {int(r['star_cells']):,} | "
        f"{int(r['classes']):,} | {float(r['lm']):.4f} | {float(r['two_way_marginal']):.1f} | "
        f"{float(r['w1_are']):.4f} | {holds} | {note} |"
    )

bounds = next(csv.DictReader(open(f"{out}/age_bounds.csv")))
print()
print(f"Age labels both ARX's and the engine's recoding releases use: {bounds['labels']}, "
      f"with different bounds: {bounds['differ']}.")
