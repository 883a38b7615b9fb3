//! The policy index space: every move any legal position of a variant can have, in the mover's
//! frame, generated from the piece geometry of the variant definition.

use crate::{frame_square, letter_list, lookup};
use std::collections::{BTreeSet, HashMap};
use vzero_rules::betza;
use vzero_rules::{Move, MoveKind, PieceType, Position, Square, Variant};

/// What one policy index stands for (squares in the mover's frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveEntry {
    /// A move from one square to another: a plain move or capture, a castling king move, an
    /// en-passant capture, or a Dictator's second step.
    Board { from: usize, to: usize },
    /// A chess-style promotion to `piece`.
    Promotion { from: usize, to: usize, piece: PieceType },
    /// A shogi-style `+` promotion (the promoted type follows from the moving piece).
    PiecePromotion { from: usize, to: usize },
    /// A drop of `piece` on `to`.
    Drop { piece: PieceType, to: usize },
    /// Skipping a Dictator's second step (`0000`).
    Pass,
}

const NONE: u32 = u32::MAX;

/// A variant's policy index space, in this order (see the crate README):
/// board moves (sorted by from, to), chess-style promotions (from, to, piece), shogi-style
/// promotions (from, to), drops (hand type in FEN hand order, then square), pass.
#[derive(Clone, Debug)]
pub struct MoveEncoder {
    variant: Variant,
    files: usize,
    ranks: usize,
    nsq: usize,
    entries: Vec<MoveEntry>,
    board: Vec<u32>,
    promo: HashMap<(u16, u16, u8), u32>,
    shogi: Vec<u32>,
    drops: Vec<u32>,
    pass: Option<u32>,
    counts: [usize; 5],
}

/// One piece type's reach from `from` with no blockers (mover's frame, White's orientation).
fn reach(files: usize, ranks: usize, vectors: &[(i32, i32, bool)], from: usize) -> Vec<usize> {
    let (f0, r0) = ((from % files) as i32, (from / files) as i32);
    let mut out = Vec::new();
    for &(dx, dy, rider) in vectors {
        let mut k = 1;
        loop {
            let (f, r) = (f0 + k * dx, r0 + k * dy);
            if f < 0 || r < 0 || f >= files as i32 || r >= ranks as i32 {
                break;
            }
            out.push(r as usize * files + f as usize);
            if !rider {
                break;
            }
            k += 1;
        }
    }
    out
}

