//! The network (tch::nn) and its raw forward pass.

use tch::nn;
use tch::{Kind, Tensor};

use crate::config::{NetConfig, PolicyHead};
use crate::error::{ModelError, Result};

/// Moves-left outputs and targets are scaled by this (the head predicts plies / 100).
pub const MOVES_LEFT_SCALE: f64 = 100.0;

/// Variables that get no weight decay (BN parameters and biases) live in this optimizer group.
pub(crate) const NO_DECAY_GROUP: usize = 1;

/// How one pass of the reference network runs ([`crate::Model::forward_pass`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pass {
    /// Train-mode batch norm (batch statistics; the running averages are updated).
    pub train: bool,
    /// Convolutions and linear layers in BF16: their inputs and weights are cast to BF16 and
    /// their results back to f32, so batch norm, pooling, softmax and the losses stay f32 and
    /// the gradients reach the f32 weights through the casts (mixed precision with f32 master
    /// weights, what CPU autocast does, which tch does not expose).
    pub bf16: bool,
}

impl Pass {
    /// An f32 pass, train-mode batch norm or not.
    pub fn f32(train: bool) -> Self {
        Pass { train, bf16: false }
    }
}

/// `op(x, weight, bias)` in the pass's precision (see [`Pass::bf16`]).
fn mixed(
    x: &Tensor,
    ws: &Tensor,
    bs: Option<&Tensor>,
    pass: Pass,
    op: impl Fn(&Tensor, &Tensor, Option<&Tensor>) -> Tensor,
) -> Tensor {
    if pass.bf16 {
        let low = |t: &Tensor| t.to_kind(Kind::BFloat16);
        op(&low(x), &low(ws), bs.map(low).as_ref()).to_kind(Kind::Float)
    } else {
        op(x, ws, bs)
    }
}

/// A stride-1 "same" convolution (every conv of [`conv`]) in the pass's precision.
fn conv_t(conv: &nn::Conv2D, x: &Tensor, pass: Pass) -> Tensor {
    if !pass.bf16 {
        return x.apply(conv);
    }
    let pad = conv.ws.size()[3] / 2;
    mixed(x, &conv.ws, conv.bs.as_ref(), pass, |x, w, b| {
        x.conv2d(w, b, [1i64, 1].as_slice(), [pad, pad].as_slice(), [1i64, 1].as_slice(), 1)
    })
}

/// A tch linear layer in the pass's precision.
fn linear_t(fc: &nn::Linear, x: &Tensor, pass: Pass) -> Tensor {
    mixed(x, &fc.ws, fc.bs.as_ref(), pass, |x, w, b| x.linear(w, b))
}

/// Conv without bias ("same" padding); always followed by a BN.
fn conv(p: nn::Path, cin: usize, cout: usize, k: usize) -> nn::Conv2D {
    let cfg = nn::ConvConfig {
        padding: (k / 2) as i64,
        bias: false,
        ..Default::default()
    };
    nn::conv2d(&p, cin as i64, cout as i64, k as i64, cfg)
}

fn bn(p: nn::Path, c: usize) -> nn::BatchNorm {
    nn::batch_norm2d(p.set_group(NO_DECAY_GROUP), c as i64, Default::default())
}

/// Linear layer whose bias is in the no-decay group.
#[derive(Debug)]
struct Linear {
    ws: Tensor,
    bs: Tensor,
}

impl Linear {
    fn new(p: nn::Path, din: usize, dout: usize) -> Self {
        // Same init as tch::nn::linear (kaiming-uniform weights, uniform(+-1/sqrt(din)) bias).
        let ws = p.var(
            "weight",
            &[dout as i64, din as i64],
            nn::init::DEFAULT_KAIMING_UNIFORM,
        );
        let bound = 1.0 / (din as f64).sqrt();
        let bs = p.set_group(NO_DECAY_GROUP).var(
            "bias",
            &[dout as i64],
            nn::Init::Uniform {
                lo: -bound,
                up: bound,
            },
        );
        Linear { ws, bs }
    }

