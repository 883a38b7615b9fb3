//! Knowledge from the variant's own definition, mixed into a young network's leaf evaluations.
//!
//! A freshly initialised network knows nothing: its values are noise and its priors flat, so a
//! search of a few dozen simulations hangs pieces that a one-ply material count would keep.
//! [`Knowledge`] blends in what the variant definition says (piece values, hands, royal
//! pieces), so it works for every variant, user-defined ones included:
//!
//! * value: `v = (1 − w) · v_net + w · tanh(balance / scale)`, where `balance` is the material
//!   balance in pawns for the side to move, optionally after a capture-only quiescence search
//!   ([`Quiescence`]); the draw probability is scaled by `1 − w`;
//! * priors: `p = (1 − w_p) · p_net + w_p · p_capture`, where `p_capture ∝ exp(victim value / 2)`
//!   favours captures of valuable pieces (MVV) and is uniform over quiet moves;
//!   or, with [`PriorMode::Product`], `p ∝ p_net · p_capture^w_p`: the capture prior is a fixed
//!   part of the policy and the network learns only what to change in it (the learner adds the
//!   same `w_p · victim value / 2` to its logits before the policy loss), so a young network's
//!   search starts as good as the capture prior's and every lesson shows at once.
//!
//! Training anneals both weights to 0 over `anneal_steps` learner steps ([`Knowledge::at`];
//! the `[learn.knowledge]` config section), so the network takes over as it learns (a product
//! prior is part of the network's parametrisation and does not anneal); each checkpoint records
//! the blend at its step, and searches with it use that blend by default.

use serde::{Deserialize, Serialize};
use vzero_rules::{Move, MoveKind, Position, Square};

use crate::eval::LeafValue;
use crate::quiescence::Quiescence;
use crate::variant_game::{material_balance, VariantGame};

/// Weights and settings of the knowledge blend at one point of training.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Knowledge {
    /// Weight `w` of the material value in the leaf value, in [0, 1].
    pub value_weight: f32,
    /// Weight `w_p` of the capture prior in the leaf priors, in [0, 1].
    pub prior_weight: f32,
    /// Material difference (pawns) mapped to tanh(1) ≈ 0.76.
    pub scale: f32,
    /// Resolve captures before counting material (a capture-only search at each leaf).
    pub quiescence: bool,
    /// Plies of captures the quiescence search looks at most.
    pub quiescence_depth: u32,
    /// Nodes the quiescence search visits at most per leaf.
    pub quiescence_nodes: u32,
    /// Training steps over which both weights fall linearly to 0 (0: they never fall); see
    /// [`Knowledge::at`].
    pub anneal_steps: u64,
    /// How the capture prior joins the network's policy: a linear mix (default) or a product.
    #[serde(skip_serializing_if = "PriorMode::is_mix")]
    pub prior_mode: PriorMode,
}

/// How the capture prior joins the network's priors (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorMode {
    /// `p = (1 − w_p) · p_net + w_p · p_capture`, annealed with the value weight.
    #[default]
    Mix,
    /// `p ∝ p_net · p_capture^w_p`: the network's logits are a residual over the capture prior,
    /// trained as such; `w_p` does not anneal and no switch releases it.
    Product,
}

impl PriorMode {
    /// Whether this is the default linear mix (not written to configs and checkpoints).
    pub fn is_mix(&self) -> bool {
        *self == PriorMode::Mix
    }
}

impl Default for Knowledge {
    /// No blend (weights 0), quiescent material at scale 4 when a weight is raised.
    fn default() -> Self {
        Knowledge {
            value_weight: 0.0,
            prior_weight: 0.0,
            scale: 4.0,
            quiescence: true,
            quiescence_depth: 8,
            quiescence_nodes: 256,
            anneal_steps: 0,
            prior_mode: PriorMode::Mix,
        }
    }
}

/// Parts of the blend that a measured switch handed to the network before the anneal would
/// have: from the recorded step on, that weight is 0. Training decides it (a match of the
/// network with and without the part, `[switch]` of a run's config) and records it in every
/// checkpoint after, so that a resumed run keeps it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlendRelease {
    /// Learner step at which the capture prior was switched off (the learned policy took over).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior_step: Option<u64>,
    /// Learner step at which the material value was switched off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_step: Option<u64>,
}

/// One part of the blend: the capture prior or the material value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlendPart {
    /// The capture prior mixed into the network's policy (`prior_weight`).
    Prior,
    /// The material value mixed into the network's value (`value_weight`).
    Value,
}

