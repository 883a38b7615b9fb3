//! Chunk files: writing (atomic) and reading, with validation.

use std::fs;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use hdf5::types::VarLenUnicode;
use hdf5::{File, H5Type};
use serde::Serialize;

use crate::error::{DataError, Result};
use crate::packed::{PackedPlanes, PlaneKind};
use crate::rows::{ChunkMeta, GameRecord, Row, RowBlock, ScoredPosition, Source, MIN_SCHEMA_VERSION, SCHEMA_VERSION};

/// Rows per HDF5 chunk of the `planes` dataset (compression unit).
const PLANE_CHUNK_ROWS: usize = 64;
/// Elements per HDF5 chunk of the 1-D datasets.
const FLAT_CHUNK: usize = 16 * 1024;
const GZIP_LEVEL: u8 = 4;

fn h5err(path: &Path) -> impl Fn(hdf5::Error) -> DataError + '_ {
    move |e| DataError::Corrupt { path: path.to_path_buf(), msg: e.to_string() }
}

/// Writes `rows` and `games` as one chunk file at `path`, atomically: the data goes to a
/// temporary file in the same directory, which is fsynced and renamed to `path` (then the
/// directory is fsynced). A reader never sees a partial `path`. Rows are validated first
/// (plane length, policy indices below `meta.policy_size`, one short-term value per horizon of
/// `meta.short_term_horizons`, finite values).
pub fn write_chunk(path: &Path, meta: &ChunkMeta, rows: &[Row], games: &[GameRecord]) -> Result<()> {
    write_chunk_scored(path, meta, rows, games, &[])
}

/// [`write_chunk`] with the raw teacher scores of positions (dataset `scored`, read back by
/// [`Chunk::scored_positions`]; chunks without it have none).
pub fn write_chunk_scored(path: &Path, meta: &ChunkMeta, rows: &[Row], games: &[GameRecord], scored: &[ScoredPosition]) -> Result<()> {
    let plane_len = meta.plane_len();
    let invalid = |msg: String| DataError::Invalid { path: path.to_path_buf(), msg };
    if plane_len == 0 {
        return Err(invalid(format!("planes shape {:?} is empty", meta.planes)));
    }
    let k = meta.short_term_horizons.len();
    for (i, r) in rows.iter().enumerate() {
        if r.planes.len() != plane_len {
            return Err(invalid(format!("row {i}: {} plane values, expected {plane_len} ({:?})", r.planes.len(), meta.planes)));
        }
        for (what, pairs) in [("policy", &r.policy), ("opponent policy", &r.opponent_policy)] {
            if let Some(&(m, _)) = pairs.iter().find(|&&(m, _)| m as usize >= meta.policy_size) {
                return Err(invalid(format!("row {i}: {what} index {m} >= policy_size {}", meta.policy_size)));
            }
        }
        if r.short_term.len() != k {
            return Err(invalid(format!("row {i}: {} short-term values, expected one per horizon {:?}", r.short_term.len(), meta.short_term_horizons)));
        }
        let scalars = [
            r.search_value,
            r.moves_left,
            r.weight,
            r.policy_weight,
            r.opponent_weight,
            r.short_term_weight,
            r.material,
            r.material_weight,
        ];
        if r.policy.iter().chain(&r.opponent_policy).any(|&(_, p)| !p.is_finite())
            || !r.wdl.iter().chain(&r.short_term).chain(&scalars).all(|x| x.is_finite())
        {
            return Err(invalid(format!("row {i}: non-finite value")));
        }
    }
    let mut block = RowBlock::from_rows(plane_len, rows);
    block.short_term_horizons = meta.short_term_horizons.clone();
    write_block_scored(path, meta, &block, games, scored)
}

/// [`write_chunk`] from column form (no per-row validation beyond shapes; the short-term
/// horizons written are `meta`'s).
pub fn write_block(path: &Path, meta: &ChunkMeta, block: &RowBlock, games: &[GameRecord]) -> Result<()> {
    write_block_scored(path, meta, block, games, &[])
}