    fn forward_t(&self, x: &Tensor, pass: Pass) -> Tensor {
        mixed(x, &self.ws, Some(&self.bs), pass, |x, w, b| x.linear(w, b))
    }
}

/// conv1x1 with bias (policy output planes); the bias is in the no-decay group.
#[derive(Debug)]
struct Conv1x1 {
    ws: Tensor,
    bs: Tensor,
}

impl Conv1x1 {
    fn new(p: nn::Path, cin: usize, cout: usize) -> Self {
        let ws = p.var(
            "weight",
            &[cout as i64, cin as i64, 1, 1],
            nn::init::DEFAULT_KAIMING_UNIFORM,
        );
        let bound = 1.0 / (cin as f64).sqrt();
        let bs = p.set_group(NO_DECAY_GROUP).var(
            "bias",
            &[cout as i64],
            nn::Init::Uniform {
                lo: -bound,
                up: bound,
            },
        );
        Conv1x1 { ws, bs }
    }

    fn forward_t(&self, x: &Tensor, pass: Pass) -> Tensor {
        mixed(x, &self.ws, Some(&self.bs), pass, |x, w, b| {
            x.conv2d(w, b, [1i64, 1].as_slice(), [0i64, 0].as_slice(), [1i64, 1].as_slice(), 1)
        })
    }
}

/// Linear layer without bias (for inputs added before a BN).
fn linear_nobias(p: nn::Path, din: usize, dout: usize) -> nn::Linear {
    nn::linear(
        p,
        din as i64,
        dout as i64,
        nn::LinearConfig {
            bias: false,
            ..Default::default()
        },
    )
}

struct ConvBn {
    conv: nn::Conv2D,
    bn: nn::BatchNorm,
}

impl ConvBn {
    fn new(p: &nn::Path, cin: usize, cout: usize, k: usize) -> Self {
        ConvBn {
            conv: conv(p / "conv", cin, cout, k),
            bn: bn(p / "bn", cout),
        }
    }
    fn forward_t(&self, x: &Tensor, pass: Pass) -> Tensor {
        conv_t(&self.conv, x, pass).apply_t(&self.bn, pass.train)
    }
}

/// Mean and max over the board: [B, C, H, W] -> [B, 2C].
fn global_pool(x: &Tensor) -> Tensor {
    let mean = x.mean_dim([2i64, 3].as_slice(), false, Kind::Float);
    let max = x.amax([2i64, 3].as_slice(), false);
    Tensor::cat(&[mean, max], 1)
}

struct GlobalPoolBranch {
    conv: ConvBn,
    fc: nn::Linear,
}

struct ResBlock {
    conv1: nn::Conv2D,
    bn1: nn::BatchNorm,
    gpool: Option<GlobalPoolBranch>,
    second: ConvBn,
}

impl ResBlock {
    fn new(p: &nn::Path, c: usize, gpool_channels: Option<usize>) -> Self {
        ResBlock {
            conv1: conv(p / "conv1", c, c, 3),
            bn1: bn(p / "bn1", c),
            gpool: gpool_channels.map(|cg| GlobalPoolBranch {
                conv: ConvBn::new(&(p / "gpool"), c, cg, 1),
                fc: linear_nobias(p / "gpool" / "fc", 2 * cg, c),
            }),
            second: ConvBn::new(&(p / "second"), c, c, 3),
        }
    }

    fn forward_t(&self, x: &Tensor, pass: Pass) -> Tensor {
        let y = conv_t(&self.conv1, x, pass);
        let y = match &self.gpool {
            Some(g) => {
                let pooled = global_pool(&g.conv.forward_t(x, pass).relu());
                y + linear_t(&g.fc, &pooled, pass).unsqueeze(-1).unsqueeze(-1)
            }
            None => y,
        };
        let y = y.apply_t(&self.bn1, pass.train).relu();
        (x + self.second.forward_t(&y, pass)).relu()
    }
}

