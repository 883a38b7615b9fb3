//! Legal move generation: pseudo-legal moves from the compiled tables, filtered by pins,
//! checks, the flying-general rule and the variant's move restrictions.

use crate::bitboard::Bitboard;
use crate::board::{Pos, NO_SQ};
use crate::types::{Color, Move, MoveKind, Piece, PieceType};
use crate::variant::MAX_TYPES;

/// Capacity of a [`MoveList`]: more than any position of the supported variants has.
pub const MAX_MOVES: usize = 1024;

/// A fixed-capacity list of moves, kept on the stack.
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList { moves: [Move::PASS; MAX_MOVES], len: 0 }
    }
}

impl MoveList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }
    #[inline]
    fn push(&mut self, m: Move) {
        if self.len < MAX_MOVES {
            self.moves[self.len] = m;
            self.len += 1;
        }
    }
    /// Number of moves.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The moves as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }
    /// Removes all moves.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// Per-node facts the legality filter needs.
struct Ctx<B> {
    us: Color,
    ksq: usize,
    occ: B,
    pinned: B,
    /// In check, or facing the enemy royal piece (possible only after an exempt en passant).
    evasion: bool,
}

impl<B: Bitboard> Pos<B> {
    /// Our pieces pinned to our royal piece, by enemy sliders or by the flying-general rule.
    fn pinned(&self, us: Color, ksq: usize, occ: B) -> B {
        let r = self.r;
        let them = us.flip();
        let mut pinned = B::EMPTY;
        let ours = self.by_color[us.index()];
        let eking = self.king[them.index()];
        let flying = r.flying.unwrap_or(0);
        for d in 0..8 {
            let ray = r.rays[ksq][d];
            let bl = ray & occ;
            if bl.is_empty() {
                continue;
            }
            let b1 = if d < 4 { bl.lsb() } else { bl.msb() };
            if !ours.has(b1) {
                continue;
            }
            let rest = bl ^ B::square(b1);
            if rest.is_empty() {
                continue;
            }
            let b2 = if d < 4 { rest.lsb() } else { rest.msb() };
            let code = self.board.as_ref()[b2];
            let Some(p) = Piece::from_code(code) else { continue };
            if p.color != them {
                continue;
            }
            if r.capture_dirs[them.index()][p.kind.index()] >> (d ^ 4) & 1 != 0
                || (flying >> d & 1 != 0 && b2 as u8 == eking)
            {
                pinned |= B::square(b1);
            }
        }
        pinned
    }

    /// Full legality test by playing the move on a copy.
    fn legal_by_copy(&self, m: Move, us: Color) -> bool {
        let mut next = *self;
        next.play(m);
        let k = next.king[us.index()];
        if k == NO_SQ {
            return true;
        }
        let occ = next.occupied();
        if !next.attackers(k as usize, us.flip(), occ).is_empty() {
            return false;
        }
        let exempt = m.kind() == MoveKind::EnPassant && self.r.flying_ep_exempt;
        exempt || !next.faces(k as usize, us, occ)
    }

    /// Whether a pseudo-legal non-castling move is legal.
    #[inline]
    fn is_legal(&self, ctx: &Ctx<B>, m: Move, royal: bool) -> bool {
        let (from, to) = (m.from(), m.to());
        if royal {
            if ctx.evasion {
                return self.legal_by_copy(m, ctx.us);
            }
            let occ = (ctx.occ ^ B::square(from)) | B::square(to);
            let them = ctx.us.flip();
            return (self.attackers(to, them, occ) & !B::square(to)).is_empty() && !self.faces(to, ctx.us, occ);
        }
        if ctx.evasion || m.kind() == MoveKind::EnPassant {
            return self.legal_by_copy(m, ctx.us);
        }
        if m.kind() == MoveKind::Drop {
            return true;
        }
        !ctx.pinned.has(from) || self.r.line(ctx.ksq, from).has(to)
    }

    /// Appends `m` if legal.
    #[inline]
    fn add(&self, ctx: &Ctx<B>, list: &mut MoveList, m: Move, royal: bool) {
        if self.is_legal(ctx, m, royal) {
            list.push(m);
        }
    }

