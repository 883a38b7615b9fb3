//! The training loop.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use tch::{Device, Kind};
use vzero_base::now_unix;
use vzero_data::lease::DEFAULT_TTL;
use vzero_data::{checkpoint_name, ChunkExpect, Lease, ReplayWindow, RowBlock, RunDir, WindowConfig};
use vzero_encoding::{InputEncoder, MoveEncoder, ENCODING_VERSION};
use vzero_model::checkpoint::{self, Expected};
use vzero_model::{AuxTargets, Losses, ModelError, Model, NetConfig, Optimizer, PolicyBias, PolicyTargets, TrainBatch, TrainConfig, Trainer};
use vzero_mcts::{BlendPart, BlendRelease, Knowledge, PriorMode, CAPTURE_PRIOR_GAIN};
use vzero_rules::Variant;

use crate::config::LearnConfig;
use crate::metrics::{
    append_metrics, aux_loss, aux_loss_columns, draw_plot, metrics_has_external, read_metrics, rewrite_metrics, MetricsRow, EXTERNAL_COLUMNS,
};
use crate::tensorboard::LearnerEvents;

/// Why [`Learner::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// `keep_going()` returned false.
    Stopped,
    /// Fewer than `min_rows` rows, or the reuse cap is reached: generate more data and call
    /// `run` again.
    NeedData,
}

/// Passed to the progress callback after each step (and once when waiting for data).
#[derive(Clone, Debug, Default)]
pub struct LearnStatus {
    pub step: u64,
    pub generation: u64,
    pub samples_seen: u64,
    pub total_rows: u64,
    pub window_rows: u64,
    /// Losses of the last step.
    pub losses: Losses,
    pub lr: f64,
    /// Over the last metrics interval.
    pub samples_per_s: f64,
    /// Samples still allowed by the reuse cap before new data is needed.
    pub budget: u64,
    /// Name of the newest published checkpoint.
    pub network: String,
}

#[derive(Clone, Debug)]
pub struct LearnSummary {
    pub stop: StopReason,
    /// Steps taken in this call.
    pub steps: u64,
    pub samples: u64,
    /// Wall time of this call.
    pub seconds: f64,
    /// `samples / seconds` for this call (includes sampling, logging and publishing).
    pub samples_per_s: f64,
    pub step: u64,
    pub generation: u64,
    /// Checkpoints published in this call (names).
    pub published: Vec<String>,
    pub last_losses: Losses,
}

/// Owns the model, optimizer, replay window and run bookkeeping of one learner process (one
/// per run directory).
pub struct Learner {
    rules_variant: Variant,
    run: RunDir,
    net: NetConfig,
    cfg: LearnConfig,
    model: Model,
    trainer: Trainer,
    window: ReplayWindow,
    step: u64,
    samples_seen: u64,
    generation: u64,
    network: String,
    published_step: u64,
    history: Vec<MetricsRow>,
    batch: RowBlock,
    policy: PolicyTargets,
    /// Opponent-reply policy targets of the batch (filled only with that head).
    opponent: PolicyTargets,
    /// The metrics.csv columns of the network's auxiliary losses.
    aux_columns: Vec<&'static str>,
    /// The run's learner lease: held from `open` to drop; checked before each write.
    lease: Lease,
    /// This process's TensorBoard event file (each metrics row, gauntlet Elo).
    events: LearnerEvents,
    /// Parts of the knowledge blend a measured switch released (from the resumed checkpoint
    /// on; [`Learner::release`]).
    release: BlendRelease,
}

/// The losses summed between two metrics rows: total, policy, value, moves-left, then the
/// auxiliary heads' (opponent policy, soft policy, short-term value, material).
fn loss_parts(l: &Losses) -> [f64; 8] {
    [l.total, l.policy, l.value, l.moves_left, l.opponent_policy, l.soft_policy, l.short_term_value, l.material]
}

