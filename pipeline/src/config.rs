//! Training-run configuration: one TOML file with the variant, the network shape and the
//! `[selfplay]` and `[learn]` settings. Each variant has an embedded small CPU default
//! (`configs/<variant>.toml`) and a larger GPU profile (`configs/<variant>-gpu.toml`).

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use vzero_arena::GauntletConfig;
use vzero_model::{AuxHeads, DeviceChoice, NetConfig};
use vzero_selfplay::SelfplayConfig;
use vzero_trainer::LearnConfig;

/// Embedded configs, by name.
pub const EMBEDDED: &[(&str, &str)] = &[
    ("empire", include_str!("../../configs/empire.toml")),
    ("shogun", include_str!("../../configs/shogun.toml")),
    ("spqr", include_str!("../../configs/spqr.toml")),
    ("empire-faceoff", include_str!("../../configs/empire-faceoff.toml")),
    ("shogun-auto", include_str!("../../configs/shogun-auto.toml")),
    ("empire-gpu", include_str!("../../configs/empire-gpu.toml")),
    ("shogun-gpu", include_str!("../../configs/shogun-gpu.toml")),
    ("spqr-gpu", include_str!("../../configs/spqr-gpu.toml")),
    ("empire-faceoff-gpu", include_str!("../../configs/empire-faceoff-gpu.toml")),
    ("shogun-auto-gpu", include_str!("../../configs/shogun-auto-gpu.toml")),
];

/// Network shape, and which auxiliary training heads it has (KataGo-style extra targets that
/// cost nothing at play time; all off by default; loss weights in `[learn]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetShape {
    /// Residual blocks.
    pub blocks: usize,
    /// Trunk channels.
    pub channels: usize,
    /// Opponent-reply policy head: predicts the next searched position's policy target.
    #[serde(default, skip_serializing_if = "is_false")]
    pub opponent_policy: bool,
    /// Soft policy head: predicts the policy target to the power 1/4, renormalised.
    #[serde(default, skip_serializing_if = "is_false")]
    pub soft_policy: bool,
    /// Short-term value heads, one per horizon of `[selfplay] short_term_horizons`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub short_term_value: bool,
    /// Material head: predicts the quiescent material balance of the position.
    #[serde(default, skip_serializing_if = "is_false")]
    pub material: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A whole training run's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Variant name or definition file.
    pub variant: String,
    /// `auto`, `cpu`, `cuda` or `cuda:N`.
    #[serde(default = "auto")]
    pub device: String,
    /// Network shape.
    pub net: NetShape,
    /// Self-play settings.
    #[serde(default)]
    pub selfplay: SelfplayConfig,
    /// Trainer settings.
    pub learn: LearnConfig,
    /// Gauntlet of new checkpoints against baselines (off when absent).
    #[serde(default, skip_serializing_if = "gauntlet_off")]
    pub gauntlet: GauntletConfig,
    /// The measured switch of the knowledge blend (off when absent; see [`crate::switch`]).
    #[serde(default, skip_serializing_if = "switch_off")]
    pub switch: crate::switch::SwitchConfig,
    /// Teacher workers beside self-play (`vzero train` only; none when absent): they label
    /// positions of the newest games, mixed into training by `[learn.external]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teacher: Option<crate::teachers::TeacherConfig>,
    /// Object storage for `s3://` runs: endpoint, region, plain HTTP, cache directory
    /// (credentials come from the environment only). Each field left out falls back to the
    /// environment (`AWS_ENDPOINT`, `AWS_REGION`, `AWS_ALLOW_HTTP`, `VZERO_CACHE`).
    #[serde(default, skip_serializing_if = "storage_unset")]
    pub storage: vzero_data::StorageOptions,
}

fn storage_unset(s: &vzero_data::StorageOptions) -> bool {
    *s == vzero_data::StorageOptions::default()
}

fn switch_off(s: &crate::switch::SwitchConfig) -> bool {
    *s == crate::switch::SwitchConfig::default()
}

fn gauntlet_off(g: &GauntletConfig) -> bool {
    *g == GauntletConfig::default()
}

fn auto() -> String {
    "auto".into()
}

