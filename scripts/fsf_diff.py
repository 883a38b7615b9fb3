#!/usr/bin/env python3
"""Rules differential test: vzero's empire and shogun against Fairy-Stockfish's own code.

Plays seeded, biased random games with pyffish (Fairy-Stockfish's Python binding; the variants
come from scripts/fsf/variants.ini, written for vzero from its rules), replays each game with
`vzero replay` and compares, position by position, what both say:

* the FEN (exact string);
* the legal moves (sorted: the order is no rule);
* whether the side to move is in check;
* the game result and its reason (campmate, fifty-move, repetition, checkmate, stalemate, or
  ongoing), with the history of the game for repetition;
* the SAN of the move played from the position (FSF's NOTATION_SAN, explicitly: pyffish's
  default notation depends on variantTemplate, a GUI key that the ini leaves out).

The games, per variant: --games seeded random games from the start position, each with one
move-choice policy in turn (uniform; tactical: captures and promotions; attack: checks and
mates, found by asking FSF; pawnrace: pawn and soldier pushes; enpassant; kingwalk-w/-b: one
king marches to the far rank (campmate), the other side keeps to its half; shuffle: pieces moved
back and forth (repetition); quiet: no captures, pawn moves or drops (the fifty-move rule);
drops); then 40 plies of random play from each distinct FEN of ../shared/oracle/*-perft.csv;
then the games of ../shared/oracle/*-results.csv and the SCRIPTED games below, move by move.

Then it checks that every rules feature it is meant to exercise was exercised (drops,
promotions, campmate, repetition, checks and mates, castling, en passant, ...): the count of
positions of each must be > 0, so the test fails if a change of the move choice makes coverage
vanish. Exit status 0 when all agree, 1 on any mismatch or missing coverage, 2 on a setup error.

How FSF's answers are read (these are the normalisations; each is notational, none a rule):

* pyffish rebuilds the position from its arguments on every call and re-initialises its piece
  tables (~2-5 ms a call), so positions are chained by FEN: FSF's FEN after each move is
  `get_fen(fen_before, [move])`, and the legal moves, check and immediate end are asked of that
  FEN. Only repetition needs the history: `is_optional_game_end` gets the game's start FEN and
  all moves since. The FEN holds all other state (castling, en passant, hands, promoted pieces).
* Results: FSF's search order is immediate end (campmate; FSF's legal move list is then empty),
  then optional end (`is_optional_game_end`: the n-move rule, then n-fold repetition), then
  `game_result` when there is no legal move (checkmate when in check, else stalemate). Values
  are from the side to move's point of view: < 0 loss, 0 draw, > 0 win. Which optional end it
  was: the n-move rule if `is_optional_game_end` says so for the FEN alone (no history, so no
  repetition), else repetition.
* `is_optional_game_end` (with history) is asked at every position where it could be true: the
  halfmove clock is at least 99, there is no legal move, or the position (board with hands,
  side, castling, en passant: the FEN's first four fields) occurred before in the game. It is
  also asked at every 16th position whatever (an audit of that filter), together with
  `gives_check` and `has_insufficient_material` (which must say (False, False): neither
  variant has an insufficient-material rule in FSF or vzero).
* Check at the other positions: FSF's SAN of the move that led there ends in `+` or `#`
  exactly when the move gives check (`gives_check` at the start position and the audits).
* Legal moves are compared as sorted lists (duplicates would show).

Usage: scripts/fsf_diff.py [--vzero target/release/vzero] [--games N] [--seed S] [--jobs J]
       [--variant empire --variant shogun] [--ini FILE] [--show N] [--verbose]
Run it with the Python of .venv (scripts/setup.sh installs pyffish there): scripts/test.sh does.
"""

import argparse
import collections
import json
import multiprocessing
import os
import random
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INI = os.path.join(ROOT, "scripts", "fsf", "variants.ini")
ORACLE = os.path.join(ROOT, "..", "shared", "oracle")
PYFFISH_VERSION = (0, 0, 90)
AUDIT_EVERY = 16

