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

/// Where the generator puts legal moves: a [`MoveList`], or a flag that stops the generator at
/// the first legal move ([`Pos::has_legal_move`]).
pub(crate) trait Sink {
    /// Takes a legal move.
    fn push(&mut self, m: Move);
    /// Whether the generator may stop (checked between pieces).
    fn done(&self) -> bool;
}

impl Sink for MoveList {
    #[inline]
    fn push(&mut self, m: Move) {
        MoveList::push(self, m)
    }
    #[inline]
    fn done(&self) -> bool {
        false
    }
}

/// A sink that only records whether any legal move exists.
struct AnyMove(bool);

impl Sink for AnyMove {
    #[inline]
    fn push(&mut self, _: Move) {
        self.0 = true;
    }
    #[inline]
    fn done(&self) -> bool {
        self.0
    }
}

/// How many of the opponent's moves [`Pos::mate_candidates`] keeps as witnesses of mobility.
const WITNESSES: usize = 3;

/// A sink keeping the first legal move of up to [`WITNESSES`] different non-royal pieces (and
/// non-pawn drops on different squares): see [`Pos::witnesses`].
struct Witnesses {
    king: usize,
    pawns: u32,
    moves: [Move; WITNESSES],
    n: usize,
}

impl Sink for Witnesses {
    fn push(&mut self, m: Move) {
        if self.n == WITNESSES {
            return;
        }
        let taken = &self.moves[..self.n];
        let keep = match m.kind() {
            MoveKind::Normal | MoveKind::Promotion | MoveKind::PiecePromotion => {
                m.from() != self.king && !taken.iter().any(|w| !w.is_drop() && w.from() == m.from())
            }
            // A pawn drop can turn into an illegal pawn-drop mate.
            MoveKind::Drop => self.pawns >> m.piece().index() & 1 == 0 && !taken.iter().any(|w| w.to() == m.to()),
            _ => false,
        };
        if keep {
            self.moves[self.n] = m;
            self.n += 1;
        }
    }
    #[inline]
    fn done(&self) -> bool {
        self.n == WITNESSES
    }
}

/// What a fast check test needs, computed once per position: for each piece type, the squares
/// from which it would attack the opponent's royal piece, and the pieces whose leaving may
/// uncover an attack.
struct CheckInfo<B> {
    squares: [B; MAX_TYPES],
    discoverers: B,
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
    fn add<S: Sink>(&self, ctx: &Ctx<B>, list: &mut S, m: Move, royal: bool) {
        if self.is_legal(ctx, m, royal) {
            list.push(m);
        }
    }

    /// Appends every promotion form of a move of `pt` from `from` to `to`.
    #[inline]
    fn add_with_promotions<S: Sink>(&self, ctx: &Ctx<B>, list: &mut S, pt: usize, from: usize, to: usize, kind: MoveKind) {
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
        self.generate(list);
    }

    /// Whether the side to move has a legal move; stops at the first one found. In check, the
    /// royal piece's steps are tried first (the usual way out).
    pub fn has_legal_move(&self) -> bool {
        if !self.checkers.is_empty() && (self.royal_can_step() || self.can_drop_between() || self.can_take_checker()) {
            return true;
        }
        let mut any = AnyMove(false);
        self.generate(&mut any);
        any.0
    }

    /// Whether, in check by a single piece from a distance, the side to move can drop a piece
    /// from its hand between them (never a pawn: pawn drops have rules of their own). Such a drop
    /// is legal: it adds a piece and blocks the only attack.
    fn can_drop_between(&self) -> bool {
        let r = self.r;
        let ui = self.side.index();
        let ksq = self.king[ui];
        if !r.drops || self.checkers.more_than_one() || ksq == NO_SQ || self.pending != NO_SQ {
            return false;
        }
        let between = r.between(ksq as usize, self.checkers.lsb()) & r.drop_region[ui];
        !between.is_empty()
            && r.hand_order.iter().any(|&pt| {
                let pti = pt.index();
                self.hand[ui][pti] > 0 && r.pawn_types >> pti & 1 == 0 && !(between & !r.immobile[ui * MAX_TYPES + pti]).is_empty()
            })
    }

