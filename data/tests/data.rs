use std::fs;

use rand::{rngs::StdRng, Rng, SeedableRng};
use vzero_data::*;

const PLANES: [usize; 3] = [3, 4, 5];
const POLICY: usize = 50;

fn meta(variant: &str) -> ChunkMeta {
    ChunkMeta {
        variant: variant.into(),
        encoding_version: 1,
        planes: PLANES,
        policy_size: POLICY,
        network: "gen-000000-step-000000000".into(),
        worker: "test".into(),
        created_unix: 1_700_000_000,
        short_term_horizons: vec![6, 16],
        source: vzero_data::Source::SelfPlay,
    }
}

fn expect(variant: &str) -> ChunkExpect {
    ChunkExpect { variant: variant.into(), encoding_version: 1, planes: Some(PLANES), policy_size: Some(POLICY) }
}

fn rows(n: usize, tag: u32, seed: u64) -> Vec<Row> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let k = rng.gen_range(0..4);
            let policy: Vec<(u32, f32)> = (0..k).map(|j| (rng.gen_range(0..POLICY as u32), 0.25 * j as f32 + rng.gen::<f32>())).collect();
            Row {
                planes: (0..60).map(|_| if rng.gen_bool(0.3) { 1.0 } else { rng.gen::<f32>() * 0.1 }).collect(),
                policy,
                wdl: [rng.gen(), rng.gen(), rng.gen()],
                search_value: rng.gen_range(-1.0..1.0),
                moves_left: rng.gen_range(0.0..200.0),
                ply: tag,
                weight: rng.gen(),
                policy_weight: (i % 2) as f32,
                opponent_policy: (0..rng.gen_range(0..3)).map(|_| (rng.gen_range(0..POLICY as u32), rng.gen())).collect(),
                opponent_weight: (i % 3 != 2) as u32 as f32,
                short_term: vec![rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)],
                short_term_weight: 1.0,
                material: rng.gen_range(-1.0..1.0),
                material_weight: 1.0,
            }
        })
        .collect()
}

fn games(n: usize) -> Vec<GameRecord> {
    (0..n)
        .map(|i| GameRecord {
            variant: "empire".into(),
            start_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
            moves: vec!["e2e4".into(), "e7e5".into(), format!("g1f{}", 3 - i % 2)],
            result: ["1-0", "0-1", "1/2-1/2"][i % 3].into(),
            reason: "checkmate \"quoted\" ünïcode".into(),
            network: "gen-000001-step-000000100".into(),
            white: "a".into(),
            black: "b".into(),
            priors: vec![0.5, 0.25, 0.125],
            values: vec![0.1, -0.2, 0.3],
        })
        .collect()
}

#[test]
fn round_trip_exact() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path().join("run")).unwrap();
    let p = run.new_chunk_path("w1");
    let r = rows(300, 7, 1);
    let g = games(5);
    write_chunk(&p, &meta("empire"), &r, &g).unwrap();
    let c = Chunk::open(&p).unwrap();
    assert_eq!(c.meta, meta("empire"));
    assert_eq!((c.rows, c.games), (300, 5));
    assert_eq!(c.read_all().unwrap(), r);
    assert_eq!(c.games().unwrap(), g);
    let idx = [299, 0, 5, 5, 100];
    assert_eq!(c.read_rows(&idx).unwrap(), idx.iter().map(|&i| r[i].clone()).collect::<Vec<_>>());
    assert!(c.read_rows(&[300]).is_err());
    c.check(&expect("empire")).unwrap();
    // empty chunk (no rows, no games)
    let p0 = run.new_chunk_path("w1");
    write_chunk(&p0, &meta("empire"), &[], &[]).unwrap();
    let c0 = Chunk::open(&p0).unwrap();
    assert_eq!((c0.rows, c0.games), (0, 0));
    assert!(c0.read_all().unwrap().is_empty());
    assert!(c0.games().unwrap().is_empty());
    assert!(c0.scored_positions().unwrap().is_empty(), "a chunk written without scores has none");
    assert_eq!(run.list_chunks().unwrap(), vec![p, p0]);
}

