#!/usr/bin/env python3
"""A vzero NNUE net in a real Fairy-Stockfish: its `eval` against `vzero nnue eval`.

By default the engine is scripts/fairy-stockfish (Fairy-Stockfish from the pyffish wheel) with
vzero's definitions (scripts/fsf/variants.ini); vzero/tests/fsf_engine.rs runs this on nets the
NNUE loop made, and it checks any other build the same way:

    .venv/bin/python scripts/fsf_nnue.py --variant empire --net empire-….nnue \
        [--fsf /path/to/fairy-stockfish --ini /path/to/variants.ini] [--positions 200]

Positions: seeded random games played with pyffish (from .venv; variants from
scripts/fsf/variants.ini), captures and promotions chosen more often than uniform (so that hands
and promoted pieces show up), one position taken every few plies, positions in check left out
(Fairy-Stockfish's `eval` prints no NNUE line there). For each, Fairy-Stockfish (with
`EvalFile` = the net, `Use NNUE` on) prints `NNUE evaluation +X.XX (white side)` and so does
`vzero nnue eval --fens` (the net read once); the lines must be equal. The last line counts them,
and the positions with pieces in hand and with promoted pieces. Exit status 0 when all are
equal, 1 otherwise (also when the engine exits, or nothing answers within --timeout seconds).
"""

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
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
            # captures, drops and promotions more often than uniform, so that hands, promoted
            # pieces and odd material show up
            r = rng.random()
            if r < 0.3:
                pick = [m for m in legal if "@" in m or sf.get_san(variant, fen, m).find("x") >= 0]
            elif r < 0.5:
                pick = [m for m in legal if m.endswith("+")]
            else:
                pick = []
            m = rng.choice(pick or legal)
            fen = sf.get_fen(variant, fen, [m])
            if ply % 5 == 4 and fen not in seen and not sf.gives_check(variant, fen, []) and sf.legal_moves(variant, fen, []):
                seen.add(fen)
                out.append(fen)
                if len(out) >= n:
                    break
    return out


def board(fen):
    """The board part of a FEN, without its hand."""
    return fen.split()[0].split("[")[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fsf", default=os.path.join(HERE, "fairy-stockfish"), help="Fairy-Stockfish (default: the pyffish launcher)")
    ap.add_argument("--ini", default=os.path.join(HERE, "fsf", "variants.ini"), help="variant definitions (default: vzero's)")
    ap.add_argument("--vzero", default=os.path.join(ROOT, "target", "release", "vzero"))
    ap.add_argument("--variant", required=True)
    ap.add_argument("--net", required=True, help=".nnue file (its name must start with the variant's)")
    ap.add_argument("--positions", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=5, help="mismatches to print")
    ap.add_argument("--timeout", type=int, default=600, help="seconds for the whole check")
    ap.add_argument("--arithmetic", default="ssse3", choices=["ssse3", "exact"],
                    help="vzero nnue eval's hidden-layer arithmetic: ssse3 for x86 builds with SSSE3, exact for scalar ones (the pyffish wheel)")
    a = ap.parse_args()
    net = os.path.abspath(a.net)
    if not os.path.basename(net).startswith(a.variant):
        sys.exit(f"fsf_nnue: {net}: Fairy-Stockfish loads a net only if its file name starts with the variant's name ({a.variant})")

    def too_long(*_):
        print(f"fsf_nnue: no result within {a.timeout} s", flush=True)
        os._exit(1)

    signal.signal(signal.SIGALRM, too_long)
    signal.alarm(a.timeout)
    t0 = time.time()
    fens = positions(a.variant, a.positions, a.seed)
    with tempfile.NamedTemporaryFile("w", suffix=".fens", delete=False) as f:
        f.write("\n".join(fens) + "\n")
    try:
        ours = subprocess.run([a.vzero, "nnue", "eval", "--net", net, "--variant", a.variant, "--arithmetic", a.arithmetic, "--fens", f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if ours.returncode != 0:
        sys.exit(f"fsf_nnue: vzero nnue eval failed: {ours.stderr.strip()}")
    mine = {}
    for line in ours.stdout.splitlines():
        fen, _, value = line.rpartition(": ")
        mine[fen] = " ".join(value.split())
    try:
        eng = Engine(a.fsf, a.ini, a.variant, net)
    except (RuntimeError, OSError) as e:
        sys.exit(f"fsf_nnue: {a.fsf} with EvalFile {net}: {e}")
    equal, missing, shown = 0, 0, 0
    for fen in fens:
        try:
            theirs = eng.nnue_line(fen)
        except (RuntimeError, OSError) as e:
            sys.exit(f"fsf_nnue: {a.fsf} on {fen}: {e}")
        if theirs is None:
            missing += 1
            if shown < a.show:
                print(f"no NNUE line from Fairy-Stockfish for {fen} (did it load the net?)")
                shown += 1
        elif theirs == mine.get(fen):
            equal += 1
        elif shown < a.show:
            print(f"MISMATCH {fen}\n  fairy-stockfish: {theirs}\n  vzero:           {mine.get(fen)}")
            shown += 1
    eng.close()
    n = len(fens)
    hands = sum(1 for fen in fens if "[" in fen.split()[0] and fen.split()[0].split("[")[1].rstrip("]"))
    # promoted pieces other than the start position's promoted fers (shogun's queens)
    promoted = sum(1 for fen in fens if any(x[:1] not in "fF" for x in board(fen).split("+")[1:]))
    print(
        f"fsf_nnue: {a.variant}, {os.path.basename(net)}: {equal}/{n} positions with the same `NNUE evaluation` line "
        f"({missing} without one from Fairy-Stockfish; {hands} with pieces in hand, {promoted} with promoted pieces) in {time.time() - t0:.0f} s"
    )
    sys.exit(0 if equal == n and n > 0 else 1)


if __name__ == "__main__":
    main()
