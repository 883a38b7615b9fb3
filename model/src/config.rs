use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Result};

/// Shape of the policy head. Both produce `policy_size` logits per position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PolicyHead {
    /// conv1x1 (trunk -> `channels` planes) + BN + ReLU, flatten, then one linear layer to
    /// `policy_size` logits. Works for **any** move-index layout and any board/policy size; cost
    /// `channels*H*W*policy_size` MACs and parameters (e.g. 8 x 64 x 4,000 = 2 M at 8x8).
    Dense { channels: usize },
    /// Per-square "from-plane" scheme (AlphaZero/lc0 style): conv3x3 + BN + ReLU, then conv1x1 to
    /// `planes` planes whose `planes*H*W` values *are* the logits. Requires
    /// `policy_size == planes * H * W` and a move encoding with
    /// `index = plane * (H*W) + square` (square = row * W + col, rows as the planes are laid out).
    /// Cheaper and spatially aligned, but ties the move encoding to this layout.
    Spatial { planes: usize },
    /// Per-square planes with an explicit move map: like `Spatial` (conv3x3 + BN + ReLU, conv1x1
    /// to `planes` planes), then logit `i` = grid cell `policy_map[i]` (= plane * H*W + square)
    /// of the `planes x H x W` output. Any `policy_size` and any move-index order: the encoding
    /// supplies the map (e.g. plane = move kind/direction, square = from-square or drop square),
    /// which must be injective. The map is stored in the checkpoint's weights file
    /// (`policy.map`, i64) and checked on load; see [`crate::Model::with_policy_map`].
    Mapped { planes: usize },
}

/// Auxiliary training heads (KataGo-style), each off by default. They are trained with their own
/// targets and loss weights but never used at play time: [`crate::Model::evaluate`] (the fused
/// inference path) skips them, so they cost nothing there.
///
/// * `opponent_policy`: predicts the policy target of the next searched position of the game
///   (the opponent's reply);
/// * `soft_policy`: predicts the main policy target raised to `1/T` and renormalised
///   ([`crate::SOFT_POLICY_TEMPERATURE`]);
/// * `short_term_horizons`: one tanh output per horizon (plies), predicting an exponentially
///   weighted average of the following search values (empty = no head);
/// * `material`: one tanh output predicting the quiescent material balance of the position.
///
/// The two policy heads are extra output layers on the main policy head's hidden features
/// (a linear layer for a dense head, a conv1x1 for spatial and mapped heads, which read their
/// logits through the same policy map); the value-like heads are extra linear outputs on the
/// value head's hidden layer, like the moves-left output.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuxHeads {
    /// Opponent-reply policy head.
    pub opponent_policy: bool,
    /// Soft policy head.
    pub soft_policy: bool,
    /// Horizons (plies) of the short-term value outputs, in output order; empty = no head.
    pub short_term_horizons: Vec<u32>,
    /// Material head.
    pub material: bool,
}

/// At most this many short-term value horizons.
pub const MAX_SHORT_TERM_HORIZONS: usize = 8;

impl AuxHeads {
    /// All heads off.
    pub fn none() -> Self {
        AuxHeads::default()
    }

    /// Every head on, with short-term value outputs for `short_term_horizons`.
    pub fn all(short_term_horizons: Vec<u32>) -> Self {
        AuxHeads {
            opponent_policy: true,
            soft_policy: true,
            short_term_horizons,
            material: true,
        }
    }

    /// True when the network has no auxiliary head.
    pub fn is_none(&self) -> bool {
        *self == AuxHeads::default()
    }

    /// Checks the horizons (1..=8 distinct values of at least one ply each).
    pub fn validate(&self) -> Result<()> {
        validate_horizons(&self.short_term_horizons, true)
            .map_err(|e| ModelError::Config(format!("aux.short_term_horizons {e}")))
    }
}

