//! The store's own threads (committer, applier) log a panic loudly before
//! they end: the requests waiting on them then fail with `Closed`, and the
//! log says why.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`; a panic in it is logged as an error naming `thread` and
/// what its end means (`consequence`), and does not unwind further.
pub(crate) fn logged(thread: &str, consequence: &str, body: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(body)) {
        let message = payload
            .downcast_ref::<&str>()
            .map(|text| (*text).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        tracing::error!(thread, panic = %message, "{consequence}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_and_the_caller_goes_on() {
        let mut ran_after = false;
        logged("test", "the test thread panicked", || panic!("boom"));
        logged("test", "no panic", || ran_after = true);
        assert!(ran_after);
    }
}