    /// Whether, in check by a single piece, another piece can legally take it (en passant aside).
    fn can_take_checker(&self) -> bool {
        let ui = self.side.index();
        let ksq = self.king[ui];
        if self.checkers.more_than_one() || ksq == NO_SQ || self.pending != NO_SQ || self.flag_reached() {
            return false;
        }
        let (ksq, checker) = (ksq as usize, self.checkers.lsb());
        let occ = self.occupied();
        let ctx = Ctx { us: self.side, ksq, occ, pinned: B::EMPTY, evasion: true };
        let mut any = AnyMove(false);
        for from in (self.attackers(checker, self.side, occ) & !B::square(ksq)).iter() {
            let pt = (self.board.as_ref()[from] & 31) as usize;
            self.add_with_promotions(&ctx, &mut any, pt, from, checker, MoveKind::Normal);
            if any.0 {
                return true;
            }
        }
        false
    }

    /// Whether the royal piece of the side to move has a legal step (a normal move; with the
    /// game not already over by campmate).
    fn royal_can_step(&self) -> bool {
        let r = self.r;
        let us = self.side;
        let ui = us.index();
        let ksq = self.king[ui];
        if ksq == NO_SQ || self.flag_reached() {
            return false;
        }
        let ksq = ksq as usize;
        let pt = (self.board.as_ref()[ksq] & 31) as usize;
        let i = (ui * MAX_TYPES + pt) * r.nsq + ksq;
        let occ = self.occupied();
        let targets = (r.quiet_leaps[i] | r.slide(ksq, r.quiet_dirs[ui][pt], occ)) & !occ & r.all
            | (r.capture_leaps[i] | r.slide(ksq, r.capture_dirs[ui][pt], occ)) & self.by_color[us.flip().index()];
        targets.iter().any(|to| {
            let after = (occ ^ B::square(ksq)) | B::square(to);
            (self.attackers(to, us.flip(), after) & !B::square(to)).is_empty() && !self.faces(to, us, after)
        })
    }

    /// Generates the legal moves into `list`, stopping early (between pieces) once `list` is done.
    fn generate<S: Sink>(&self, list: &mut S) {
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
        // In check, a move of another piece can only help by taking a single checker or
        // stepping between it and the royal piece (the legality test decides the rest).
        let shields = match (self.checkers.is_empty(), self.checkers.more_than_one()) {
            (true, _) => r.all,
            (false, true) => B::EMPTY,
            (false, false) => self.checkers | r.between(ksq, self.checkers.lsb()),
        };
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
                            && shields.has(two as usize)
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
            if royal {
                for to in (quiet | caps).iter() {
                    self.add(&ctx, list, Move::normal(from, to), true);
                }
            } else {
                for to in ((quiet | caps) & shields).iter() {
                    self.add_with_promotions(&ctx, list, pt, from, to, MoveKind::Normal);
                }
            }
            if list.done() {
                return;
            }
        }

        if r.drops {
            let region = r.drop_region[ui] & empty & shields;
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
                    if list.done() {
                        return;
                    }
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
        next.in_check() && !next.has_legal_move()
    }

    /// Whether the legal move `m` leaves the opponent's royal piece attacked, without playing it
    /// (moves that change more than two squares are played on a copy).
    pub fn gives_check(&self, m: Move) -> bool {
        let r = self.r;
        let us = self.side;
        let them = us.flip();
        let ek = self.king[them.index()];
        if ek == NO_SQ {
            return false;
        }
        let ek = ek as usize;
        let (from, to) = (m.from(), m.to());
        let (pt, occ) = match m.kind() {
            MoveKind::Normal => ((self.board.as_ref()[from] & 31) as usize, (self.occupied() ^ B::square(from)) | B::square(to)),
            MoveKind::Promotion | MoveKind::PiecePromotion => {
                (m.piece().index(), (self.occupied() ^ B::square(from)) | B::square(to))
            }
            MoveKind::Drop => (m.piece().index(), self.occupied() | B::square(to)),
            MoveKind::Castle | MoveKind::EnPassant | MoveKind::Pass => {
                let mut next = *self;
                next.play(m);
                return !next.checkers_of(them).is_empty();
            }
        };
        let ui = us.index();
        // The moved piece itself: a leap, or a slide whose nearest blocker from the king is `to`.
        if r.leaper_capture_types[ui] >> pt & 1 != 0 && r.capture_from[r.idx(us, pt) * r.nsq + ek].has(to) {
            return true;
        }
        let rays = &r.rays[ek];
        // Direction from the royal piece towards `sq`, if they share a line.
        let direction = |sq: usize| rays.iter().position(|ray| ray.has(sq));
        let nearest = |d: usize| {
            let bl = rays[d] & occ;
            (!bl.is_empty()).then(|| if d < 4 { bl.lsb() } else { bl.msb() })
        };
        if let Some(d) = direction(to) {
            if r.capture_dirs[ui][pt] >> (d ^ 4) & 1 != 0 && nearest(d) == Some(to) {
                return true;
            }
        }
        // A slider uncovered by leaving `from`.
        let uncovered = (m.kind() != MoveKind::Drop).then(|| direction(from)).flatten().and_then(|d| Some((d, nearest(d)?)));
        uncovered.is_some_and(|(d, b)| {
            let code = self.board.as_ref()[b];
            b != to && code != Piece::NONE && (code >> 5) as usize == ui && r.capture_dirs[ui][(code & 31) as usize] >> (d ^ 4) & 1 != 0
        })
    }

