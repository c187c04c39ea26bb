//! The audit log file with lumberjack's rotation (`gopkg.in/natefinch/
//! lumberjack.v2`, which kube's `--audit-log-max*` flags configure): a
//! write that would take the file past `maxsize` MiB (0: lumberjack's
//! 100) first renames it to `<name>-<UTC time>.<ext>` (time as
//! `2006-01-02T15-04-05.000`) and starts a new one with the old mode; then
//! backups beyond `maxbackup` (0: all kept) and older than `maxage` days
//! (0: kept) are removed, oldest first.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const MEGABYTE: u64 = 1024 * 1024;
/// lumberjack's `defaultMaxSize` (MiB) when `MaxSize` is 0.
const DEFAULT_MAX_SIZE_MB: u64 = 100;

/// The rotation settings, as the flags give them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rotation {
    /// `--audit-log-maxsize` (MiB; 0: 100).
    pub max_size_mb: u64,
    /// `--audit-log-maxbackup` (0: keep all).
    pub max_backups: usize,
    /// `--audit-log-maxage` (days; 0: keep all).
    pub max_age_days: u64,
}

/// `lumberjack.Logger`.
pub struct RotatingFile {
    path: PathBuf,
    rotation: Rotation,
    /// Lines are buffered and reach the file at [`RotatingFile::flush`]
    /// (the writer flushes each batch) or when the buffer fills.
    file: Option<BufWriter<File>>,
    size: u64,
}

/// The write buffer: a batch of events in one system call.
const BUFFER: usize = 64 * 1024;

impl RotatingFile {
    /// kube's `ensureLogFile`: the directory (0700) and the file (0600)
    /// exist before the server starts, so a bad path fails the start.
    pub fn create(path: &Path, rotation: Rotation) -> std::io::Result<RotatingFile> {
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)?;
        }
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        Ok(RotatingFile {
            path: path.to_path_buf(),
            rotation,
            file: None,
            size: 0,
        })
    }

    fn max_size(&self) -> u64 {
        match self.rotation.max_size_mb {
            0 => DEFAULT_MAX_SIZE_MB * MEGABYTE,
            size => size.saturating_mul(MEGABYTE),
        }
    }

    /// `Logger.Write`: one event line, rotating first when it would not fit.
    pub fn write(&mut self, line: &[u8]) -> std::io::Result<()> {
        let length = line.len() as u64;
        let max = self.max_size();
        if length > max {
            return Err(std::io::Error::other(format!(
                "write length {length} exceeds maximum file size {max}"
            )));
        }
        if self.file.is_none() {
            self.open_existing_or_new(length)?;
        }
        if self.size + length > max {
            self.rotate()?;
        }
        let Some(file) = self.file.as_mut() else {
            return Err(std::io::Error::other("the audit log is not open"));
        };
        file.write_all(line)?;
        self.size += length;
        Ok(())
    }

    /// Writes what is buffered to the file.
    pub fn flush(&mut self) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }

    /// `openExistingOrNew`: append to the file unless this write would
    /// reach the limit.
    fn open_existing_or_new(&mut self, length: u64) -> std::io::Result<()> {
        let size = match std::fs::metadata(&self.path) {
            Ok(metadata) => metadata.len(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return self.open_new();
            }
            Err(error) => return Err(error),
        };
        if size + length >= self.max_size() {
            return self.rotate();
        }
        match OpenOptions::new().append(true).open(&self.path) {
            Ok(file) => {
                self.file = Some(BufWriter::with_capacity(BUFFER, file));
                self.size = size;
                Ok(())
            }
            Err(_) => self.open_new(),
        }
    }

    /// `rotate`: close, rename to a backup, open anew, then `millRunOnce`.
    fn rotate(&mut self) -> std::io::Result<()> {
        if let Some(mut file) = self.file.take() {
            file.flush()?;
        }
        self.open_new()?;
        self.remove_old_backups();
        Ok(())
    }

    /// `openNew`: the current file becomes a backup; the new one keeps its mode.
    fn open_new(&mut self) -> std::io::Result<()> {
        let mut mode = 0o600;
        if let Ok(metadata) = std::fs::metadata(&self.path) {
            mode = metadata.permissions().mode() & 0o7777;
            std::fs::rename(&self.path, self.backup_name(SystemTime::now()))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .mode(mode)
            .open(&self.path)?;
        self.file = Some(BufWriter::with_capacity(BUFFER, file));
        self.size = 0;
        Ok(())
    }

    /// The name's stem and extension (`audit` and `.log`).
    fn prefix_and_extension(&self) -> (String, String) {
        let file_name = self
            .path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let extension = self
            .path
            .extension()
            .map(|extension| format!(".{}", extension.to_string_lossy()))
            .unwrap_or_default();
        let stem = file_name[..file_name.len() - extension.len()].to_string();
        (format!("{stem}-"), extension)
    }

    /// `backupName`: `<dir>/<stem>-<2006-01-02T15-04-05.000><ext>`, UTC.
    fn backup_name(&self, at: SystemTime) -> PathBuf {
        let (prefix, extension) = self.prefix_and_extension();
        let name = format!("{prefix}{}{extension}", backup_time(at));
        self.path.with_file_name(name)
    }

    /// `millRunOnce` without compression: the backups beyond `maxbackup`
    /// and those older than `maxage` days go.
    fn remove_old_backups(&self) {
        if self.rotation.max_backups == 0 && self.rotation.max_age_days == 0 {
            return;
        }
        let directory = match self.path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let (prefix, extension) = self.prefix_and_extension();
        let Ok(entries) = std::fs::read_dir(&directory) else {
            return;
        };
        // The timestamp sorts as it reads: newest first.
        let mut backups: Vec<(String, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let stamp = name.strip_prefix(&prefix)?.strip_suffix(&extension)?;
                is_backup_time(stamp).then(|| (stamp.to_string(), entry.path()))
            })
            .collect();
        backups.sort_by(|a, b| b.0.cmp(&a.0));
        let mut remove = Vec::new();
        if self.rotation.max_backups > 0 && backups.len() > self.rotation.max_backups {
            remove.extend(backups.split_off(self.rotation.max_backups));
        }
        if self.rotation.max_age_days > 0 {
            let age = Duration::from_secs(self.rotation.max_age_days.saturating_mul(86_400));
            let cutoff = backup_time(
                SystemTime::now()
                    .checked_sub(age)
                    .unwrap_or(SystemTime::UNIX_EPOCH),
            );
            remove.extend(backups.into_iter().filter(|(stamp, _)| *stamp < cutoff));
        }
        for (_, path) in remove {
            if let Err(error) = std::fs::remove_file(&path) {
                tracing::warn!(path = %path.display(), %error, "removing an old audit log backup");
            }
        }
    }
}

