//! The write-ahead journal in front of SQLite when writes are durable.
//!
//! Each batch the committer makes durable is one record appended to a
//! zero-filled segment file and one `fdatasync`, as etcd's WAL does. A
//! SQLite commit instead writes every B-tree page the batch touched (the
//! key index takes inserts all over) and then fsyncs: under the create
//! load on this machine it held the committer for ~0.57 ms per batch,
//! the journal for ~0.3 ms (docs/performance-history.md, "Session 6").
//! SQLite gets the same batches afterwards from [`crate::applier`], and a
//! segment is removed once SQLite holds all its records durably.
//!
//! Segments are named by the revision of their first record and filled in
//! order. They are written to before use (zeros), so that an `fdatasync`
//! of a record flushes data only: appending to a file, or writing into
//! `fallocate`d space, also commits the file system's metadata and measured
//! 1.5x slower. A record is `[payload length u32][crc32 u32][payload]`,
//! little-endian; replay stops at the first length of zero, a record that
//! runs past the file, a checksum that does not match, or revisions that do
//! not continue the record before (a recycled segment's old records): only the last
//! write can be torn, and it was never acknowledged. Applied segments are
//! recycled as the next spare rather than deleted when one is needed.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::backend::{BackendError, Event, EventKind, KeyValue};
use crate::Revision;

/// The size segments are made at (a record larger than that gets a segment
/// of its own, grown as it is written).
pub const SEGMENT_BYTES: u64 = 16 << 20;

/// The size of a segment made on the committer when no spare is ready.
const INLINE_SEGMENT_BYTES: u64 = 1 << 20;

/// The name of the segment prepared ahead for the next rotation.
const SPARE: &str = "spare.seg";
const SPARE_PARTIAL: &str = "spare.tmp";
const HEADER: usize = 8;

/// One durable batch: the revision after it and its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub revision: Revision,
    pub events: Vec<Event>,
}

/// A segment that takes no more records, with the revision of its last one.
#[derive(Debug)]
struct Closed {
    path: PathBuf,
    last: Revision,
}

/// Closed segments, shared between the appender and whoever removes them.
#[derive(Debug, Clone, Default)]
pub struct Segments {
    closed: Arc<Mutex<Vec<Closed>>>,
}

impl Segments {
    fn push(&self, path: PathBuf, last: Revision) {
        if let Ok(mut closed) = self.closed.lock() {
            closed.push(Closed { path, last });
        }
    }

    /// Remove every closed segment whose records are all at or below
    /// `durable` (held by SQLite on disk). Returns how many went.
    pub fn remove_through(&self, durable: Revision) -> Result<usize, BackendError> {
        self.retire_through(durable, None)
    }

    /// [`Segments::remove_through`], keeping one full-sized segment as the
    /// spare in `dir` when there is none: its blocks are written already,
    /// so reusing it spares the disk 16 MiB of zeros per rotation (whose
    /// writing slowed the committer's `fdatasync`s). Its old records stay
    /// behind the new ones; replay tells them apart (see [`read_records`]).
    pub fn recycle_through(
        &self,
        durable: Revision,
        dir: &Path,
        segment_bytes: u64,
    ) -> Result<usize, BackendError> {
        self.retire_through(durable, Some((dir, segment_bytes)))
    }

    fn retire_through(
        &self,
        durable: Revision,
        mut recycle: Option<(&Path, u64)>,
    ) -> Result<usize, BackendError> {
        let retired: Vec<Closed> = match self.closed.lock() {
            Ok(mut closed) => {
                let through = closed.partition_point(|c| c.last <= durable);
                let keep = closed.split_off(through);
                std::mem::replace(&mut *closed, keep)
            }
            Err(_) => return Ok(0),
        };
        for segment in &retired {
            if let Some((dir, segment_bytes)) = recycle {
                let spare = dir.join(SPARE);
                let full_sized = std::fs::metadata(&segment.path)
                    .is_ok_and(|metadata| metadata.len() == segment_bytes);
                if full_sized && !spare.exists() && std::fs::rename(&segment.path, &spare).is_ok() {
                    recycle = None;
                    continue;
                }
            }
            match std::fs::remove_file(&segment.path) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(io(&segment.path, error)),
            }
        }
        Ok(retired.len())
    }
}