/// `Losses` from [`loss_parts`] order.
fn losses_from_parts(v: [f64; 8]) -> Losses {
    Losses {
        total: v[0],
        policy: v[1],
        value: v[2],
        moves_left: v[3],
        opponent_policy: v[4],
        soft_policy: v[5],
        short_term_value: v[6],
        material: v[7],
    }
}

/// Rows of the last batch used for the entropy / value-accuracy metrics.
pub const METRICS_ROWS: usize = 64;

/// What this process runs, for the lease record (`vzero learn`).
fn command_line() -> String {
    let mut args = std::env::args();
    let bin = args.next().map(|a| std::path::Path::new(&a).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or(a)).unwrap_or_default();
    let bin = bin.strip_suffix("-torch").unwrap_or(&bin).to_string();
    match args.next() {
        Some(cmd) if !cmd.starts_with('-') => format!("{bin} {cmd}"),
        _ => bin,
    }
}

/// The policy bias a product capture prior asks of training (`[learn.knowledge] prior_mode =
/// "product"`): the searches multiply `exp(w_p · victim / 2)` into the network's policy, so the
/// network learns its logits as a residual over the same bias. None for a mixed prior.
pub fn product_prior_bias(variant: Variant, k: &Knowledge) -> Option<PolicyBias> {
    (k.prior_mode == PriorMode::Product && k.prior_weight > 0.0).then(|| PolicyBias::capture(variant, k.prior_weight * CAPTURE_PRIOR_GAIN))
}

/// Replaces each row's value target by `(1 - ratio) * result + ratio * search value` (as a
/// W/D/L with no draw mass); see [`LearnConfig::value_q_ratio`].
pub fn mix_search_value(batch: &mut RowBlock, ratio: f32) {
    if ratio <= 0.0 {
        return;
    }
    for (wdl, &q) in batch.wdl.iter_mut().zip(&batch.search_value) {
        let q = q.clamp(-1.0, 1.0);
        let target = [(1.0 + q) * 0.5, 0.0, (1.0 - q) * 0.5];
        for (t, s) in wdl.iter_mut().zip(target) {
            *t = (1.0 - ratio) * *t + ratio * s;
        }
    }
}

