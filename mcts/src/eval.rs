//! What an evaluator returns for a leaf, and a zero-cost stub evaluator.

/// Value of a leaf for its player to move, as produced by an evaluator (or a terminal result).
///
/// `value` is W - L in [-1, 1]; `draw` is the draw probability D (0 when unknown).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LeafValue {
    /// Expected outcome W - L for the leaf's player to move, in [-1, 1].
    pub value: f32,
    /// Draw probability in [0, 1] (0 if the evaluator does not predict draws).
    pub draw: f32,
}

impl LeafValue {
    /// A scalar value with no draw information.
    pub fn scalar(value: f32) -> Self {
        LeafValue { value, draw: 0.0 }
    }

    /// From win/draw/loss probabilities for the leaf's player to move (need not be normalized).
    pub fn from_wdl(win: f32, draw: f32, loss: f32) -> Self {
        let s = win + draw + loss;
        if s > 0.0 && s.is_finite() {
            LeafValue { value: (win - loss) / s, draw: draw / s }
        } else {
            LeafValue::default()
        }
    }

    /// Win/draw/loss probabilities implied by `value` and `draw`.
    pub fn wdl(&self) -> [f32; 3] {
        let w = ((1.0 - self.draw + self.value) * 0.5).clamp(0.0, 1.0);
        let l = ((1.0 - self.draw - self.value) * 0.5).clamp(0.0, 1.0);
        [w, self.draw, l]
    }
}

/// Stub evaluator: uniform priors over `moves` and value 0, for tests, benchmarks and
/// searching before any network exists. Usable directly as the closure of [`crate::Search::run`].
pub fn uniform_evaluator<G, M>(_state: &G, moves: &[M], priors: &mut [f32]) -> LeafValue {
    let p = 1.0 / moves.len().max(1) as f32;
    priors.iter_mut().for_each(|x| *x = p);
    LeafValue::default()
}