enum PolicyNet {
    Dense {
        conv: ConvBn,
        fc: Linear,
    },
    Spatial {
        conv: ConvBn,
        out: Conv1x1,
    },
    Mapped {
        conv: ConvBn,
        out: Conv1x1,
        map: Tensor,
    },
}

/// The output layer of an auxiliary policy head on the main policy head's hidden features: a
/// linear layer (dense head) or a conv1x1 (spatial and mapped heads; logits read through the
/// same map).
enum PolicyOut {
    Dense(Linear),
    Cells(Conv1x1),
}

impl PolicyOut {
    fn new(p: nn::Path, cfg: &NetConfig) -> Self {
        match cfg.policy_head {
            PolicyHead::Dense { channels } => PolicyOut::Dense(Linear::new(
                p,
                channels * cfg.board_area(),
                cfg.policy_size,
            )),
            PolicyHead::Spatial { planes } | PolicyHead::Mapped { planes } => {
                PolicyOut::Cells(Conv1x1::new(p, cfg.channels, planes))
            }
        }
    }
}

impl PolicyNet {
    /// The hidden features of the head: [B, D] for dense, [B, C, H, W] for the others.
    fn hidden(&self, x: &Tensor, pass: Pass) -> Tensor {
        match self {
            PolicyNet::Dense { conv, .. } => conv.forward_t(x, pass).relu().flatten(1, -1),
            PolicyNet::Spatial { conv, .. } | PolicyNet::Mapped { conv, .. } => {
                conv.forward_t(x, pass).relu()
            }
        }
    }

    /// [B, policy_size] logits of the main output layer from [`PolicyNet::hidden`] features.
    fn logits(&self, h: &Tensor, pass: Pass) -> Tensor {
        match self {
            PolicyNet::Dense { fc, .. } => fc.forward_t(h, pass),
            PolicyNet::Spatial { out, .. } => out.forward_t(h, pass).flatten(1, -1),
            PolicyNet::Mapped { out, map, .. } => {
                out.forward_t(h, pass).flatten(1, -1).index_select(1, map)
            }
        }
    }

    /// [B, policy_size] logits of an auxiliary output layer (same readout as the main one).
    fn aux_logits(&self, h: &Tensor, out: &PolicyOut, pass: Pass) -> Tensor {
        let cells = match out {
            PolicyOut::Dense(fc) => return fc.forward_t(h, pass),
            PolicyOut::Cells(o) => o.forward_t(h, pass).flatten(1, -1),
        };
        match self {
            PolicyNet::Mapped { map, .. } => cells.index_select(1, map),
            _ => cells,
        }
    }
}

/// Checks a policy map against the config: one entry per move index, each a distinct cell of
/// the `planes x H x W` grid.
pub(crate) fn check_policy_map(cfg: &NetConfig, map: &[u32]) -> Result<()> {
    let PolicyHead::Mapped { planes } = cfg.policy_head else {
        return Err(ModelError::Config(
            "a policy map is only used with policy_head kind \"mapped\"".into(),
        ));
    };
    let cells = planes * cfg.board_area();
    if map.len() != cfg.policy_size {
        return Err(ModelError::Config(format!(
            "policy map has {} entries, policy_size is {}",
            map.len(),
            cfg.policy_size
        )));
    }
    let mut seen = vec![false; cells];
    for (i, &c) in map.iter().enumerate() {
        let c = c as usize;
        if c >= cells {
            return Err(ModelError::Config(format!(
                "policy map[{i}] = {c} >= planes*H*W = {cells}"
            )));
        }
        if std::mem::replace(&mut seen[c], true) {
            return Err(ModelError::Config(format!(
                "policy map is not injective: cell {c} used twice (again by move {i})"
            )));
        }
    }
    Ok(())
}

