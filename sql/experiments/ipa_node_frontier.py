#!/usr/bin/env python3
"""Tables of docs/results/ipa.md ("Every node") from sql/experiments/ipa_node_model.rs's output:
the nodes meeting IL <= 0.30, Q1 < 0.29 and Q2 < 0.33 (k-anonymity's ARE), the Pareto frontier of
IL against the worse of Q1/0.29 and Q2/0.33, and Figs. 8-10 for the sound mode (expected NCP,
EMD, Rate by lattice height).

  ./ipa_node_model fine.csv 0.8 4 10 > eps08_T4.tsv
  python3 sql/experiments/ipa_node_frontier.py eps08_T4.tsv [more.tsv ...]

T is a floor, or (hierarchical releases) the model's `hier:...` setting.
"""
import csv
import sys
from collections import defaultdict

NUM = ['NCP', 'EMD', 'Rate', 'IL', 'Q1', 'Q2', 'Q1_gen', 'Q2_gen', 'Q1_no_cf', 'Q2_no_cf', 'classes']
IL_TARGET, Q1_KANON, Q2_KANON = 0.30, 0.29, 0.33


def load(paths):
    rows = []
    for p in paths:
        for r in csv.DictReader(open(p), delimiter='\t'):
            for k in NUM:
                r[k] = float(r[k])
            r['levels'] = [int(x) for x in r['node'].strip('[]').split(',')]
            r['file'] = p
            rows.append(r)
    return rows


def worse(r):
    return max(r['Q1'] / Q1_KANON, r['Q2'] / Q2_KANON)


def fmt(r):
    return (f"| {r['node']} | {r['T']} | {r['classes']:.0f} | {r['NCP']:.3f} | {r['EMD']:.3f} | {r['Rate']:.3f} | "
            f"{r['IL']:.3f} | {r['Q1']:.3f} | {r['Q2']:.3f} | {r['Q1_gen']:.3f} / {r['Q2_gen']:.3f} | "
            f"{r['Q1_no_cf']:.3f} / {r['Q2_no_cf']:.3f} |")


def main():
    rows = load(sys.argv[1:])
    header = ("| node | T | classes | NCP | EMD | Rate | IL | Q1 | Q2 | Q1 / Q2 generalization alone | "
              "Q1 / Q2 without counterfeits of empty cells |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"{len(rows)} (node, floor) settings from {', '.join(sys.argv[1:])}")
    meet = [r for r in rows if r['IL'] <= IL_TARGET and r['Q1'] < Q1_KANON and r['Q2'] < Q2_KANON]
    print(f"\nmeeting IL <= {IL_TARGET}, Q1 < {Q1_KANON}, Q2 < {Q2_KANON}: {len(meet)}")
    for r in meet:
        print(fmt(r))
    print(f"\nIL <= {IL_TARGET}: {len([r for r in rows if r['IL'] <= IL_TARGET])}; "
          f"Q1 and Q2 below k-anonymity: {len([r for r in rows if worse(r) < 1])}; "
          f"NCP alone <= {IL_TARGET} and generalization alone below k-anonymity on both: "
          f"{len([r for r in rows if r['NCP'] <= IL_TARGET and r['Q1_gen'] < Q1_KANON and r['Q2_gen'] < Q2_KANON])}")
    print("\nPareto frontier: IL against max(Q1/0.29, Q2/0.33)\n" + header)
    front = []
    for r in sorted(rows, key=lambda r: (r['IL'], worse(r))):
        if not front or worse(r) < worse(front[-1]):
            front.append(r)
    for r in front:
        print(fmt(r))
    print("\nFigs. 8-10 for the sound mode: expected parts by height (mean over the nodes of each height)")
    print("| height | nodes | NCP | EMD | Rate | IL | best IL (node) | Q1 | Q2 |\n|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    by = defaultdict(list)
    for r in rows:
        by[(r['T'], sum(r['levels']))].append(r)
    for (t, h), rs in sorted(by.items(), key=lambda x: (int(x[0][0]) if x[0][0].isdigit() else 0, x[0][0], x[0][1])):
        m = lambda k: sum(r[k] for r in rs) / len(rs)
        best = min(rs, key=lambda r: r['IL'])
        print(f"| {h} | {len(rs)} | {m('NCP'):.3f} | {m('EMD'):.3f} | {m('Rate'):.3f} | {m('IL'):.3f} | "
              f"{best['IL']:.3f} ({best['node']}) | {m('Q1'):.3f} | {m('Q2'):.3f} |" + (f" T = {t}" if len(set(r['T'] for r in rows)) > 1 else ""))


main()
