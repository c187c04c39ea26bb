//! What the bench's integration tests share: the ferrokube binary they
//! start.

use std::path::PathBuf;

/// `$FERROKUBE_BIN`, else `ferrokube` in this test's profile directory
/// (or the workspace's debug/release one). Never built from here.
pub fn ferrokube_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("FERROKUBE_BIN") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "FERROKUBE_BIN={} is not a file",
            path.display()
        );
        return path;
    }
    let mut candidates = Vec::new();
    // target/<profile>/deps/smoke-<hash> → target/<profile>/ferrokube
    if let Ok(exe) = std::env::current_exe() {
        if let Some(profile_dir) = exe.parent().and_then(|deps| deps.parent()) {
            candidates.push(profile_dir.join("ferrokube"));
        }
    }
    let workspace_target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target");
    candidates.push(workspace_target.join("debug/ferrokube"));
    candidates.push(workspace_target.join("release/ferrokube"));
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no ferrokube binary: looked at {candidates:?}. Build it first \
                 (`cargo build -p ferrokube`) or set FERROKUBE_BIN=/path/to/ferrokube"
            )
        })
}
