//! Training checkpoints: the float net, Adam's moments and the step, in one file.
//!
//! ```text
//! "VZNNUECK" | u32 version 1 | u32 header length | header (UTF-8, `key=value` lines:
//! variant, dims, factor, step, positions, lambda, lr, beta1, beta2, eps, targets)
//! | 3 × parameters (net, first moments, second moments), each: f32 ft_bias[512]
//!   f32 ft_weight[D + F][512] | f32 psqt[D + F][8] (F = `factor`, the virtual factoriser
//!   rows; 0 and absent from the header in files written before it) | 8 × { l1_weight[16][1024] l1_bias[16]
//!   l2_weight[32][16] l2_bias[32] out_weight[32] out_bias }
//! | u64 checksum (FNV-1a over the 64-bit little-endian words of everything before it)
//! ```
//!
//! All little endian. Written to a temporary file beside the target and renamed, so a reader
//! (or a killed writer) never sees half a checkpoint; the reader refuses a short or long file
//! and a checksum mismatch, naming the file.

use crate::error::{NnueError, Result};
use crate::layers::{HALF_DIMENSIONS, HIDDEN1, HIDDEN2, LAYER_STACKS, PSQT_BUCKETS, STACK_INPUTS};
use crate::network::FloatNetwork;
use crate::train::{AdamConfig, Moments, Trainer};
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"VZNNUECK";
const VERSION: u32 = 1;
/// File extension of checkpoints.
pub const EXTENSION: &str = "vzck";

/// A checkpoint: the trainer and what it was trained on.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// Variant name.
    pub variant: String,
    /// Net, moments, step, positions, Adam settings.
    pub trainer: Trainer,
    /// The lambda trained with.
    pub lambda: f32,
    /// What the targets were, in words (goes into the exported net's description).
    pub targets: String,
}

fn stack_floats() -> usize {
    HIDDEN1 * STACK_INPUTS + HIDDEN1 + HIDDEN2 * HIDDEN1 + HIDDEN2 + HIDDEN2 + 1
}

fn param_floats(dims: usize) -> usize {
    HALF_DIMENSIONS + dims * (HALF_DIMENSIONS + PSQT_BUCKETS) + LAYER_STACKS * stack_floats()
}

/// The size of a checkpoint with `dims` features and a header of `header_len` bytes.
pub fn file_size(dims: usize, header_len: usize) -> usize {
    8 + 4 + 4 + header_len + 3 * 4 * param_floats(dims) + 8
}

struct Hasher {
    h: u64,
    tail: Vec<u8>,
}

impl Hasher {
    fn new() -> Hasher {
        Hasher { h: 0xcbf2_9ce4_8422_2325, tail: Vec::new() }
    }

    fn update(&mut self, mut b: &[u8]) {
        if !self.tail.is_empty() {
            let need = 8 - self.tail.len();
            let k = need.min(b.len());
            self.tail.extend_from_slice(&b[..k]);
            b = &b[k..];
            if self.tail.len() < 8 {
                return;
            }
            let w = u64::from_le_bytes(self.tail[..8].try_into().unwrap());
            self.word(w);
            self.tail.clear();
        }
        let mut c = b.chunks_exact(8);
        for w in &mut c {
            self.word(u64::from_le_bytes(w.try_into().unwrap()));
        }
        self.tail.extend_from_slice(c.remainder());
    }

    #[inline]
    fn word(&mut self, w: u64) {
        self.h = (self.h ^ w).wrapping_mul(0x0000_0100_0000_01b3);
    }

    fn finish(mut self) -> u64 {
        for &b in &std::mem::take(&mut self.tail) {
            self.word(b as u64);
        }
        self.h
    }
}

fn blocks(net: &FloatNetwork) -> Vec<&[f32]> {
    let mut v: Vec<&[f32]> = vec![net.ft_bias(), net.ft_weight(), net.psqt()];
    for s in net.stacks() {
        v.extend([&s.l1_weight[..], &s.l1_bias[..], &s.l2_weight[..], &s.l2_bias[..], &s.out_weight[..]]);
        v.push(std::slice::from_ref(&s.out_bias));
    }
    v
}

fn header(c: &CheckpointRef<'_>) -> String {
    let t = c.trainer;
    format!(
        "variant={}\ndims={}\nfactor={}\nstep={}\npositions={}\nlambda={}\nlr={}\nbeta1={}\nbeta2={}\neps={}\ntargets={}\n",
        c.variant,
        t.net.dimensions(),
        t.net.factor(),
        t.step,
        t.positions,
        c.lambda,
        t.adam.lr,
        t.adam.beta1,
        t.adam.beta2,
        t.adam.eps,
        c.targets.replace('\n', " ")
    )
}

fn io_err(path: &Path, io: std::io::Error) -> NnueError {
    NnueError::Io { path: path.display().to_string(), io }
}

/// What [`save`] writes, borrowed (no copy of the trainer).
#[derive(Clone, Copy, Debug)]
pub struct CheckpointRef<'a> {
    /// Variant name.
    pub variant: &'a str,
    /// Net, moments, step, positions, Adam settings.
    pub trainer: &'a Trainer,
    /// The lambda trained with.
    pub lambda: f32,
    /// What the targets were, in words.
    pub targets: &'a str,
}

/// Writes `c` to `path` atomically (a temporary file in the same folder, then a rename).
pub fn save(path: &Path, c: &Checkpoint) -> Result<()> {
    save_ref(path, &CheckpointRef { variant: &c.variant, trainer: &c.trainer, lambda: c.lambda, targets: &c.targets })
}

