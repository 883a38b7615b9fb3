//! Writes a small sample chunk (3 rows, 1 game) to the given path, e.g. to check the schema
//! from Python: `cargo run -p vzero-data --example sample_chunk -- /tmp/sample.h5`.

use vzero_data::{write_chunk, ChunkMeta, GameRecord, Row};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "sample.h5".into());
    let meta = ChunkMeta {
        variant: "empire".into(),
        encoding_version: 1,
        planes: [2, 2, 3],
        policy_size: 10,
        network: "gen-000001-step-000000100".into(),
        worker: "sample".into(),
        created_unix: 1_700_000_000,
        short_term_horizons: vec![6, 16],
        source: vzero_data::Source::SelfPlay,
    };
    let rows: Vec<Row> = (0..3)
        .map(|i| Row {
            planes: (0..12).map(|k| (k * (i + 1)) as f32).collect(),
            policy: if i == 1 { vec![] } else { vec![(i as u32, 0.75), (9, 0.25)] },
            wdl: [1.0, 0.0, 0.0],
            search_value: 0.5,
            moves_left: 10.0 - i as f32,
            ply: i as u32,
            weight: 1.0,
            policy_weight: if i == 1 { 0.0 } else { 1.0 },
            opponent_policy: if i == 2 { vec![] } else { vec![(i as u32 + 1, 1.0)] },
            opponent_weight: if i == 2 { 0.0 } else { 1.0 },
            short_term: vec![0.4, 0.6],
            short_term_weight: 1.0,
            material: 0.25f32.tanh(),
            material_weight: 1.0,
        })
        .collect();
    let game = GameRecord {
        variant: "empire".into(),
        start_fen: "startpos".into(),
        moves: vec!["e2e4".into(), "e7e5".into(), "d1h5".into()],
        result: "1-0".into(),
        reason: "checkmate".into(),
        network: meta.network.clone(),
        white: "w".into(),
        black: "b".into(),
        priors: vec![0.5, 0.4, 0.3],
        values: vec![0.1, -0.1, 0.9],
    };
    write_chunk(std::path::Path::new(&path), &meta, &rows, &[game])?;
    println!("wrote {path}");
    Ok(())
}
