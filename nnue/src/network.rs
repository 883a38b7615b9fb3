//! The network: the integer net of a `.nnue` file ([`Network`]) and the float net a trainer
//! updates ([`FloatNetwork`]), with quantisation from float to integer as
//! variant-nnue-pytorch's `serialize.py` does it.
//!
//! Float units: the float net's output times [`NET_TO_INTERNAL`] (600) is Fairy-Stockfish's
//! internal value. Quantisation scales: feature transformer ×127 (`i16`), PSQT ×9600 (`i32`),
//! hidden weights ×64 (`i8`, clipped to ±127/64) and biases ×8128 (`i32`), output weights
//! ×9600/127 (`i8`, clipped to ±127·127/9600) and bias ×9600; rounding half to even
//! (`torch.round`), out-of-range values saturated.

use crate::error::{NnueError, Result};
use crate::features::{Bucket, PositionFeatures};
use crate::layers::{
    padded_inputs, Accumulator, Affine, Arithmetic, FeatureTransformer, LayerStack, HALF_DIMENSIONS, HIDDEN1, HIDDEN2,
    LAYER_STACKS, OUTPUT_SCALE, PSQT_BUCKETS, STACK_INPUTS,
};
use crate::variant::FsfMapping;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::borrow::Cow;
use vzero_rules::Color;

/// Float output × 600 = Fairy-Stockfish's internal units (9600 / `OutputScale`).
pub const NET_TO_INTERNAL: f32 = 600.0;
/// Scale of the feature transformer's weights and biases.
pub const FT_SCALE: f32 = 127.0;
/// Scale of the PSQT weights and of the output layer's bias.
pub const PSQT_SCALE: f32 = 9600.0;
/// Scale of the hidden layers' weights.
pub const HIDDEN_WEIGHT_SCALE: f32 = 64.0;
/// Scale of the hidden layers' biases (64 · 127).
pub const HIDDEN_BIAS_SCALE: f32 = 8128.0;
/// Scale of the output layer's weights (9600 / 127).
pub const OUTPUT_WEIGHT_SCALE: f32 = 9600.0 / 127.0;
/// Largest hidden-layer weight that quantises into `i8`: 127/64.
pub const MAX_HIDDEN_WEIGHT: f32 = 127.0 / 64.0;
/// Largest output-layer weight that quantises into `i8`: 127·127/9600.
pub const MAX_OUTPUT_WEIGHT: f32 = 127.0 * 127.0 / 9600.0;

/// What the integer net computes for one position (Fairy-Stockfish's `NNUE::evaluate` with
/// `adjusted = false`, as its `eval` command prints it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// Side to move.
    pub side_to_move: Color,
    /// The bucket used (PSQT column and layer stack).
    pub bucket: Bucket,
    /// `(psqtAcc[us] − psqtAcc[them]) / 2`, before `/ 16`.
    pub psqt: i32,
    /// The layer stack's output, before `/ 16`.
    pub positional: i32,
    /// `(psqt + positional) / 16` in internal units (an endgame pawn is 208), side to move.
    pub value: i32,
}

impl Evaluation {
    /// The value from White's side, as `eval` prints it.
    pub fn white_value(&self) -> i32 {
        if self.side_to_move == Color::White {
            self.value
        } else {
            -self.value
        }
    }

    /// Fairy-Stockfish's `eval` line: `NNUE evaluation        +6.64 (white side)`.
    pub fn fsf_line(&self) -> String {
        format!("NNUE evaluation        {} (white side)", format_pawns(self.white_value()))
    }
}

/// Fairy-Stockfish's `to_cp` as `eval` prints it: `v / 208` with a sign and two decimals
/// (`std::showpos`, `std::fixed`, `setprecision(2)`: round half to even, `+0.00` for 0,
/// `-0.00` for small negative values). Computed in integers, exactly.
pub fn format_pawns(v: i32) -> String {
    const PAWN_EG: i64 = 208;
    let a = (v as i64).abs() * 100;
    let (mut cents, rem) = (a / PAWN_EG, a % PAWN_EG);
    if 2 * rem > PAWN_EG || (2 * rem == PAWN_EG && cents % 2 == 1) {
        cents += 1;
    }
    let sign = if v < 0 { '-' } else { '+' };
    format!("{sign}{}.{:02}", cents / 100, cents % 100)
}