    /// The squares from which each of our piece types would attack the opponent's royal piece,
    /// and our pieces that shield it from one of our sliders. `None` without an opponent royal.
    fn check_info(&self) -> Option<CheckInfo<B>> {
        let r = self.r;
        let us = self.side;
        let ui = us.index();
        let ek = self.king[us.flip().index()];
        if ek == NO_SQ {
            return None;
        }
        let ek = ek as usize;
        let occ = self.occupied();
        let ours = self.by_color[ui];
        let mut squares = [B::EMPTY; MAX_TYPES];
        for (pt, sq) in squares.iter_mut().enumerate().take(r.ntypes) {
            if (self.by_type[pt] & ours).is_empty() && self.hand[ui][pt] == 0 {
                continue;
            }
            let dirs = r.capture_dirs[ui][pt];
            *sq = r.capture_from[r.idx(us, pt) * r.nsq + ek] | r.slide(ek, dirs.rotate_left(4), occ);
        }
        let mut discoverers = B::EMPTY;
        for d in 0..8 {
            let bl = r.rays[ek][d] & occ;
            if bl.is_empty() {
                continue;
            }
            let b1 = if d < 4 { bl.lsb() } else { bl.msb() };
            let rest = bl ^ B::square(b1);
            if !ours.has(b1) || rest.is_empty() {
                continue;
            }
            let b2 = if d < 4 { rest.lsb() } else { rest.msb() };
            let code = self.board.as_ref()[b2];
            if ours.has(b2) && r.capture_dirs[ui][(code & 31) as usize] >> (d ^ 4) & 1 != 0 {
                discoverers |= B::square(b1);
            }
        }
        Some(CheckInfo { squares, discoverers })
    }

    /// [`Pos::gives_check`] with the position's [`CheckInfo`]: one table test for most moves.
    #[inline]
    fn gives_check_with(&self, ci: &CheckInfo<B>, m: Move) -> bool {
        match m.kind() {
            MoveKind::Normal => {
                let pt = (self.board.as_ref()[m.from()] & 31) as usize;
                ci.squares[pt].has(m.to()) || (ci.discoverers.has(m.from()) && self.gives_check(m))
            }
            MoveKind::Drop => ci.squares[m.piece().index()].has(m.to()),
            _ => self.gives_check(m),
        }
    }

    /// Up to [`WITNESSES`] legal moves of the opponent (as if it were to move now), one per
    /// piece, each with the squares a move of ours must touch (from or to) to take it away: its
    /// own squares and the path between. Only pieces off every line through their royal piece
    /// (so never pinned, whatever we move) and non-pawn drops qualify.
    fn witnesses(&self) -> ([Move; WITNESSES], [B; WITNESSES], usize) {
        let r = self.r;
        let them = self.side.flip();
        let ti = them.index();
        let mut w = Witnesses { king: NO_SQ as usize, pawns: r.pawn_types, moves: [Move::PASS; WITNESSES], n: 0 };
        let mut needed = [B::EMPTY; WITNESSES];
        let tk = self.king[ti];
        if tk == NO_SQ {
            return (w.moves, needed, 0);
        }
        let tk = tk as usize;
        w.king = tk;
        let occ = self.occupied();
        let empty = !occ & r.all;
        let ours = self.by_color[self.side.index()];
        // Not in check (the position is legal) and nothing pinned among the pieces looked at.
        let ctx = Ctx { us: them, ksq: tk, occ, pinned: B::EMPTY, evasion: false };
        let n = r.nsq;
        let (kf, kr) = ((tk % r.files) as isize, (tk / r.files) as isize);
        for a in self.by_color[ti].iter() {
            // On a line with the royal piece (by coordinates: the line table is large on 12x12).
            let (df, dr) = ((a % r.files) as isize - kf, (a / r.files) as isize - kr);
            if df == 0 || dr == 0 || df.abs() == dr.abs() {
                continue;
            }
            let pt = (self.board.as_ref()[a] & 31) as usize;
            let i = ti * MAX_TYPES + pt;
            let targets = (r.quiet_leaps[i * n + a] | r.slide(a, r.quiet_dirs[ti][pt], occ)) & empty
                | (r.capture_leaps[i * n + a] | r.slide(a, r.capture_dirs[ti][pt], occ)) & ours;
            let before = w.n;
            for b in targets.iter() {
                self.add_with_promotions(&ctx, &mut w, pt, a, b, MoveKind::Normal);
                if w.n > before {
                    break;
                }
            }
            if w.done() {
                break;
            }
        }
        if r.drops && !w.done() {
            for &pt in &r.hand_order {
                let pti = pt.index();
                if self.hand[ti][pti] == 0 || r.pawn_types >> pti & 1 != 0 {
                    continue;
                }
                let region = r.drop_region[ti] & empty & !r.immobile[ti * MAX_TYPES + pti];
                for b in region.iter() {
                    w.push(Move::new(MoveKind::Drop, b, b, pt));
                    if w.done() {
                        break;
                    }
                }
                if w.done() {
                    break;
                }
            }
        }
        for (set, x) in needed.iter_mut().zip(&w.moves[..w.n]) {
            let (a, b) = (x.from(), x.to());
            *set = if x.is_drop() { B::square(b) } else { B::square(a) | B::square(b) | r.between(a, b) };
        }
        (w.moves, needed, w.n)
    }

