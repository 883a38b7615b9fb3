//! Compact input planes: every input plane of vzero's encodings is either one value over the
//! whole board (hands, counters, flags) or a 0/1 mark per square (pieces, en passant), so a
//! row's planes are stored as one f32 per constant plane and one bit per square of each 0/1
//! plane; anything else (a plane that is neither, in a user's encoding) stays f32 per square.
//! A block's plane kinds are chosen from its data ([`PackedPlanes::pack`]) and stored with it,
//! so unpacking gives back exactly the f32 values that were packed.

/// How one plane is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PlaneKind {
    /// One f32 per row: every square of the plane holds the same value.
    Scalar = 0,
    /// One bit per square: every value is 0 or 1.
    Bits = 1,
    /// One f32 per square.
    Dense = 2,
}

impl PlaneKind {
    /// From its stored code.
    pub fn from_code(c: u8) -> Option<PlaneKind> {
        [PlaneKind::Scalar, PlaneKind::Bits, PlaneKind::Dense].into_iter().find(|k| *k as u8 == c)
    }
}

/// The input planes of a block of rows, packed. Row `i` is `bits[i*B..(i+1)*B]` (the 0/1
/// planes in plane order, square by square, least significant bit first), `scalars[i*S..]`
/// and `dense[i*D*area..]`, where B = ⌈(0/1 planes × area) / 8⌉, S the constant planes and D
/// the others.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PackedPlanes {
    /// Squares per plane (H × W).
    pub area: usize,
    /// Kind of each plane, in plane order.
    pub kinds: Vec<PlaneKind>,
    pub bits: Vec<u8>,
    pub scalars: Vec<f32>,
    pub dense: Vec<f32>,
    rows: usize,
}

impl PackedPlanes {
    /// An empty block with these plane kinds.
    pub fn new(kinds: Vec<PlaneKind>, area: usize) -> PackedPlanes {
        PackedPlanes { area, kinds, ..Default::default() }
    }

