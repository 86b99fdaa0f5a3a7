#!/usr/bin/env python3
"""A model of the pure DP histogram with the publication floor T (docs/dp.md), used to sweep
nodes and floors faster than the engine on a loaded machine (docs/results/ipa.md, "Where Q1's
error comes from"). It re-implements the release (every cell of the node's public domain gets
c + discrete Laplace, published iff >= T), IPA's IL (NCP over released records, EMD and Rate
per class) and query_error's estimate of Q1/Q2 (uniform over a generalized age band, ARE over
the original's groups) in plain Python; the engine's numbers are the reference, this only
ranks nodes. Python's random module: not a private release.

  anonfusion --format csv -c "SELECT COUNT(*) FROM load_dataset('nps')" \
    -c "SELECT FLOOR(age/5) AS a5, sex, FLOOR(length_of_stay/5) AS l5, location, surgery, disease,
        COUNT(*) AS n FROM nps GROUP BY 1,2,3,4,5,6" | tail -n +3 > nps5.csv
  python3 sql/experiments/ipa_floor_model.py nps5.csv 0.8 3 "3,0,5,0,0;1,0,5,2,0" 1,4
  (arguments: frequency table, epsilon of the counts, runs, nodes, floors)
"""
import csv, math, random, sys
from collections import defaultdict

REGION = {"Seoul": "Capital area", "Busan": "Yeongnam", "Daegu": "Yeongnam", "Incheon": "Capital area",
          "Gwangju": "Honam", "Daejeon": "Chungcheong", "Ulsan": "Yeongnam", "Gyeonggi": "Capital area",
          "Gangwon": "Gangwon", "Chungbuk": "Chungcheong", "Chungnam": "Chungcheong", "Jeonbuk": "Honam",
          "Jeonnam": "Honam", "Gyeongbuk": "Yeongnam", "Gyeongnam": "Yeongnam", "Jeju": "Jeju"}
LOCS = sorted(REGION)
REGS = sorted(set(REGION.values()))
REG_SIZE = {r: sum(1 for l in REGION if REGION[l] == r) for r in REGS}

rows = []  # (a5, sex, los5, loc, surg, dis, n)
diseases = set()
for r in csv.reader(open(sys.argv[1])):
    if r[0] == 'a5':
        continue
    a5, sex, l5, loc, surg, dis, n = int(float(r[0])), r[1], int(float(r[2])), r[3], r[4], r[5], int(r[6])
    rows.append((a5, sex, l5, loc, surg, dis, n))
    diseases.add(dis)
DIS = sorted(diseases)
W = 41  # declared domain
N = sum(r[6] for r in rows)

AGE_W = [None, 1, 2, 4, 20]   # 5y-bands per age node at level
LOS_W = [None, 1, 2, 6, 18, 72]  # 5d-bands per los node at level


def gen(node, r):
    a, s, l, lo, su = node
    a5, sex, l5, loc, surg, dis, n = r
    ka = a5 // AGE_W[a]
    ks = sex if s == 0 else '*'
    kl = l5 // LOS_W[l]
    kloc = loc if lo == 0 else (REGION[loc] if lo == 1 else '*')
    ksu = surg if su == 0 else '*'
    return (ka, ks, kl, kloc, ksu)


def ncp(node, key):
    a, s, l, lo, su = node
    ka, ks, kl, kloc, ksu = key
    v = AGE_W[a] * 5 / 100 if a < 4 else 1.0
    v += 0 if s == 0 else 1
    v += LOS_W[l] * 5 / 360 if l < 5 else 1.0
    v += 0 if lo == 0 else (1.0 if lo == 2 else (REG_SIZE[kloc] / 16 if REG_SIZE[kloc] > 1 else 0))
    v += 0 if su == 0 else 1
    return v / 5


def combos(node):
    a, s, l, lo, su = node
    na = 20 // AGE_W[a]
    ns = 2 if s == 0 else 1
    nl = 72 // LOS_W[l]
    nlo = [16, 6, 1][lo]
    nsu = 2 if su == 0 else 1
    return na * ns * nl * nlo * nsu


