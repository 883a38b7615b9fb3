//! The inference-only forward pass behind [`crate::Model::evaluate`].
//!
//! [`InferNet`] is built from a [`Net`] ("folded") and holds its own copies of the weights:
//!
//! * every batch norm is folded into the conv before it (`w' = w * s`, `b' = beta - mean * s`
//!   with `s = gamma / sqrt(var + eps)`, computed in f64); the per-channel inputs added before a
//!   BN (global-pooling branch, global scalars) are scaled by the same `s`;
//! * activations and conv weights are channels-last (NHWC memory, NCHW shape), in f32 or BF16
//!   ([`InferencePrecision`]); ReLU and the residual add run in place;
//! * 1x1 heads are read out only where needed: the policy head computes the logits of the legal
//!   moves only (one dot product per legal move instead of the whole output layer), and pooled
//!   features and the fully connected layers after them are always f32.
//!
//! Training and [`Net::forward_t`] keep the real BN; the fold is rebuilt whenever the weights may
//! have changed (see [`crate::Model::refold`]). To add a head to [`Net`], add its folded form
//! here too: value-like heads on the pooled value features are one more entry in
//! [`PooledHead::outputs`] (and one more output in [`InferOutput::values`]).

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use tch::{Device, Kind, Tensor};

use crate::error::{ModelError, Result};
use crate::net::{BnParts, Net, PolicyParts};

/// Environment variable read by every new [`crate::Model`]: `auto` (default), `f32` or `bf16`.
pub const PRECISION_ENV: &str = "VZERO_INFERENCE_PRECISION";

/// With [`InferencePrecision::Auto`], batches of at least this many positions run in BF16 (on a
/// CPU with AMX-BF16); smaller ones in f32, where BF16's larger fixed cost per convolution
/// (~30 us) loses. Measured on one Sapphire Rapids core with the 4x32 net: f32 is 2.3x faster
/// at batch 1, even at batch 2, BF16 1.1x faster at 4, 1.2x at 8 and 2x at 32.
pub const AUTO_BF16_MIN_BATCH: usize = 4;

/// Numeric precision of the inference path ([`crate::Model::evaluate`]). Training and
/// [`crate::Model::forward_t`] are always f32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InferencePrecision {
    /// BF16 for batches of at least [`AUTO_BF16_MIN_BATCH`] on a CPU with AMX-BF16
    /// ([`cpu_has_amx_bf16`]), f32 otherwise (other CPUs, CUDA devices, small batches).
    #[default]
    Auto,
    /// Always f32 (results within ~1e-5 of the unfused reference).
    F32,
    /// Always BF16 weights and activations (f32 accumulation in the convolutions; pooled
    /// features and fully connected layers f32), even where it is slower.
    Bf16,
}

impl FromStr for InferencePrecision {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(InferencePrecision::Auto),
            "f32" | "fp32" | "float" => Ok(InferencePrecision::F32),
            "bf16" | "bfloat16" => Ok(InferencePrecision::Bf16),
            other => Err(ModelError::Config(format!(
                "unknown inference precision '{other}' (expected auto, f32 or bf16)"
            ))),
        }
    }
}

impl fmt::Display for InferencePrecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InferencePrecision::Auto => "auto",
            InferencePrecision::F32 => "f32",
            InferencePrecision::Bf16 => "bf16",
        })
    }
}

impl InferencePrecision {
    /// The precision [`PRECISION_ENV`] asks for (unset or empty = `Auto`); an unknown value is
    /// an error rather than a silent default.
    pub fn from_env() -> Result<Self> {
        match std::env::var(PRECISION_ENV) {
            Ok(v) => v
                .parse()
                .map_err(|e: ModelError| ModelError::Config(format!("{PRECISION_ENV}={v}: {e}"))),
            Err(std::env::VarError::NotPresent) => Ok(InferencePrecision::Auto),
            Err(e) => Err(ModelError::Config(format!("{PRECISION_ENV}: {e}"))),
        }
    }