/// A chunk opens while another open file of it holds an `flock`: what a process spawned while
/// the chunk was being written keeps (CI once read "unable to lock file, errno = 11" and skipped
/// a chunk's games). Chunks are published by rename, so readers need no lock.
#[test]
fn chunks_open_and_are_written_beside_a_held_file_lock() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path().join("run")).unwrap();
    let p = run.new_chunk_path("w1");
    let g = games(3);
    write_chunk(&p, &meta("empire"), &rows(10, 1, 2), &g).unwrap();
    let held = fs::File::open(&p).unwrap();
    held.lock().unwrap(); // exclusive, on another open file description
    let c = Chunk::open(&p).expect("a chunk opens beside another holder's lock");
    assert_eq!(c.games().unwrap(), g);
    drop(c);
    // a writer beside a lock held on another chunk of the run is not disturbed either
    let q = run.new_chunk_path("w1");
    write_chunk(&q, &meta("empire"), &rows(4, 2, 3), &[]).unwrap();
    let other = fs::File::open(&q).unwrap();
    other.lock().unwrap();
    assert_eq!(Chunk::open(&q).unwrap().rows, 4);
    drop((held, other));
}

#[test]
fn scored_positions_round_trip_beside_rows_and_games() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path().join("run")).unwrap();
    let scored: Vec<ScoredPosition> = (0..4)
        .map(|i| ScoredPosition {
            start_fen: format!("fen {i}"),
            moves: (0..i).map(|k| format!("a{k}a{}", k + 1)).collect(),
            score: if i % 2 == 0 { TeacherScore::Cp(37 * i - 50) } else { TeacherScore::Mate(-i) },
            best: "e2e4".into(),
            result: if i == 3 { None } else { Some(1.0 - i as f32) },
            game: if i == 2 { None } else { Some(i as u32 / 2) },
        })
        .collect();
    let r = rows(4, 3, 2);
    let p = run.write_chunk_scored("w2", &meta("empire"), &r, &games(1), &scored).unwrap();
    let c = Chunk::open(&p).unwrap();
    assert_eq!(c.read_all().unwrap(), r);
    assert_eq!(c.games().unwrap(), games(1));
    assert_eq!(c.scored_positions().unwrap(), scored);
}

#[test]
fn invalid_rows_rejected_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let p = run.new_chunk_path("w");
    let mut r = rows(3, 0, 2);
    r[1].policy.push((POLICY as u32, 1.0));
    let e = write_chunk(&p, &meta("empire"), &r, &[]).unwrap_err().to_string();
    assert!(e.contains("policy index 50"), "{e}");
    let mut r = rows(3, 0, 2);
    r[2].planes.pop();
    assert!(write_chunk(&p, &meta("empire"), &r, &[]).is_err());
    let mut r = rows(3, 0, 2);
    r[0].opponent_policy.push((POLICY as u32 + 1, 1.0));
    let e = write_chunk(&p, &meta("empire"), &r, &[]).unwrap_err().to_string();
    assert!(e.contains("opponent policy index 51"), "{e}");
    let mut r = rows(3, 0, 2);
    r[1].short_term.pop();
    let e = write_chunk(&p, &meta("empire"), &r, &[]).unwrap_err().to_string();
    assert!(e.contains("row 1") && e.contains("short-term"), "{e}");
    let mut r = rows(3, 0, 2);
    r[2].material = f32::NAN;
    assert!(write_chunk(&p, &meta("empire"), &r, &[]).unwrap_err().to_string().contains("non-finite"));
    assert!(!p.exists());
    assert_eq!(fs::read_dir(run.data_dir()).unwrap().count(), 0, "no file, no tmp left");
}

