//! The variant mapping: which Fairy-Stockfish piece type each vzero piece is, and the feature
//! layout that follows from it (Fairy-Stockfish's `Variant::conclude()`).
//!
//! A mapping is data: a table from a vzero piece (its definition letter, `k` or `+f`) to a
//! [`FsfPieceType`]. Fairy-Stockfish orders the types of a variant by its internal `PieceType`
//! enum with the king moved last, so the table decides the whole layout; `empire` and `shogun`
//! have built-in tables (`[empire:chess]` and `[shogun:crazyhouse]` of Fairy-Stockfish's
//! `variants.ini`).

use crate::error::{NnueError, Result};
use vzero_rules::variant::MAX_TYPES;
use vzero_rules::{Color, PieceType, Position, Square, Variant};

/// Fairy-Stockfish's internal piece types (`enum PieceType` in its `types.h`), with their enum
/// values: the order of the feature planes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum FsfPieceType {
    Pawn = 1,
    Knight,
    Bishop,
    Rook,
    Queen,
    Fers,
    Alfil,
    FersAlfil,
    Silver,
    Aiwok,
    Bers,
    Archbishop,
    Chancellor,
    Amazon,
    Knibis,
    Biskni,
    Kniroo,
    Rookni,
    ShogiPawn,
    Lance,
    ShogiKnight,
    Gold,
    DragonHorse,
    Clobber,
    Breakthrough,
    Immobile,
    Cannon,
    JanggiCannon,
    Soldier,
    Horse,
    Elephant,
    JanggiElephant,
    Banner,
    Wazir,
    Commoner,
    Centaur,
    Custom1,
    Custom2,
    Custom3,
    Custom4,
    Custom5,
    Custom6,
    Custom7,
    Custom8,
    /// Always the last type (value 63).
    King = 63,
}

use FsfPieceType as T;

/// Every type with its `variants.ini` name and midgame value (`PieceValue[MG]`; `None` for the
/// custom pieces, whose value Fairy-Stockfish estimates from their moves).
const TYPES: [(FsfPieceType, &str, Option<i32>); 45] = [
    (T::Pawn, "pawn", Some(126)),
    (T::Knight, "knight", Some(781)),
    (T::Bishop, "bishop", Some(825)),
    (T::Rook, "rook", Some(1276)),
    (T::Queen, "queen", Some(2538)),
    (T::Fers, "fers", Some(420)),
    (T::Alfil, "alfil", Some(350)),
    (T::FersAlfil, "fersAlfil", Some(700)),
    (T::Silver, "silver", Some(660)),
    (T::Aiwok, "aiwok", Some(2300)),
    (T::Bers, "bers", Some(1800)),
    (T::Archbishop, "archbishop", Some(2200)),
    (T::Chancellor, "chancellor", Some(2300)),
    (T::Amazon, "amazon", Some(2700)),
    (T::Knibis, "knibis", Some(1100)),
    (T::Biskni, "biskni", Some(750)),
    (T::Kniroo, "kniroo", Some(1050)),
    (T::Rookni, "rookni", Some(800)),
    (T::ShogiPawn, "shogiPawn", Some(90)),
    (T::Lance, "lance", Some(400)),
    (T::ShogiKnight, "shogiKnight", Some(420)),
    (T::Gold, "gold", Some(720)),
    (T::DragonHorse, "dragonHorse", Some(1550)),
    (T::Clobber, "clobber", Some(300)),
    (T::Breakthrough, "breakthrough", Some(300)),
    (T::Immobile, "immobile", Some(50)),
    (T::Cannon, "cannon", Some(800)),
    (T::JanggiCannon, "janggiCannon", Some(800)),
    (T::Soldier, "soldier", Some(200)),
    (T::Horse, "horse", Some(520)),
    (T::Elephant, "elephant", Some(300)),
    (T::JanggiElephant, "janggiElephant", Some(340)),
    (T::Banner, "banner", Some(3400)),
    (T::Wazir, "wazir", Some(400)),
    (T::Commoner, "commoner", Some(700)),
    (T::Centaur, "centaur", Some(1800)),
    (T::Custom1, "customPiece1", None),
    (T::Custom2, "customPiece2", None),
    (T::Custom3, "customPiece3", None),
    (T::Custom4, "customPiece4", None),
    (T::Custom5, "customPiece5", None),
    (T::Custom6, "customPiece6", None),
    (T::Custom7, "customPiece7", None),
    (T::Custom8, "customPiece8", None),
    (T::King, "king", Some(0)),
];