    /// Element kind used for a batch of `batch` positions on `device`.
    pub fn kind_for(self, device: Device, batch: usize) -> Kind {
        match self {
            InferencePrecision::F32 => Kind::Float,
            InferencePrecision::Bf16 => Kind::BFloat16,
            InferencePrecision::Auto => {
                if device == Device::Cpu && batch >= AUTO_BF16_MIN_BATCH && cpu_has_amx_bf16() {
                    Kind::BFloat16
                } else {
                    Kind::Float
                }
            }
        }
    }
}

/// True when this CPU has AMX tiles with BF16 support and the OS manages the tile state
/// (CPUID leaf 7 and XCR0; e.g. Intel Sapphire Rapids and later). Detected once per process.
pub fn cpu_has_amx_bf16() -> bool {
    static AMX: OnceLock<bool> = OnceLock::new();
    *AMX.get_or_init(detect_amx_bf16)
}

#[cfg(target_arch = "x86_64")]
fn detect_amx_bf16() -> bool {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86_64 CPU; leaf 7 is only read when the CPU reports it.
    let (max_leaf, leaf1, leaf7) = unsafe {
        let max = __cpuid(0).eax;
        (
            max,
            __cpuid(1),
            if max >= 7 {
                Some(__cpuid_count(7, 0))
            } else {
                None
            },
        )
    };
    let Some(leaf7) = leaf7 else { return false };
    let amx_bf16 = leaf7.edx & (1 << 22) != 0;
    let amx_tile = leaf7.edx & (1 << 24) != 0;
    let osxsave = leaf1.ecx & (1 << 27) != 0;
    if max_leaf < 7 || !amx_bf16 || !amx_tile || !osxsave {
        return false;
    }
    // SAFETY: OSXSAVE is set, so XGETBV is available and XCR0 readable.
    let xcr0 = unsafe { xcr0() };
    // XTILECFG (bit 17) and XTILEDATA (bit 18): the OS saves and restores the tiles.
    xcr0 & (0b11 << 17) == (0b11 << 17)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "xsave")]