/// A quantised net as Fairy-Stockfish reads it: description, feature transformer, 8 stacks.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    description: Vec<u8>,
    ft: FeatureTransformer,
    stacks: Vec<LayerStack>,
}

impl Network {
    /// From its parts; refuses a stack count other than 8.
    pub fn new(description: Vec<u8>, ft: FeatureTransformer, stacks: Vec<LayerStack>) -> Result<Network> {
        if stacks.len() != LAYER_STACKS {
            return Err(NnueError::Shape(format!("a net has {LAYER_STACKS} layer stacks, got {}", stacks.len())));
        }
        if description.len() > u32::MAX as usize {
            return Err(NnueError::Shape("description longer than 4 GiB".into()));
        }
        Ok(Network { description, ft, stacks })
    }

    /// All weights zero, for `dims` features.
    pub fn zeroed(dims: usize, description: &str) -> Network {
        Network {
            description: description.as_bytes().to_vec(),
            ft: FeatureTransformer::zeroed(dims),
            stacks: vec![LayerStack::default(); LAYER_STACKS],
        }
    }

    /// The material net of a variant: feature transformer and layers 0; the PSQT rows hold
    /// +16·v on the own plane and own hand slots, −16·v on the opponent's, in every bucket and
    /// king block (v = [`FsfMapping::values`]), so the evaluation is the material balance in
    /// internal units.
    pub fn material(mapping: &FsfMapping) -> Network {
        let mut net = Network::zeroed(mapping.dimensions(), "vzero material net: PSQT = 16 x piece value");
        let psqt = net.ft.psqt_mut();
        for (f, v) in material_rows(mapping) {
            psqt[f * PSQT_BUCKETS..(f + 1) * PSQT_BUCKETS].fill(16 * v);
        }
        net
    }

    /// The description string's bytes.
    pub fn description(&self) -> &[u8] {
        &self.description
    }