#[test]
fn variant_mismatch_names_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let p = run.new_chunk_path("w");
    write_chunk(&p, &meta("shogun"), &rows(4, 0, 3), &[]).unwrap();
    let e = Chunk::open_expect(&p, &expect("empire")).unwrap_err().to_string();
    assert!(e.contains("variant") && e.contains("shogun") && e.contains(&*p.to_string_lossy()), "{e}");
    let mut ex = expect("shogun");
    ex.planes = Some([4, 4, 5]);
    assert!(Chunk::open_expect(&p, &ex).unwrap_err().to_string().contains("planes shape"));
    // the window refuses a foreign variant too (error, not skip)
    let mut w = ReplayWindow::new(&run, expect("empire"), WindowConfig { min_rows: 10, scale: 1.0, exponent: 1.0 }, 0).unwrap();
    assert!(w.refresh().unwrap_err().to_string().contains("variant"));
}

#[test]
fn truncated_and_garbage_files_error_naming_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let p = run.new_chunk_path("w");
    write_chunk(&p, &meta("empire"), &rows(500, 0, 4), &games(3)).unwrap();
    let bytes = fs::read(&p).unwrap();
    for cut in [bytes.len() / 2, bytes.len() - 100, 100, 0] {
        let t = dir.path().join(format!("cut{cut}.h5"));
        fs::write(&t, &bytes[..cut]).unwrap();
        let r = Chunk::open(&t).and_then(|c| c.read_all().map(|_| ()));
        let e = r.expect_err("truncated file must fail").to_string();
        assert!(e.contains(&*t.to_string_lossy()), "{e}");
    }
    let g = dir.path().join("garbage.h5");
    fs::write(&g, b"this is not hdf5 at all").unwrap();
    let e = Chunk::open(&g).unwrap_err().to_string();
    assert!(e.contains("garbage.h5") && e.contains("corrupt"), "{e}");
    assert!(Chunk::open(&dir.path().join("missing.h5")).unwrap_err().to_string().contains("missing.h5"));
}

#[test]
fn atomic_writes_and_tmp_cleanup() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    // A leftover of a killed writer: half a chunk under a tmp name of a dead pid on this host.
    let good = run.new_chunk_path("w");
    write_chunk(&good, &meta("empire"), &rows(200, 0, 5), &[]).unwrap();
    let bytes = fs::read(&good).unwrap();
    let host = fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host: String = host.trim().chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    let dead = run.data_dir().join(format!(".0000000000001-w-000001.h5.{host}.999999999-0.tmp"));
    fs::write(&dead, &bytes[..bytes.len() / 2]).unwrap();
    let live = run.data_dir().join(format!(".0000000000002-w-000002.h5.{host}.{}-0.tmp", std::process::id()));
    fs::write(&live, b"in progress").unwrap();
    let ckpt_tmp = run.checkpoints_dir().join(".gen-000001-step-000000010.json.999999999-3.tmp");
    fs::write(&ckpt_tmp, b"{").unwrap();
    assert_eq!(run.list_chunks().unwrap(), vec![good.clone()]);
    assert_eq!(run.latest_checkpoint().unwrap(), None);
    assert_eq!(run.clean_tmp().unwrap(), 2);
    assert!(!dead.exists() && !ckpt_tmp.exists() && live.exists(), "live writer's tmp is kept");

    // Concurrent writer: every listed chunk is always complete.
    let run2 = run.clone();
    let writer = std::thread::spawn(move || {
        for i in 0..20 {
            let p = run2.new_chunk_path("conc");
            write_chunk(&p, &meta("empire"), &rows(400, i, i as u64), &games(1)).unwrap();
        }
    });
    let mut seen = 0;
    while !writer.is_finished() || seen < 21 {
        let list = run.list_chunks().unwrap();
        for p in &list {
            let c = Chunk::open(p).unwrap_or_else(|e| panic!("listed chunk unreadable: {e}"));
            assert!(c.rows == 200 || c.rows == 400);
        }
        seen = list.len();
        if writer.is_finished() && seen < 21 {
            break;
        }
    }
    writer.join().unwrap();
    assert_eq!(run.list_chunks().unwrap().len(), 21);
    let names: Vec<_> = run.list_chunks().unwrap();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