/// lumberjack's `backupTimeFormat` in UTC: `2006-01-02T15-04-05.000`.
fn backup_time(at: SystemTime) -> String {
    let since = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = i64::try_from(since.as_secs()).unwrap_or(i64::MAX);
    let text = crate::go::time::format_time(seconds, 0, false)
        .unwrap_or_else(|| "9999-12-31T23:59:59Z".to_string());
    let text = text.trim_end_matches('Z').replace(':', "-");
    format!("{text}.{:03}", since.subsec_millis())
}

/// Whether `text` has the shape of [`backup_time`] (`timeFromName`
/// ignores files whose time does not parse).
fn is_backup_time(text: &str) -> bool {
    let pattern = "dddd-dd-ddTdd-dd-dd.ddd";
    text.len() == pattern.len()
        && text
            .bytes()
            .zip(pattern.bytes())
            .all(|(byte, expected)| match expected {
                b'd' => byte.is_ascii_digit(),
                other => byte == other,
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backups(directory: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != "audit.log")
            .collect();
        names.sort();
        names
    }

    #[test]
    fn backup_names_are_lumberjacks() {
        let at = SystemTime::UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789);
        assert_eq!(backup_time(at), "2023-11-14T22-13-20.123");
        assert!(is_backup_time("2023-11-14T22-13-20.123"));
        assert!(!is_backup_time("2023-11-14T22:13:20.123"));
        let logger = RotatingFile {
            path: PathBuf::from("/var/log/audit.log"),
            rotation: Rotation::default(),
            file: None,
            size: 0,
        };
        assert_eq!(
            logger.backup_name(at),
            PathBuf::from("/var/log/audit-2023-11-14T22-13-20.123.log")
        );
    }

    #[test]
    fn a_full_file_rotates_and_old_backups_go() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("audit.log");
        let rotation = Rotation {
            max_size_mb: 1,
            max_backups: 2,
            max_age_days: 0,
        };
        let mut file = RotatingFile::create(&path, rotation).unwrap();
        let line = vec![b'x'; 400 * 1024];
        // Two lines fit in 1 MiB, a third does not: every third write rotates.
        for _ in 0..8 {
            file.write(&line).unwrap();
            // Backups made in the same millisecond would share a name.
            std::thread::sleep(Duration::from_millis(2));
        }
        let names = backups(directory.path());
        assert_eq!(names.len(), 2, "{names:?}");
        for name in &names {
            let stamp = name
                .strip_prefix("audit-")
                .and_then(|rest| rest.strip_suffix(".log"))
                .unwrap();
            assert!(is_backup_time(stamp), "{name}");
            let size = std::fs::metadata(directory.path().join(name))
                .unwrap()
                .len();
            assert_eq!(size, 800 * 1024);
        }
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 800 * 1024);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let too_big = vec![b'x'; 2 * 1024 * 1024];
        let error = file.write(&too_big).unwrap_err();
        assert_eq!(
            error.to_string(),
            "write length 2097152 exceeds maximum file size 1048576"
        );
    }

    #[test]
    fn an_existing_file_is_appended_to() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("logs").join("audit.log");
        let mut file = RotatingFile::create(&path, Rotation::default()).unwrap();
        file.write(b"one\n").unwrap();
        drop(file);
        let mut file = RotatingFile::create(&path, Rotation::default()).unwrap();
        file.write(b"two\n").unwrap();
        // Lines are buffered until the writer flushes its batch.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\n");
        file.flush().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\n");
        assert!(backups(path.parent().unwrap()).is_empty());
    }
}