def all_keys(node):
    a, s, l, lo, su = node
    for ka in range(20 // AGE_W[a]):
        for ks in (['F', 'M'] if s == 0 else ['*']):
            for kl in range(72 // LOS_W[l]):
                for kloc in (LOCS if lo == 0 else (REGS if lo == 1 else ['*'])):
                    for ksu in (['N', 'Y'] if su == 0 else ['*']):
                        yield (ka, ks, kl, kloc, ksu)


def dlap(q, rng):
    lg = math.log(q)
    g1 = int(math.log(1 - rng.random()) / lg)
    g2 = int(math.log(1 - rng.random()) / lg)
    return g1 - g2


def tail_value(q, T, rng):
    # X conditioned on X >= T (T >= 1): T + geometric
    return T + int(math.log(1 - rng.random()) / math.log(q))


def release(node, eps_c, T, rng, real):
    q = math.exp(-eps_c)
    pT = q ** T / (1 + q)
    out = {}
    for key in all_keys(node):
        hist = real.get(key)
        rel = {}
        if hist:
            for d in DIS:
                c = hist.get(d, 0)
                if c > 0:
                    y = c + dlap(q, rng)
                    if y >= T:
                        rel[d] = y
            empties = [d for d in DIS if hist.get(d, 0) == 0] + [('x', i) for i in range(W - len(DIS))]
        else:
            empties = DIS + [('x', i) for i in range(W - len(DIS))]
        for d in empties:
            if rng.random() < pT:
                rel[d] = tail_value(q, T, rng)
        if rel:
            out[key] = rel
    return out


def il(node, real, out):
    keys = set(real) | set(out)
    ncp_sum, released_n = 0.0, 0
    emd = rate = 0.0
    for key in keys:
        h = real.get(key, {})
        r = out.get(key, {})
        n_r = sum(h.values())
        n_o = sum(r.values())
        ncp_sum += n_o * ncp(node, key)
        released_n += n_o
        cf = sum(max(0, r.get(d, 0) - h.get(d, 0)) for d in r)
        rate += cf / n_o if n_o else 0
        if n_r == 0 or n_o == 0:
            emd += 1
        else:
            ds = set(h) | set(r)
            emd += 0.5 * sum(abs(h.get(d, 0) / n_r - r.get(d, 0) / n_o) for d in ds)
    k = len(keys)
    return ncp_sum / max(released_n, 1), emd / k, rate / k


def q_are(node, out, sex, truth):
    a = node[0]
    est = defaultdict(float)
    for key, r in out.items():
        ka, ks, kl, kloc, ksu = key
        v = r.get('stroke', 0)
        if not v:
            continue
        p = 1.0
        if ks == '*':
            p *= 0.5
        elif ks != sex:
            continue
        if ksu == '*':
            p *= 0.5
        elif ksu != 'N':
            continue
        span = AGE_W[a]
        for g in range(ka * span, ka * span + span):
            est[g] += v * p / span
    errs = [abs(est[g] - c) / max(c, 1) for g, c in truth.items()]
    return sum(errs) / len(errs)


def main():
    eps = float(sys.argv[2]) if len(sys.argv) > 2 else 0.8
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    nodes = [tuple(int(x) for x in n.split(',')) for n in sys.argv[4].split(';')]
    Ts = [int(t) for t in sys.argv[5].split(',')]
    truth = {'M': defaultdict(int), 'F': defaultdict(int)}
    for a5, sex, l5, loc, surg, dis, n in rows:
        if dis == 'stroke' and surg == 'N':
            truth[sex][a5] += n
    for node in nodes:
        real = defaultdict(lambda: defaultdict(int))
        for r in rows:
            real[gen(node, r)][r[5]] += r[6]
        real = {k: dict(v) for k, v in real.items()}
        for T in Ts:
            acc = [0, 0, 0, 0, 0]
            for s in range(runs):
                rng = random.Random(s * 7919 + T)
                out = release(node, eps, T, rng, real)
                n_, e_, r_ = il(node, real, out)
                acc[0] += n_; acc[1] += e_; acc[2] += r_
                acc[3] += q_are(node, out, 'M', truth['M'])
                acc[4] += q_are(node, out, 'F', truth['F'])
            a = [x / runs for x in acc]
            print(f"node {node} T {T}: IL {a[0]+a[1]+a[2]:.3f} (NCP {a[0]:.3f} EMD {a[1]:.3f} Rate {a[2]:.3f}) Q1 {a[3]:.3f} Q2 {a[4]:.3f} combos {combos(node)} real classes {len(real)}", flush=True)


main()
