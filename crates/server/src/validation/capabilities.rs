//! kube's `pkg/capabilities`: the process-wide setting `--allow-privileged`
//! sets once at start, read by pod validation (`ValidateSecurityContext`,
//! `validateWindowsHostProcessPod`). kube-apiserver's default is false.

use std::sync::atomic::{AtomicBool, Ordering};

static ALLOW_PRIVILEGED: AtomicBool = AtomicBool::new(false);

/// `capabilities.Get().AllowPrivileged`.
pub fn allow_privileged() -> bool {
    ALLOW_PRIVILEGED.load(Ordering::Relaxed)
}

/// `capabilities.Setup(allowPrivileged, ...)`, from `--allow-privileged`.
pub fn set_allow_privileged(allow: bool) {
    ALLOW_PRIVILEGED.store(allow, Ordering::Relaxed);
}
