//! Training the float net on the CPU: loss, gradients, and a sparse Adam optimiser.
//!
//! # Loss (variant-nnue-pytorch's)
//!
//! For a position with float output `net` (× [`NET_TO_INTERNAL`] = internal units, side to
//! move), a teacher score `score` in internal units and a game result `result` ∈ {−1, 0, 1}
//! (both from the side to move): `q = sigmoid(net · 600 / 361)`, `p = sigmoid(score / 410)`,
//! `t = (result + 1) / 2`, loss `λ·(p − q)² + (1 − λ)·(q − t)²`, averaged over the batch.
//!
//! # Gradients
//!
//! [`gradients`] runs forward and backward for a batch, split into one contiguous slice per
//! thread, the slices run on a rayon pool of that many threads (one pool per thread count, kept
//! for the process). Each slice keeps its
//! own dense gradient of the 8 layer stacks and the feature-transformer bias (about 140,000
//! floats) and, per sample, the gradient with respect to the two 512-wide accumulators and the
//! output. Clipped ReLUs pass the gradient where `0 ≤ x ≤ 1` (as `torch.clamp`). The slices'
//! losses and dense gradients are summed in slice order, so a batch's gradients depend on the
//! thread count (the slices' bounds) but never on which thread finished first.
//!
//! The feature transformer is never touched as a whole: the gradient of a feature row is the
//! sum of the accumulator gradients of the (sample, perspective) pairs in which it is active.
//! The batch's `(feature, sample·2 + perspective)` pairs are sorted by feature, so each active
//! row's gradient is summed from its run of pairs, and rows are independent.
//!
//! # Optimiser: lazy (sparse) Adam
//!
//! [`Trainer::step`] applies Adam with bias correction by the global step. Dense parameters
//! (stacks, FT bias) get ordinary Adam every step. Feature-transformer and PSQT rows get
//! *lazy Adam* (TensorFlow's `LazyAdam`, PyTorch's `SparseAdam`): a row's first and second
//! moments are updated, and the row moved, only in steps where the row is active in the batch;
//! rows not in the batch keep their weights and moments unchanged (dense Adam would decay their
//! moments and keep moving them by momentum). The moments have the shape of the weights (so
//! memory is 3× the weights), but a step's work is proportional to the rows the batch touches
//! (about 30 per perspective per position, far fewer distinct rows per batch than
//! `batch · 60`), never to the ~100,000 rows. The sorted runs of rows are split into contiguous
//! feature ranges, one per thread, so threads update disjoint slices without locks (on the same
//! pool). No weight
//! decay. After every step the layer weights are clipped to the quantisable range
//! ([`FloatNetwork::clip_weights`]).

use crate::features::{Bucket, FeatureMirror, PositionFeatures};
use crate::layers::{HALF_DIMENSIONS, HIDDEN1, HIDDEN2, LAYER_STACKS, PSQT_BUCKETS, STACK_INPUTS};
use crate::network::{FloatNetwork, FloatStack, NET_TO_INTERNAL};
use rayon::prelude::*;
use std::sync::{Arc, Mutex};
use vzero_rules::Color;

/// Calls one of this file's `kernels` functions through its AVX2 copy where the CPU has AVX2
/// (8 floats per instruction instead of SSE2's 4), else through the portable one. No FMA is
/// enabled: every result is the same bit for bit on either path (Rust never fuses or
/// reorders float operations), so a net trains the same on any x86 CPU.
macro_rules! wide {
    ($f:ident($($a:expr),* $(,)?)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2 (checked just above).
                unsafe { kernels::$f::avx2($($a),*) }
            } else {
                kernels::$f($($a),*)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            kernels::$f($($a),*)
        }
    }};
}

/// The trainer's inner loops, each once as written and once compiled for AVX2 (the same code:
/// the helpers they call are inlined into either copy).
mod kernels {
    use super::*;

