//! The `.nnue` file (Fairy-Stockfish's `evaluate_nnue.cpp` `read_parameters`), little endian:
//!
//! ```text
//! u32 version 0x7AF32F20 | u32 hash = FT hash ^ net hash | u32 length | description
//! u32 FT hash 0x5f2348b8 | i16 bias[512] | i16 weight[D][512] | i32 psqt[D][8]
//! 8 × { u32 net hash 0x633376ca | i32 b1[16] i8 w1[16][1024] | i32 b2[32] i8 w2[32][32]
//!       | i32 b3[1] i8 w3[1][32] }
//! ```
//!
//! The file ends right after the last stack (Fairy-Stockfish checks it). `D` is not stored: it
//! is the variant's, so a net read for the wrong variant ends early or has bytes left over.

use crate::error::{NnueError, Result};
use crate::layers::{
    padded_inputs, Affine, FeatureTransformer, LayerStack, HALF_DIMENSIONS, HIDDEN1, HIDDEN2, LAYER_STACKS,
    PSQT_BUCKETS, STACK_INPUTS,
};
use crate::network::Network;
use crate::variant::FsfMapping;
use std::path::Path;

/// File format version.
pub const VERSION: u32 = 0x7AF3_2F20;
/// `HalfKAv2Variants::HashValue`.
pub const FEATURE_SET_HASH: u32 = 0x5F23_4CB8;
/// Hash of the feature transformer: the feature set's hash `^` its 1024 outputs.
pub const FT_HASH: u32 = FEATURE_SET_HASH ^ (STACK_INPUTS as u32);

const fn affine_hash(prev: u32, outputs: u32) -> u32 {
    0xCC03_DAE4u32.wrapping_add(outputs) ^ (prev >> 1) ^ (prev << 31)
}

const fn relu_hash(prev: u32) -> u32 {
    0x538D_24C7u32.wrapping_add(prev)
}

/// Hash of a layer stack (input slice of 1024, then 16, ReLU, 32, ReLU, 1).
pub const NET_HASH: u32 = {
    let slice = 0xEC42_E90Du32 ^ (STACK_INPUTS as u32);
    let h1 = relu_hash(affine_hash(slice, HIDDEN1 as u32));
    let h2 = relu_hash(affine_hash(h1, HIDDEN2 as u32));
    affine_hash(h2, 1)
};

/// The hash in the header: `FT_HASH ^ NET_HASH`.
pub const HEADER_HASH: u32 = FT_HASH ^ NET_HASH;

/// Bytes of one affine layer in the file.
const fn affine_bytes(inputs: usize, outputs: usize) -> usize {
    4 * outputs + outputs * padded_inputs(inputs)
}

/// Bytes of one layer stack, its hash included.
pub const STACK_BYTES: usize =
    4 + affine_bytes(STACK_INPUTS, HIDDEN1) + affine_bytes(HIDDEN1, HIDDEN2) + affine_bytes(HIDDEN2, 1);

/// Bytes per feature: its `i16` weights and `i32` PSQT weights.
pub const BYTES_PER_FEATURE: usize = 2 * HALF_DIMENSIONS + 4 * PSQT_BUCKETS;

/// Size of a `.nnue` file with `dims` features and a description of `description_len` bytes:
/// `12 + description + 4 + 1024 + 1056 · D + 8 · 17640`.
pub const fn file_size(dims: usize, description_len: usize) -> usize {
    12 + description_len + 4 + 2 * HALF_DIMENSIONS + BYTES_PER_FEATURE * dims + LAYER_STACKS * STACK_BYTES
}

/// The file's bytes.
pub fn encode(net: &Network) -> Vec<u8> {
    let ft = net.feature_transformer();
    let mut b = Vec::with_capacity(file_size(ft.dimensions(), net.description().len()));
    let u32le = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
    u32le(&mut b, VERSION);
    u32le(&mut b, HEADER_HASH);
    u32le(&mut b, net.description().len() as u32);
    b.extend_from_slice(net.description());
    u32le(&mut b, FT_HASH);
    b.extend(ft.biases().iter().flat_map(|v| v.to_le_bytes()));
    b.extend(ft.weights().iter().flat_map(|v| v.to_le_bytes()));
    b.extend(ft.psqt().iter().flat_map(|v| v.to_le_bytes()));
    for s in net.stacks() {
        u32le(&mut b, NET_HASH);
        for a in [s.hidden1(), s.hidden2(), s.output()] {
            b.extend(a.biases().iter().flat_map(|v| v.to_le_bytes()));
            b.extend(a.weights().iter().map(|&v| v as u8));
        }
    }
    b
}

/// A cursor over the file that names the part it reads in errors.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        s
    }
    fn u32(&mut self) -> u32 {
        let s = self.take(4);
        u32::from_le_bytes([s[0], s[1], s[2], s[3]])
    }
    fn i16s(&mut self, n: usize) -> Vec<i16> {
        self.take(2 * n).chunks_exact(2).map(|c| i16::from_le_bytes([c[0], c[1]])).collect()
    }
    fn i32s(&mut self, n: usize) -> Vec<i32> {
        self.take(4 * n).chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }
    fn i8s(&mut self, n: usize) -> Vec<i8> {
        self.take(n).iter().map(|&v| v as i8).collect()
    }
}