    /// Appends to `out`, in increasing order, the indices of the moves of `moves` (legal here)
    /// after which the opponent may be left without a legal move: every move that gives check
    /// and no other; with `stalemates` also every castling, en-passant capture and pass, and
    /// every move that touches (from or to) a square needed by each of the opponent's witness
    /// moves ([`Pos::witnesses`]): a move of ours that gives no check and leaves one witness
    /// alone leaves the opponent that legal move.
    pub fn mate_candidates(&self, moves: &[Move], stalemates: bool, out: &mut Vec<u32>) {
        let Some(ci) = self.check_info() else {
            if stalemates {
                out.extend(0..moves.len() as u32);
            }
            return;
        };
        let (_, needed, witnesses) = if stalemates { self.witnesses() } else { ([Move::PASS; WITNESSES], [B::EMPTY; WITNESSES], 0) };
        for (i, &m) in moves.iter().enumerate() {
            let candidate = self.gives_check_with(&ci, m)
                || (stalemates
                    && match m.kind() {
                        MoveKind::Normal | MoveKind::Promotion | MoveKind::PiecePromotion => {
                            needed[..witnesses].iter().all(|set| set.has(m.from()) || set.has(m.to()))
                        }
                        MoveKind::Drop => needed[..witnesses].iter().all(|set| set.has(m.to())),
                        _ => true,
                    });
            if candidate {
                out.push(i as u32);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Game, Position, Variant};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Each witness of [`Pos::witnesses`] stays legal after every move of ours that gives no
    /// check and leaves its squares alone: the claim `mate_candidates` rests on.
    fn witnesses_survive<B: Bitboard>(p: &Pos<B>) -> usize {
        let (moves, needed, n) = p.witnesses();
        let mut list = MoveList::new();
        p.legal_moves(&mut list);
        let mut checked = 0;
        for &m in list.as_slice() {
            let touched = match m.kind() {
                MoveKind::Normal | MoveKind::Promotion | MoveKind::PiecePromotion => B::square(m.from()) | B::square(m.to()),
                MoveKind::Drop => B::square(m.to()),
                _ => continue,
            };
            if p.gives_check(m) {
                continue;
            }
            let mut q = *p;
            q.play(m);
            if q.side == p.side {
                continue;
            }
            let mut replies = MoveList::new();
            q.legal_moves(&mut replies);
            for (x, set) in moves[..n].iter().zip(&needed[..n]) {
                if (*set & touched).is_empty() {
                    assert!(replies.as_slice().contains(x), "witness {x:?} lost after {m:?} in {}", p.fen());
                    checked += 1;
                }
            }
        }
        checked
    }

    #[test]
    fn witnesses_survive_moves_that_leave_them_alone() {
        let mut rng = StdRng::seed_from_u64(3);
        for name in crate::variant::builtin_names() {
            let v = Variant::builtin(name).unwrap();
            let mut checked = 0;
            for _ in 0..12 {
                let mut g = Game::startpos(v);
                for _ in 0..200 {
                    if g.result().is_over() {
                        break;
                    }
                    checked += match g.position() {
                        Position::Small(p) => witnesses_survive(p),
                        Position::Large(p) => witnesses_survive(p),
                    };
                    let moves = g.position().legal_moves();
                    g.play(moves[rng.gen_range(0..moves.len())]);
                }
            }
            assert!(checked > 10_000, "{name}: {checked}");
        }
    }
}