    /// Defines `pub fn $name` and, on x86-64, `$name::avx2`, the same body compiled with
    /// `#[target_feature(enable = "avx2")]` (the caller checks the CPU).
    macro_rules! kernel {
        ($(#[$m:meta])* fn $name:ident$(<$($l:lifetime),*>)?($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
            $(#[$m])*
            #[inline(always)]
            pub fn $name$(<$($l),*>)?($($arg: $ty),*) -> $ret $body

            #[cfg(target_arch = "x86_64")]
            pub mod $name {
                use super::*;
                $(#[$m])*
                #[target_feature(enable = "avx2")]
                pub unsafe fn avx2$(<$($l),*>)?($($arg: $ty),*) -> $ret {
                    super::$name($($arg),*)
                }
            }
        };
    }

    kernel! {
        /// The summed loss of `c` (no gradients).
        fn loss_sum(net: &FloatNetwork, c: &[Sample], lambda: f32) -> f64 {
            let mut a = Box::new(Activations::new());
            c.iter().map(|s| sample_loss(net.forward_acts(s, &mut a), s, lambda).0 as f64).sum::<f64>()
        }
    }

    kernel! {
        /// Forward and backward over one thread's slice of a batch: its summed loss and dense
        /// gradients, its samples' accumulator gradients into `da` and output gradients into
        /// `dout`.
        fn backward_slice(net: &FloatNetwork, c: &[&Sample], lambda: f32, scale: f32, da: &mut [f32], dout: &mut [(f32, u8)]) -> (f64, DenseGrad) {
            let mut g = DenseGrad::zeroed();
            let mut a = Box::new(Activations::new());
            let mut loss = 0f64;
            for ((s, da), dout) in c.iter().zip(da.chunks_exact_mut(STACK_INPUTS)).zip(dout.iter_mut()) {
                loss += backward_sample(net, s, lambda, scale, &mut a, da, &mut g, dout) as f64;
            }
            (loss, g)
        }
    }

    kernel! {
        /// Lazy Adam on one thread's group of feature rows (`w`, `m`, `v`: FT and PSQT rows from
        /// row `first`).
        #[allow(clippy::too_many_arguments, clippy::unused_unit)]
        fn sparse_adam_rows<'a>(g: &Gradients, grp: &[(usize, usize)], first: usize, w: RowSlices<'a>, m: RowSlices<'a>, v: RowSlices<'a>, c: &AdamConfig, step_size: f32) -> () {
            let ((w, wp), (m, mp), (v, vp)) = (w, m, v);
            let (mut gr, mut pg) = ([0f32; HALF_DIMENSIONS], [0f32; PSQT_BUCKETS]);
            for &(lo, hi) in grp {
                let run = &g.pairs[lo..hi];
                let r = run[0].0 as usize - first;
                g.row_into(run, &mut gr, &mut pg);
                let rw = r * HALF_DIMENSIONS..(r + 1) * HALF_DIMENSIONS;
                adam_update(&mut w[rw.clone()], &gr, &mut m[rw.clone()], &mut v[rw], c, step_size);
                let rp = r * PSQT_BUCKETS..(r + 1) * PSQT_BUCKETS;
                adam_update(&mut wp[rp.clone()], &pg, &mut mp[rp.clone()], &mut vp[rp], c, step_size);
            }
        }
    }
}

/// `q = sigmoid(net · NET_TO_INTERNAL / IN_SCALING)`.
pub const IN_SCALING: f32 = 361.0;
/// `p = sigmoid(score / OUT_SCALING)`.
pub const OUT_SCALING: f32 = 410.0;

/// One training position: active features from the side to move's perspective (`us`) and the
/// other's (`them`), the bucket, and the targets (side to move's view).
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Features of the side to move's perspective.
    pub us: Vec<u32>,
    /// Features of the opponent's perspective.
    pub them: Vec<u32>,
    /// The bucket (PSQT column and layer stack).
    pub bucket: Bucket,
    /// Teacher score in internal units (an endgame pawn is 208).
    pub score: f32,
    /// Game result: 1 win, 0 draw, −1 loss.
    pub result: f32,
}

impl Sample {
    /// From a position's features and its targets.
    pub fn new(f: &PositionFeatures, score: f32, result: f32) -> Sample {
        let us: Color = f.side_to_move();
        Sample {
            us: f.perspective(us).to_vec(),
            them: f.perspective(us.flip()).to_vec(),
            bucket: f.bucket(),
            score,
            result,
        }
    }