#[test]
fn checkpoint_names_and_latest() {
    assert_eq!(checkpoint_name(12, 1200), "gen-000012-step-000001200");
    assert_eq!(parse_checkpoint_name("gen-000012-step-000001200"), Some((12, 1200)));
    assert_eq!(parse_checkpoint_name("gen-1-step-x"), None);
    assert_eq!(parse_checkpoint_name("gen-+1-step-2"), None);
    assert_eq!(parse_checkpoint_name("gen--step-2"), None);
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let cd = run.checkpoints_dir();
    fs::write(cd.join("gen-000001-step-000000100.json"), r#"{"step": 100}"#).unwrap();
    fs::write(cd.join("gen-000002-step-000000200.json"), r#"{"step": 200}"#).unwrap();
    fs::write(cd.join("gen-000003-step-000000300.json"), r#"{"st"#).unwrap(); // corrupt: skipped
    fs::write(cd.join("gen-000004-step-000000400.safetensors"), b"x").unwrap(); // no metadata yet
    fs::write(cd.join("notes.json"), b"{}").unwrap();
    let latest = run.latest_checkpoint().unwrap().unwrap();
    assert_eq!(latest, cd.join("gen-000002-step-000000200.json"));
    assert_eq!(run.list_checkpoints().unwrap().len(), 3);
}

#[test]
fn window_growth_formula() {
    let c = WindowConfig { min_rows: 1000, scale: 20.0, exponent: 0.5 };
    assert_eq!(c.window_size(0), 0);
    assert_eq!(c.window_size(500), 500);
    assert_eq!(c.window_size(2_000), 1000); // 20*sqrt(2000)=894 < min
    assert_eq!(c.window_size(10_000), 2000);
    assert_eq!(c.window_size(1_000_000), 20_000);
    assert!(c.window_size(4_000_000) > c.window_size(1_000_000));
    assert!(WindowConfig { min_rows: 1, scale: 0.0, exponent: 0.5 }.validate().is_err());
    assert!(WindowConfig { min_rows: 1, scale: 1.0, exponent: 1.5 }.validate().is_err());
}

fn write_tagged(run: &RunDir, tag: u32, n: usize) {
    let p = run.new_chunk_path("w");
    write_chunk(&p, &meta("empire"), &rows(n, tag, tag as u64), &[]).unwrap();
}

#[test]
fn window_samples_only_newest_chunks_and_grows() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    // window = max(250, 0.5 * total): 10 x 100 rows -> 500 rows = newest 5 chunks
    let cfg = WindowConfig { min_rows: 250, scale: 0.5, exponent: 1.0 };
    let mut w = ReplayWindow::new(&run, expect("empire"), cfg, 42).unwrap();
    assert!(w.sample(4).is_err(), "empty window");
    for tag in 0..10 {
        write_tagged(&run, tag, 100);
    }
    // a corrupt chunk among them is skipped with a warning
    fs::write(run.data_dir().join("0000000000000-bad-000000.h5"), b"garbage").unwrap();
    assert_eq!(w.refresh().unwrap(), 1000);
    assert_eq!(w.skipped().len(), 1);
    assert_eq!((w.total_rows(), w.window_target(), w.window_rows()), (1000, 500, 500));
    let b = w.sample(2000).unwrap();
    assert_eq!(b.len(), 2000);
    assert!(b.ply.iter().all(|&t| t >= 5), "only the 5 newest chunks");
    for t in 5..10 {
        let n = b.ply.iter().filter(|&&p| p == t).count();
        assert!((300..500).contains(&n), "uniform over chunks: tag {t}: {n}");
    }
    // sampled rows are exact copies of stored rows
    let all: Vec<Row> = run.list_chunks().unwrap().iter().filter_map(|p| Chunk::open(p).ok()).flat_map(|c| c.read_all().unwrap()).collect();
    for i in 0..20 {
        assert!(all.contains(&b.row(i)));
    }
    // shuffled: not grouped by chunk
    assert!(b.ply.windows(2).filter(|x| x[0] != x[1]).count() > 1000);
    // more data: the window grows and moves to the newest
    for tag in 10..30 {
        write_tagged(&run, tag, 100);
    }
    assert_eq!(w.refresh().unwrap(), 2000);
    assert_eq!((w.total_rows(), w.window_rows()), (3000, 1500));
    assert_eq!(w.refresh().unwrap(), 0);
    let b = w.sample(500).unwrap();
    assert!(b.ply.iter().all(|&t| t >= 15));
    assert_eq!(w.window_chunks().len(), 15);
}

/// Writes `rows` with the schema-1 layout (no auxiliary targets), as chunks written before
/// schema 2 are.
fn write_schema1(path: &std::path::Path, m: &ChunkMeta, rows: &[Row]) {
    use hdf5::types::VarLenUnicode;
    let f = hdf5::File::create(path).unwrap();
    let n = rows.len();
    let [c, h, w] = m.planes;
    let planes: Vec<f32> = rows.iter().flat_map(|r| r.planes.clone()).collect();
    f.new_dataset::<f32>().shape([n, c, h, w]).create("planes").unwrap().write_raw(&planes).unwrap();
    let mut off = vec![0u64];
    let (mut idx, mut prob) = (Vec::new(), Vec::new());
    for r in rows {
        idx.extend(r.policy.iter().map(|x| x.0));
        prob.extend(r.policy.iter().map(|x| x.1));
        off.push(idx.len() as u64);
    }
    fn ds<T: hdf5::H5Type>(f: &hdf5::File, name: &str, v: &[T]) {
        let d = f.new_dataset::<T>().shape([v.len()]).create(name).unwrap();
        if !v.is_empty() {
            d.write_raw(v).unwrap();
        }
    }
    ds(&f, "policy_offsets", &off);
    ds(&f, "policy_index", &idx);
    ds(&f, "policy_prob", &prob);
    let wdl: Vec<f32> = rows.iter().flat_map(|r| r.wdl).collect();
    f.new_dataset::<f32>().shape([n, 3]).create("wdl").unwrap().write_raw(&wdl).unwrap();
    let col = |g: fn(&Row) -> f32| rows.iter().map(g).collect::<Vec<f32>>();
    ds(&f, "search_value", &col(|r| r.search_value));
    ds(&f, "moves_left", &col(|r| r.moves_left));
    ds(&f, "weight", &col(|r| r.weight));
    ds(&f, "policy_weight", &col(|r| r.policy_weight));
    ds(&f, "ply", &rows.iter().map(|r| r.ply).collect::<Vec<u32>>());
    ds::<VarLenUnicode>(&f, "games", &[]);
    let u64_attr = |name: &str, v: u64| f.new_attr::<u64>().shape(()).create(name).unwrap().write_scalar(&v).unwrap();
    let str_attr = |name: &str, v: &str| {
        let s: VarLenUnicode = v.parse().unwrap();
        f.new_attr::<VarLenUnicode>().shape(()).create(name).unwrap().write_scalar(&s).unwrap()
    };
    u64_attr("schema_version", 1);
    str_attr("variant", &m.variant);
    u64_attr("encoding_version", m.encoding_version as u64);
    u64_attr("policy_size", m.policy_size as u64);
    str_attr("network", &m.network);
    str_attr("worker", &m.worker);
    u64_attr("created_unix", m.created_unix);
}

#[test]
fn schema_1_chunks_read_with_absent_aux_targets() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let old = run.new_chunk_path("old");
    let mut r = rows(50, 1, 9);
    write_schema1(&old, &meta("empire"), &r);
    let c = Chunk::open(&old).unwrap();
    assert_eq!(c.schema_version, 1);
    assert!(c.meta.short_term_horizons.is_empty());
    c.check(&expect("empire")).unwrap();
    // Everything schema 1 stored reads back exactly; the aux targets are absent (weight 0).
    for x in &mut r {
        *x = Row { opponent_policy: vec![], opponent_weight: 0.0, short_term: vec![], short_term_weight: 0.0, material: 0.0, material_weight: 0.0, ..x.clone() };
    }
    assert_eq!(c.read_all().unwrap(), r);

    // A window over old and new chunks: old rows without, new rows with aux targets, laid out
    // for the reader's horizons.
    let new = run.new_chunk_path("new");
    let r2 = rows(50, 2, 10);
    write_chunk(&new, &meta("empire"), &r2, &[]).unwrap();
    assert_eq!(Chunk::open(&new).unwrap().schema_version, SCHEMA_VERSION);
    let mut w = ReplayWindow::new(&run, expect("empire"), WindowConfig { min_rows: 1000, scale: 1.0, exponent: 1.0 }, 3).unwrap();
    w.set_short_term_horizons(&[16, 6]);
    w.refresh().unwrap();
    let b = w.sample(400).unwrap();
    assert_eq!(b.short_term_horizons, vec![16, 6]);
    let (mut old_rows, mut new_rows) = (0, 0);
    for i in 0..b.len() {
        if b.ply[i] == 1 {
            old_rows += 1;
            assert_eq!((b.opponent_weight[i], b.short_term_weight[i], b.material_weight[i]), (0.0, 0.0, 0.0));
            assert!(b.opponent_policy(i).0.is_empty());
        } else {
            new_rows += 1;
            let src = r2.iter().find(|x| x.planes[..] == *b.row_planes(i)).unwrap();
            assert_eq!(b.short_term(i), [src.short_term[1], src.short_term[0]]);
            assert_eq!((b.material[i], b.material_weight[i], b.short_term_weight[i]), (src.material, 1.0, 1.0));
            assert_eq!(b.row(i).opponent_policy, src.opponent_policy);
        }
    }
    assert!(old_rows > 100 && new_rows > 100, "{old_rows} {new_rows}");

    // A future schema is refused, naming the versions read.
    drop((c, w));
    let f = hdf5::File::open_rw(&old).unwrap();
    f.attr("schema_version").unwrap().write_scalar(&(SCHEMA_VERSION as u64 + 1)).unwrap();
    drop(f);
    let e = Chunk::open(&old).unwrap_err().to_string();
    assert!(e.contains("schema version") && e.contains(&format!("1..={SCHEMA_VERSION}")), "{e}");
}

#[test]
fn short_term_columns_follow_the_readers_horizons() {
    let m = ChunkMeta { short_term_horizons: vec![6, 16, 50], ..meta("empire") };
    let mut r = rows(4, 0, 5);
    for (i, x) in r.iter_mut().enumerate() {
        x.short_term = vec![i as f32, 10.0 + i as f32, 20.0 + i as f32];
    }
    let mut b = RowBlock::from_rows(60, &r);
    b.short_term_horizons = m.short_term_horizons.clone();
    let mut picked = b.clone();
    picked.project_short_term(&[50, 6]);
    assert_eq!(picked.short_term(3), [23.0, 3.0]);
    assert!(picked.short_term_weight.iter().all(|&w| w == 1.0));
    let mut none = b.clone();
    none.project_short_term(&[]);
    assert!(none.short_term.is_empty() && none.short_term(2).is_empty());
    let mut missing = b.clone();
    missing.project_short_term(&[6, 32]);
    assert_eq!(missing.short_term(1), [0.0, 0.0]);
    assert!(missing.short_term_weight.iter().all(|&w| w == 0.0));
    // Rows pushed from a block with other horizons have absent short-term targets.
    let mut out = RowBlock::new(60);
    out.short_term_horizons = vec![50, 6];
    out.push_from(&picked, 0);
    out.push_from(&b, 1);
    assert_eq!((out.short_term(0), out.short_term_weight[0]), (&[20.0, 0.0][..], 1.0));
    assert_eq!((out.short_term(1), out.short_term_weight[1]), (&[0.0, 0.0][..], 0.0));
}

#[test]
fn external_chunks_form_a_pool_outside_the_window_with_their_share_and_weight() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let cfg = WindowConfig { min_rows: 100, scale: 0.5, exponent: 1.0 };
    let mut w = ReplayWindow::new(&run, expect("empire"), cfg, 7).unwrap();
    // imported rows (tag 100) and labelled rows (tag 200) before any self-play
    for (tag, source) in [(100, Source::Import), (200, Source::Label)] {
        let mut rs = rows(100, tag, tag as u64);
        rs.iter_mut().for_each(|r| r.weight = 1.0);
        write_chunk(&run.new_chunk_path("x"), &ChunkMeta { source, ..meta("empire") }, &rs, &[]).unwrap();
    }
    w.set_external_mix(ExternalMix { share: 0.25, half_life_rows: 0, weight: 0.5 }).unwrap();
    assert_eq!(w.refresh().unwrap(), 200);
    assert_eq!((w.total_rows(), w.external_rows(), w.window_rows()), (0, 200, 0));
    assert_eq!(w.external_share(), 1.0);
    let b = w.sample(400).unwrap();
    assert!(b.ply.iter().all(|&t| t == 100 || t == 200), "all external before self-play");
    assert!(b.weight.iter().all(|&x| x == 0.5), "external loss weight applied");
    assert_eq!(Chunk::open(&run.list_chunks().unwrap()[0]).unwrap().meta.source, Source::Import);
    // self-play arrives: the window holds only self-play chunks, the pool keeps every external one
    for tag in 0..10 {
        write_tagged(&run, tag, 100);
    }
    w.refresh().unwrap();
    assert_eq!((w.total_rows(), w.external_rows(), w.window_rows()), (1000, 200, 500));
    assert!(w.window_chunks().iter().all(|p| Chunk::open(p).unwrap().meta.source == Source::SelfPlay));
    let b = w.sample(8000).unwrap();
    let external = b.ply.iter().filter(|&&t| t >= 100).count() as f64 / 8000.0;
    assert!((external - 0.25).abs() < 0.03, "external share {external}");
    assert!(b.ply.iter().filter(|&&t| t < 100).all(|&t| t >= 5), "self-play rows from the window only");
    // exclusion
    w.set_external_mix(ExternalMix { share: 0.0, ..ExternalMix::default() }).unwrap();
    assert!(w.sample(1000).unwrap().ply.iter().all(|&t| t < 100));
}