    /// Appends every promotion form of a move of `pt` from `from` to `to`.
    #[inline]
    fn add_with_promotions(&self, ctx: &Ctx<B>, list: &mut MoveList, pt: usize, from: usize, to: usize, kind: MoveKind) {
        let r = self.r;
        let us = ctx.us;
        let ui = us.index();
        let royal = r.royal_types >> pt & 1 != 0;
        let immobile = |t: usize, sq: usize| r.immobile[ui * MAX_TYPES + t].has(sq);
        let pawn = r.pawn_types >> pt & 1 != 0;
        if pawn && r.promo_region[ui].has(to) {
            if let Some((_, choices, optional)) = r.chess_promo[ui].iter().find(|(reg, _, _)| reg.has(to)) {
                if self.is_legal(ctx, Move::new(kind, from, to, PieceType(0)), false) {
                    for &c in choices {
                        list.push(Move::new(MoveKind::Promotion, from, to, c));
                    }
                    if *optional && !immobile(pt, to) {
                        list.push(Move::new(kind, from, to, PieceType(0)));
                    }
                }
                return;
            }
        }
        if r.shogi {
            if let Some(pp) = r.pieces[pt].promotes_to {
                if r.zone[ui].has(to) || (r.shogi_from_too && r.zone[ui].has(from)) {
                    let lim = r.limit[pp.index()];
                    let allowed = lim == u8::MAX || self.pieces(us, pp.index()).count() < lim as u32;
                    if allowed {
                        if !self.is_legal(ctx, Move::new(kind, from, to, PieceType(0)), royal) {
                            return;
                        }
                        list.push(Move::new(MoveKind::PiecePromotion, from, to, pp));
                        if !r.shogi_mandatory && !immobile(pt, to) {
                            list.push(Move::new(kind, from, to, PieceType(0)));
                        }
                        return;
                    }
                }
            }
        }
        if !immobile(pt, to) {
            self.add(ctx, list, Move::new(kind, from, to, PieceType(0)), royal);
        }
    }