/// Checks a list of short-term value horizons (plies): at most [`MAX_SHORT_TERM_HORIZONS`],
/// each at least 1, no repeats; `allow_empty` = whether an empty list is fine. The message
/// describes the problem (callers prefix the field name).
pub fn validate_horizons(h: &[u32], allow_empty: bool) -> std::result::Result<(), String> {
    if h.is_empty() && !allow_empty {
        return Err("must list at least one horizon".into());
    }
    if h.len() > MAX_SHORT_TERM_HORIZONS {
        return Err(format!(
            "has {} horizons, at most {MAX_SHORT_TERM_HORIZONS} are allowed",
            h.len()
        ));
    }
    if let Some(&x) = h.iter().find(|&&x| x == 0) {
        return Err(format!("must be at least 1 ply each, got {x}"));
    }
    if let Some((i, &x)) = h.iter().enumerate().find(|(i, x)| h[..*i].contains(x)) {
        return Err(format!("lists {x} twice (again at position {i})"));
    }
    Ok(())
}

/// Network hyper-parameters. Stored verbatim in every checkpoint's metadata; a checkpoint is
/// loaded by building the network from its config and then checking every tensor's shape.
///
/// Architecture (post-activation ResNet, no biases in convs followed by BN):
/// * stem: conv3x3 `input_planes -> channels` (+ linear `global_inputs -> channels` added as a
///   per-channel bias, KataGo style) + BN + ReLU;
/// * `blocks` residual blocks conv3x3-BN-ReLU-conv3x3-BN + skip + ReLU; the blocks listed in
///   `global_pool_blocks` also get a KataGo-style global pooling branch: conv1x1 to
///   `global_pool_channels` + BN + ReLU, mean and max over the board, linear to `channels`,
///   added as a per-channel bias after the first conv (gives every square board-wide context,
///   e.g. for drops);
/// * policy head: see [`PolicyHead`];
/// * value head: conv1x1 `channels -> value_channels` + BN + ReLU, mean and max pooling,
///   linear to `value_hidden` + ReLU, then linear to 3 W/D/L logits (from the side to move's
///   point of view) and, if `moves_left_head`, linear to 1 (moves-left estimate, in plies / 100);
/// * auxiliary training heads ([`AuxHeads`], `aux`; none by default): extra outputs of the policy
///   and value heads, computed by [`crate::Model::forward_t`] and skipped by inference.
///
/// The parameter count of the trunk and value head does not depend on the board size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetConfig {
    /// Input feature planes per position (C of B x C x H x W).
    pub input_planes: usize,
    /// Global scalar inputs per position (hand counts, counters...); 0 = none.
    #[serde(default)]
    pub global_inputs: usize,
    pub board_height: usize,
    pub board_width: usize,
    /// Size of the flat move-index space (number of policy logits).
    pub policy_size: usize,
    pub blocks: usize,
    pub channels: usize,
    /// Indices (0-based) of the residual blocks that carry a global pooling branch.
    #[serde(default)]
    pub global_pool_blocks: Vec<usize>,
    #[serde(default)]
    pub global_pool_channels: usize,
    pub policy_head: PolicyHead,
    pub value_channels: usize,
    pub value_hidden: usize,
    #[serde(default)]
    pub moves_left_head: bool,
    /// Auxiliary training heads. Absent from the JSON of a network without any (so an older
    /// checkpoint loads as "no auxiliary heads").
    #[serde(default, skip_serializing_if = "AuxHeads::is_none")]
    pub aux: AuxHeads,
}

impl NetConfig {
    /// The default small network: 4 blocks x 32 channels, global pooling in blocks 1 and 3,
    /// dense policy head with 8 planes, value head 32 planes -> 64 hidden, moves-left head.
    pub fn small(
        input_planes: usize,
        board_height: usize,
        board_width: usize,
        policy_size: usize,
    ) -> Self {
        Self::with_size(input_planes, board_height, board_width, policy_size, 4, 32)
    }