#[test]
fn schema_3_stores_planes_packed_and_reads_them_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    // planes as the encoders make them: marks (0/1 per square) and constant planes
    let mut rng = StdRng::seed_from_u64(3);
    let area = PLANES[1] * PLANES[2];
    let mut rs = rows(300, 1, 9);
    for r in &mut rs {
        r.planes.clear();
        for c in 0..PLANES[0] {
            if c == 1 {
                let v = rng.gen_range(0..8) as f32 / 8.0;
                r.planes.extend(std::iter::repeat(v).take(area));
            } else {
                r.planes.extend((0..area).map(|_| if rng.gen_bool(0.2) { 1.0 } else { 0.0 }));
            }
        }
    }
    let p = run.new_chunk_path("w");
    write_chunk(&p, &meta("empire"), &rs, &[]).unwrap();
    let c = Chunk::open(&p).unwrap();
    assert_eq!(c.schema_version, SCHEMA_VERSION);
    assert_eq!(c.meta.planes, PLANES);
    assert_eq!(c.read_all().unwrap(), rs, "unpacked rows equal the written ones");
    let packed = c.read_packed_block().unwrap();
    let pp = packed.packed.as_ref().unwrap();
    assert_eq!(pp.kinds, vec![PlaneKind::Bits, PlaneKind::Scalar, PlaneKind::Bits]);
    assert_eq!(pp.bytes_per_row(), (2 * area).div_ceil(8) + 4);
    assert!(packed.planes.is_empty() && packed.is_consistent());
    // the window caches packed blocks and samples unpacked rows
    let mut w = ReplayWindow::new(&run, expect("empire"), WindowConfig { min_rows: 100, scale: 1.0, exponent: 1.0 }, 1).unwrap();
    w.refresh().unwrap();
    let b = w.sample(50).unwrap();
    assert!(b.packed.is_none() && b.planes.len() == 50 * PLANES.iter().product::<usize>());
    for i in 0..50 {
        assert!(rs.iter().any(|r| r.planes[..] == *b.row_planes(i)));
    }
    // h5py readers find the documented datasets (opened as vzero opens chunks, without HDF5's
    // file lock: in one process, HDF5 refuses a second open of a file with other lock flags)
    let f = hdf5::File::with_options().with_fapl(|a| a.file_locking(false)).open(&p).unwrap();
    for name in ["planes_bits", "planes_scalar", "planes_dense"] {
        assert_eq!(f.dataset(name).unwrap().shape()[0], 300);
    }
    assert!(f.dataset("planes").is_err());
}

