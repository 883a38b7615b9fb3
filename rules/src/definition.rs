//! The variant definition format: what a `configs/variants/*.toml` file holds.
//!
//! Ranks in a definition are *relative*: rank 1 is the mover's own back rank, so one list serves
//! both colours. Piece letters are lowercase FEN letters; a promoted type is written `+x` where
//! `x` is its base type.

use serde::Deserialize;
use std::collections::BTreeMap;

/// A whole variant, as read from TOML.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct VariantDef {
    /// Variant id (`empire`).
    pub name: String,
    /// One-line description.
    #[serde(default)]
    pub description: String,
    /// Rules text this definition follows (file name under `shared/rules/`).
    #[serde(default)]
    pub rules_file: String,
    /// Board width (at most 12).
    pub files: usize,
    /// Board height (at most 12).
    pub ranks: usize,
    /// Start position in FEN.
    pub start_fen: String,
    /// FEN order of pieces in hand (lowercase letters); defaults to the order of `pieces`.
    #[serde(default)]
    pub hand_order: Option<String>,
    /// Piece types.
    pub pieces: Vec<PieceDef>,
    /// Pawn rules (double step, en passant).
    #[serde(default)]
    pub pawns: PawnsDef,
    /// Chess-style promotions by choice of piece.
    #[serde(default)]
    pub promotion: Vec<PromotionDef>,
    /// Shogi-style promotions to the `+x` types.
    #[serde(default)]
    pub shogi_promotion: Option<ShogiPromotionDef>,
    /// Drops and captures to hand.
    #[serde(default)]
    pub drops: Option<DropsDef>,
    /// Castling.
    #[serde(default)]
    pub castling: Option<CastlingDef>,
    /// Royal pieces may not face each other on an open line.
    #[serde(default)]
    pub flying_general: Option<FlyingGeneralDef>,
    /// A royal piece reaching these ranks wins at once (campmate).
    #[serde(default)]
    pub flag: Option<FlagDef>,
    /// Dictator double moves of the royal piece.
    #[serde(default)]
    pub dictator: Option<DictatorDef>,
    /// Game end and draw rules.
    #[serde(default)]
    pub end: EndDef,
}

/// One piece type.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct PieceDef {
    /// FEN letter, lowercase; `+x` for the promoted form of `x`.
    pub letter: String,
    /// Name shown to people.
    pub name: String,
    /// Movement in Betza notation (`mQcN`: moves as a queen, captures as a knight).
    pub betza: String,
    /// The piece whose capture loses the game (checkmate applies to it).
    #[serde(default)]
    pub royal: bool,
    /// Pawn rules apply (double step, en passant, chess-style promotion).
    #[serde(default)]
    pub pawn: bool,
    /// Material value in pawns, for cheap evaluations.
    #[serde(default = "one")]
    pub value: f32,
    /// Its letter in SAN, one uppercase letter (Fairy-Stockfish's piece character, such as `G`
    /// for shogun's centaur, where that differs from the FEN letter); default: the FEN text for
    /// White (`N`, `+N`).
    #[serde(default)]
    pub san: Option<String>,
}

fn one() -> f32 {
    1.0
}

/// Pawn options.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct PawnsDef {
    /// Relative ranks from which a pawn may step two squares.
    #[serde(default)]
    pub double_step_ranks: Vec<usize>,
    /// Letters of the piece types that may capture en passant.
    #[serde(default)]
    pub en_passant_types: String,
}

/// A chess-style promotion line.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct PromotionDef {
    /// Relative ranks where it applies (to a pawn arriving there).
    pub ranks: Vec<usize>,
    /// Letters of the pieces a pawn may become.
    pub pieces: String,
    /// Black's choices where they differ from White's.
    #[serde(default)]
    pub pieces_black: Option<String>,
    /// Whether the pawn may also stay a pawn.
    #[serde(default)]
    pub optional: bool,
}

/// Shogi-style promotion (`+`).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ShogiPromotionDef {
    /// Relative ranks of the promotion zone.
    pub zone: Vec<usize>,
    /// `from_or_to`: the move starts or ends in the zone; `to`: it ends there.
    #[serde(default = "from_or_to")]
    pub trigger: String,
    /// Promotion is forced whenever available.
    #[serde(default)]
    pub mandatory: bool,
    /// Most pieces of a promoted type a side may have on the board for a promotion to it.
    #[serde(default)]
    pub limits: BTreeMap<String, u32>,
}

fn from_or_to() -> String {
    "from_or_to".into()
}

/// Drops.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct DropsDef {
    /// Captured pieces go to the captor's hand, demoted.
    #[serde(default = "yes")]
    pub captures_to_hand: bool,
    /// Relative ranks where pieces may be dropped.
    pub ranks: Vec<usize>,
    /// No pawn drop on a file holding an own unpromoted pawn (nifu).
    #[serde(default)]
    pub no_doubled_pawns: bool,
    /// A pawn drop may not give checkmate.
    #[serde(default)]
    pub pawn_drop_mate_illegal: bool,
}

fn yes() -> bool {
    true
}

/// Castling.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct CastlingDef {
    /// The royal piece's start file.
    pub king_file: String,
    /// Letters of the piece types that castle with it (on the corner files).
    pub rook_types: String,
    /// King's destination file castling towards the h-side.
    pub kingside_file: String,
    /// King's destination file castling towards the a-side.
    pub queenside_file: String,
}

/// Flying general: the two royal pieces may not see each other.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct FlyingGeneralDef {
    /// `files` or `files_and_ranks`.
    pub lines: String,
    /// En-passant captures skip the test (Fairy-Stockfish behaviour).
    #[serde(default)]
    pub en_passant_exempt: bool,
}

/// Campmate: reaching the ranks wins.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct FlagDef {
    /// Letter of the piece type that must reach the ranks.
    pub piece: String,
    /// Relative ranks.
    pub ranks: Vec<usize>,
}

/// Dictator: a royal piece that has ended a move in the territory may move twice a turn.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct DictatorDef {
    /// Relative ranks of the enemy territory.
    pub territory: Vec<usize>,
}

/// Game-end rules.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct EndDef {
    /// Value of stalemate for the stalemated side: `win`, `draw` or `loss`.
    #[serde(default = "draw")]
    pub stalemate: String,
    /// Repetitions that end the game (0 = none).
    #[serde(default = "three")]
    pub nfold: u32,
    /// Value of the repetition for the side to move.
    #[serde(default = "draw")]
    pub nfold_value: String,
    /// `halfmove_clock` (since the last irreversible move) or `game` (whole game).
    #[serde(default = "halfmove_clock")]
    pub repetition_window: String,
    /// Moves without progress that draw (0 = none).
    #[serde(default = "fifty")]
    pub nmove: u32,
    /// Letters of the piece types whose moves reset the clock (captures, drops, promotions always do).
    #[serde(default)]
    pub nmove_reset_types: String,
    /// Moves and drops that leave a piece with no possible move are illegal.
    #[serde(default)]
    pub immobility_illegal: bool,
}

impl Default for EndDef {
    fn default() -> Self {
        EndDef {
            stalemate: draw(),
            nfold: 3,
            nfold_value: draw(),
            repetition_window: halfmove_clock(),
            nmove: 50,
            nmove_reset_types: String::new(),
            immobility_illegal: false,
        }
    }
}

fn draw() -> String {
    "draw".into()
}
fn three() -> u32 {
    3
}
fn fifty() -> u32 {
    50
}
fn halfmove_clock() -> String {
    "halfmove_clock".into()
}
