//! The row types: one training position ([`Row`]), many in columnar form ([`RowBlock`]), a
//! finished game ([`GameRecord`]), a teacher-scored position ([`ScoredPosition`]), and a chunk's
//! metadata ([`ChunkMeta`], [`Source`]), with the schema versions that the chunk files carry.

use serde::{Deserialize, Serialize};

use crate::packed::PackedPlanes;

/// Version of the chunk file schema (this crate), stored as the `schema_version` attribute.
/// Version 3 stores the input planes packed ([`PackedPlanes`]: a bit per square of each 0/1
/// plane, one value per constant plane); version 2 added the auxiliary targets (opponent
/// policy, short-term values, material). Versions 1 and 2 stay readable (dense f32 planes;
/// version 1 with the auxiliary targets absent, weight 0).
pub const SCHEMA_VERSION: u32 = 3;

/// Oldest chunk schema version that is still read.
pub const MIN_SCHEMA_VERSION: u32 = 1;


/// One training example (a position where a search was run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// C*H*W input planes (`vzero_encoding::InputEncoder` output).
    pub planes: Vec<f32>,
    /// Sparse search policy target (move index, probability); may be empty.
    pub policy: Vec<(u32, f32)>,
    /// Final game result for this row's side to move: win, draw, loss (for a game stopped at
    /// max plies, which has no result: the search's W/D/L at this row).
    pub wdl: [f32; 3],
    /// Root value of the search for the side to move, in [-1, 1].
    pub search_value: f32,
    /// Plies from this position to the end of the game.
    pub moves_left: f32,
    pub ply: u32,
    /// Row weight (value/all losses).
    pub weight: f32,
    /// 1 for a full search (policy recorded), 0 for a cheap one.
    pub policy_weight: f32,
    /// Policy target of the next searched position of the game (the opponent's reply): its
    /// search policy when that was a full search, else one-hot on the move played there.
    pub opponent_policy: Vec<(u32, f32)>,
    /// 1 when `opponent_policy` is a target, 0 at the last position of a game.
    pub opponent_weight: f32,
    /// Short-term value targets for the side to move, one per horizon of the chunk
    /// ([`ChunkMeta::short_term_horizons`]), in [-1, 1].
    pub short_term: Vec<f32>,
    /// 1 when `short_term` is a target, 0 when absent (e.g. read from a schema-1 chunk).
    pub short_term_weight: f32,
    /// `tanh(quiescent material balance / 4)` for the side to move (`vzero_mcts::material_target`).
    pub material: f32,
    /// 1 when `material` is a target, 0 when absent.
    pub material_weight: f32,
}

/// One finished game, for opening statistics and PGN export.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    pub variant: String,
    pub start_fen: String,
    /// UCI moves.
    pub moves: Vec<String>,
    /// "1-0", "0-1" or "1/2-1/2".
    pub result: String,
    /// checkmate, stalemate, campmate, repetition, fifty-move, resign, adjudication, max-plies.
    pub reason: String,
    /// Network id (checkpoint name) that played it.
    pub network: String,
    pub white: String,
    pub black: String,
    /// Per move: prior of the played move; NaN (`null` in the file) where the move had no
    /// search (a self-play game's random opening).
    #[serde(deserialize_with = "nan_for_null")]
    pub priors: Vec<f32>,
    /// Per move: search value for the mover; NaN (`null`) where the move had no search.
    #[serde(deserialize_with = "nan_for_null")]
    pub values: Vec<f32>,
}

/// Reads a list of numbers in which `null` (how JSON writes NaN) stands for NaN.
fn nan_for_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<f32>, D::Error> {
    let v: Vec<Option<f32>> = Deserialize::deserialize(d)?;
    Ok(v.into_iter().map(|x| x.unwrap_or(f32::NAN)).collect())
}