struct Current {
    file: File,
    path: PathBuf,
    /// Where the next record goes.
    offset: u64,
    /// Its size: records go in while they fit.
    capacity: u64,
}

pub struct Journal {
    dir: PathBuf,
    segment_bytes: u64,
    /// The segment being appended to.
    current: Option<Current>,
    /// The revision of the last record appended.
    last: Revision,
    segments: Segments,
    buffer: Vec<u8>,
}

fn io(path: &Path, error: std::io::Error) -> BackendError {
    BackendError::Io(format!("journal {}: {error}", path.display()))
}

fn segment_name(revision: Revision) -> String {
    format!("{revision:020}.seg")
}

impl Journal {
    /// Open the journal in `dir` (created when missing) and read back every
    /// record its segments hold, in order. Appends go to a new segment;
    /// the existing ones are closed, for [`Segments::remove_through`] once
    /// their records are applied.
    pub fn open(dir: &Path, segment_bytes: u64) -> Result<(Journal, Vec<Record>), BackendError> {
        std::fs::create_dir_all(dir).map_err(|error| io(dir, error))?;
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|error| io(dir, error))?
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| {
                path.extension().is_some_and(|ext| ext == "seg")
                    && path.file_name().is_some_and(|name| name != SPARE)
            })
            .collect();
        names.sort();
        let segments = Segments::default();
        let mut records = Vec::new();
        let mut last = 0;
        for path in names {
            let bytes = std::fs::read(&path).map_err(|error| io(&path, error))?;
            let before = records.len();
            read_records(&bytes, &mut records);
            if let Some(record) = records[before..].last() {
                last = record.revision;
            }
            segments.push(path, last);
        }
        Ok((
            Journal {
                dir: dir.to_path_buf(),
                segment_bytes,
                current: None,
                last,
                segments,
                buffer: Vec::new(),
            },
            records,
        ))
    }

    /// The closed segments, to remove once SQLite holds their records.
    pub fn segments(&self) -> Segments {
        self.segments.clone()
    }

    /// Append one batch and wait until it is on disk (`fdatasync`). On an
    /// error nothing is counted as written: the next append overwrites the
    /// same place, and replay stops where a torn record begins.
    pub fn append(&mut self, revision: Revision, events: &[Event]) -> Result<(), BackendError> {
        encode(&mut self.buffer, revision, events);
        let length = self.buffer.len() as u64;
        let full = match &self.current {
            Some(current) => current.offset > 0 && current.offset + length > current.capacity,
            None => true,
        };
        if full {
            self.rotate(revision)?;
        }
        let Some(current) = self.current.as_mut() else {
            return Err(BackendError::Io("journal: no segment open".into()));
        };
        current
            .file
            .write_all_at(&self.buffer, current.offset)
            .and_then(|()| current.file.sync_data())
            .map_err(|error| io(&current.path, error))?;
        current.offset += length;
        self.last = revision;
        Ok(())
    }

    /// Close the current segment and start one named after `revision`: the
    /// spare when one is ready, else a small one made here (the first
    /// write after a start must not wait for 16 MiB of zeros).
    fn rotate(&mut self, revision: Revision) -> Result<(), BackendError> {
        let path = self.dir.join(segment_name(revision));
        let spare = self.dir.join(SPARE);
        if std::fs::rename(&spare, &path).is_err() {
            make_segment(&path, self.segment_bytes.min(INLINE_SEGMENT_BYTES))?;
        }
        // The new name must survive a crash before records in it are acknowledged.
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(|error| io(&self.dir, error))?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|error| io(&path, error))?;
        let capacity = file.metadata().map_err(|error| io(&path, error))?.len();
        let next = Current {
            file,
            path,
            offset: 0,
            capacity,
        };
        if let Some(previous) = self.current.replace(next) {
            self.segments.push(previous.path, self.last);
        }
        Ok(())
    }

    /// Remove every segment, open or closed (SQLite holds all their records
    /// durably): the next append starts a new one.
    pub fn clear(&mut self) -> Result<(), BackendError> {
        if let Some(current) = self.current.take() {
            self.segments.push(current.path, self.last);
        }
        self.segments.remove_through(Revision::MAX).map(|_| ())
    }
}