# The start positions of vzero's definitions (configs/variants/*.toml).
VZERO_START = {
    "empire": "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET w kq - 0 1",
    "shogun": "rnb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBNR[] w KQkq - 0 1",
}

# Games played move by move, for rules that random play hardly reaches: (what, FEN, moves).
SCRIPTED = {
    "empire": [],
    "shogun": [
        # The start position comes back twice through captures and drops (the halfmove clock is
        # reset all along): repetition looks at the whole game in a drop variant.
        ("repetition across captures and drops", "4k3/8/5n2/3p4/4P3/2N5/8/4K3[] w - - 0 1",
         "c3d5 f6e4 d5c3 e4f6 P@e4 P@d5 c3d5 f6e4 d5c3 e4f6 P@e4 P@d5".split()),
    ],
}

# Features that must be exercised (count of positions > 0) per variant.
REQUIRED = {
    "empire": ["check", "checkmate", "stalemate", "campmate", "campmate by white", "campmate by black",
               "repetition (ended)", "repetition (2-fold, going on)", "fifty-move", "promotion played",
               "castling played", "en passant available", "en passant played", "kings on one line",
               "soldier on the last rank", "SAN disambiguation", "SAN with #"],
    "shogun": ["check", "checkmate", "repetition (ended)", "repetition (2-fold, going on)", "fifty-move",
               "drop played", "pawn drop played", "drop gives check", "promotion played",
               "pawn promotion played", "promoted piece on the board", "castling played",
               "en passant available", "en passant played", "king on the last rank (no campmate)",
               "SAN disambiguation", "SAN with #"],
}
# ... and by the fixed games (the oracle's results rows and SCRIPTED).
REQUIRED_FIXED = {"empire": [], "shogun": ["repetition across a capture or drop"]}


# ---------------------------------------------------------------------------------------------
# FEN and move helpers (8x8 only; used for the move choice and feature counts, never compared)

def board_of(fen):
    """{square: piece} of a FEN's board ('P', '+f', ...)."""
    part = fen.split(" ")[0].split("[")[0]
    board = {}
    for r, row in enumerate(part.split("/")):
        rank = 8 - r
        f = 0
        promoted = False
        for ch in row:
            if ch.isdigit():
                f += int(ch)
            elif ch == "+":
                promoted = True
            else:
                board["abcdefgh"[f] + str(rank)] = ("+" if promoted else "") + ch
                promoted = False
                f += 1
    return board


def key_of(fen):
    """The FEN without its clocks: what repetition compares."""
    return " ".join(fen.split(" ")[:4])


def white(piece):
    return piece.lstrip("+").isupper()


class MoveInfo:
    __slots__ = ("drop", "frm", "to", "piece", "capture", "promotion", "pawn", "king", "castle", "ep",
                 "reversible", "rel_advance")

    def __init__(self, m, board, stm_white):
        self.drop = "@" in m
        if self.drop:
            self.frm, self.to, self.piece = None, m[2:4], m[0]
            self.capture = self.promotion = self.pawn = self.king = self.castle = self.ep = False
            self.reversible = False
            self.rel_advance = 0
            return
        self.frm, self.to = m[0:2], m[2:4]
        self.piece = board.get(self.frm, "?")
        self.pawn = self.piece in ("P", "p")
        self.king = self.piece in ("K", "k")
        target = board.get(self.to)
        self.ep = self.pawn and self.frm[0] != self.to[0] and target is None
        self.capture = (target is not None and white(target) != stm_white) or self.ep
        self.promotion = len(m) > 4
        self.castle = self.king and abs(ord(self.frm[0]) - ord(self.to[0])) == 2
        self.reversible = not (self.capture or self.pawn or self.promotion or self.castle)
        d = int(self.to[1]) - int(self.frm[1])
        self.rel_advance = d if stm_white else -d


def reverse(m):
    return m[2:4] + m[0:2]


# ---------------------------------------------------------------------------------------------
# Move choice: biased random policies, so that each rules feature comes up