impl FsfPieceType {
    /// All types, in Fairy-Stockfish's enum order.
    pub fn all() -> impl Iterator<Item = FsfPieceType> {
        TYPES.iter().map(|t| t.0)
    }

    fn entry(self) -> &'static (FsfPieceType, &'static str, Option<i32>) {
        TYPES.iter().find(|t| t.0 == self).unwrap_or(&TYPES[0])
    }

    /// The name Fairy-Stockfish's `variants.ini` uses (`fers`, `dragonHorse`, `customPiece1`).
    pub fn name(self) -> &'static str {
        self.entry().1
    }

    /// The type named `name` in `variants.ini` terms (case-insensitive).
    pub fn from_name(name: &str) -> Option<FsfPieceType> {
        TYPES.iter().find(|t| t.1.eq_ignore_ascii_case(name)).map(|t| t.0)
    }

    /// Fairy-Stockfish's midgame value in internal units (`PieceValue[MG]`; the king 0);
    /// `None` for the custom pieces.
    pub fn mg_value(self) -> Option<i32> {
        self.entry().2
    }

    /// Fairy-Stockfish's enum value.
    pub fn value(self) -> u8 {
        self as u8
    }
}

/// Fairy-Stockfish's largest board with `largeboards=yes`: 12 files.
pub const MAX_FILES: usize = 12;
/// Fairy-Stockfish's largest board with `largeboards=yes`: 10 ranks.
pub const MAX_RANKS: usize = 10;
/// Most features a `largeboards=yes` build holds (`SQUARE_NB² · 19`, SQUARE_NB = 120).
pub const MAX_DIMENSIONS_LARGEBOARDS: usize = 120 * 120 * 19;
/// Most features the standard 8×8 build holds (`64² · 19`).
pub const MAX_DIMENSIONS_STANDARD: usize = 64 * 64 * 19;

/// One row of a mapping table: a vzero piece by its definition letter (`k`, `+f`) and its
/// Fairy-Stockfish type.
pub type PieceMapping<'a> = (&'a str, FsfPieceType);

/// `[empire:chess]`: P N B R Q, soldier, the custom pieces e c t d, king.
const EMPIRE: &[PieceMapping<'static>] = &[
    ("k", T::King),
    ("q", T::Queen),
    ("r", T::Rook),
    ("b", T::Bishop),
    ("n", T::Knight),
    ("p", T::Pawn),
    ("e", T::Custom1),
    ("c", T::Custom2),
    ("t", T::Custom3),
    ("d", T::Custom4),
    ("s", T::Soldier),
];
/// Fairy-Stockfish's estimated midgame values of empire's custom pieces (`piece_value` in its
/// `psqt.cpp`), in internal units.
const EMPIRE_VALUES: &[(FsfPieceType, i32)] =
    &[(T::Custom1, 1153), (T::Custom2, 1480), (T::Custom3, 1558), (T::Custom4, 1153)];

/// `[shogun:crazyhouse]`: P N B R Q, fers, archbishop, chancellor, commoner, centaur, king; the
/// queen is the promoted fers.
const SHOGUN: &[PieceMapping<'static>] = &[
    ("k", T::King),
    ("p", T::Pawn),
    ("n", T::Knight),
    ("b", T::Bishop),
    ("r", T::Rook),
    ("f", T::Fers),
    ("+p", T::Commoner),
    ("+n", T::Centaur),
    ("+b", T::Archbishop),
    ("+r", T::Chancellor),
    ("+f", T::Queen),
];

/// A built-in mapping: the variant's name, its table, values for its custom pieces.
struct Builtin {
    name: &'static str,
    table: &'static [PieceMapping<'static>],
    values: &'static [(FsfPieceType, i32)],
}

