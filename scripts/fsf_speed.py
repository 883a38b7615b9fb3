#!/usr/bin/env python3
"""Fairy-Stockfish engines' search speed, side by side: nodes/s and their ratio.

    .venv/bin/python scripts/fsf_speed.py [--fsf OTHER ...] [--nodes 400000] [--rounds 5]
    scripts/bench.sh fsf --fsf /path/to/Fairy-Stockfish/src/stockfish

The first engine is scripts/fairy-stockfish (the pyffish wheel's engine), then each --fsf. Each
searches `go nodes N` (one thread, default hash) from the start position of empire and shogun
with vzero's definitions (scripts/fsf/variants.ini), in rounds that alternate the engines, a
fresh `ucinewgame` each time. Prints, per variant and engine, the nodes searched (equal nodes:
the same search) and the median nodes/s of the rounds, and each engine's median ratio to the
first (paired by round).
"""

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


class Engine:
    """A Fairy-Stockfish process driven over UCI."""

    def __init__(self, path, ini):
        self.path = path
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("uci")
        self.name = next(l[len("id name "):] for l in self.until("uciok") if l.startswith("id name "))
        self.send(f"setoption name VariantPath value {ini}")

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def until(self, token):
        lines = []
        for line in self.p.stdout:
            line = line.rstrip("\n")
            lines.append(line)
            if line.startswith(token):
                return lines
        sys.exit(f"fsf_speed: {self.path} exited; last lines: {lines[-5:]}")

    def search(self, variant, nodes):
        """(nodes searched, nodes/s) of one `go nodes` from the start position."""
        self.send(f"setoption name UCI_Variant value {variant}")
        self.send("ucinewgame")
        self.send("position startpos")
        self.send("isready")
        self.until("readyok")
        self.send(f"go nodes {nodes}")
        last = None
        for line in self.until("bestmove"):
            t = line.split()
            if t[:1] == ["info"] and "nps" in t and "nodes" in t:
                last = (int(t[t.index("nodes") + 1]), int(t[t.index("nps") + 1]))
        return last

    def close(self):
        self.send("quit")
        self.p.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fsf", action="append", default=[], help="another engine (repeatable)")
    ap.add_argument("--ini", default=os.path.join(HERE, "fsf", "variants.ini"))
    ap.add_argument("--nodes", type=int, default=400_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--variant", action="append", help="empire and/or shogun (default both)")
    a = ap.parse_args()
    engines = [Engine(p, a.ini) for p in [os.path.join(HERE, "fairy-stockfish")] + a.fsf]
    for variant in a.variant or ["empire", "shogun"]:
        runs = [[e.search(variant, a.nodes) for e in engines] for _ in range(a.rounds)]
        print(f"{variant}: go nodes {a.nodes} from the start position, {a.rounds} rounds")
        for i, e in enumerate(engines):
            nodes = sorted({r[i][0] for r in runs})
            nps = statistics.median(r[i][1] for r in runs)
            ratio = statistics.median(r[i][1] / r[0][1] for r in runs)
            print(f"  {e.name:32} {e.path}: {'/'.join(map(str, nodes))} nodes, median {nps:,.0f} nodes/s, {ratio:.2f}x the first")
    for e in engines:
        e.close()


if __name__ == "__main__":
    main()