impl Learner {
    /// Opens the run: resumes from the newest checkpoint in it (step, samples seen, weights;
    /// the optimizer state restarts: momentum rebuilds within a few dozen steps), or creates and
    /// publishes generation 0 from `net` when there is none. The network must fit the variant's
    /// encoding (input planes, board size, policy size) and, when resuming, equal the
    /// checkpoint's config. Also removes temporary files of dead writers and truncates
    /// metrics.csv to the resumed step.
    ///
    /// Takes the run's learner lease first ([`Lease`]): a second learner on the same run, on
    /// disk or on object storage, is refused with an error naming the one that holds it.
    pub fn open(run: &RunDir, variant: Variant, net: &NetConfig, cfg: LearnConfig, device: Device) -> Result<Learner> {
        cfg.validate()?;
        net.validate().context("network config")?;
        let lease = Lease::acquire(run, &command_line(), DEFAULT_TTL)?;
        let inp = InputEncoder::new(variant);
        let mv = MoveEncoder::new(variant);
        let shape = inp.shape();
        if [net.input_planes, net.board_height, net.board_width] != shape {
            bail!(
                "network input {}x{}x{} does not fit variant {}'s encoding {}x{}x{} (planes x ranks x files)",
                net.input_planes, net.board_height, net.board_width, variant.name(), shape[0], shape[1], shape[2]
            );
        }
        if net.policy_size != mv.len() {
            bail!("network policy_size {} does not fit variant {}'s move encoding ({} moves)", net.policy_size, variant.name(), mv.len());
        }
        vzero_model::set_threads(cfg.threads);
        let removed = run.clean_tmp()?;
        if removed > 0 {
            eprintln!("removed {removed} leftover temporary file(s) in {}", run.location());
        }
        let name = variant.name().to_string();
        let mut resumed = None;
        for entry in run.list_checkpoints()?.into_iter().rev() {
            let expected = Expected { net: Some(net), ..vzero_model::expected(variant) };
            if let Err(e) = run.fetch_checkpoint(&entry.path) {
                eprintln!("warning: skipping checkpoint {}: {e}", entry.name());
                continue;
            }
            match checkpoint::load(&entry.path, &expected, device) {
                Ok((model, meta)) => {
                    resumed = Some((model, meta, entry));
                    break;
                }
                Err(e @ (ModelError::Mismatch { .. } | ModelError::WeightsMismatch { .. })) => {
                    return Err(e).with_context(|| format!("cannot resume run {}", run.location()))
                }
                Err(e) => eprintln!("warning: skipping unreadable checkpoint: {e}"),
            }
        }
        let (model, step, samples_seen, generation, network, fresh, release) = match resumed {
            Some((model, meta, entry)) => (model, meta.step, meta.samples_seen, entry.generation, entry.name(), false, meta.release),
            None => {
                let model = vzero_model::fresh_model(variant, net, device, cfg.seed)?;
                (model, 0, 0, 0, checkpoint_name(0, 0), true, BlendRelease::default())
            }
        };
        let opt = match cfg.optimizer.as_str() {
            "adamw" => Optimizer::AdamW { beta1: 0.9, beta2: 0.999, eps: 1e-8 },
            _ => Optimizer::Sgd { momentum: 0.9, nesterov: true },
        };
        let tc = TrainConfig {
            optimizer: opt,
            lr: cfg.lr_at(step),
            weight_decay: cfg.weight_decay,
            loss: cfg.loss_weights(),
            grad_clip_norm: None,
            precision: cfg.precision,
            policy_bias: product_prior_bias(variant, &cfg.knowledge),
        };
        let trainer = Trainer::new(&model, tc)?;
        let expect = ChunkExpect { variant: name.clone(), encoding_version: ENCODING_VERSION, planes: Some(shape), policy_size: Some(mv.len()) };
        let wcfg = WindowConfig { min_rows: cfg.window_min, scale: cfg.window_scale, exponent: cfg.window_exponent };
        let mut window = ReplayWindow::new(run, expect, wcfg, cfg.seed ^ step.wrapping_mul(0x9e37_79b9_7f4a_7c15))?;
        window.set_short_term_horizons(&net.aux.short_term_horizons);
        window.set_external_mix(cfg.external.mix())?;
        window.set_stream(cfg.stream_buffer_rows);
        window.refresh()?;
        let mut aux_columns = aux_loss_columns(&net.aux);
        if window.external_rows() > 0 || metrics_has_external(&run.metrics_csv()) {
            aux_columns.extend(EXTERNAL_COLUMNS);
        }
        let mut history = read_metrics(&run.metrics_csv())?;
        if history.iter().any(|r| r.step > step) {
            history.retain(|r| r.step <= step);
            rewrite_metrics(&run.metrics_csv(), &history, &aux_columns)?;
            run.publish(&run.metrics_csv())?;
        }
        if !history.is_empty() && !metrics_has_external(&run.metrics_csv()) && aux_columns.iter().any(|c| EXTERNAL_COLUMNS.contains(c)) {
            // external rows arrived in a run whose metrics.csv has no columns for them yet
            for r in &mut history {
                r.aux_losses.extend(EXTERNAL_COLUMNS.map(|c| (c, 0.0)));
            }
            rewrite_metrics(&run.metrics_csv(), &history, &aux_columns)?;
            run.publish(&run.metrics_csv())?;
        }
        let mut l = Learner {
            run: run.clone(),
            rules_variant: variant,
            net: net.clone(),
            cfg,
            model,
            trainer,
            window,
            step,
            samples_seen,
            generation,
            network,
            published_step: step,
            history,
            batch: RowBlock::default(),
            policy: PolicyTargets::new(),
            opponent: PolicyTargets::new(),
            aux_columns,
            lease,
            events: LearnerEvents::new(run, step),
            release,
        };
        if fresh {
            l.publish_checkpoint(None)?;
        }
        Ok(l)
    }