/// Built-in tables by variant name.
const BUILTIN: &[Builtin] = &[
    Builtin { name: "empire", table: EMPIRE, values: EMPIRE_VALUES },
    Builtin { name: "shogun", table: SHOGUN, values: &[] },
];

/// Marker for "no slot" in [`FsfMapping`]'s per-type tables.
const NO_SLOT: u8 = u8::MAX;

/// A vzero variant as Fairy-Stockfish's `HalfKAv2Variants` sees it: piece types in
/// Fairy-Stockfish's order (king last), planes, hand slots, king blocks, the bucket divisor.
#[derive(Clone, Debug)]
pub struct FsfMapping {
    variant: Variant,
    files: usize,
    ranks: usize,
    /// Fairy-Stockfish types of the variant in plane order (enum order, king last).
    types: Vec<FsfPieceType>,
    /// Slot (index into `types`) of each vzero piece type.
    slot_of: [u8; MAX_TYPES],
    /// Slot of the NNUE king (shared plane, king blocks), if the variant has one.
    king_slot: Option<u8>,
    /// Hand slots per type and colour (`2·files`), 0 without hands.
    pockets: usize,
    /// Whether Black's view flips ranks (always, unless Black's flag region holds rank 8).
    flip_black: bool,
    /// Number of king blocks (squares the king can reach; 1 without an NNUE king).
    king_blocks: usize,
    /// Pieces on the start board (`nnueMaxPieces`).
    max_pieces: usize,
    /// Material value (internal units) per slot, for [`crate::Network::material`].
    values: Vec<i32>,
    // Precomputed for feature extraction, indexed by vzero piece type.
    pub(crate) plane_own: [u32; MAX_TYPES],
    pub(crate) plane_opp: [u32; MAX_TYPES],
    pub(crate) hand_own: [u32; MAX_TYPES],
    pub(crate) hand_opp: [u32; MAX_TYPES],
    /// Oriented square for [White, Black] perspectives, per vzero square.
    pub(crate) orient: [Vec<u16>; 2],
    /// Offset of the king block of each oriented king square.
    pub(crate) king_block: Vec<u32>,
    /// The vzero piece type of each slot, in slot order.
    pub(crate) by_slot: Vec<PieceType>,
}

/// The refusal of `variant` with `reason`.
fn unsupported(variant: Variant, reason: impl Into<String>) -> NnueError {
    NnueError::Unsupported { variant: variant.name().to_string(), reason: reason.into() }
}

/// The definition letter of a vzero piece (`k`, `+f`).
fn letter_of(variant: Variant, pt: usize) -> String {
    variant.pieces()[pt].fen(Color::Black)
}

/// Counts the pieces on the board of `pos`: all of them, and those of type `pt` per colour.
fn count_pieces(pos: &Position, pt: Option<PieceType>) -> (usize, [usize; 2]) {
    let v = pos.variant();
    let mut all = 0;
    let mut of_type = [0; 2];
    for sq in 0..v.files() * v.ranks() {
        if let Some(p) = pos.piece_at(Square(sq as u8)) {
            all += 1;
            if Some(p.kind) == pt {
                of_type[p.color.index()] += 1;
            }
        }
    }
    (all, of_type)
}

impl FsfMapping {
    /// The mapping of a variant: its built-in table (`empire`, `shogun`). A variant that
    /// Fairy-Stockfish cannot hold, or one without a table, is refused with one line saying why.
    pub fn for_variant(variant: Variant) -> Result<FsfMapping> {
        check_board(variant)?;
        let Some(b) = BUILTIN.iter().find(|b| b.name == variant.name()) else {
            let known: Vec<&str> = builtin_names().collect();
            return Err(unsupported(
                variant,
                format!(
                    "no Fairy-Stockfish piece types are known for its pieces (built in: {}); \
                     a definition must name each piece's Fairy-Stockfish type",
                    known.join(", ")
                ),
            ));
        };
        Ok(FsfMapping::from_types(variant, b.table)?.with_values(b.values))
    }

