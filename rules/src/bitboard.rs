//! Bitboards: one bit per square, generic over the board's size.
//!
//! The engine is generic over [`Bitboard`] so that 8×8 variants run on a plain `u64` while
//! larger boards (up to 12×12 = 144 squares) use [`Bb192`]; each instantiation is compiled
//! separately, so small boards pay nothing for the large ones.

use std::fmt::Debug;
use std::hash::Hash;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

/// A set of squares, indexed `rank * files + file`.
pub trait Bitboard:
    Copy
    + Eq
    + Hash
    + Default
    + Debug
    + Send
    + Sync
    + 'static
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + BitAndAssign
    + BitOrAssign
    + BitXorAssign
{
    /// Number of bits available.
    const CAPACITY: usize;
    /// Per-square piece storage (mailbox) of matching size.
    type Mailbox: Copy + Send + Sync + Debug + AsRef<[u8]> + AsMut<[u8]>;
    /// The empty set.
    const EMPTY: Self;
    /// A mailbox with every entry set to `fill`.
    fn mailbox(fill: u8) -> Self::Mailbox;
    /// The set holding only square `sq`.
    fn square(sq: usize) -> Self;
    /// Whether the set is empty.
    fn is_empty(self) -> bool;
    /// Whether the set holds `sq`.
    #[inline]
    fn has(self, sq: usize) -> bool {
        !(self & Self::square(sq)).is_empty()
    }
    /// Lowest square in a non-empty set.
    fn lsb(self) -> usize;
    /// Highest square in a non-empty set.
    fn msb(self) -> usize;
    /// Number of squares in the set.
    fn count(self) -> u32;
    /// The set without its lowest square.
    fn clear_lsb(self) -> Self;
    /// Whether the set holds more than one square.
    #[inline]
    fn more_than_one(self) -> bool {
        !self.clear_lsb().is_empty()
    }
    /// Iterates over the squares in ascending order.
    #[inline]
    fn iter(self) -> Squares<Self> {
        Squares(self)
    }
}

/// Iterator over the squares of a bitboard.
#[derive(Clone, Copy, Debug)]
pub struct Squares<B>(B);

impl<B: Bitboard> Iterator for Squares<B> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0.is_empty() {
            None
        } else {
            let s = self.0.lsb();
            self.0 = self.0.clear_lsb();
            Some(s)
        }
    }
}

impl Bitboard for u64 {
    const CAPACITY: usize = 64;
    type Mailbox = [u8; 64];
    const EMPTY: Self = 0;
    #[inline]
    fn mailbox(fill: u8) -> [u8; 64] {
        [fill; 64]
    }
    #[inline]
    fn square(sq: usize) -> Self {
        1u64 << sq
    }
    #[inline]
    fn is_empty(self) -> bool {
        self == 0
    }
    #[inline]
    fn lsb(self) -> usize {
        self.trailing_zeros() as usize
    }
    #[inline]
    fn msb(self) -> usize {
        63 - self.leading_zeros() as usize
    }
    #[inline]
    fn count(self) -> u32 {
        self.count_ones()
    }
    #[inline]
    fn clear_lsb(self) -> Self {
        self & self.wrapping_sub(1)
    }
}

/// A 192-bit set for boards of up to 144 squares (12×12).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Bb192(pub [u64; 3]);

macro_rules! bb192_op {
    ($tr:ident, $f:ident, $atr:ident, $af:ident, $op:tt) => {
        impl $tr for Bb192 {
            type Output = Bb192;
            #[inline]
            fn $f(self, o: Bb192) -> Bb192 {
                Bb192([self.0[0] $op o.0[0], self.0[1] $op o.0[1], self.0[2] $op o.0[2]])
            }
        }
        impl $atr for Bb192 {
            #[inline]
            fn $af(&mut self, o: Bb192) {
                *self = *self $op o;
            }
        }
    };
}
bb192_op!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bb192_op!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bb192_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for Bb192 {
    type Output = Bb192;
    #[inline]
    fn not(self) -> Bb192 {
        Bb192([!self.0[0], !self.0[1], !self.0[2]])
    }
}

impl Bitboard for Bb192 {
    const CAPACITY: usize = 192;
    type Mailbox = [u8; 144];
    const EMPTY: Self = Bb192([0; 3]);
    #[inline]
    fn mailbox(fill: u8) -> [u8; 144] {
        [fill; 144]
    }
    #[inline]
    fn square(sq: usize) -> Self {
        let mut b = [0u64; 3];
        b[sq >> 6] = 1u64 << (sq & 63);
        Bb192(b)
    }
    #[inline]
    fn is_empty(self) -> bool {
        (self.0[0] | self.0[1] | self.0[2]) == 0
    }
    #[inline]
    fn has(self, sq: usize) -> bool {
        self.0[sq >> 6] >> (sq & 63) & 1 != 0
    }
    #[inline]
    fn lsb(self) -> usize {
        if self.0[0] != 0 {
            self.0[0].trailing_zeros() as usize
        } else if self.0[1] != 0 {
            64 + self.0[1].trailing_zeros() as usize
        } else {
            128 + self.0[2].trailing_zeros() as usize
        }
    }
    #[inline]
    fn msb(self) -> usize {
        if self.0[2] != 0 {
            191 - self.0[2].leading_zeros() as usize
        } else if self.0[1] != 0 {
            127 - self.0[1].leading_zeros() as usize
        } else {
            63 - self.0[0].leading_zeros() as usize
        }
    }
    #[inline]
    fn count(self) -> u32 {
        self.0[0].count_ones() + self.0[1].count_ones() + self.0[2].count_ones()
    }
    #[inline]
    fn clear_lsb(self) -> Self {
        let mut b = self.0;
        if b[0] != 0 {
            b[0] &= b[0] - 1;
        } else if b[1] != 0 {
            b[1] &= b[1] - 1;
        } else {
            b[2] &= b[2].wrapping_sub(1);
        }
        Bb192(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip<B: Bitboard>(squares: &[usize]) {
        let mut b = B::EMPTY;
        for &s in squares {
            b |= B::square(s);
        }
        let got: Vec<usize> = b.iter().collect();
        let mut want = squares.to_vec();
        want.sort_unstable();
        want.dedup();
        assert_eq!(got, want);
        assert_eq!(b.count() as usize, want.len());
        if let (Some(&lo), Some(&hi)) = (want.first(), want.last()) {
            assert_eq!(b.lsb(), lo);
            assert_eq!(b.msb(), hi);
        }
    }

    #[test]
    fn u64_iterates_in_order() {
        roundtrip::<u64>(&[0, 7, 8, 33, 63]);
    }

    #[test]
    fn bb192_crosses_word_boundaries() {
        roundtrip::<Bb192>(&[0, 63, 64, 100, 127, 128, 143]);
        roundtrip::<Bb192>(&[130]);
        assert!(Bb192::square(70).has(70));
        assert!(!Bb192::square(70).has(6));
    }
}