    /// This position mirrored left to right (see [`FeatureMirror`]), written into `out` (its
    /// storage reused); the bucket and the targets are the same.
    pub fn mirror_into(&self, mirror: &FeatureMirror, out: &mut Sample) {
        out.us.clear();
        out.us.extend(self.us.iter().map(|&f| mirror.feature(f)));
        out.them.clear();
        out.them.extend(self.them.iter().map(|&f| mirror.feature(f)));
        out.bucket = self.bucket;
        out.score = self.score;
        out.result = self.result;
    }
}

/// A search value in [−1, 1] (side to move) as a score in internal units: the inverse of
/// `p = sigmoid(score / 410)` with `p = (v + 1) / 2`, clamped to ±`max`.
pub fn value_to_score(v: f32, max: f32) -> f32 {
    let p = ((v + 1.0) / 2.0).clamp(1e-6, 1.0 - 1e-6);
    (OUT_SCALING * (p / (1.0 - p)).ln()).clamp(-max, max)
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The loss of one output against its sample, and d loss / d output.
pub fn sample_loss(out: f32, s: &Sample, lambda: f32) -> (f32, f32) {
    let k = NET_TO_INTERNAL / IN_SCALING;
    let q = sigmoid(out * k);
    let p = sigmoid(s.score / OUT_SCALING);
    let t = (s.result + 1.0) / 2.0;
    let loss = lambda * (p - q) * (p - q) + (1.0 - lambda) * (q - t) * (q - t);
    let dq = -2.0 * lambda * (p - q) + 2.0 * (1.0 - lambda) * (q - t);
    (loss, dq * q * (1.0 - q) * k)
}

/// What the forward pass keeps for the backward pass.
struct Activations {
    acc: [f32; STACK_INPUTS],
    x: [f32; STACK_INPUTS],
    h1pre: [f32; HIDDEN1],
    h1: [f32; HIDDEN1],
    h2pre: [f32; HIDDEN2],
    h2: [f32; HIDDEN2],
}

#[inline(always)]
fn in_range(x: f32) -> f32 {
    if (0.0..=1.0).contains(&x) {
        1.0
    } else {
        0.0
    }
}

impl FloatNetwork {
    #[inline(always)]
    fn forward_acts(&self, s: &Sample, a: &mut Activations) -> f32 {
        let (ftw, psqt) = (self.ft_weight(), self.psqt());
        let b = s.bucket.index();
        let mut ps = [0f32; 2];
        for (k, feats) in [&s.us, &s.them].into_iter().enumerate() {
            let acc = &mut a.acc[k * HALF_DIMENSIONS..(k + 1) * HALF_DIMENSIONS];
            acc.copy_from_slice(self.ft_bias());
            for &f in feats.iter() {
                for f in std::iter::once(f).chain(self.virtual_row(f)) {
                    let f = f as usize;
                    let row = &ftw[f * HALF_DIMENSIONS..(f + 1) * HALF_DIMENSIONS];
                    acc.iter_mut().zip(row).for_each(|(a, w)| *a += w);
                    ps[k] += psqt[f * PSQT_BUCKETS + b];
                }
            }
        }
        for (x, &v) in a.x.iter_mut().zip(a.acc.iter()) {
            *x = v.clamp(0.0, 1.0);
        }
        let st = &self.stacks()[b];
        for o in 0..HIDDEN1 {
            let row = &st.l1_weight[o * STACK_INPUTS..(o + 1) * STACK_INPUTS];
            a.h1pre[o] = st.l1_bias[o] + dot(row, &a.x);
            a.h1[o] = a.h1pre[o].clamp(0.0, 1.0);
        }
        for o in 0..HIDDEN2 {
            let row = &st.l2_weight[o * HIDDEN1..(o + 1) * HIDDEN1];
            a.h2pre[o] = st.l2_bias[o] + dot(row, &a.h1);
            a.h2[o] = a.h2pre[o].clamp(0.0, 1.0);
        }
        st.out_bias + dot(&st.out_weight, &a.h2) + (ps[0] - ps[1]) / 2.0
    }

    /// The float output for a training sample (the same as [`FloatNetwork::forward`] on its
    /// position).
    pub fn forward_sample(&self, s: &Sample) -> f32 {
        let mut a = Box::new(Activations::new());
        self.forward_acts(s, &mut a)
    }
}

impl Activations {
    fn new() -> Activations {
        Activations {
            acc: [0.0; STACK_INPUTS],
            x: [0.0; STACK_INPUTS],
            h1pre: [0.0; HIDDEN1],
            h1: [0.0; HIDDEN1],
            h2pre: [0.0; HIDDEN2],
            h2: [0.0; HIDDEN2],
        }
    }
}

#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight partial sums so the compiler vectorises it.
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + ra.iter().zip(rb).map(|(x, y)| x * y).sum::<f32>()
}

/// Dense gradients: the 8 stacks and the feature-transformer bias.
#[derive(Clone, Debug)]
pub struct DenseGrad {
    /// d loss / d FT bias.
    pub ft_bias: Vec<f32>,
    /// d loss / d each stack's parameters (a stack not in the batch is all zero).
    pub stacks: Vec<FloatStack>,
}

impl DenseGrad {
    fn zeroed() -> DenseGrad {
        DenseGrad { ft_bias: vec![0.0; HALF_DIMENSIONS], stacks: vec![FloatStack::zeroed(); LAYER_STACKS] }
    }