unsafe fn xcr0() -> u64 {
    std::arch::x86_64::_xgetbv(0)
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_amx_bf16() -> bool {
    false
}

/// Channels-last copy of a 4-d tensor (NCHW shape, NHWC memory).
fn channels_last(t: &Tensor) -> Tensor {
    t.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
}

/// (scale, shift) of an eval-mode BN, in f64: `bn(y) = y * scale + shift`.
fn bn_affine(bn: &BnParts) -> (Tensor, Tensor) {
    let d = |t: &Tensor| t.detach().to_kind(Kind::Double);
    let mean = d(bn.running_mean);
    let var = d(bn.running_var);
    let scale = match bn.weight {
        Some(g) => d(g) / (var + bn.eps).sqrt(),
        None => (var + bn.eps).sqrt().reciprocal(),
    };
    let shift = match bn.bias {
        Some(b) => d(b) - mean * &scale,
        None => -mean * &scale,
    };
    (scale, shift)
}

/// A conv with its BN folded in: weights channels-last in the inference kind, bias in the same
/// kind; "same" padding, stride 1.
struct FoldedConv {
    w: Tensor,
    b: Tensor,
    pad: i64,
}

impl FoldedConv {
    /// Folds `bn` into the bias-free conv `w`; also returns the BN scale (f64) for inputs added
    /// between the conv and the BN.
    fn new(w: &Tensor, bn: &BnParts, kind: Kind) -> (Self, Tensor) {
        let (scale, shift) = bn_affine(bn);
        let wf = w.detach().to_kind(Kind::Double) * scale.view([-1, 1, 1, 1]);
        let pad = w.size().last().copied().unwrap_or(1) / 2;
        let conv = FoldedConv {
            w: channels_last(&wf.to_kind(kind)),
            b: shift.to_kind(kind),
            pad,
        };
        (conv, scale)
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        x.conv2d(
            &self.w,
            Some(&self.b),
            [1i64, 1].as_slice(),
            [self.pad, self.pad].as_slice(),
            [1i64, 1].as_slice(),
            1,
        )
    }
}

/// f32 linear layer `y = x W^T + b` with `W^T` stored contiguous.
struct Lin {
    w_t: Tensor,
    b: Option<Tensor>,
}

impl Lin {
    /// `w` [out, in], optionally scaled per output row by `row_scale` (f64 [out]).
    fn new(w: &Tensor, b: Option<&Tensor>, row_scale: Option<&Tensor>) -> Self {
        let w = w.detach().to_kind(Kind::Double);
        let w = match row_scale {
            Some(s) => w * s.view([-1, 1]),
            None => w,
        };
        Lin {
            w_t: w.to_kind(Kind::Float).tr().contiguous(),
            b: b.map(|b| b.detach().to_kind(Kind::Float)),
        }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        match &self.b {
            Some(b) => b.addmm(x, &self.w_t),
            None => x.matmul(&self.w_t),
        }
    }
}

/// Mean and max over the board of a [B, C, H, W] tensor -> [B, 2C] f32 (same order as the
/// reference `global_pool`). Converts to f32 first (PyTorch's BF16 max-reduction is ~10x slower
/// than converting and reducing in f32), then reduces over the squares along whichever layout
/// PyTorch reduces fastest: the middle axis of the NHWC view (contiguous for channels-last
/// tensors) for 16 channels or more, the last axis of an NCHW copy below that.
fn pool(x: &Tensor) -> Tensor {
    let s = x.size();
    let (b, c) = (s[0], s[1]);
    let f = x.to_kind(Kind::Float);
    let (t, dim) = if c >= 16 {
        (f.permute([0, 2, 3, 1]).reshape([b, -1, c]), 1i64)
    } else {
        (f.contiguous().view([b, c, -1]), 2i64)
    };
    let mean = t.mean_dim([dim].as_slice(), false, Kind::Float);
    let max = t.amax([dim].as_slice(), false);
    Tensor::cat(&[mean, max], 1)
}

/// In-place ReLU. For BF16 it clamps the bit patterns as i16 at 0 (negative values and -0.0
/// have the sign bit set, so they become +0.0; others are unchanged): same result as `relu_`
/// for non-NaN values, and several times faster than PyTorch's BF16 kernel.
fn relu_(x: Tensor) -> Tensor {
    if x.kind() == Kind::BFloat16 {
        let _ = x.view_dtype(Kind::Int16).clamp_min_(0);
        x
    } else {
        let mut x = x;
        x.relu_()
    }
}

/// Adds a per-position, per-channel bias [B, C] (f32) to `y` [B, C, H, W] in place.
fn add_channel_bias(y: &mut Tensor, z: &Tensor) {
    let s = z.size();
    let _ = y.g_add_(&z.to_kind(y.kind()).view([s[0], s[1], 1, 1]));
}

struct GlobalPool {
    conv: FoldedConv,
    /// The branch's linear layer, rows scaled by the block's first BN.
    fc: Lin,
}

struct Block {
    conv1: FoldedConv,
    gpool: Option<GlobalPool>,
    conv2: FoldedConv,
}

impl Block {
    fn forward(&self, x: &Tensor) -> Tensor {
        let mut y = self.conv1.forward(x);
        if let Some(g) = &self.gpool {
            let pooled = pool(&relu_(g.conv.forward(x)));
            add_channel_bias(&mut y, &g.fc.forward(&pooled));
        }
        let y = relu_(y);
        let mut out = self.conv2.forward(&y);
        let _ = out.g_add_(x);
        relu_(out)
    }
}

/// How a policy logit is read from the policy head's last feature map.
enum Readout {
    /// Dense head: `logit(i, m) = w[m] . features(i) + bias[m]`, `features(i)` = position i's
    /// flattened NHWC map (`w` columns permuted to NHWC order at fold time).
    Dense,
    /// Spatial/mapped head: move m is cell `map[m]` (identity without a map) = plane * area +
    /// square; `logit(i, m) = w[plane] . features(i, square) + bias[plane]`.
    Cells { map: Option<Vec<u32>> },
}

struct PolicyHead {
    conv: FoldedConv,
    readout: Readout,
    /// [rows, D] f32: rows of the output layer (moves for dense, planes for cells).
    w: Tensor,
    /// Bias per row of `w`, added on the host.
    bias: Vec<f32>,
}

/// conv1x1 + BN + ReLU, mean/max pooling, a hidden linear layer + ReLU, then one linear layer
/// per output (value head: W/D/L logits, then the moves-left output if the net has one).
struct PooledHead {
    conv: FoldedConv,
    hidden: Lin,
    outputs: Vec<Lin>,
}

impl PooledHead {
    fn forward(&self, x: &Tensor) -> Vec<Tensor> {
        let pooled = pool(&relu_(self.conv.forward(x)));
        let h = self.hidden.forward(&pooled).relu_();
        self.outputs.iter().map(|o| o.forward(&h)).collect()
    }
}

/// Outputs of [`InferNet::forward`], all f32.
pub(crate) struct InferOutput {
    /// [N] logits of the requested (position, move) pairs, without the output bias (see
    /// [`InferNet::policy_bias`]).
    pub legal_logits: Tensor,
    /// Outputs of the pooled value head, in order: [B, 3] W/D/L logits, then [B, 1] moves-left
    /// (if the net has that head).
    pub values: Vec<Tensor>,
}

/// Inference-only network (see the module docs). Built by [`InferNet::fold`]; `Send`, not
/// `Sync`, like the tensors it holds.
pub(crate) struct InferNet {
    kind: Kind,
    device: Device,
    input_planes: usize,
    height: usize,
    width: usize,
    stem: FoldedConv,
    stem_global: Option<Lin>,
    blocks: Vec<Block>,
    policy: PolicyHead,
    value: PooledHead,
}

impl InferNet {
    /// Folds the current weights of `net` into an inference network of element kind `kind`
    /// (`Float` or `BFloat16`).
    pub(crate) fn fold(net: &Net, kind: Kind, device: Device) -> Result<Self> {
        tch::no_grad(|| Self::fold_inner(net, kind, device))
    }

    fn fold_inner(net: &Net, kind: Kind, device: Device) -> Result<Self> {
        let cfg = net.config();
        let parts = net.parts();
        let (stem, stem_scale) = FoldedConv::new(parts.stem.conv, &parts.stem.bn, kind);
        let stem_global = parts
            .stem_global
            .map(|w| Lin::new(w, None, Some(&stem_scale)));
        let blocks = parts
            .blocks
            .iter()
            .map(|b| {
                let (conv1, s1) = FoldedConv::new(b.conv1, &b.bn1, kind);
                let gpool = b.gpool.as_ref().map(|(g, fc)| GlobalPool {
                    conv: FoldedConv::new(g.conv, &g.bn, kind).0,
                    fc: Lin::new(fc, None, Some(&s1)),
                });
                let conv2 = FoldedConv::new(b.second.conv, &b.second.bn, kind).0;
                Block {
                    conv1,
                    gpool,
                    conv2,
                }
            })
            .collect();
        let bias_vec = |t: &Tensor| -> Result<Vec<f32>> {
            Ok(Vec::<f32>::try_from(
                t.detach().to_kind(Kind::Float).to_device(Device::Cpu),
            )?)
        };
        let area = cfg.board_area() as i64;
        let policy = match parts.policy {
            PolicyParts::Dense { conv, fc_w, fc_b } => {
                let c = FoldedConv::new(conv.conv, &conv.bn, kind).0;
                // fc columns are in NCHW flatten order (channel * area + square); the features
                // are read in NHWC order (square * channels + channel).
                let p = fc_w.size()[0];
                let w = fc_w
                    .detach()
                    .view([p, -1, area])
                    .permute([0, 2, 1])
                    .reshape([p, -1])
                    .to_kind(Kind::Float)
                    .contiguous();
                PolicyHead {
                    conv: c,
                    readout: Readout::Dense,
                    w,
                    bias: bias_vec(fc_b)?,
                }
            }
            PolicyParts::Cells {
                conv,
                out_w,
                out_b,
                map,
            } => {
                let c = FoldedConv::new(conv.conv, &conv.bn, kind).0;
                let planes = out_w.size()[0];
                PolicyHead {
                    conv: c,
                    readout: Readout::Cells { map },
                    w: out_w
                        .detach()
                        .view([planes, -1])
                        .to_kind(Kind::Float)
                        .contiguous(),
                    bias: bias_vec(out_b)?,
                }
            }
        };
        let v = parts.value;
        let value = PooledHead {
            conv: FoldedConv::new(v.conv.conv, &v.conv.bn, kind).0,
            hidden: Lin::new(v.fc.0, Some(v.fc.1), None),
            outputs: v
                .outputs
                .iter()
                .map(|(w, b)| Lin::new(w, Some(b), None))
                .collect(),
        };
        Ok(InferNet {
            kind,
            device,
            input_planes: cfg.input_planes,
            height: cfg.board_height,
            width: cfg.board_width,
            stem,
            stem_global,
            blocks,
            policy,
            value,
        })
    }

    /// Element kind of weights and activations.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// Writes the policy readout indices of move `m` of position `i` to `rows` (row of the
    /// feature matrix) and `cols` (row of the output layer). `m` must be < policy_size.
    pub(crate) fn push_readout(&self, i: usize, m: u32, rows: &mut Vec<i64>, cols: &mut Vec<i64>) {
        match &self.policy.readout {
            Readout::Dense => {
                rows.push(i as i64);
                cols.push(m as i64);
            }
            Readout::Cells { map } => {
                let area = self.height * self.width;
                let cell = match map {
                    Some(map) => map[m as usize] as usize,
                    None => m as usize,
                };
                rows.push((i * area + cell % area) as i64);
                cols.push((cell / area) as i64);
            }
        }
    }

    /// Output-layer bias of readout column `col` (see [`InferNet::push_readout`]).
    pub(crate) fn policy_bias(&self, col: i64) -> f32 {
        self.policy.bias.get(col as usize).copied().unwrap_or(0.0)
    }

    /// Converts B positions of row-major NCHW f32 planes into the channels-last input layout of
    /// this net, in `buf` (reused between calls).
    pub(crate) fn input_tensor(&self, planes: &[f32], batch: usize, buf: &mut InputBuf) -> Tensor {
        let (c, area) = (self.input_planes, self.height * self.width);
        let dims = [
            batch as i64,
            self.height as i64,
            self.width as i64,
            c as i64,
        ];
        let t = if self.kind == Kind::BFloat16 {
            buf.bf16.resize(batch * c * area, 0);
            nchw_to_nhwc(planes, &mut buf.bf16, c, area, bf16_bits);
            // (tch maps half::bf16 to Kind::Half, so go through the bit pattern)
            Tensor::from_slice(&buf.bf16).view_dtype(Kind::BFloat16)
        } else {
            buf.f32.resize(batch * c * area, 0.0);
            nchw_to_nhwc(planes, &mut buf.f32, c, area, |x| x);
            Tensor::from_slice(&buf.f32)
        };
        t.view(dims).permute([0, 3, 1, 2]).to_device(self.device)
    }

    /// Forward pass on an input from [`InferNet::input_tensor`]: `globals` [B, G] f32,
    /// `rows`/`cols` [N] i64 from [`InferNet::push_readout`].
    pub(crate) fn forward(
        &self,
        x: &Tensor,
        globals: Option<&Tensor>,
        rows: &Tensor,
        cols: &Tensor,
    ) -> InferOutput {
        let mut x = self.stem.forward(x);
        if let (Some(fc), Some(g)) = (&self.stem_global, globals) {
            add_channel_bias(&mut x, &fc.forward(g));
        }
        let mut x = relu_(x);
        for b in &self.blocks {
            x = b.forward(&x);
        }
        let h = relu_(self.policy.conv.forward(&x));
        let s = h.size();
        let (b, c) = (s[0], s[1]);
        // NHWC view of the features: a row per square (cells) or per position (dense).
        let nhwc = h.permute([0, 2, 3, 1]);
        let feats = match self.policy.readout {
            Readout::Dense => nhwc.reshape([b, -1]),
            Readout::Cells { .. } => nhwc.reshape([-1, c]),
        };
        let legal_logits = (feats.index_select(0, rows).to_kind(Kind::Float)
            * self.policy.w.index_select(0, cols))
        .sum_dim_intlist(1, false, Kind::Float);
        InferOutput {
            legal_logits,
            values: self.value.forward(&x),
        }
    }
}

/// Reusable host buffers for the channels-last input.
#[derive(Default)]
pub(crate) struct InputBuf {
    f32: Vec<f32>,
    /// BF16 bit patterns.
    bf16: Vec<i16>,
}

/// BF16 bit pattern of `x`, rounded to nearest even (NaN stays NaN). Branch-free.
#[inline]
fn bf16_bits(x: f32) -> i16 {
    let b = x.to_bits();
    let rounded = (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16 as i16;
    if x.is_nan() {
        0x7fc0
    } else {
        rounded
    }
}

/// `src` = B x C x area (row-major), `dst` = B x area x C, element by element through `f`.
/// Reads sequentially and writes with a stride of C (measured faster than the reverse).
fn nchw_to_nhwc<T: Copy>(src: &[f32], dst: &mut [T], c: usize, area: usize, f: impl Fn(f32) -> T) {
    let per = c * area;
    for (s, d) in src.chunks_exact(per).zip(dst.chunks_exact_mut(per)) {
        for (ch, plane) in s.chunks_exact(area).enumerate() {
            for (sq, &v) in plane.iter().enumerate() {
                d[sq * c + ch] = f(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_bits_rounds_like_torch() {
        let mut x = 0x1234_5678u32;
        let mut vals: Vec<f32> = vec![
            0.0,
            -0.0,
            1.0,
            -2.0,
            1.003_906_3,
            1.011_718_8,
            f32::MAX,
            f32::INFINITY,
        ];
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let v = f32::from_bits(x);
            if v.is_finite() {
                vals.push(v);
            }
        }
        let ours: Vec<i16> = vals.iter().map(|&v| bf16_bits(v)).collect();
        let torch = Vec::<i16>::try_from(
            Tensor::from_slice(&vals)
                .to_kind(Kind::BFloat16)
                .view_dtype(Kind::Int16),
        )
        .unwrap();
        assert_eq!(ours, torch);
        assert_eq!(bf16_bits(1.0), 0x3f80);
        assert_eq!(bf16_bits(f32::NAN) & 0x7fc0, 0x7fc0);
    }

    #[test]
    fn relu_on_bf16_bits_matches_relu() {
        let x = Tensor::from_slice(&[-3.0f32, -0.0, 0.0, 1e-30, -1e-30, 2.5, -7.0, 65504.0])
            .to_kind(Kind::BFloat16);
        let want = x.relu().to_kind(Kind::Float);
        let got = relu_(x.copy()).to_kind(Kind::Float);
        assert_eq!(
            Vec::<f32>::try_from(got).unwrap(),
            Vec::<f32>::try_from(want).unwrap()
        );
    }

    #[test]
    fn nchw_to_nhwc_transposes() {
        // 2 positions, 3 channels, 2 squares
        let src: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let mut dst = vec![0.0f32; 12];
        nchw_to_nhwc(&src, &mut dst, 3, 2, |x| x);
        assert_eq!(dst, vec![0., 2., 4., 1., 3., 5., 6., 8., 10., 7., 9., 11.]);
    }
}