    /// The description as text (invalid UTF-8 replaced).
    pub fn description_text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.description)
    }

    /// Replaces the description.
    pub fn set_description(&mut self, description: &str) {
        self.description = description.as_bytes().to_vec();
    }

    /// Number of input features.
    pub fn dimensions(&self) -> usize {
        self.ft.dimensions()
    }

    /// The feature transformer.
    pub fn feature_transformer(&self) -> &FeatureTransformer {
        &self.ft
    }

    /// The feature transformer, writable.
    pub fn feature_transformer_mut(&mut self) -> &mut FeatureTransformer {
        &mut self.ft
    }

    /// The 8 layer stacks.
    pub fn stacks(&self) -> &[LayerStack] {
        &self.stacks
    }

    /// Whether Fairy-Stockfish's SSSE3-family builds and its exact builds can disagree on some
    /// position (a hidden-layer lane of four products can saturate; see [`Arithmetic`]).
    pub fn may_saturate(&self) -> bool {
        self.stacks.iter().any(|s| s.may_saturate())
    }

    /// Evaluates a position's features as Fairy-Stockfish's x86 builds do
    /// ([`Arithmetic::Ssse3`]).
    pub fn evaluate(&self, features: &PositionFeatures) -> Result<Evaluation> {
        self.evaluate_with(features, Arithmetic::default())
    }

    /// Evaluates with the given hidden-layer arithmetic.
    pub fn evaluate_with(&self, features: &PositionFeatures, arith: Arithmetic) -> Result<Evaluation> {
        self.check_dimensions(features)?;
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return Ok(unsafe { self.evaluate_avx2(features, arith) });
        }
        Ok(self.evaluate_plain(features, arith))
    }

    /// The whole forward pass, compiled for AVX2 (the same integer arithmetic, wider vectors).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn evaluate_avx2(&self, features: &PositionFeatures, arith: Arithmetic) -> Evaluation {
        self.evaluate_plain(features, arith)
    }

    #[inline(always)]
    fn evaluate_plain(&self, features: &PositionFeatures, arith: Arithmetic) -> Evaluation {
        let us = features.side_to_move();
        let mut acc = [Accumulator::default(), Accumulator::default()];
        self.ft.refresh(features.perspective(us), &mut acc[0]);
        self.ft.refresh(features.perspective(us.flip()), &mut acc[1]);
        self.evaluate_accumulators(&acc[0], &acc[1], us, features.bucket(), arith)
    }

    /// Evaluates from accumulators kept by the caller (incremental updates): `us` is the side
    /// to move's.
    #[inline(always)]
    pub fn evaluate_accumulators(
        &self,
        us: &Accumulator,
        them: &Accumulator,
        side_to_move: Color,
        bucket: Bucket,
        arith: Arithmetic,
    ) -> Evaluation {
        let mut input = [0u8; STACK_INPUTS];
        let psqt = FeatureTransformer::transform(us, them, bucket, &mut input);
        let positional = self.stacks[bucket.index()].propagate(&input, arith);
        // Fairy-Stockfish: (A·psqt + B·positional) / 128 with A = B = 128, then / OutputScale.
        let sum = 128i32.wrapping_mul(psqt).wrapping_add(128i32.wrapping_mul(positional)) / 128;
        Evaluation { side_to_move, bucket, psqt, positional, value: sum / OUTPUT_SCALE }
    }

    fn check_dimensions(&self, features: &PositionFeatures) -> Result<()> {
        if features.dimensions() != self.dimensions() {
            return Err(NnueError::Dimensions {
                network: self.dimensions(),
                variant: "of these features".into(),
                mapping: features.dimensions(),
            });
        }
        Ok(())
    }

    /// The float net this quantised net stands for (each value divided by its scale).
    pub fn to_float(&self) -> FloatNetwork {
        let ft = &self.ft;
        let stacks = self
            .stacks
            .iter()
            .map(|s| {
                let unpad = |a: &Affine, scale: f32| -> Vec<f32> {
                    let p = a.padded_inputs();
                    a.weights()
                        .chunks_exact(p)
                        .flat_map(|row| row[..a.inputs()].iter().map(move |&w| w as f32 / scale))
                        .collect()
                };
                FloatStack {
                    l1_weight: unpad(s.hidden1(), HIDDEN_WEIGHT_SCALE),
                    l1_bias: s.hidden1().biases().iter().map(|&b| b as f32 / HIDDEN_BIAS_SCALE).collect(),
                    l2_weight: unpad(s.hidden2(), HIDDEN_WEIGHT_SCALE),
                    l2_bias: s.hidden2().biases().iter().map(|&b| b as f32 / HIDDEN_BIAS_SCALE).collect(),
                    out_weight: unpad(s.output(), OUTPUT_WEIGHT_SCALE),
                    out_bias: s.output().biases()[0] as f32 / PSQT_SCALE,
                }
            })
            .collect();
        FloatNetwork {
            dims: ft.dimensions(),
            factor: 0,
            ft_bias: ft.biases().iter().map(|&b| b as f32 / FT_SCALE).collect(),
            ft_weight: ft.weights().iter().map(|&w| w as f32 / FT_SCALE).collect(),
            psqt: ft.psqt().iter().map(|&w| w as f32 / PSQT_SCALE).collect(),
            stacks,
        }
    }
}

/// The PSQT rows of the material net: (feature, value) for every board plane square and hand
/// slot of every king block, `+v` own, `−v` opponent's (the king's shared plane is 0).
fn material_rows(mapping: &FsfMapping) -> impl Iterator<Item = (usize, i32)> + '_ {
    let nsq = mapping.squares();
    let ntypes = mapping.piece_types().len();
    let pockets = mapping.pockets();
    let non_drop = mapping.non_drop_indices();
    let per_block = mapping.piece_indices();
    let king = mapping.king_slot();
    (0..mapping.king_blocks()).flat_map(move |k| {
        (0..ntypes).filter(move |&i| Some(i) != king).flat_map(move |i| {
            let v = mapping.values()[i];
            let base = k * per_block;
            let board = (0..nsq).flat_map(move |s| [(base + 2 * i * nsq + s, v), (base + (2 * i + 1) * nsq + s, -v)]);
            let hand = (0..pockets).flat_map(move |n| {
                [(base + non_drop + 2 * i * pockets + n, v), (base + non_drop + (2 * i + 1) * pockets + n, -v)]
            });
            board.chain(hand)
        })
    })
}