def weighted(rng, moves, weights):
    total = sum(weights)
    if total <= 0:
        return rng.choice(moves)
    x = rng.random() * total
    for m, w in zip(moves, weights):
        x -= w
        if x < 0:
            return m
    return moves[-1]


def passive(rng, legal, infos, own_last, stm_white):
    """A quiet move that stays in the mover's own half (no captures, pawn moves, drops, promotions,
    contact or, mostly, checks), and not straight back when avoidable."""
    ws = []
    for m, i in zip(legal, infos):
        home = i.reversible and (int(i.to[1]) <= 4 if stm_white else int(i.to[1]) >= 5)
        w = 1.0 if home else 0.001 if i.reversible else 0.00001
        if own_last and m == reverse(own_last):
            w *= 0.05
        ws.append(w)
    return weighted(rng, legal, ws)


def choose(fsf, policy, rng, legal, fen, history, ply):
    board = board_of(fen)
    stm_white = fen.split(" ")[1] == "w"
    infos = [MoveInfo(m, board, stm_white) for m in legal]
    own_last = history[-2] if len(history) >= 2 else None
    # castling and en passant are rare in random play: every biased policy takes them when it can
    special = [m for m, i in zip(legal, infos) if i.castle or i.ep]
    if policy != "uniform" and special and rng.random() < 0.7:
        return rng.choice(special)
    if policy == "uniform":
        return rng.choice(legal)
    if policy == "tactical":
        return weighted(rng, legal, [8 if i.promotion else 6 if i.capture else 2 if i.drop else 1 for i in infos])
    if policy == "pawnrace":
        # pawn (and empire soldier) pushes: double steps, promotions, soldiers on the last rank
        return weighted(rng, legal, [12 if i.piece == "S" and i.rel_advance > 0
                                     else 8 if i.pawn and not i.capture and i.rel_advance > 0
                                     else 6 if i.promotion else 1 for i in infos])
    if policy == "attack":
        # checks and mates: a few moves closing in on the enemy king (or capturing) are asked of
        # FSF whether they give check, and whether they mate
        theirs = [sq for sq, p in board.items() if p == ("k" if stm_white else "K")]

        def near(i):
            t = theirs[0] if theirs else None
            return t and not i.king and not i.drop and max(abs(ord(i.to[0]) - ord(t[0])), abs(int(i.to[1]) - int(t[1]))) <= 2
        cands = [m for m, i in zip(legal, infos) if near(i) or i.capture or (i.drop and rng.random() < 0.2)]
        rng.shuffle(cands)
        checks = [m for m in cands[:5] if fsf.gives_check(fsf.v, fen, [m])]
        for m in checks[:2]:
            if not fsf.legal_moves(fsf.v, fen, [m]):
                return m
        if checks and rng.random() < 0.6:
            return rng.choice(checks)
        return weighted(rng, legal, [4 if i.capture else 1 for i in infos])
    if policy == "enpassant":
        # empire: White's pawns march to rank 5, Black's double step beside them
        if stm_white:
            return weighted(rng, legal, [10 if i.pawn and not i.capture and int(i.to[1]) <= 5 else 1 for i in infos])
        beside = [m for m, i in zip(legal, infos) if i.pawn and i.rel_advance == 2
                  and any(board.get(f + "5") == "P" for f in (chr(ord(i.to[0]) - 1), chr(ord(i.to[0]) + 1)))]
        if beside and rng.random() < 0.9:
            return rng.choice(beside)
        return passive(rng, legal, infos, own_last, stm_white)
    if policy == "drops":
        return weighted(rng, legal, [6 if i.drop else 3 if i.capture else 1 for i in infos])
    if policy in ("kingwalk-w", "kingwalk-b"):
        # one king marches towards the opponent's back rank (campmate in empire), the other side
        # keeps to its own half
        if stm_white != (policy == "kingwalk-w"):
            return passive(rng, legal, infos, own_last, stm_white)
        if rng.random() < 0.9:
            best = max((i.rel_advance for i in infos if i.king), default=0)
            if best > 0:
                return rng.choice([m for m, i in zip(legal, infos) if i.king and i.rel_advance == best])
            sideways = [m for m, i in zip(legal, infos) if i.king and i.rel_advance == 0]
            if sideways and rng.random() < 0.3:
                return rng.choice(sideways)
        # otherwise break the wall in front of the king: captures
        return weighted(rng, legal, [30 if i.capture else 1 for i in infos])
    if policy == "shuffle":
        # a random opening, then both sides move a piece back and forth: repetitions
        if ply >= shuffle_start(rng):
            if own_last and "@" not in own_last and len(own_last) == 4 and reverse(own_last) in legal and rng.random() < 0.95:
                return reverse(own_last)
            quiet = [m for m, i in zip(legal, infos) if i.reversible]
            if quiet:
                return rng.choice(quiet)
        return rng.choice(legal)
    if policy == "quiet":
        # both sides keep to their own half: the halfmove clock runs up to the fifty-move rule
        return passive(rng, legal, infos, own_last, stm_white)
    raise ValueError(policy)


