//! What admission is asked about (`k8s.io/apiserver/pkg/admission`
//! `Attributes`, `attributesRecord`): the operation, the kind and resource,
//! the subresource, name and namespace, the object and the old object, the
//! operation's options object, dry-run and the user.

use std::sync::Mutex;

use serde_json::{json, Value};

use crate::authn::UserInfo;

/// `admission.Operation` (CONNECT: the connect subresources, admitted by
/// `connect.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    /// The wire form (`CREATE`, …), as webhook rules and reviews spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// A group, version and kind or resource (`schema.GroupVersionKind` /
/// `GroupVersionResource`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupVersionName {
    pub group: String,
    pub version: String,
    /// The kind or the plural resource.
    pub name: String,
}

impl GroupVersionName {
    pub fn new(group: &str, version: &str, name: &str) -> Self {
        GroupVersionName {
            group: group.to_string(),
            version: version.to_string(),
            name: name.to_string(),
        }
    }
}

/// Who writes and how, as the handler knows it: the user, dry-run, the
/// options object of the verb (`CreateOptions`, `UpdateOptions`,
/// `PatchOptions`, `DeleteOptions`) and the warnings admission adds to the
/// response.
#[derive(Debug, Default)]
pub struct Caller {
    pub user: Option<UserInfo>,
    pub dry_run: bool,
    /// The verb's options object, as kube passes it to admission.
    pub options: Value,
    /// Admission already ran for this write (the Scale subresource admits
    /// the Scale, then updates its parent without admitting it again).
    pub admitted: bool,
    warnings: Mutex<Vec<String>>,
    /// Audit annotations admission adds (`audit.AddAuditAnnotations`).
    audit_annotations: Mutex<Vec<(String, String)>>,
}

impl Caller {
    pub fn new(user: Option<UserInfo>, dry_run: bool, options: Value) -> Self {
        Caller {
            user,
            dry_run,
            options,
            admitted: false,
            warnings: Mutex::new(Vec::new()),
            audit_annotations: Mutex::new(Vec::new()),
        }
    }

    /// A caller for work the server does itself (no user, no options).
    pub fn internal() -> Self {
        Caller::new(None, false, Value::Null)
    }

    /// The same caller for the inner write of a subresource already admitted.
    pub fn already_admitted(&self) -> Self {
        Caller {
            user: self.user.clone(),
            dry_run: self.dry_run,
            options: self.options.clone(),
            admitted: true,
            warnings: Mutex::new(Vec::new()),
            audit_annotations: Mutex::new(Vec::new()),
        }
    }

    /// Adds a `Warning` header value (already in `299 - "…"` form).
    pub fn warn(&self, header_value: String) {
        if let Ok(mut warnings) = self.warnings.lock() {
            if !warnings.contains(&header_value) {
                warnings.push(header_value);
            }
        }
    }

    /// The warnings added so far, taken.
    pub fn take_warnings(&self) -> Vec<String> {
        self.warnings
            .lock()
            .map(|mut warnings| std::mem::take(&mut *warnings))
            .unwrap_or_default()
    }

    /// Adds an audit annotation (`audit.AddAuditAnnotation`); a key already
    /// set keeps its first value, as kube's does.
    pub fn annotate_audit(&self, key: &str, value: &str) {
        if let Ok(mut annotations) = self.audit_annotations.lock() {
            if !annotations.iter().any(|(existing, _)| existing == key) {
                annotations.push((key.to_string(), value.to_string()));
            }
        }
    }

    /// The audit annotations added so far, taken.
    pub fn take_audit_annotations(&self) -> Vec<(String, String)> {
        self.audit_annotations
            .lock()
            .map(|mut annotations| std::mem::take(&mut *annotations))
            .unwrap_or_default()
    }

    /// The options object for `operation`: an update or patch that creates
    /// passes `CreateOptions` (`updateToCreateOptions`,
    /// `patchToCreateOptions`), keeping dryRun, fieldManager and
    /// fieldValidation.
    pub fn options_for(&self, operation: Operation) -> Value {
        let kind = self.options.get("kind").and_then(Value::as_str);
        if operation != Operation::Create || kind == Some("CreateOptions") || kind.is_none() {
            return self.options.clone();
        }
        let mut create = json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"});
        for field in ["dryRun", "fieldManager", "fieldValidation"] {
            if let Some(value) = self.options.get(field) {
                create[field] = value.clone();
            }
        }
        create
    }
}

/// The options object of a write (`metav1.CreateOptions`, `UpdateOptions`,
/// `PatchOptions`), as its JSON encodes it: omitempty fields left out.
pub fn write_options_object(
    kind: &str,
    dry_run: bool,
    field_manager: &str,
    field_validation: &str,
    force: Option<bool>,
) -> Value {
    let mut options = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
    if dry_run {
        options["dryRun"] = json!(["All"]);
    }
    if let Some(force) = force {
        options["force"] = json!(force);
    }
    if !field_manager.is_empty() {
        options["fieldManager"] = json!(field_manager);
    }
    if !field_validation.is_empty() {
        options["fieldValidation"] = json!(field_validation);
    }
    options
}

/// One admission question (`admission.Attributes`).
#[derive(Debug, Clone)]
pub struct Attributes<'a> {
    pub operation: Operation,
    pub kind: GroupVersionName,
    pub resource: GroupVersionName,
    pub subresource: &'a str,
    pub name: &'a str,
    /// `""` for cluster-scoped objects; a namespace's own name for requests
    /// on a Namespace (kube's RequestInfo).
    pub namespace: &'a str,
    pub old_object: Option<&'a Value>,
    pub options: Value,
    pub dry_run: bool,
    pub user: Option<&'a UserInfo>,
}

impl Attributes<'_> {
    /// Whether the request is about a Namespace object itself.
    pub fn is_namespace(&self) -> bool {
        self.resource.group.is_empty() && self.resource.name == "namespaces"
    }
}