/// One float layer stack: weights `[out][in]` (unpadded), biases `[out]`.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatStack {
    /// First hidden layer weights, `[16][1024]`.
    pub l1_weight: Vec<f32>,
    /// First hidden layer biases, `[16]`.
    pub l1_bias: Vec<f32>,
    /// Second hidden layer weights, `[32][16]`.
    pub l2_weight: Vec<f32>,
    /// Second hidden layer biases, `[32]`.
    pub l2_bias: Vec<f32>,
    /// Output weights, `[32]`.
    pub out_weight: Vec<f32>,
    /// Output bias.
    pub out_bias: f32,
}

impl FloatStack {
    pub(crate) fn zeroed() -> FloatStack {
        FloatStack {
            l1_weight: vec![0.0; HIDDEN1 * STACK_INPUTS],
            l1_bias: vec![0.0; HIDDEN1],
            l2_weight: vec![0.0; HIDDEN2 * HIDDEN1],
            l2_bias: vec![0.0; HIDDEN2],
            out_weight: vec![0.0; HIDDEN2],
            out_bias: 0.0,
        }
    }

    fn has_shape(&self) -> bool {
        self.l1_weight.len() == HIDDEN1 * STACK_INPUTS
            && self.l1_bias.len() == HIDDEN1
            && self.l2_weight.len() == HIDDEN2 * HIDDEN1
            && self.l2_bias.len() == HIDDEN2
            && self.out_weight.len() == HIDDEN2
    }

    /// The stack's output (float units) for clamped feature-transformer outputs `x`.
    pub fn forward(&self, x: &[f32; STACK_INPUTS]) -> f32 {
        let mut h1 = [0f32; HIDDEN1];
        for ((h, row), &b) in h1.iter_mut().zip(self.l1_weight.chunks_exact(STACK_INPUTS)).zip(&self.l1_bias) {
            *h = (b + row.iter().zip(x).map(|(w, v)| w * v).sum::<f32>()).clamp(0.0, 1.0);
        }
        let mut h2 = [0f32; HIDDEN2];
        for ((h, row), &b) in h2.iter_mut().zip(self.l2_weight.chunks_exact(HIDDEN1)).zip(&self.l2_bias) {
            *h = (b + row.iter().zip(&h1).map(|(w, v)| w * v).sum::<f32>()).clamp(0.0, 1.0);
        }
        self.out_bias + self.out_weight.iter().zip(&h2).map(|(w, v)| w * v).sum::<f32>()
    }
}

/// The float net a trainer updates (variant-nnue-pytorch's model): feature transformer biases
/// `[512]`, weights `[D][512]`, PSQT `[D][8]`, and 8 stacks. Output × [`NET_TO_INTERNAL`] =
/// internal units.
///
/// **Virtual factoriser** (optional, [`FloatNetwork::with_factorizer`]): `F` more rows, one per
/// piece-square feature *without* the king block (`F` = the mapping's features per king block).
/// A real feature `f` also activates virtual row `D + f mod F`, so what a piece on a square is
/// worth is learnt from every king position at once, not separately per king square (the
/// king-bucketed rows see few positions each when data is scarce). The exported net has no
/// virtual rows: [`FloatNetwork::folded`] adds each virtual row into its real rows, which gives
/// exactly the same function.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNetwork {
    dims: usize,
    /// Virtual factoriser rows after the `dims` real ones (0: none).
    factor: usize,
    ft_bias: Vec<f32>,
    ft_weight: Vec<f32>,
    psqt: Vec<f32>,
    stacks: Vec<FloatStack>,
}

impl FloatNetwork {
    /// All zero, for `dims` features.
    pub fn zeroed(dims: usize) -> FloatNetwork {
        FloatNetwork::zeroed_factored(dims, 0)
    }

    /// All zero, for `dims` features and `factor` virtual factoriser rows.
    pub fn zeroed_factored(dims: usize, factor: usize) -> FloatNetwork {
        let rows = dims + factor;
        FloatNetwork {
            dims,
            factor,
            ft_bias: vec![0.0; HALF_DIMENSIONS],
            ft_weight: vec![0.0; rows * HALF_DIMENSIONS],
            psqt: vec![0.0; rows * PSQT_BUCKETS],
            stacks: vec![FloatStack::zeroed(); LAYER_STACKS],
        }
    }

    /// All zero, shaped like `self` (the trainer's Adam moments).
    pub fn zeroed_like(&self) -> FloatNetwork {
        FloatNetwork::zeroed_factored(self.dims, self.factor)
    }