    pub fn step(&self) -> u64 {
        self.step
    }

    /// The knowledge blend the next checkpoint records: the config's, annealed to the current
    /// step, less what a switch released.
    pub fn knowledge(&self) -> Knowledge {
        self.release.apply(self.cfg.knowledge.at(self.step))
    }

    /// What measured switches have released so far.
    pub fn released(&self) -> BlendRelease {
        self.release
    }

    /// Releases a part of the blend to the network from the current step on (a no-op for a
    /// part already released): the next checkpoint, and every one after, records its weight
    /// as 0, and self-play searches with it once they load that checkpoint.
    pub fn release(&mut self, part: BlendPart) {
        let slot = match part {
            BlendPart::Prior => &mut self.release.prior_step,
            BlendPart::Value => &mut self.release.value_step,
        };
        slot.get_or_insert(self.step);
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn samples_seen(&self) -> u64 {
        self.samples_seen
    }

    /// Name (file stem) of the newest published checkpoint = network id for self-play.
    pub fn network(&self) -> &str {
        &self.network
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    pub fn config(&self) -> &LearnConfig {
        &self.cfg
    }

    pub fn net_config(&self) -> &NetConfig {
        &self.net
    }

    pub fn window(&self) -> &ReplayWindow {
        &self.window
    }

    /// Attaches a counter of finished self-play games (`vzero train`'s workers): each metrics
    /// row then also logs `selfplay/games_per_s` to the TensorBoard event file.
    pub fn count_games(&mut self, games: impl FnMut() -> u64 + Send + 'static) {
        self.events.count_games(Box::new(games));
    }

    /// Logs a gauntlet's Elo differences `(opponent, elo)` to the TensorBoard event file, as
    /// `elo/<opponent>` at the checkpoint's `step`.
    pub fn log_elo(&mut self, step: u64, elo: &[(String, f64)]) {
        self.events.events().log_elo(step, elo);
    }

    /// Path of the newest published checkpoint's metadata file.
    pub fn checkpoint_path(&self) -> PathBuf {
        self.run.checkpoints_dir().join(format!("{}.json", self.network))
    }

    /// Samples still allowed by the reuse cap (0 below `min_rows`): `max_reuse` per self-play
    /// row plus `external.max_reuse` per external row (imported, labelled), less the samples
    /// already trained on.
    pub fn budget(&self) -> u64 {
        let (total, external) = (self.window.total_rows(), self.window.external_rows());
        if total + external < self.cfg.min_rows {
            return 0;
        }
        let cap = (self.cfg.max_reuse * total as f64 + self.cfg.external.max_reuse * external as f64) as u64;
        cap.saturating_sub(self.samples_seen)
    }

    fn status(&self, losses: Losses, sps: f64) -> LearnStatus {
        LearnStatus {
            step: self.step,
            generation: self.generation,
            samples_seen: self.samples_seen,
            total_rows: self.window.total_rows() as u64,
            window_rows: self.window.window_rows() as u64,
            losses,
            lr: self.trainer.lr(),
            samples_per_s: sps,
            budget: self.budget(),
            network: self.network.clone(),
        }
    }

    /// Publishes the current weights as the next generation (atomic; see vzero-model).
    fn publish_checkpoint(&mut self, parent: Option<String>) -> Result<String> {
        self.lease.check()?;
        let generation = if parent.is_some() { self.generation + 1 } else { self.generation };
        let name = checkpoint_name(generation, self.step);
        let mut info = vzero_model::checkpoint_info(self.rules_variant, self.step, self.samples_seen, parent);
        let knowledge = self.knowledge();
        info.knowledge = knowledge.is_active().then_some(knowledge);
        info.release = self.release;
        let stem = self.run.checkpoints_dir().join(&name);
        checkpoint::save(&self.model, &stem, &info).with_context(|| format!("publishing checkpoint {name}"))?;
        // On object storage: the weights first, the metadata (which makes it a checkpoint) last,
        // each created once (an orphaned weights object of a killed learner is replaced).
        self.run.publish_checkpoint(&stem).with_context(|| format!("publishing checkpoint {name}"))?;
        self.generation = generation;
        self.network = name.clone();
        self.published_step = self.step;
        Ok(name)
    }

    /// Trains while data allows (reuse cap, `min_rows`) and `keep_going()` is true; publishes
    /// a checkpoint every `publish_every` steps and at the end (if it trained since the last
    /// one), appends a metrics.csv row every `log_every` steps and redraws `plots/losses.svg`
    /// at each publish. Calls `progress` after each step. Returns [`StopReason::NeedData`]
    /// when more data is needed (call again later; the window is rescanned at each call and
    /// every `log_every` steps).
    pub fn run(&mut self, keep_going: &dyn Fn() -> bool, progress: &mut dyn FnMut(&LearnStatus)) -> Result<LearnSummary> {
        let start = Instant::now();
        let start_step = self.step;
        let start_samples = self.samples_seen;
        let mut published = Vec::new();
        let bs = self.cfg.batch_size as u64;
        let mut last = Losses::default();
        let (mut acc, mut acc_n) = ([0f64; 8], 0u64);
        let mut interval_start = Instant::now();
        let mut interval_samples = 0u64;
        let mut sps = 0.0;
        self.window.refresh()?;
        let stop = loop {
            if !keep_going() {
                break StopReason::Stopped;
            }
            if self.budget() < bs {
                self.window.refresh()?;
                if self.budget() < bs {
                    progress(&self.status(last, sps));
                    break StopReason::NeedData;
                }
            }
            let lr = self.cfg.lr_at(self.step);
            self.trainer.set_lr(lr);
            self.window.sample_into(self.cfg.batch_size, &mut self.batch)?;
            mix_search_value(&mut self.batch, self.cfg.value_q_ratio as f32);
            self.policy.clear();
            for i in 0..self.batch.len() {
                if self.batch.policy_weight[i] > 0.0 {
                    let (idx, p) = self.batch.policy(i);
                    self.policy.push(idx.iter().copied().zip(p.iter().copied()));
                } else {
                    self.policy.push(std::iter::empty());
                }
            }
            let aux = &self.net.aux;
            if aux.opponent_policy {
                self.opponent.clear();
                for i in 0..self.batch.len() {
                    if self.batch.opponent_weight[i] > 0.0 {
                        let (idx, p) = self.batch.opponent_policy(i);
                        self.opponent.push(idx.iter().copied().zip(p.iter().copied()));
                    } else {
                        self.opponent.push(std::iter::empty());
                    }
                }
            }
            let b = &self.batch;
            let tb = TrainBatch {
                planes: &b.planes,
                globals: None,
                policy: &self.policy,
                wdl: &b.wdl,
                moves_left: Some(&b.moves_left),
                weights: Some(&b.weight),
                aux: AuxTargets {
                    opponent_policy: aux.opponent_policy.then_some(&self.opponent),
                    short_term: (!aux.short_term_horizons.is_empty()).then_some((&b.short_term[..], &b.short_term_weight[..])),
                    material: aux.material.then_some((&b.material[..], &b.material_weight[..])),
                },
            };
            last = self.trainer.step(&self.model, &tb)?;
            self.step += 1;
            self.samples_seen += bs;
            interval_samples += bs;
            for (a, v) in acc.iter_mut().zip(loss_parts(&last)) {
                *a += v;
            }
            acc_n += 1;
            if self.step % self.cfg.log_every == 0 {
                let secs = interval_start.elapsed().as_secs_f64().max(1e-9);
                sps = interval_samples as f64 / secs;
                let (entropy, accuracy) = self.batch_metrics()?;
                let n = acc_n.max(1) as f64;
                let mean = losses_from_parts(acc.map(|a| a / n));
                self.add_external_columns()?;
                let row = MetricsRow {
                    step: self.step,
                    samples: self.samples_seen,
                    generation: self.generation,
                    total_rows: self.window.total_rows() as u64,
                    window_rows: self.window.window_rows() as u64,
                    loss_total: mean.total,
                    loss_policy: mean.policy,
                    loss_value: mean.value,
                    loss_moves_left: mean.moves_left,
                    policy_entropy: entropy,
                    value_accuracy: accuracy,
                    lr,
                    samples_per_s: sps,
                    unix: now_unix(),
                    aux_losses: self
                        .aux_columns
                        .iter()
                        .map(|&c| match c {
                            "external_rows" => (c, self.window.external_rows() as f64),
                            "external_share" => (c, self.window.external_share()),
                            _ => (c, aux_loss(&mean, c)),
                        })
                        .collect(),
                };
                self.lease.check()?;
                append_metrics(&self.run.metrics_csv(), &row)?;
                self.run.publish(&self.run.metrics_csv())?;
                self.events.log_row(&row);
                self.history.push(row);
                acc = [0.0; 8];
                acc_n = 0;
                self.window.refresh()?;
                self.window.retire(vzero_data::Retention::parse(&self.cfg.retention).unwrap_or_default())?;
                interval_start = Instant::now();
                interval_samples = 0;
            }
            if self.step % self.cfg.publish_every == 0 {
                published.push(self.publish()?);
            }
            progress(&self.status(last, sps));
        };
        if self.step > self.published_step {
            published.push(self.publish()?);
        }
        Ok(self.summary(stop, start, start_step, start_samples, published, last))
    }

    /// Adds the `external_rows,external_share` columns to metrics.csv once external rows are in
    /// the window after the learner opened (teacher workers write them while it trains):
    /// earlier rows get 0, and the file is rewritten with the new header.
    fn add_external_columns(&mut self) -> Result<()> {
        if self.window.external_rows() == 0 || self.aux_columns.iter().any(|c| EXTERNAL_COLUMNS.contains(c)) {
            return Ok(());
        }
        self.aux_columns.extend(EXTERNAL_COLUMNS);
        if !self.history.is_empty() {
            for r in &mut self.history {
                r.aux_losses.extend(EXTERNAL_COLUMNS.map(|c| (c, 0.0)));
            }
            self.lease.check()?;
            rewrite_metrics(&self.run.metrics_csv(), &self.history, &self.aux_columns)?;
            self.run.publish(&self.run.metrics_csv())?;
        }
        Ok(())
    }

    /// What a call of `run` did since `start`.
    fn summary(&self, stop: StopReason, start: Instant, start_step: u64, start_samples: u64, published: Vec<String>, last: Losses) -> LearnSummary {
        let seconds = start.elapsed().as_secs_f64();
        let samples = self.samples_seen - start_samples;
        LearnSummary {
            stop,
            steps: self.step - start_step,
            samples,
            seconds,
            samples_per_s: if seconds > 0.0 { samples as f64 / seconds } else { 0.0 },
            step: self.step,
            generation: self.generation,
            published,
            last_losses: last,
        }
    }

    /// Like [`Learner::run`], but when data runs out it polls the run directory every
    /// `poll` (sleeping in steps of at most 100 ms, checking `keep_going`) and continues, until
    /// `keep_going()` is false. For `vzero learn` next to self-play processes. The summary
    /// covers the whole call (`stop` is always [`StopReason::Stopped`]).
    pub fn run_polling(
        &mut self,
        keep_going: &dyn Fn() -> bool,
        poll: std::time::Duration,
        progress: &mut dyn FnMut(&LearnStatus),
    ) -> Result<LearnSummary> {
        let start = Instant::now();
        let (start_step, start_samples) = (self.step, self.samples_seen);
        let mut published = Vec::new();
        let mut last = Losses::default();
        loop {
            let s = self.run(keep_going, progress)?;
            published.extend(s.published);
            if s.steps > 0 {
                last = s.last_losses;
            }
            if s.stop == StopReason::Stopped {
                break;
            }
            // A timed poll, not a channel: the data comes as chunk files from self-play in other
            // processes (or machines), which cannot signal this thread; the short sleeps let
            // `keep_going` (the caller's limits) end the wait.
            let wait = Instant::now();
            while wait.elapsed() < poll && keep_going() {
                std::thread::sleep(std::time::Duration::from_millis(100).min(poll));
            }
            if !keep_going() {
                break;
            }
        }
        Ok(self.summary(StopReason::Stopped, start, start_step, start_samples, published, last))
    }

    /// Publishes a new generation now (unless this step is already published) and redraws the
    /// plot. Returns the name of the newest checkpoint.
    pub fn publish(&mut self) -> Result<String> {
        if self.published_step == self.step {
            return Ok(self.network.clone());
        }
        let parent = Some(self.network.clone());
        let name = self.publish_checkpoint(parent)?;
        if !self.history.is_empty() {
            let plot = self.run.plots_dir().join("losses.svg");
            if let Err(e) = draw_plot(&plot, &self.history).and_then(|_| Ok(self.run.publish(&plot)?)) {
                eprintln!("warning: could not draw {}: {e:#}", plot.display());
            }
        }
        Ok(name)
    }

    /// Policy entropy (nats, mean over rows) and value accuracy of the current network on (at
    /// most the first [`METRICS_ROWS`] rows of) the last sampled batch (eval mode, no grad):
    /// an extra forward pass of <= 64 rows every `log_every` steps.
    fn batch_metrics(&self) -> Result<(f64, f64)> {
        let b = self.batch.len().min(METRICS_ROWS);
        if b == 0 {
            return Ok((0.0, 0.0));
        }
        let (x, g) = self.model.input_tensors(b, &self.batch.planes[..b * self.batch.plane_len], None)?;
        let (entropy, pred) = tch::no_grad(|| {
            let out = self.model.forward_t(&x, g.as_ref(), false);
            let logp = out.policy.log_softmax(-1, Kind::Float);
            let ent = -(logp.exp() * &logp).sum_dim_intlist(1, false, Kind::Float).mean(Kind::Float);
            (ent, out.wdl.argmax(1, false))
        });
        let entropy = f64::try_from(entropy.to_device(Device::Cpu))?;
        let pred = Vec::<i64>::try_from(pred.to_device(Device::Cpu))?;
        let correct = pred
            .iter()
            .zip(&self.batch.wdl)
            .filter(|(&p, t)| {
                let best = (0..3).fold(0, |bi, k| if t[k] > t[bi] { k } else { bi });
                p as usize == best
            })
            .count();
        Ok((entropy, correct as f64 / b as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_value_mix_moves_the_target_expectation_linearly() {
        let mut b = RowBlock::new(1);
        b.wdl = vec![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        b.search_value = vec![-0.5, 0.8, 2.0];
        let before = b.clone();
        mix_search_value(&mut b, 0.0);
        assert_eq!(b, before);
        mix_search_value(&mut b, 0.25);
        for (i, wdl) in b.wdl.iter().enumerate() {
            assert!((wdl.iter().sum::<f32>() - 1.0).abs() < 1e-6);
            let z = before.wdl[i][0] - before.wdl[i][2];
            let q = before.search_value[i].clamp(-1.0, 1.0);
            assert!((wdl[0] - wdl[2] - (0.75 * z + 0.25 * q)).abs() < 1e-6, "row {i}: {wdl:?}");
            assert!((wdl[1] - 0.75 * before.wdl[i][1]).abs() < 1e-6);
        }
    }
}