/// A position a teacher searched, with the teacher's raw score: kept beside labelled rows and
/// the games of `vzero nnue loop`, so that evaluators trained on centipawns (Fairy-Stockfish's
/// NNUE) get the score itself and not only the W/D/L it was turned into.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoredPosition {
    /// FEN the moves start from.
    pub start_fen: String,
    /// UCI moves from `start_fen` to the position (its history, for repetitions).
    pub moves: Vec<String>,
    /// The teacher's score for the side to move.
    pub score: TeacherScore,
    /// The teacher's move (UCI).
    pub best: String,
    /// White's result of the game the position comes from (1, 0, -1), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<f32>,
    /// Index of the game the position comes from in its chunk's `games` (a multi-PV sibling:
    /// the game it branches off), when the writer knew it; chunks written before it have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<u32>,
}

/// A UCI engine's score as it printed it, from the side to move: `cp` in its centipawns, or
/// `mate` in moves (negative: the side to move is mated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TeacherScore {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves (negative: being mated).
    Mate(i32),
}

/// File-level metadata of a chunk (HDF5 attributes; `planes` and `policy_size` too).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkMeta {
    pub variant: String,
    pub encoding_version: u32,
    /// [C, H, W] of one row's input planes.
    pub planes: [usize; 3],
    /// Size of the move-index space (every policy index is below it).
    pub policy_size: usize,
    pub network: String,
    pub worker: String,
    pub created_unix: u64,
    /// Horizons (plies) of the rows' short-term value targets, in column order (empty in
    /// schema-1 chunks).
    #[serde(default)]
    pub short_term_horizons: Vec<u32>,
    /// Where the rows come from (HDF5 attribute `source`; chunks without it are self-play).
    #[serde(default)]
    pub source: Source,
}

/// Where a chunk's rows come from. The learner samples self-play rows through the growing
/// window and the others (imported games, teacher labels) as a separate pool with their own
/// share and loss weight (`[learn.external]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Rows of vzero's own self-play searches.
    #[default]
    SelfPlay,
    /// Rows replayed from imported games (`vzero import`): the move played, the game result.
    Import,
    /// Rows labelled by a teacher (`vzero label`): its best move and its score.
    Label,
}

impl Source {
    /// The attribute value (`selfplay`, `import`, `label`).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::SelfPlay => "selfplay",
            Source::Import => "import",
            Source::Label => "label",
        }
    }

    /// Parses an attribute value written by [`Source::as_str`].
    pub fn parse(s: &str) -> Option<Source> {
        [Source::SelfPlay, Source::Import, Source::Label].into_iter().find(|x| x.as_str() == s)
    }

    /// True for the rows of other players than vzero's self-play (imported or labelled).
    pub fn is_external(self) -> bool {
        self != Source::SelfPlay
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ChunkMeta {
    /// C*H*W.
    pub fn plane_len(&self) -> usize {
        self.planes.iter().product()
    }
}

/// Rows in column form (what a chunk stores, what the window caches and what a sampled batch
/// is). `policy_offsets` has `len() + 1` entries; row `i`'s policy is
/// `policy_index/policy_prob[policy_offsets[i]..policy_offsets[i+1]]`, and likewise for the
/// opponent policy. `short_term` holds `short_term_horizons.len()` values per row.
///
/// The input planes are either unpacked, C*H*W f32 per row in `planes` (a sampled batch, rows
/// being built), or packed in `packed` with `planes` empty (what the window caches:
/// [`RowBlock::pack`]); row accessors unpack on demand.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowBlock {
    /// C*H*W of one row.
    pub plane_len: usize,
    pub planes: Vec<f32>,
    /// The planes in packed form (then `planes` is empty).
    pub packed: Option<PackedPlanes>,
    pub policy_offsets: Vec<u64>,
    pub policy_index: Vec<u32>,
    pub policy_prob: Vec<f32>,
    pub wdl: Vec<[f32; 3]>,
    pub search_value: Vec<f32>,
    pub moves_left: Vec<f32>,
    pub ply: Vec<u32>,
    pub weight: Vec<f32>,
    pub policy_weight: Vec<f32>,
    pub opponent_offsets: Vec<u64>,
    pub opponent_index: Vec<u32>,
    pub opponent_prob: Vec<f32>,
    pub opponent_weight: Vec<f32>,
    /// Horizons (plies) of the `short_term` columns.
    pub short_term_horizons: Vec<u32>,
    pub short_term: Vec<f32>,
    pub short_term_weight: Vec<f32>,
    pub material: Vec<f32>,
    pub material_weight: Vec<f32>,
}

