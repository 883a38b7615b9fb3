#!/usr/bin/env python3
"""Checks a Fairy-Stockfish engine's perft against the oracle (../shared/oracle/*-perft.csv).

A Fairy-Stockfish (the pyffish launcher scripts/fairy-stockfish, or a native build with
largeboards=yes) must count the same moves as the one the oracle was made with; scripts/test.sh
runs this on the launcher at every run, and it is the first step with any other build:

    python3 scripts/fsf_perft.py [--fsf scripts/fairy-stockfish] [--ini scripts/fsf/variants.ini] \
        [--variant empire --variant shogun] [--max-nodes 2000000]

Prints one line per variant (rows checked, rows equal) and every mismatch; exit status 0 when
every checked row is equal, 1 otherwise (also when the engine exits early).
"""

import argparse
import csv
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fsf", default=os.path.join(ROOT, "scripts", "fairy-stockfish"), help="the engine (default: the pyffish launcher)")
    ap.add_argument("--ini", default=os.path.join(ROOT, "scripts", "fsf", "variants.ini"), help="variant definitions (default: vzero's)")
    ap.add_argument("--variant", action="append", help="empire and/or shogun (default both)")
    ap.add_argument("--oracle", default=os.path.join(ROOT, "..", "shared", "oracle"))
    ap.add_argument("--max-nodes", type=int, default=2_000_000, help="skip rows with more nodes")
    a = ap.parse_args()
    bad = 0
    for variant in a.variant or ["empire", "shogun"]:
        rows = [r for r in csv.DictReader(open(os.path.join(a.oracle, f"{variant}-perft.csv"))) if int(r["nodes"]) <= a.max_nodes]
        p = subprocess.Popen([a.fsf], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        send = lambda s: p.stdin.write(s + "\n")
        send(f"setoption name VariantPath value {a.ini}")
        send(f"setoption name UCI_Variant value {variant}")
        equal = 0
        for r in rows:
            send(f"position fen {r['fen']}")
            send(f"go perft {r['depth']}")
            got = None
            for line in p.stdout:
                if line.startswith("Nodes searched:"):
                    got = int(line.split(":")[1])
                    break
            if got is None:
                print(f"fsf_perft: {a.fsf} exited (status {p.wait()}) during {variant} depth {r['depth']} {r['fen']}")
                sys.exit(1)
            if got == int(r["nodes"]):
                equal += 1
            else:
                bad += 1
                print(f"MISMATCH {variant} depth {r['depth']} {r['fen']}: oracle {r['nodes']}, engine {got}")
        send("quit")
        p.wait()
        print(f"{variant}: {equal}/{len(rows)} perft rows equal (rows up to {a.max_nodes} nodes)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