    /// This net with `factor` virtual factoriser rows (the features per king block), zero: the
    /// same function. A net that has them already is returned as it is.
    pub fn with_factorizer(mut self, factor: usize) -> FloatNetwork {
        if self.factor == 0 && factor > 0 {
            self.ft_weight.resize((self.dims + factor) * HALF_DIMENSIONS, 0.0);
            self.psqt.resize((self.dims + factor) * PSQT_BUCKETS, 0.0);
            self.factor = factor;
        }
        self
    }

    /// Virtual factoriser rows (0: none).
    pub fn factor(&self) -> usize {
        self.factor
    }

    /// Rows of the feature transformer and PSQT: real features plus virtual ones.
    pub fn rows(&self) -> usize {
        self.dims + self.factor
    }

    /// The virtual row real feature `f` also activates, if the net has a factoriser.
    #[inline]
    pub fn virtual_row(&self, f: u32) -> Option<u32> {
        (self.factor > 0).then(|| (self.dims + f as usize % self.factor) as u32)
    }

    /// The same function without virtual rows: each virtual row added into the real rows that
    /// activate it (what is exported).
    pub fn folded(&self) -> FloatNetwork {
        if self.factor == 0 {
            return self.clone();
        }
        let mut out = FloatNetwork {
            dims: self.dims,
            factor: 0,
            ft_bias: self.ft_bias.clone(),
            ft_weight: self.ft_weight[..self.dims * HALF_DIMENSIONS].to_vec(),
            psqt: self.psqt[..self.dims * PSQT_BUCKETS].to_vec(),
            stacks: self.stacks.clone(),
        };
        for f in 0..self.dims {
            let v = self.virtual_row(f as u32).expect("a factoriser") as usize;
            let (row, vrow) = (f * HALF_DIMENSIONS..(f + 1) * HALF_DIMENSIONS, v * HALF_DIMENSIONS..(v + 1) * HALF_DIMENSIONS);
            out.ft_weight[row].iter_mut().zip(&self.ft_weight[vrow]).for_each(|(a, b)| *a += b);
            let (prow, pvrow) = (f * PSQT_BUCKETS..(f + 1) * PSQT_BUCKETS, v * PSQT_BUCKETS..(v + 1) * PSQT_BUCKETS);
            out.psqt[prow].iter_mut().zip(&self.psqt[pvrow]).for_each(|(a, b)| *a += b);
        }
        out
    }

    /// The float material net (PSQT = ±16·v / 9600; see [`Network::material`]).
    pub fn material(mapping: &FsfMapping) -> FloatNetwork {
        let mut net = FloatNetwork::zeroed(mapping.dimensions());
        for (f, v) in material_rows(mapping) {
            net.psqt[f * PSQT_BUCKETS..(f + 1) * PSQT_BUCKETS].fill(16.0 * v as f32 / PSQT_SCALE);
        }
        net
    }

    /// variant-nnue-pytorch's initialisation: feature transformer uniform in ±√(1/D), layers
    /// uniform in ±1/√fan_in (PyTorch's default), output bias 0, every stack equal to the
    /// first, PSQT from the material values (as [`FloatNetwork::material`]).
    pub fn init(mapping: &FsfMapping, seed: u64) -> FloatNetwork {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut uniform = |a: f32| rng.gen_range(-a..=a);
        let mut net = FloatNetwork::material(mapping);
        let a = (1.0 / net.dims.max(1) as f32).sqrt();
        net.ft_weight.iter_mut().for_each(|w| *w = uniform(a));
        net.ft_bias.iter_mut().for_each(|w| *w = uniform(a));
        let mut first = FloatStack::zeroed();
        let (a1, a2, a3) =
            (1.0 / (STACK_INPUTS as f32).sqrt(), 1.0 / (HIDDEN1 as f32).sqrt(), 1.0 / (HIDDEN2 as f32).sqrt());
        first.l1_weight.iter_mut().for_each(|w| *w = uniform(a1));
        first.l1_bias.iter_mut().for_each(|w| *w = uniform(a1));
        first.l2_weight.iter_mut().for_each(|w| *w = uniform(a2));
        first.l2_bias.iter_mut().for_each(|w| *w = uniform(a2));
        first.out_weight.iter_mut().for_each(|w| *w = uniform(a3));
        net.stacks = vec![first; LAYER_STACKS];
        net
    }