    fn add(&mut self, o: &DenseGrad) {
        add_into(&mut self.ft_bias, &o.ft_bias);
        for (a, b) in self.stacks.iter_mut().zip(&o.stacks) {
            add_into(&mut a.l1_weight, &b.l1_weight);
            add_into(&mut a.l1_bias, &b.l1_bias);
            add_into(&mut a.l2_weight, &b.l2_weight);
            add_into(&mut a.l2_bias, &b.l2_bias);
            add_into(&mut a.out_weight, &b.out_weight);
            a.out_bias += b.out_bias;
        }
    }
}

#[inline(always)]
fn add_into(a: &mut [f32], b: &[f32]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

/// The gradients of a batch's mean loss: dense parts, and what the sparse rows' gradients are
/// summed from.
pub struct Gradients {
    /// Mean loss of the batch.
    pub loss: f32,
    /// Dense gradients.
    pub dense: DenseGrad,
    /// `(feature, sample · 2 + perspective)` sorted by feature (perspective 0 = side to move).
    pairs: Vec<(u32, u32)>,
    /// Per sample and perspective: d loss / d accumulator, `[2·n][512]`.
    dacc: Vec<f32>,
    /// Per sample: d loss / d output, and its bucket.
    dout: Vec<(f32, u8)>,
}

impl Gradients {
    /// The distinct feature rows the batch touches, ascending.
    pub fn touched_rows(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.pairs.iter().map(|p| p.0).collect();
        v.dedup();
        v
    }

    fn run(&self, f: u32) -> &[(u32, u32)] {
        let lo = self.pairs.partition_point(|p| p.0 < f);
        let hi = self.pairs.partition_point(|p| p.0 <= f);
        &self.pairs[lo..hi]
    }

    #[inline(always)]
    fn row_into(&self, run: &[(u32, u32)], g: &mut [f32], pg: &mut [f32]) {
        g.fill(0.0);
        pg.fill(0.0);
        for &(_, slot) in run {
            let slot = slot as usize;
            add_into(g, &self.dacc[slot * HALF_DIMENSIONS..(slot + 1) * HALF_DIMENSIONS]);
            let (d, b) = self.dout[slot / 2];
            pg[b as usize] += if slot & 1 == 0 { d / 2.0 } else { -d / 2.0 };
        }
    }

    /// d loss / d FT row `f` (512) and d loss / d PSQT row `f` (8); zeros for an untouched row.
    pub fn ft_row(&self, f: u32) -> (Vec<f32>, Vec<f32>) {
        let (mut g, mut pg) = (vec![0.0; HALF_DIMENSIONS], vec![0.0; PSQT_BUCKETS]);
        self.row_into(self.run(f), &mut g, &mut pg);
        (g, pg)
    }
}

fn threads_for(n: usize, threads: usize) -> usize {
    threads.max(1).min(n.max(1)).min(64)
}

/// The rayon pool of `threads` threads (1 to 64), built on first use and kept for the process,
/// so a training step wakes parked threads instead of spawning new ones.
fn pool(threads: usize) -> Arc<rayon::ThreadPool> {
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let threads = threads.clamp(1, 64);
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(t, _)| *t == threads) {
        return p.clone();
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("nnue-train-{i}"))
            .build()
            .expect("starting the NNUE trainer's threads"),
    );
    pools.push((threads, p.clone()));
    p
}

/// Runs `f` on the pool of `t` threads; on the calling thread when `t` is 1.
fn on_threads<R: Send>(t: usize, f: impl FnOnce() -> R + Send) -> R {
    if t <= 1 {
        f()
    } else {
        pool(t).install(f)
    }
}

/// Mean loss of `samples` (no gradients), on `threads` threads.
pub fn mean_loss(net: &FloatNetwork, samples: &[Sample], lambda: f32, threads: usize) -> f32 {
    if samples.is_empty() {
        return 0.0;
    }
    let t = threads_for(samples.len(), threads);
    let per = samples.len().div_ceil(t);
    // One sum per slice, added in slice order (deterministic for a thread count).
    let sums: Vec<f64> = on_threads(t, || {
        samples
            .par_chunks(per)
            .map(|c| wide!(loss_sum(net, c, lambda)))
            .collect()
    });
    let total: f64 = sums.into_iter().sum();
    (total / samples.len() as f64) as f32
}

