//! Field ownership: `metadata.managedFields` and server-side apply, as
//! kube-apiserver does them (`k8s.io/apimachinery/pkg/util/managedfields`,
//! `sigs.k8s.io/structured-merge-diff`).
//!
//! * [`path`], [`set`], [`fields_v1`]: field paths and sets, and their FieldsV1
//!   encoding, byte-compatible with SMD;
//! * [`schema`]: the SMD view of the vendored OpenAPI definitions
//!   (kube-openapi's `schemaconv` rules);
//! * [`walk`]: field sets of values, the apply merge, removal, validation;
//!   [`compare`]: the comparison of two values; `prune`: SMD's prune and
//!   the shortcut that skips it;
//! * [`managed`]: the managedFields entries; `raw_fields`: their FieldsV1
//!   objects kept undecoded while a write does not change them;
//! * this file: the two operations every write goes through, [`update`]
//!   (create, PUT, non-apply PATCH, subresources: the changed fields go to
//!   the manager and are taken from everyone else, SMD's `Updater.Update`)
//!   and [`apply`] (SMD's `Updater.Apply`: merge, prune, conflicts).

pub mod compare;
pub mod fields_v1;
pub mod last_applied;
pub mod managed;
pub mod path;
mod prune;
mod raw_fields;
pub mod schema;
pub mod set;
pub mod versioned;
pub mod walk;
mod zero;

#[cfg(test)]
mod random_tests;
#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::status::{Cause, Details, Status};
use managed::{Entry, Managed, Operation};
use path::{path_string, Path, PathElement};
use schema::Schema;
use set::Set;

pub use zero::zero_object;

/// Longest fieldManager kube accepts (`FieldManagerMaxLength`).
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldManagerError {
    #[error("{0}")]
    FieldsV1(String),
    #[error("{0}")]
    Entry(String),
    /// 400 BadRequest with this message.
    #[error("{0}")]
    BadRequest(String),
    /// 409: apply conflicts with other managers.
    #[error("apply conflicts")]
    Conflicts(Vec<Conflict>),
    /// A plain error kube does not turn into a Status: 500 without a reason.
    #[error("{0}")]
    Internal(String),
}

/// One conflicting field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub manager: Entry,
    pub path: Path,
}

impl FieldManagerError {
    pub fn to_status(&self) -> Status {
        match self {
            FieldManagerError::BadRequest(message) => Status::bad_request(message.clone()),
            FieldManagerError::Conflicts(conflicts) => conflict_status(conflicts),
            other => Status {
                code: 500,
                reason: "",
                message: other.to_string(),
                details: None,
            },
        }
    }
}

/// `NewConflictError` (`internal/conflict.go`): 409 with one
/// `FieldManagerConflict` cause per field and `getConflictMessage`'s text.
fn conflict_status(conflicts: &[Conflict]) -> Status {
    let causes = conflicts
        .iter()
        .map(|conflict| Cause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with {}", conflict.manager.describe()),
            field: path_string(&conflict.path),
        })
        .collect();
    let message = match conflicts {
        [one] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            one.manager.describe(),
            path_string(&one.path)
        ),
        _ => {
            let mut lines = Vec::new();
            let mut previous: Option<String> = None;
            for conflict in conflicts {
                let id = conflict.manager.identifier();
                if previous.as_deref() != Some(id.as_str()) {
                    lines.push(format!("conflicts with {}:", conflict.manager.describe()));
                    previous = Some(id);
                }
                lines.push(format!("- {}", path_string(&conflict.path)));
            }
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    Status {
        code: 409,
        reason: "Conflict",
        message,
        details: Some(Box::new(Details {
            causes,
            ..Details::default()
        })),
    }
}