/// Appends `src` to the CSR columns (`offsets`, `index`, `prob`).
fn push_csr(offsets: &mut Vec<u64>, index: &mut Vec<u32>, prob: &mut Vec<f32>, src: (&[u32], &[f32])) {
    index.extend_from_slice(src.0);
    prob.extend_from_slice(src.1);
    offsets.push(index.len() as u64);
}

/// Row `i` of CSR columns.
fn csr_row<'a>(offsets: &[u64], index: &'a [u32], prob: &'a [f32], i: usize) -> (&'a [u32], &'a [f32]) {
    let r = offsets[i] as usize..offsets[i + 1] as usize;
    (&index[r.clone()], &prob[r])
}

impl RowBlock {
    /// An empty block for rows of `plane_len` plane values and no short-term horizons.
    pub fn new(plane_len: usize) -> Self {
        RowBlock { plane_len, policy_offsets: vec![0], opponent_offsets: vec![0], ..Default::default() }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.wdl.len()
    }

    /// True when the block has no rows.
    pub fn is_empty(&self) -> bool {
        self.wdl.is_empty()
    }

    /// Empties the block, keeping its allocations, `plane_len` and horizons.
    pub fn clear(&mut self) {
        self.planes.clear();
        if let Some(p) = &self.packed {
            self.packed = Some(PackedPlanes::new(p.kinds.clone(), p.area));
        }
        self.policy_offsets.clear();
        self.policy_offsets.push(0);
        self.policy_index.clear();
        self.policy_prob.clear();
        self.wdl.clear();
        self.search_value.clear();
        self.moves_left.clear();
        self.ply.clear();
        self.weight.clear();
        self.policy_weight.clear();
        self.opponent_offsets.clear();
        self.opponent_offsets.push(0);
        self.opponent_index.clear();
        self.opponent_prob.clear();
        self.opponent_weight.clear();
        self.short_term.clear();
        self.short_term_weight.clear();
        self.material.clear();
        self.material_weight.clear();
    }

    /// Row `i`'s policy target as (indices, probabilities).
    pub fn policy(&self, i: usize) -> (&[u32], &[f32]) {
        csr_row(&self.policy_offsets, &self.policy_index, &self.policy_prob, i)
    }

    /// Row `i`'s opponent policy target as (indices, probabilities).
    pub fn opponent_policy(&self, i: usize) -> (&[u32], &[f32]) {
        csr_row(&self.opponent_offsets, &self.opponent_index, &self.opponent_prob, i)
    }

    /// Row `i`'s short-term value targets (one per horizon).
    pub fn short_term(&self, i: usize) -> &[f32] {
        let k = self.short_term_horizons.len();
        &self.short_term[i * k..(i + 1) * k]
    }