/// Forward and backward for a batch: the mean loss and its gradients, on `threads` threads.
pub fn gradients(net: &FloatNetwork, batch: &[&Sample], lambda: f32, threads: usize) -> Gradients {
    let n = batch.len();
    let scale = 1.0 / n.max(1) as f32;
    let mut dacc = vec![0f32; 2 * n * HALF_DIMENSIONS];
    let mut dout = vec![(0f32, 0u8); n];
    let t = threads_for(n, threads);
    let per = n.div_ceil(t).max(1);
    // One (loss, dense gradient) per slice, in slice order; reduced below in that order.
    let parts: Vec<(f64, DenseGrad)> = on_threads(t, || {
        batch
            .par_chunks(per)
            .zip(dacc.par_chunks_mut(per * 2 * HALF_DIMENSIONS))
            .zip(dout.par_chunks_mut(per))
            .map(|((c, da), dout)| wide!(backward_slice(net, c, lambda, scale, da, dout)))
            .collect()
    });
    let mut loss = 0f64;
    let mut dense: Option<DenseGrad> = None;
    for (l, g) in parts {
        loss += l;
        match &mut dense {
            None => dense = Some(g),
            Some(d) => d.add(&g),
        }
    }
    let mut pairs = Vec::with_capacity(n * if net.factor() > 0 { 128 } else { 64 });
    for (i, s) in batch.iter().enumerate() {
        for (k, feats) in [&s.us, &s.them].into_iter().enumerate() {
            let slot = 2 * i as u32 + k as u32;
            pairs.extend(feats.iter().map(|&f| (f, slot)));
            pairs.extend(feats.iter().filter_map(|&f| net.virtual_row(f)).map(|v| (v, slot)));
        }
    }
    // (equal pairs are the same value: any sort gives the same order)
    on_threads(t, || pairs.par_sort_unstable());
    Gradients { loss: (loss * scale as f64) as f32, dense: dense.unwrap_or_else(DenseGrad::zeroed), pairs, dacc, dout }
}

/// One sample's forward and backward: adds its dense gradients (× `scale`) to `g`, writes
/// d loss / d accumulators to `dacc` (`[2][512]`) and (d loss / d output, bucket) to `dout`.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
#[inline(always)]
fn backward_sample(
    net: &FloatNetwork,
    s: &Sample,
    lambda: f32,
    scale: f32,
    a: &mut Activations,
    dacc: &mut [f32],
    g: &mut DenseGrad,
    dout: &mut (f32, u8),
) -> f32 {
    let out = net.forward_acts(s, a);
    let (loss, d) = sample_loss(out, s, lambda);
    let d = d * scale;
    let b = s.bucket.index();
    *dout = (d, b as u8);
    let st = &net.stacks()[b];
    let gs = &mut g.stacks[b];
    gs.out_bias += d;
    let mut dh2 = [0f32; HIDDEN2];
    for o in 0..HIDDEN2 {
        gs.out_weight[o] += d * a.h2[o];
        dh2[o] = d * st.out_weight[o] * in_range(a.h2pre[o]);
    }
    let mut dh1 = [0f32; HIDDEN1];
    for o in 0..HIDDEN2 {
        gs.l2_bias[o] += dh2[o];
        let (w, gw) =
            (&st.l2_weight[o * HIDDEN1..(o + 1) * HIDDEN1], &mut gs.l2_weight[o * HIDDEN1..(o + 1) * HIDDEN1]);
        for i in 0..HIDDEN1 {
            gw[i] += dh2[o] * a.h1[i];
            dh1[i] += dh2[o] * w[i];
        }
    }
    dacc.fill(0.0);
    for o in 0..HIDDEN1 {
        let d1 = dh1[o] * in_range(a.h1pre[o]);
        if d1 == 0.0 {
            continue;
        }
        gs.l1_bias[o] += d1;
        let w = &st.l1_weight[o * STACK_INPUTS..(o + 1) * STACK_INPUTS];
        let gw = &mut gs.l1_weight[o * STACK_INPUTS..(o + 1) * STACK_INPUTS];
        for i in 0..STACK_INPUTS {
            gw[i] += d1 * a.x[i];
            dacc[i] += d1 * w[i];
        }
    }
    for (da, &v) in dacc.iter_mut().zip(a.acc.iter()) {
        *da *= in_range(v);
    }
    let (d0, d1) = dacc.split_at(HALF_DIMENSIONS);
    for i in 0..HALF_DIMENSIONS {
        g.ft_bias[i] += d0[i] + d1[i];
    }
    loss
}