    /// The mapping given by a table from each vzero piece (its definition letter, `k`, `+f`,
    /// either case) to its Fairy-Stockfish type. Every piece of the variant needs a row; two
    /// pieces may not share a type.
    pub fn from_types(variant: Variant, table: &[PieceMapping<'_>]) -> Result<FsfMapping> {
        check_board(variant)?;
        let pieces = variant.pieces();
        if pieces.len() > MAX_TYPES {
            return Err(unsupported(variant, format!("it has {} piece types, vzero holds {MAX_TYPES}", pieces.len())));
        }
        let mut fsf_of = Vec::with_capacity(pieces.len());
        for (pt, info) in pieces.iter().enumerate() {
            let letter = letter_of(variant, pt);
            let rows: Vec<FsfPieceType> =
                table.iter().filter(|r| r.0.eq_ignore_ascii_case(&letter)).map(|r| r.1).collect();
            match rows[..] {
                [t] => fsf_of.push(t),
                [] => {
                    return Err(unsupported(
                        variant,
                        format!("piece '{letter}' ({}) has no Fairy-Stockfish type", info.name),
                    ))
                }
                _ => {
                    return Err(unsupported(
                        variant,
                        format!("piece '{letter}' has more than one Fairy-Stockfish type"),
                    ))
                }
            }
        }
        if let Some((letter, _)) =
            table.iter().find(|r| !(0..pieces.len()).any(|pt| r.0.eq_ignore_ascii_case(&letter_of(variant, pt))))
        {
            return Err(unsupported(
                variant,
                format!("the mapping names piece '{letter}', which the variant does not have"),
            ));
        }
        for (i, t) in fsf_of.iter().enumerate() {
            if let Some(j) = fsf_of[..i].iter().position(|u| u == t) {
                return Err(unsupported(
                    variant,
                    format!(
                        "pieces '{}' and '{}' are both Fairy-Stockfish's {}",
                        letter_of(variant, j),
                        letter_of(variant, i),
                        t.name()
                    ),
                ));
            }
        }
        let mut types = fsf_of.clone();
        types.sort();
        let slot = |t: FsfPieceType| types.iter().position(|&u| u == t).unwrap_or(0) as u8;
        let mut slot_of = [NO_SLOT; MAX_TYPES];
        for (pt, &t) in fsf_of.iter().enumerate() {
            slot_of[pt] = slot(t);
        }

        // Fairy-Stockfish's NNUE king: the king type, if it takes no part in promotions and the
        // start position has exactly one of each colour; else every type has two planes and
        // there is one king block.
        let start = Position::startpos(variant);
        let (max_pieces, _) = count_pieces(&start, None);
        if max_pieces == 0 {
            return Err(unsupported(variant, "its start position has no pieces (the bucket divides by their number)"));
        }
        let king_pt = fsf_of.iter().position(|&t| t == T::King);
        let king_slot = king_pt.and_then(|k| {
            let info = &pieces[k];
            let promoted_into = variant.def().promotion.iter().any(|p| {
                let list = format!("{}{}", p.pieces, p.pieces_black.as_deref().unwrap_or(""));
                vzero_rules::variant::letter_list(&list).contains(&letter_of(variant, k))
            });
            let promotes = info.promoted || info.base.is_some() || info.promotes_to.is_some() || promoted_into;
            let (_, kings) = count_pieces(&start, Some(PieceType(k as u8)));
            (!promotes && kings == [1, 1]).then(|| slot(T::King))
        });

        let files = variant.files();
        let ranks = variant.ranks();
        let nsq = files * ranks;
        let ntypes = types.len();
        let has_king = king_slot.is_some() as usize;
        let captures_to_hand = variant.def().drops.as_ref().is_some_and(|d| d.captures_to_hand);
        let uses_hands = variant.has_drops() && (captures_to_hand || ntypes != 1);
        let pockets = if uses_hands { 2 * files } else { 0 };
        let non_drop = (2 * ntypes - has_king) * nsq;
        let piece_indices = non_drop + 2 * (ntypes - has_king) * pockets;
        let king_blocks = if has_king == 1 { nsq } else { 1 };
        let dims = king_blocks * piece_indices;
        if dims > MAX_DIMENSIONS_LARGEBOARDS {
            return Err(unsupported(
                variant,
                format!("it needs {dims} features, Fairy-Stockfish holds at most {MAX_DIMENSIONS_LARGEBOARDS}"),
            ));
        }

        // Fairy-Stockfish flips Black's view unless Black's flag region holds (absolute) rank 8.
        let flip_black =
            !variant.def().flag.as_ref().is_some_and(|f| f.ranks.iter().any(|&r| ranks.checked_sub(r) == Some(7)));

        let mut plane_own = [0; MAX_TYPES];
        let mut plane_opp = [0; MAX_TYPES];
        let mut hand_own = [0; MAX_TYPES];
        let mut hand_opp = [0; MAX_TYPES];
        for pt in 0..pieces.len() {
            let i = slot_of[pt] as usize;
            let shared = Some(i as u8) == king_slot;
            plane_own[pt] = (2 * i * nsq) as u32;
            plane_opp[pt] = ((2 * i + !shared as usize) * nsq) as u32;
            hand_own[pt] = (2 * i * pockets + non_drop) as u32;
            hand_opp[pt] = ((2 * i + 1) * pockets + non_drop) as u32;
        }
        let orient = [
            (0..nsq).map(|s| s as u16).collect(),
            (0..nsq)
                .map(|s| {
                    let (f, r) = (s % files, s / files);
                    (if flip_black { (ranks - 1 - r) * files + f } else { s }) as u16
                })
                .collect(),
        ];
        let king_block = (0..nsq).map(|s| if has_king == 1 { (s * piece_indices) as u32 } else { 0 }).collect();
        let values = types.iter().map(|t| t.mg_value().unwrap_or(0)).collect();
        let mut by_slot = vec![PieceType(0); ntypes];
        for pt in 0..pieces.len() {
            by_slot[slot_of[pt] as usize] = PieceType(pt as u8);
        }
        let mut m = FsfMapping {
            variant,
            files,
            ranks,
            types,
            slot_of,
            king_slot,
            pockets,
            flip_black,
            king_blocks,
            max_pieces,
            values,
            plane_own,
            plane_opp,
            hand_own,
            hand_opp,
            orient,
            king_block,
            by_slot,
        };
        // Custom pieces without a stated value: vzero's value in pawns times a midgame pawn.
        for (pt, info) in pieces.iter().enumerate() {
            let i = m.slot_of[pt] as usize;
            if m.types[i].mg_value().is_none() {
                m.values[i] = (info.value * 126.0).round() as i32;
            }
        }
        Ok(m)
    }

    /// The mapping given by Fairy-Stockfish type names, as a definition file would state them:
    /// `(piece letter, variants.ini name)`, e.g. `("+f", "queen")`, `("e", "customPiece1")`.
    /// An unknown name is refused, naming the piece and the known names.
    pub fn from_names(variant: Variant, names: &[(&str, &str)]) -> Result<FsfMapping> {
        let mut table = Vec::with_capacity(names.len());
        for &(letter, name) in names {
            let Some(t) = FsfPieceType::from_name(name) else {
                let known: Vec<&str> = FsfPieceType::all().map(FsfPieceType::name).collect();
                return Err(unsupported(
                    variant,
                    format!(
                        "piece '{letter}': '{name}' is not a Fairy-Stockfish piece type (one of {})",
                        known.join(", ")
                    ),
                ));
            };
            table.push((letter, t));
        }
        FsfMapping::from_types(variant, &table)
    }

    /// The same mapping with these material values (internal units) for the given types; used
    /// by [`crate::Network::material`]. Types the variant lacks are ignored.
    pub fn with_values(mut self, values: &[(FsfPieceType, i32)]) -> FsfMapping {
        for &(t, v) in values {
            if let Some(i) = self.types.iter().position(|&u| u == t) {
                self.values[i] = v;
            }
        }
        self
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The variant's name.
    pub fn name(&self) -> &'static str {
        self.variant.name()
    }

    /// Board width.
    pub fn files(&self) -> usize {
        self.files
    }

    /// Board height.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// Squares per plane, `files · ranks` (dense numbering `rank · files + file`).
    pub fn squares(&self) -> usize {
        self.files * self.ranks
    }

    /// The Fairy-Stockfish types in plane order (enum order, king last).
    pub fn piece_types(&self) -> &[FsfPieceType] {
        &self.types
    }

    /// The Fairy-Stockfish type of a vzero piece type.
    pub fn fsf_type(&self, pt: PieceType) -> Option<FsfPieceType> {
        let s = *self.slot_of.get(pt.index())?;
        self.types.get(s as usize).copied()
    }

    /// Plane-order slot (index into [`FsfMapping::piece_types`]) of a vzero piece type.
    pub fn slot(&self, pt: PieceType) -> Option<usize> {
        let s = *self.slot_of.get(pt.index())?;
        (s != NO_SLOT).then_some(s as usize)
    }

    /// Slot of the NNUE king (its one plane is shared by both colours), if the variant has one.
    pub fn king_slot(&self) -> Option<usize> {
        self.king_slot.map(usize::from)
    }

    /// Whether pieces in hand are features (drops with captures to hand).
    pub fn uses_hands(&self) -> bool {
        self.pockets > 0
    }

    /// Hand slots per type and colour (`2 · files`; 0 without hands).
    pub fn pockets(&self) -> usize {
        self.pockets
    }

    /// Whether Black's view flips ranks (a flip, not a 180° rotation).
    pub fn flips_black(&self) -> bool {
        self.flip_black
    }

    /// Board features per king block: `(2T − 1) · squares` with a shared king plane.
    pub fn non_drop_indices(&self) -> usize {
        (2 * self.types.len() - self.king_slot.is_some() as usize) * self.squares()
    }

    /// Features per king block, hand slots included.
    pub fn piece_indices(&self) -> usize {
        self.non_drop_indices() + 2 * (self.types.len() - self.king_slot.is_some() as usize) * self.pockets
    }

    /// Number of king blocks: one per square the king can reach (one without an NNUE king).
    pub fn king_blocks(&self) -> usize {
        self.king_blocks
    }

    /// Number of input features (rows of the feature transformer).
    pub fn dimensions(&self) -> usize {
        self.king_blocks * self.piece_indices()
    }

    /// Pieces on the start board (`nnueMaxPieces`), the divisor of the bucket.
    pub fn max_pieces(&self) -> usize {
        self.max_pieces
    }

    /// Whether the standard (not `largeboards=yes`) Fairy-Stockfish build can load the net.
    pub fn fits_standard_build(&self) -> bool {
        self.files <= 8 && self.ranks <= 8 && self.dimensions() <= MAX_DIMENSIONS_STANDARD
    }

    /// Material value (internal units) of each slot, as the material net uses it.
    pub fn values(&self) -> &[i32] {
        &self.values
    }

    /// Whether `variant` is this mapping's variant (the same compiled tables).
    pub(crate) fn is_for(&self, variant: Variant) -> bool {
        match (self.variant, variant) {
            (Variant::Small(a), Variant::Small(b)) => std::ptr::eq(a, b),
            (Variant::Large(a), Variant::Large(b)) => std::ptr::eq(a, b),
            _ => false,
        }
    }
}

/// Refuses boards larger than Fairy-Stockfish's 12 files × 10 ranks.
fn check_board(variant: Variant) -> Result<()> {
    let (f, r) = (variant.files(), variant.ranks());
    if f > MAX_FILES || r > MAX_RANKS {
        let what = if r > MAX_RANKS { format!("{r} ranks") } else { format!("{f} files") };
        return Err(unsupported(
            variant,
            format!("its board has {what}; Fairy-Stockfish holds at most {MAX_FILES} files and {MAX_RANKS} ranks"),
        ));
    }
    Ok(())
}

/// Names of the variants with a built-in mapping.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|b| b.name)
}