_prefix = {}


def shuffle_start(rng):
    """The shuffle policy's random opening length, drawn once per game (play_game resets it)."""
    if "n" not in _prefix:
        _prefix["n"] = rng.randint(0, 30)
    return _prefix["n"]


# ---------------------------------------------------------------------------------------------
# Fairy-Stockfish's side

def fsf_value(v):
    return "loss" if v < 0 else "win" if v > 0 else "draw"


class Fsf:
    def __init__(self, sf, variant):
        self.sf, self.v = sf, variant
        self.calls = 0

    def __getattr__(self, name):
        f = getattr(self.sf, name)

        def call(*a):
            self.calls += 1
            return f(*a)
        return call


def fsf_result(fsf, fen, legal, check, start, moves, seen_before, audit):
    """(outcome, reason) for the side to move in FSF's search order."""
    if not legal:
        imm, val = fsf.is_immediate_game_end(fsf.v, fen, [])
        if imm:
            return fsf_value(val), "campmate"
    halfmove = int(fen.split(" ")[4])
    if not legal or halfmove >= 99 or seen_before or audit:
        opt, val = fsf.is_optional_game_end(fsf.v, start, moves)
        if opt:
            fifty, _ = fsf.is_optional_game_end(fsf.v, fen, [])
            return fsf_value(val), ("fifty-move" if fifty else "repetition")
    if not legal:
        val = fsf.game_result(fsf.v, fen, [])
        return fsf_value(val), ("checkmate" if check else "stalemate")
    return "ongoing", "none"


def play_game(fsf, rng, policy, start, max_plies, counter, fixed=None):
    """Plays a game with FSF (the moves chosen by `policy`, or the moves `fixed`); returns its
    positions as dicts (FSF's view) and the moves."""
    _prefix.clear()
    positions, moves, seen = [], [], collections.Counter()
    since_reset = collections.Counter()  # the same, since the last capture, pawn move, drop or promotion
    fen = start
    check = fsf.gives_check(fsf.v, fen, [])
    while True:
        legal = fsf.legal_moves(fsf.v, fen, [])
        audit = counter[0] % AUDIT_EVERY == 0
        counter[0] += 1
        if not legal:
            check = fsf.gives_check(fsf.v, fen, [])
        extra = {}
        if audit:
            extra["audit_check"] = fsf.gives_check(fsf.v, fen, [])
            extra["insufficient"] = fsf.has_insufficient_material(fsf.v, fen, [])
        k = key_of(fen)
        outcome, reason = fsf_result(fsf, fen, legal, check, start, moves, seen[k] > 0, audit)
        if fen.split(" ")[4] == "0":
            since_reset.clear()
        p = {"fen": fen, "moves": sorted(legal), "check": check, "result": outcome, "reason": reason,
             "repeats": seen[k], "repeats_since_reset": since_reset[k], **extra}
        positions.append(p)
        seen[k] += 1
        since_reset[k] += 1
        if fixed is not None:
            if len(moves) == len(fixed):
                break
            m = fixed[len(moves)]
            if m not in legal:
                p["fsf_refused"] = m
                break
        elif outcome != "ongoing" or len(moves) >= max_plies:
            break
        else:
            m = choose(fsf, policy, rng, legal, fen, moves, len(moves))
        p["move"] = m
        moves.append(m)
        fen = fsf.get_fen(fsf.v, fen, [m])
        check = None  # from the SAN below
    sans = fsf.get_san_moves(fsf.v, start, moves, False, fsf.sf.NOTATION_SAN) if moves else []
    for i, s in enumerate(sans):
        positions[i]["san"] = s
        if positions[i + 1]["check"] is None:
            positions[i + 1]["check"] = s.endswith("+") or s.endswith("#")
    return positions, moves