/// Adam's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamConfig {
    /// Learning rate.
    pub lr: f32,
    /// First-moment decay.
    pub beta1: f32,
    /// Second-moment decay.
    pub beta2: f32,
    /// Denominator epsilon.
    pub eps: f32,
}

impl Default for AdamConfig {
    fn default() -> Self {
        AdamConfig { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 }
    }
}

/// Adam's moments, shaped like the net's parameters, laid out as [`Params`] lists them.
#[derive(Clone, Debug, PartialEq)]
pub struct Moments {
    /// First moments.
    pub m: FloatNetwork,
    /// Second moments.
    pub v: FloatNetwork,
}

#[inline(always)]
fn adam_update(w: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], c: &AdamConfig, step_size: f32) {
    for i in 0..w.len() {
        let gi = g[i];
        m[i] = c.beta1 * m[i] + (1.0 - c.beta1) * gi;
        v[i] = c.beta2 * v[i] + (1.0 - c.beta2) * gi * gi;
        w[i] -= step_size * m[i] / (v[i].sqrt() + c.eps);
    }
}

/// A float net, its Adam state and step count: what a checkpoint holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Trainer {
    /// The net.
    pub net: FloatNetwork,
    /// Adam's moments.
    pub moments: Moments,
    /// Optimiser steps taken.
    pub step: u64,
    /// Positions trained on (sum of batch sizes).
    pub positions: u64,
    /// Adam's settings.
    pub adam: AdamConfig,
    /// Threads for the gradients and updates.
    pub threads: usize,
}

impl Trainer {
    /// A trainer at step 0 for `net`.
    pub fn new(net: FloatNetwork, adam: AdamConfig, threads: usize) -> Trainer {
        Trainer {
            moments: Moments { m: net.zeroed_like(), v: net.zeroed_like() },
            net,
            step: 0,
            positions: 0,
            adam,
            threads: threads.max(1),
        }
    }

    /// Gives the net virtual factoriser rows (see [`FloatNetwork::with_factorizer`]), with zero
    /// moments; the function is unchanged. A net that has them keeps them.
    pub fn with_factorizer(self, factor: usize) -> Trainer {
        let Moments { m, v } = self.moments;
        Trainer {
            net: self.net.with_factorizer(factor),
            moments: Moments { m: m.with_factorizer(factor), v: v.with_factorizer(factor) },
            ..self
        }
    }

    /// One optimiser step on `batch`: returns the batch's mean loss (before the step).
    pub fn step(&mut self, batch: &[&Sample], lambda: f32) -> f32 {
        let g = gradients(&self.net, batch, lambda, self.threads);
        self.apply(&g);
        self.positions += batch.len() as u64;
        g.loss
    }

    /// Applies gradients: dense Adam on stacks and FT bias, lazy Adam on the touched FT and
    /// PSQT rows, then clips the weights.
    pub fn apply(&mut self, g: &Gradients) {
        self.step += 1;
        let c = self.adam;
        let t = self.step as i32;
        let step_size = c.lr * (1.0 - c.beta2.powi(t)).sqrt() / (1.0 - c.beta1.powi(t));
        let (net, m, v) = (&mut self.net, &mut self.moments.m, &mut self.moments.v);
        adam_update(net.ft_bias_mut(), &g.dense.ft_bias, m.ft_bias_mut(), v.ft_bias_mut(), &c, step_size);
        for (k, gs) in g.dense.stacks.iter().enumerate() {
            let (ws, ms, vs) = (&mut net.stacks_mut()[k], &mut m.stacks_mut()[k], &mut v.stacks_mut()[k]);
            adam_update(&mut ws.l1_weight, &gs.l1_weight, &mut ms.l1_weight, &mut vs.l1_weight, &c, step_size);
            adam_update(&mut ws.l1_bias, &gs.l1_bias, &mut ms.l1_bias, &mut vs.l1_bias, &c, step_size);
            adam_update(&mut ws.l2_weight, &gs.l2_weight, &mut ms.l2_weight, &mut vs.l2_weight, &c, step_size);
            adam_update(&mut ws.l2_bias, &gs.l2_bias, &mut ms.l2_bias, &mut vs.l2_bias, &c, step_size);
            adam_update(&mut ws.out_weight, &gs.out_weight, &mut ms.out_weight, &mut vs.out_weight, &c, step_size);
            let (mut w, mut mm, mut vv) = ([ws.out_bias], [ms.out_bias], [vs.out_bias]);
            adam_update(&mut w, &[gs.out_bias], &mut mm, &mut vv, &c, step_size);
            (ws.out_bias, ms.out_bias, vs.out_bias) = (w[0], mm[0], vv[0]);
        }
        self.apply_sparse(g, step_size);
        self.net.clip_weights();
    }