    /// Row `i`'s input planes, unpacked.
    pub fn row_planes(&self, i: usize) -> std::borrow::Cow<'_, [f32]> {
        match &self.packed {
            Some(p) => {
                let mut out = vec![0.0; self.plane_len];
                p.unpack_row(i, &mut out);
                std::borrow::Cow::Owned(out)
            }
            None => std::borrow::Cow::Borrowed(&self.planes[i * self.plane_len..(i + 1) * self.plane_len]),
        }
    }

    /// Packs the planes (see [`PackedPlanes::pack`]; `channels` planes of `plane_len /
    /// channels` squares); a no-op when they are packed already.
    pub fn pack(&mut self, channels: usize) {
        if self.packed.is_none() && channels > 0 {
            self.packed = Some(PackedPlanes::pack(&self.planes, channels, self.plane_len / channels));
            self.planes = Vec::new();
        }
    }

    /// Unpacks the planes into `planes` (a no-op when they are not packed).
    pub fn unpack(&mut self) {
        if let Some(p) = self.packed.take() {
            self.planes = p.unpack_all();
        }
    }

    /// Appends one row. Panics if `row.planes.len() != plane_len` (use [`write_chunk`]'s checks
    /// for untrusted data); `row.short_term` should have one value per horizon of the block.
    pub fn push(&mut self, row: &Row) {
        assert_eq!(row.planes.len(), self.plane_len, "row planes length");
        self.unpack();
        self.planes.extend_from_slice(&row.planes);
        for &(i, p) in &row.policy {
            self.policy_index.push(i);
            self.policy_prob.push(p);
        }
        self.policy_offsets.push(self.policy_index.len() as u64);
        self.wdl.push(row.wdl);
        self.search_value.push(row.search_value);
        self.moves_left.push(row.moves_left);
        self.ply.push(row.ply);
        self.weight.push(row.weight);
        self.policy_weight.push(row.policy_weight);
        for &(i, p) in &row.opponent_policy {
            self.opponent_index.push(i);
            self.opponent_prob.push(p);
        }
        self.opponent_offsets.push(self.opponent_index.len() as u64);
        self.opponent_weight.push(row.opponent_weight);
        self.short_term.extend_from_slice(&row.short_term);
        self.short_term_weight.push(row.short_term_weight);
        self.material.push(row.material);
        self.material_weight.push(row.material_weight);
    }

    /// Appends row `i` of `other` (same `plane_len`). When the two blocks' short-term horizons
    /// differ, the row's short-term targets are absent here (zeros, weight 0).
    pub fn push_from(&mut self, other: &RowBlock, i: usize) {
        let same_layout = matches!((&self.packed, &other.packed), (Some(a), Some(b)) if a.kinds == b.kinds && a.area == b.area);
        if same_layout {
            if let (Some(mine), Some(theirs)) = (self.packed.as_mut(), other.packed.as_ref()) {
                mine.push_from(theirs, i);
            }
        } else {
            self.unpack();
            match &other.packed {
                Some(theirs) => {
                    let start = self.planes.len();
                    self.planes.resize(start + self.plane_len, 0.0);
                    theirs.unpack_row(i, &mut self.planes[start..]);
                }
                None => self.planes.extend_from_slice(&other.planes[i * other.plane_len..(i + 1) * other.plane_len]),
            }
        }
        push_csr(&mut self.policy_offsets, &mut self.policy_index, &mut self.policy_prob, other.policy(i));
        self.wdl.push(other.wdl[i]);
        self.search_value.push(other.search_value[i]);
        self.moves_left.push(other.moves_left[i]);
        self.ply.push(other.ply[i]);
        self.weight.push(other.weight[i]);
        self.policy_weight.push(other.policy_weight[i]);
        push_csr(&mut self.opponent_offsets, &mut self.opponent_index, &mut self.opponent_prob, other.opponent_policy(i));
        self.opponent_weight.push(other.opponent_weight[i]);
        if self.short_term_horizons == other.short_term_horizons {
            self.short_term.extend_from_slice(other.short_term(i));
            self.short_term_weight.push(other.short_term_weight[i]);
        } else {
            let len = self.short_term.len() + self.short_term_horizons.len();
            self.short_term.resize(len, 0.0);
            self.short_term_weight.push(0.0);
        }
        self.material.push(other.material[i]);
        self.material_weight.push(other.material_weight[i]);
    }

    /// Re-lays the short-term columns out for the horizons `wanted` (in that order): each is
    /// taken from the column of the same horizon; if any is missing, every row's short-term
    /// targets become absent (zeros, weight 0).
    pub fn project_short_term(&mut self, wanted: &[u32]) {
        if self.short_term_horizons == wanted {
            return;
        }
        let (n, k) = (self.len(), self.short_term_horizons.len());
        let cols: Option<Vec<usize>> = wanted.iter().map(|h| self.short_term_horizons.iter().position(|x| x == h)).collect();
        let mut out = Vec::with_capacity(n * wanted.len());
        match cols {
            Some(cols) => {
                for i in 0..n {
                    out.extend(cols.iter().map(|&c| self.short_term[i * k + c]));
                }
            }
            None => {
                out.resize(n * wanted.len(), 0.0);
                self.short_term_weight.iter_mut().for_each(|w| *w = 0.0);
            }
        }
        self.short_term = out;
        self.short_term_horizons = wanted.to_vec();
    }

    /// Row `i` as a [`Row`].
    pub fn row(&self, i: usize) -> Row {
        let pairs = |(idx, prob): (&[u32], &[f32])| idx.iter().copied().zip(prob.iter().copied()).collect();
        Row {
            planes: self.row_planes(i).into_owned(),
            policy: pairs(self.policy(i)),
            wdl: self.wdl[i],
            search_value: self.search_value[i],
            moves_left: self.moves_left[i],
            ply: self.ply[i],
            weight: self.weight[i],
            policy_weight: self.policy_weight[i],
            opponent_policy: pairs(self.opponent_policy(i)),
            opponent_weight: self.opponent_weight[i],
            short_term: self.short_term(i).to_vec(),
            short_term_weight: self.short_term_weight[i],
            material: self.material[i],
            material_weight: self.material_weight[i],
        }
    }

    /// All rows as [`Row`]s.
    pub fn to_rows(&self) -> Vec<Row> {
        (0..self.len()).map(|i| self.row(i)).collect()
    }

    /// A block of `rows` (no short-term horizons recorded: set `short_term_horizons` to match
    /// the rows' `short_term` values).
    pub fn from_rows(plane_len: usize, rows: &[Row]) -> Self {
        let mut b = RowBlock::new(plane_len);
        for r in rows {
            b.push(r);
        }
        b
    }

    /// Whether the columns agree on the number of rows: `plane_len` planes, one value of each
    /// per-row column and `short_term_horizons.len()` short-term values per row, `len() + 1`
    /// offsets and as many probabilities as indices in each CSR.
    pub fn is_consistent(&self) -> bool {
        let n = self.len();
        let per_row = [
            self.search_value.len(),
            self.moves_left.len(),
            self.ply.len(),
            self.weight.len(),
            self.policy_weight.len(),
            self.opponent_weight.len(),
            self.short_term_weight.len(),
            self.material.len(),
            self.material_weight.len(),
        ];
        let planes_ok = match &self.packed {
            Some(p) => self.planes.is_empty() && p.len() == n && p.plane_len() == self.plane_len && p.check().is_ok(),
            None => self.planes.len() == n * self.plane_len,
        };
        planes_ok
            && per_row.iter().all(|&l| l == n)
            && self.short_term.len() == n * self.short_term_horizons.len()
            && self.policy_offsets.len() == n + 1
            && self.opponent_offsets.len() == n + 1
            && self.policy_index.len() == self.policy_prob.len()
            && self.opponent_index.len() == self.opponent_prob.len()
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.packed.as_ref().map_or(0, |p| p.heap_bytes())
            + (self.planes.len() + self.short_term.len()) * 4
            + (self.policy_offsets.len() + self.opponent_offsets.len()) * 8
            + (self.policy_index.len() + self.opponent_index.len()) * 8
            + self.len() * (12 + 4 * 9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A move without a search (NaN prior and value) survives the JSON a chunk stores games in.
    #[test]
    fn game_records_keep_moves_without_a_search() {
        let g = GameRecord {
            variant: "empire".into(),
            start_fen: "startpos".into(),
            moves: vec!["a3a4".into(), "a7a6".into(), "h3h4".into()],
            result: "1/2-1/2".into(),
            reason: "max-plies".into(),
            network: "n".into(),
            white: "n".into(),
            black: "n".into(),
            priors: vec![f32::NAN, 0.25, 0.5],
            values: vec![f32::NAN, -0.1, 0.2],
        };
        let text = serde_json::to_string(&g).unwrap();
        let back: GameRecord = serde_json::from_str(&text).unwrap();
        assert!(back.priors[0].is_nan() && back.values[0].is_nan());
        assert_eq!((&back.priors[1..], &back.values[1..], &back.moves), (&g.priors[1..], &g.values[1..], &g.moves));
    }
}