    /// Number of input features.
    pub fn dimensions(&self) -> usize {
        self.dims
    }

    /// Feature transformer biases, `[512]`.
    pub fn ft_bias(&self) -> &[f32] {
        &self.ft_bias
    }

    /// Feature transformer biases, writable.
    pub fn ft_bias_mut(&mut self) -> &mut [f32] {
        &mut self.ft_bias
    }

    /// Feature transformer weights, `[D][512]`.
    pub fn ft_weight(&self) -> &[f32] {
        &self.ft_weight
    }

    /// Feature transformer weights, writable.
    pub fn ft_weight_mut(&mut self) -> &mut [f32] {
        &mut self.ft_weight
    }

    /// Feature transformer weights and PSQT weights, both writable.
    pub fn ft_weight_and_psqt_mut(&mut self) -> (&mut [f32], &mut [f32]) {
        (&mut self.ft_weight, &mut self.psqt)
    }

    /// PSQT weights, `[D][8]`.
    pub fn psqt(&self) -> &[f32] {
        &self.psqt
    }

    /// PSQT weights, writable.
    pub fn psqt_mut(&mut self) -> &mut [f32] {
        &mut self.psqt
    }

    /// The 8 layer stacks.
    pub fn stacks(&self) -> &[FloatStack] {
        &self.stacks
    }

    /// The 8 layer stacks, writable (keep each vector's length).
    pub fn stacks_mut(&mut self) -> &mut [FloatStack] {
        &mut self.stacks
    }

    /// Accumulator of one perspective: bias plus the rows of its features (PSQT alongside).
    fn accumulate(&self, features: &[u32], acc: &mut [f32; HALF_DIMENSIONS], psqt: &mut [f32; PSQT_BUCKETS]) {
        acc.copy_from_slice(&self.ft_bias);
        *psqt = [0.0; PSQT_BUCKETS];
        for &f in features {
            if f as usize >= self.dims {
                continue;
            }
            for f in std::iter::once(f).chain(self.virtual_row(f)) {
                let f = f as usize;
                if let (Some(row), Some(prow)) = (
                    self.ft_weight.get(f * HALF_DIMENSIONS..(f + 1) * HALF_DIMENSIONS),
                    self.psqt.get(f * PSQT_BUCKETS..(f + 1) * PSQT_BUCKETS),
                ) {
                    acc.iter_mut().zip(row).for_each(|(a, w)| *a += w);
                    psqt.iter_mut().zip(prow).for_each(|(a, w)| *a += w);
                }
            }
        }
    }

    /// The float output for a position's features: `stack(clamp([acc_us, acc_them], 0, 1)) +
    /// (psqt_us − psqt_them) / 2`, in float units (× 600 = internal units).
    pub fn forward(&self, features: &PositionFeatures) -> Result<f32> {
        if features.dimensions() != self.dims {
            return Err(NnueError::Dimensions {
                network: self.dims,
                variant: "of these features".into(),
                mapping: features.dimensions(),
            });
        }
        let us = features.side_to_move();
        let mut a = [[0f32; HALF_DIMENSIONS]; 2];
        let mut p = [[0f32; PSQT_BUCKETS]; 2];
        for (k, c) in [us, us.flip()].into_iter().enumerate() {
            self.accumulate(features.perspective(c), &mut a[k], &mut p[k]);
        }
        let mut x = [0f32; STACK_INPUTS];
        for (o, v) in x.iter_mut().zip(a[0].iter().chain(&a[1])) {
            *o = v.clamp(0.0, 1.0);
        }
        let b = features.bucket().index();
        Ok(self.stacks[b].forward(&x) + (p[0][b] - p[1][b]) / 2.0)
    }

