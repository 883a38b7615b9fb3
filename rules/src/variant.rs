//! Variants: a [`VariantDef`] compiled into the attack and rule tables the engine runs on.

use crate::betza;
use crate::bitboard::{Bb192, Bitboard};
use crate::definition::VariantDef;
use crate::error::{Error, Result};
use crate::types::{Color, PieceType};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Most piece types a variant may define.
pub const MAX_TYPES: usize = 24;
/// Largest hand count tracked by the hash.
pub(crate) const MAX_HAND: usize = 64;

/// The eight slider directions; the first four increase the square index.
pub(crate) const DIRS: [(i32, i32); 8] = [(0, 1), (1, 0), (1, 1), (-1, 1), (0, -1), (-1, 0), (-1, -1), (1, -1)];
/// Orthogonal directions as a mask over [`DIRS`].
pub(crate) const ORTH: u8 = 0b0011_0011;

/// Built-in variant definitions, embedded in the binary.
pub const BUILTIN: &[(&str, &str)] = &[
    ("empire", include_str!("../../configs/variants/empire.toml")),
    ("shogun", include_str!("../../configs/variants/shogun.toml")),
    ("spqr", include_str!("../../configs/variants/spqr.toml")),
    ("empire-faceoff", include_str!("../../configs/variants/empire-faceoff.toml")),
    ("shogun-auto", include_str!("../../configs/variants/shogun-auto.toml")),
];

/// Names of the built-in variants.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// Everything about one piece type that is not a table.
#[derive(Clone, Debug)]
pub struct PieceInfo {
    /// Lowercase letter of the type, or of its base type for promoted types.
    pub letter: char,
    /// Written `+x` in FEN: the promoted form of `base`.
    pub promoted: bool,
    /// Name shown to people.
    pub name: String,
    /// Betza movement.
    pub betza: String,
    /// Checkmate applies to it.
    pub royal: bool,
    /// Pawn rules apply.
    pub pawn: bool,
    /// Material value in pawns.
    pub value: f32,
    /// For promoted types: the type it demotes to.
    pub base: Option<PieceType>,
    /// For promotable types: the shogi-style promoted type.
    pub promotes_to: Option<PieceType>,
    /// Its text in SAN (`N`, `G`; `+N` for a promoted type without a SAN letter of its own).
    pub san: String,
}

impl PieceInfo {
    /// FEN text of the type for `color` (`P`, `+f`).
    pub fn fen(&self, color: Color) -> String {
        let c = if color == Color::White { self.letter.to_ascii_uppercase() } else { self.letter };
        if self.promoted {
            format!("+{c}")
        } else {
            c.to_string()
        }
    }
}

/// Game-end value for the side it applies to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Value {
    /// The side wins.
    Win,
    /// Nobody wins.
    Draw,
    /// The side loses.
    Loss,
}

fn value(s: &str, field: &str, src: &str) -> Result<Value> {
    match s {
        "win" => Ok(Value::Win),
        "draw" => Ok(Value::Draw),
        "loss" => Ok(Value::Loss),
        _ => Err(verr(src, format!("{field} must be win, draw or loss, not '{s}'"))),
    }
}

fn verr(src: &str, message: String) -> Error {
    Error::Variant { source_name: crate::echo(src), message }
}

/// Castling geometry for one side and wing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CastleWing {
    pub king_to: usize,
    pub rook_from: usize,
    pub rook_to: usize,
}

