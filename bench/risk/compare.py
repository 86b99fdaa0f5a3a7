"""Side-by-side table of risk_report and ARX 3.9.2 (bench/risk/compare.sh writes the inputs).

ARX reports a model without an estimate as 0; risk_report as NaN ("no estimate" in its
detail). Both are shown as "none" and count as agreeing; any other pair differs by |ours - ARX|.
"""
import csv
import glob
import math
import os
import sys

out = sys.argv[1]
ours, arx, model = {}, {}, {}
for path in glob.glob(os.path.join(out, "ours_*.csv")):
    with open(path) as f:
        for r in csv.DictReader(f):
            ours[(r["data"], int(r["population"]), r["measure"])] = float(r["value"])
for path in glob.glob(os.path.join(out, "arx_*.csv")):
    with open(path) as f:
        for data, population, measure, value in csv.reader(f):
            if measure == "dankar_model":
                model[(data, int(population))] = value
            else:
                arx[(data, int(population), measure)] = float(value)

def show(v):
    return "none" if math.isnan(v) else f"{v:.9g}"

def agree(a, b):
    if math.isnan(a) and (math.isnan(b) or b == 0.0):
        return 0.0
    return abs(a - b)

releases = ["adult", "kanon_k5", "hceil_k5", "kanon_k5_s2"]
populations = sorted({p for (_, p, _) in arx}, reverse=True)
measures = [m for (d, p, m) in sorted(arx, key=lambda k: list(arx).index(k)) if d == "adult" and p == populations[0]]
worst = 0.0
print("| measure | population | " + " | ".join(f"{r} ours | {r} ARX" for r in releases) + " |")
print("|---|---|" + "---|---|" * len(releases))
for m in measures:
    for p in populations:
        cells = []
        for r in releases:
            a, b = ours[(r, p, m)], arx[(r, p, m)]
            worst = max(worst, agree(a, b))
            cells += [show(a), show(b)]
        print(f"| {m} | {p} | " + " | ".join(cells) + " |")
print()
print("Dankar's choice (ARX): " + ", ".join(f"{r} at {p}: {model[(r, p)]}" for r in releases for p in populations))
print()
print(f"Largest |ours - ARX| over every number: {worst:.3g}")