    /// Quantises into the integer net Fairy-Stockfish reads (see the module docs); refuses a
    /// net whose vectors lost their lengths.
    pub fn quantize(&self, description: &str) -> Result<Network> {
        if self.factor > 0 {
            return self.folded().quantize(description);
        }
        if self.ft_bias.len() != HALF_DIMENSIONS
            || self.stacks.len() != LAYER_STACKS
            || !self.stacks.iter().all(FloatStack::has_shape)
        {
            return Err(NnueError::Shape("float network vectors do not have their lengths".into()));
        }
        let q = |x: f32, scale: f32| (x * scale).round_ties_even();
        let ft = FeatureTransformer::new(
            self.dims,
            self.ft_bias.iter().map(|&x| q(x, FT_SCALE) as i16).collect(),
            self.ft_weight.iter().map(|&x| q(x, FT_SCALE) as i16).collect(),
            self.psqt.iter().map(|&x| q(x, PSQT_SCALE) as i32).collect(),
        )?;
        let layer = |w: &[f32], b: &[f32], inputs: usize, outputs: usize, max: f32, wscale: f32, bscale: f32| {
            let p = padded_inputs(inputs);
            let mut weights = vec![0i8; outputs * p];
            for (row, src) in weights.chunks_exact_mut(p).zip(w.chunks_exact(inputs)) {
                for (d, &x) in row.iter_mut().zip(src) {
                    *d = q(x.clamp(-max, max), wscale) as i8;
                }
            }
            Affine::new(inputs, outputs, b.iter().map(|&x| q(x, bscale) as i32).collect(), weights)
        };
        let mut stacks = Vec::with_capacity(LAYER_STACKS);
        for s in &self.stacks {
            let h1 = layer(
                &s.l1_weight,
                &s.l1_bias,
                STACK_INPUTS,
                HIDDEN1,
                MAX_HIDDEN_WEIGHT,
                HIDDEN_WEIGHT_SCALE,
                HIDDEN_BIAS_SCALE,
            )?;
            let h2 = layer(
                &s.l2_weight,
                &s.l2_bias,
                HIDDEN1,
                HIDDEN2,
                MAX_HIDDEN_WEIGHT,
                HIDDEN_WEIGHT_SCALE,
                HIDDEN_BIAS_SCALE,
            )?;
            let out =
                layer(&s.out_weight, &[s.out_bias], HIDDEN2, 1, MAX_OUTPUT_WEIGHT, OUTPUT_WEIGHT_SCALE, PSQT_SCALE)?;
            stacks.push(LayerStack::new(h1, h2, out)?);
        }
        Network::new(description.as_bytes().to_vec(), ft, stacks)
    }

    /// Clips the layer weights to what quantises without saturation (the trainer does this
    /// after every step).
    pub fn clip_weights(&mut self) {
        for s in &mut self.stacks {
            s.l1_weight
                .iter_mut()
                .chain(s.l2_weight.iter_mut())
                .for_each(|w| *w = w.clamp(-MAX_HIDDEN_WEIGHT, MAX_HIDDEN_WEIGHT));
            s.out_weight.iter_mut().for_each(|w| *w = w.clamp(-MAX_OUTPUT_WEIGHT, MAX_OUTPUT_WEIGHT));
        }
    }
}

/// A mapping and a net for it: evaluates positions.
#[derive(Clone, Debug)]
pub struct Evaluator {
    mapping: FsfMapping,
    net: Network,
    arithmetic: Arithmetic,
}

impl Evaluator {
    /// Pairs a net with its variant's mapping; refuses a net of another size.
    pub fn new(mapping: FsfMapping, net: Network) -> Result<Evaluator> {
        if net.dimensions() != mapping.dimensions() {
            return Err(NnueError::Dimensions {
                network: net.dimensions(),
                variant: mapping.name().into(),
                mapping: mapping.dimensions(),
            });
        }
        Ok(Evaluator { mapping, net, arithmetic: Arithmetic::default() })
    }

    /// The same, evaluating with `arithmetic`.
    pub fn with_arithmetic(mut self, arithmetic: Arithmetic) -> Evaluator {
        self.arithmetic = arithmetic;
        self
    }

    /// The mapping.
    pub fn mapping(&self) -> &FsfMapping {
        &self.mapping
    }

    /// The net.
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// Evaluates a position.
    pub fn evaluate(&self, pos: &vzero_rules::Position) -> Result<Evaluation> {
        let f = self.mapping.features(pos)?;
        self.net.evaluate_with(&f, self.arithmetic)
    }

    /// Evaluates a position reusing `scratch` for its features (no allocation).
    pub fn evaluate_into(&self, pos: &vzero_rules::Position, scratch: &mut PositionFeatures) -> Result<Evaluation> {
        self.mapping.features_into(pos, scratch)?;
        self.net.evaluate_with(scratch, self.arithmetic)
    }
}