#[test]
fn a_streaming_window_holds_only_its_buffer_and_wanders_over_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    for tag in 0..20 {
        write_tagged(&run, tag, 100);
    }
    let mut w = ReplayWindow::new(&run, expect("empire"), WindowConfig { min_rows: 10_000, scale: 1.0, exponent: 1.0 }, 5).unwrap();
    w.set_stream(Some(300));
    w.refresh().unwrap();
    assert_eq!(w.window_rows(), 2000);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..200 {
        let b = w.sample(100).unwrap();
        assert!(w.cached_rows() <= 400, "{} rows held", w.cached_rows());
        seen.extend(b.ply.iter().copied());
    }
    assert_eq!(seen.len(), 20, "every chunk of the window visited: {seen:?}");
    // without streaming, the whole window is held
    w.set_stream(None);
    for _ in 0..20 {
        w.sample(500).unwrap();
    }
    assert_eq!(w.cached_rows(), 2000);
}

#[test]
fn retired_chunks_are_archived_or_deleted_only_outside_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    for tag in 0..10 {
        write_tagged(&run, tag, 100);
    }
    // window = max(250, 0.5 * total) = 500 rows: the 5 newest chunks
    let cfg = WindowConfig { min_rows: 250, scale: 0.5, exponent: 1.0 };
    let mut w = ReplayWindow::new(&run, expect("empire"), cfg, 1).unwrap();
    w.refresh().unwrap();
    let in_window = w.window_chunks();
    assert_eq!(w.retire(Retention::Keep).unwrap(), 0);
    assert_eq!(w.retire(Retention::Archive).unwrap(), 5);
    assert_eq!(run.list_chunks().unwrap(), in_window, "the window's chunks stay");
    assert_eq!(fs::read_dir(run.root().join("archive/data")).unwrap().count(), 5);
    assert_eq!((w.total_rows(), w.window_rows()), (1000, 500));
    assert!(w.sample(100).unwrap().ply.iter().all(|&t| t >= 5));
    // a new reader counts the retired rows, so the window keeps its size
    let mut again = ReplayWindow::new(&run, expect("empire"), cfg, 1).unwrap();
    again.refresh().unwrap();
    assert_eq!((again.total_rows(), again.window_rows()), (1000, 500));
    for tag in 10..12 {
        write_tagged(&run, tag, 100);
    }
    again.refresh().unwrap();
    assert_eq!(again.window_rows(), 600);
    assert_eq!(again.retire(Retention::Delete).unwrap(), 1);
    assert_eq!(run.list_chunks().unwrap().len(), 6);
    assert_eq!(again.total_rows(), 1200);
}
