//! The real Fairy-Stockfish in whole flows: `scripts/fairy-stockfish`, the engine inside the
//! pinned `pyffish` wheel that `scripts/setup.sh` installs into `.venv`. How vzero finds it and
//! names it; `vzero match … fsf:nodes=1`; the teacher inside `vzero train`; `scripts/ladder.sh`;
//! one round of `vzero nnue loop` with its gate, and the round's net in the engine against
//! `vzero nnue eval` (`scripts/fsf_nnue.py`, 100 random positions); and bad engines: missing or
//! broken pyffish, an engine that dies at its start or in a game or never answers, definitions
//! that lack the variant.

mod common;

use common::tiny_config;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use vzero_data::{Chunk, RunDir, Source, TeacherScore};

const BIN: &str = env!("CARGO_BIN_EXE_vzero");
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The launcher, after checking that it runs Fairy-Stockfish (else: run scripts/setup.sh).
fn launcher() -> PathBuf {
    let p = Path::new(ROOT).join("scripts/fairy-stockfish").canonicalize().expect("scripts/fairy-stockfish");
    let out = Command::new("sh").arg("-c").arg(format!("printf 'uci\\nquit\\n' | {}", p.display())).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("id name Fairy-Stockfish")),
        "scripts/fairy-stockfish does not run Fairy-Stockfish (pyffish missing from .venv? run scripts/setup.sh): {}{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    p
}

/// The `PATH` without any directory holding a `fairy-stockfish`, so that the launcher is found.
fn path_without_fsf() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).filter(|d| !d.join("fairy-stockfish").exists()).collect();
    std::env::join_paths(dirs).unwrap().to_string_lossy().into_owned()
}

/// Runs `bash scripts/NAME args…` with this build's vzero, as on a machine with only the
/// launcher (no `$VZERO_FSF`, no `fairy-stockfish` on the `PATH`).
fn script(name: &str, args: &[&str]) -> std::process::Output {
    script_with(Path::new(BIN), name, args)
}

/// [`script`] with another vzero binary as `$VZERO`.
fn script_with(vzero: &Path, name: &str, args: &[&str]) -> std::process::Output {
    Command::new("bash")
        .arg(Path::new(ROOT).join("scripts").join(name))
        .args(args)
        .env("VZERO", vzero)
        .env_remove("VZERO_FSF")
        .env("PATH", path_without_fsf())
        .output()
        .unwrap()
}

