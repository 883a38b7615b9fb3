//! The integer network, layer by layer, computed exactly as Fairy-Stockfish does
//! (`nnue_feature_transformer.h`, `layers/affine_transform.h`, `layers/clipped_relu.h`).
//!
//! Feature transformer: `i16` accumulators (bias plus the rows of the active features, adds
//! wrapping as in 16-bit SIMD lanes) and `i32` PSQT accumulators; the side to move's half, then
//! the opponent's, each clamped to `[0, 127]`, make the 1024 `u8` inputs of the layer stack.
//! Hidden layers: `i32` sums of `i8` weights times `u8` inputs plus an `i32` bias, then
//! `clamp(x >> 6, 0, 127)` (an arithmetic shift: floor). Output: one `i32`.

use crate::error::{NnueError, Result};
use crate::features::Bucket;

/// Outputs of the feature transformer per perspective.
pub const HALF_DIMENSIONS: usize = 512;
/// Inputs of the layer stack: both perspectives.
pub const STACK_INPUTS: usize = 2 * HALF_DIMENSIONS;
/// Outputs of the first hidden layer.
pub const HIDDEN1: usize = 16;
/// Outputs of the second hidden layer.
pub const HIDDEN2: usize = 32;
/// PSQT buckets (one PSQT column each).
pub const PSQT_BUCKETS: usize = 8;
/// Layer stacks (one per bucket).
pub const LAYER_STACKS: usize = 8;
/// Right shift after each hidden layer (`WeightScaleBits`).
pub const WEIGHT_SCALE_BITS: u32 = 6;
/// Divisor of `psqt + positional` (`OutputScale`).
pub const OUTPUT_SCALE: i32 = 16;

/// Layer inputs are padded to a multiple of 32 in the file (`ceil_to_multiple(n, 32)`).
pub const fn padded_inputs(inputs: usize) -> usize {
    inputs.div_ceil(32) * 32
}

/// How the hidden layers add up their products, which matters only when a sum of four
/// products leaves the `i16` range.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Arithmetic {
    /// Fairy-Stockfish's x86 builds with SSSE3 but without VNNI (`x86-64-modern`, `-avx2`,
    /// `-bmi2`, `-avx512`): the hidden layers add pairs of `maddubs` results with a saturating
    /// `i16` add before widening to `i32`.
    #[default]
    Ssse3,
    /// Exact `i32` sums: Fairy-Stockfish's scalar, SSE2, NEON and VNNI builds.
    Exact,
}

/// `i16` saturation.
#[inline]
fn sat16(x: i32) -> i32 {
    x.clamp(i16::MIN as i32, i16::MAX as i32)
}

/// Per-perspective accumulator: the feature transformer's `i16` sums and the `i32` PSQT sums.
#[derive(Clone, Debug)]
pub struct Accumulator {
    /// Bias plus the rows of the active features.
    pub values: [i16; HALF_DIMENSIONS],
    /// PSQT sums, one per bucket.
    pub psqt: [i32; PSQT_BUCKETS],
}

impl Default for Accumulator {
    fn default() -> Self {
        Accumulator { values: [0; HALF_DIMENSIONS], psqt: [0; PSQT_BUCKETS] }
    }
}

/// The feature transformer: `i16` biases `[512]`, `i16` weights `[D][512]`, `i32` PSQT
/// weights `[D][8]` (the file's layout).
#[derive(Clone, Debug, PartialEq)]
pub struct FeatureTransformer {
    dims: usize,
    biases: Vec<i16>,
    weights: Vec<i16>,
    psqt: Vec<i32>,
}

impl FeatureTransformer {
    /// All zero, for `dims` features.
    pub fn zeroed(dims: usize) -> FeatureTransformer {
        FeatureTransformer {
            dims,
            biases: vec![0; HALF_DIMENSIONS],
            weights: vec![0; dims * HALF_DIMENSIONS],
            psqt: vec![0; dims * PSQT_BUCKETS],
        }
    }

    /// From its parts; refuses wrong lengths.
    pub fn new(dims: usize, biases: Vec<i16>, weights: Vec<i16>, psqt: Vec<i32>) -> Result<FeatureTransformer> {
        if biases.len() != HALF_DIMENSIONS
            || weights.len() != dims * HALF_DIMENSIONS
            || psqt.len() != dims * PSQT_BUCKETS
        {
            return Err(NnueError::Shape(format!(
                "feature transformer for {dims} features needs {HALF_DIMENSIONS} biases, {} weights and {} PSQT weights, got {}, {} and {}",
                dims * HALF_DIMENSIONS,
                dims * PSQT_BUCKETS,
                biases.len(),
                weights.len(),
                psqt.len()
            )));
        }
        Ok(FeatureTransformer { dims, biases, weights, psqt })
    }

