//! Request authorization as kube-apiserver does it: the request's
//! attributes (`attributes.rs`, kube's `RequestInfo` and
//! `AttributesRecord`), the authorizers of `--authorization-mode`
//! (`mode.rs`) chained behind the `system:masters` privileged-group
//! authorizer, and the 403 a refused request gets (`forbidden.rs`).
//!
//! Upstream files followed (kubernetes/kubernetes):
//! - `staging/src/k8s.io/apiserver/pkg/authorization/union/union.go`: [`Authorizer::authorize`]
//! - `staging/src/k8s.io/apiserver/pkg/authorization/authorizerfactory/builtin.go`
//!   (AlwaysAllow, AlwaysDeny, `NewPrivilegedGroups`)
//! - `pkg/kubeapiserver/authorizer/reload.go` (the privileged group first, then the modes)
//! - `plugin/pkg/auth/authorizer/rbac/`: [`rbac`]
//! - `pkg/registry/authorization/*/rest.go`, `pkg/apis/authorization/validation`: [`access_review`]
//! - `staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go`: [`impersonation`]

pub mod access_review;
mod attributes;
pub mod escalation;
mod forbidden;
pub mod impersonation;
mod mode;
pub mod rbac;

use std::sync::Arc;

pub use attributes::Attributes;
pub use forbidden::{forbidden, forbidden_message};
pub use mode::{parse_modes, Mode, DEFAULT_MODES};

use crate::authn::SYSTEM_MASTERS;
use crate::object::ObjectStore;
use rbac::Rbac;

/// Errors of this module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthzError {
    /// `--authorization-mode` refused, with kube's texts (an aggregate of
    /// them when there are several).
    #[error("{}", aggregate(.0))]
    Modes(Vec<String>),
}

use crate::go::errors::aggregate;

/// What an authorizer decided (`authorizer.Decision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Deny,
    NoOpinion,
}

/// A decision and its reason (`Authorize`'s `(Decision, string)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub verdict: Verdict,
    pub reason: String,
}

impl Decision {
    pub fn allow(reason: impl Into<String>) -> Decision {
        Decision {
            verdict: Verdict::Allow,
            reason: reason.into(),
        }
    }

    pub fn no_opinion(reason: impl Into<String>) -> Decision {
        Decision {
            verdict: Verdict::NoOpinion,
            reason: reason.into(),
        }
    }

    /// Only an Allow lets a request through; Deny and NoOpinion are a 403.
    pub fn allowed(&self) -> bool {
        self.verdict == Verdict::Allow
    }
}

/// What [`Authorizer::rules_for`] resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RulesFor {
    pub rules: Vec<rbac::PolicyRule>,
    /// Some authorizer could not list its rules (none of ferrokube's modes).
    pub incomplete: bool,
    /// Role resolution errors, each as its own message.
    pub errors: Vec<String>,
}

/// The authorizer chain of one server (a clone shares its RBAC resolver).
#[derive(Debug, Clone)]
pub struct Authorizer {
    modes: Vec<Mode>,
    /// RBAC's rule resolver: asked by the chain when RBAC is one of the
    /// modes, and by escalation checks whatever the modes (as kube's RBAC
    /// storages always resolve rules from the RBAC objects).
    rbac: Arc<Rbac>,
}

impl Authorizer {
    /// The chain `modes` name, RBAC reading `store` (and, inside a tokio
    /// runtime, following it until `shutdown` says true).
    pub fn new(
        modes: &[Mode],
        store: &ObjectStore,
        shutdown: tokio::sync::watch::Receiver<bool>,
    ) -> Authorizer {
        let rbac = Arc::new(Rbac::following(store));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(rbac.clone().follow(shutdown));
        }
        Authorizer {
            modes: modes.to_vec(),
            rbac,
        }
    }

    /// A chain over a given RBAC authorizer (tests).
    pub fn with_rbac(modes: &[Mode], rbac: Arc<Rbac>) -> Authorizer {
        Authorizer {
            modes: modes.to_vec(),
            rbac,
        }
    }

    /// The RBAC rule resolver (the rules a user holds: escalation checks,
    /// access reviews).
    pub fn rbac(&self) -> &Arc<Rbac> {
        &self.rbac
    }

    /// The union rule resolver of the modes (`unionAuthzRulesHandler.RulesFor`
    /// over the resolvers `reload.go` registers; the privileged group has
    /// none): the rules `user` holds in `namespace`, whether the list is
    /// incomplete, and the resolution errors (`SelfSubjectRulesReview`).
    pub fn rules_for(&self, user: &crate::authn::UserInfo, namespace: &str) -> RulesFor {
        let mut out = RulesFor::default();
        for mode in &self.modes {
            match mode {
                // `alwaysAllowAuthorizer.RulesFor`: everything, resources and URLs.
                Mode::AlwaysAllow => out.rules.push(rbac::PolicyRule {
                    verbs: vec!["*".into()],
                    api_groups: vec!["*".into()],
                    resources: vec!["*".into()],
                    resource_names: Vec::new(),
                    non_resource_urls: vec!["*".into()],
                }),
                Mode::AlwaysDeny => {}
                Mode::Rbac => {
                    let (rules, errors) = self.rbac.rules_for(user, namespace);
                    out.rules.extend(rules);
                    out.errors.extend(errors.iter().map(ToString::to_string));
                }
            }
        }
        out
    }

    /// The union of the privileged-group authorizer and the modes: the
    /// first Allow or Deny wins; NoOpinions go on, and their reasons are
    /// joined with newlines.
    pub fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        self.decide(attributes, rbac::AllowReason::Describe)
    }

    /// [`Authorizer::authorize`] for a caller that reads only whether the
    /// request is allowed and, if not, why (serving requests, escalation
    /// and unsafe-delete checks): an Allow comes with an empty reason,
    /// which spares formatting it on every request.
    pub fn authorize_request(&self, attributes: &Attributes<'_>) -> Decision {
        self.decide(attributes, rbac::AllowReason::Omit)
    }

    fn decide(&self, attributes: &Attributes<'_>, allow_reason: rbac::AllowReason) -> Decision {
        if attributes.user.groups.iter().any(|g| g == SYSTEM_MASTERS) {
            return Decision::allow("");
        }
        let mut reasons: Vec<String> = Vec::new();
        for mode in &self.modes {
            let decision = match mode {
                Mode::AlwaysAllow => Decision::allow(""),
                Mode::AlwaysDeny => Decision::no_opinion("Everything is forbidden."),
                Mode::Rbac => self.rbac.decide(attributes, allow_reason),
            };
            if decision.verdict != Verdict::NoOpinion {
                return decision;
            }
            if !decision.reason.is_empty() {
                reasons.push(decision.reason);
            }
        }
        Decision::no_opinion(reasons.join("\n"))
    }
}