/// A compiled variant: metadata plus precomputed tables for bitboard type `B`.
#[derive(Debug)]
pub struct Rules<B: Bitboard> {
    /// The definition this was compiled from.
    pub def: VariantDef,
    /// Piece types, indexed by [`PieceType`].
    pub pieces: Vec<PieceInfo>,
    /// Hand pieces in FEN order.
    pub hand_order: Vec<PieceType>,
    pub(crate) files: usize,
    pub(crate) ranks: usize,
    pub(crate) nsq: usize,
    pub(crate) ntypes: usize,
    pub(crate) all: B,
    pub(crate) file_bb: Vec<B>,
    pub(crate) rank_bb: Vec<B>,
    pub(crate) rays: Vec<[B; 8]>,
    pub(crate) between: Vec<B>,
    pub(crate) line: Vec<B>,
    pub(crate) quiet_leaps: Vec<B>,
    pub(crate) capture_leaps: Vec<B>,
    pub(crate) capture_from: Vec<B>,
    pub(crate) quiet_dirs: [[u8; MAX_TYPES]; 2],
    pub(crate) capture_dirs: [[u8; MAX_TYPES]; 2],
    pub(crate) leaper_capture_types: [u32; 2],
    pub(crate) pawn_types: u32,
    pub(crate) royal_types: u32,
    pub(crate) double_step: [B; 2],
    pub(crate) ep_types: u32,
    pub(crate) chess_promo: [Vec<(B, Vec<PieceType>, bool)>; 2],
    pub(crate) promo_region: [B; 2],
    pub(crate) zone: [B; 2],
    pub(crate) shogi: bool,
    pub(crate) shogi_from_too: bool,
    pub(crate) shogi_mandatory: bool,
    pub(crate) limit: [u8; MAX_TYPES],
    pub(crate) drops: bool,
    pub(crate) captures_to_hand: bool,
    pub(crate) drop_region: [B; 2],
    pub(crate) nifu: bool,
    pub(crate) pawn_drop_mate_illegal: bool,
    pub(crate) castling: Option<[[CastleWing; 2]; 2]>,
    pub(crate) castle_king_from: [usize; 2],
    pub(crate) castle_rook_types: u32,
    pub(crate) castle_mask: Vec<u8>,
    pub(crate) flying: Option<u8>,
    pub(crate) flying_ep_exempt: bool,
    pub(crate) flag: Option<(u32, [B; 2])>,
    pub(crate) dictator: Option<[B; 2]>,
    pub(crate) stalemate: Value,
    pub(crate) nfold: u32,
    pub(crate) nfold_value: Value,
    pub(crate) repetition_whole_game: bool,
    pub(crate) nmove: u32,
    pub(crate) nmove_reset: u32,
    pub(crate) immobile: Vec<B>,
    pub(crate) z_psq: Vec<u64>,
    pub(crate) z_hand: Vec<u64>,
    pub(crate) z_side: u64,
    pub(crate) z_castle: [u64; 16],
    pub(crate) z_ep: Vec<u64>,
    pub(crate) z_dictator: [u64; 2],
    pub(crate) z_pending: Vec<u64>,
}

struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl<B: Bitboard> Rules<B> {
    /// Board width.
    pub fn files(&self) -> usize {
        self.files
    }
    /// Board height.
    pub fn ranks(&self) -> usize {
        self.ranks
    }
    /// Number of squares.
    pub fn squares(&self) -> usize {
        self.nsq
    }
    /// Square from file and rank (from 0), if on the board.
    #[inline]
    pub(crate) fn sq(&self, file: i32, rank: i32) -> Option<usize> {
        if file >= 0 && rank >= 0 && (file as usize) < self.files && (rank as usize) < self.ranks {
            Some(rank as usize * self.files + file as usize)
        } else {
            None
        }
    }
    #[inline]
    pub(crate) fn idx(&self, c: Color, pt: usize) -> usize {
        c.index() * MAX_TYPES + pt
    }
    /// Squares a slider moving along `dirs` reaches from `sq` given occupancy `occ`.
    #[inline]
    pub(crate) fn slide(&self, sq: usize, dirs: u8, occ: B) -> B {
        let mut out = B::EMPTY;
        let rays = &self.rays[sq];
        let mut d = dirs;
        while d != 0 {
            let i = d.trailing_zeros() as usize;
            d &= d - 1;
            let ray = rays[i];
            let blockers = ray & occ;
            if blockers.is_empty() {
                out |= ray;
            } else {
                let b = if i < 4 { blockers.lsb() } else { blockers.msb() };
                out |= ray ^ self.rays[b][i];
            }
        }
        out
    }
    /// Squares strictly between `a` and `b` on a common line (empty if none).
    #[inline]
    pub(crate) fn between(&self, a: usize, b: usize) -> B {
        self.between[a * self.nsq + b]
    }
    /// The whole line through `a` and `b` (empty if they are not aligned).
    #[inline]
    pub(crate) fn line(&self, a: usize, b: usize) -> B {
        self.line[a * self.nsq + b]
    }
    /// Piece type with FEN letter `letter` (lowercase) and promoted flag.
    pub fn piece_by_letter(&self, letter: char, promoted: bool) -> Option<PieceType> {
        self.pieces
            .iter()
            .position(|p| p.letter == letter && p.promoted == promoted)
            .map(|i| PieceType(i as u8))
    }

    fn abs_ranks(&self, rel: &[usize], c: Color, what: &str, src: &str) -> Result<B> {
        let mut b = B::EMPTY;
        for &r in rel {
            if r == 0 || r > self.ranks {
                return Err(verr(src, format!("{what}: rank {r} is off the board (1..={})", self.ranks)));
            }
            let abs = if c == Color::White { r - 1 } else { self.ranks - r };
            b |= self.rank_bb[abs];
        }
        Ok(b)
    }

    fn type_mask(&self, letters: &str, what: &str, src: &str) -> Result<u32> {
        let mut m = 0u32;
        for t in letter_list(letters) {
            let pt = self.lookup(&t).ok_or_else(|| verr(src, format!("{what}: unknown piece '{t}'")))?;
            m |= 1 << pt.0;
        }
        Ok(m)
    }

    fn lookup(&self, letter: &str) -> Option<PieceType> {
        let (promoted, rest) = match letter.strip_prefix('+') {
            Some(r) => (true, r),
            None => (false, letter),
        };
        let mut it = rest.chars();
        let c = it.next()?;
        if it.next().is_some() {
            return None;
        }
        self.piece_by_letter(c.to_ascii_lowercase(), promoted)
    }

    /// Compiles a definition. `src` names it in errors.
    pub fn compile(def: &VariantDef, src: &str) -> Result<Rules<B>> {
        let (files, ranks) = (def.files, def.ranks);
        if !(2..=12).contains(&files) || !(2..=12).contains(&ranks) {
            return Err(verr(src, format!("board {files}x{ranks}: files and ranks must be 2..=12")));
        }
        let nsq = files * ranks;
        if nsq > B::CAPACITY || nsq > B::mailbox(0).as_ref().len() {
            return Err(verr(src, format!("{nsq} squares do not fit this board representation")));
        }
        if def.pieces.is_empty() || def.pieces.len() > MAX_TYPES {
            return Err(verr(src, format!("{} piece types: need 1..={MAX_TYPES}", def.pieces.len())));
        }
        let mut pieces = Vec::new();
        for p in &def.pieces {
            let (promoted, rest) = match p.letter.strip_prefix('+') {
                Some(r) => (true, r),
                None => (false, p.letter.as_str()),
            };
            let mut chars = rest.chars();
            let letter = match (chars.next(), chars.next()) {
                (Some(c), None) if c.is_ascii_lowercase() => c,
                _ => return Err(verr(src, format!("piece letter '{}' must be one lowercase letter, optionally after '+'", p.letter))),
            };
            if pieces.iter().any(|q: &PieceInfo| q.letter == letter && q.promoted == promoted) {
                return Err(verr(src, format!("piece letter '{}' defined twice", p.letter)));
            }
            betza::parse(&p.betza).map_err(|e| verr(src, format!("piece '{}' betza '{}': {e}", p.letter, p.betza)))?;
            let san = match &p.san {
                Some(t) if t.len() == 1 && t.bytes().all(|b| b.is_ascii_uppercase()) => t.clone(),
                Some(t) => return Err(verr(src, format!("piece '{}' san '{t}' must be one uppercase letter", p.letter))),
                None => p.letter.to_ascii_uppercase(),
            };
            if pieces.iter().any(|q: &PieceInfo| q.san == san) {
                return Err(verr(src, format!("piece '{}': SAN letter '{san}' is used twice", p.letter)));
            }
            pieces.push(PieceInfo {
                letter,
                promoted,
                name: p.name.clone(),
                betza: p.betza.clone(),
                royal: p.royal,
                pawn: p.pawn,
                value: p.value,
                base: None,
                promotes_to: None,
                san,
            });
        }
        for i in 0..pieces.len() {
            if pieces[i].promoted {
                let base = pieces
                    .iter()
                    .position(|q| !q.promoted && q.letter == pieces[i].letter)
                    .ok_or_else(|| verr(src, format!("promoted piece '+{}' has no base piece '{}'", pieces[i].letter, pieces[i].letter)))?;
                pieces[i].base = Some(PieceType(base as u8));
                pieces[base].promotes_to = Some(PieceType(i as u8));
            }
        }
        if !pieces.iter().any(|p| p.royal) {
            return Err(verr(src, "no royal piece (set royal = true on the king)".into()));
        }
        let ntypes = pieces.len();
        let mut r = Rules::<B> {
            def: def.clone(),
            pieces,
            hand_order: Vec::new(),
            files,
            ranks,
            nsq,
            ntypes,
            all: B::EMPTY,
            file_bb: vec![B::EMPTY; files],
            rank_bb: vec![B::EMPTY; ranks],
            rays: vec![[B::EMPTY; 8]; nsq],
            between: vec![B::EMPTY; nsq * nsq],
            line: vec![B::EMPTY; nsq * nsq],
            quiet_leaps: vec![B::EMPTY; 2 * MAX_TYPES * nsq],
            capture_leaps: vec![B::EMPTY; 2 * MAX_TYPES * nsq],
            capture_from: vec![B::EMPTY; 2 * MAX_TYPES * nsq],
            quiet_dirs: [[0; MAX_TYPES]; 2],
            capture_dirs: [[0; MAX_TYPES]; 2],
            leaper_capture_types: [0; 2],
            pawn_types: 0,
            royal_types: 0,
            double_step: [B::EMPTY; 2],
            ep_types: 0,
            chess_promo: [Vec::new(), Vec::new()],
            promo_region: [B::EMPTY; 2],
            zone: [B::EMPTY; 2],
            shogi: false,
            shogi_from_too: true,
            shogi_mandatory: false,
            limit: [u8::MAX; MAX_TYPES],
            drops: false,
            captures_to_hand: false,
            drop_region: [B::EMPTY; 2],
            nifu: false,
            pawn_drop_mate_illegal: false,
            castling: None,
            castle_king_from: [0; 2],
            castle_rook_types: 0,
            castle_mask: vec![0; nsq],
            flying: None,
            flying_ep_exempt: false,
            flag: None,
            dictator: None,
            stalemate: Value::Draw,
            nfold: 0,
            nfold_value: Value::Draw,
            repetition_whole_game: false,
            nmove: 0,
            nmove_reset: 0,
            immobile: vec![B::EMPTY; 2 * MAX_TYPES],
            z_psq: Vec::new(),
            z_hand: Vec::new(),
            z_side: 0,
            z_castle: [0; 16],
            z_ep: Vec::new(),
            z_dictator: [0; 2],
            z_pending: Vec::new(),
        };
        r.geometry();
        r.movement()?;
        r.rules(def, src)?;
        r.zobrist();
        Ok(r)
    }

    fn geometry(&mut self) {
        let (files, ranks) = (self.files as i32, self.ranks as i32);
        for rank in 0..ranks {
            for file in 0..files {
                let s = self.sq(file, rank).unwrap();
                let b = B::square(s);
                self.all |= b;
                self.file_bb[file as usize] |= b;
                self.rank_bb[rank as usize] |= b;
                for (d, &(dx, dy)) in DIRS.iter().enumerate() {
                    let mut ray = B::EMPTY;
                    let (mut f, mut k) = (file + dx, rank + dy);
                    while let Some(t) = self.sq(f, k) {
                        ray |= B::square(t);
                        f += dx;
                        k += dy;
                    }
                    self.rays[s][d] = ray;
                }
            }
        }
        for a in 0..self.nsq {
            for d in 0..8 {
                for b in self.rays[a][d].iter() {
                    let n = self.nsq;
                    self.between[a * n + b] = self.rays[a][d] & self.rays[b][d ^ 4];
                    self.line[a * n + b] = self.rays[a][d] | self.rays[a][d ^ 4] | B::square(a);
                }
            }
        }
    }

    fn movement(&mut self) -> Result<()> {
        for pt in 0..self.ntypes {
            let atoms = betza::parse(&self.pieces[pt].betza).expect("validated");
            if self.pieces[pt].pawn {
                self.pawn_types |= 1 << pt;
            }
            if self.pieces[pt].royal {
                self.royal_types |= 1 << pt;
            }
            for c in Color::ALL {
                let sign = if c == Color::White { 1 } else { -1 };
                let i = self.idx(c, pt);
                for atom in &atoms {
                    for &(dx, dy) in &atom.vectors {
                        let (dx, dy) = (dx, dy * sign);
                        if atom.rider {
                            let d = DIRS.iter().position(|&v| v == (dx, dy)).expect("rider along a line") as u8;
                            if atom.quiet {
                                self.quiet_dirs[c.index()][pt] |= 1 << d;
                            }
                            if atom.capture {
                                self.capture_dirs[c.index()][pt] |= 1 << d;
                            }
                            continue;
                        }
                        if atom.capture {
                            self.leaper_capture_types[c.index()] |= 1 << pt;
                        }
                        for s in 0..self.nsq {
                            let (f, k) = ((s % self.files) as i32, (s / self.files) as i32);
                            if let Some(t) = self.sq(f + dx, k + dy) {
                                if atom.quiet {
                                    self.quiet_leaps[i * self.nsq + s] |= B::square(t);
                                }
                                if atom.capture {
                                    self.capture_leaps[i * self.nsq + s] |= B::square(t);
                                    self.capture_from[i * self.nsq + t] |= B::square(s);
                                }
                            }
                        }
                    }
                }
                for s in 0..self.nsq {
                    let n = self.nsq;
                    let reach = self.quiet_leaps[i * n + s]
                        | self.capture_leaps[i * n + s]
                        | self.slide(s, self.quiet_dirs[c.index()][pt] | self.capture_dirs[c.index()][pt], B::EMPTY);
                    if reach.is_empty() {
                        self.immobile[i] |= B::square(s);
                    }
                }
            }
        }
        Ok(())
    }

    fn rules(&mut self, def: &VariantDef, src: &str) -> Result<()> {
        // Hands.
        let order = match &def.hand_order {
            Some(o) => o.clone(),
            None => self.pieces.iter().filter(|p| !p.promoted && !p.royal).map(|p| p.letter).collect(),
        };
        for t in letter_list(&order) {
            let pt = self.lookup(&t).ok_or_else(|| verr(src, format!("hand_order: unknown piece '{t}'")))?;
            self.hand_order.push(pt);
        }
        for c in Color::ALL {
            self.double_step[c.index()] = self.abs_ranks(&def.pawns.double_step_ranks, c, "pawns.double_step_ranks", src)?;
        }
        self.ep_types = self.type_mask(&def.pawns.en_passant_types, "pawns.en_passant_types", src)?;
        for p in &def.promotion {
            for c in Color::ALL {
                let region = self.abs_ranks(&p.ranks, c, "promotion.ranks", src)?;
                let letters = match (&p.pieces_black, c) {
                    (Some(b), Color::Black) => b.clone(),
                    _ => p.pieces.clone(),
                };
                let mut choices = Vec::new();
                for t in letter_list(&letters) {
                    choices.push(self.lookup(&t).ok_or_else(|| verr(src, format!("promotion.pieces: unknown piece '{t}'")))?);
                }
                self.promo_region[c.index()] |= region;
                self.chess_promo[c.index()].push((region, choices, p.optional));
            }
        }
        if let Some(sp) = &def.shogi_promotion {
            self.shogi = true;
            self.shogi_mandatory = sp.mandatory;
            self.shogi_from_too = match sp.trigger.as_str() {
                "from_or_to" => true,
                "to" => false,
                t => return Err(verr(src, format!("shogi_promotion.trigger must be from_or_to or to, not '{t}'"))),
            };
            for c in Color::ALL {
                self.zone[c.index()] = self.abs_ranks(&sp.zone, c, "shogi_promotion.zone", src)?;
            }
            for (t, &n) in &sp.limits {
                let pt = self.lookup(t).ok_or_else(|| verr(src, format!("shogi_promotion.limits: unknown piece '{t}'")))?;
                self.limit[pt.index()] = n.min(254) as u8;
            }
        }
        if let Some(d) = &def.drops {
            self.drops = true;
            self.captures_to_hand = d.captures_to_hand;
            self.nifu = d.no_doubled_pawns;
            self.pawn_drop_mate_illegal = d.pawn_drop_mate_illegal;
            for c in Color::ALL {
                self.drop_region[c.index()] = self.abs_ranks(&d.ranks, c, "drops.ranks", src)?;
            }
        }
        if let Some(cd) = &def.castling {
            let file = |s: &str, what: &str| -> Result<usize> {
                let mut ch = s.chars();
                match (ch.next(), ch.next()) {
                    (Some(f), None) if f.is_ascii_lowercase() && ((f as u8 - b'a') as usize) < self.files => Ok((f as u8 - b'a') as usize),
                    _ => Err(verr(src, format!("castling.{what}: '{s}' is not a file of this board"))),
                }
            };
            let kf = file(&cd.king_file, "king_file")?;
            let ks = file(&cd.kingside_file, "kingside_file")?;
            let qs = file(&cd.queenside_file, "queenside_file")?;
            self.castle_rook_types = self.type_mask(&cd.rook_types, "castling.rook_types", src)?;
            let mut wings = [[CastleWing { king_to: 0, rook_from: 0, rook_to: 0 }; 2]; 2];
            for c in Color::ALL {
                let rank = if c == Color::White { 0 } else { self.ranks - 1 };
                let at = |f: usize| rank * self.files + f;
                self.castle_king_from[c.index()] = at(kf);
                wings[c.index()][0] = CastleWing { king_to: at(ks), rook_from: at(self.files - 1), rook_to: at(ks - 1) };
                wings[c.index()][1] = CastleWing { king_to: at(qs), rook_from: at(0), rook_to: at(qs + 1) };
                let bit = |w: usize| 1u8 << (c.index() * 2 + w);
                self.castle_mask[at(kf)] |= bit(0) | bit(1);
                self.castle_mask[at(self.files - 1)] |= bit(0);
                self.castle_mask[at(0)] |= bit(1);
            }
            self.castling = Some(wings);
        }
        if let Some(fg) = &def.flying_general {
            self.flying = Some(match fg.lines.as_str() {
                "files" => 0b0001_0001,
                "files_and_ranks" => ORTH,
                l => return Err(verr(src, format!("flying_general.lines must be files or files_and_ranks, not '{l}'"))),
            });
            self.flying_ep_exempt = fg.en_passant_exempt;
        }
        if let Some(f) = &def.flag {
            let m = self.type_mask(&f.piece, "flag.piece", src)?;
            let regions = [
                self.abs_ranks(&f.ranks, Color::White, "flag.ranks", src)?,
                self.abs_ranks(&f.ranks, Color::Black, "flag.ranks", src)?,
            ];
            self.flag = Some((m, regions));
        }
        if let Some(d) = &def.dictator {
            self.dictator = Some([
                self.abs_ranks(&d.territory, Color::White, "dictator.territory", src)?,
                self.abs_ranks(&d.territory, Color::Black, "dictator.territory", src)?,
            ]);
        }
        let e = &def.end;
        self.stalemate = value(&e.stalemate, "end.stalemate", src)?;
        self.nfold = e.nfold;
        self.nfold_value = value(&e.nfold_value, "end.nfold_value", src)?;
        self.repetition_whole_game = match e.repetition_window.as_str() {
            "game" => true,
            "halfmove_clock" => false,
            w => return Err(verr(src, format!("end.repetition_window must be game or halfmove_clock, not '{w}'"))),
        };
        self.nmove = e.nmove;
        self.nmove_reset = self.type_mask(&e.nmove_reset_types, "end.nmove_reset_types", src)?;
        if !e.immobility_illegal {
            for b in self.immobile.iter_mut() {
                *b = B::EMPTY;
            }
        }
        Ok(())
    }

    fn zobrist(&mut self) {
        let mut rng = SplitMix(0x7a65_726f_5f72_756c);
        self.z_psq = (0..2 * MAX_TYPES * self.nsq).map(|_| rng.next()).collect();
        self.z_hand = (0..2 * MAX_TYPES * MAX_HAND).map(|_| rng.next()).collect();
        self.z_side = rng.next();
        for k in self.z_castle.iter_mut() {
            *k = rng.next();
        }
        self.z_ep = (0..self.nsq).map(|_| rng.next()).collect();
        self.z_dictator = [rng.next(), rng.next()];
        self.z_pending = (0..self.nsq).map(|_| rng.next()).collect();
    }
}