    /// Number of input features.
    pub fn dimensions(&self) -> usize {
        self.dims
    }

    /// Biases, `[512]`.
    pub fn biases(&self) -> &[i16] {
        &self.biases
    }

    /// Weights, `[D][512]`.
    pub fn weights(&self) -> &[i16] {
        &self.weights
    }

    /// PSQT weights, `[D][8]`.
    pub fn psqt(&self) -> &[i32] {
        &self.psqt
    }

    /// Biases, writable.
    pub fn biases_mut(&mut self) -> &mut [i16] {
        &mut self.biases
    }

    /// Weights, writable.
    pub fn weights_mut(&mut self) -> &mut [i16] {
        &mut self.weights
    }

    /// PSQT weights, writable.
    pub fn psqt_mut(&mut self) -> &mut [i32] {
        &mut self.psqt
    }

    /// Refreshes `acc` from the active features (indices below [`Self::dimensions`]; others
    /// are skipped).
    #[inline(always)]
    pub fn refresh(&self, features: &[u32], acc: &mut Accumulator) {
        // In tiles that stay in registers across all features (as Fairy-Stockfish's SIMD code).
        const TILE: usize = 64;
        for (t, out) in acc.values.chunks_exact_mut(TILE).enumerate() {
            let mut tile = [0i16; TILE];
            tile.copy_from_slice(&self.biases[t * TILE..(t + 1) * TILE]);
            for &f in features {
                let start = f as usize * HALF_DIMENSIONS + t * TILE;
                if let Some(row) = self.weights.get(start..start + TILE) {
                    for (a, &w) in tile.iter_mut().zip(row) {
                        *a = a.wrapping_add(w);
                    }
                }
            }
            out.copy_from_slice(&tile);
        }
        acc.psqt = [0; PSQT_BUCKETS];
        for &f in features {
            let start = f as usize * PSQT_BUCKETS;
            if let Some(row) = self.psqt.get(start..start + PSQT_BUCKETS) {
                for (a, &w) in acc.psqt.iter_mut().zip(row) {
                    *a = a.wrapping_add(w);
                }
            }
        }
    }

    /// Adds feature `f`'s row to `acc` (wrapping, as Fairy-Stockfish's 16-bit lanes).
    #[inline]
    pub fn add(&self, f: u32, acc: &mut Accumulator) {
        self.apply(f, acc, i16::wrapping_add, i32::wrapping_add);
    }

    /// Subtracts feature `f`'s row from `acc` (for incremental updates).
    #[inline]
    pub fn sub(&self, f: u32, acc: &mut Accumulator) {
        self.apply(f, acc, i16::wrapping_sub, i32::wrapping_sub);
    }

    #[inline(always)]
    fn apply(&self, f: u32, acc: &mut Accumulator, op: fn(i16, i16) -> i16, psqt_op: fn(i32, i32) -> i32) {
        let f = f as usize;
        let (Some(row), Some(prow)) = (
            self.weights.get(f * HALF_DIMENSIONS..(f + 1) * HALF_DIMENSIONS),
            self.psqt.get(f * PSQT_BUCKETS..(f + 1) * PSQT_BUCKETS),
        ) else {
            return;
        };
        for (a, &w) in acc.values.iter_mut().zip(row) {
            *a = op(*a, w);
        }
        for (a, &w) in acc.psqt.iter_mut().zip(prow) {
            *a = psqt_op(*a, w);
        }
    }

    /// The layer stack's input (side to move's half first, each clamped to `[0, 127]`) and the
    /// PSQT term `(psqt[us] − psqt[them]) / 2` (division truncating toward zero, as C++).
    #[inline(always)]
    pub fn transform(us: &Accumulator, them: &Accumulator, bucket: Bucket, out: &mut [u8; STACK_INPUTS]) -> i32 {
        let (a, b) = out.split_at_mut(HALF_DIMENSIONS);
        for (o, &v) in a.iter_mut().zip(&us.values) {
            *o = v.clamp(0, 127) as u8;
        }
        for (o, &v) in b.iter_mut().zip(&them.values) {
            *o = v.clamp(0, 127) as u8;
        }
        us.psqt[bucket.index()].wrapping_sub(them.psqt[bucket.index()]) / 2
    }
}

