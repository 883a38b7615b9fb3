//! Checkpoints: `<stem>.safetensors` (weights, incl. BN running statistics) + `<stem>.json`
//! (metadata), each written atomically (temp file in the same directory, fsync, rename, fsync
//! of the directory). The weights are written first and the metadata records their size and
//! checksum, so a reader that sees a metadata file always finds the matching weights, and a
//! metadata/weights pair from two different saves is detected.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

use vzero_base::clock::civil_date;
use vzero_base::{fnv1a64, write_atomic};
use vzero_mcts::{BlendRelease, Knowledge};

use crate::config::{NetConfig, PolicyHead};
use crate::error::{io_err, ModelError, Result};
use crate::model::Model;

/// Version of the checkpoint file format (this module), not of the encoding.
pub const CHECKPOINT_FORMAT_VERSION: u32 = 1;

/// Contents of `<stem>.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointMeta {
    pub format_version: u32,
    /// Variant name (a checkpoint is never shared between variants).
    pub variant: String,
    /// Version of the position/move encoding the network was trained with.
    pub encoding_version: u32,
    /// Hash of the encoding's exact plane and move-index layout (e.g.
    /// `vzero_encoding::fingerprint(variant)`), when the caller records one.
    #[serde(default)]
    pub encoding_fingerprint: Option<u64>,
    pub net: NetConfig,
    /// Optimizer steps taken so far.
    pub step: u64,
    /// Training samples seen so far.
    pub samples_seen: u64,
    /// Name (file stem) of the checkpoint this one was trained from, if any.
    pub parent: Option<String>,
    /// Creation time, seconds since the Unix epoch, and the same as RFC 3339 UTC.
    pub created_unix: u64,
    pub created_utc: String,
    /// Weights file name (same directory), its size in bytes and FNV-1a 64 checksum (hex).
    pub weights_file: String,
    pub weights_bytes: u64,
    pub weights_fnv1a64: String,
    /// Heuristic knowledge blended into the network's leaf evaluations when it was trained
    /// (annealed weights at `step`); searches with this network use it by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knowledge: Option<Knowledge>,
    /// Parts of the blend a measured switch released to the network (kept by a resumed run).
    #[serde(default, skip_serializing_if = "BlendRelease::is_none")]
    pub release: BlendRelease,
}

/// What the caller provides when saving.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckpointInfo {
    pub variant: String,
    pub encoding_version: u32,
    pub encoding_fingerprint: Option<u64>,
    pub step: u64,
    pub samples_seen: u64,
    pub parent: Option<String>,
    /// Knowledge blend to record (see [`CheckpointMeta::knowledge`]).
    pub knowledge: Option<Knowledge>,
    /// See [`CheckpointMeta::release`].
    pub release: BlendRelease,
}

/// What the caller requires when loading. `net: Some(cfg)` additionally requires the
/// checkpoint's network config to equal `cfg` (e.g. a trainer resuming with a config file);
/// `policy_map: Some(map)` requires a `PolicyHead::Mapped` network with exactly this map
/// (the encoding's current map); `encoding_fingerprint: Some(f)` requires the checkpoint to
/// have recorded exactly this fingerprint.
#[derive(Clone, Copy, Debug)]
pub struct Expected<'a> {
    pub variant: &'a str,
    pub encoding_version: u32,
    pub encoding_fingerprint: Option<u64>,
    pub net: Option<&'a NetConfig>,
    pub policy_map: Option<&'a [u32]>,
}

impl<'a> Expected<'a> {
    /// Requires variant and encoding version only.
    pub fn new(variant: &'a str, encoding_version: u32) -> Self {
        Expected {
            variant,
            encoding_version,
            encoding_fingerprint: None,
            net: None,
            policy_map: None,
        }
    }
}

/// `foo`, `foo.json` and `foo.safetensors` all name the checkpoint with stem `foo`.
pub fn checkpoint_paths(path: &Path) -> (PathBuf, PathBuf) {
    let stem = match path.extension().and_then(|e| e.to_str()) {
        Some("json") | Some("safetensors") => path.with_extension(""),
        _ => path.to_path_buf(),
    };
    let with = |ext: &str| {
        let mut s = stem.clone().into_os_string();
        s.push(".");
        s.push(ext);
        PathBuf::from(s)
    };
    (with("json"), with("safetensors"))
}

