//! The data directory: made private to its owner (0700) and held by one
//! process at a time, so two servers never write one store.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// The lock file inside the data directory.
const LOCK_FILE: &str = "lock";

#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    #[error("creating data directory {path}: {source}")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("another process is using the data directory {path} (it holds {path}/lock); stop it or choose another --data-dir")]
    InUse { path: PathBuf },
}

/// The data directory, locked for as long as this value lives.
#[derive(Debug)]
pub struct DataDir {
    _lock: File,
}

impl DataDir {
    /// Creates `path` (0700) when missing and takes its lock, or fails at
    /// once when another process holds it.
    pub fn open(path: &Path) -> Result<DataDir, DataDirError> {
        let create = |source| DataDirError::Create {
            path: path.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(path).map_err(create)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).map_err(create)?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path.join(LOCK_FILE))
            .map_err(create)?;
        match lock.try_lock() {
            Ok(()) => Ok(DataDir { _lock: lock }),
            Err(std::fs::TryLockError::WouldBlock) => Err(DataDirError::InUse {
                path: path.to_path_buf(),
            }),
            Err(std::fs::TryLockError::Error(source)) => Err(create(source)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("data");
        let held = DataDir::open(&path).expect("first");
        let mode = std::fs::metadata(&path).expect("dir").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let second = DataDir::open(&path).expect_err("second");
        assert!(second
            .to_string()
            .starts_with("another process is using the data directory"));
        drop(held);
        DataDir::open(&path).expect("free again");
    }
}
