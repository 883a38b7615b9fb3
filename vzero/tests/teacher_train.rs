//! Teacher workers inside `vzero train` (`[teacher]`): labelled rows of the run's own newest
//! games appear while it trains, and a teacher that crashes or hangs is restarted while the run
//! goes on.

mod common;

use common::{tiny_config, vzero};

use std::path::Path;

use vzero_data::{Chunk, GameRecord, RunDir, ScoredPosition, Source};

/// The run's self-play game records and its labelled positions (with the label chunks' teacher).
fn read_run(run: &Path) -> (Vec<GameRecord>, Vec<ScoredPosition>, Vec<String>) {
    let run = RunDir::create_or_open(run).unwrap();
    let (mut games, mut labels, mut teachers) = (Vec::new(), Vec::new(), Vec::new());
    for path in run.list_chunks().unwrap() {
        let c = Chunk::open(&path).unwrap();
        match c.meta.source {
            Source::SelfPlay => games.extend(c.games().unwrap()),
            Source::Label => {
                assert_eq!(c.read_all().unwrap().len(), c.scored_positions().unwrap().len(), "{}", path.display());
                labels.extend(c.scored_positions().unwrap());
                teachers.push(c.meta.network.clone());
            }
            Source::Import => panic!("no import in this run"),
        }
    }
    (games, labels, teachers)
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("vzero-teacher-train-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The number after `teacher ` in the summary: positions labelled.
fn labelled(out: &str) -> u64 {
    let line = out.lines().find(|l| l.starts_with("teacher ")).unwrap_or_else(|| panic!("no teacher line in {out}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn teacher_workers_label_positions_of_the_newest_games_while_the_run_trains() {
    let dir = scratch("label");
    let cfg = dir.join("teacher.toml");
    // the first teacher cannot start (no such program): its fallback teaches instead. Polling
    // every 30 s, it finds no game at its start and sleeps past the 8 games: the labels come
    // from the drain at the game limit (the newest chunk labelled before the learner's last
    // steps), not from how the threads happened to be scheduled.
    std::fs::write(&cfg, tiny_config("", "[teacher]\nspec = \"uci:/nonexistent/vzero-teacher\"\nfallback = \"alphabeta:1\"\nbatch = 16\npoll_seconds = 30\n")).unwrap();
    let run = dir.join("run");
    let (code, out, err) = vzero(&["train", "--config", cfg.to_str().unwrap(), "--run", run.to_str().unwrap(), "--games", "8", "--minutes", "3", "--quiet"]);
    assert_eq!(code, 0, "{err}");
    let n = labelled(&out);
    assert!(n > 0, "{out}");
    assert!(out.contains("labelled by alphabeta:1") && err.contains("cannot start"), "{out}\n{err}");
    let (games, labels, teachers) = read_run(&run);
    assert_eq!(labels.len() as u64, n, "{out}");
    assert!(teachers.iter().all(|t| t == "alphabeta:1"), "{teachers:?}");
    // every labelled position is one of the run's own self-play positions (a prefix of a game)
    for p in &labels {
        assert!(
            games.iter().any(|g| g.start_fen == p.start_fen && g.moves.len() > p.moves.len() && g.moves[..p.moves.len()] == p.moves[..]),
            "{p:?} is not a position of the run's games"
        );
    }
    // metrics.csv gains the external columns when the first labels arrive, every row as wide
    // as the header
    let metrics = std::fs::read_to_string(run.join("metrics.csv")).unwrap();
    let header = metrics.lines().next().unwrap();
    assert!(header.contains("external_rows") && header.contains("external_share"), "{header}");
    let width = header.split(',').count();
    assert!(metrics.lines().all(|l| l.split(',').count() == width), "{metrics}");
    // the stored config keeps the section, and `vzero status` / `check` accept the run
    let stored = std::fs::read_to_string(run.join("config.toml")).unwrap();
    assert!(stored.contains("[teacher]") && stored.contains("alphabeta:1"), "{stored}");
    let (code, _, err) = vzero(&["check", "--run", run.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_crashing_or_hanging_teacher_is_restarted_and_the_run_goes_on() {
    let dir = scratch("flaky");
    // A real UCI engine (`vzero uci`) behind a filter. Its first process is the run's start
    // naming the engine (a handshake, no search); the first labelling process crashes at its
    // third search, the second hangs at its second search (no answer: the teacher's timeout),
    // later ones work.
    let count = dir.join("starts");
    let script = dir.join("flaky-teacher.sh");
    std::fs::write(
        &script,
        format!(
            "n=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}\n\
             g=0\n\
             while read -r l; do\n\
               case \"$l\" in go*) g=$((g+1));; esac\n\
               if [ $n -eq 2 ] && [ $g -eq 3 ]; then exit 3; fi\n\
               if [ $n -eq 3 ] && [ $g -eq 2 ]; then sleep 8; exit 0; fi\n\
               echo \"$l\"\n\
             done | {bin} uci --variant empire\n",
            count = count.display(),
            bin = env!("CARGO_BIN_EXE_vzero"),
        ),
    )
    .unwrap();
    let spec = format!("uci:sh {}:movetime=20:timeout=4000", script.display());
    let cfg = dir.join("flaky.toml");
    std::fs::write(&cfg, tiny_config("", &format!("[teacher]\nspec = \"{spec}\"\nbatch = 8\npoll_seconds = 0.2\n"))).unwrap();
    let run = dir.join("run");
    let (code, out, err) = vzero(&["train", "--config", cfg.to_str().unwrap(), "--run", run.to_str().unwrap(), "--games", "40", "--minutes", "3", "--quiet"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("trained "), "{out}");
    let starts: u32 = std::fs::read_to_string(&count).unwrap().trim().parse().unwrap();
    assert!(starts >= 4, "the teacher was started {starts} times: {out}");
    assert!(err.lines().any(|l| l.starts_with("note: teacher uci:sh:movetime=20: vzero ")), "the start names the engine: {err}");
    let line = out.lines().find(|l| l.starts_with("teacher ")).unwrap();
    let restarts: u64 = line.split('(').nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!(restarts >= 2, "{line}\n{err}");
    assert!(labelled(&out) > 0, "{out}");
    let (_, labels, _) = read_run(&run);
    assert_eq!(labels.len() as u64, labelled(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}