# ---------------------------------------------------------------------------------------------
# vzero's side

def vzero_replay(vzero, variant, start, moves):
    r = subprocess.run([vzero, "replay", "--variant", variant, "--fen", start, "--moves", " ".join(moves)],
                       capture_output=True, text=True)
    lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    err = r.stderr.strip() if r.returncode != 0 else None
    return lines, err


# ---------------------------------------------------------------------------------------------
# Comparison and features

def compare(fp, vp):
    """Differences between FSF's and vzero's view of one position: list of (field, fsf, vzero)."""
    d = []
    if fp["fen"] != vp["fen"]:
        d.append(("fen", fp["fen"], vp["fen"]))
    if fp["moves"] != vp["moves"]:
        fs, vs = set(fp["moves"]), set(vp["moves"])
        d.append(("legal moves", "only FSF: " + (" ".join(sorted(fs - vs)) or "-") + (" (and duplicates)" if len(fs) != len(fp["moves"]) else ""),
                  "only vzero: " + (" ".join(sorted(vs - fs)) or "-") + (" (and duplicates)" if len(vs) != len(vp["moves"]) else "")))
    if fp["check"] != vp["check"]:
        d.append(("check", fp["check"], vp["check"]))
    if "audit_check" in fp and fp["audit_check"] != vp["check"]:
        d.append(("check (gives_check)", fp["audit_check"], vp["check"]))
    if (fp["result"], fp["reason"]) != (vp["result"], vp["reason"]):
        d.append(("result", f'{fp["result"]} {fp["reason"]}', f'{vp["result"]} {vp["reason"]}'))
    if "fsf_refused" in fp:
        d.append(("oracle move " + fp["fsf_refused"], "illegal", "legal" if fp["fsf_refused"] in vp["moves"] else "illegal"))
    if fp.get("san") != vp.get("san") and "move" in fp:
        d.append(("san of " + fp["move"], fp.get("san"), vp.get("san")))
    if "insufficient" in fp and tuple(fp["insufficient"]) != (False, False):
        d.append(("has_insufficient_material", fp["insufficient"], "(False, False): no such rule"))
    return d


def features(variant, fp, counts):
    fen = fp["fen"]
    board = board_of(fen)
    fields = fen.split(" ")
    stm_white = fields[1] == "w"
    hit = set()
    if fp["check"]:
        hit.add("check")
    if fp["result"] != "ongoing":
        hit.add(fp["reason"] if fp["reason"] != "repetition" else "repetition (ended)")
        if fp["reason"] == "repetition" and fp["repeats_since_reset"] < 2:
            hit.add("repetition across a capture or drop")
        if fp["reason"] == "campmate":
            hit.add("campmate by white" if not stm_white else "campmate by black")
    elif fp["repeats"] >= 1:
        hit.add("repetition (2-fold, going on)")
    if fields[3] != "-":
        hit.add("en passant available")
    kings = {p: s for s, p in board.items() if p in ("K", "k")}
    if variant == "empire":
        if len(kings) == 2 and (kings["K"][0] == kings["k"][0] or kings["K"][1] == kings["k"][1]):
            hit.add("kings on one line")
        if any(p == "S" and s[1] == "8" for s, p in board.items()):
            hit.add("soldier on the last rank")
    else:
        if any(p.startswith("+") and p.lower() != "+f" for p in board.values()):
            hit.add("promoted piece on the board")
        if kings.get("K", "")[1:] == "8" or kings.get("k", "")[1:] == "1":
            hit.add("king on the last rank (no campmate)")
        if any("@" in m for m in fp["moves"]):
            hit.add("drop available")
    san = fp.get("san", "")
    if re.match(r"^[A-Z]([a-h][1-8]|[a-h]|[1-8])x?[a-h][1-8]", san):
        hit.add("SAN disambiguation")
    if san.endswith("#"):
        hit.add("SAN with #")
    m = fp.get("move")
    if m:
        i = MoveInfo(m, board, stm_white)
        if i.drop:
            hit.add("drop played")
            if m[0] == "P":
                hit.add("pawn drop played")
            if fp.get("san", "").endswith(("+", "#")):
                hit.add("drop gives check")
        if i.promotion:
            hit.add("promotion played")
            if i.pawn:
                hit.add("pawn promotion played")
        if i.castle:
            hit.add("castling played")
        if i.ep:
            hit.add("en passant played")
        if i.capture:
            hit.add("capture played")
    for h in hit:
        counts[h] += 1


