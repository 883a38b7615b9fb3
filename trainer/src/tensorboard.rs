//! TensorBoard event files beside metrics.csv, so that `tensorboard --logdir <run>` shows a run.
//!
//! An event file is a sequence of TFRecords, each framed as `u64` LE length, masked CRC32C of
//! those 8 bytes, the data, masked CRC32C of the data; each record's data is an `Event`
//! protobuf (encoded here by hand: a handful of fields). The first record holds
//! `file_version = "brain.Event:2"`; the others a `Summary` of scalar values at a step.
//!
//! **How writes are made safe.** Each process writes its own file
//! (`events.out.tfevents.<unix secs>.<host>.<pid>`, TensorFlow's convention) and only ever
//! appends whole records to it: the records of one call go out together (one `write_all` on a
//! file opened for appending), followed by an fsync. Not a new file renamed into place each time:
//! TensorBoard's data server opens each event file once and reads what is appended to it, so a
//! file replaced by a rename would freeze at the version it first opened. A process killed at
//! any moment leaves the file ending after its last whole record, or at worst (a torn write on
//! power loss) with a truncated last record, which every TensorBoard reader takes for "not
//! written yet", never for a corrupt one; no process appends to the file after that (a resumed
//! learner starts a file of its own). On object storage the file is uploaded whole after each
//! flush ([`RunDir::publish`]: one PUT of the finished local copy), so a reader of the bucket
//! sees whole records only. A failed local write is cut back to the last whole record.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use vzero_data::RunDir;

use crate::metrics::MetricsRow;

/// The `file_version` of the first record of every event file.
pub const FILE_VERSION: &str = "brain.Event:2";

