//! The PKI files on disk and the PEM in them.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::PkiError;

pub(super) fn create_dir(path: &Path) -> Result<(), PkiError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path).map_err(|source| PkiError::CreateDir {
        path: path.to_path_buf(),
        source,
    })
}

pub(super) fn read_optional(path: &Path) -> Result<Option<String>, PkiError> {
    match fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PkiError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Both files of a leaf pair, or `None` when either is absent.
pub(super) fn read_pair(cert: &Path, key: &Path) -> Result<Option<(String, String)>, PkiError> {
    Ok(match (read_optional(cert)?, read_optional(key)?) {
        (Some(c), Some(k)) => Some((c, k)),
        _ => None,
    })
}

/// Writes `data` to `path` through a temporary file and a rename, so readers
/// never see half a file, durably: the file is synced before the rename and
/// its directory after it, so a power loss leaves the old file or the whole
/// new one. `mode` applies on Unix.
pub(crate) fn write_file(path: &Path, data: &[u8], mode: u32) -> Result<(), PkiError> {
    write_file_io(path, data, mode).map_err(|source| PkiError::Write {
        path: path.to_path_buf(),
        source,
    })
}

pub(crate) fn write_file_io(path: &Path, data: &[u8], mode: u32) -> io::Result<()> {
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    // A stale temporary file would keep its old mode.
    match fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(&tmp)?;
    file.write_all(data)?;
    file.sync_all()?;
    drop(file);
    fs::rename(&tmp, path)?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// fsync(2) on a directory, so the names created or renamed in it last.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    fs::File::open(dir)?.sync_all()
}

/// Makes an existing file private to its owner: a file written before
/// ferrokube wrote them 0600 keeps its mode otherwise.
pub(super) fn restrict_mode(path: &Path) -> Result<(), PkiError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let restrict = || -> io::Result<()> {
            let mode = fs::metadata(path)?.permissions().mode();
            if mode & 0o077 != 0 {
                fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o700))?;
            }
            Ok(())
        };
        restrict().map_err(|source| PkiError::Write {
            path: path.to_path_buf(),
            source,
        })?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

pub(super) fn all_certs(path: &Path, pem: &str) -> Result<Vec<CertificateDer<'static>>, PkiError> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PkiError::ParseCertificate {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    if certs.is_empty() {
        return Err(PkiError::ParseCertificate {
            path: path.to_path_buf(),
            reason: "no certificate found".into(),
        });
    }
    Ok(certs)
}

pub(super) fn first_cert(path: &Path, pem: &str) -> Result<CertificateDer<'static>, PkiError> {
    let mut certs = all_certs(path, pem)?;
    Ok(certs.swap_remove(0))
}

pub(super) fn first_cert_opt(pem: &str) -> Option<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes()).next()?.ok()
}

pub(super) fn private_key(path: &Path, pem: &str) -> Result<PrivateKeyDer<'static>, PkiError> {
    PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|e| PkiError::ParseKey {
        path: path.to_path_buf(),
        reason: match e {
            pem::Error::NoItemsFound => "no private key found".into(),
            other => other.to_string(),
        },
    })
}