impl BlendPart {
    /// `prior` or `value`.
    pub fn name(self) -> &'static str {
        match self {
            BlendPart::Prior => "prior",
            BlendPart::Value => "value",
        }
    }
}

impl BlendRelease {
    /// Whether nothing was released.
    pub fn is_none(&self) -> bool {
        *self == BlendRelease::default()
    }

    /// `k` with the released weights set to 0 (a product prior is never released).
    pub fn apply(&self, k: Knowledge) -> Knowledge {
        let product = k.prior_mode == PriorMode::Product;
        Knowledge {
            prior_weight: if self.prior_step.is_some() && !product { 0.0 } else { k.prior_weight },
            value_weight: if self.value_step.is_some() { 0.0 } else { k.value_weight },
            ..k
        }
    }
}

/// Temperature of the capture prior: `p ∝ exp(victim value · CAPTURE_PRIOR_GAIN)`.
pub const CAPTURE_PRIOR_GAIN: f32 = 0.5;

impl Knowledge {
    /// A blend that only uses the heuristics (weights 1): a search without a network.
    pub fn heuristic_only() -> Knowledge {
        Knowledge { value_weight: 1.0, prior_weight: 1.0, ..Knowledge::default() }
    }

    /// The blend at training step `step`: both weights scaled by `max(0, 1 − step / anneal_steps)`
    /// (a product prior's weight stays: it is part of what the network learned against).
    pub fn at(&self, step: u64) -> Knowledge {
        let f = if self.anneal_steps == 0 { 1.0 } else { (1.0 - step as f64 / self.anneal_steps as f64).max(0.0) as f32 };
        let prior_weight = match self.prior_mode {
            PriorMode::Mix => self.prior_weight * f,
            PriorMode::Product => self.prior_weight,
        };
        Knowledge { value_weight: self.value_weight * f, prior_weight, ..*self }
    }

    /// The logit the capture prior gives `m` in `pos` at weight 1: `CAPTURE_PRIOR_GAIN` times the
    /// value of the opponent's piece it takes (a pawn for en passant; 0 for a quiet move).
    pub fn capture_logit(pos: &Position, m: Move) -> f32 {
        let victim = match m.kind() {
            MoveKind::Drop | MoveKind::Pass | MoveKind::Castle => 0.0,
            MoveKind::EnPassant => 1.0,
            _ => {
                let us = pos.side_to_move();
                pos.piece_at(Square(m.to() as u8)).filter(|x| x.color != us).map_or(0.0, |x| pos.variant().pieces()[x.kind.index()].value)
            }
        };
        victim * CAPTURE_PRIOR_GAIN
    }

    /// Whether the blend changes anything.
    pub fn is_active(&self) -> bool {
        self.value_weight > 0.0 || self.prior_weight > 0.0
    }

    /// Checks the fields, naming the first one out of range.
    pub fn validate(&self) -> Result<(), String> {
        let unit = |x: f32| (0.0..=1.0).contains(&x);
        if !unit(self.value_weight) {
            return Err(format!("value_weight must be in [0, 1], not {}", self.value_weight));
        }
        if !unit(self.prior_weight) {
            return Err(format!("prior_weight must be in [0, 1], not {}", self.prior_weight));
        }
        if !(self.scale.is_finite() && self.scale > 0.0) {
            return Err(format!("scale must be positive, not {}", self.scale));
        }
        if self.quiescence && (self.quiescence_nodes == 0 || self.quiescence_depth > 64) {
            return Err("quiescence_nodes must be at least 1 and quiescence_depth at most 64".into());
        }
        Ok(())
    }

    /// The heuristic value of `pos` for its side to move, in [-1, 1].
    pub fn material_value(&self, pos: &Position) -> f32 {
        let balance = if self.quiescence {
            Quiescence { max_depth: self.quiescence_depth, max_nodes: self.quiescence_nodes }.balance(pos)
        } else {
            material_balance(pos)
        };
        (balance / self.scale).tanh()
    }

    /// Fills `out` with the capture prior over `moves` (sums to 1).
    pub fn capture_prior(pos: &Position, moves: &[Move], out: &mut [f32]) {
        let mut sum = 0.0;
        for (p, &m) in out.iter_mut().zip(moves) {
            *p = Knowledge::capture_logit(pos, m).exp();
            sum += *p;
        }
        if sum > 0.0 {
            out.iter_mut().for_each(|p| *p /= sum);
        }
    }