    /// A net of `blocks` x `channels` with the default heads; global pooling in every second
    /// block (1, 3, 5, ...), `max(channels/4, 8)` pooling channels.
    pub fn with_size(
        input_planes: usize,
        board_height: usize,
        board_width: usize,
        policy_size: usize,
        blocks: usize,
        channels: usize,
    ) -> Self {
        NetConfig {
            input_planes,
            global_inputs: 0,
            board_height,
            board_width,
            policy_size,
            blocks,
            channels,
            global_pool_blocks: (1..blocks).step_by(2).collect(),
            global_pool_channels: (channels / 4).max(8),
            policy_head: PolicyHead::Dense { channels: 8 },
            value_channels: 32,
            value_hidden: 64.max(channels),
            moves_left_head: true,
            aux: AuxHeads::none(),
        }
    }

    pub fn board_area(&self) -> usize {
        self.board_height * self.board_width
    }

    /// Number of f32 values of one position's input planes (C*H*W).
    pub fn input_len(&self) -> usize {
        self.input_planes * self.board_area()
    }

    /// Nominal floating-point operations of one position's full forward pass (2 per
    /// multiply-add), for throughput figures (GFLOP/s). With `A = H*W`, `c` = channels:
    /// * stem: `2*A*9*input_planes*c` (+ `2*global_inputs*c` for the global inputs);
    /// * each block: two 3x3 convs `2 * 2*A*9*c*c`; with global pooling also the 1x1 conv
    ///   `2*A*c*gc` and the linear layer `2*2gc*c` (`gc` = `global_pool_channels`);
    /// * policy head: dense `2*A*c*pc + 2*pc*A*policy_size` (`pc` = head channels); spatial and
    ///   mapped `2*A*9*c*c + 2*A*c*planes` (the whole output layer, although inference reads
    ///   out only the legal moves);
    /// * value head: `2*A*c*vc + 2*2vc*vh + 2*vh*3` (+ `2*vh` for moves-left), `vc` =
    ///   `value_channels`, `vh` = `value_hidden`.
    ///
    /// Batch norm, ReLU, pooling and softmax are not counted, nor are the auxiliary heads (training
    /// only: inference skips them). The default empire net (4x32,
    /// 32 input planes, mapped head with 67 planes) is 12.3 MFLOP per position.
    pub fn flops_per_position(&self) -> u64 {
        let a = self.board_area() as u64;
        let c = self.channels as u64;
        let conv = |k: u64, cin: u64, cout: u64| 2 * a * k * k * cin * cout;
        let mut f = conv(3, self.input_planes as u64, c) + 2 * self.global_inputs as u64 * c;
        for i in 0..self.blocks {
            f += 2 * conv(3, c, c);
            if self.global_pool_blocks.contains(&i) {
                let gc = self.global_pool_channels as u64;
                f += conv(1, c, gc) + 2 * 2 * gc * c;
            }
        }
        f += match self.policy_head {
            PolicyHead::Dense { channels } => {
                let pc = channels as u64;
                conv(1, c, pc) + 2 * pc * a * self.policy_size as u64
            }
            PolicyHead::Spatial { planes } | PolicyHead::Mapped { planes } => {
                conv(3, c, c) + conv(1, c, planes as u64)
            }
        };
        let (vc, vh) = (self.value_channels as u64, self.value_hidden as u64);
        f += conv(1, c, vc) + 2 * 2 * vc * vh + 2 * vh * 3;
        if self.moves_left_head {
            f += 2 * vh;
        }
        f
    }

