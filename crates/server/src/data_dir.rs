//! The data directory: made private to its owner (the directory 0700, the
//! files in it 0600) and held by one process at a time, so two servers never
//! write one store.

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
    #[error("making the files in the data directory {path} private: {source}")]
    Private {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("another process is using the data directory {path} (it holds {path}/lock); stop it or choose another --data-dir")]
    InUse { path: PathBuf },
}

/// The data directory, locked for as long as this value lives.
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    _lock: File,
}

/// How deep [`DataDir::make_files_private`] looks (the store's files are at
/// the top, the PKI one level down).
const MAX_DEPTH: usize = 3;

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
            Ok(()) => {
                let data_dir = DataDir {
                    path: path.to_path_buf(),
                    _lock: lock,
                };
                data_dir.make_files_private()?;
                Ok(data_dir)
            }
            Err(std::fs::TryLockError::WouldBlock) => Err(DataDirError::InUse {
                path: path.to_path_buf(),
            }),
            Err(std::fs::TryLockError::Error(source)) => Err(create(source)),
        }
    }
}

impl DataDir {
    /// Takes group and other permissions away from every file and directory
    /// inside (symbolic links are not followed): files SQLite or an older
    /// ferrokube created with the umask's mode (0644) become 0600. Called
    /// when the directory is opened and again once the store has created
    /// its files.
    pub fn make_files_private(&self) -> Result<(), DataDirError> {
        restrict_below(&self.path, MAX_DEPTH).map_err(|source| DataDirError::Private {
            path: self.path.clone(),
            source,
        })
    }
}

fn restrict_below(dir: &Path, depth: usize) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let file_type = entry.file_type()?;
        if file_type.is_symlink() {
            continue;
        }
        let path = entry.path();
        let mode = entry.metadata()?.permissions().mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o700))?;
        }
        if file_type.is_dir() && depth > 1 {
            restrict_below(&path, depth - 1)?;
        }
    }
    Ok(())
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

    #[test]
    fn files_inside_become_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("data");
        std::fs::create_dir_all(path.join("pki")).expect("mkdir");
        let mode = |name: &str| {
            std::fs::metadata(path.join(name))
                .expect("stat")
                .permissions()
                .mode()
                & 0o777
        };
        for name in ["store.db", "pki/ca.crt"] {
            std::fs::write(path.join(name), b"x").expect("write");
            std::fs::set_permissions(path.join(name), std::fs::Permissions::from_mode(0o644))
                .expect("chmod");
        }
        std::fs::set_permissions(path.join("pki"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        let held = DataDir::open(&path).expect("open");
        assert_eq!(mode("store.db"), 0o600);
        assert_eq!(mode("pki/ca.crt"), 0o600);
        assert_eq!(mode("pki"), 0o700);
        // A file made after the start, then made private on request.
        std::fs::write(path.join("store.db-wal"), b"x").expect("write");
        std::fs::set_permissions(
            path.join("store.db-wal"),
            std::fs::Permissions::from_mode(0o644),
        )
        .expect("chmod");
        held.make_files_private().expect("restrict");
        assert_eq!(mode("store.db-wal"), 0o600);
    }
}
