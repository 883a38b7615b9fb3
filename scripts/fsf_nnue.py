#!/usr/bin/env python3
"""A vzero NNUE net in a real Fairy-Stockfish: its `eval` against `vzero nnue eval`.

Fairy-Stockfish cannot run in the tests or CI (its binary is not there), so this is the by-hand
check of docs/nnue.md: build Fairy-Stockfish with largeboards=yes, then

    .venv/bin/python scripts/fsf_nnue.py --fsf /path/to/fairy-stockfish \
        --ini /path/to/Fairy-Stockfish/src/variants.ini --variant empire --net empire-….nnue

Positions: seeded random games played with pyffish (from .venv; variants from
scripts/fsf/variants.ini), one position taken every few plies, positions in check left out
(Fairy-Stockfish's `eval` prints no NNUE line there). For each, Fairy-Stockfish (with
`EvalFile` = the net) prints `NNUE evaluation +X.XX (white side)` and so does
`vzero nnue eval`; the lines must be equal. Exit status 0 when all are, 1 otherwise.
"""

import argparse
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class Engine:
    """A Fairy-Stockfish process driven over UCI."""

    def __init__(self, path, ini, variant, net):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("uci")
        self.wait("uciok")
        self.send(f"setoption name VariantPath value {ini}")
        self.send(f"setoption name UCI_Variant value {variant}")
        self.send(f"setoption name EvalFile value {net}")
        self.send("setoption name Use NNUE value true")
        self.sync()

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def wait(self, token):
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"Fairy-Stockfish exited; last lines: {lines[-5:]}")
            line = line.rstrip("\n")
            lines.append(line)
            if line.startswith(token):
                return lines

    def sync(self):
        self.send("isready")
        return self.wait("readyok")

    def nnue_line(self, fen):
        self.send(f"position fen {fen}")
        self.send("eval")
        lines = self.sync()
        for line in lines:
            if line.startswith("NNUE evaluation"):
                return " ".join(line.split())
        return None

    def close(self):
        try:
            self.send("quit")
            self.p.wait(timeout=5)
        except Exception:
            self.p.kill()


def positions(variant, n, seed):
    """n distinct FENs (side to move not in check) from seeded random games."""
    import pyffish as sf

    with open(os.path.join(HERE, "fsf", "variants.ini")) as f:
        sf.load_variant_config(f.read())
    rng = random.Random(seed)
    start = sf.start_fen(variant)
    out, seen = [], set()
    while len(out) < n:
        fen, moves = start, []
        for ply in range(rng.randrange(4, 120)):
            legal = sf.legal_moves(variant, fen, [])
            if not legal:
                break
            # captures and drops more often than uniform, so that hands and odd material show up
            caps = [m for m in legal if "@" in m or sf.get_san(variant, fen, m).find("x") >= 0] if rng.random() < 0.3 else []
            m = rng.choice(caps or legal)
            fen = sf.get_fen(variant, fen, [m])
            if ply % 5 == 4 and fen not in seen and not sf.gives_check(variant, fen, []) and sf.legal_moves(variant, fen, []):
                seen.add(fen)
                out.append(fen)
                if len(out) >= n:
                    break
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fsf", required=True, help="Fairy-Stockfish binary (built with largeboards=yes)")
    ap.add_argument("--ini", required=True, help="its src/variants.ini")
    ap.add_argument("--vzero", default=os.path.join(ROOT, "target", "release", "vzero"))
    ap.add_argument("--variant", required=True)
    ap.add_argument("--net", required=True, help=".nnue file (its name must start with the variant's)")
    ap.add_argument("--positions", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=5, help="mismatches to print")
    a = ap.parse_args()
    net = os.path.abspath(a.net)
    if not os.path.basename(net).startswith(a.variant):
        sys.exit(f"fsf_nnue: {net}: Fairy-Stockfish loads a net only if its file name starts with the variant's name ({a.variant})")
    t0 = time.time()
    fens = positions(a.variant, a.positions, a.seed)
    eng = Engine(a.fsf, a.ini, a.variant, net)
    equal, missing, shown = 0, 0, 0
    for fen in fens:
        theirs = eng.nnue_line(fen)
        ours = subprocess.run([a.vzero, "nnue", "eval", "--net", net, "--variant", a.variant, "--fen", fen], capture_output=True, text=True)
        if ours.returncode != 0:
            sys.exit(f"fsf_nnue: vzero nnue eval failed on {fen}: {ours.stderr.strip()}")
        mine = " ".join(ours.stdout.splitlines()[0].split())
        if theirs is None:
            missing += 1
            if shown < a.show:
                print(f"no NNUE line from Fairy-Stockfish for {fen} (did it load the net?)")
                shown += 1
        elif theirs == mine:
            equal += 1
        elif shown < a.show:
            print(f"MISMATCH {fen}\n  fairy-stockfish: {theirs}\n  vzero:           {mine}")
            shown += 1
    eng.close()
    n = len(fens)
    print(f"fsf_nnue: {a.variant}, {os.path.basename(net)}: {equal}/{n} positions with the same `NNUE evaluation` line ({missing} without one from Fairy-Stockfish) in {time.time() - t0:.0f} s")
    sys.exit(0 if equal == n else 1)


if __name__ == "__main__":
    main()
