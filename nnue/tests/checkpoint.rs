//! Checkpoints round-trip, resume where they stopped, and refuse damaged files; game records
//! become quiet samples with the right targets.

mod common;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use vzero_nnue::checkpoint::{self, Checkpoint};
use vzero_nnue::dataset::{game_samples, white_result, DataOptions};
use vzero_nnue::train::{value_to_score, AdamConfig, Sample, Trainer};
use vzero_nnue::{Bucket, FloatNetwork};
use vzero_rules::{Color, Position};

const DIMS: usize = 64;

fn samples(n: usize, seed: u64) -> Vec<Sample> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| Sample {
            us: (0..10)
                .map(|_| rng.gen_range(0..DIMS as u32))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            them: (0..10)
                .map(|_| rng.gen_range(0..DIMS as u32))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            bucket: Bucket::new(rng.gen_range(0..8)),
            score: rng.gen_range(-500.0..500.0),
            result: rng.gen_range(-1..=1) as f32,
        })
        .collect()
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("vzero-nnue-ckpt-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn trainer() -> Trainer {
    let mut net = FloatNetwork::zeroed(DIMS);
    let mut rng = StdRng::seed_from_u64(1);
    net.ft_weight_mut().iter_mut().for_each(|w| *w = rng.gen_range(-0.1..0.1));
    net.ft_bias_mut().iter_mut().for_each(|w| *w = rng.gen_range(0.0..0.5));
    for s in net.stacks_mut() {
        s.l1_weight.iter_mut().for_each(|w| *w = rng.gen_range(-0.05..0.05));
        s.out_weight.iter_mut().for_each(|w| *w = rng.gen_range(-0.5..0.5));
    }
    Trainer::new(net, AdamConfig::default(), 2)
}

#[test]
fn checkpoint_round_trips_and_resumes() {
    let dir = tmp("resume");
    let data = samples(64, 2);
    let batch: Vec<&Sample> = data.iter().collect();
    // Straight through: 6 steps.
    let mut straight = trainer();
    for _ in 0..6 {
        straight.step(&batch, 0.5);
    }
    // 3 steps, save, load, 3 more.
    let mut a = trainer();
    for _ in 0..3 {
        a.step(&batch, 0.5);
    }
    let c = Checkpoint { variant: "empire".into(), trainer: a, lambda: 0.5, targets: "search values + results".into() };
    let path = dir.join(checkpoint::file_name(c.trainer.step));
    checkpoint::save(&path, &c).unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().len() as usize,
        checkpoint::file_size(DIMS, {
            // header length: file size minus everything else
            std::fs::metadata(&path).unwrap().len() as usize - checkpoint::file_size(DIMS, 0)
        })
    );
    let mut back = checkpoint::load(&path).unwrap();
    back.trainer.threads = 2;
    assert_eq!(back, c, "bit-exact round trip");
    assert_eq!(checkpoint::latest(&dir).unwrap(), Some(path.clone()));
    let mut b = back.trainer;
    assert_eq!(b.step, 3);
    for _ in 0..3 {
        b.step(&batch, 0.5);
    }
    assert_eq!(b.step, 6);
    assert_eq!(b.positions, 6 * 64);
    assert_eq!(b.net, straight.net, "resuming continues exactly");
    assert_eq!(b.moments, straight.moments);
    // A newer checkpoint is the latest; no temporary file is left behind.
    let c2 = Checkpoint { variant: "empire".into(), trainer: b, lambda: 0.5, targets: "x".into() };
    checkpoint::save(&dir.join(checkpoint::file_name(6)), &c2).unwrap();
    assert_eq!(checkpoint::list(&dir).unwrap().iter().map(|e| e.0).collect::<Vec<_>>(), vec![3, 6]);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn damaged_checkpoints_are_refused() {
    let dir = tmp("damaged");
    let c = Checkpoint { variant: "shogun".into(), trainer: trainer(), lambda: 1.0, targets: "t".into() };
    let path = dir.join("c.vzck");
    checkpoint::save(&path, &c).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let short = dir.join("short.vzck");
    std::fs::write(&short, &bytes[..bytes.len() - 1000]).unwrap();
    let e = checkpoint::load(&short).unwrap_err().to_string();
    assert!(e.contains("short.vzck") && e.contains("truncated") && e.contains(&format!("{}", bytes.len())), "{e}");
    let mut flipped = bytes.clone();
    flipped[5000] ^= 1;
    std::fs::write(&short, &flipped).unwrap();
    let e = checkpoint::load(&short).unwrap_err().to_string();
    assert!(e.contains("checksum mismatch"), "{e}");
    std::fs::write(&short, b"hello world, not a checkpoint").unwrap();
    let e = checkpoint::load(&short).unwrap_err().to_string();
    assert!(e.contains("not a vzero NNUE training checkpoint"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn net_file_names_follow_the_convention() {
    let n = checkpoint::net_file_name("empire", b"abc");
    // sha256("abc") = ba7816bf8f01cfea414140de5dae2223...
    assert_eq!(n, "empire-ba7816bf8f01.nnue");
}

#[test]
fn games_become_quiet_samples_with_side_to_move_targets() {
    let (v, m) = common::mapping("empire");
    let mut rng = StdRng::seed_from_u64(4);
    let mut total = 0;
    for g in 0..20 {
        let start = Position::startpos(v);
        let mut pos = start;
        let mut moves = Vec::new();
        let mut fens = Vec::new();
        for _ in 0..60 {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let mv = legal[rng.gen_range(0..legal.len())];
            fens.push(pos);
            moves.push(pos.uci(mv));
            pos.play(mv);
        }
        let values: Vec<f32> = (0..moves.len()).map(|_| rng.gen_range(-0.9..0.9)).collect();
        let mut out = Vec::new();
        let counts = game_samples(
            &m,
            &format!("{g}"),
            &start.fen(),
            &moves,
            white_result("1-0", "checkmate"),
            &values,
            &DataOptions::default(),
            &mut out,
        )
        .unwrap();
        assert_eq!(counts.kept, out.len());
        assert_eq!(counts.kept + counts.in_check + counts.other + counts.captures, moves.len());
        let quiet: Vec<usize> = (0..moves.len()).filter(|&i| !fens[i].is_check()).collect();
        assert_eq!(quiet.len(), out.len());
        for (s, &i) in out.iter().zip(&quiet) {
            let f = m.features(&fens[i]).unwrap();
            assert_eq!(
                s,
                &Sample::new(
                    &f,
                    value_to_score(values[i], 4000.0),
                    if fens[i].side_to_move() == Color::White { 1.0 } else { -1.0 }
                )
            );
        }
        // Without captures: fewer samples, still none in check.
        let mut out2 = Vec::new();
        let c2 = game_samples(
            &m,
            "g",
            &start.fen(),
            &moves,
            None,
            &values,
            &DataOptions { skip_captures: true, ..DataOptions::default() },
            &mut out2,
        )
        .unwrap();
        assert_eq!(c2.kept + c2.captures, counts.kept);
        // No result (max-plies): the result target is the search value.
        assert!(out2.iter().all(|s| (value_to_score(s.result, 4000.0) - s.score).abs() < 1e-2));
        total += out.len();
    }
    assert!(total > 500);
    let e = game_samples(
        &m,
        "7",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        &["e2e5".to_string()],
        None,
        &[0.0],
        &DataOptions::default(),
        &mut Vec::new(),
    );
    assert!(e.is_err());
}
