#!/usr/bin/env python3
"""Adult x10 for bench/arx/compare.sh: one CSV that ARX and anonfusion both read.

The construction of benches/kanon.rs's `adult_x10`: copy 0 is Adult; in copies 1-9 each age
moves by a fixed pattern of -2..=2 years (kept within 17-90) and, in every third record,
education, marital status and workclass are taken from another record, so the copies are
Adult-like but not replicas (replicas would make every class at least 10 records).

Usage: adult_x10.py data/adult/adult.csv OUT.csv   (ARX's format: ';', ARX's column names)
"""
import sys


def main(src, out):
    with open(src, encoding="utf-8") as f:
        lines = [l.rstrip("\r\n") for l in f if l.strip()]
    header = lines[0].split(";")
    rows = [l.split(";") for l in lines[1:]]
    n = len(rows)
    age = header.index("age")
    swapped = [header.index(c) for c in ("education", "marital-status", "workclass")]
    with open(out, "w", encoding="utf-8", newline="\n") as w:
        w.write(";".join(header) + "\n")
        for row in rows:
            w.write(";".join(row) + "\n")
        for copy in range(1, 10):
            for i, row in enumerate(rows):
                r = list(row)
                r[age] = str(min(90, max(17, int(row[age]) + (i * 7 + copy * 13) % 5 - 2)))
                donor = (i + copy * 7919) % n if (i * 31 + copy) % 3 == 0 else i
                for c in swapped:
                    r[c] = rows[donor][c]
                w.write(";".join(r) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