/// Raw outputs of one forward pass.
#[derive(Debug)]
pub struct NetOutput {
    /// [B, policy_size] policy logits (not masked).
    pub policy: Tensor,
    /// [B, 3] win/draw/loss logits, side to move's point of view.
    pub wdl: Tensor,
    /// [B] moves-left prediction in plies / [`MOVES_LEFT_SCALE`] (if the config has the head).
    pub moves_left: Option<Tensor>,
    /// [B, policy_size] opponent-reply policy logits (auxiliary head, if the config has it).
    pub opponent_policy: Option<Tensor>,
    /// [B, policy_size] soft policy logits (auxiliary head, if the config has it).
    pub soft_policy: Option<Tensor>,
    /// [B, K] short-term values in [-1, 1], one per horizon of `aux.short_term_horizons`
    /// (auxiliary head, if the config has it).
    pub short_term: Option<Tensor>,
    /// [B] material prediction in [-1, 1] (auxiliary head, if the config has it).
    pub material: Option<Tensor>,
}

/// The network modules; the variables live in the owning [`crate::Model`]'s VarStore.
pub(crate) struct Net {
    cfg: NetConfig,
    stem: ConvBn,
    stem_global: Option<nn::Linear>,
    blocks: Vec<ResBlock>,
    policy: PolicyNet,
    value_conv: ConvBn,
    value_fc: Linear,
    wdl_fc: Linear,
    ml_fc: Option<Linear>,
    opponent_out: Option<PolicyOut>,
    soft_out: Option<PolicyOut>,
    short_term_fc: Option<Linear>,
    material_fc: Option<Linear>,
}

impl Net {
    pub(crate) fn new(
        root: &nn::Path,
        cfg: &NetConfig,
        policy_map: Option<&[u32]>,
    ) -> Result<Self> {
        cfg.validate()?;
        match (&cfg.policy_head, policy_map) {
            (PolicyHead::Mapped { .. }, None) => {
                return Err(ModelError::Config(
                    "policy_head \"mapped\" needs a policy map (Model::with_policy_map)".into(),
                ))
            }
            (_, Some(map)) => check_policy_map(cfg, map)?,
            _ => {}
        }
        let c = cfg.channels;
        let area = cfg.board_area();
        let stem = ConvBn::new(&(root / "stem"), cfg.input_planes, c, 3);
        let stem_global = (cfg.global_inputs > 0)
            .then(|| linear_nobias(root / "stem" / "global", cfg.global_inputs, c));
        let blocks = (0..cfg.blocks)
            .map(|i| {
                let gp = cfg
                    .global_pool_blocks
                    .contains(&i)
                    .then_some(cfg.global_pool_channels);
                ResBlock::new(&(root / "blocks" / i), c, gp)
            })
            .collect();
        let pp = root / "policy";
        let policy = match cfg.policy_head {
            PolicyHead::Dense { channels } => PolicyNet::Dense {
                conv: ConvBn::new(&pp, c, channels, 1),
                fc: Linear::new(&pp / "fc", channels * area, cfg.policy_size),
            },
            PolicyHead::Spatial { planes } => PolicyNet::Spatial {
                conv: ConvBn::new(&pp, c, c, 3),
                out: Conv1x1::new(&pp / "out", c, planes),
            },
            PolicyHead::Mapped { planes } => {
                let map: Vec<i64> = policy_map
                    .unwrap_or_default()
                    .iter()
                    .map(|&m| m as i64)
                    .collect();
                let map = Tensor::from_slice(&map).to_device(root.device());
                PolicyNet::Mapped {
                    conv: ConvBn::new(&pp, c, c, 3),
                    out: Conv1x1::new(&pp / "out", c, planes),
                    // non-trainable buffer: saved with the weights, never updated
                    map: pp.add("map", map, false),
                }
            }
        };
        let vp = root / "value";
        let value_conv = ConvBn::new(&vp, c, cfg.value_channels, 1);
        let value_fc = Linear::new(&vp / "fc", 2 * cfg.value_channels, cfg.value_hidden);
        let wdl_fc = Linear::new(&vp / "wdl", cfg.value_hidden, 3);
        let ml_fc = cfg
            .moves_left_head
            .then(|| Linear::new(&vp / "moves_left", cfg.value_hidden, 1));
        let aux = &cfg.aux;
        let opponent_out = aux
            .opponent_policy
            .then(|| PolicyOut::new(&pp / "opponent", cfg));
        let soft_out = aux.soft_policy.then(|| PolicyOut::new(&pp / "soft", cfg));
        let k = aux.short_term_horizons.len();
        let short_term_fc = (k > 0).then(|| Linear::new(&vp / "short_term", cfg.value_hidden, k));
        let material_fc = aux
            .material
            .then(|| Linear::new(&vp / "material", cfg.value_hidden, 1));
        Ok(Net {
            cfg: cfg.clone(),
            stem,
            stem_global,
            blocks,
            policy,
            value_conv,
            value_fc,
            wdl_fc,
            ml_fc,
            opponent_out,
            soft_out,
            short_term_fc,
            material_fc,
        })
    }