/// What one write knows about field ownership.
pub struct FieldManager<'a> {
    pub schema: Schema<'a>,
    /// The endpoint's group/version (`apps/v1`, `v1`).
    pub api_version: String,
    /// `""` for the main resource, `status`, `scale`.
    pub subresource: String,
    /// Prefixes the strategy resets (`ResetFieldsStrategy`): never owned
    /// through this endpoint by an applier.
    pub reset: Set,
    /// The kind's other served versions, whose managers' sets are compared
    /// at their own version (`versioned.rs`); `None` for kinds served in one.
    pub other_versions: Option<versioned::OtherVersions<'a>>,
}

/// The fields no manager owns (`NewStripMetaManager`).
fn strip_set() -> Set {
    let meta = |name: &str| vec![PathElement::field("metadata"), PathElement::field(name)];
    let mut set = Set::new();
    set.insert(&[PathElement::field("apiVersion")]);
    set.insert(&[PathElement::field("kind")]);
    set.insert(&[PathElement::field("metadata")]);
    for name in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        set.insert(&meta(name));
    }
    set
}

fn managed_fields_of(object: &Value) -> Option<&Value> {
    object.get("metadata").and_then(|m| m.get("managedFields"))
}

/// `object` without `metadata.managedFields`, cloning everything else.
fn clone_without_managed_fields(object: &Value) -> Value {
    let Value::Object(map) = object else {
        return object.clone();
    };
    let out = map
        .iter()
        .map(|(key, value)| {
            let value = match value {
                Value::Object(metadata) if key == "metadata" => Value::Object(
                    metadata
                        .iter()
                        .filter(|(name, _)| *name != "managedFields")
                        .map(|(name, value)| (name.clone(), value.clone()))
                        .collect(),
                ),
                other => other.clone(),
            };
            (key.clone(), value)
        })
        .collect();
    Value::Object(out)
}

fn remove_managed_fields(object: &mut Value) {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
    }
}

fn set_managed_fields(object: &mut Value, entries: &[Managed<'_>]) {
    let encoded = managed::encode_lazy(entries);
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        match encoded {
            Some(list) => metadata.insert("managedFields".into(), list),
            None => metadata.remove("managedFields"),
        };
    }
}