/// Saves `model` as `<stem>.safetensors` + `<stem>.json` (both atomic). Returns the metadata.
pub fn save(model: &Model, path: &Path, info: &CheckpointInfo) -> Result<CheckpointMeta> {
    let (meta_path, weights_path) = checkpoint_paths(path);
    let bytes = serialize_weights(model, info)?;
    write_atomic(&weights_path, &bytes)?;
    let now = vzero_base::now_unix();
    let meta = CheckpointMeta {
        format_version: CHECKPOINT_FORMAT_VERSION,
        variant: info.variant.clone(),
        encoding_version: info.encoding_version,
        encoding_fingerprint: info.encoding_fingerprint,
        net: model.config().clone(),
        step: info.step,
        samples_seen: info.samples_seen,
        parent: info.parent.clone(),
        created_unix: now,
        created_utc: rfc3339_utc(now),
        weights_file: weights_path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        weights_bytes: bytes.len() as u64,
        weights_fnv1a64: format!("{:016x}", fnv1a64(&bytes)),
        knowledge: info.knowledge,
        release: info.release,
    };
    let mut json =
        serde_json::to_vec_pretty(&meta).map_err(|e| ModelError::Config(e.to_string()))?;
    json.push(b'\n');
    write_atomic(&meta_path, &json)?;
    Ok(meta)
}

/// Reads and parses `<stem>.json` only (cheap: for listing / polling for new checkpoints).
pub fn read_meta(path: &Path) -> Result<CheckpointMeta> {
    let (meta_path, _) = checkpoint_paths(path);
    let text = fs::read(&meta_path).map_err(io_err(&meta_path))?;
    let meta: CheckpointMeta =
        serde_json::from_slice(&text).map_err(|e| ModelError::CorruptMeta {
            path: meta_path.clone(),
            msg: e.to_string(),
        })?;
    if meta.format_version != CHECKPOINT_FORMAT_VERSION {
        return Err(ModelError::Mismatch {
            path: meta_path,
            what: "checkpoint format version",
            found: meta.format_version.to_string(),
            expected: CHECKPOINT_FORMAT_VERSION.to_string(),
        });
    }
    Ok(meta)
}

/// Checks a checkpoint without loading it: its metadata parses and its weights file is
/// complete and belongs to it (size and checksum). For run checks (`vzero check`).
pub fn verify(path: &Path) -> Result<CheckpointMeta> {
    let meta = read_meta(path)?;
    let (meta_path, _) = checkpoint_paths(path);
    let weights = meta_path.with_file_name(&meta.weights_file);
    read_weights(&weights, Some(&meta))?;
    Ok(meta)
}

/// Loads a checkpoint onto `device` after checking that it is the variant / encoding version
/// (and optionally network config) the caller expects, that the weights file is complete and
/// belongs to this metadata, and that every tensor has the shape the config implies.
pub fn load(path: &Path, expected: &Expected, device: Device) -> Result<(Model, CheckpointMeta)> {
    let (meta_path, _) = checkpoint_paths(path);
    let meta = read_meta(path)?;
    let mismatch = |what, found: String, expected: String| ModelError::Mismatch {
        path: meta_path.clone(),
        what,
        found,
        expected,
    };
    if meta.variant != expected.variant {
        return Err(mismatch(
            "variant",
            format!("'{}'", meta.variant),
            format!("'{}'", expected.variant),
        ));
    }
    if meta.encoding_version != expected.encoding_version {
        return Err(mismatch(
            "encoding version",
            meta.encoding_version.to_string(),
            expected.encoding_version.to_string(),
        ));
    }
    if let Some(want) = expected.encoding_fingerprint {
        if meta.encoding_fingerprint != Some(want) {
            let found = meta
                .encoding_fingerprint
                .map_or("none".to_string(), |f| format!("{f:016x}"));
            return Err(mismatch(
                "encoding fingerprint",
                found,
                format!("{want:016x}"),
            ));
        }
    }
    if let Some(net) = expected.net {
        if *net != meta.net {
            return Err(mismatch(
                "network config",
                "a different network".into(),
                format!("[{}]", net.diff(&meta.net).join("; ")),
            ));
        }
    }
    meta.net.validate().map_err(|e| ModelError::CorruptMeta {
        path: meta_path.clone(),
        msg: e.to_string(),
    })?;
    let weights_path = meta_path.with_file_name(&meta.weights_file);
    let bytes = read_weights(&weights_path, Some(&meta))?;
    let mut model = match meta.net.policy_head {
        PolicyHead::Mapped { .. } => {
            let map = stored_policy_map(&bytes, &weights_path)?;
            Model::with_policy_map(&meta.net, device, &map).map_err(|e| {
                ModelError::WeightsMismatch {
                    path: weights_path.clone(),
                    detail: e.to_string(),
                }
            })?
        }
        _ => Model::new(&meta.net, device)?,
    };
    if let Some(want) = expected.policy_map {
        let have = model.policy_map();
        if have.as_deref() != Some(want) {
            let found = match &have {
                None => "no policy map (not a mapped policy head)".to_string(),
                Some(h) => match h.iter().zip(want).position(|(a, b)| a != b) {
                    Some(i) => format!(
                        "a different map (first difference at move {i}: {} vs {})",
                        h[i], want[i]
                    ),
                    None => format!("a map of {} entries", h.len()),
                },
            };
            return Err(mismatch(
                "policy map",
                found,
                format!("the given map of {} entries", want.len()),
            ));
        }
    }
    copy_weights(&mut model, &bytes, &weights_path)?;
    Ok((model, meta))
}

