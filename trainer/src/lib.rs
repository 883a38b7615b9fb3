//! The learner of vzero: samples a KataGo-style growing replay window over the run's HDF5
//! chunks, trains the network with a reuse cap, publishes checkpoints atomically, logs metrics
//! to `metrics.csv` (and to a TensorBoard event file beside it) and draws the loss curves to
//! `plots/losses.svg`.
//!
//! ```text
//! let run = RunDir::create_or_open("runs/x")?;
//! let mut l = Learner::open(&run, variant, &net, LearnConfig::cpu_default(), Device::Cpu)?;
//! let summary = l.run(&|| !stop.load(Relaxed), &mut |s| bar.set_position(s.step))?;
//! ```

mod config;
mod learner;
mod metrics;
pub mod synth;
pub mod tensorboard;

pub use config::{ExternalConfig, LearnConfig, LrSchedule};
pub use learner::{mix_search_value, LearnStatus, LearnSummary, Learner, StopReason};
pub use metrics::{draw_plot, read_metrics, MetricsRow, METRICS_HEADER};