/// `managerOrUserAgent` / `prefixFromUserAgent` (`handlers/rest.go`): the
/// fieldManager parameter, else the User-Agent up to its first `/`, printable
/// characters only, at most 128 bytes.
pub fn manager_name(field_manager: Option<&str>, user_agent: Option<&str>) -> String {
    if let Some(manager) = field_manager.filter(|m| !m.is_empty()) {
        return manager.to_string();
    }
    let prefix = user_agent.unwrap_or("").split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in prefix.chars().filter(|c| crate::go::strconv::is_print(*c)) {
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}

impl FieldManager<'_> {
    fn identity(&self, manager: &str, operation: Operation) -> Entry {
        Entry {
            manager: if manager.is_empty() {
                "unknown".to_string()
            } else {
                manager.to_string()
            },
            operation,
            api_version: self.api_version.clone(),
            time: None,
            subresource: self.subresource.clone(),
            set: Set::new(),
        }
    }

    /// `decodeLiveOrNew`: through a subresource the live entries; a request
    /// asking for a reset gets none; otherwise the request's entries when
    /// they decode and are not empty, else the live ones (their canonical
    /// FieldsV1 objects left undecoded until a write changes them).
    fn entries_for_update<'v>(&self, live: &'v Value, new: &Value) -> Vec<Managed<'v>> {
        let live_entries = || managed::decode_lazy(managed_fields_of(live)).unwrap_or_default();
        if !self.subresource.is_empty() {
            return live_entries();
        }
        let requested = managed_fields_of(new);
        if managed::is_reset(requested) {
            return Vec::new();
        }
        match managed::decode(requested) {
            Ok(entries) if !entries.is_empty() => entries.into_iter().map(Managed::from).collect(),
            _ => live_entries(),
        }
    }

    /// Records a non-apply write (`FieldManager.Update` with the
    /// `managedFieldsUpdater`): `new` (the object about to be stored) gets
    /// its managedFields. The fields that changed from `live` go to
    /// `manager` (an Update entry, time `now`) and are taken from every other
    /// manager; removed fields leave everyone. Nothing changes for a no-op.
    /// Changes under the `reset` prefixes count for nobody.
    pub fn update(&self, live: &Value, new: &mut Value, manager: &str, now: &str) {
        let mut entries = self.entries_for_update(live, new);
        remove_managed_fields(new);
        let mut comparison = walk::compare(&self.schema, live, new);
        // What the strategy resets changes nobody's ownership (`IgnoreFilter`).
        comparison.added.remove_prefixes(&self.reset);
        comparison.modified.remove_prefixes(&self.reset);
        comparison.removed.remove_prefixes(&self.reset);
        let versions = versioned::comparisons(self, comparison, &entries, live, new, &self.reset);
        let comparison = versions.own();
        let changed = comparison.added.union(&comparison.modified);
        let strip = strip_set();
        let own = changed.difference(&comparison.removed).difference(&strip);
        let identity = self.identity(manager, Operation::Update);
        // The entry that gets `own` (entries are one per identity).
        let gets_own = |entry: &Entry| !own.is_empty() && entry.same_identity(&identity);
        for managed in &mut entries {
            // A manager recorded at another version loses what changed there.
            let (changed, removed) = versioned::changes_for(&versions, &managed.entry, &changed);
            if let Some(raw) = managed.raw {
                // Its new set is `set - changed - removed - strip`, or for
                // the writer's entry `(set | changed) - removed - strip`:
                // the same set unless these hold.
                let unchanged = !raw_fields::intersects(raw, removed)
                    && !raw_fields::intersects(raw, &strip)
                    && if gets_own(&managed.entry) {
                        raw_fields::contains(raw, &own)
                    } else {
                        !raw_fields::intersects(raw, &changed)
                    };
                if unchanged {
                    continue;
                }
            }
            let entry = managed.decoded();
            entry.set.subtract(&changed);
            entry.set.subtract(removed);
            entry.set.subtract(&strip);
        }
        if !own.is_empty() {
            match entries
                .iter_mut()
                .find(|m| m.entry.same_identity(&identity))
            {
                Some(managed) => {
                    if managed.raw.is_none() {
                        managed.entry.set.union_in_place(&own);
                    }
                    managed.entry.time = Some(now.to_string());
                }
                None => entries.push(Managed::from(Entry {
                    set: own,
                    time: Some(now.to_string()),
                    ..identity
                })),
            }
        }
        entries.retain(|managed| !managed.is_empty());
        cap_update_managers(&mut entries);
        set_managed_fields(new, &entries);
    }

    /// Server-side apply (`FieldManager.Apply` → SMD `Updater.Apply`):
    /// `config` merged into `live` (`{}` when creating), fields this
    /// manager applied before and no longer applies removed unless another
    /// applier owns them, conflicts with other managers refused unless
    /// `force`. Returns the new object with its managedFields.
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<Value, FieldManagerError> {
        if managed_fields_of(config).is_some_and(|v| !v.is_null()) {
            return Err(FieldManagerError::BadRequest(
                "metadata.managedFields must be nil".into(),
            ));
        }
        let live_object = live;
        let mut entries =
            managed::decode_lazy(managed_fields_of(live_object)).map_err(|error| {
                FieldManagerError::Internal(format!("failed to decode managed fields: {error}"))
            })?;
        let live = clone_without_managed_fields(live_object);
        let mut merged = walk::merge(&self.schema, &live, config);
        if !merged.is_object() {
            merged = Value::Object(Default::default());
        }
        let identity = self.identity(manager, Operation::Apply);
        let position = entries
            .iter()
            .position(|e| e.entry.same_identity(&identity));
        // The applier's FieldsV1 as stored: reused when its set ends the same.
        let last_raw = position.and_then(|i| entries[i].raw);
        let last = position
            .map(|i| std::mem::take(&mut entries[i].decoded().set))
            .unwrap_or_default();
        let mut applied = walk::to_field_set(&self.schema, config);
        applied.remove_prefixes(&self.reset);
        // Usually a re-apply of (a superset of) the last configuration,
        // which the prune provably leaves alone (see `prune`).
        let keeps_everything =
            last.is_empty() || prune::keeps_everything(&self.schema, &merged, &applied, &last);
        let applier = match position {
            Some(i) => &mut entries[i].entry,
            None => {
                entries.push(Managed::from(identity));
                let last_index = entries.len() - 1;
                &mut entries[last_index].entry
            }
        };
        applier.set = applied;
        let applier_identity = applier.without_set();
        if !keeps_everything {
            merged = self.prune(&merged, &mut entries, &last);
        }
        #[cfg(test)]
        if keeps_everything && !last.is_empty() {
            let full = self.prune(&merged, &mut entries.clone(), &last);
            assert_eq!(full, merged, "the prune shortcut must remove nothing");
        }
        // Everyone else loses what this apply changes; a conflict unless forced.
        let mut comparison = walk::compare(&self.schema, &live, &merged);
        // What the strategy resets changes nobody's ownership (`IgnoreFilter`).
        comparison.added.remove_prefixes(&self.reset);
        comparison.modified.remove_prefixes(&self.reset);
        comparison.removed.remove_prefixes(&self.reset);
        let versions =
            versioned::comparisons(self, comparison, &entries, &live, &merged, &self.reset);
        let comparison = versions.own();
        let changed = comparison.added.union(&comparison.modified);
        let strip = strip_set();
        let mut conflicts = Vec::new();
        for managed in &mut entries {
            if managed.entry.same_identity(&applier_identity) {
                continue;
            }
            let (changed, removed) = versioned::changes_for(&versions, &managed.entry, &changed);
            if let Some(raw) = managed.raw {
                // Neither a conflict nor a change for this entry.
                if !raw_fields::intersects(raw, &changed)
                    && !raw_fields::intersects(raw, removed)
                    && !raw_fields::intersects(raw, &strip)
                {
                    continue;
                }
            }
            let entry = managed.decoded();
            for path in entry.set.intersection(&changed).paths() {
                conflicts.push(Conflict {
                    manager: Entry {
                        time: None,
                        ..entry.without_set()
                    },
                    path,
                });
            }
        }
        if !force && !conflicts.is_empty() {
            // kube prints managers sorted by identity.
            conflicts.sort_by_key(|conflict| conflict.manager.identifier());
            return Err(FieldManagerError::Conflicts(conflicts));
        }
        for managed in &mut entries {
            if managed.raw.is_some() {
                // Left raw above: owns nothing that changed.
                continue;
            }
            let (changed, removed) = versioned::changes_for(&versions, &managed.entry, &changed);
            let entry = &mut managed.entry;
            if !entry.same_identity(&applier_identity) {
                entry.set.subtract(&changed);
                entry.set.subtract(removed);
            }
            entry.set.subtract(&strip);
        }
        if let (Some(i), Some(raw)) = (position, last_raw) {
            if entries[i].entry.set == last {
                // Unchanged: its stored FieldsV1 is what encoding would give.
                entries[i].raw = Some(raw);
            }
        }
        let no_op = versions.own().is_same() && merged == live;
        if !no_op {
            if let Some(managed) = entries
                .iter_mut()
                .find(|e| e.entry.same_identity(&applier_identity))
            {
                managed.entry.time = Some(now.to_string());
            }
        }
        entries.retain(|managed| !managed.is_empty());
        let mut object = if no_op { live } else { merged };
        set_managed_fields(&mut object, &entries);
        Ok(object)
    }
}

