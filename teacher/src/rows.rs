//! Rows and chunk metadata for positions of a game (shared by import and labelling).

use vzero_data::{ChunkMeta, Row, Source};
use vzero_encoding::{InputEncoder, MoveEncoder, ENCODING_VERSION};
use vzero_rules::{Game, Move, Variant};

/// Encodes positions and moves of one variant into rows.
pub(crate) struct RowMaker {
    variant: Variant,
    input: InputEncoder,
    moves: MoveEncoder,
}

impl RowMaker {
    pub fn new(variant: Variant) -> RowMaker {
        RowMaker { variant, input: InputEncoder::new(variant), moves: MoveEncoder::new(variant) }
    }

    /// Chunk metadata for rows of `source` written by `worker` (no short-term horizons: those
    /// targets need search values along a game, which these rows do not have).
    pub fn meta(&self, source: Source, worker: &str, network: &str) -> ChunkMeta {
        ChunkMeta {
            variant: self.variant.name().to_string(),
            encoding_version: ENCODING_VERSION,
            planes: self.input.shape(),
            policy_size: self.moves.len(),
            network: network.to_string(),
            worker: worker.to_string(),
            created_unix: vzero_base::now_unix(),
            short_term_horizons: Vec::new(),
            source,
        }
    }

    /// The policy index of `m` in the current position of `game`.
    pub fn index(&self, game: &Game, m: Move) -> Option<u32> {
        self.moves.encode(game.position(), m).map(|i| i as u32)
    }

    /// The legal moves of the current position of `game` with their policy indices.
    pub fn legal(&self, game: &Game) -> Vec<(usize, Move)> {
        self.moves.legal_indices(game.position())
    }

    /// A row for the current position of `game`: its planes (with the repetition count of
    /// the game's history), `policy`, the value target `wdl` (also the row's search value, so
    /// that the learner's q-ratio mix leaves it as it is), `moves_left` (negative: unknown,
    /// no moves-left loss) and the quiescent material target.
    pub fn row(&self, game: &Game, policy: Vec<(u32, f32)>, wdl: [f32; 3], moves_left: f32) -> Row {
        Row {
            planes: self.input.encode_game(game),
            policy_weight: if policy.is_empty() { 0.0 } else { 1.0 },
            policy,
            wdl,
            search_value: wdl[0] - wdl[2],
            moves_left,
            ply: game.moves().len() as u32,
            weight: 1.0,
            material: vzero_mcts::material_target(game.position()),
            material_weight: 1.0,
            ..Row::default()
        }
    }
}
