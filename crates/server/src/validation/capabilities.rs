//! kube's `pkg/capabilities`: `--allow-privileged`, set once at start and
//! read by pod validation (`ValidateSecurityContext`,
//! `validateWindowsHostProcessPod`). kube-apiserver's default is false.
//!
//! kube keeps it process-wide, and so does the binary. A server embedded in
//! a test process (`ferrokube-testing`) runs on threads of its own and sets
//! it for those threads, so servers side by side keep their own setting.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

static ALLOW_PRIVILEGED: AtomicBool = AtomicBool::new(false);

thread_local! {
    static THREAD_ALLOW_PRIVILEGED: Cell<Option<bool>> = const { Cell::new(None) };
}

/// `capabilities.Get().AllowPrivileged`: this thread's setting, else the
/// process's.
pub fn allow_privileged() -> bool {
    THREAD_ALLOW_PRIVILEGED
        .with(Cell::get)
        .unwrap_or_else(|| ALLOW_PRIVILEGED.load(Ordering::Relaxed))
}

/// `capabilities.Setup(allowPrivileged, ...)`, from `--allow-privileged`.
pub fn set_allow_privileged(allow: bool) {
    ALLOW_PRIVILEGED.store(allow, Ordering::Relaxed);
}

/// The setting for the calling thread only (a server's own threads).
pub fn set_thread_allow_privileged(allow: bool) {
    THREAD_ALLOW_PRIVILEGED.with(|setting| setting.set(Some(allow)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threads_setting_wins_over_the_processs() {
        let on_thread = std::thread::spawn(|| {
            set_thread_allow_privileged(true);
            allow_privileged()
        });
        assert_eq!(on_thread.join().ok(), Some(true));
        let unset = std::thread::spawn(allow_privileged);
        assert_eq!(
            unset.join().ok(),
            Some(ALLOW_PRIVILEGED.load(Ordering::Relaxed))
        );
    }
}
