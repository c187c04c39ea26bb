//! `ferrokube envtest-assets DIR`: the three binaries envtest looks for in
//! `$KUBEBUILDER_ASSETS` (controller-runtime `pkg/internal/testing/process`
//! `BinPathFinder`: `kube-apiserver`, `etcd`, `kubectl`).
//!
//! - `kube-apiserver`: a shell script running `ferrokube serve
//!   --storage-backend=memory` with envtest's flags appended. The explicit
//!   backend wins over the `--etcd-servers` envtest passes (which alone
//!   would mean etcd, as in kube), so the server runs on its memory store;
//!   a flag envtest users add later (`--storage-backend=sqlite`, say) still
//!   overrides it, the last one winning.
//! - `etcd`: a shell script running `ferrokube envtest-etcd`, which serves
//!   only `/health` on the client URL (see `etcd_health.rs`).
//! - `kubectl`: a symlink to the `kubectl` found on `PATH`, when there is one.

use std::path::{Path, PathBuf};

/// The names envtest looks for.
pub const KUBE_APISERVER: &str = "kube-apiserver";
pub const ETCD: &str = "etcd";
pub const KUBECTL: &str = "kubectl";

#[derive(Debug, thiserror::Error)]
pub enum AssetsError {
    #[error("creating {path}: {source}")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("writing {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} exists and is not a file ferrokube envtest-assets wrote; remove it first")]
    Occupied { path: PathBuf },
}

/// What the assets point at.
#[derive(Debug, Clone)]
pub struct AssetsOptions {
    /// The ferrokube binary the scripts run (absolute).
    pub ferrokube: PathBuf,
    /// The kubectl the `kubectl` symlink names; none: no `kubectl` asset.
    pub kubectl: Option<PathBuf>,
}

/// What [`write_assets`] made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assets {
    pub kube_apiserver: PathBuf,
    pub etcd: PathBuf,
    pub kubectl: Option<PathBuf>,
}

/// The marker line of every script this module writes: a rerun replaces
/// its own files and refuses to replace anything else.
const MARKER: &str = "# written by ferrokube envtest-assets";

/// `'text'` for `sh`, with every `'` closed, escaped and reopened.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The script that runs `ferrokube <arguments> "$@"`.
pub fn script(ferrokube: &Path, arguments: &[&str]) -> String {
    let mut line = format!("exec {}", shell_quote(&ferrokube.display().to_string()));
    for argument in arguments {
        line.push(' ');
        line.push_str(&shell_quote(argument));
    }
    format!("#!/bin/sh\n{MARKER}\n{line} \"$@\"\n")
}

/// The `kubectl` on `PATH` (the first executable file named so).
pub fn kubectl_on_path() -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|directory| directory.join(KUBECTL))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .map(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

/// Lay out `directory` (created when missing) for `KUBEBUILDER_ASSETS`.
pub fn write_assets(directory: &Path, options: &AssetsOptions) -> Result<Assets, AssetsError> {
    std::fs::create_dir_all(directory).map_err(|source| AssetsError::Create {
        path: directory.to_path_buf(),
        source,
    })?;
    let kube_apiserver = directory.join(KUBE_APISERVER);
    write_script(
        &kube_apiserver,
        &script(&options.ferrokube, &["serve", "--storage-backend=memory"]),
    )?;
    let etcd = directory.join(ETCD);
    write_script(&etcd, &script(&options.ferrokube, &["envtest-etcd"]))?;
    let kubectl = match &options.kubectl {
        Some(target) => {
            let link = directory.join(KUBECTL);
            replace_symlink(&link, target)?;
            Some(link)
        }
        None => None,
    };
    Ok(Assets {
        kube_apiserver,
        etcd,
        kubectl,
    })
}

/// Whether `path` may be replaced: absent, a symlink, or a script of ours.
fn ours_or_absent(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Err(_) => true,
        Ok(metadata) if metadata.file_type().is_symlink() => true,
        Ok(metadata) if metadata.is_file() => std::fs::read_to_string(path)
            .map(|text| text.lines().nth(1) == Some(MARKER))
            .unwrap_or(false),
        Ok(_) => false,
    }
}

fn write_script(path: &Path, text: &str) -> Result<(), AssetsError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    if !ours_or_absent(path) {
        return Err(AssetsError::Occupied {
            path: path.to_path_buf(),
        });
    }
    let write = |source| AssetsError::Write {
        path: path.to_path_buf(),
        source,
    };
    // Written beside and renamed: a script being run is never half written.
    let temporary = path.with_extension("tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o755)
        .open(&temporary)
        .map_err(write)?;
    file.write_all(text.as_bytes()).map_err(write)?;
    drop(file);
    std::fs::rename(&temporary, path).map_err(write)
}

fn replace_symlink(link: &Path, target: &Path) -> Result<(), AssetsError> {
    if !ours_or_absent(link) {
        return Err(AssetsError::Occupied {
            path: link.to_path_buf(),
        });
    }
    let write = |source| AssetsError::Write {
        path: link.to_path_buf(),
        source,
    };
    match std::fs::remove_file(link) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(write(error)),
    }
    std::os::unix::fs::symlink(target, link).map_err(write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quote_survives_quotes_and_spaces() {
        assert_eq!(shell_quote("/usr/bin/ferrokube"), "'/usr/bin/ferrokube'");
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
    }

    #[test]
    fn scripts_exec_ferrokube_with_the_callers_arguments() {
        assert_eq!(
            script(Path::new("/opt/fk/ferrokube"), &["serve", "--storage-backend=memory"]),
            "#!/bin/sh\n# written by ferrokube envtest-assets\nexec '/opt/fk/ferrokube' 'serve' '--storage-backend=memory' \"$@\"\n"
        );
    }

    #[test]
    fn lays_out_the_three_assets_and_reruns_over_its_own() -> Result<(), Box<dyn std::error::Error>>
    {
        use std::os::unix::fs::PermissionsExt as _;
        let directory = tempfile::tempdir()?;
        let assets_dir = directory.path().join("assets");
        let options = AssetsOptions {
            ferrokube: PathBuf::from("/opt/fk/ferrokube"),
            kubectl: Some(PathBuf::from("/usr/bin/kubectl")),
        };
        let assets = write_assets(&assets_dir, &options)?;
        assert_eq!(assets.kube_apiserver, assets_dir.join("kube-apiserver"));
        for script in [&assets.kube_apiserver, &assets.etcd] {
            let mode = std::fs::metadata(script)?.permissions().mode();
            assert_eq!(mode & 0o777, 0o755, "{}", script.display());
        }
        assert!(std::fs::read_to_string(&assets.etcd)?.contains("'envtest-etcd' \"$@\""));
        assert_eq!(
            std::fs::read_link(assets_dir.join("kubectl"))?,
            PathBuf::from("/usr/bin/kubectl")
        );
        // Again: its own files are replaced.
        assert_eq!(write_assets(&assets_dir, &options)?, assets);
        // Someone else's file is not.
        std::fs::write(&assets.etcd, "#!/bin/sh\nexec /usr/bin/etcd \"$@\"\n")?;
        let refused = write_assets(&assets_dir, &options);
        assert!(
            matches!(&refused, Err(AssetsError::Occupied { path }) if path == &assets.etcd),
            "{refused:?}"
        );
        Ok(())
    }
}
