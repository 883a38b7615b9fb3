//! Fairy-Stockfish's `HalfKAv2Variants` NNUE, exactly, for vzero variants.
//!
//! Laid out like Stockfish's `nnue/`: [`variant`] maps a vzero variant's pieces to
//! Fairy-Stockfish's piece types (the feature layout follows), [`features`] gives a position's
//! active feature indices and bucket, [`layers`] holds the integer layers and their forward
//! pass, [`format`] reads and writes the `.nnue` file, and [`network`] holds the integer net,
//! the float net a trainer updates and the quantisation between them.
//!
//! ```
//! use vzero_nnue::{format, FsfMapping, Network, Evaluator};
//! use vzero_rules::{Position, Variant};
//! let v = Variant::builtin("empire").unwrap();
//! let mapping = FsfMapping::for_variant(v).unwrap();
//! let eval = Evaluator::new(mapping.clone(), Network::material(&mapping)).unwrap();
//! let e = eval.evaluate(&Position::startpos(v)).unwrap();
//! assert_eq!(e.fsf_line(), "NNUE evaluation        +6.64 (white side)");
//! ```

pub mod checkpoint;
pub mod dataset;
pub mod error;
pub mod features;
pub mod format;
pub mod layers;
pub mod network;
pub mod train;
pub mod variant;

pub use error::{NnueError, Result};
pub use features::{Bucket, FeatureList, FeatureMirror, PositionFeatures, MAX_ACTIVE};
pub use layers::{Accumulator, Arithmetic};
pub use network::{format_pawns, Evaluation, Evaluator, FloatNetwork, FloatStack, Network, NET_TO_INTERNAL};
pub use variant::{FsfMapping, FsfPieceType, PieceMapping};
