#!/usr/bin/env python3
"""Checks a run's TensorBoard event files against its metrics.csv and arena/elo.csv.

Usage: check_tensorboard.py RUN_DIR [--last-elo]

Reads RUN_DIR with TensorBoard's own reader (EventAccumulator over the directory: every
events.out.tfevents.* file in name order, with its purge of what a restarted writer dropped)
and checks that:
  * each metrics.csv column with a tag (loss_X -> loss/X; lr, samples_per_s, policy_entropy,
    value_accuracy -> train/...; total_rows, window_rows, external_* -> data/...) has exactly
    the steps of metrics.csv, with its values (within the CSV's printed precision and float32);
  * selfplay/games_per_s has the same steps, is >= 0 everywhere and > 0 somewhere;
  * each elo/<opponent> event is at the step of an elo.csv row, and elo/<anchor> exists when
    elo.csv has rows; with --last-elo, elo/random at elo.csv's newest step equals its Elo there
    (the gauntlet that wrote elo.csv last logged it);
  * a copy of each event file cut inside its last record reads without error, with one event
    less (a writer killed mid-record leaves nothing that breaks a reader).
Prints "tensorboard ok: ..." and exits 0, or exits 1 naming the first difference.
"""
import csv
import os
import shutil
import sys
import tempfile

from tensorboard.backend.event_processing import event_accumulator, event_file_loader


def column_tag(column):
    if column.startswith("loss_"):
        return "loss/" + column[len("loss_"):]
    if column in ("lr", "samples_per_s", "policy_entropy", "value_accuracy"):
        return "train/" + column
    if column in ("total_rows", "window_rows", "external_rows", "external_share"):
        return "data/" + column
    return None


def tolerance(text):
    """Half a unit of the last digit printed in the CSV, plus float32 rounding."""
    mantissa, _, exp = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    value = float(text)
    return 0.5 * 10.0 ** ((int(exp) if exp else 0) - decimals) + abs(value) * 1e-6


def fail(msg):
    print("tensorboard check failed: " + msg)
    sys.exit(1)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    run = args[0]
    acc = event_accumulator.EventAccumulator(run, size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    with open(os.path.join(run, "metrics.csv")) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        fail("metrics.csv has no rows")
    steps = [int(r["step"]) for r in rows]
    checked = 0
    for column in rows[0]:
        tag = column_tag(column)
        if tag is None:
            continue
        if tag not in tags:
            fail(f"no tag {tag} (metrics.csv column {column}); tags: {sorted(tags)}")
        events = acc.Scalars(tag)
        got = [e.step for e in events]
        if got != steps:
            fail(f"{tag}: steps {got}, metrics.csv has {steps}")
        for e, r in zip(events, rows):
            want = float(r[column])
            if abs(e.value - want) > tolerance(r[column]):
                fail(f"{tag} at step {e.step}: {e.value!r}, metrics.csv has {r[column]}")
        checked += 1
    if "selfplay/games_per_s" not in tags:
        fail(f"no tag selfplay/games_per_s; tags: {sorted(tags)}")
    games = acc.Scalars("selfplay/games_per_s")
    if [e.step for e in games] != steps or min(e.value for e in games) < 0 or max(e.value for e in games) <= 0:
        fail(f"selfplay/games_per_s: {[(e.step, e.value) for e in games]}")
    elo_rows = []
    elo_path = os.path.join(run, "arena", "elo.csv")
    if os.path.exists(elo_path):
        with open(elo_path) as f:
            elo_rows = list(csv.DictReader(f))
    elo_steps = {int(r["step"]) for r in elo_rows}
    elo_tags = sorted(t for t in tags if t.startswith("elo/"))
    if elo_rows and "elo/random" not in tags:
        fail(f"elo.csv has rows but no elo/random tag; tags: {sorted(tags)}")
    for tag in elo_tags:
        for e in acc.Scalars(tag):
            if e.step not in elo_steps:
                fail(f"{tag} at step {e.step}: no such gauntlet in elo.csv (steps {sorted(elo_steps)})")
    if "--last-elo" in sys.argv and elo_rows:
        last = max(elo_rows, key=lambda r: int(r["step"]))
        at = [e for e in acc.Scalars("elo/random") if e.step == int(last["step"])]
        if not at or abs(at[-1].value - float(last["elo"])) > tolerance(last["elo"]):
            fail(f"elo/random at step {last['step']}: {[e.value for e in at]}, elo.csv has {last['elo']}")
    files = sorted(f for f in os.listdir(run) if "tfevents" in f)
    with tempfile.TemporaryDirectory() as tmp:
        for name in files:
            full = list(event_file_loader.EventFileLoader(os.path.join(run, name)).Load())
            cut = os.path.join(tmp, name)
            shutil.copy(os.path.join(run, name), cut)
            with open(cut, "r+b") as f:
                f.truncate(os.path.getsize(cut) - 3)
            short = list(event_file_loader.EventFileLoader(cut).Load())
            if len(short) != len(full) - 1 or short != full[:-1]:
                fail(f"{name} cut in its last record: {len(short)} events read, {len(full)} in the whole file")
    print(
        f"tensorboard ok: {len(files)} event file(s); {checked} metrics columns x {len(steps)} steps equal to "
        f"metrics.csv; {len(elo_steps)} gauntlet step(s); tags {' '.join(sorted(tags))}"
    )


if __name__ == "__main__":
    main()
