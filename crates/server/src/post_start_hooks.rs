//! Post-start hooks as kube-apiserver's generic server keeps them
//! (`staging/src/k8s.io/apiserver/pkg/server/hooks.go`): work that runs once
//! the server is up, each reported by `/healthz`, `/livez` and `/readyz` as
//! `poststarthook/<name>`, failing until it has finished.

use std::sync::Mutex;

/// The hooks registered on one server and whether each has finished.
#[derive(Debug, Default)]
pub struct PostStartHooks {
    hooks: Mutex<Vec<(String, bool)>>,
    completed: tokio::sync::Notify,
}

impl PostStartHooks {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(String, bool)>> {
        self.hooks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers `name` as running (a name registered twice is kept once).
    pub fn register(&self, name: &str) {
        let mut hooks = self.lock();
        if !hooks.iter().any(|(hook, _)| hook == name) {
            hooks.push((name.to_string(), false));
        }
    }

    /// Marks `name` finished.
    pub fn complete(&self, name: &str) {
        for (hook, done) in self.lock().iter_mut() {
            if hook == name {
                *done = true;
            }
        }
        self.completed.notify_waiters();
    }

    /// Returns once every hook registered so far has finished (`/readyz` passes them).
    pub async fn all_completed(&self) {
        loop {
            let completed = self.completed.notified();
            tokio::pin!(completed);
            completed.as_mut().enable();
            if self.lock().iter().all(|(_, done)| *done) {
                return;
            }
            completed.await;
        }
    }

    /// The health checks, `poststarthook/<name>` and whether it passes, in
    /// registration order.
    pub fn checks(&self) -> Vec<(String, bool)> {
        self.lock()
            .iter()
            .map(|(name, done)| (format!("poststarthook/{name}"), *done))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_completed_waits_for_every_registered_hook() {
        use futures::FutureExt;
        let hooks = PostStartHooks::default();
        assert!(
            hooks.all_completed().now_or_never().is_some(),
            "no hook: ready"
        );
        hooks.register("rbac/bootstrap-roles");
        hooks.register("other");
        let mut waiting = Box::pin(hooks.all_completed());
        assert!((&mut waiting).now_or_never().is_none());
        hooks.complete("rbac/bootstrap-roles");
        assert!(
            (&mut waiting).now_or_never().is_none(),
            "one hook still runs"
        );
        hooks.complete("other");
        assert!(waiting.now_or_never().is_some());
    }

    #[test]
    fn a_hook_fails_its_check_until_it_completes() {
        let hooks = PostStartHooks::default();
        assert!(hooks.checks().is_empty());
        hooks.register("rbac/bootstrap-roles");
        hooks.register("rbac/bootstrap-roles");
        assert_eq!(
            hooks.checks(),
            vec![("poststarthook/rbac/bootstrap-roles".to_string(), false)]
        );
        hooks.complete("rbac/bootstrap-roles");
        assert_eq!(
            hooks.checks(),
            vec![("poststarthook/rbac/bootstrap-roles".to_string(), true)]
        );
    }
}