/// Most Update entries kept (`DefaultMaxUpdateManagers`).
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// `capManagersManager`: beyond ten Update entries, the oldest are merged,
/// per apiVersion, into an `ancient-changes` entry.
fn cap_update_managers(managed: &mut Vec<Managed<'_>>) {
    let updaters = managed
        .iter()
        .filter(|m| m.entry.operation == Operation::Update)
        .count();
    if updaters <= MAX_UPDATE_MANAGERS {
        return;
    }
    // Rare: every set decoded, then capped as sets.
    let mut entries: Vec<Entry> = managed
        .iter_mut()
        .map(|m| std::mem::replace(m.decoded(), Entry::placeholder()))
        .collect();
    cap_entries(&mut entries);
    *managed = entries.into_iter().map(Managed::from).collect();
}

fn cap_entries(entries: &mut Vec<Entry>) {
    let mut updaters: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].operation == Operation::Update)
        .collect();
    updaters.sort_by(|&i, &j| {
        let time = |e: &Entry| e.time.clone().unwrap_or_default();
        time(&entries[i])
            .cmp(&time(&entries[j]))
            .then_with(|| entries[i].identifier().cmp(&entries[j].identifier()))
    });
    let bucket_of = |version: &str| Entry {
        manager: "ancient-changes".into(),
        operation: Operation::Update,
        api_version: version.to_string(),
        time: None,
        subresource: String::new(),
        set: Set::new(),
    };
    let mut first_of_version: Vec<(String, usize)> = Vec::new();
    let mut removed = vec![false; entries.len()];
    let mut length = updaters.len();
    for &index in &updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let version = entries[index].api_version.clone();
        let Some(&(_, first)) = first_of_version.iter().find(|(v, _)| *v == version) else {
            first_of_version.push((version, index));
            continue;
        };
        let bucket = bucket_of(&version);
        let bucket_index = match entries
            .iter()
            .position(|e| e.same_identity(&bucket))
            .filter(|&i| !removed[i])
        {
            Some(existing) => existing,
            None => {
                // The first entry of this version becomes the bucket.
                entries[first].manager = bucket.manager.clone();
                entries[first].subresource = String::new();
                first
            }
        };
        let set = entries[index].set.clone();
        entries[bucket_index].set.union_in_place(&set);
        entries[bucket_index].time = entries[index].time.clone();
        removed[index] = true;
        length -= 1;
    }
    let mut position = 0;
    entries.retain(|_| {
        let keep = !removed[position];
        position += 1;
        keep
    });
}