# ---------------------------------------------------------------------------------------------

def oracle_data(variant):
    """From ../shared/oracle: the perft(1) count of every distinct perft FEN, and the results rows
    as (FEN, moves, result, reason)."""
    import csv
    perft1, games = {}, []
    with open(os.path.join(ORACLE, f"{variant}-perft.csv")) as f:
        for row in csv.DictReader(f):
            if row["depth"] == "1":
                perft1[row["fen"]] = int(row["nodes"])
    with open(os.path.join(ORACLE, f"{variant}-results.csv")) as f:
        for row in csv.DictReader(f):
            games.append((row["fen"], row["moves"].split(), row["result"], row["reason"]))
    return perft1, games


POLICIES = {
    "empire": ["uniform", "attack", "pawnrace", "kingwalk-w", "kingwalk-b", "attack", "kingwalk-w", "kingwalk-b",
               "shuffle", "enpassant", "quiet", "tactical"],
    "shogun": ["uniform", "tactical", "attack", "drops", "drops", "pawnrace", "kingwalk-w", "kingwalk-b", "shuffle",
               "quiet", "attack", "kingwalk-w"],
}


def run_variant(args_tuple):
    variant, vzero, games, seed, verbose, ini = args_tuple
    import pyffish as sf
    if tuple(sf.version()) != PYFFISH_VERSION:
        return {"variant": variant, "setup_error": f"pyffish {sf.version()} installed, {PYFFISH_VERSION} expected"}
    with open(ini) as f:
        sf.load_variant_config(f.read())
    fsf = Fsf(sf, variant)
    rng = random.Random(f"{seed}:{variant}")
    t0 = time.time()
    counts = collections.Counter()
    oracle_counts = collections.Counter()
    mismatches = []
    n_pos = n_games = 0
    counter = [0]
    by_policy = collections.Counter()
    # The definitions first: pyffish with them must give the oracle's answers (FSF's own
    # definitions made the oracle), or a difference below could be the ini's fault.
    perft1, oracle_results = oracle_data(variant)
    ini_errors = []
    for fen, n in perft1.items():
        got_fen, got_n = fsf.get_fen(variant, fen, []), len(fsf.legal_moves(variant, fen, []))
        if (got_fen, got_n) != (fen, n):
            ini_errors.append(f"{fen}: FEN {got_fen}, perft(1) {got_n} (oracle: {n})")
    oracle_fens = list(perft1)
    start = sf.start_fen(variant)
    if start != (VZERO_START[variant]):
        ini_errors.append(f"start FEN {start}")
    plan = []
    for g in range(games):
        policy = POLICIES[variant][g % len(POLICIES[variant])]
        plan.append(("random", policy, start, 260 if policy == "quiet" else 100))
    for fen in oracle_fens:
        plan.append(("oracle start", rng.choice([p for p in POLICIES[variant] if p != "quiet"]), fen, 40))
    for source, policy, fen0, max_plies in plan:
        n_games += 1
        try:
            positions, moves = play_game(fsf, rng, policy, fen0, max_plies, counter)
        except Exception as e:  # pyffish refused its own game: report, go on
            mismatches.append((n_games, source, policy, fen0, [], "pyffish error", repr(e), "-"))
            continue
        by_policy[policy] += 1
        vlines, err = vzero_replay(vzero, variant, fen0, moves)
        for i, fp in enumerate(positions):
            features(variant, fp, counts)
            if i >= len(vlines):
                mismatches.append((n_games, source, policy, fen0, moves[:i], "vzero replay", "a position", err or "no line"))
                break
            for field, a, b in compare(fp, vlines[i]):
                mismatches.append((n_games, source, policy, fen0, moves[:i], field, a, b))
            n_pos += 1
        if verbose:
            print(f"  {variant} {source} {policy}: {len(positions)} positions, end {positions[-1]['result']} {positions[-1]['reason']}",
                  file=sys.stderr)
    # The oracle's results rows (whole games as FSF labelled them) and the scripted games.
    for fen0, moves, *label in oracle_results + [(f, m) for _, f, m in SCRIPTED[variant]]:
        n_games += 1
        try:
            positions, _ = play_game(fsf, rng, "-", fen0, None, counter, fixed=moves)
        except Exception as e:
            mismatches.append((n_games, "fixed game", "-", fen0, [], "pyffish error", repr(e), "-"))
            continue
        last = positions[-1]
        if label and (len(positions) != len(moves) + 1 or [last["result"], last["reason"]] != label):
            ini_errors.append(f"results row {fen0} moves {' '.join(moves)}: {last['result']} {last['reason']} "
                              f"after {len(positions) - 1} moves (oracle: {' '.join(label)})")
        vlines, err = vzero_replay(vzero, variant, fen0, moves)
        for i, fp in enumerate(positions):
            features(variant, fp, oracle_counts)
            if i >= len(vlines):
                mismatches.append((n_games, "fixed game", "-", fen0, moves[:i], "vzero replay", "a position", err or "no line"))
                break
            for field, a, b in compare(fp, vlines[i]):
                mismatches.append((n_games, "fixed game", "-", fen0, moves[:i], field, a, b))
            n_pos += 1
    return {"variant": variant, "positions": n_pos, "games": n_games, "counts": dict(counts),
            "ini_errors": ini_errors, "ini_checked": (len(perft1), len(oracle_results)),
            "oracle_counts": dict(oracle_counts), "oracle_games": len(oracle_results) + len(SCRIPTED[variant]),
            "mismatches": mismatches, "seconds": time.time() - t0, "fsf_calls": fsf.calls,
            "policies": dict(by_policy)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vzero", default=os.path.join(ROOT, "target", "release", "vzero"))
    ap.add_argument("--games", type=int, default=int(os.environ.get("VZERO_FSF_GAMES", "36")),
                    help="random games per variant (besides the oracle starts and games)")
    ap.add_argument("--ini", default=INI, help="the FSF variant definitions (variants.ini syntax)")
    ap.add_argument("--seed", default="vzero-fsf-1")
    ap.add_argument("--jobs", type=int, default=2, help="variants checked at once (one process each)")
    ap.add_argument("--variant", action="append", choices=sorted(REQUIRED))
    ap.add_argument("--show", type=int, default=10, help="mismatches printed in full per variant")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    variants = a.variant or ["empire", "shogun"]
    try:
        import pyffish  # noqa: F401
    except ImportError:
        print("fsf_diff: pyffish is not installed in this Python (scripts/setup.sh installs it into .venv)", file=sys.stderr)
        return 2
    if not os.access(a.vzero, os.X_OK):
        print(f"fsf_diff: {a.vzero} not found (cargo build --release -p vzero --bin vzero)", file=sys.stderr)
        return 2
    t0 = time.time()
    jobs = [(v, a.vzero, a.games, a.seed, a.verbose, a.ini) for v in variants]
    if a.jobs > 1 and len(jobs) > 1:
        with multiprocessing.get_context("fork").Pool(min(a.jobs, len(jobs))) as pool:
            results = pool.map(run_variant, jobs)
    else:
        results = [run_variant(j) for j in jobs]
    failed = False
    print("fsf_diff: vzero against Fairy-Stockfish (pyffish %s), seed %r" % (".".join(map(str, PYFFISH_VERSION)), a.seed))
    for r in results:
        v = r["variant"]
        if "setup_error" in r:
            print(f"fsf_diff: {v}: {r['setup_error']}", file=sys.stderr)
            return 2
        print(f"\n{v}: {r['positions']} positions compared in {r['games']} games "
              f"({r['seconds']:.1f} s, {r['fsf_calls']} pyffish calls); policies {r['policies']}")
        nf, nr = r["ini_checked"]
        if r["ini_errors"]:
            failed = True
            print(f"  VARIANTS.INI DISAGREES WITH THE ORACLE ({len(r['ini_errors'])} of {nf} FENs with perft(1) and {nr} results rows):")
            for e in r["ini_errors"][: a.show]:
                print(f"  - {e}")
        else:
            print(f"  scripts/fsf/variants.ini against the oracle: {nf} FENs with their perft(1) and {nr} results rows: ok")
        counts, oc = r["counts"], r["oracle_counts"]
        missing = [f for f in REQUIRED[v] if counts.get(f, 0) == 0] + [f for f in REQUIRED_FIXED[v] if oc.get(f, 0) == 0]
        req = set(REQUIRED[v]) | set(REQUIRED_FIXED[v])
        names = sorted(set(counts) | set(oc) | req, key=lambda f: (f not in req, f))
        print(f"  {'positions exercising':<38} {'random':>7} {'fixed':>7}   (random: games from the start and from the "
              f"oracle's FENs; fixed: the {r['oracle_games']} games of the oracle's results rows and SCRIPTED)")
        for f in names:
            mark = "MISSING" if f in missing else ("" if f in REQUIRED[v] else "(fixed games)" if f in req else "(not required)")
            print(f"  {f:<38} {counts.get(f, 0):>7} {oc.get(f, 0):>7}   {mark}")
        r["missing"] = missing
        if missing:
            failed = True
            print(f"  COVERAGE: no position exercised {', '.join(missing)}")
        mm = r["mismatches"]
        if mm:
            failed = True
            fields = collections.Counter(m[5].split(" of ")[0] for m in mm)
            games = sorted({m[0] for m in mm})
            print(f"  MISMATCHES: {len(mm)} in {len(games)} games ({', '.join(f'{k}: {n}' for k, n in fields.items())}); "
                  f"the first of each kind, then the first of each game (up to {a.show} games):")
            picked, kinds, shown = [], set(), set()
            for m in mm:
                kind = m[5].split(" of ")[0]
                if kind not in kinds:
                    kinds.add(kind)
                    shown.add(m[0])
                    picked.append(m)
            for m in mm:
                if len(shown) >= a.show:
                    break
                if m[0] not in shown:
                    shown.add(m[0])
                    picked.append(m)
            for game, source, policy, fen0, moves, field, fsf_says, vzero_says in picked:
                print(f"  - {field} ({source} {game}, {policy}) at: --fen '{fen0}' --moves '{' '.join(moves)}'")
                print(f"      FSF:   {fsf_says}")
                print(f"      vzero: {vzero_says}")
        else:
            print("  no mismatch")
    total = sum(r["positions"] for r in results)
    bad = sum(len({(m[0], len(m[4])) for m in r["mismatches"]}) for r in results)
    missing = sum(len(r["missing"]) + len(r["ini_errors"]) for r in results)
    print(f"\nfsf_diff: {total} positions compared in {time.time() - t0:.1f} s, {bad} with a mismatch; "
          f"{missing} required features not exercised or ini errors: {'FAILED' if failed else 'ok'}")
    # the closing line in the plain form test logs are read for: positions (and missing features)
    print(f"fsf_diff: {total - bad} passed, {bad + missing} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
