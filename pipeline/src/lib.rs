//! A vzero training session as a library: what `vzero train`, `vzero selfplay` and `vzero learn`
//! run, without the command line, so that another front end (or a test) can drive a run.
//!
//! ```no_run
//! use vzero_pipeline::{ConfigChoice, Event, Limits, Session};
//! let session = Session::open("runs/e1".as_ref(), &ConfigChoice { variant: Some("empire".into()), ..Default::default() })?;
//! let summary = session.train(&Limits { minutes: Some(5.0), ..Default::default() }, &mut |e| {
//!     if let Event::Gauntlet(g) = e { println!("{}", g.line()) }
//! })?;
//! println!("{} steps, generation {}", summary.steps, summary.generation);
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! * [`RunConfig`]: one TOML file per run (variant, network, `[selfplay]`, `[learn]`,
//!   `[gauntlet]`), embedded defaults per variant, stored in the run directory;
//! * [`Session`]: a run directory with its effective config; [`Session::train`] runs self-play
//!   worker threads and the learner together (with gauntlets every `gauntlet.every`
//!   generations, and [`teachers`] labelling the newest games when the config has a
//!   `[teacher]`, and [`switch`] checks that hand the blend's parts to the network once it
//!   plays better alone), [`Session::selfplay`] and [`Session::learn`] each half alone;
//! * progress, notes and gauntlet results come to the caller as [`Event`]s;
//! * [`nnue`]: Fairy-Stockfish NNUE nets trained on a run's positions, and improved in rounds
//!   with a teacher engine that loads each new net (its own folder, `pipeline/src/nnue/`);
//! * [`RunStatus`]: what a run holds and who works on it (`vzero status`); [`RunCheck`]: its
//!   invariants (`vzero check`).

pub mod check;
mod config;
pub mod nnue;
mod session;
pub mod status;
pub mod switch;
pub mod teachers;

pub use config::{NetShape, RunConfig, EMBEDDED};
pub use check::RunCheck;
pub use status::RunStatus;
pub use teachers::{TeacherConfig, TeacherStats, Teachers};
pub use session::{learn_line, selfplay_line, ConfigChoice, Event, LearnOutcome, Limits, SelfplaySummary, Session, TrainSummary};