    fn apply_sparse(&mut self, g: &Gradients, step_size: f32) {
        // Runs of equal features in the sorted pairs.
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while i < g.pairs.len() {
            let f = g.pairs[i].0;
            let mut j = i + 1;
            while j < g.pairs.len() && g.pairs[j].0 == f {
                j += 1;
            }
            runs.push((i, j));
            i = j;
        }
        if runs.is_empty() {
            return;
        }
        // Split the runs into contiguous groups of about equal pair counts, one per thread, and
        // the parameter arrays at the groups' first rows, so each thread owns its rows.
        let t = threads_for(runs.len(), self.threads);
        let target = g.pairs.len().div_ceil(t);
        let mut groups: Vec<&[(usize, usize)]> = Vec::new();
        let mut start = 0;
        let mut count = 0;
        for (k, r) in runs.iter().enumerate() {
            count += r.1 - r.0;
            if count >= target && groups.len() + 1 < t {
                groups.push(&runs[start..=k]);
                start = k + 1;
                count = 0;
            }
        }
        if start < runs.len() {
            groups.push(&runs[start..]);
        }
        let c = self.adam;
        let (net, m, v) = (&mut self.net, &mut self.moments.m, &mut self.moments.v);
        let mut w_rest = net.ft_weight_and_psqt_mut();
        let mut m_rest = m.ft_weight_and_psqt_mut();
        let mut v_rest = v.ft_weight_and_psqt_mut();
        let mut base = 0usize; // first row of the *_rest slices
        let mut jobs = Vec::new();
        for (gi, grp) in groups.iter().enumerate() {
            let first = g.pairs[grp[0].0].0 as usize;
            let end = if gi + 1 < groups.len() { g.pairs[groups[gi + 1][0].0].0 as usize } else { usize::MAX };
            let (wg, wr) = take(w_rest, base, first, end);
            let (mg, mr) = take(m_rest, base, first, end);
            let (vg, vr) = take(v_rest, base, first, end);
            (w_rest, m_rest, v_rest) = (wr, mr, vr);
            base = end;
            jobs.push((*grp, first, wg, mg, vg));
        }
        // Disjoint rows per group: no reduction, the same result on any thread.
        on_threads(t, || {
            jobs.into_par_iter().for_each(|(grp, first, w, m, v)| wide!(sparse_adam_rows(g, grp, first, w, m, v, &c, step_size)));
        });
    }
}

type RowSlices<'a> = (&'a mut [f32], &'a mut [f32]);