/// CRC32C's masked form, as TFRecord stores it: rotated right by 15 bits, plus a constant.
pub fn masked_crc32c(data: &[u8]) -> u32 {
    let crc = crc32c::crc32c(data);
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Appends `data` to `out` as one TFRecord (length, its masked CRC, data, the data's masked
/// CRC).
pub fn frame_record(data: &[u8], out: &mut Vec<u8>) {
    let len = (data.len() as u64).to_le_bytes();
    out.extend_from_slice(&len);
    out.extend_from_slice(&masked_crc32c(&len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc32c(data).to_le_bytes());
}

/// What an event carries besides its wall time and step.
#[derive(Clone, Copy, Debug)]
pub enum Payload<'a> {
    /// The file's version (the first record): `Event.file_version`.
    FileVersion(&'a str),
    /// Scalars (tag, value): `Event.summary`, one `Summary.Value { tag, simple_value }` each.
    Scalars(&'a [(String, f32)]),
    /// `Event.session_log = { status: START }`: a (re)start of the writer at this step; the
    /// Python readers drop the data of earlier files at this step and after.
    SessionStart,
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field (wire type 2).
fn bytes_field(field: u64, data: &[u8], out: &mut Vec<u8>) {
    varint(field << 3 | 2, out);
    varint(data.len() as u64, out);
    out.extend_from_slice(data);
}

/// The `Event` protobuf (proto3: fields at their default value are left out).
pub fn encode_event(wall_time: f64, step: i64, payload: Payload<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    if wall_time != 0.0 {
        out.push(1 << 3 | 1); // wall_time: double
        out.extend_from_slice(&wall_time.to_le_bytes());
    }
    if step != 0 {
        out.push(2 << 3); // step: int64 varint
        varint(step as u64, &mut out);
    }
    match payload {
        Payload::FileVersion(v) => bytes_field(3, v.as_bytes(), &mut out),
        Payload::Scalars(values) => {
            let mut summary = Vec::new();
            for (tag, v) in values {
                let mut value = Vec::new();
                bytes_field(1, tag.as_bytes(), &mut value); // Value.tag
                value.push(2 << 3 | 5); // Value.simple_value: float
                value.extend_from_slice(&v.to_le_bytes());
                bytes_field(1, &value, &mut summary); // Summary.value
            }
            bytes_field(5, &summary, &mut out); // Event.summary
        }
        Payload::SessionStart => bytes_field(7, &[1 << 3, 1], &mut out), // session_log { status: START }
    }
    out
}

/// The conventional event file name: `events.out.tfevents.<unix secs>.<host>.<pid>`.
pub fn event_file_name(unix_secs: u64, host: &str, pid: u32) -> String {
    format!("events.out.tfevents.{unix_secs}.{host}.{pid}")
}

fn wall_time() -> f64 {
    vzero_base::clock::unix_secs_f64()
}

/// This process's event file in a run's root directory (beside metrics.csv), created on the
/// first write. Write errors are printed as warnings, never returned: TensorBoard is a view of
/// the run, like the plots.
pub struct RunEvents {
    run: RunDir,
    /// The open file and the length of its whole records; `None` until the first write.
    file: Option<(PathBuf, File, u64)>,
    /// Step of the [`Payload::SessionStart`] record written after the file version.
    restart_at: Option<u64>,
    /// Set after a write failed beyond repair: nothing more is written.
    broken: bool,
}

impl RunEvents {
    /// Event file of this process for `run` (nothing is created before the first write).
    pub fn new(run: &RunDir) -> RunEvents {
        RunEvents { run: run.clone(), file: None, restart_at: None, broken: false }
    }

    /// Marks the file as the continuation of a run resumed at `step`: its first record after
    /// the version is a session start at `step + 1`, so TensorBoard drops what a killed writer
    /// logged after the resumed checkpoint, as the learner drops those rows of metrics.csv.
    pub fn resumed_at(mut self, step: u64) -> RunEvents {
        self.restart_at = Some(step + 1);
        self
    }

    /// The event file, once written.
    pub fn path(&self) -> Option<&Path> {
        self.file.as_ref().map(|(p, _, _)| p.as_path())
    }

    /// Appends one event with `scalars` (tag, value) at `step`, fsyncs it and publishes the
    /// file (object storage). Warns on failure.
    pub fn log(&mut self, step: u64, scalars: &[(String, f64)]) {
        if self.broken || scalars.is_empty() {
            return;
        }
        if let Err(e) = self.try_log(step, scalars) {
            eprintln!("warning: TensorBoard events: {e:#}");
        }
    }

    /// Logs the Elo differences `(opponent, elo)` of a gauntlet as `elo/<opponent>` at the
    /// checkpoint's `step`.
    pub fn log_elo(&mut self, step: u64, elo: &[(String, f64)]) {
        let scalars: Vec<(String, f64)> = elo.iter().map(|(o, e)| (format!("elo/{o}"), *e)).collect();
        self.log(step, &scalars);
    }

    fn try_log(&mut self, step: u64, scalars: &[(String, f64)]) -> Result<()> {
        let now = wall_time();
        let mut buf = Vec::new();
        if self.file.is_none() {
            frame_record(&encode_event(now, 0, Payload::FileVersion(FILE_VERSION)), &mut buf);
            if let Some(s) = self.restart_at {
                frame_record(&encode_event(now, s as i64, Payload::SessionStart), &mut buf);
            }
            self.file = Some(self.create(now as u64)?);
        }
        let values: Vec<(String, f32)> = scalars.iter().map(|(t, v)| (t.clone(), *v as f32)).collect();
        frame_record(&encode_event(now, step as i64, Payload::Scalars(&values)), &mut buf);
        let (path, file, good) = self.file.as_mut().expect("opened above");
        let written = file.write_all(&buf).and_then(|_| file.sync_data());
        if let Err(e) = written {
            // Cut a partly written record off, so that later records stay readable.
            if file.set_len(*good).and_then(|_| file.sync_data()).is_err() {
                self.broken = true;
            }
            return Err(e).with_context(|| format!("writing {}", path.display()));
        }
        *good += buf.len() as u64;
        self.run.publish(path)?;
        Ok(())
    }

    /// Creates a new event file (a name not taken yet, even by this process's other files).
    fn create(&self, unix_secs: u64) -> Result<(PathBuf, File, u64)> {
        let base = event_file_name(unix_secs, &vzero_base::hostname(), std::process::id());
        for n in 0u32.. {
            let name = if n == 0 { base.clone() } else { format!("{base}.{n}") };
            let path = self.run.root().join(name);
            match OpenOptions::new().append(true).create_new(true).open(&path) {
                Ok(f) => return Ok((path, f, 0)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
            }
        }
        unreachable!("some file name is free")
    }
}

/// The TensorBoard tag of a metrics.csv column: `loss_<x>` → `loss/<x>`; `lr`,
/// `samples_per_s`, `policy_entropy`, `value_accuracy` → `train/…`; `total_rows`,
/// `window_rows`, `external_rows`, `external_share` → `data/…`. `None` for the columns that
/// are no time series of their own (`step`, `samples`, `generation`, `unix`).
pub fn column_tag(column: &str) -> Option<String> {
    if let Some(rest) = column.strip_prefix("loss_") {
        return Some(format!("loss/{rest}"));
    }
    match column {
        "lr" | "samples_per_s" | "policy_entropy" | "value_accuracy" => Some(format!("train/{column}")),
        "total_rows" | "window_rows" | "external_rows" | "external_share" => Some(format!("data/{column}")),
        _ => None,
    }
}

/// The scalars of a metrics.csv row, tagged by [`column_tag`].
pub fn row_scalars(row: &MetricsRow) -> Vec<(String, f64)> {
    let base = [
        ("total_rows", row.total_rows as f64),
        ("window_rows", row.window_rows as f64),
        ("loss_total", row.loss_total),
        ("loss_policy", row.loss_policy),
        ("loss_value", row.loss_value),
        ("loss_moves_left", row.loss_moves_left),
        ("policy_entropy", row.policy_entropy),
        ("value_accuracy", row.value_accuracy),
        ("lr", row.lr),
        ("samples_per_s", row.samples_per_s),
    ];
    base.into_iter().chain(row.aux_losses.iter().copied()).filter_map(|(c, v)| Some((column_tag(c)?, v))).collect()
}

/// Counts the finished self-play games so far.
pub(crate) type GameCounter = Box<dyn FnMut() -> u64 + Send>;

/// The learner's event file: each metrics.csv row, with the self-play games per second when a
/// game counter is attached ([`LearnerEvents::count_games`]).
pub(crate) struct LearnerEvents {
    events: RunEvents,
    /// Finished self-play games so far, and the count and time at the previous row.
    games: Option<(GameCounter, u64, Instant)>,
}

impl LearnerEvents {
    /// Events of a learner that resumed `run` at `step`.
    pub(crate) fn new(run: &RunDir, step: u64) -> LearnerEvents {
        LearnerEvents { events: RunEvents::new(run).resumed_at(step), games: None }
    }

    /// Attaches a counter of finished self-play games: each row then has
    /// `selfplay/games_per_s` over the interval since the previous row (since this call for the
    /// first).
    pub(crate) fn count_games(&mut self, mut games: GameCounter) {
        let now = games();
        self.games = Some((games, now, Instant::now()));
    }

    /// Logs a metrics row at its step.
    pub(crate) fn log_row(&mut self, row: &MetricsRow) {
        let mut scalars = row_scalars(row);
        if let Some((count, last, at)) = &mut self.games {
            let n = count();
            let secs = at.elapsed().as_secs_f64().max(1e-9);
            scalars.push(("selfplay/games_per_s".into(), n.saturating_sub(*last) as f64 / secs));
            (*last, *at) = (n, Instant::now());
        }
        self.events.log(row.step, &scalars);
    }

    /// The underlying event file.
    pub(crate) fn events(&mut self) -> &mut RunEvents {
        &mut self.events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn crc32c_known_vector_and_mask() {
        // CRC-32C check value (RFC 3720), and the masked form TensorFlow computes for it.
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(masked_crc32c(b"123456789"), 0xc78a_b0e5);
    }

    // The expected bytes below are what the `tensorboard` package's protobuf classes serialize
    // (`event_pb2.Event(...).SerializeToString()`) for the same events.
    #[test]
    fn events_encode_as_protobuf_does() {
        assert_eq!(encode_event(1_700_000_000.5, 0, Payload::FileVersion(FILE_VERSION)), hex("0900002040fc54d9411a0d627261696e2e4576656e743a32"));
        let values = [("loss/total".to_string(), 2.5f32), ("train/lr".to_string(), 0.02f32)];
        assert_eq!(
            encode_event(1_700_000_000.25, 300, Payload::Scalars(&values)),
            hex("0900001040fc54d94110ac022a240a110a0a6c6f73732f746f74616c15000020400a0f0a08747261696e2f6c72150ad7a33c")
        );
        assert_eq!(encode_event(1.0, 11, Payload::SessionStart), hex("09000000000000f03f100b3a020801"));
    }

    #[test]
    fn record_layout() {
        let values = [("loss/total".to_string(), 2.5f32), ("train/lr".to_string(), 0.02f32)];
        let data = encode_event(1_700_000_000.25, 300, Payload::Scalars(&values));
        let mut rec = Vec::new();
        frame_record(&data, &mut rec);
        assert_eq!(rec.len(), 8 + 4 + data.len() + 4);
        assert_eq!(&rec[..8], &hex("3200000000000000")[..]);
        assert_eq!(u32::from_le_bytes(rec[8..12].try_into().unwrap()), 0xec56_1924);
        assert_eq!(&rec[12..12 + data.len()], &data[..]);
        assert_eq!(u32::from_le_bytes(rec[12 + data.len()..].try_into().unwrap()), 0xd3ec_2a71);
    }

    #[test]
    fn tags_of_the_metrics_columns() {
        assert_eq!(column_tag("loss_moves_left").as_deref(), Some("loss/moves_left"));
        assert_eq!(column_tag("loss_soft_policy").as_deref(), Some("loss/soft_policy"));
        assert_eq!(column_tag("lr").as_deref(), Some("train/lr"));
        assert_eq!(column_tag("window_rows").as_deref(), Some("data/window_rows"));
        assert_eq!(column_tag("step"), None);
        let row = MetricsRow { step: 10, loss_total: 1.5, aux_losses: vec![("loss_material", 0.25), ("external_share", 0.5)], ..Default::default() };
        let s = row_scalars(&row);
        assert_eq!(s.len(), 12);
        assert!(s.contains(&("loss/total".to_string(), 1.5)));
        assert!(s.contains(&("loss/material".to_string(), 0.25)));
        assert!(s.contains(&("data/external_share".to_string(), 0.5)));
    }

    /// Splits a file into its records, checking both CRCs of each.
    fn records(bytes: &[u8]) -> Vec<Vec<u8>> {
        let (mut out, mut at) = (Vec::new(), 0);
        while at < bytes.len() {
            let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
            assert_eq!(u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()), masked_crc32c(&bytes[at..at + 8]));
            let data = &bytes[at + 12..at + 12 + len];
            assert_eq!(u32::from_le_bytes(bytes[at + 12 + len..at + 16 + len].try_into().unwrap()), masked_crc32c(data));
            out.push(data.to_vec());
            at += 16 + len;
        }
        out
    }

    #[test]
    fn run_events_append_whole_records_to_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create_or_open(dir.path()).unwrap();
        let mut ev = RunEvents::new(&run).resumed_at(20);
        assert!(ev.path().is_none());
        ev.log(30, &[("loss/total".into(), 1.0)]);
        ev.log_elo(30, &[("random".into(), 250.0)]);
        let path = ev.path().unwrap().to_path_buf();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("events.out.tfevents.") && name.ends_with(&format!(".{}", std::process::id())), "{name}");
        assert_eq!(path.parent().unwrap(), run.root());
        let recs = records(&std::fs::read(&path).unwrap());
        assert_eq!(recs.len(), 4);
        assert!(recs[0].ends_with(b"brain.Event:2"));
        assert!(recs[1].ends_with(&[0x10, 21, 0x3a, 2, 8, 1])); // step 21, session_log START
        assert!(recs[3].windows(10).any(|w| w == b"elo/random"));
        // A second writer of the same process and second gets a name of its own.
        let mut other = RunEvents::new(&run);
        other.log(1, &[("x".into(), 1.0)]);
        assert_ne!(other.path().unwrap(), path);
    }
}