/// `GroupVersionKind.String()`: `apps/v1, Kind=Deployment`, `/v1, Kind=ConfigMap`.
pub fn gvk_string(api_version: &str, kind: &str) -> String {
    let (group, version) = match api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    };
    format!("{group}/{version}, Kind={kind}")
}

/// The typed checks before an apply (`versionCheckManager`, then the typed
/// conversion of the configuration): wrong apiVersion/kind → 400; undeclared
/// fields and list items without keys → kube's plain 500.
pub fn check_applied(
    schema: &Schema<'_>,
    api_version: &str,
    kind: &str,
    config: &Value,
) -> Result<(), FieldManagerError> {
    let text = |key: &str| config.get(key).and_then(Value::as_str).unwrap_or("");
    let (body_version, body_kind) = (text("apiVersion"), text("kind"));
    if body_version != api_version || body_kind != kind {
        return Err(FieldManagerError::BadRequest(format!(
            "invalid object type: {}",
            gvk_string(body_version, body_kind)
        )));
    }
    let errors = walk::validate(schema, config);
    if errors.is_empty() {
        return Ok(());
    }
    let meta = |key: &str| {
        config
            .get("metadata")
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    Err(FieldManagerError::Internal(format!(
        "failed to create typed patch object ({}/{}; {}): {}",
        meta("namespace"),
        meta("name"),
        gvk_string(api_version, kind),
        walk::errors_to_string(&errors)
    )))
}