impl RunConfig {
    /// Parses and validates a config; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<RunConfig> {
        let cfg: RunConfig = toml::from_str(text).map_err(|e| anyhow::anyhow!("{source}: {}", vzero_rules::toml_error::describe_toml_error(text, &e)))?;
        cfg.validate().with_context(|| format!("{source}: invalid config"))?;
        Ok(cfg)
    }

    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<RunConfig> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        RunConfig::parse(&text, &path.display().to_string())
    }

    /// The embedded default of a variant (or any embedded name such as `empire-gpu`).
    pub fn embedded(name: &str) -> Result<RunConfig> {
        match EMBEDDED.iter().find(|(n, _)| *n == name) {
            Some((n, text)) => RunConfig::parse(text, &format!("embedded config '{n}'")),
            None => bail!(
                "no embedded config for '{name}' (known: {})",
                EMBEDDED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// Checks every section.
    pub fn validate(&self) -> Result<()> {
        vzero_rules::Variant::load(&self.variant).context("variant")?;
        self.device.parse::<DeviceChoice>().map_err(|e| anyhow::anyhow!("device: {e}"))?;
        if !(1..=64).contains(&self.net.blocks) || !(1..=1024).contains(&self.net.channels) {
            bail!("net: blocks must be 1..=64 and channels 1..=1024, got {} x {}", self.net.blocks, self.net.channels);
        }
        self.selfplay.validate().map_err(anyhow::Error::msg)?;
        self.learn.validate()?;
        self.gauntlet.validate()?;
        self.switch.validate()?;
        if let Some(t) = &self.teacher {
            t.validate()?;
        }
        Ok(())
    }

    /// The network of this run for `variant`: its shape with the variant's encoding and policy
    /// map, and the auxiliary heads switched on in `[net]` (short-term horizons from
    /// `[selfplay]`).
    pub fn net_config(&self, variant: vzero_rules::Variant) -> Result<NetConfig> {
        let n = &self.net;
        let aux = AuxHeads {
            opponent_policy: n.opponent_policy,
            soft_policy: n.soft_policy,
            short_term_horizons: if n.short_term_value { self.selfplay.short_term_horizons.clone() } else { Vec::new() },
            material: n.material,
        };
        Ok(NetConfig { aux, ..vzero_model::net_config(variant, n.blocks, n.channels)? })
    }

    /// The config as TOML.
    pub fn to_toml(&self) -> Result<String> {
        Ok(toml::to_string_pretty(self)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_config_is_valid() {
        for (name, _) in EMBEDDED {
            let cfg = RunConfig::embedded(name).unwrap();
            assert!(name.starts_with(&cfg.variant), "{name}");
            let again = RunConfig::parse(&cfg.to_toml().unwrap(), "round trip").unwrap();
            assert_eq!(again, cfg);
        }
    }

    /// Every config the repository publishes (the variants' profiles, the test profile and the
    /// ablation arms that docs/strength.md gives commands for) parses, validates and, where it
    /// starts games from a book, names a book that exists and reads: a user copying a command
    /// from the docs must not meet a config that the code has since outgrown.
    #[test]
    fn every_published_config_is_valid() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let mut seen = 0;
        for dir in ["configs", "configs/tests", "docs/ablations"] {
            let mut paths: Vec<_> = std::fs::read_dir(root.join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
            paths.retain(|p| p.extension().is_some_and(|x| x == "toml"));
            paths.sort();
            assert!(!paths.is_empty(), "{dir}: no configs");
            for path in paths {
                let cfg = RunConfig::load(&path).unwrap_or_else(|e| panic!("{e:#}"));
                let variant = vzero_rules::Variant::load(&cfg.variant).unwrap();
                if let Some(book) = &cfg.selfplay.start_book {
                    // Books are named from the repository root, where the documented commands run.
                    let selfplay = SelfplayConfig { start_book: Some(root.join(book).display().to_string()), ..cfg.selfplay.clone() };
                    let lines = selfplay.start_lines(variant).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
                    assert!(!lines.is_empty(), "{}: empty start book", path.display());
                }
                seen += 1;
            }
        }
        assert!(seen >= 20, "only {seen} configs found");
    }

    #[test]
    fn gpu_profiles_feed_their_learner_early_and_rate_checkpoints() {
        // docs/gpu.md, run 1: 8 workers each writing a chunk per 20,000 rows (160,000 rows before
        // all had written once) and min_rows = 50,000 left the learner without a step for the
        // 3 minutes of the H200 run. Every GPU profile starts training once each worker has
        // written a chunk, and that takes at most 50,000 rows in all.
        for (name, _) in EMBEDDED.iter().filter(|(n, _)| n.ends_with("-gpu")) {
            let cfg = RunConfig::embedded(name).unwrap();
            let first_chunks = cfg.selfplay.workers * cfg.selfplay.rows_per_chunk;
            assert!(first_chunks <= 50_000, "{name}: {first_chunks} rows before every worker wrote a chunk");
            assert!(cfg.learn.min_rows <= first_chunks, "{name}: min_rows {} > {first_chunks}", cfg.learn.min_rows);
            assert_eq!(cfg.device, "cuda", "{name}");
            assert!(cfg.gauntlet.every > 0, "{name}: no gauntlet");
        }
    }

    #[test]
    fn aux_heads_are_switched_in_net_with_horizons_from_selfplay() {
        let variant = vzero_rules::Variant::builtin("empire").unwrap();
        let cfg = RunConfig::embedded("empire").unwrap();
        assert!(cfg.net_config(variant).unwrap().aux.is_none(), "off by default");
        let text = EMBEDDED[0].1
            .replace("channels = 32", "channels = 32\nopponent_policy = true\nsoft_policy = true\nshort_term_value = true\nmaterial = true")
            .replace("[selfplay]", "[selfplay]\nshort_term_horizons = [4, 12, 40]")
            .replace("[learn]", "[learn]\nsoft_policy_weight = 2.0");
        let cfg = RunConfig::parse(&text, "aux.toml").unwrap();
        let net = cfg.net_config(variant).unwrap();
        assert_eq!(net.aux, AuxHeads::all(vec![4, 12, 40]));
        assert_eq!(cfg.learn.soft_policy_weight, 2.0);
        assert_eq!(RunConfig::parse(&cfg.to_toml().unwrap(), "round trip").unwrap(), cfg);
        // Off heads are not written back (stored configs stay as they were).
        let stored = RunConfig::embedded("empire").unwrap().to_toml().unwrap();
        assert!(!stored.contains("\nmaterial =") && !stored.contains("opponent_policy ="), "{stored}");
        for (text, needle) in [
            (text.replace("[4, 12, 40]", "[4, 4]"), "selfplay.short_term_horizons"),
            (text.replace("[4, 12, 40]", "[]"), "selfplay.short_term_horizons"),
            (text.replace("soft_policy_weight = 2.0", "soft_policy_weight = -2.0"), "learn.soft_policy_weight"),
            (text.replace("material = true", "material = 1"), "material"),
        ] {
            let e = format!("{:#}", RunConfig::parse(&text, "aux.toml").unwrap_err());
            assert!(e.contains(needle), "{needle}: {e}");
        }
    }

    #[test]
    fn broken_configs_name_the_problem() {
        let good = EMBEDDED[0].1;
        for (text, needle) in [
            (good.replace("blocks = 4", "blocks = 0"), "blocks"),
            (good.replace("variant = \"empire\"", "variant = \"nope\""), "nope"),
            (good.replace("full_sims = 64", "full_sims = 0"), "full_sims"),
            (good.replace("batch_size = 256", "batch_size = 0"), "batch_size"),
            (good.replace("[net]", "[nett]"), "nett"),
            (good.replace("lr = 0.02", "lr = \"fast\""), "lr"),
            (good.replace("device = \"auto\"", "device = \"tpu\""), "tpu"),
            (good.replace("[gauntlet]", "[gauntlet]\nwhen = 3"), "when"),
            (good.replace("games = 6", "games = 0"), "gauntlet.games"),
            (good.replace("spec = \"fsf:nodes=1000\"", "spec = \"alphabeta:x\""), "teacher.spec"),
            (good.replace("fallback = \"off\"", "fallback = \"of\""), "teacher.fallback"),
            (format!("{good}\n[switch]\nevery = 5\ngames = 1\n"), "switch.games"),
            (good.replace("workers = 1               #", "workers = 0 #"), "teacher.workers"),
            (good.replace("batch = 512", "batch = 512\nthreads = 1"), "threads"),
        ] {
            let e = format!("{:#}", RunConfig::parse(&text, "test.toml").unwrap_err());
            assert!(e.contains("test.toml") && e.contains(needle), "{needle}: {e}");
        }
    }
}