/// Runs vzero as on a machine with only the launcher (no `$VZERO_FSF`, no `fairy-stockfish` on
/// the `PATH`), plus `env`: exit code, stdout, stderr.
fn vzero_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut c = Command::new(BIN);
    c.args(args).env_remove("VZERO_FSF").env("PATH", path_without_fsf());
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("run vzero");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn vzero(args: &[&str]) -> (i32, String, String) {
    vzero_env(args, &[])
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vzero-fsf-engine-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `W/D/L w/d/l` of a match summary, as (games, forfeit lines).
fn games_and_forfeits(out: &str) -> (u32, usize) {
    let wdl = out.lines().find_map(|l| l.strip_prefix("W/D/L ")).unwrap_or_else(|| panic!("no W/D/L line: {out}"));
    let n: u32 = wdl.split_whitespace().next().unwrap().split('/').map(|x| x.parse::<u32>().unwrap()).sum();
    (n, out.lines().filter(|l| l.contains(": forfeit:")).count())
}

#[test]
fn the_engine_is_found_in_order_and_named_at_the_start() {
    let fsf = launcher();
    let dir = scratch("order");
    // nothing else there: the launcher, named with its id and where it came from
    for variant in ["empire", "shogun"] {
        let (code, out, err) = vzero(&["match", "fsf:nodes=1", "random", "--variant", variant, "--games", "2", "--no-progress"]);
        assert_eq!(code, 0, "{out}\n{err}");
        assert_eq!(games_and_forfeits(&out), (2, 0), "{out}");
        let line = err.lines().find(|l| l.starts_with("engine fsf:nodes=1: ")).unwrap_or_else(|| panic!("{err}"));
        assert!(line.contains("Fairy-Stockfish") && line.ends_with(&format!("({}, the pyffish launcher)", fsf.display())), "{line}");
    }
    // fairy-stockfish on the PATH comes before it (here: a link to the launcher)
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&fsf, bin.join("fairy-stockfish")).unwrap();
    let path = format!("{}:{}", bin.display(), path_without_fsf());
    let (code, out, err) = vzero_env(&["match", "fsf:nodes=1", "random", "--variant", "empire", "--games", "2", "--no-progress"], &[("PATH", &path)]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains(&format!("({}, fairy-stockfish on the PATH)", bin.join("fairy-stockfish").display())), "{err}");
    // and $VZERO_FSF before both
    let (code, out, err) = vzero_env(&["match", "fsf:nodes=1", "random", "--variant", "empire", "--games", "2", "--no-progress"], &[("PATH", &path), ("VZERO_FSF", fsf.to_str().unwrap())]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains(&format!("({}, $VZERO_FSF)", fsf.display())), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_engines_give_one_line_and_never_hang() {
    let fsf = launcher();
    let dir = scratch("bad");
    let one_line_error = |env: &[(&str, &str)], spec: &str, wanted: &str| {
        let t = Instant::now();
        let (code, out, err) = vzero_env(&["match", spec, "random", "--variant", "empire", "--games", "2", "--no-progress"], env);
        assert_eq!(code, 1, "{spec} {env:?}: {out}\n{err}");
        let lines: Vec<&str> = err.lines().collect();
        assert!(lines.len() == 1 && lines[0].starts_with("error: ") && lines[0].contains(wanted), "{spec} {env:?}: wanted one line with '{wanted}': {err}");
        assert!(t.elapsed() < Duration::from_secs(30), "{spec}: {:?}", t.elapsed());
    };
    // an engine that exits at once
    one_line_error(&[("VZERO_FSF", "/bin/false")], "fsf:nodes=1", "engine terminated");
    // the launcher in a checkout without pyffish: its own line is in the error
    let bare = dir.join("bare");
    std::fs::create_dir_all(bare.join("scripts/fsf")).unwrap();
    std::fs::copy(&fsf, bare.join("scripts/fairy-stockfish")).unwrap();
    std::fs::copy(Path::new(ROOT).join("scripts/fsf/variants.ini"), bare.join("scripts/fsf/variants.ini")).unwrap();
    let bare_fsf = bare.join("scripts/fairy-stockfish");
    one_line_error(&[("VZERO_FSF", bare_fsf.to_str().unwrap())], "fsf:nodes=1", "pyffish is not installed");
    // a broken pyffish (its module is not a library)
    let fake = dir.join("fake");
    std::fs::create_dir_all(fake.join("pyffish")).unwrap();
    std::fs::write(fake.join("pyffish/__init__.py"), "").unwrap();
    std::fs::write(fake.join("pyffish/_pyffish.cpython-311-x86_64-linux-gnu.so"), "not a library").unwrap();
    one_line_error(&[("VZERO_FSF", bare_fsf.to_str().unwrap()), ("PYTHONPATH", fake.to_str().unwrap())], "fsf:nodes=1", "cannot load Fairy-Stockfish");
    // definitions that lack the variant: Fairy-Stockfish would play chess; refused at its start
    let ini = dir.join("other.ini");
    std::fs::write(&ini, "[other:chess]\nmaxRank = 8\n").unwrap();
    one_line_error(&[], &format!("fsf:nodes=1:variantpath={}", ini.display()), "Fairy-Stockfish does not know empire");
    one_line_error(&[], &format!("fsf:nodes=1:variantpath={}", dir.join("missing.ini").display()), "does not know empire");
    // an engine that never answers: the start's timeout
    let mute = dir.join("mute.sh");
    write_script(&mute, "#!/bin/sh\nexec sleep 60\n");
    one_line_error(&[("VZERO_FSF", mute.to_str().unwrap())], "fsf:nodes=1:timeout=2000", "no answer within 2.0 s");

    // the NNUE loop, its games and vzero label stop before they open the run: no run directory
    let never = dir.join("never");
    let never_s = never.to_str().unwrap();
    for args in [
        vec!["nnue", "loop", "--variant", "empire", "--run", never_s, "--teacher", "fsf:nodes=1", "--rounds", "1"],
        vec!["nnue", "play", "--variant", "empire", "--run", never_s, "--teacher", "fsf:nodes=1", "--games", "1"],
        vec!["label", "--variant", "empire", "--run", never_s, "--teacher", "fsf:nodes=1", "--positions", "4"],
    ] {
        let (code, out, err) = vzero_env(&args, &[("VZERO_FSF", bare_fsf.to_str().unwrap())]);
        assert_eq!(code, 1, "{args:?}: {out}\n{err}");
        assert!(err.lines().count() == 1 && err.contains("pyffish is not installed"), "{args:?}: {err}");
        assert!(!never.exists(), "{args:?} created {never_s}");
    }

    // an engine that dies in a game forfeits that game; the next game starts it again
    let count = dir.join("starts");
    let dying = dir.join("dying.sh");
    write_script(
        &dying,
        &format!(
            "#!/bin/sh\nn=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}\n\
             g=0\n\
             while read -r l; do\n\
               case \"$l\" in go*) g=$((g+1));; esac\n\
               if [ $n -eq 2 ] && [ $g -eq 3 ]; then exit 3; fi\n\
               echo \"$l\"\n\
             done | {fsf}\n",
            count = count.display(),
            fsf = fsf.display()
        ),
    );
    // (start 1 is the note at the match's start; start 2 dies at its third search)
    let (code, out, err) = vzero_env(&["match", "fsf:nodes=1", "random", "--variant", "empire", "--games", "4", "--concurrency", "1", "--no-progress"], &[("VZERO_FSF", dying.to_str().unwrap())]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(games_and_forfeits(&out), (4, 1), "{out}");
    assert!(out.lines().any(|l| l.contains(": forfeit:") && l.contains("engine terminated")), "{out}");
    assert_eq!(std::fs::read_to_string(&count).unwrap().trim(), "3", "started again after it died");

    // vzero train: a teacher that cannot start falls back to self-play alone, in one note, and
    // the run is whole
    let cfg = dir.join("teacher.toml");
    std::fs::write(&cfg, tiny_config("", "[teacher]\nspec = \"fsf:nodes=20\"\nfallback = \"off\"\nbatch = 16\npoll_seconds = 0.2\n")).unwrap();
    let run = dir.join("run");
    let (code, out, err) = vzero_env(
        &["train", "--config", cfg.to_str().unwrap(), "--run", run.to_str().unwrap(), "--games", "4", "--quiet"],
        &[("VZERO_FSF", bare_fsf.to_str().unwrap())],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("fsf:nodes=20")).collect();
    assert!(notes.len() == 1 && notes[0].contains("cannot start") && notes[0].contains("pyffish is not installed") && notes[0].ends_with("self-play alone"), "{err}");
    assert!(out.lines().any(|l| l == "teacher off"), "{out}");
    let (code, out, err) = vzero(&["check", "--run", run.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The labelled chunks of a run: (rows, the teacher named in each chunk).
fn label_chunks(run: &Path) -> (usize, Vec<String>) {
    let run = RunDir::create_or_open(run).unwrap();
    let (mut rows, mut teachers) = (0, Vec::new());
    for path in run.list_chunks().unwrap() {
        let c = Chunk::open(&path).unwrap();
        if c.meta.source == Source::Label {
            rows += c.read_all().unwrap().len();
            teachers.push(c.meta.network.clone());
        }
    }
    (rows, teachers)
}

#[test]
fn the_teacher_inside_vzero_train_labels_with_the_engine_and_the_ladder_plays_it() {
    let fsf = launcher();
    let dir = scratch("teacher");
    let cfg = dir.join("teacher.toml");
    std::fs::write(&cfg, tiny_config("", "[teacher]\nspec = \"fsf:nodes=20\"\nfallback = \"off\"\nbatch = 16\npoll_seconds = 0.2\n")).unwrap();
    let run = dir.join("run");
    let (code, out, err) = vzero(&["train", "--config", cfg.to_str().unwrap(), "--run", run.to_str().unwrap(), "--games", "12", "--minutes", "3", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // the start names the engine; the summary names the teacher and its engine
    let note = err.lines().find(|l| l.starts_with("note: teacher fsf:nodes=20: ")).unwrap_or_else(|| panic!("{err}"));
    assert!(note.contains("Fairy-Stockfish") && note.contains(&format!("({}, the pyffish launcher)", fsf.display())), "{note}");
    let line = out.lines().find(|l| l.starts_with("teacher ")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("labelled by fsf:nodes=20 = Fairy-Stockfish"), "{line}");
    let labelled: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(labelled > 0, "{line}\n{err}");
    // source = label rows in the run, from that teacher
    let (rows, teachers) = label_chunks(&run);
    assert_eq!(rows, labelled, "{out}");
    assert!(!teachers.is_empty() && teachers.iter().all(|t| t == "fsf:nodes=20"), "{teachers:?}");
    let (code, out, err) = vzero(&["check", "--run", run.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");

    // scripts/ladder.sh on the run's newest checkpoint, Fairy-Stockfish by default
    let mut ckpts: Vec<PathBuf> = std::fs::read_dir(run.join("checkpoints")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    ckpts.sort();
    let ckpt = ckpts.last().unwrap();
    let out_dir = dir.join("ladder");
    let ladder = script("ladder.sh", &["empire", ckpt.to_str().unwrap(), "--games", "2", "--sims", "8", "--nodes", "1", "--concurrency", "1", "--out", out_dir.to_str().unwrap()]);
    let (lout, lerr) = (String::from_utf8_lossy(&ladder.stdout), String::from_utf8_lossy(&ladder.stderr));
    assert!(ladder.status.success(), "{lout}\n{lerr}");
    assert!(lout.contains("Fairy-Stockfish: fsf:nodes=1: Fairy-Stockfish"), "{lout}");
    let fsf_row = lout.lines().find(|l| l.starts_with("| fsf-1n |")).unwrap_or_else(|| panic!("{lout}"));
    assert!(!fsf_row.contains("failed") && fsf_row.ends_with("| 0 |"), "{fsf_row}");
    for opponent in ["random", "greedy", "alphabeta:2", "alphabeta:3", "generation 0"] {
        let row = lout.lines().find(|l| l.starts_with(&format!("| {opponent}"))).unwrap_or_else(|| panic!("{opponent}: {lout}"));
        assert!(!row.contains("failed"), "{row}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One round of `vzero nnue loop` with the engine as `teacher` and a gate, then the round's net
/// in the engine (`EvalFile`, `Use NNUE`) against `vzero nnue eval` on 100 random positions, and
/// measured by `scripts/nnue-match.sh` against the engine's classical evaluation.
fn loop_round_and_eval_agreement(variant: &str, teacher: &str) {
    launcher();
    let dir = scratch(&format!("loop-{variant}"));
    let run = dir.join("run");
    let (code, out, err) = vzero(&[
        "nnue", "loop", "--variant", variant, "--run", run.to_str().unwrap(), "--teacher", teacher, "--workers", "1", "--rounds", "1",
        "--play-minutes", "0.1", "--train-minutes", "0.05", "--gate-games", "2", "--patience", "0", "--threads", "2", "--quiet",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.lines().any(|l| l.starts_with(&format!("engine {teacher}: Fairy-Stockfish"))), "{err}");
    assert!(err.contains("round 0: gate: round0 vs teachers: 2 games"), "{err}");
    let nets = std::fs::read_to_string(run.join("nnue/nets.csv")).unwrap();
    let row: Vec<&str> = nets.lines().nth(1).unwrap_or_else(|| panic!("{nets}")).split(',').collect();
    assert!(row[1].starts_with(&format!("{variant}-")) && row[3].parse::<u64>().unwrap() > 0, "{nets}");
    let net = run.join("nnue/nets").join(row[1]);
    let check = Command::new(Path::new(ROOT).join(".venv/bin/python"))
        .arg(Path::new(ROOT).join("scripts/fsf_nnue.py"))
        // the wheel's engine is a scalar build: its hidden layers add exactly
        .args(["--variant", variant, "--net", net.to_str().unwrap(), "--positions", "100", "--vzero", BIN, "--timeout", "300", "--arithmetic", "exact"])
        .output()
        .unwrap();
    let (cout, cerr) = (String::from_utf8_lossy(&check.stdout), String::from_utf8_lossy(&check.stderr));
    assert!(check.status.success(), "{cout}\n{cerr}");
    let last = cout.lines().last().unwrap();
    assert!(last.contains(": 100/100 positions with the same `NNUE evaluation` line (0 without one"), "{last}");
    if variant == "shogun" {
        // "N with pieces in hand, M with promoted pieces"
        let count = |what: &str| -> u32 { last.split(what).next().unwrap().rsplit(' ').next().unwrap().parse().unwrap() };
        assert!(count(" with pieces in hand") >= 20 && count(" with promoted pieces") >= 10, "{last}");
    }
    // scripts/nnue-match.sh: one line with the result, its interval and the engine
    let m = script("nnue-match.sh", &[variant, net.to_str().unwrap(), "--nodes", "1", "--games", "2", "--concurrency", "1"]);
    let (mout, merr) = (String::from_utf8_lossy(&m.stdout), String::from_utf8_lossy(&m.stderr));
    assert!(m.status.success(), "{mout}\n{merr}");
    assert_eq!(mout.lines().count(), 1, "{mout}");
    assert!(mout.starts_with(&format!("{variant} {} vs classical, 1 nodes per move, 2 games: W/D/L ", row[1])), "{mout}");
    assert!(mout.contains(", Elo ") && mout.contains("engine: Fairy-Stockfish"), "{mout}");
    // a missing net, and both limits at once: one line each, exit 1, no match played
    for args in [vec![variant, "no-such.nnue"], vec![variant, net.to_str().unwrap(), "--nodes", "1", "--movetime", "5"]] {
        let m = Command::new("bash").arg(Path::new(ROOT).join("scripts/nnue-match.sh")).args(&args).env("VZERO", BIN).output().unwrap();
        let merr = String::from_utf8_lossy(&m.stderr);
        assert_eq!(m.status.code(), Some(1), "{args:?}: {merr}");
        assert_eq!(merr.lines().count(), 1, "{args:?}: {merr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_nnue_loop_round_with_its_gate_and_its_net_in_the_engine_empire() {
    loop_round_and_eval_agreement("empire", "fsf:nodes=50");
}

#[test]
fn an_nnue_loop_round_with_its_gate_and_its_net_in_the_engine_shogun() {
    // the depth limit of Fairy-Stockfish's own training-data generator
    loop_round_and_eval_agreement("shogun", "fsf:depth=2");
}

/// `scripts/nnue.sh`: a net from nothing with the defaults (depth-2 labels, one training with
/// early stopping and learning-rate drops, export) within a short budget; the .nnue file it
/// names exists and the engine evaluates with it.
#[test]
fn nnue_sh_makes_a_net_from_nothing() {
    launcher();
    let dir = scratch("nnue-sh");
    let run = dir.join("run");
    // a share of the minutes that is not between 0 and 1 is refused before any work
    let bad = script("nnue.sh", &["empire", "--minutes", "0.6", "--run", run.to_str().unwrap(), "--play-share", "1.5"]);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && err.contains("--play-share must be a number between 0 and 1, not '1.5'"), "{err}");
    let bad = script("nnue.sh", &["empire", "--minutes", "0.6", "--run", run.to_str().unwrap(), "--adjudicate-cp", "1.5"]);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && err.contains("--adjudicate-cp must be a whole number of centipawns, not '1.5'"), "{err}");
    assert!(!run.exists(), "nnue.sh made a run before refusing");
    let t = Instant::now();
    let out = script(
        "nnue.sh",
        &["empire", "--minutes", "0.6", "--run", run.to_str().unwrap(), "--workers", "1", "--play-share", "0.7", "--adjudicate-cp", "100000"],
    );
    let (sout, serr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{sout}\n{serr}");
    assert!(sout.contains("vzero nnue play (0.42 minutes, teacher fsf:depth=2,"), "{sout}");
    // the adjudication limit reaches the games: none ends on a centipawn score (only a mate
    // adjudicates), where the default 1,500 cp ends most of them
    let rd = RunDir::open_existing(&run).unwrap();
    let mut adjudicated = 0;
    for path in rd.list_chunks().unwrap() {
        let c = Chunk::open(&path).unwrap();
        let scored = c.scored_positions().unwrap();
        for g in c.games().unwrap().iter().filter(|g| g.reason == "adjudication" && g.moves.len() >= 8) {
            // (positions before ply 8, the default --write-from, are not kept)
            let last = scored.iter().find(|s| s.moves == g.moves).unwrap_or_else(|| panic!("no decisive position: {g:?}"));
            assert!(matches!(last.score, TeacherScore::Mate(_)), "adjudicated below 100000 cp: {:?}", last.score);
            adjudicated += 1;
        }
    }
    eprintln!("{adjudicated} games adjudicated by a mate score");
    let net = sout.lines().find_map(|l| l.strip_prefix("net: ")).unwrap_or_else(|| panic!("{sout}"));
    let net = PathBuf::from(net.split(" (").next().unwrap());
    assert!(net.starts_with(run.join("nets")) && net.extension().is_some_and(|e| e == "nnue"), "{}", net.display());
    assert!(std::fs::metadata(&net).unwrap().len() > 100_000, "{}", net.display());
    assert!(t.elapsed() < Duration::from_secs(240), "{:?}", t.elapsed());
    // the engine loads it: one short game of the net against classical
    let m = script("nnue-match.sh", &["empire", net.to_str().unwrap(), "--nodes", "1", "--games", "2", "--concurrency", "1"]);
    let mout = String::from_utf8_lossy(&m.stdout);
    assert!(m.status.success() && mout.contains("2 games: W/D/L "), "{mout}\n{}", String::from_utf8_lossy(&m.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The scripts that run vzero's commands refuse a `vzero` launcher without `vzero-torch`
/// beside it before any work (it runs every command but the rules ones: the scripts once built
/// only the launcher, and a fresh clone's `scripts/nnue.sh` failed after its setup); the
/// message names the script and the fix, and nnue.sh and train.sh have made no run.
#[test]
fn scripts_refuse_a_launcher_without_vzero_torch_before_any_work() {
    let dir = scratch("lonely-launcher");
    let lonely = dir.join("vzero");
    std::fs::copy(BIN, &lonely).unwrap();
    let run = dir.join("run");
    let net = dir.join("x.nnue");
    std::fs::write(&net, b"not used").unwrap();
    let train_run = dir.join("train-run");
    let cases: [(&str, Vec<&str>); 4] = [
        ("nnue.sh", vec!["empire", "--minutes", "0.2", "--run", run.to_str().unwrap()]),
        ("train.sh", vec!["0.2", train_run.to_str().unwrap()]),
        ("nnue-match.sh", vec!["empire", net.to_str().unwrap(), "--games", "2"]),
        ("ladder.sh", vec!["empire", net.to_str().unwrap(), "--games", "2"]),
    ];
    for (name, args) in cases {
        let out = script_with(&lonely, name, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(&format!("{name}: '{}' has no vzero-torch beside it", lonely.display())), "{name}: {err}");
        assert!(err.contains("cargo build --release -p vzero"), "{name}: {err}");
    }
    assert!(!run.exists(), "nnue.sh made a run before refusing");
    assert!(!train_run.exists(), "train.sh made a run before refusing");
    // the same launcher with its sibling passes the check (the rules commands need no sibling)
    let torch = Path::new(BIN).with_file_name("vzero-torch");
    std::fs::copy(&torch, dir.join("vzero-torch")).unwrap();
    let out = script_with(&lonely, "nnue-match.sh", &["empire", net.to_str().unwrap(), "--games", "2", "--fsf", "/nonexistent/fsf"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && !err.contains("vzero-torch") && err.contains("'/nonexistent/fsf' is not executable"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A multi-PV teacher (`opt=MultiPV=3`): each search also keeps the positions its other lines
/// lead to, scored by the line from the new mover's side, with the line's reply as the move and
/// no result (they are off the game's path); the trainer reads them all.
#[test]
fn a_multi_pv_teacher_keeps_the_positions_of_its_other_lines() {
    launcher();
    let dir = scratch("multipv");
    let run = dir.join("run");
    let (code, out, err) = vzero(&[
        "nnue", "play", "--variant", "empire", "--run", run.to_str().unwrap(), "--teacher", "fsf:depth=2:opt=MultiPV=3", "--games", "3", "--workers", "1", "--quiet",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("off the games' paths, from multi-PV lines"), "{out}");
    let rd = RunDir::open_existing(&run).unwrap();
    let (mut on_path, mut off_path) = (0, 0);
    for path in rd.list_chunks().unwrap() {
        let c = Chunk::open(&path).unwrap();
        let games = c.games().unwrap();
        let scored = c.scored_positions().unwrap();
        assert_eq!(c.read_all().unwrap().len(), scored.len(), "a row for every scored position");
        let variant = vzero_rules::Variant::builtin("empire").unwrap();
        for s in &scored {
            let mut g = vzero_rules::Game::from_fen(variant, &s.start_fen).unwrap();
            for m in &s.moves {
                g.play_uci(m).unwrap();
            }
            g.position().parse_uci(&s.best).unwrap_or_else(|e| panic!("{}: {e}", s.best));
            let game = games.iter().find(|r| r.moves.len() >= s.moves.len() && r.moves[..s.moves.len()] == s.moves[..]);
            if game.is_some() {
                on_path += 1;
                assert!(s.result.is_some(), "a position on a decided game's path has its result");
            } else {
                off_path += 1;
                assert!(s.result.is_none(), "a side line's position has no result");
            }
        }
    }
    // with up to two other lines per search, most searches add positions
    assert!(off_path > on_path, "{off_path} side-line positions, {on_path} on the games' paths");
    let (code, out, err) = vzero(&["nnue", "train", "--variant", "empire", "--run", dir.join("t").to_str().unwrap(), "--from", run.to_str().unwrap(), "--steps", "2", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // every position is read: made into a sample, or skipped as in check
    let number_before = |what: &str| -> usize { err.split(what).next().unwrap().rsplit([' ', '(', '\n']).next().unwrap().parse().unwrap() };
    assert_eq!(number_before(" scored positions") + number_before(" in check"), on_path + off_path, "{err}");
    assert_eq!(number_before(" games and"), 3, "the games of scored chunks are counted: {err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