    /// Packs `planes` (rows of `kinds.len() × area` values each, as [`crate::RowBlock`] holds
    /// them), choosing each plane's kind from the data: constant within every row → scalar,
    /// else all 0 or 1 → bits, else dense.
    pub fn pack(planes: &[f32], channels: usize, area: usize) -> PackedPlanes {
        let len = channels * area;
        let rows = if len == 0 { 0 } else { planes.len() / len };
        let kinds = (0..channels)
            .map(|c| {
                let plane = |r: usize| &planes[r * len + c * area..r * len + (c + 1) * area];
                if (0..rows).all(|r| plane(r).iter().all(|&x| x.to_bits() == plane(r)[0].to_bits())) {
                    PlaneKind::Scalar
                } else if (0..rows).all(|r| plane(r).iter().all(|&x| x == 0.0 || x == 1.0)) {
                    PlaneKind::Bits
                } else {
                    PlaneKind::Dense
                }
            })
            .collect();
        let mut p = PackedPlanes::new(kinds, area);
        for r in 0..rows {
            p.push_row(&planes[r * len..(r + 1) * len]).expect("kinds chosen from these rows");
        }
        p
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Values per unpacked row (`C × area`).
    pub fn plane_len(&self) -> usize {
        self.kinds.len() * self.area
    }

    fn count(&self, kind: PlaneKind) -> usize {
        self.kinds.iter().filter(|&&k| k == kind).count()
    }

    /// Bytes of bits per row.
    pub fn bit_bytes(&self) -> usize {
        (self.count(PlaneKind::Bits) * self.area).div_ceil(8)
    }

    /// Constant planes per row.
    pub fn scalar_count(&self) -> usize {
        self.count(PlaneKind::Scalar)
    }

    /// Dense values per row.
    pub fn dense_len(&self) -> usize {
        self.count(PlaneKind::Dense) * self.area
    }

    /// Bytes one row takes here (its unpacked form takes `plane_len() × 4`).
    pub fn bytes_per_row(&self) -> usize {
        self.bit_bytes() + 4 * (self.scalar_count() + self.dense_len())
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.bits.capacity() + 4 * (self.scalars.capacity() + self.dense.capacity()) + self.kinds.capacity()
    }

    /// Appends one unpacked row; an error (nothing appended) when a value does not fit its
    /// plane's kind.
    pub fn push_row(&mut self, row: &[f32]) -> Result<(), String> {
        let area = self.area;
        if row.len() != self.plane_len() {
            return Err(format!("{} plane values, expected {}", row.len(), self.plane_len()));
        }
        for (c, k) in self.kinds.iter().enumerate() {
            let plane = &row[c * area..(c + 1) * area];
            let ok = match k {
                PlaneKind::Scalar => plane.iter().all(|&x| x.to_bits() == plane[0].to_bits()),
                PlaneKind::Bits => plane.iter().all(|&x| x == 0.0 || x == 1.0),
                PlaneKind::Dense => true,
            };
            if !ok {
                return Err(format!("plane {c} does not fit its kind {k:?}"));
            }
        }
        let start = self.bits.len();
        self.bits.resize(start + self.bit_bytes(), 0);
        let mut bit = 0usize;
        for (c, k) in self.kinds.iter().enumerate() {
            let plane = &row[c * area..(c + 1) * area];
            match k {
                PlaneKind::Scalar => self.scalars.push(plane[0]),
                PlaneKind::Dense => self.dense.extend_from_slice(plane),
                PlaneKind::Bits => {
                    for &x in plane {
                        if x == 1.0 {
                            self.bits[start + bit / 8] |= 1 << (bit % 8);
                        }
                        bit += 1;
                    }
                }
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Appends row `i` of `other` (same kinds and area) without unpacking it.
    pub fn push_from(&mut self, other: &PackedPlanes, i: usize) {
        debug_assert!(self.kinds == other.kinds && self.area == other.area);
        let (b, s, d) = (other.bit_bytes(), other.scalar_count(), other.dense_len());
        self.bits.extend_from_slice(&other.bits[i * b..(i + 1) * b]);
        self.scalars.extend_from_slice(&other.scalars[i * s..(i + 1) * s]);
        self.dense.extend_from_slice(&other.dense[i * d..(i + 1) * d]);
        self.rows += 1;
    }

    /// Writes row `i`, unpacked, into `out` (length [`PackedPlanes::plane_len`]).
    pub fn unpack_row(&self, i: usize, out: &mut [f32]) {
        let area = self.area;
        let (b, s, d) = (self.bit_bytes(), self.scalar_count(), self.dense_len());
        let bits = &self.bits[i * b..(i + 1) * b];
        let (mut si, mut di, mut bit) = (i * s, i * d, 0usize);
        for (c, k) in self.kinds.iter().enumerate() {
            let plane = &mut out[c * area..(c + 1) * area];
            match k {
                PlaneKind::Scalar => {
                    plane.fill(self.scalars[si]);
                    si += 1;
                }
                PlaneKind::Dense => {
                    plane.copy_from_slice(&self.dense[di..di + area]);
                    di += area;
                }
                PlaneKind::Bits => {
                    for x in plane.iter_mut() {
                        *x = (bits[bit / 8] >> (bit % 8) & 1) as f32;
                        bit += 1;
                    }
                }
            }
        }
    }

    /// Every row, unpacked.
    pub fn unpack_all(&self) -> Vec<f32> {
        let len = self.plane_len();
        let mut out = vec![0.0; self.rows * len];
        for i in 0..self.rows {
            self.unpack_row(i, &mut out[i * len..(i + 1) * len]);
        }
        out
    }

    /// Checks that the arrays hold `rows` rows of these kinds (for data read from files).
    pub fn check(&self) -> Result<(), String> {
        let (b, s, d) = (self.bit_bytes(), self.scalar_count(), self.dense_len());
        if self.bits.len() != self.rows * b || self.scalars.len() != self.rows * s || self.dense.len() != self.rows * d {
            return Err(format!(
                "packed planes: {} bit bytes, {} scalars, {} dense values do not make {} rows of {b}, {s}, {d}",
                self.bits.len(),
                self.scalars.len(),
                self.dense.len(),
                self.rows
            ));
        }
        Ok(())
    }

    /// Assembles a block from its stored arrays (checked).
    pub fn from_parts(kinds: Vec<PlaneKind>, area: usize, rows: usize, bits: Vec<u8>, scalars: Vec<f32>, dense: Vec<f32>) -> Result<PackedPlanes, String> {
        let p = PackedPlanes { area, kinds, bits, scalars, dense, rows };
        p.check()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn pack_unpack_round_trips_exactly(rows in 0usize..6, seed in any::<u64>()) {
            use rand::{Rng, SeedableRng};
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let (channels, area) = (5, 12);
            // plane 0: constant (a hand count), 1-2: 0/1 marks, 3: constant 0/1 flag, 4: anything
            let mut planes = Vec::new();
            for _ in 0..rows {
                let hand = rng.gen_range(0..5) as f32 / 4.0;
                planes.extend(std::iter::repeat(hand).take(area));
                for _ in 0..2 * area {
                    planes.push(if rng.gen_bool(0.3) { 1.0 } else { 0.0 });
                }
                let flag = if rng.gen_bool(0.5) { 1.0 } else { 0.0 };
                planes.extend(std::iter::repeat(flag).take(area));
                for _ in 0..area {
                    planes.push(rng.gen_range(-1.0f32..1.0));
                }
            }
            let p = PackedPlanes::pack(&planes, channels, area);
            prop_assert_eq!(p.len(), rows);
            prop_assert_eq!(p.unpack_all(), planes.clone());
            if rows > 0 {
                prop_assert_eq!(p.kinds[0], PlaneKind::Scalar);
                prop_assert_eq!(p.kinds[3], PlaneKind::Scalar);
                prop_assert!(p.kinds[1] == PlaneKind::Bits || p.kinds[1] == PlaneKind::Scalar);
                prop_assert_eq!(p.kinds[4], PlaneKind::Dense);
            }
            // row by row copies give the same rows
            let mut q = PackedPlanes::new(p.kinds.clone(), area);
            for i in (0..rows).rev() {
                q.push_from(&p, i);
            }
            let mut row = vec![0.0; channels * area];
            for i in 0..rows {
                q.unpack_row(rows - 1 - i, &mut row);
                prop_assert_eq!(&row[..], &planes[i * channels * area..(i + 1) * channels * area]);
            }
        }
    }

    #[test]
    fn binary_planes_take_a_bit_per_square() {
        // two planes with marks and twelve constant ones on 8x8: 16 + 48 bytes instead of 3584
        let (channels, area) = (14, 64);
        let mut planes = vec![0.0f32; channels * area];
        planes[3] = 1.0;
        planes[64 * 9 + 63] = 1.0;
        planes[64 * 10..64 * 11].fill(0.5);
        let p = PackedPlanes::pack(&planes, channels, area);
        assert_eq!(p.count(PlaneKind::Bits), 2);
        assert_eq!(p.bytes_per_row(), 2 * 64 / 8 + 12 * 4);
        assert_eq!(p.unpack_all(), planes);
        let mut q = PackedPlanes::new(p.kinds.clone(), area);
        let mut bad = planes.clone();
        bad[64 * 9] = 0.25;
        assert!(q.push_row(&bad).is_err());
        assert!(q.is_empty());
    }
}