/// Make the spare segment for the next rotation when there is none (called
/// off the committer: writing 16 MiB of zeros takes a while).
pub fn prepare_spare(dir: &Path, segment_bytes: u64) -> Result<(), BackendError> {
    let spare = dir.join(SPARE);
    if spare.exists() {
        return Ok(());
    }
    let partial = dir.join(SPARE_PARTIAL);
    make_segment(&partial, segment_bytes)?;
    std::fs::rename(&partial, &spare).map_err(|error| io(&spare, error))
}

/// A file of `bytes` zeros, on disk.
fn make_segment(path: &Path, bytes: u64) -> Result<(), BackendError> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(path)
        .map_err(|error| io(path, error))?;
    let zeros = vec![0u8; 1 << 20];
    let mut written = 0;
    while written < bytes {
        let n = zeros.len().min((bytes - written) as usize);
        file.write_all_at(&zeros[..n], written)
            .map_err(|error| io(path, error))?;
        written += n as u64;
    }
    file.sync_all().map_err(|error| io(path, error))
}

fn put_u32(buffer: &mut Vec<u8>, value: usize) {
    buffer.extend_from_slice(&(value as u32).to_le_bytes());
}

fn put_bytes(buffer: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(buffer, bytes.len());
    buffer.extend_from_slice(bytes);
}

/// `buffer` becomes the whole record: header and payload.
fn encode(buffer: &mut Vec<u8>, revision: Revision, events: &[Event]) {
    buffer.clear();
    buffer.extend_from_slice(&[0; HEADER]);
    buffer.extend_from_slice(&revision.to_le_bytes());
    put_u32(buffer, events.len());
    for event in events {
        buffer.push(match event.kind {
            EventKind::Put => 1,
            EventKind::Delete => 2,
        });
        buffer.extend_from_slice(&event.kv.create_revision.to_le_bytes());
        buffer.extend_from_slice(&event.kv.mod_revision.to_le_bytes());
        put_bytes(buffer, event.kv.key.as_bytes());
        put_bytes(buffer, &event.kv.value);
    }
    let payload = buffer.len() - HEADER;
    let crc = crc32fast::hash(&buffer[HEADER..]);
    buffer[..4].copy_from_slice(&(payload as u32).to_le_bytes());
    buffer[4..HEADER].copy_from_slice(&crc.to_le_bytes());
}

/// Every whole record at the start of `bytes`, into `records`. A recycled
/// segment still holds its old records behind the new ones: one that does
/// not continue the revisions of the record before it ends the segment
/// too (and they were all in SQLite before the segment was recycled).
fn read_records(bytes: &[u8], records: &mut Vec<Record>) {
    let mut at = 0;
    let mut previous: Option<Revision> = None;
    while let Some(header) = bytes.get(at..at + HEADER) {
        let length = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        if length == 0 {
            return;
        }
        let Some(payload) = bytes.get(at + HEADER..at + HEADER + length) else {
            return;
        };
        if crc32fast::hash(payload) != crc {
            return;
        }
        let Some(record) = decode(payload) else {
            return;
        };
        // Records follow each other: the next one's first revision is the
        // one after the last record's (every revision in a batch has an
        // event). An old record never does, even from a data dir whose
        // revisions ran higher.
        let first = record.events.iter().map(|e| e.kv.mod_revision).min();
        if let Some(previous) = previous {
            if record.revision <= previous || first != Some(previous + 1) {
                return;
            }
        }
        previous = Some(record.revision);
        records.push(record);
        at += HEADER + length;
    }
}