/// An affine layer: `i32` biases `[out]`, `i8` weights `[out][padded in]` (the padding is
/// stored and ignored).
#[derive(Clone, Debug, PartialEq)]
pub struct Affine {
    inputs: usize,
    outputs: usize,
    biases: Vec<i32>,
    weights: Vec<i8>,
    /// Whether a lane of four products can leave the `i16` range under [`Arithmetic::Ssse3`].
    may_saturate: bool,
}

impl Affine {
    /// All zero.
    pub fn zeroed(inputs: usize, outputs: usize) -> Affine {
        Affine {
            inputs,
            outputs,
            biases: vec![0; outputs],
            weights: vec![0; outputs * padded_inputs(inputs)],
            may_saturate: false,
        }
    }

    /// From its parts (weights with padded rows); refuses wrong lengths.
    pub fn new(inputs: usize, outputs: usize, biases: Vec<i32>, weights: Vec<i8>) -> Result<Affine> {
        let padded = padded_inputs(inputs);
        if biases.len() != outputs || weights.len() != outputs * padded {
            return Err(NnueError::Shape(format!(
                "affine layer {inputs}->{outputs} needs {outputs} biases and {} weights, got {} and {}",
                outputs * padded,
                biases.len(),
                weights.len()
            )));
        }
        let mut a = Affine { inputs, outputs, biases, weights, may_saturate: false };
        a.may_saturate = a.compute_may_saturate();
        Ok(a)
    }

    /// Inputs used.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// Inputs per weight row in the file (a multiple of 32).
    pub fn padded_inputs(&self) -> usize {
        padded_inputs(self.inputs)
    }

    /// Outputs.
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// Biases, `[out]`.
    pub fn biases(&self) -> &[i32] {
        &self.biases
    }

    /// Weights, `[out][padded in]`.
    pub fn weights(&self) -> &[i8] {
        &self.weights
    }

    /// The weight from input `i` to output `o`.
    pub fn weight(&self, o: usize, i: usize) -> i8 {
        self.weights.get(o * self.padded_inputs() + i).copied().unwrap_or(0)
    }

    /// Whether Fairy-Stockfish's SSSE3 path (four-product lanes; see [`Arithmetic`]) applies:
    /// layers with more than one output and inputs in groups of 16.
    fn grouped(&self) -> bool {
        self.outputs > 1 && self.inputs & 15 == 0
    }

    /// Whether some input can make a four-product lane of the SSSE3 path leave the `i16` range
    /// (then [`Arithmetic::Ssse3`] and [`Arithmetic::Exact`] may differ).
    pub fn may_saturate(&self) -> bool {
        self.may_saturate
    }

    fn compute_may_saturate(&self) -> bool {
        if !self.grouped() {
            return false;
        }
        let padded = self.padded_inputs();
        (0..self.outputs).any(|o| {
            let row = &self.weights[o * padded..o * padded + self.inputs];
            row.chunks_exact(16).any(|g| {
                // The four lanes of a group of 16 inputs: (0,1,4,5), (2,3,6,7), (8,9,12,13), (10,11,14,15).
                [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]].iter().any(|lane| {
                    let pos: i32 = lane.iter().map(|&k| (g[k] as i32).max(0)).sum();
                    let neg: i32 = lane.iter().map(|&k| (g[k] as i32).min(0)).sum();
                    127 * pos > i16::MAX as i32 || 127 * neg < i16::MIN as i32
                })
            })
        })
    }

    /// `out[o] = bias[o] + Σ weight[o][i] · input[i]`, summed as `arith` says.
    #[inline(always)]
    pub fn propagate(&self, input: &[u8], out: &mut [i32], arith: Arithmetic) {
        let padded = self.padded_inputs();
        let n = self.inputs.min(input.len());
        let input = &input[..n];
        let ssse3 = arith == Arithmetic::Ssse3 && self.may_saturate && self.grouped();
        for ((o, &b), row) in out.iter_mut().zip(&self.biases).zip(self.weights.chunks_exact(padded)) {
            let row = &row[..n];
            let sum = if ssse3 { dot_ssse3(row, input) } else { dot(row, input) };
            *o = b.wrapping_add(sum);
        }
    }
}