/// The parts of a file in order, with their sizes (for naming where a short file ends).
fn parts(dims: usize, description_len: usize) -> Vec<(String, usize)> {
    let mut p = vec![
        ("the header".to_string(), 12),
        ("the description".to_string(), description_len),
        ("the feature transformer hash".to_string(), 4),
        ("the feature transformer biases".to_string(), 2 * HALF_DIMENSIONS),
        (format!("the feature transformer weights ({dims} rows)"), 2 * HALF_DIMENSIONS * dims),
        (format!("the PSQT weights ({dims} rows)"), 4 * PSQT_BUCKETS * dims),
    ];
    for k in 0..LAYER_STACKS {
        p.push((format!("layer stack {k}"), STACK_BYTES));
    }
    p
}

/// Reads a net for `mapping`'s variant from the file's bytes; `source_name` names the file in
/// errors. Refuses a wrong version or hash, a short file and one with bytes left over.
pub fn decode(bytes: &[u8], mapping: &FsfMapping, source_name: &str) -> Result<Network> {
    let dims = mapping.dimensions();
    let len = bytes.len();
    let truncated = |description_len: usize| {
        let mut end = 0;
        let part = parts(dims, description_len)
            .into_iter()
            .find(|(_, size)| {
                end += size;
                end > len
            })
            .map(|p| p.0)
            .unwrap_or_default();
        NnueError::Truncated {
            source_name: source_name.to_string(),
            part,
            len: len as u64,
            variant: mapping.name().to_string(),
            expected: file_size(dims, description_len) as u64,
            hint: size_hint(len, description_len),
        }
    };
    if len < 12 {
        return Err(truncated(0));
    }
    let mut r = Reader { bytes, at: 0 };
    let version = r.u32();
    if version != VERSION {
        return Err(NnueError::Version { source_name: source_name.to_string(), found: version, expected: VERSION });
    }
    let hash_error = |part: &str, found: u32, expected: u32| NnueError::Hash {
        source_name: source_name.to_string(),
        part: part.to_string(),
        found,
        expected,
    };
    let hash = r.u32();
    if hash != HEADER_HASH {
        return Err(hash_error("network", hash, HEADER_HASH));
    }
    let description_len = r.u32() as usize;
    let expected = file_size(dims, description_len);
    if len < 12 + description_len + 4 {
        return Err(truncated(description_len));
    }
    let description = r.take(description_len).to_vec();
    let ft_hash = r.u32();
    if ft_hash != FT_HASH {
        return Err(hash_error("feature transformer", ft_hash, FT_HASH));
    }
    if len < expected {
        return Err(truncated(description_len));
    }
    if len > expected {
        return Err(NnueError::TrailingBytes {
            source_name: source_name.to_string(),
            extra: (len - expected) as u64,
            variant: mapping.name().to_string(),
            dims,
            expected: expected as u64,
            hint: size_hint(len, description_len),
        });
    }
    let biases = r.i16s(HALF_DIMENSIONS);
    let weights = r.i16s(HALF_DIMENSIONS * dims);
    let psqt = r.i32s(PSQT_BUCKETS * dims);
    let ft = FeatureTransformer::new(dims, biases, weights, psqt)?;
    let mut stacks = Vec::with_capacity(LAYER_STACKS);
    for k in 0..LAYER_STACKS {
        let h = r.u32();
        if h != NET_HASH {
            return Err(hash_error(&format!("layer stack {k}"), h, NET_HASH));
        }
        let mut layer = |inputs: usize, outputs: usize| {
            let b = r.i32s(outputs);
            let w = r.i8s(outputs * padded_inputs(inputs));
            Affine::new(inputs, outputs, b, w)
        };
        let h1 = layer(STACK_INPUTS, HIDDEN1)?;
        let h2 = layer(HIDDEN1, HIDDEN2)?;
        let out = layer(HIDDEN2, 1)?;
        stacks.push(LayerStack::new(h1, h2, out)?);
    }
    Network::new(description, ft, stacks)
}

/// What a file's length fits: "; its length fits a net of N features (shogun)" or empty.
fn size_hint(len: usize, description_len: usize) -> String {
    let fixed = file_size(0, description_len);
    let dims = len.saturating_sub(fixed) / BYTES_PER_FEATURE;
    if file_size(dims, description_len) != len {
        return String::new();
    }
    let names: Vec<&str> = crate::variant::builtin_names()
        .filter(|n| {
            vzero_rules::Variant::builtin(n)
                .ok()
                .and_then(|v| FsfMapping::for_variant(v).ok())
                .is_some_and(|m| m.dimensions() == dims)
        })
        .collect();
    let who = if names.is_empty() { String::new() } else { format!(": a net for {}", names.join(" or ")) };
    format!("; its length fits a net of {dims} features{who}")
}

/// Reads a `.nnue` file for `mapping`'s variant.
pub fn read_file(path: &Path, mapping: &FsfMapping) -> Result<Network> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|io| NnueError::Io { path: name.clone(), io })?;
    decode(&bytes, mapping, &name)
}

/// Writes `net` to `path` atomically ([`vzero_base::write_atomic`]).
pub fn write_file(path: &Path, net: &Network) -> Result<()> {
    Ok(vzero_base::write_atomic(path, &encode(net))?)
}