impl MoveEncoder {
    /// Builds the index space of `variant`.
    pub fn new(variant: Variant) -> MoveEncoder {
        let def = variant.def();
        let pieces = variant.pieces();
        let (files, ranks) = (variant.files(), variant.ranks());
        let nsq = files * ranks;
        let rank_of = |s: usize| s / files;
        // Relative ranks (1 = own back rank) to mover-frame rank indices.
        let rel = |v: &[usize]| v.iter().filter(|&&r| r >= 1 && r <= ranks).map(|&r| r - 1).collect::<BTreeSet<usize>>();

        // Geometry of every piece type: (dx, dy, rider), plus quiet vertical leaps for pawns.
        let mut geo: Vec<Vec<(i32, i32, bool)>> = Vec::new();
        let mut pawn_steps: Vec<Vec<(i32, i32)>> = Vec::new();
        for p in pieces {
            let atoms = betza::parse(&p.betza).expect("validated when the variant was compiled");
            let mut g = Vec::new();
            let mut steps = Vec::new();
            for a in &atoms {
                for &(dx, dy) in &a.vectors {
                    if !g.contains(&(dx, dy, a.rider)) {
                        g.push((dx, dy, a.rider));
                    }
                    if p.pawn && a.quiet && !a.rider && dx == 0 {
                        steps.push((dx, dy));
                    }
                }
            }
            geo.push(g);
            pawn_steps.push(steps);
        }
        let double_ranks = rel(&def.pawns.double_step_ranks);
        // All (from, to) pairs one piece type can make: geometry plus pawn double steps.
        let pairs_of = |pt: usize| -> Vec<(usize, usize)> {
            let mut out = Vec::new();
            for from in 0..nsq {
                for to in reach(files, ranks, &geo[pt], from) {
                    out.push((from, to));
                }
                if pieces[pt].pawn && double_ranks.contains(&rank_of(from)) {
                    let two: Vec<(i32, i32, bool)> = pawn_steps[pt].iter().map(|&(dx, dy)| (2 * dx, 2 * dy, false)).collect();
                    for to in reach(files, ranks, &two, from) {
                        out.push((from, to));
                    }
                }
            }
            out
        };

        // Board moves.
        let mut board_pairs = BTreeSet::new();
        for pt in 0..pieces.len() {
            board_pairs.extend(pairs_of(pt));
        }
        if let Some(c) = &def.castling {
            let file = |s: &str| s.bytes().next().map(|b| (b - b'a') as usize);
            if let (Some(k), Some(ks), Some(qs)) = (file(&c.king_file), file(&c.kingside_file), file(&c.queenside_file)) {
                board_pairs.insert((k, ks));
                board_pairs.insert((k, qs));
            }
        }
        let mut entries: Vec<MoveEntry> = board_pairs.iter().map(|&(from, to)| MoveEntry::Board { from, to }).collect();
        let mut board = vec![NONE; nsq * nsq];
        for (i, e) in entries.iter().enumerate() {
            if let MoveEntry::Board { from, to } = *e {
                board[from * nsq + to] = i as u32;
            }
        }
        let n_board = entries.len();

        // Chess-style promotions: pawn moves arriving on a promotion line, per choice.
        let mut promo_set = BTreeSet::new();
        for line in &def.promotion {
            let line_ranks = rel(&line.ranks);
            let mut choices: Vec<PieceType> = Vec::new();
            let black = line.pieces_black.clone().unwrap_or_default();
            for t in letter_list(&line.pieces).into_iter().chain(letter_list(&black)) {
                if let Some(pt) = lookup(variant, &t) {
                    if !choices.contains(&pt) {
                        choices.push(pt);
                    }
                }
            }
            for pt in (0..pieces.len()).filter(|&pt| pieces[pt].pawn) {
                for (from, to) in pairs_of(pt) {
                    if line_ranks.contains(&rank_of(to)) {
                        for &c in &choices {
                            promo_set.insert((from, to, c.0));
                        }
                    }
                }
            }
        }
        let mut promo = HashMap::new();
        for &(from, to, c) in &promo_set {
            promo.insert((from as u16, to as u16, c), entries.len() as u32);
            entries.push(MoveEntry::Promotion { from, to, piece: PieceType(c) });
        }
        let n_promo = promo_set.len();

        // Shogi-style promotions: moves of promotable types touching the zone.
        let mut shogi = vec![NONE; nsq * nsq];
        let mut n_shogi = 0;
        if let Some(sp) = &def.shogi_promotion {
            let zone = rel(&sp.zone);
            let from_too = sp.trigger != "to";
            let mut set = BTreeSet::new();
            for pt in (0..pieces.len()).filter(|&pt| pieces[pt].promotes_to.is_some()) {
                for (from, to) in pairs_of(pt) {
                    if zone.contains(&rank_of(to)) || (from_too && zone.contains(&rank_of(from))) {
                        set.insert((from, to));
                    }
                }
            }
            for &(from, to) in &set {
                shogi[from * nsq + to] = entries.len() as u32;
                entries.push(MoveEntry::PiecePromotion { from, to });
            }
            n_shogi = set.len();
        }

        // Drops: hand type × squares of the drop region.
        let ntypes = pieces.len();
        let mut drops = vec![NONE; ntypes * nsq];
        let mut n_drops = 0;
        if let Some(d) = &def.drops {
            let region = rel(&d.ranks);
            for &pt in variant.hand_types() {
                for to in (0..nsq).filter(|&s| region.contains(&rank_of(s))) {
                    drops[pt.index() * nsq + to] = entries.len() as u32;
                    entries.push(MoveEntry::Drop { piece: pt, to });
                    n_drops += 1;
                }
            }
        }

        // Pass.
        let pass = variant.has_dictator().then(|| {
            entries.push(MoveEntry::Pass);
            (entries.len() - 1) as u32
        });

        MoveEncoder {
            variant,
            files,
            ranks,
            nsq,
            entries,
            board,
            promo,
            shogi,
            drops,
            pass,
            counts: [n_board, n_promo, n_shogi, n_drops, pass.is_some() as usize],
        }
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Size of the index space (the policy head's output size).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Sizes of the sections, in index order: board moves, chess promotions, shogi
    /// promotions, drops, pass.
    pub fn section_sizes(&self) -> [usize; 5] {
        self.counts
    }

    /// What index `index` stands for.
    pub fn entry(&self, index: usize) -> Option<MoveEntry> {
        self.entries.get(index).copied()
    }

    /// The index of `m`, a move of the side to move in `pos`; `None` if it has none (which
    /// never happens for a legal move).
    pub fn encode(&self, pos: &Position, m: Move) -> Option<usize> {
        let c = pos.side_to_move();
        let f = |s: usize| frame_square(s, c, self.files, self.ranks);
        if m.kind() != MoveKind::Pass && (m.from() >= self.nsq || m.to() >= self.nsq) {
            return None;
        }
        let i = match m.kind() {
            MoveKind::Normal | MoveKind::Castle | MoveKind::EnPassant => self.board[f(m.from()) * self.nsq + f(m.to())],
            MoveKind::Promotion => *self.promo.get(&(f(m.from()) as u16, f(m.to()) as u16, m.piece().0))?,
            MoveKind::PiecePromotion => self.shogi[f(m.from()) * self.nsq + f(m.to())],
            MoveKind::Drop => *self.drops.get(m.piece().index() * self.nsq + f(m.to()))?,
            MoveKind::Pass => self.pass?,
        };
        (i != NONE).then_some(i as usize)
    }

    /// The legal move of `pos` with index `index`, if there is one.
    pub fn decode(&self, pos: &Position, index: usize) -> Option<Move> {
        let e = self.entry(index)?;
        let c = pos.side_to_move();
        let f = |s: usize| frame_square(s, c, self.files, self.ranks);
        pos.legal_moves().into_iter().find(|&m| match (e, m.kind()) {
            (MoveEntry::Board { from, to }, MoveKind::Normal | MoveKind::Castle | MoveKind::EnPassant) => {
                m.from() == f(from) && m.to() == f(to)
            }
            (MoveEntry::Promotion { from, to, piece }, MoveKind::Promotion) => {
                m.from() == f(from) && m.to() == f(to) && m.piece() == piece
            }
            (MoveEntry::PiecePromotion { from, to }, MoveKind::PiecePromotion) => m.from() == f(from) && m.to() == f(to),
            (MoveEntry::Drop { piece, to }, MoveKind::Drop) => m.piece() == piece && m.to() == f(to),
            (MoveEntry::Pass, MoveKind::Pass) => true,
            _ => false,
        })
    }

    /// Every legal move of `pos` with its index, in move generation order.
    ///
    /// # Panics
    /// If a legal move has no index (a bug in the index generation; the tests check it).
    pub fn legal_indices(&self, pos: &Position) -> Vec<(usize, Move)> {
        pos.legal_moves()
            .into_iter()
            .map(|m| {
                let i = self.encode(pos, m).unwrap_or_else(|| panic!("legal move {} of {} has no policy index", pos.uci(m), pos.fen()));
                (i, m)
            })
            .collect()
    }

    /// A name for index `index` in the mover's frame, as White would write it (`e2e4`,
    /// `a7a8q`, `c8h3+`, `P@e4`, `0000`).
    pub fn describe(&self, index: usize) -> String {
        let pieces = self.variant.pieces();
        let sq = |s: usize| Square(s as u8).name(self.files);
        let letter = |p: PieceType| {
            let info = &pieces[p.index()];
            if info.promoted {
                format!("+{}", info.letter)
            } else {
                info.letter.to_string()
            }
        };
        match self.entry(index) {
            Some(MoveEntry::Board { from, to }) => format!("{}{}", sq(from), sq(to)),
            Some(MoveEntry::Promotion { from, to, piece }) => format!("{}{}{}", sq(from), sq(to), letter(piece)),
            Some(MoveEntry::PiecePromotion { from, to }) => format!("{}{}+", sq(from), sq(to)),
            Some(MoveEntry::Drop { piece, to }) => format!("{}@{}", letter(piece).to_uppercase(), sq(to)),
            Some(MoveEntry::Pass) => "0000".into(),
            None => "?".into(),
        }
    }
}