fn write_block_scored(path: &Path, meta: &ChunkMeta, block: &RowBlock, games: &[GameRecord], scored: &[ScoredPosition]) -> Result<()> {
    let (n, k) = (block.len(), meta.short_term_horizons.len());
    if !(block.is_consistent() && block.plane_len == meta.plane_len() && block.short_term_horizons.len() == k) {
        return Err(DataError::Invalid { path: path.to_path_buf(), msg: format!("row block columns disagree ({n} rows, {k} short-term horizons)") });
    }
    let tmp = vzero_base::file::tmp_path_for(path);
    let res = (|| -> Result<()> {
        write_h5(&tmp, meta, block, games, scored)?;
        Ok(vzero_base::file::commit(&tmp, path)?)
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
}

/// HDF5 file options without HDF5's own file locking. A chunk is written under a temporary name
/// and renamed whole ([`vzero_base::file::commit`]), so readers never need the lock; and the lock (an `flock`
/// on the open file) is inherited by every process spawned while the file is open (a UCI teacher,
/// a test's `vzero`), which then keeps other processes from opening the chunk for as long as it
/// lives ("unable to lock file, errno = 11").
fn unlocked() -> hdf5::FileBuilder {
    let mut b = File::with_options();
    b.with_fapl(|p| p.file_locking(false));
    b
}

fn write_h5(tmp: &Path, meta: &ChunkMeta, b: &RowBlock, games: &[GameRecord], scored: &[ScoredPosition]) -> Result<()> {
    let e = |err: hdf5::Error| DataError::Invalid { path: tmp.to_path_buf(), msg: format!("hdf5: {err}") };
    let n = b.len();
    let [c, h, w] = meta.planes;
    let file = unlocked().create(tmp).map_err(e)?;
    // planes, packed: bits [N, B] (u8), constants [N, S] and dense values [N, D*H*W] (f32),
    // with the kind of every plane as the attribute `plane_kinds`
    let packed;
    let p = match &b.packed {
        Some(p) => p,
        None => {
            packed = PackedPlanes::pack(&b.planes, c, h * w);
            &packed
        }
    };
    write_2d(&file, "planes_bits", &p.bits, n, p.bit_bytes()).map_err(e)?;
    write_2d(&file, "planes_scalar", &p.scalars, n, p.scalar_count()).map_err(e)?;
    write_2d(&file, "planes_dense", &p.dense, n, p.dense_len()).map_err(e)?;
    let kinds: Vec<u8> = p.kinds.iter().map(|&k| k as u8).collect();
    file.new_attr::<u8>().shape([c]).create("plane_kinds").map_err(e)?.write_raw(&kinds).map_err(e)?;
    file.new_attr::<u64>().shape([3]).create("planes_shape").map_err(e)?.write_raw(&[c as u64, h as u64, w as u64]).map_err(e)?;
    write_1d(&file, "policy_offsets", &b.policy_offsets).map_err(e)?;
    write_1d(&file, "policy_index", &b.policy_index).map_err(e)?;
    write_1d(&file, "policy_prob", &b.policy_prob).map_err(e)?;
    {
        let mut builder = file.new_dataset::<f32>();
        if n > 0 {
            builder = builder.chunk([FLAT_CHUNK.min(n), 3]).shuffle().deflate(GZIP_LEVEL);
        }
        let ds = builder.shape([n, 3]).create("wdl").map_err(e)?;
        if n > 0 {
            let flat: Vec<f32> = b.wdl.iter().flatten().copied().collect();
            ds.write_raw(&flat).map_err(e)?;
        }
    }
    write_1d(&file, "search_value", &b.search_value).map_err(e)?;
    write_1d(&file, "moves_left", &b.moves_left).map_err(e)?;
    write_1d(&file, "weight", &b.weight).map_err(e)?;
    write_1d(&file, "policy_weight", &b.policy_weight).map_err(e)?;
    write_1d(&file, "ply", &b.ply).map_err(e)?;
    write_1d(&file, "opponent_policy_offsets", &b.opponent_offsets).map_err(e)?;
    write_1d(&file, "opponent_policy_index", &b.opponent_index).map_err(e)?;
    write_1d(&file, "opponent_policy_prob", &b.opponent_prob).map_err(e)?;
    write_1d(&file, "opponent_policy_weight", &b.opponent_weight).map_err(e)?;
    {
        let k = meta.short_term_horizons.len();
        let mut builder = file.new_dataset::<f32>();
        if n > 0 && k > 0 {
            builder = builder.chunk([FLAT_CHUNK.min(n), k]).shuffle().deflate(GZIP_LEVEL);
        }
        let ds = builder.shape([n, k]).create("short_term_value").map_err(e)?;
        if n > 0 && k > 0 {
            ds.write_raw(&b.short_term).map_err(e)?;
        }
        if k > 0 {
            ds.new_attr::<u32>().shape([k]).create("horizons").map_err(e)?.write_raw(&meta.short_term_horizons).map_err(e)?;
        }
    }
    write_1d(&file, "short_term_weight", &b.short_term_weight).map_err(e)?;
    write_1d(&file, "material", &b.material).map_err(e)?;
    write_1d(&file, "material_weight", &b.material_weight).map_err(e)?;
    write_1d(&file, "games", &json_strings(tmp, "game record", games)?).map_err(e)?;
    if !scored.is_empty() {
        write_1d(&file, "scored", &json_strings(tmp, "scored position", scored)?).map_err(e)?;
    }
    attr_u64(&file, "schema_version", SCHEMA_VERSION as u64).map_err(e)?;
    attr_str(&file, "variant", &meta.variant).map_err(e)?;
    attr_u64(&file, "encoding_version", meta.encoding_version as u64).map_err(e)?;
    attr_u64(&file, "policy_size", meta.policy_size as u64).map_err(e)?;
    attr_str(&file, "network", &meta.network).map_err(e)?;
    attr_str(&file, "worker", &meta.worker).map_err(e)?;
    attr_u64(&file, "created_unix", meta.created_unix).map_err(e)?;
    attr_str(&file, "source", meta.source.as_str()).map_err(e)?;
    file.close().map_err(e)?;
    Ok(())
}

/// Each record as a JSON string (the `games` and `scored` datasets).
fn json_strings<T: Serialize>(tmp: &Path, what: &str, records: &[T]) -> Result<Vec<VarLenUnicode>> {
    let invalid = |msg: String| DataError::Invalid { path: tmp.to_path_buf(), msg };
    records
        .iter()
        .map(|r| {
            let s = serde_json::to_string(r).map_err(|err| invalid(format!("{what}: {err}")))?;
            VarLenUnicode::from_str(&s).map_err(|err| invalid(format!("{what}: {err}")))
        })
        .collect()
}

/// A row-major [n, width] dataset (chunked by rows, shuffled and compressed).
fn write_2d<T: H5Type>(file: &File, name: &str, data: &[T], n: usize, width: usize) -> hdf5::Result<()> {
    let mut builder = file.new_dataset::<T>();
    if n > 0 && width > 0 {
        builder = builder.chunk([PLANE_CHUNK_ROWS.min(n), width]).shuffle().deflate(GZIP_LEVEL);
    }
    let ds = builder.shape([n, width]).create(name)?;
    if n > 0 && width > 0 {
        ds.write_raw(data)?;
    }
    Ok(())
}

fn write_1d<T: H5Type>(file: &File, name: &str, data: &[T]) -> hdf5::Result<()> {
    let n = data.len();
    let mut builder = file.new_dataset::<T>();
    if n > 0 {
        builder = builder.chunk([FLAT_CHUNK.min(n)]).deflate(GZIP_LEVEL);
    }
    let ds = builder.shape([n]).create(name)?;
    if n > 0 {
        ds.write_raw(data)?;
    }
    Ok(())
}

fn attr_u64(file: &File, name: &str, v: u64) -> hdf5::Result<()> {
    file.new_attr::<u64>().shape(()).create(name)?.write_scalar(&v)
}

fn attr_str(file: &File, name: &str, v: &str) -> hdf5::Result<()> {
    let s = VarLenUnicode::from_str(v).map_err(|e| hdf5::Error::from(e.to_string().as_str()))?;
    file.new_attr::<VarLenUnicode>().shape(()).create(name)?.write_scalar(&s)
}

/// What a reader requires of a chunk (checked by [`Chunk::check`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkExpect {
    pub variant: String,
    pub encoding_version: u32,
    /// Required [C, H, W] (None = any).
    pub planes: Option<[usize; 3]>,
    /// Required policy size (None = any).
    pub policy_size: Option<usize>,
}

/// An open chunk file: metadata and sizes are read and validated by [`Chunk::open`]; rows and
/// games are read on demand.
#[derive(Debug)]
pub struct Chunk {
    pub path: PathBuf,
    pub meta: ChunkMeta,
    /// Number of rows (N).
    pub rows: usize,
    /// Number of game records.
    pub games: usize,
    /// Number of (index, probability) policy entries in the file (M).
    pub policy_entries: usize,
    /// Schema version of the file ([`MIN_SCHEMA_VERSION`]..=[`SCHEMA_VERSION`]).
    pub schema_version: u32,
    file: File,
}

impl Chunk {
    /// Opens a chunk and checks the schema version and that all datasets exist with consistent
    /// shapes. A truncated or corrupt file gives [`DataError::Corrupt`] naming the file.
    pub fn open(path: &Path) -> Result<Chunk> {
        if !path.is_file() {
            return Err(DataError::Io { path: path.to_path_buf(), source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such chunk file") });
        }
        let err = h5err(path);
        let corrupt = |msg: String| DataError::Corrupt { path: path.to_path_buf(), msg };
        let file = unlocked().open(path).map_err(&err)?;
        let version = read_attr_u64(&file, "schema_version").map_err(&err)?;
        if !(MIN_SCHEMA_VERSION as u64..=SCHEMA_VERSION as u64).contains(&version) {
            return Err(DataError::Mismatch {
                path: path.to_path_buf(),
                what: "schema version",
                found: version.to_string(),
                expected: format!("{MIN_SCHEMA_VERSION}..={SCHEMA_VERSION}"),
            });
        }
        let version = version as u32;
        let (n, shape) = if version >= 3 {
            let s: Vec<u64> = file.attr("planes_shape").and_then(|a| a.read_raw::<u64>()).map_err(&err)?;
            if s.len() != 3 {
                return Err(corrupt(format!("planes_shape is {s:?}, expected [C, H, W]")));
            }
            let rows = file.dataset("wdl").map_err(&err)?.shape().first().copied().unwrap_or(0);
            (rows, vec![rows, s[0] as usize, s[1] as usize, s[2] as usize])
        } else {
            let shape = file.dataset("planes").map_err(&err)?.shape();
            if shape.len() != 4 {
                return Err(corrupt(format!("planes has shape {shape:?}, expected [N, C, H, W]")));
            }
            (shape[0], shape)
        };
        let meta = ChunkMeta {
            variant: read_attr_str(&file, "variant").map_err(&err)?,
            encoding_version: read_attr_u64(&file, "encoding_version").map_err(&err)? as u32,
            planes: [shape[1], shape[2], shape[3]],
            policy_size: read_attr_u64(&file, "policy_size").map_err(&err)? as usize,
            network: read_attr_str(&file, "network").map_err(&err)?,
            worker: read_attr_str(&file, "worker").map_err(&err)?,
            created_unix: read_attr_u64(&file, "created_unix").map_err(&err)?,
            short_term_horizons: Vec::new(),
            source: Source::SelfPlay,
        };
        let len_of = |name: &str| -> Result<Vec<usize>> { Ok(file.dataset(name).map_err(&err)?.shape()) };
        let mut per_row = vec!["search_value", "moves_left", "weight", "policy_weight", "ply"];
        if version >= 2 {
            per_row.extend(["opponent_policy_weight", "short_term_weight", "material", "material_weight"]);
        }
        for name in per_row {
            let s = len_of(name)?;
            if s != [n] {
                return Err(corrupt(format!("{name} has shape {s:?}, expected [{n}]")));
            }
        }
        let s = len_of("wdl")?;
        if s != [n, 3] {
            return Err(corrupt(format!("wdl has shape {s:?}, expected [{n}, 3]")));
        }
        let s = len_of("policy_offsets")?;
        if s != [n + 1] {
            return Err(corrupt(format!("policy_offsets has shape {s:?}, expected [{}]", n + 1)));
        }
        let m = len_of("policy_index")?;
        let mp = len_of("policy_prob")?;
        if m.len() != 1 || m != mp {
            return Err(corrupt(format!("policy_index {m:?} and policy_prob {mp:?} differ")));
        }
        let g = len_of("games")?;
        if g.len() != 1 {
            return Err(corrupt(format!("games has shape {g:?}")));
        }
        if version >= 3 {
            let kinds: Vec<u8> = file.attr("plane_kinds").and_then(|a| a.read_raw::<u8>()).map_err(&err)?;
            if kinds.len() != shape[1] || kinds.iter().any(|&k| PlaneKind::from_code(k).is_none()) {
                return Err(corrupt(format!("plane_kinds {kinds:?} do not describe {} planes", shape[1])));
            }
            let area = shape[2] * shape[3];
            let count = |k: PlaneKind| kinds.iter().filter(|&&x| x == k as u8).count();
            let widths = [
                ("planes_bits", (count(PlaneKind::Bits) * area).div_ceil(8)),
                ("planes_scalar", count(PlaneKind::Scalar)),
                ("planes_dense", count(PlaneKind::Dense) * area),
            ];
            for (name, width) in widths {
                let s = len_of(name)?;
                if s != [n, width] {
                    return Err(corrupt(format!("{name} has shape {s:?}, expected [{n}, {width}]")));
                }
            }
        }
        let mut meta = meta;
        if file.attr_names().map_err(&err)?.iter().any(|a| a == "source") {
            let s = read_attr_str(&file, "source").map_err(&err)?;
            meta.source = Source::parse(&s).ok_or_else(|| corrupt(format!("unknown source '{s}' (selfplay, import or label)")))?;
        }
        if version >= 2 {
            let s = len_of("opponent_policy_offsets")?;
            if s != [n + 1] {
                return Err(corrupt(format!("opponent_policy_offsets has shape {s:?}, expected [{}]", n + 1)));
            }
            let (m, mp) = (len_of("opponent_policy_index")?, len_of("opponent_policy_prob")?);
            if m.len() != 1 || m != mp {
                return Err(corrupt(format!("opponent_policy_index {m:?} and opponent_policy_prob {mp:?} differ")));
            }
            let ds = file.dataset("short_term_value").map_err(&err)?;
            let s = ds.shape();
            if s.len() != 2 || s[0] != n {
                return Err(corrupt(format!("short_term_value has shape {s:?}, expected [{n}, K]")));
            }
            if s[1] > 0 {
                meta.short_term_horizons = ds.attr("horizons").and_then(|a| a.read_raw::<u32>()).map_err(&err)?;
            }
            if meta.short_term_horizons.len() != s[1] {
                return Err(corrupt(format!("short_term_value has {} columns but {} horizons", s[1], meta.short_term_horizons.len())));
            }
        }
        Ok(Chunk { path: path.to_path_buf(), meta, rows: n, games: g[0], policy_entries: m[0], schema_version: version, file })
    }

    /// Opens and checks against `expect` in one go.
    pub fn open_expect(path: &Path, expect: &ChunkExpect) -> Result<Chunk> {
        let c = Chunk::open(path)?;
        c.check(expect)?;
        Ok(c)
    }

    /// Variant, encoding version and (optionally) plane shape and policy size must match.
    pub fn check(&self, expect: &ChunkExpect) -> Result<()> {
        let mismatch = |what, found: String, expected: String| DataError::Mismatch { path: self.path.clone(), what, found, expected };
        if self.meta.variant != expect.variant {
            return Err(mismatch("variant", format!("'{}'", self.meta.variant), format!("'{}'", expect.variant)));
        }
        if self.meta.encoding_version != expect.encoding_version {
            return Err(mismatch("encoding version", self.meta.encoding_version.to_string(), expect.encoding_version.to_string()));
        }
        if let Some(p) = expect.planes {
            if p != self.meta.planes {
                return Err(mismatch("planes shape", format!("{:?}", self.meta.planes), format!("{p:?}")));
            }
        }
        if let Some(p) = expect.policy_size {
            if p != self.meta.policy_size {
                return Err(mismatch("policy size", self.meta.policy_size.to_string(), p.to_string()));
            }
        }
        Ok(())
    }

    /// All rows in column form (one read per dataset), planes unpacked.
    pub fn read_block(&self) -> Result<RowBlock> {
        let mut b = self.read_packed_block()?;
        b.unpack();
        Ok(b)
    }

    /// All rows in column form with the planes packed (what the replay window caches; planes of
    /// schema 1 and 2 chunks, stored as f32, are packed when read).
    pub fn read_packed_block(&self) -> Result<RowBlock> {
        let err = h5err(&self.path);
        let n = self.rows;
        let plane_len = self.meta.plane_len();
        let [c, h, w] = self.meta.planes;
        let mut b = RowBlock::new(plane_len);
        if self.schema_version >= 3 {
            let kinds: Vec<u8> = self.file.attr("plane_kinds").and_then(|a| a.read_raw::<u8>()).map_err(&err)?;
            let kinds = kinds.iter().filter_map(|&k| PlaneKind::from_code(k)).collect();
            let p = PackedPlanes::from_parts(kinds, h * w, n, self.read_vec("planes_bits")?, self.read_vec("planes_scalar")?, self.read_vec("planes_dense")?)
                .map_err(|msg| DataError::Corrupt { path: self.path.clone(), msg })?;
            b.packed = Some(p);
        } else {
            let planes: Vec<f32> = self.read_vec("planes")?;
            if planes.len() != n * plane_len {
                return Err(DataError::Corrupt { path: self.path.clone(), msg: "planes length disagrees with the row count".into() });
            }
            b.packed = Some(PackedPlanes::pack(&planes, c, h * w));
        }
        b.policy_offsets = self.read_vec("policy_offsets")?;
        b.policy_index = self.read_vec("policy_index")?;
        b.policy_prob = self.read_vec("policy_prob")?;
        let wdl: Vec<f32> = self.read_vec("wdl")?;
        b.wdl = wdl.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        b.search_value = self.read_vec("search_value")?;
        b.moves_left = self.read_vec("moves_left")?;
        b.weight = self.read_vec("weight")?;
        b.policy_weight = self.read_vec("policy_weight")?;
        b.ply = self.read_vec("ply")?;
        b.short_term_horizons = self.meta.short_term_horizons.clone();
        if self.schema_version >= 2 {
            b.opponent_offsets = self.read_vec("opponent_policy_offsets")?;
            b.opponent_index = self.read_vec("opponent_policy_index")?;
            b.opponent_prob = self.read_vec("opponent_policy_prob")?;
            b.opponent_weight = self.read_vec("opponent_policy_weight")?;
            b.short_term = self.read_vec("short_term_value")?;
            b.short_term_weight = self.read_vec("short_term_weight")?;
            b.material = self.read_vec("material")?;
            b.material_weight = self.read_vec("material_weight")?;
        } else {
            // Schema 1 has no auxiliary targets: absent (weight 0).
            b.opponent_offsets = vec![0; n + 1];
            b.opponent_weight = vec![0.0; n];
            b.short_term_weight = vec![0.0; n];
            b.material = vec![0.0; n];
            b.material_weight = vec![0.0; n];
        }
        let _ = &err;
        if !(b.wdl.len() == n && b.is_consistent()) {
            return Err(DataError::Corrupt { path: self.path.clone(), msg: "dataset lengths disagree".into() });
        }
        self.check_offsets("policy", &b.policy_offsets, &b.policy_index)?;
        self.check_offsets("opponent_policy", &b.opponent_offsets, &b.opponent_index)?;
        Ok(b)
    }

    /// Checks CSR `off` (`<what>_offsets`) against its indices `idx`.
    fn check_offsets(&self, what: &str, off: &[u64], idx: &[u32]) -> Result<()> {
        let bad = off.first() != Some(&0) || off.windows(2).any(|w| w[0] > w[1]) || off.last().copied() != Some(idx.len() as u64);
        if bad {
            return Err(DataError::Corrupt { path: self.path.clone(), msg: format!("{what}_offsets are not a valid CSR index") });
        }
        if let Some(&m) = idx.iter().find(|&&m| m as usize >= self.meta.policy_size) {
            return Err(DataError::Corrupt { path: self.path.clone(), msg: format!("{what} index {m} >= policy_size {}", self.meta.policy_size) });
        }
        Ok(())
    }

    fn read_vec<T: H5Type>(&self, name: &str) -> Result<Vec<T>> {
        let err = h5err(&self.path);
        let ds = self.file.dataset(name).map_err(&err)?;
        if ds.size() == 0 {
            return Ok(Vec::new());
        }
        ds.read_raw::<T>().map_err(|e| DataError::Corrupt { path: self.path.clone(), msg: format!("{name}: {e}") })
    }

    /// All rows.
    pub fn read_all(&self) -> Result<Vec<Row>> {
        Ok(self.read_block()?.to_rows())
    }

    /// The rows with the given indices (any order, repeats allowed), in that order.
    pub fn read_rows(&self, idx: &[usize]) -> Result<Vec<Row>> {
        if let Some(&i) = idx.iter().find(|&&i| i >= self.rows) {
            return Err(DataError::Invalid { path: self.path.clone(), msg: format!("row {i} out of range (file has {} rows)", self.rows) });
        }
        if idx.is_empty() {
            return Ok(Vec::new());
        }
        // Small files are cheaper to read whole; the 1-D datasets always are.
        let b = self.read_block()?;
        Ok(idx.iter().map(|&i| b.row(i)).collect())
    }

    /// The game records.
    pub fn games(&self) -> Result<Vec<GameRecord>> {
        self.read_json("games", "game record")
    }

    /// The positions with raw teacher scores (labelled chunks and `vzero nnue loop`'s games;
    /// empty for chunks written without them).
    pub fn scored_positions(&self) -> Result<Vec<ScoredPosition>> {
        if self.file.link_exists("scored") {
            self.read_json("scored", "scored position")
        } else {
            Ok(Vec::new())
        }
    }

    fn read_json<T: serde::de::DeserializeOwned>(&self, name: &str, what: &str) -> Result<Vec<T>> {
        let strs: Vec<VarLenUnicode> = self.read_vec(name)?;
        strs.iter()
            .enumerate()
            .map(|(i, s)| {
                serde_json::from_str(s.as_str()).map_err(|e| DataError::Corrupt { path: self.path.clone(), msg: format!("{what} {i}: {e}") })
            })
            .collect()
    }
}

fn read_attr_u64(file: &File, name: &str) -> hdf5::Result<u64> {
    file.attr(name)?.read_scalar::<u64>()
}

fn read_attr_str(file: &File, name: &str) -> hdf5::Result<String> {
    Ok(file.attr(name)?.read_scalar::<VarLenUnicode>()?.as_str().to_string())
}