/// Exact dot product of `i8` weights and `u8` inputs, in 16 lanes (vectorises well).
#[inline(always)]
fn dot(row: &[i8], input: &[u8]) -> i32 {
    let mut lanes = [0i32; 16];
    let mut w = row.chunks_exact(16);
    let mut x = input.chunks_exact(16);
    for (wc, xc) in (&mut w).zip(&mut x) {
        for k in 0..16 {
            lanes[k] += wc[k] as i32 * xc[k] as i32;
        }
    }
    let tail: i32 = w.remainder().iter().zip(x.remainder()).map(|(&a, &b)| a as i32 * b as i32).sum();
    lanes.iter().sum::<i32>() + tail
}

/// Fairy-Stockfish's SSSE3/AVX2/AVX-512 (non-VNNI) dot product: per group of 16 inputs, pairs
/// of products (`maddubs`, exact) are added in four `i16` lanes with saturation (`adds_epi16`),
/// then widened and summed.
#[inline(always)]
fn dot_ssse3(row: &[i8], input: &[u8]) -> i32 {
    let mut sum = 0i32;
    for (w, x) in row.chunks_exact(16).zip(input.chunks_exact(16)) {
        let p = |k: usize| w[k] as i32 * x[k] as i32 + w[k + 1] as i32 * x[k + 1] as i32;
        let lanes = sat16(p(0) + p(4)) + sat16(p(2) + p(6)) + sat16(p(8) + p(12)) + sat16(p(10) + p(14));
        sum = sum.wrapping_add(lanes);
    }
    sum
}

/// Clipped ReLU of the hidden layers: `clamp(x >> 6, 0, 127)`.
#[inline(always)]
pub fn clipped_relu(input: &[i32], out: &mut [u8]) {
    for (o, &x) in out.iter_mut().zip(input) {
        *o = (x >> WEIGHT_SCALE_BITS).clamp(0, 127) as u8;
    }
}

/// One layer stack: 1024 → 16 (clipped ReLU) → 32 (clipped ReLU) → 1.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerStack {
    hidden1: Affine,
    hidden2: Affine,
    output: Affine,
}

impl Default for LayerStack {
    fn default() -> Self {
        LayerStack {
            hidden1: Affine::zeroed(STACK_INPUTS, HIDDEN1),
            hidden2: Affine::zeroed(HIDDEN1, HIDDEN2),
            output: Affine::zeroed(HIDDEN2, 1),
        }
    }
}

impl LayerStack {
    /// From its three layers; refuses other shapes.
    pub fn new(hidden1: Affine, hidden2: Affine, output: Affine) -> Result<LayerStack> {
        let shape = |a: &Affine| (a.inputs, a.outputs);
        if shape(&hidden1) != (STACK_INPUTS, HIDDEN1)
            || shape(&hidden2) != (HIDDEN1, HIDDEN2)
            || shape(&output) != (HIDDEN2, 1)
        {
            return Err(NnueError::Shape(format!(
                "a layer stack is {STACK_INPUTS}->{HIDDEN1}->{HIDDEN2}->1, got {:?} {:?} {:?}",
                shape(&hidden1),
                shape(&hidden2),
                shape(&output)
            )));
        }
        Ok(LayerStack { hidden1, hidden2, output })
    }

    /// The first hidden layer (1024 → 16).
    pub fn hidden1(&self) -> &Affine {
        &self.hidden1
    }

    /// The second hidden layer (16 → 32).
    pub fn hidden2(&self) -> &Affine {
        &self.hidden2
    }

    /// The output layer (32 → 1).
    pub fn output(&self) -> &Affine {
        &self.output
    }

    /// Whether [`Arithmetic::Ssse3`] and [`Arithmetic::Exact`] can differ for some input.
    pub fn may_saturate(&self) -> bool {
        self.hidden1.may_saturate() || self.hidden2.may_saturate()
    }

    /// The positional output (before `/ 16`) for the transformed features.
    #[inline(always)]
    pub fn propagate(&self, input: &[u8; STACK_INPUTS], arith: Arithmetic) -> i32 {
        let mut s1 = [0i32; HIDDEN1];
        let mut a1 = [0u8; HIDDEN1];
        let mut s2 = [0i32; HIDDEN2];
        let mut a2 = [0u8; HIDDEN2];
        let mut out = [0i32; 1];
        self.hidden1.propagate(input, &mut s1, arith);
        clipped_relu(&s1, &mut a1);
        self.hidden2.propagate(&a1, &mut s2, arith);
        clipped_relu(&s2, &mut a2);
        self.output.propagate(&a2, &mut out, arith);
        out[0]
    }
}