/// Loads a weights file into an existing model, checking names and shapes (and size/checksum
/// when `meta` is given).
pub fn load_weights(
    model: &mut Model,
    weights_path: &Path,
    meta: Option<&CheckpointMeta>,
) -> Result<()> {
    let bytes = read_weights(weights_path, meta)?;
    copy_weights(model, &bytes, weights_path)
}

/// The `policy.map` tensor of a mapped-head weights file.
fn stored_policy_map(bytes: &[u8], weights_path: &Path) -> Result<Vec<u32>> {
    let corrupt = |msg: String| ModelError::CorruptWeights {
        path: weights_path.to_path_buf(),
        msg,
    };
    let st = SafeTensors::deserialize(bytes).map_err(|e| corrupt(format!("{e:?}")))?;
    let view = st
        .tensor(POLICY_MAP)
        .map_err(|_| ModelError::WeightsMismatch {
            path: weights_path.to_path_buf(),
            detail: format!("mapped policy head but no '{POLICY_MAP}' tensor"),
        })?;
    if view.dtype() != Dtype::I64 {
        return Err(corrupt(format!(
            "{POLICY_MAP}: dtype {:?}, expected I64",
            view.dtype()
        )));
    }
    Ok(view
        .data()
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as u32)
        .collect())
}

const POLICY_MAP: &str = "policy.map";

/// Reads a weights file; checks size and checksum against the metadata when given.
fn read_weights(weights_path: &Path, meta: Option<&CheckpointMeta>) -> Result<Vec<u8>> {
    let corrupt = |msg: String| ModelError::CorruptWeights {
        path: weights_path.to_path_buf(),
        msg,
    };
    let bytes = fs::read(weights_path).map_err(io_err(weights_path))?;
    if let Some(meta) = meta {
        if bytes.len() as u64 != meta.weights_bytes {
            return Err(corrupt(format!(
                "{} bytes, metadata says {} (truncated, or not written by the same save)",
                bytes.len(),
                meta.weights_bytes
            )));
        }
        let sum = format!("{:016x}", fnv1a64(&bytes));
        if sum != meta.weights_fnv1a64 {
            return Err(corrupt(format!(
                "checksum {sum}, metadata says {} (corrupt, or not written by the same save)",
                meta.weights_fnv1a64
            )));
        }
    }
    Ok(bytes)
}