    /// `planes`: [B, C, H, W] f32; `globals`: [B, G] f32 (required iff the config has G > 0).
    /// Computes every head, the auxiliary ones included; the outputs are f32 in either pass.
    pub(crate) fn forward_t(&self, planes: &Tensor, globals: Option<&Tensor>, pass: Pass) -> NetOutput {
        let x = conv_t(&self.stem.conv, planes, pass);
        let x = match (&self.stem_global, globals) {
            (Some(fc), Some(g)) => x + linear_t(fc, g, pass).unsqueeze(-1).unsqueeze(-1),
            _ => x,
        };
        let mut x = x.apply_t(&self.stem.bn, pass.train).relu();
        for b in &self.blocks {
            x = b.forward_t(&x, pass);
        }
        let h = self.policy.hidden(&x, pass);
        let policy = self.policy.logits(&h, pass);
        let opponent_policy = self
            .opponent_out
            .as_ref()
            .map(|o| self.policy.aux_logits(&h, o, pass));
        let soft_policy = self.soft_out.as_ref().map(|o| self.policy.aux_logits(&h, o, pass));
        let v = self.value_fc.forward_t(&global_pool(&self.value_conv.forward_t(&x, pass).relu()), pass).relu();
        let wdl = self.wdl_fc.forward_t(&v, pass);
        let moves_left = self.ml_fc.as_ref().map(|fc| fc.forward_t(&v, pass).squeeze_dim(1));
        let short_term = self.short_term_fc.as_ref().map(|fc| fc.forward_t(&v, pass).tanh());
        let material = self
            .material_fc
            .as_ref()
            .map(|fc| fc.forward_t(&v, pass).squeeze_dim(1).tanh());
        NetOutput {
            policy,
            wdl,
            moves_left,
            opponent_policy,
            soft_policy,
            short_term,
            material,
        }
    }

    pub(crate) fn config(&self) -> &NetConfig {
        &self.cfg
    }

    pub(crate) fn policy_map(&self) -> Option<Vec<u32>> {
        match &self.policy {
            PolicyNet::Mapped { map, .. } => Vec::<i64>::try_from(map.to_device(tch::Device::Cpu))
                .ok()
                .map(|v| v.into_iter().map(|m| m as u32).collect()),
            _ => None,
        }
    }
}

/// Eval-mode batch-norm parameters, borrowed for folding into the preceding conv.
pub(crate) struct BnParts<'a> {
    pub running_mean: &'a Tensor,
    pub running_var: &'a Tensor,
    pub weight: Option<&'a Tensor>,
    pub bias: Option<&'a Tensor>,
    pub eps: f64,
}

impl<'a> From<&'a nn::BatchNorm> for BnParts<'a> {
    fn from(bn: &'a nn::BatchNorm) -> Self {
        BnParts {
            running_mean: &bn.running_mean,
            running_var: &bn.running_var,
            weight: bn.ws.as_ref(),
            bias: bn.bs.as_ref(),
            // `bn()` builds every BN with the default config.
            eps: nn::BatchNormConfig::default().eps,
        }
    }
}

/// A bias-free conv (weight [out, in, k, k]) followed by a BN.
pub(crate) struct ConvBnParts<'a> {
    pub conv: &'a Tensor,
    pub bn: BnParts<'a>,
}