/// From FT and PSQT slices starting at row `base`: the rows `first..end` and the rest from
/// `end` (`end = usize::MAX`: everything from `first`, nothing left).
fn take(rest: RowSlices<'_>, base: usize, first: usize, end: usize) -> (RowSlices<'_>, RowSlices<'_>) {
    let (w, p) = rest;
    let (_, w) = w.split_at_mut((first - base) * HALF_DIMENSIONS);
    let (_, p) = p.split_at_mut((first - base) * PSQT_BUCKETS);
    if end == usize::MAX {
        ((w, p), (&mut [][..], &mut [][..]))
    } else {
        let (w, wr) = w.split_at_mut((end - first) * HALF_DIMENSIONS);
        let (p, pr) = p.split_at_mut((end - first) * PSQT_BUCKETS);
        ((w, p), (wr, pr))
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::FsfMapping;
    use vzero_rules::{Position, Variant};

    /// An empire net with random factoriser rows, and `n` samples from random play (scores from
    /// a pseudo-random walk, results from their signs).
    fn net_and_samples(n: usize) -> (FloatNetwork, Vec<Sample>) {
        let v = Variant::builtin("empire").unwrap();
        let m = FsfMapping::for_variant(v).unwrap();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        let mut net = FloatNetwork::init(&m, 3).with_factorizer(m.piece_indices());
        let dims = net.dimensions();
        for w in &mut net.ft_weight_mut()[dims * HALF_DIMENSIONS..] {
            *w = (next() % 1000) as f32 / 10_000.0 - 0.05;
        }
        let (mut samples, mut pos, mut ply) = (Vec::new(), Position::startpos(v), 0);
        while samples.len() < n {
            let moves = pos.legal_moves();
            if moves.is_empty() || ply >= 80 {
                (pos, ply) = (Position::startpos(v), 0);
                continue;
            }
            pos.play(moves[next() as usize % moves.len()]);
            ply += 1;
            if let Ok(f) = m.features(&pos) {
                let score = (next() % 2001) as f32 - 1000.0;
                samples.push(Sample::new(&f, score, score.signum()));
            }
        }
        (net, samples)
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// The AVX2 copies of the kernels compute exactly what the portable ones do (no FMA, the same
    /// order of operations): loss, dense and accumulator gradients, and the sparse Adam step, bit
    /// for bit, so a net trains the same on a CPU with AVX2 and on one without.
    #[test]
    fn the_avx2_kernels_give_the_portable_results_bit_for_bit() {
        if !std::is_x86_feature_detected!("avx2") {
            eprintln!("this CPU has no AVX2: only the portable kernels run here");
            return;
        }
        let n = 96;
        let (net, samples) = net_and_samples(n);
        let batch: Vec<&Sample> = samples.iter().collect();
        let scale = 1.0 / n as f32;
        let (mut da, mut dout) = (vec![0f32; 2 * n * HALF_DIMENSIONS], vec![(0f32, 0u8); n]);
        let (mut da2, mut dout2) = (da.clone(), dout.clone());
        let (loss, g) = kernels::backward_slice(&net, &batch, 0.4, scale, &mut da, &mut dout);
        // SAFETY: the CPU has AVX2 (checked above).
        let (loss2, g2) = unsafe { kernels::backward_slice::avx2(&net, &batch, 0.4, scale, &mut da2, &mut dout2) };
        assert_eq!(loss.to_bits(), loss2.to_bits());
        assert!(loss > 0.0 && da.iter().any(|&d| d != 0.0), "a batch with gradients");
        assert_eq!((bits(&da), bits(&g.ft_bias)), (bits(&da2), bits(&g2.ft_bias)));
        assert_eq!(dout.iter().map(|(d, b)| (d.to_bits(), *b)).collect::<Vec<_>>(), dout2.iter().map(|(d, b)| (d.to_bits(), *b)).collect::<Vec<_>>());
        for (a, b) in g.stacks.iter().zip(&g2.stacks) {
            assert_eq!(bits(&a.l1_weight), bits(&b.l1_weight));
            assert_eq!(bits(&a.l2_weight), bits(&b.l2_weight));
            assert_eq!((bits(&a.out_weight), a.out_bias.to_bits()), (bits(&b.out_weight), b.out_bias.to_bits()));
        }
        let sum = kernels::loss_sum(&net, &samples, 0.4);
        // SAFETY: as above.
        assert_eq!(sum.to_bits(), unsafe { kernels::loss_sum::avx2(&net, &samples, 0.4) }.to_bits());

        // the sparse Adam step over every touched row, from the same moments, both ways
        let grads = gradients(&net, &batch, 0.4, 1);
        let mut runs = Vec::new();
        let mut i = 0;
        while i < grads.pairs.len() {
            let j = i + grads.pairs[i..].iter().take_while(|p| p.0 == grads.pairs[i].0).count();
            runs.push((i, j));
            i = j;
        }
        let c = AdamConfig::default();
        let mut ends = Vec::new();
        for wide in [false, true] {
            let (mut w, mut m, mut v) = (net.clone(), net.zeroed_like(), net.zeroed_like());
            for s in m.ft_weight_and_psqt_mut().0.iter_mut().chain(v.ft_weight_and_psqt_mut().0.iter_mut()) {
                *s = 1e-3;
            }
            let (ws, ms, vs) = (w.ft_weight_and_psqt_mut(), m.ft_weight_and_psqt_mut(), v.ft_weight_and_psqt_mut());
            if wide {
                // SAFETY: as above.
                unsafe { kernels::sparse_adam_rows::avx2(&grads, &runs, 0, ws, ms, vs, &c, 0.01) }
            } else {
                kernels::sparse_adam_rows(&grads, &runs, 0, ws, ms, vs, &c, 0.01)
            }
            ends.push((bits(w.ft_weight()), bits(w.psqt()), bits(v.ft_weight())));
        }
        assert_ne!(bits(net.ft_weight()), ends[0].0, "the step moved the touched rows");
        assert!(ends[0] == ends[1], "the AVX2 Adam step differs from the portable one");
    }
}