/// Splits a piece-letter list of a definition, `"qr+nb"`, into `["q", "r", "+n", "b"]`.
pub fn letter_list(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut plus = false;
    for c in s.chars().filter(|c| !c.is_whitespace() && *c != ',') {
        if c == '+' {
            plus = true;
        } else {
            out.push(if plus { format!("+{}", c.to_ascii_lowercase()) } else { c.to_ascii_lowercase().to_string() });
            plus = false;
        }
    }
    out
}

/// A compiled variant on the bitboard size it needs; cheap to copy.
#[derive(Clone, Copy, Debug)]
pub enum Variant {
    /// Boards of at most 64 squares.
    Small(&'static Rules<u64>),
    /// Boards of up to 144 squares.
    Large(&'static Rules<Bb192>),
}

fn registry() -> &'static Mutex<HashMap<String, Variant>> {
    static R: OnceLock<Mutex<HashMap<String, Variant>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(HashMap::new()))
}

impl Variant {
    /// A built-in variant by name (compiled once per process).
    pub fn builtin(name: &str) -> Result<Variant> {
        let mut reg = registry().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = reg.get(name) {
            return Ok(*v);
        }
        let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name) else {
            return Err(Error::UnknownVariant { name: crate::echo(name), known: builtin_names().join(", ") });
        };
        let v = Variant::from_toml(text, name)?;
        reg.insert(name.to_string(), v);
        Ok(v)
    }

    /// Compiles a definition from TOML text; `src` names it in errors. The tables live for the
    /// rest of the process.
    pub fn from_toml(text: &str, src: &str) -> Result<Variant> {
        let def: VariantDef = toml::from_str(text).map_err(|e| verr(src, crate::toml_error::describe_toml_error(text, &e)))?;
        Variant::from_def(&def, src)
    }

    /// Compiles a parsed definition.
    pub fn from_def(def: &VariantDef, src: &str) -> Result<Variant> {
        let v = if def.files * def.ranks <= 64 {
            Variant::Small(Box::leak(Box::new(Rules::<u64>::compile(def, src)?)))
        } else {
            Variant::Large(Box::leak(Box::new(Rules::<Bb192>::compile(def, src)?)))
        };
        // The start position must be readable.
        crate::Position::from_fen(v, &def.start_fen)
            .map_err(|e| verr(src, format!("start_fen: {e}")))?;
        Ok(v)
    }

    /// A variant by built-in name, or from a TOML file when `name_or_path` ends in `.toml`.
    pub fn load(name_or_path: &str) -> Result<Variant> {
        if name_or_path.ends_with(".toml") {
            let text = std::fs::read_to_string(name_or_path)
                .map_err(|e| verr(name_or_path, format!("cannot read: {e}")))?;
            Variant::from_toml(&text, name_or_path)
        } else {
            Variant::builtin(name_or_path)
        }
    }

    /// The definition.
    pub fn def(&self) -> &'static VariantDef {
        match self {
            Variant::Small(r) => &r.def,
            Variant::Large(r) => &r.def,
        }
    }

    /// Piece types, indexed by [`PieceType`].
    pub fn pieces(&self) -> &'static [PieceInfo] {
        match self {
            Variant::Small(r) => &r.pieces,
            Variant::Large(r) => &r.pieces,
        }
    }

    /// Hand piece types in FEN order (empty without drops).
    pub fn hand_types(&self) -> &'static [PieceType] {
        if !self.has_drops() {
            return &[];
        }
        match self {
            Variant::Small(r) => &r.hand_order,
            Variant::Large(r) => &r.hand_order,
        }
    }

    /// Whether pieces can be dropped from hand.
    pub fn has_drops(&self) -> bool {
        match self {
            Variant::Small(r) => r.drops,
            Variant::Large(r) => r.drops,
        }
    }

    /// Whether the variant has Dictator double moves.
    pub fn has_dictator(&self) -> bool {
        self.def().dictator.is_some()
    }

    /// Variant id.
    pub fn name(&self) -> &'static str {
        &self.def().name
    }

    /// Board width.
    pub fn files(&self) -> usize {
        self.def().files
    }

    /// Board height.
    pub fn ranks(&self) -> usize {
        self.def().ranks
    }

    /// The start position in FEN.
    pub fn start_fen(&self) -> &'static str {
        &self.def().start_fen
    }

    /// Whether every piece type moves as its own mirror image across the middle file (see
    /// [`betza::mirror_symmetric`]): then a position mirrored left to right is worth what the
    /// original is, but for castling (its files are fixed) — the rest of a definition's square
    /// rules are by rank.
    pub fn moves_mirror_symmetric(&self) -> bool {
        self.pieces().iter().all(|p| betza::parse(&p.betza).is_ok_and(|a| betza::mirror_symmetric(&a)))
    }
}