    /// Blends the heuristics into an evaluator's output for the leaf `state`: `priors` (over
    /// `moves`, normalised or not) in place, and the returned value.
    pub fn apply(&self, state: &VariantGame, moves: &[Move], priors: &mut [f32], value: LeafValue) -> LeafValue {
        let pos = state.position();
        if self.prior_weight > 0.0 && !moves.is_empty() && self.prior_mode == PriorMode::Product {
            // p ∝ p_net · exp(w_p · capture logit), over the legal moves
            let w = self.prior_weight;
            let mut sum = 0.0;
            for (p, &m) in priors.iter_mut().zip(moves) {
                let net = if p.is_finite() { p.max(0.0) } else { 0.0 };
                *p = net * (w * Knowledge::capture_logit(pos, m)).exp();
                sum += *p;
            }
            if sum > 0.0 && sum.is_finite() {
                priors.iter_mut().for_each(|p| *p /= sum);
            } else {
                Knowledge::capture_prior(pos, moves, priors);
            }
        } else if self.prior_weight > 0.0 && !moves.is_empty() {
            let sum: f32 = priors.iter().map(|p| p.max(0.0)).sum();
            let inv = if sum > 0.0 && sum.is_finite() { 1.0 / sum } else { 0.0 };
            let uniform = 1.0 / moves.len() as f32;
            let mut heur = vec![0.0f32; moves.len()];
            Knowledge::capture_prior(pos, moves, &mut heur);
            let w = self.prior_weight;
            for (p, h) in priors.iter_mut().zip(&heur) {
                let net = if inv > 0.0 { p.max(0.0) * inv } else { uniform };
                *p = (1.0 - w) * net + w * h;
            }
        }
        if self.value_weight > 0.0 {
            let w = self.value_weight;
            let m = self.material_value(pos);
            let v = (1.0 - w) * value.value + w * m;
            // W = (1 - D + v) / 2 and L = (1 - D - v) / 2 stay in [0, 1].
            LeafValue { value: v, draw: ((1.0 - w) * value.draw).min(1.0 - v.abs()) }
        } else {
            value
        }
    }