impl<'a> From<&'a ConvBn> for ConvBnParts<'a> {
    fn from(c: &'a ConvBn) -> Self {
        ConvBnParts {
            conv: &c.conv.ws,
            bn: (&c.bn).into(),
        }
    }
}

/// A residual block: conv1 (+ global-pooling branch: conv-BN and a bias-free linear layer
/// whose output is added before `bn1`), bn1, ReLU, then `second` + skip + ReLU.
pub(crate) struct BlockParts<'a> {
    pub conv1: &'a Tensor,
    pub bn1: BnParts<'a>,
    pub gpool: Option<(ConvBnParts<'a>, &'a Tensor)>,
    pub second: ConvBnParts<'a>,
}

/// The policy head: dense (conv-BN-ReLU, flatten, linear) or per-cell (conv-BN-ReLU, conv1x1
/// with bias; `map` = move index -> cell, None = identity).
pub(crate) enum PolicyParts<'a> {
    Dense {
        conv: ConvBnParts<'a>,
        fc_w: &'a Tensor,
        fc_b: &'a Tensor,
    },
    Cells {
        conv: ConvBnParts<'a>,
        out_w: &'a Tensor,
        out_b: &'a Tensor,
        map: Option<Vec<u32>>,
    },
}

/// A pooled head: conv1x1-BN-ReLU, mean+max pooling, hidden linear + ReLU, then one linear
/// layer (weight, bias) per output, in the order of [`NetOutput`]'s fields.
pub(crate) struct PooledParts<'a> {
    pub conv: ConvBnParts<'a>,
    pub fc: (&'a Tensor, &'a Tensor),
    pub outputs: Vec<(&'a Tensor, &'a Tensor)>,
}

/// Borrowed view of every parameter of a [`Net`] that inference uses, for the inference fold
/// (`crate::infer`). A new head must appear here (and in `InferNet::fold`) to be served by
/// `Model::evaluate`; the auxiliary training heads ([`crate::AuxHeads`]) deliberately do not.
pub(crate) struct NetParts<'a> {
    pub stem: ConvBnParts<'a>,
    pub stem_global: Option<&'a Tensor>,
    pub blocks: Vec<BlockParts<'a>>,
    pub policy: PolicyParts<'a>,
    pub value: PooledParts<'a>,
}

impl Net {
    /// Borrowed view of all parameters (see [`NetParts`]).
    pub(crate) fn parts(&self) -> NetParts<'_> {
        let policy = match &self.policy {
            PolicyNet::Dense { conv, fc } => PolicyParts::Dense {
                conv: conv.into(),
                fc_w: &fc.ws,
                fc_b: &fc.bs,
            },
            PolicyNet::Spatial { conv, out } => PolicyParts::Cells {
                conv: conv.into(),
                out_w: &out.ws,
                out_b: &out.bs,
                map: None,
            },
            PolicyNet::Mapped { conv, out, .. } => PolicyParts::Cells {
                conv: conv.into(),
                out_w: &out.ws,
                out_b: &out.bs,
                map: self.policy_map(),
            },
        };
        let mut outputs = vec![(&self.wdl_fc.ws, &self.wdl_fc.bs)];
        if let Some(ml) = &self.ml_fc {
            outputs.push((&ml.ws, &ml.bs));
        }
        NetParts {
            stem: (&self.stem).into(),
            stem_global: self.stem_global.as_ref().map(|l| &l.ws),
            blocks: self
                .blocks
                .iter()
                .map(|b| BlockParts {
                    conv1: &b.conv1.ws,
                    bn1: (&b.bn1).into(),
                    gpool: b.gpool.as_ref().map(|g| ((&g.conv).into(), &g.fc.ws)),
                    second: (&b.second).into(),
                })
                .collect(),
            policy,
            value: PooledParts {
                conv: (&self.value_conv).into(),
                fc: (&self.value_fc.ws, &self.value_fc.bs),
                outputs,
            },
        }
    }
}

impl std::fmt::Debug for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Net")
            .field("cfg", &self.cfg)
            .finish_non_exhaustive()
    }
}