/// [`save`] from borrowed parts.
pub fn save_ref(path: &Path, c: &CheckpointRef<'_>) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    Ok(vzero_base::file::write_atomic_with(path, |w| {
        let mut h = Hasher::new();
        let mut put = |w: &mut std::io::BufWriter<std::fs::File>, b: &[u8]| -> std::io::Result<()> {
            h.update(b);
            w.write_all(b)
        };
        let head = header(c);
        put(w, MAGIC)?;
        put(w, &VERSION.to_le_bytes())?;
        put(w, &(head.len() as u32).to_le_bytes())?;
        put(w, head.as_bytes())?;
        let mut buf = Vec::new();
        for net in [&c.trainer.net, &c.trainer.moments.m, &c.trainer.moments.v] {
            for b in blocks(net) {
                for part in b.chunks(1 << 16) {
                    buf.clear();
                    buf.extend(part.iter().flat_map(|x| x.to_le_bytes()));
                    put(w, &buf)?;
                }
            }
        }
        let sum = h.finish();
        w.write_all(&sum.to_le_bytes())
    })?)
}

/// Reads a checkpoint; refuses another format, a truncated or damaged file.
pub fn load(path: &Path) -> Result<Checkpoint> {
    let bytes = std::fs::read(path).map_err(|e| io_err(path, e))?;
    decode(&bytes).map_err(|reason| NnueError::Checkpoint { path: path.display().to_string(), reason })
}

fn decode(b: &[u8]) -> std::result::Result<Checkpoint, String> {
    if b.len() < 16 || &b[..8] != MAGIC {
        return Err("not a vzero NNUE training checkpoint (no VZNNUECK header)".into());
    }
    let version = u32::from_le_bytes(b[8..12].try_into().unwrap());
    if version != VERSION {
        return Err(format!("checkpoint version {version}, this build reads {VERSION}"));
    }
    let hlen = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let head = b.get(16..16 + hlen).ok_or_else(|| format!("truncated: {} bytes, ends inside the header", b.len()))?;
    let head = std::str::from_utf8(head).map_err(|_| "header is not UTF-8".to_string())?;
    let get = |k: &str| -> std::result::Result<&str, String> {
        head.lines()
            .find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix('=')))
            .ok_or_else(|| format!("header has no '{k}'"))
    };
    let num = |k: &str| -> std::result::Result<f64, String> {
        get(k)?.parse::<f64>().map_err(|_| format!("header '{k}' is not a number"))
    };
    let dims = num("dims")? as usize;
    // (checkpoints written before the factoriser have no 'factor': none)
    let factor = if head.lines().any(|l| l.starts_with("factor=")) { num("factor")? as usize } else { 0 };
    let expected = file_size(dims + factor, hlen);
    if b.len() != expected {
        let what = if b.len() < expected { "truncated" } else { "too long" };
        return Err(format!("{what}: {} bytes, a checkpoint with {dims} features and {factor} factoriser rows has {expected}", b.len()));
    }
    let body = &b[..expected - 8];
    let mut h = Hasher::new();
    h.update(body);
    let sum = u64::from_le_bytes(b[expected - 8..].try_into().unwrap());
    if h.finish() != sum {
        return Err("checksum mismatch: the file is damaged".into());
    }
    let mut off = 16 + hlen;
    let mut read_net = || {
        let mut net = FloatNetwork::zeroed_factored(dims, factor);
        let mut fill = |dst: &mut [f32]| {
            let n = dst.len();
            for (d, c) in dst.iter_mut().zip(b[off..off + 4 * n].chunks_exact(4)) {
                *d = f32::from_le_bytes(c.try_into().unwrap());
            }
            off += 4 * dst.len();
        };
        fill(net.ft_bias_mut());
        let (w, p) = net.ft_weight_and_psqt_mut();
        fill(w);
        fill(p);
        for s in net.stacks_mut() {
            fill(&mut s.l1_weight);
            fill(&mut s.l1_bias);
            fill(&mut s.l2_weight);
            fill(&mut s.l2_bias);
            fill(&mut s.out_weight);
            let mut ob = [0f32];
            fill(&mut ob);
            s.out_bias = ob[0];
        }
        net
    };
    let net = read_net();
    let m = read_net();
    let v = read_net();
    let adam = AdamConfig {
        lr: num("lr")? as f32,
        beta1: num("beta1")? as f32,
        beta2: num("beta2")? as f32,
        eps: num("eps")? as f32,
    };
    Ok(Checkpoint {
        variant: get("variant")?.to_string(),
        trainer: Trainer {
            net,
            moments: Moments { m, v },
            step: num("step")? as u64,
            positions: num("positions")? as u64,
            adam,
            threads: 1,
        },
        lambda: num("lambda")? as f32,
        targets: get("targets")?.to_string(),
    })
}

/// The checkpoint file name for a step: `ckpt-000001234.vzck`.
pub fn file_name(step: u64) -> String {
    format!("ckpt-{step:09}.{EXTENSION}")
}

/// The checkpoints in `dir`, by step, oldest first (no folder: none).
pub fn list(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(dir, e)),
    };
    let mut v = Vec::new();
    for e in rd {
        let e = e.map_err(|e| io_err(dir, e))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(step) = name
            .strip_prefix("ckpt-")
            .and_then(|r| r.strip_suffix(&format!(".{EXTENSION}")))
            .and_then(|s| s.parse::<u64>().ok())
        {
            v.push((step, e.path()));
        }
    }
    v.sort();
    Ok(v)
}

/// The newest checkpoint in `dir`, if any.
pub fn latest(dir: &Path) -> Result<Option<PathBuf>> {
    Ok(list(dir)?.pop().map(|(_, p)| p))
}

/// The name Fairy-Stockfish's convention gives a net file: `<variant>-<first 12 hex digits of
/// the file's SHA-256>.nnue`.
pub fn net_file_name(variant: &str, file_bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(file_bytes);
    let hex: String = d.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("{variant}-{hex}.nnue")
}