    /// A complete no-network evaluator: the capture prior and the material value blended over
    /// uniform priors and a value of 0 with this blend's weights.
    pub fn evaluate(&self, state: &VariantGame, moves: &[Move], priors: &mut [f32]) -> LeafValue {
        let u = 1.0 / moves.len().max(1) as f32;
        priors.iter_mut().for_each(|p| *p = u);
        self.apply(state, moves, priors, LeafValue::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vzero_rules::Variant;

    fn game(fen: &str) -> VariantGame {
        VariantGame::new(Position::from_fen(Variant::builtin("empire").unwrap(), fen).unwrap())
    }

    #[test]
    fn schedule_anneals_linearly_to_zero() {
        let s = Knowledge { value_weight: 0.5, prior_weight: 0.2, anneal_steps: 1000, ..Knowledge::default() };
        assert_eq!(s.at(0).value_weight, 0.5);
        assert!((s.at(500).value_weight - 0.25).abs() < 1e-6);
        assert!((s.at(500).prior_weight - 0.1).abs() < 1e-6);
        assert_eq!(s.at(1000).value_weight, 0.0);
        assert_eq!(s.at(5000).prior_weight, 0.0);
        assert!(!s.at(1000).is_active());
        let never = Knowledge { anneal_steps: 0, ..s };
        assert_eq!(never.at(1_000_000).value_weight, 0.5);
    }

    #[test]
    fn a_release_zeroes_its_weight_and_keeps_the_other() {
        let k = Knowledge { value_weight: 0.5, prior_weight: 1.0, anneal_steps: 1000, ..Knowledge::default() };
        assert_eq!(BlendRelease::default().apply(k.at(100)), k.at(100));
        let p = BlendRelease { prior_step: Some(50), value_step: None }.apply(k.at(100));
        assert_eq!(p.prior_weight, 0.0);
        assert!((p.value_weight - 0.45).abs() < 1e-6);
        assert!(p.is_active());
        let both = BlendRelease { prior_step: Some(50), value_step: Some(80) }.apply(k.at(100));
        assert!(!both.is_active());
    }

    #[test]
    fn value_mix_is_linear_in_the_weight() {
        // White is a rook up.
        let g = game("7k/8/8/8/8/8/8/K5R1 w - - 0 1");
        let net = LeafValue { value: -0.2, draw: 0.4 };
        let m = Knowledge { value_weight: 1.0, ..Knowledge::default() }.material_value(g.position());
        assert!((m - (5.0f32 / 4.0).tanh()).abs() < 1e-5, "material value {m}");
        for w in [0.0f32, 0.25, 0.5, 1.0] {
            let k = Knowledge { value_weight: w, ..Knowledge::default() };
            let mut pri = vec![1.0; 3];
            let v = k.apply(&g, &[Move::PASS; 3], &mut pri, net);
            assert!((v.value - ((1.0 - w) * net.value + w * m)).abs() < 1e-6);
            assert!((v.draw - ((1.0 - w) * net.draw).min(1.0 - v.value.abs())).abs() < 1e-6);
            let wdl = v.wdl();
            assert!((wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn capture_prior_prefers_valuable_victims() {
        // White knight on e3 can take a rook on d5 or a pawn on f5.
        let g = game("7k/8/8/3r1p2/8/4N3/8/K7 w - - 0 1");
        let pos = g.position();
        let moves = pos.legal_moves();
        let mut pri = vec![0.0; moves.len()];
        let k = Knowledge { prior_weight: 1.0, ..Knowledge::default() };
        k.apply(&g, &moves, &mut pri, LeafValue::default());
        assert!((pri.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        let p = |uci: &str| pri[moves.iter().position(|&m| pos.uci(m) == uci).unwrap()];
        assert!(p("e3d5") > p("e3f5") && p("e3f5") > p("a1a2"), "{} {} {}", p("e3d5"), p("e3f5"), p("a1a2"));
        // Weight 0 leaves the network's priors alone.
        let mut net = vec![1.0; moves.len()];
        Knowledge::default().apply(&g, &moves, &mut net, LeafValue::default());
        assert!(net.iter().all(|&x| x == 1.0));
    }

    #[test]
    fn a_product_prior_multiplies_the_net_by_the_capture_prior_and_stays() {
        let g = game("7k/8/8/3r1p2/8/4N3/8/K7 w - - 0 1");
        let pos = g.position();
        let moves = pos.legal_moves();
        let n = moves.len();
        let k = Knowledge { prior_weight: 1.0, prior_mode: PriorMode::Product, anneal_steps: 1000, ..Knowledge::default() };
        // A flat network gives exactly the capture prior.
        let mut flat = vec![1.0 / n as f32; n];
        k.apply(&g, &moves, &mut flat, LeafValue::default());
        let mut capture = vec![0.0; n];
        Knowledge::capture_prior(pos, &moves, &mut capture);
        for (a, b) in flat.iter().zip(&capture) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
        // A network that prefers a quiet move keeps that preference relative to other quiet
        // moves and scales each capture by exp(w · victim / 2).
        let at = |uci: &str| moves.iter().position(|&m| pos.uci(m) == uci).unwrap();
        let mut net = vec![1.0; n];
        net[at("a1a2")] = 4.0;
        let mut pri = net.clone();
        k.apply(&g, &moves, &mut pri, LeafValue::default());
        assert!((pri.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!((pri[at("a1a2")] / pri[at("a1b1")] - 4.0).abs() < 1e-4);
        let rook = pos.variant().pieces()[pos.piece_at(Square(35)).unwrap().kind.index()].value;
        assert!((pri[at("e3d5")] / pri[at("a1b1")] - (rook * CAPTURE_PRIOR_GAIN).exp()).abs() < 1e-3);
        // The anneal and a released switch leave a product prior's weight alone.
        assert_eq!(k.at(500).prior_weight, 1.0);
        assert_eq!(k.at(5000).prior_weight, 1.0);
        let released = BlendRelease { prior_step: Some(10), value_step: None }.apply(k.at(100));
        assert_eq!(released.prior_weight, 1.0);
        // The mix still anneals.
        assert_eq!(Knowledge { prior_mode: PriorMode::Mix, ..k }.at(500).prior_weight, 0.5);
    }

    #[test]
    fn validate_names_the_field() {
        assert!(Knowledge::default().validate().is_ok());
        let e = Knowledge { value_weight: 1.5, ..Knowledge::default() }.validate().unwrap_err();
        assert!(e.contains("value_weight"), "{e}");
        let e = Knowledge { scale: 0.0, ..Knowledge::default() }.validate().unwrap_err();
        assert!(e.contains("scale"), "{e}");
    }
}