/// Reads a payload front to back; `None` past its end.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.bytes.get(..n)?, self.bytes.get(n..)?);
        self.bytes = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<usize> {
        let b = self.take(4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }

    fn i64(&mut self) -> Option<i64> {
        let b = self.take(8)?;
        Some(i64::from_le_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()?;
        self.take(n)
    }
}

fn decode(payload: &[u8]) -> Option<Record> {
    let mut reader = Reader { bytes: payload };
    let revision = reader.i64()?;
    let count = reader.u32()?;
    let mut events = Vec::with_capacity(count.min(payload.len()));
    for _ in 0..count {
        let kind = match reader.take(1)?[0] {
            1 => EventKind::Put,
            2 => EventKind::Delete,
            _ => return None,
        };
        let create_revision = reader.i64()?;
        let mod_revision = reader.i64()?;
        let key = String::from_utf8(reader.bytes()?.to_vec()).ok()?;
        let value = bytes::Bytes::copy_from_slice(reader.bytes()?);
        events.push(Event {
            kind,
            kv: KeyValue {
                key,
                value,
                create_revision,
                mod_revision,
            },
        });
    }
    reader
        .bytes
        .is_empty()
        .then_some(Record { revision, events })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::backend::put_at as put;

    fn delete(key: &str, revision: Revision) -> Event {
        Event {
            kind: EventKind::Delete,
            kv: KeyValue {
                key: key.into(),
                value: bytes::Bytes::new(),
                create_revision: 1,
                mod_revision: revision,
            },
        }
    }

    fn segment_files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read dir")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| name.ends_with(".seg") && name != SPARE)
            .collect();
        names.sort();
        names
    }

    /// What was appended comes back in order after a reopen, puts and
    /// deletes alike, across segment rotations; a record larger than a
    /// segment gets one of its own.
    #[test]
    fn records_come_back_in_order_across_segments() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut journal, records) = Journal::open(dir.path(), 4096).expect("open");
        assert!(records.is_empty());
        let mut expected = Vec::new();
        for revision in 1..=40 {
            let events = if revision % 7 == 0 {
                vec![delete("/a", revision)]
            } else {
                vec![put(&format!("/k{revision}"), &"v".repeat(300), revision)]
            };
            journal.append(revision, &events).expect("append");
            expected.push(Record { revision, events });
        }
        let huge = vec![put("/huge", &"h".repeat(10_000), 41)];
        journal.append(41, &huge).expect("append huge");
        expected.push(Record {
            revision: 41,
            events: huge,
        });
        journal
            .append(42, &[put("/after", "x", 42)])
            .expect("append");
        expected.push(Record {
            revision: 42,
            events: vec![put("/after", "x", 42)],
        });
        assert!(
            segment_files(dir.path()).len() > 3,
            "{:?}",
            segment_files(dir.path())
        );
        drop(journal);
        let (_, records) = Journal::open(dir.path(), 4096).expect("reopen");
        assert_eq!(records, expected);
    }

    /// Replay stops at a torn record: cut short, or its bytes changed.
    #[test]
    fn replay_stops_at_a_torn_record() {
        for damage in ["cut", "flip"] {
            let dir = tempfile::tempdir().expect("tempdir");
            let (mut journal, _) = Journal::open(dir.path(), 1 << 16).expect("open");
            for revision in 1..=3 {
                journal
                    .append(revision, &[put("/k", "value", revision)])
                    .expect("append");
            }
            drop(journal);
            let name = segment_files(dir.path()).remove(0);
            let path = dir.path().join(name);
            let mut bytes = std::fs::read(&path).expect("read");
            let record = bytes.len() - bytes.iter().rev().take_while(|b| **b == 0).count();
            let third = record - record / 3;
            match damage {
                "cut" => bytes[third..].iter_mut().for_each(|b| *b = 0),
                _ => bytes[record - 2] ^= 0x40,
            }
            std::fs::write(&path, &bytes).expect("write");
            let (_, records) = Journal::open(dir.path(), 1 << 16).expect("reopen");
            let revisions: Vec<Revision> = records.iter().map(|r| r.revision).collect();
            assert_eq!(revisions, vec![1, 2], "{damage}");
        }
    }

    /// Closed segments go once their last record is durable elsewhere; the
    /// segment being appended to stays; `clear` removes them all.
    #[test]
    fn segments_are_removed_through_a_revision() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut journal, _) = Journal::open(dir.path(), 2048).expect("open");
        for revision in 1..=12 {
            journal
                .append(revision, &[put("/k", &"v".repeat(600), revision)])
                .expect("append");
        }
        let before = segment_files(dir.path());
        assert!(before.len() >= 4, "{before:?}");
        let segments = journal.segments();
        assert_eq!(segments.remove_through(0).expect("remove"), 0);
        let removed = segments.remove_through(6).expect("remove");
        assert!(removed >= 1);
        let after = segment_files(dir.path());
        assert_eq!(after.len(), before.len() - removed);
        // Every record above 6 is still there to replay.
        let (_, records) = Journal::open(dir.path(), 2048).expect("reopen");
        assert!(records.iter().any(|r| r.revision == 7));
        assert_eq!(records.last().map(|r| r.revision), Some(12));
        // Only closed segments go: the one being appended to stays.
        segments.remove_through(Revision::MAX).expect("remove");
        assert_eq!(segment_files(dir.path()).len(), 1);
        let (_, records) = Journal::open(dir.path(), 2048).expect("reopen");
        assert_eq!(records.last().map(|r| r.revision), Some(12));
        journal.clear().expect("clear");
        assert!(segment_files(dir.path()).is_empty());
    }

    /// An applied segment becomes the spare; the records written into it
    /// next are read back, its old ones behind them are not.
    #[test]
    fn a_recycled_segment_replays_only_its_new_records() {
        let dir = tempfile::tempdir().expect("tempdir");
        prepare_spare(dir.path(), 8192).expect("spare");
        let (mut journal, _) = Journal::open(dir.path(), 8192).expect("open");
        for revision in 1..=20 {
            journal
                .append(revision, &[put("/old", &"o".repeat(700), revision)])
                .expect("append");
        }
        let segments = journal.segments();
        assert!(
            segments
                .recycle_through(20, dir.path(), 8192)
                .expect("recycle")
                >= 1
        );
        assert!(
            dir.path().join(SPARE).exists(),
            "a full-sized segment is kept as the spare"
        );
        journal.clear().expect("clear");
        assert_eq!(segment_files(dir.path()), Vec::<String>::new());
        // The next records go into the recycled file, over its old ones and
        // of the same size, so an old record starts right after them.
        journal
            .append(21, &[put("/new", &"a".repeat(700), 21)])
            .expect("append");
        journal
            .append(22, &[put("/new", &"b".repeat(700), 22)])
            .expect("append");
        assert!(!dir.path().join(SPARE).exists());
        let (_, records) = Journal::open(dir.path(), 8192).expect("reopen");
        let revisions: Vec<Revision> = records.iter().map(|r| r.revision).collect();
        assert_eq!(revisions, vec![21, 22]);
    }

    /// Old records whose revisions run higher than the new ones (a spare
    /// left from a data dir that went further) do not continue them either.
    #[test]
    fn old_records_with_higher_revisions_are_not_replayed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut journal, _) = Journal::open(dir.path(), 8192).expect("open");
        for revision in 100..=120 {
            journal
                .append(revision, &[put("/old", &"o".repeat(700), revision)])
                .expect("append");
        }
        journal
            .segments()
            .recycle_through(120, dir.path(), 8192)
            .expect("recycle");
        journal.clear().expect("clear");
        assert!(dir.path().join(SPARE).exists());
        let (mut journal, _) = Journal::open(dir.path(), 8192).expect("reopen");
        for revision in 1..=2 {
            journal
                .append(revision, &[put("/new", &"n".repeat(700), revision)])
                .expect("append");
        }
        let (_, records) = Journal::open(dir.path(), 8192).expect("reopen");
        let revisions: Vec<Revision> = records.iter().map(|r| r.revision).collect();
        assert_eq!(revisions, vec![1, 2]);
    }

    /// A rotation takes the spare prepared ahead instead of making one.
    #[test]
    fn rotation_takes_the_prepared_spare() {
        let dir = tempfile::tempdir().expect("tempdir");
        prepare_spare(dir.path(), 4096).expect("spare");
        assert!(dir.path().join(SPARE).exists());
        let (mut journal, _) = Journal::open(dir.path(), 4096).expect("open");
        journal.append(5, &[put("/k", "v", 5)]).expect("append");
        assert!(!dir.path().join(SPARE).exists());
        assert_eq!(segment_files(dir.path()), vec![segment_name(5)]);
    }
}
