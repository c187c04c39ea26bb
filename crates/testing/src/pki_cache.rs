//! Certificates made once per process: the CA, serving and admin
//! certificates of `ferrokube::pki` and the service-account signing key,
//! generated into a temporary directory on the first start, kept in memory,
//! and written into each new server's data directory, where the server
//! finds and reuses them. Every in-process server then trusts the same CA,
//! and a start costs a few small file writes instead of key generation.

use std::path::Path;
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The files of `<data-dir>/pki`, by name.
struct PkiFiles(Vec<(String, Vec<u8>)>);

static FILES: OnceLock<Result<PkiFiles, String>> = OnceLock::new();

/// The SANs the server asks for on 127.0.0.1 (its bind address).
fn sans() -> Vec<String> {
    vec!["127.0.0.1".to_string()]
}

fn generate() -> Result<PkiFiles, String> {
    let directory = tempfile::tempdir().map_err(|error| error.to_string())?;
    let pki_dir = directory.path().join("pki");
    ferrokube::pki::ensure(&pki_dir, &sans()).map_err(|error| error.to_string())?;
    let (_, service_account_key) =
        ferrokube::serviceaccount::Signer::generate().map_err(|error| error.to_string())?;
    std::fs::write(pki_dir.join("service-account.key"), service_account_key)
        .map_err(|error| error.to_string())?;
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&pki_dir).map_err(|error| error.to_string())? {
        let entry = entry.map_err(|error| error.to_string())?;
        let contents = std::fs::read(entry.path()).map_err(|error| error.to_string())?;
        files.push((entry.file_name().to_string_lossy().into_owned(), contents));
    }
    Ok(PkiFiles(files))
}

/// Write the process's certificates into `<data_dir>/pki` (mode 0700 / 0600).
pub(crate) fn install(data_dir: &Path) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let files = FILES
        .get_or_init(generate)
        .as_ref()
        .map_err(|message| Error::Pki(message.clone()))?;
    let pki_dir = data_dir.join("pki");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&pki_dir)
        .map_err(|error| Error::Pki(error.to_string()))?;
    for (name, contents) in &files.0 {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(pki_dir.join(name))
            .map_err(|error| Error::Pki(format!("{name}: {error}")))?;
        file.write_all(contents)
            .map_err(|error| Error::Pki(format!("{name}: {error}")))?;
    }
    Ok(())
}