    /// Generates all legal moves into `list` (cleared first).
    pub fn legal_moves(&self, list: &mut MoveList) {
        list.clear();
        let r = self.r;
        if self.flag_reached() {
            return;
        }
        let us = self.side;
        let them = us.flip();
        let ui = us.index();
        let ksq = self.king[ui];
        if ksq == NO_SQ {
            return;
        }
        let ksq = ksq as usize;
        let occ = self.occupied();
        let ours = self.by_color[ui];
        let theirs = self.by_color[them.index()];
        let evasion = !self.checkers.is_empty() || self.faces(ksq, us, occ);
        let ctx = Ctx { us, ksq, occ, pinned: if evasion { B::EMPTY } else { self.pinned(us, ksq, occ) }, evasion };

        if self.pending != NO_SQ {
            // A Dictator's optional second step: a king move that does not give check, or a pass.
            list.push(Move::PASS);
            let pt = self.piece_at(ksq).expect("king").kind.index();
            let i = ui * MAX_TYPES + pt;
            let n = r.nsq;
            let targets = (r.quiet_leaps[i * n + ksq] | r.slide(ksq, r.quiet_dirs[ui][pt], occ)) & !occ
                | (r.capture_leaps[i * n + ksq] | r.slide(ksq, r.capture_dirs[ui][pt], occ)) & theirs;
            for to in targets.iter() {
                let m = Move::normal(ksq, to);
                if self.is_legal(&ctx, m, true) {
                    let mut next = *self;
                    next.play(m);
                    if next.checkers_of(them).is_empty() {
                        list.push(m);
                    }
                }
            }
            return;
        }

        let empty = !occ & r.all;
        let n = r.nsq;
        for from in ours.iter() {
            let pt = (self.board.as_ref()[from] & 31) as usize;
            let i = ui * MAX_TYPES + pt;
            let royal = r.royal_types >> pt & 1 != 0;
            let qd = r.quiet_dirs[ui][pt];
            let cd = r.capture_dirs[ui][pt];
            let mut quiet = r.quiet_leaps[i * n + from] & empty;
            let mut caps = r.capture_leaps[i * n + from] & theirs;
            if qd != 0 {
                quiet |= r.slide(from, qd, occ) & empty;
            }
            if cd != 0 {
                caps |= r.slide(from, cd, occ) & theirs;
            }
            if r.pawn_types >> pt & 1 != 0 {
                if r.double_step[ui].has(from) {
                    // Two steps along the pawn's quiet one-step vector, both squares empty.
                    for one in (r.quiet_leaps[i * n + from] & empty).iter() {
                        let two = 2 * one as isize - from as isize;
                        if two >= 0
                            && (two as usize) < n
                            && (one % r.files) == (from % r.files)
                            && empty.has(two as usize)
                        {
                            self.add_with_promotions(&ctx, list, pt, from, two as usize, MoveKind::Normal);
                        }
                    }
                }
                if self.ep != NO_SQ && r.ep_types >> pt & 1 != 0 && r.capture_leaps[i * n + from].has(self.ep as usize) {
                    // As in Fairy-Stockfish, an en-passant capture never promotes.
                    self.add(&ctx, list, Move::new(MoveKind::EnPassant, from, self.ep as usize, PieceType(0)), false);
                }
            }
            for to in (quiet | caps).iter() {
                if royal {
                    self.add(&ctx, list, Move::normal(from, to), true);
                } else {
                    self.add_with_promotions(&ctx, list, pt, from, to, MoveKind::Normal);
                }
            }
        }

        if r.drops {
            let region = r.drop_region[ui] & empty;
            for &pt in &r.hand_order {
                let pti = pt.index();
                if self.hand[ui][pti] == 0 {
                    continue;
                }
                let mut targets = region & !r.immobile[ui * MAX_TYPES + pti];
                let pawn = r.pawn_types >> pti & 1 != 0;
                if pawn && r.nifu {
                    for f in 0..r.files {
                        if !(r.file_bb[f] & self.pieces(us, pti)).is_empty() {
                            targets &= !r.file_bb[f];
                        }
                    }
                }
                for to in targets.iter() {
                    let m = Move::new(MoveKind::Drop, to, to, pt);
                    if !self.is_legal(&ctx, m, false) {
                        continue;
                    }
                    if pawn && r.pawn_drop_mate_illegal && self.drop_mates(m) {
                        continue;
                    }
                    list.push(m);
                }
            }
        }

        if let Some(wings) = &r.castling {
            if !evasion && ksq == r.castle_king_from[ui] {
                for (w, wing) in wings[ui].iter().enumerate() {
                    if self.castling >> (ui * 2 + w) & 1 == 0 {
                        continue;
                    }
                    let rook = self.piece_at(wing.rook_from);
                    if !rook.is_some_and(|p| p.color == us && r.castle_rook_types >> p.kind.0 & 1 != 0) {
                        continue;
                    }
                    let span = r.between(ksq, wing.king_to)
                        | B::square(wing.king_to)
                        | r.between(wing.rook_from, wing.rook_to)
                        | B::square(wing.rook_to);
                    let span = span & !B::square(ksq) & !B::square(wing.rook_from);
                    if !(span & occ).is_empty() {
                        continue;
                    }
                    let path = r.between(ksq, wing.king_to) | B::square(wing.king_to);
                    let lifted = occ ^ B::square(ksq);
                    if path.iter().any(|s| !self.attackers(s, them, occ).is_empty() || self.faces(s, us, lifted)) {
                        continue;
                    }
                    list.push(Move::new(MoveKind::Castle, ksq, wing.king_to, PieceType(0)));
                }
            }
        }
    }

    /// Whether a pawn drop checkmates (for variants where that is illegal).
    fn drop_mates(&self, m: Move) -> bool {
        let mut next = *self;
        next.play(m);
        if !next.in_check() {
            return false;
        }
        let mut replies = MoveList::new();
        next.legal_moves(&mut replies);
        replies.is_empty()
    }

    /// Counts leaves of the legal move tree (bulk-counted at the last ply).
    pub fn perft(&self, depth: u32) -> u64 {
        self.perft_with(depth, true)
    }

    /// Counts leaves; with `bulk` the last ply counts moves instead of playing each of them.
    pub fn perft_with(&self, depth: u32, bulk: bool) -> u64 {
        if depth == 0 {
            return 1;
        }
        let mut list = MoveList::new();
        self.legal_moves(&mut list);
        if depth == 1 && bulk {
            return list.len() as u64;
        }
        let mut total = 0;
        for &m in list.as_slice() {
            let mut next = *self;
            next.play(m);
            total += next.perft_with(depth - 1, bulk);
        }
        total
    }
}
