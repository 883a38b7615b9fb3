//! The position for one bitboard size: piece placement, hands and state, with copy-make
//! [`Pos::play`], attack detection and an incrementally kept Zobrist key.

use crate::bitboard::Bitboard;
use crate::types::{Color, Move, MoveKind, Piece, PieceType};
use crate::variant::{Rules, MAX_HAND, MAX_TYPES};

/// Marker for "no square" in the compact `u8` square fields.
pub(crate) const NO_SQ: u8 = 0xff;

/// A position of a variant whose board fits bitboard type `B`.
#[derive(Clone, Copy, Debug)]
pub struct Pos<B: Bitboard> {
    pub(crate) r: &'static Rules<B>,
    pub(crate) by_color: [B; 2],
    pub(crate) by_type: [B; MAX_TYPES],
    pub(crate) board: B::Mailbox,
    pub(crate) hand: [[u8; MAX_TYPES]; 2],
    pub(crate) side: Color,
    pub(crate) castling: u8,
    pub(crate) ep: u8,
    pub(crate) rule50: u16,
    pub(crate) fullmove: u16,
    pub(crate) key: u64,
    pub(crate) dictator: u8,
    pub(crate) pending: u8,
    pub(crate) king: [u8; 2],
    pub(crate) checkers: B,
}

impl<B: Bitboard> Pos<B> {
    /// An empty board, White to move.
    pub(crate) fn empty(r: &'static Rules<B>) -> Self {
        Pos {
            r,
            by_color: [B::EMPTY; 2],
            by_type: [B::EMPTY; MAX_TYPES],
            board: B::mailbox(Piece::NONE),
            hand: [[0; MAX_TYPES]; 2],
            side: Color::White,
            castling: 0,
            ep: NO_SQ,
            rule50: 0,
            fullmove: 1,
            key: 0,
            dictator: 0,
            pending: NO_SQ,
            king: [NO_SQ; 2],
            checkers: B::EMPTY,
        }
    }