/// Copies every tensor of a safetensors image into the model after checking names, dtypes
/// and shapes (all problems reported at once).
fn copy_weights(model: &mut Model, bytes: &[u8], weights_path: &Path) -> Result<()> {
    let corrupt = |msg: String| ModelError::CorruptWeights {
        path: weights_path.to_path_buf(),
        msg,
    };
    let st = SafeTensors::deserialize(bytes).map_err(|e| corrupt(format!("{e:?}")))?;
    let vars = model.var_store().variables();
    let in_file: BTreeSet<String> = st.names().into_iter().cloned().collect();
    let in_model: BTreeSet<String> = vars.keys().cloned().collect();
    let mut problems = Vec::new();
    let missing: Vec<_> = in_model.difference(&in_file).collect();
    let extra: Vec<_> = in_file.difference(&in_model).collect();
    if !missing.is_empty() {
        problems.push(format!("missing tensors {missing:?}"));
    }
    if !extra.is_empty() {
        problems.push(format!("unexpected tensors {extra:?}"));
    }
    let names: Vec<&String> = in_model.intersection(&in_file).collect();
    for &name in &names {
        let view = st
            .tensor(name)
            .map_err(|e| corrupt(format!("{name}: {e:?}")))?;
        let want: Vec<usize> = vars[name].size().iter().map(|&d| d as usize).collect();
        let want_dtype = dtype_of(vars[name].kind());
        if Some(view.dtype()) != want_dtype {
            problems.push(format!(
                "{name}: dtype {:?}, expected {want_dtype:?}",
                view.dtype()
            ));
        } else if view.shape() != want.as_slice() {
            problems.push(format!(
                "{name}: shape {:?}, expected {:?}",
                view.shape(),
                want
            ));
        }
    }
    if !problems.is_empty() {
        return Err(ModelError::WeightsMismatch {
            path: weights_path.to_path_buf(),
            detail: problems.join("; "),
        });
    }
    model.refold();
    tch::no_grad(|| -> Result<()> {
        for name in names {
            let var = &vars[name];
            let view = st
                .tensor(name)
                .map_err(|e| corrupt(format!("{name}: {e:?}")))?;
            let src = match view.dtype() {
                Dtype::I64 => {
                    let data: Vec<i64> = view
                        .data()
                        .chunks_exact(8)
                        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                        .collect();
                    Tensor::from_slice(&data)
                }
                _ => {
                    let data: Vec<f32> = view
                        .data()
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect();
                    Tensor::from_slice(&data)
                }
            };
            let src = src.view(var.size().as_slice()).to_device(var.device());
            let mut var = var.shallow_clone();
            var.f_copy_(&src)?;
        }
        Ok(())
    })
}

fn serialize_weights(model: &Model, info: &CheckpointInfo) -> Result<Vec<u8>> {
    let vars = model.var_store().variables();
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort();
    let mut host: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::with_capacity(names.len());
    for name in names {
        let t = &vars[name];
        let dtype = dtype_of(t.kind()).ok_or_else(|| {
            ModelError::Config(format!(
                "{name}: only f32/i64 variables can be saved, got {:?}",
                t.kind()
            ))
        })?;
        let shape: Vec<usize> = t.size().iter().map(|&d| d as usize).collect();
        let flat = t.detach().to_device(Device::Cpu).reshape([-1]);
        let bytes: Vec<u8> = match dtype {
            Dtype::I64 => Vec::<i64>::try_from(flat)?
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
            _ => Vec::<f32>::try_from(flat)?
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
        };
        host.push((name.clone(), dtype, shape, bytes));
    }
    let mut views = Vec::with_capacity(host.len());
    for (name, dtype, shape, bytes) in &host {
        let view = TensorView::new(*dtype, shape.clone(), bytes)
            .map_err(|e| ModelError::Config(format!("{name}: {e:?}")))?;
        views.push((name.as_str(), view));
    }
    let header: HashMap<String, String> = [
        ("variant".to_string(), info.variant.clone()),
        (
            "encoding_version".to_string(),
            info.encoding_version.to_string(),
        ),
        (
            "format".to_string(),
            format!("vzero-model/{CHECKPOINT_FORMAT_VERSION}"),
        ),
    ]
    .into_iter()
    .collect();
    safetensors::tensor::serialize(views, &Some(header))
        .map_err(|e| ModelError::Config(format!("serialise weights: {e:?}")))
}

fn dtype_of(kind: Kind) -> Option<Dtype> {
    match kind {
        Kind::Float => Some(Dtype::F32),
        Kind::Int64 => Some(Dtype::I64),
        _ => None,
    }
}


/// Seconds since the epoch -> "YYYY-MM-DDTHH:MM:SSZ" (proleptic Gregorian, UTC).
fn rfc3339_utc(secs: u64) -> String {
    let (y, m, d) = civil_date(secs);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_798_761_599), "2026-12-31T23:59:59Z");
    }

    #[test]
    fn paths() {
        for p in ["a/b", "a/b.json", "a/b.safetensors"] {
            assert_eq!(
                checkpoint_paths(Path::new(p)),
                (PathBuf::from("a/b.json"), PathBuf::from("a/b.safetensors"))
            );
        }
        // a dotted stem keeps its dots
        assert_eq!(
            checkpoint_paths(Path::new("m/s-1.5k")).0,
            PathBuf::from("m/s-1.5k.json")
        );
    }
}
