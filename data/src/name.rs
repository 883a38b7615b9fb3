//! Chunk file names: `<unix_ms, 13 digits>-<worker>-<seq, 6 digits>-<counts>.h5`.
//!
//! The counts field (`<source letter><games>g<rows>r`, e.g. `s12g2301r` for 12 self-play games
//! of 2,301 rows) lets a reader count a run's games and rows from a directory or bucket listing
//! alone, without opening (or downloading) every chunk: `vzero status` on a day's run lists
//! tens of thousands of chunks. Chunks written before the field existed have no counts; their
//! readers open the file instead.

use crate::rows::Source;

/// What a chunk holds, as its name says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkCounts {
    pub source: Source,
    /// Game records in the chunk.
    pub games: u64,
    /// Training rows in the chunk.
    pub rows: u64,
}

/// A parsed chunk file name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkName {
    /// Creation time, unix milliseconds (names sort by it).
    pub unix_ms: u64,
    /// The writer's name (`[A-Za-z0-9_]`).
    pub worker: String,
    /// The writer's sequence number.
    pub seq: u64,
    /// The counts, when the name carries them (chunks written since they were added).
    pub counts: Option<ChunkCounts>,
}

fn source_letter(s: Source) -> char {
    match s {
        Source::SelfPlay => 's',
        Source::Import => 'i',
        Source::Label => 'l',
    }
}

impl ChunkCounts {
    /// The name field, e.g. `s12g2301r`.
    fn field(&self) -> String {
        format!("{}{}g{}r", source_letter(self.source), self.games, self.rows)
    }

    fn parse(f: &str) -> Option<ChunkCounts> {
        let mut chars = f.chars();
        let source = match chars.next()? {
            's' => Source::SelfPlay,
            'i' => Source::Import,
            'l' => Source::Label,
            _ => return None,
        };
        let (games, rest) = chars.as_str().split_once('g')?;
        let rows = rest.strip_suffix('r')?;
        Some(ChunkCounts { source, games: decimal(games)?, rows: decimal(rows)? })
    }
}

impl ChunkName {
    /// The file name (with `.h5`).
    pub fn file_name(&self) -> String {
        let mut s = format!("{:013}-{}-{:06}", self.unix_ms, self.worker, self.seq);
        if let Some(c) = &self.counts {
            s.push('-');
            s.push_str(&c.field());
        }
        s.push_str(".h5");
        s
    }

    /// Parses a chunk's file name (no directory); `None` for anything [`ChunkName::file_name`]
    /// does not write. A counts field that does not parse makes the whole name unparsed.
    pub fn parse(file_name: &str) -> Option<ChunkName> {
        let stem = file_name.strip_suffix(".h5")?;
        let mut fields = stem.split('-');
        let unix_ms = decimal(fields.next()?)?;
        let worker = fields.next()?.to_string();
        let seq = decimal(fields.next()?)?;
        let counts = match fields.next() {
            Some(f) => Some(ChunkCounts::parse(f)?),
            None => None,
        };
        if fields.next().is_some() || worker.is_empty() {
            return None;
        }
        Some(ChunkName { unix_ms, worker, seq, counts })
    }
}

/// A name field of decimal digits only (no sign, not empty) as a number: the one reader of the
/// numbers vzero writes into file names (chunks, checkpoints, job batches).
pub fn decimal(field: &str) -> Option<u64> {
    if field.is_empty() || !field.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    field.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_with_and_without_counts() {
        for counts in [None, Some(ChunkCounts { source: Source::SelfPlay, games: 12, rows: 2301 }), Some(ChunkCounts { source: Source::Label, games: 0, rows: 7 }), Some(ChunkCounts { source: Source::Import, games: 3, rows: 0 })] {
            let n = ChunkName { unix_ms: 1_765_000_000_123, worker: "host_42_w0".into(), seq: 17, counts };
            let f = n.file_name();
            assert!(f.starts_with("1765000000123-host_42_w0-000017"), "{f}");
            assert_eq!(ChunkName::parse(&f), Some(n));
        }
        assert_eq!(ChunkName::parse("1765000000123-w-000001-s12g2301r.h5").unwrap().counts.unwrap().rows, 2301);
    }

    #[test]
    fn malformed_names_are_not_parsed() {
        for bad in ["", "x.h5", "1765000000123-w.h5", "1765000000123-w-000001.txt", "1765000000123-w-000001-x1g2r.h5", "1765000000123-w-000001-s1g2.h5", "1765000000123-w-000001-sg2r.h5", "1765000000123-w-000001-s1g2r-extra.h5", "abc-w-000001.h5", "1765000000123--000001.h5", "1765000000123-w-000001-s+1g2r.h5", "+1765000000123-w-000001.h5", "1765000000123-w-+00001.h5"] {
            assert_eq!(ChunkName::parse(bad), None, "{bad}");
        }
    }
}