    /// The compiled rules.
    #[inline]
    pub fn rules(&self) -> &'static Rules<B> {
        self.r
    }

    /// Side to move.
    #[inline]
    pub fn side(&self) -> Color {
        self.side
    }

    /// Piece on square `sq`.
    #[inline]
    pub fn piece_at(&self, sq: usize) -> Option<Piece> {
        Piece::from_code(self.board.as_ref()[sq])
    }

    /// Pieces of `c` and type `pt`.
    #[inline]
    pub(crate) fn pieces(&self, c: Color, pt: usize) -> B {
        self.by_color[c.index()] & self.by_type[pt]
    }

    /// All occupied squares.
    #[inline]
    pub(crate) fn occupied(&self) -> B {
        self.by_color[0] | self.by_color[1]
    }

    /// Zobrist key of the position.
    #[inline]
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Whether the side to move is in check.
    #[inline]
    pub fn in_check(&self) -> bool {
        !self.checkers.is_empty()
    }

    #[inline]
    pub(crate) fn z_psq(&self, c: Color, pt: usize, sq: usize) -> u64 {
        self.r.z_psq[(c.index() * MAX_TYPES + pt) * self.r.nsq + sq]
    }

    #[inline]
    pub(crate) fn z_hand(&self, c: Color, pt: usize, n: u8) -> u64 {
        self.r.z_hand[(c.index() * MAX_TYPES + pt) * MAX_HAND + (n as usize).min(MAX_HAND - 1)]
    }

    pub(crate) fn put(&mut self, p: Piece, sq: usize) {
        let b = B::square(sq);
        self.by_color[p.color.index()] |= b;
        self.by_type[p.kind.index()] |= b;
        self.board.as_mut()[sq] = p.code();
        self.key ^= self.z_psq(p.color, p.kind.index(), sq);
        if self.r.royal_types >> p.kind.0 & 1 != 0 {
            self.king[p.color.index()] = sq as u8;
        }
    }

    pub(crate) fn remove(&mut self, sq: usize) -> Option<Piece> {
        let p = self.piece_at(sq)?;
        let b = B::square(sq);
        self.by_color[p.color.index()] ^= b;
        self.by_type[p.kind.index()] ^= b;
        self.board.as_mut()[sq] = Piece::NONE;
        self.key ^= self.z_psq(p.color, p.kind.index(), sq);
        Some(p)
    }

    pub(crate) fn set_hand(&mut self, c: Color, pt: usize, n: u8) {
        self.key ^= self.z_hand(c, pt, self.hand[c.index()][pt]);
        self.hand[c.index()][pt] = n;
        self.key ^= self.z_hand(c, pt, n);
    }

    /// Key computed from scratch (tests compare it with the incremental one).
    pub fn compute_key(&self) -> u64 {
        let mut k = 0;
        for sq in self.occupied().iter() {
            let p = self.piece_at(sq).expect("occupied");
            k ^= self.z_psq(p.color, p.kind.index(), sq);
        }
        for c in Color::ALL {
            for pt in 0..self.r.ntypes {
                k ^= self.z_hand(c, pt, self.hand[c.index()][pt]);
            }
        }
        k ^ self.state_key()
    }

    /// The key's part that is not pieces or hands.
    fn state_key(&self) -> u64 {
        let mut k = self.r.z_castle[self.castling as usize];
        if self.side == Color::Black {
            k ^= self.r.z_side;
        }
        if self.ep != NO_SQ {
            k ^= self.r.z_ep[self.ep as usize];
        }
        for c in 0..2 {
            if self.dictator >> c & 1 != 0 {
                k ^= self.r.z_dictator[c];
            }
        }
        if self.pending != NO_SQ {
            k ^= self.r.z_pending[self.pending as usize];
        }
        k
    }

    /// Recomputes the key and the checkers after a setup.
    pub(crate) fn finish_setup(&mut self) {
        self.key = self.compute_key();
        self.checkers = self.checkers_of(self.side);
    }

    /// This position with the pieces on `squares` taken off, as a setup rather than a move:
    /// castling rights and the en-passant square are dropped (a castling rook or the pawn may
    /// be gone), the key and checkers recomputed. `None` when a square is empty or holds a
    /// royal piece, or when the side not to move would be in check.
    pub fn without_pieces(&self, squares: &[usize]) -> Option<Self> {
        let mut p = *self;
        for &sq in squares {
            let piece = p.piece_at(sq)?;
            if self.r.royal_types >> piece.kind.0 & 1 != 0 {
                return None;
            }
            p.remove(sq);
        }
        p.castling = 0;
        p.ep = NO_SQ;
        p.finish_setup();
        p.checkers_of(p.side.flip()).is_empty().then_some(p)
    }

    /// Pieces of colour `c` that capture onto `sq` given occupancy `occ`.
    #[inline]
    pub(crate) fn attackers(&self, sq: usize, c: Color, occ: B) -> B {
        let r = self.r;
        let ci = c.index();
        let mut att = B::EMPTY;
        let mut m = r.leaper_capture_types[ci];
        while m != 0 {
            let pt = m.trailing_zeros() as usize;
            m &= m - 1;
            att |= r.capture_from[(ci * MAX_TYPES + pt) * r.nsq + sq] & self.by_type[pt];
        }
        att &= self.by_color[ci];
        let rays = &r.rays[sq];
        for (d, &ray) in rays.iter().enumerate() {
            let bl = ray & occ;
            if bl.is_empty() {
                continue;
            }
            let b = if d < 4 { bl.lsb() } else { bl.msb() };
            let code = self.board.as_ref()[b];
            if code != Piece::NONE && (code >> 5) as usize == ci && r.capture_dirs[ci][(code & 31) as usize] >> (d ^ 4) & 1 != 0 {
                att |= B::square(b);
            }
        }
        att & occ
    }

    /// Enemy pieces giving check to `c`'s royal piece.
    pub(crate) fn checkers_of(&self, c: Color) -> B {
        let k = self.king[c.index()];
        if k == NO_SQ {
            B::EMPTY
        } else {
            self.attackers(k as usize, c.flip(), self.occupied())
        }
    }

    /// Whether `c`'s royal piece on `ksq` sees the enemy royal piece along a flying-general line.
    #[inline]
    pub(crate) fn faces(&self, ksq: usize, c: Color, occ: B) -> bool {
        match self.r.flying {
            None => false,
            Some(dirs) => {
                let ek = self.king[c.flip().index()];
                ek != NO_SQ && self.r.slide(ksq, dirs, occ).has(ek as usize)
            }
        }
    }

    /// Whether the royal piece of the side that is *not* to move stands on its flag region.
    pub fn flag_reached(&self) -> bool {
        match &self.r.flag {
            None => false,
            Some((types, region)) => {
                let c = self.side.flip();
                let k = self.king[c.index()];
                k != NO_SQ && (self.r.royal_types & types) != 0 && region[c.index()].has(k as usize)
            }
        }
    }

    /// Plays a legal move (copy-make: callers keep the old value to undo).
    pub fn play(&mut self, m: Move) {
        let r = self.r;
        let us = self.side;
        let them = us.flip();
        let was_pending = self.pending != NO_SQ;
        let dictator_at_start = self.dictator >> us.index() & 1 != 0;
        let was_in_check = !self.checkers.is_empty();
        self.key ^= self.state_key();
        self.ep = NO_SQ;
        self.pending = NO_SQ;
        let mut reset = false;
        let mut king_moved = false;
        let (from, to) = (m.from(), m.to());
        match m.kind() {
            MoveKind::Pass => {}
            MoveKind::Drop => {
                let pt = m.piece().index();
                let n = self.hand[us.index()][pt];
                self.set_hand(us, pt, n - 1);
                self.put(Piece { color: us, kind: m.piece() }, to);
                reset = true;
            }
            MoveKind::Castle => {
                let wing = if to > from { 0 } else { 1 };
                let w = r.castling.expect("castling variant")[us.index()][wing];
                let king = self.remove(from).expect("king");
                let rook = self.remove(w.rook_from).expect("rook");
                self.put(king, to);
                self.put(rook, w.rook_to);
                king_moved = true;
            }
            _ => {
                let mover = self.piece_at(from).expect("piece on from-square");
                let cap_sq = if m.kind() == MoveKind::EnPassant {
                    (from / r.files) * r.files + to % r.files
                } else {
                    to
                };
                if let Some(cap) = self.remove(cap_sq) {
                    reset = true;
                    if r.captures_to_hand {
                        let base = r.pieces[cap.kind.index()].base.unwrap_or(cap.kind).index();
                        let n = self.hand[us.index()][base];
                        self.set_hand(us, base, n.saturating_add(1));
                    }
                }
                self.remove(from);
                let kind = match m.kind() {
                    MoveKind::Promotion | MoveKind::PiecePromotion => {
                        reset = true;
                        m.piece()
                    }
                    _ => mover.kind,
                };
                self.put(Piece { color: us, kind }, to);
                let pt = mover.kind.index();
                if r.nmove_reset >> pt & 1 != 0 {
                    reset = true;
                }
                king_moved = r.royal_types >> pt & 1 != 0;
                if r.pawn_types >> pt & 1 != 0 && from.abs_diff(to) == 2 * r.files && from % r.files == to % r.files {
                    let mid = (from + to) / 2;
                    if self.can_take_en_passant(mid, them) {
                        self.ep = mid as u8;
                    }
                }
            }
        }
        self.castling &= !(r.castle_mask[from] | r.castle_mask[to]);
        if reset {
            self.rule50 = 0;
        } else if !was_pending {
            self.rule50 = self.rule50.saturating_add(1);
        }
        let mut keep_turn = false;
        if let Some(territory) = &r.dictator {
            if king_moved {
                if !was_pending && dictator_at_start && !was_in_check && !self.flag_reached_by(us) {
                    let gives_check = !self.checkers_of(them).is_empty();
                    if !gives_check {
                        keep_turn = true;
                        self.pending = from as u8;
                    }
                }
                if territory[us.index()].has(to) {
                    self.dictator |= 1 << us.index();
                }
            }
        }
        if !keep_turn {
            self.side = them;
            if us == Color::Black {
                self.fullmove = self.fullmove.saturating_add(1);
            }
        }
        self.key ^= self.state_key();
        self.checkers = self.checkers_of(self.side);
    }

    /// Whether a piece of `c` allowed to take en passant attacks `sq` (FSF's rule for setting the
    /// en-passant square).
    pub(crate) fn can_take_en_passant(&self, sq: usize, c: Color) -> bool {
        let r = self.r;
        let mut types = r.ep_types;
        while types != 0 {
            let pt = types.trailing_zeros() as usize;
            types &= types - 1;
            if !(r.capture_from[(c.index() * MAX_TYPES + pt) * r.nsq + sq] & self.pieces(c, pt)).is_empty() {
                return true;
            }
        }
        false
    }

    /// Whether `c`'s royal piece stands on its flag region.
    pub(crate) fn flag_reached_by(&self, c: Color) -> bool {
        match &self.r.flag {
            None => false,
            Some((_, region)) => {
                let k = self.king[c.index()];
                k != NO_SQ && region[c.index()].has(k as usize)
            }
        }
    }

    /// Ranks between `c`'s royal piece and the nearest square of its campmate region (`None`
    /// without a campmate rule or a royal piece).
    pub(crate) fn flag_distance(&self, c: Color) -> Option<u32> {
        let (_, region) = self.r.flag.as_ref()?;
        let k = self.king[c.index()];
        if k == NO_SQ {
            return None;
        }
        let files = self.r.files;
        let rank = k as usize / files;
        region[c.index()].iter().map(|s| (s / files).abs_diff(rank) as u32).min()
    }

    /// Number of pieces of `c` and type `pt` in hand.
    #[inline]
    pub fn hand_count(&self, c: Color, pt: PieceType) -> u8 {
        self.hand[c.index()][pt.index()]
    }
}