    /// Checks internal consistency; called by every constructor that builds a network.
    pub fn validate(&self) -> Result<()> {
        let err = |m: String| Err(ModelError::Config(m));
        if self.input_planes == 0 || self.board_height == 0 || self.board_width == 0 {
            return err(format!(
                "input_planes, board_height and board_width must be > 0 (got {}x{}x{})",
                self.input_planes, self.board_height, self.board_width
            ));
        }
        if self.policy_size == 0
            || self.channels == 0
            || self.value_channels == 0
            || self.value_hidden == 0
        {
            return err(
                "policy_size, channels, value_channels and value_hidden must be > 0".into(),
            );
        }
        if self.policy_size > i32::MAX as usize {
            return err(format!("policy_size {} too large", self.policy_size));
        }
        if let Some(&b) = self.global_pool_blocks.iter().find(|&&b| b >= self.blocks) {
            return err(format!(
                "global_pool_blocks contains {b}, but there are only {} blocks",
                self.blocks
            ));
        }
        if !self.global_pool_blocks.is_empty() && self.global_pool_channels == 0 {
            return err("global_pool_blocks is non-empty but global_pool_channels is 0".into());
        }
        self.aux.validate()?;
        match self.policy_head {
            PolicyHead::Dense { channels: 0 } => {
                return err("policy_head.channels must be > 0".into());
            }
            PolicyHead::Mapped { planes: 0 } => {
                return err("policy_head.planes must be > 0".into());
            }
            PolicyHead::Spatial { planes } if planes * self.board_area() != self.policy_size => {
                return err(format!(
                    "spatial policy head needs policy_size == planes*H*W, but {planes}*{}*{} != {}",
                    self.board_height, self.board_width, self.policy_size
                ));
            }
            _ => {}
        }
        Ok(())
    }

    /// Names of the top-level fields whose values differ (used in mismatch errors).
    pub fn diff(&self, other: &NetConfig) -> Vec<String> {
        let a = serde_json::to_value(self).unwrap_or_default();
        let b = serde_json::to_value(other).unwrap_or_default();
        match (a, b) {
            (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
                let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
                keys.sort();
                keys.dedup();
                keys.into_iter()
                    .filter(|k| a.get(*k) != b.get(*k))
                    .map(|k| {
                        let show = |v: Option<&serde_json::Value>| {
                            v.map_or("-".to_string(), |v| v.to_string())
                        };
                        format!("{k}: {} vs {}", show(a.get(k)), show(b.get(k)))
                    })
                    .collect()
            }
            _ => vec!["<unserialisable>".into()],
        }
    }
}

/// Builds the map for a [`PolicyHead::Mapped`] head from one `(square, plane key)` per move
/// index (`entries[i]` for move `i`): every distinct key becomes one plane (numbered in sorted
/// key order, so the result does not depend on move order), and move `i`'s logit is read at
/// `plane(key) * area + square`. Returns `(planes, map)` for `PolicyHead::Mapped { planes }`
/// and [`crate::Model::with_policy_map`].
///
/// Typical keys for a chess-like encoding: board move = (from, kind 0, to - from displacement),
/// promotion = (from, kind 1, displacement, piece), drop = (target square, kind 2, piece),
/// pass = (square 0, kind 3). Two moves with the same square and key are an error (the head
/// could not tell them apart).
pub fn policy_map_from_keys<K: Ord + Clone + std::fmt::Debug>(
    area: usize,
    entries: &[(usize, K)],
) -> Result<(usize, Vec<u32>)> {
    let mut keys: Vec<&K> = entries.iter().map(|(_, k)| k).collect();
    keys.sort();
    keys.dedup();
    let planes = keys.len();
    if (planes * area) as u64 > u32::MAX as u64 {
        return Err(ModelError::Config(format!(
            "{planes} planes x {area} squares do not fit u32 cells"
        )));
    }
    let mut owner: std::collections::HashMap<u32, usize> =
        std::collections::HashMap::with_capacity(entries.len());
    let mut map = Vec::with_capacity(entries.len());
    for (i, (sq, k)) in entries.iter().enumerate() {
        if *sq >= area {
            return Err(ModelError::Config(format!(
                "move {i}: square {sq} >= board area {area}"
            )));
        }
        let plane = keys.binary_search(&k).unwrap_or(0);
        let cell = (plane * area + sq) as u32;
        if let Some(j) = owner.insert(cell, i) {
            return Err(ModelError::Config(format!(
                "moves {j} and {i} have the same square {sq} and plane key {k:?}"
            )));
        }
        map.push(cell);
    }
    Ok((planes, map))
}
