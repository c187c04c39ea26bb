//! apiextensions-apiserver's naming and establishing controllers
//! (`pkg/controller/status/naming_controller.go`,
//! `pkg/controller/establish/establishing_controller.go`): a CRD's requested
//! names are accepted unless another CRD of its group holds them
//! (`NamesAccepted`), and a CRD whose names are accepted becomes
//! `Established`, which is when `crd/serving.rs` starts serving it. kube
//! establishes after a queue delay; here it follows the naming write at once.
//!
//! One worker, as upstream: deciding who holds a name is not safe to run
//! concurrently. The other CRDs of the store are read as [`NamingView`]s
//! (names and group only, their schemas skipped by the decoder): parsing
//! every whole CRD on every sync held ~40 MiB at once with 200 CRDs of 200
//! fields and made a restart parse 200 × 200 CRDs.

use std::collections::HashSet;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::client::{resource_path, Client, ClientError};
use super::queue::WorkQueue;
use crate::api::Api;
use crate::crd::{condition_true, CRD_PREFIX};
use crate::object::feed::{Feed, ObjectSnapshot, Update};

pub(super) async fn run(api: Arc<Api>) {
    let client = Client::apiserver(api.clone());
    let queue: Arc<WorkQueue<String>> = WorkQueue::new();
    let (mut feed, snapshot) = Feed::start(&api.store);
    enqueue_all(&snapshot, &queue);
    let worker = {
        let queue = queue.clone();
        tokio::spawn(async move {
            loop {
                let name = queue.get().await;
                if let Err(error) = sync(&client, &name, &queue).await {
                    tracing::debug!(%name, %error, "naming a CRD failed");
                    queue.add_after(name.clone(), super::RETRY_DELAY);
                }
                queue.done(&name);
            }
        })
    };
    let _abort_worker = AbortOnDrop(worker);
    loop {
        match feed.next().await {
            Update::Resync(snapshot) => enqueue_all(&snapshot, &queue),
            Update::Changes(changes) => {
                for change in changes {
                    if let Some(name) = change.key.strip_prefix(CRD_PREFIX) {
                        queue.add(name.to_string());
                    }
                }
            }
        }
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn enqueue_all(snapshot: &ObjectSnapshot, queue: &WorkQueue<String>) {
    for (key, _) in snapshot.range(CRD_PREFIX, None) {
        if let Some(name) = key.strip_prefix(CRD_PREFIX) {
            queue.add(name.to_string());
        }
    }
}

/// What the naming controller reads of the other CRDs.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct NamingView {
    metadata: MetadataView,
    spec: SpecView,
    status: StatusView,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MetadataView {
    name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SpecView {
    group: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct StatusView {
    accepted_names: Names,
}

/// Every stored CRD's name, group and accepted names; a CRD whose bytes do
/// not decode into them (fields of other types) holds no names.
fn all_crds(snapshot: &ObjectSnapshot) -> Vec<NamingView> {
    snapshot
        .range(CRD_PREFIX, None)
        .filter_map(|(_, entry)| serde_json::from_slice(entry.object.json()?).ok())
        .collect()
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn list(value: &Value, pointer: &str) -> Vec<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// `CustomResourceDefinitionNames`, with Go's zero values for what is missing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Names {
    plural: String,
    singular: String,
    short_names: Vec<String>,
    kind: String,
    list_kind: String,
    categories: Vec<String>,
}

impl Names {
    fn at(crd: &Value, pointer: &str) -> Names {
        Names {
            plural: text(crd, &format!("{pointer}/plural")).to_string(),
            singular: text(crd, &format!("{pointer}/singular")).to_string(),
            short_names: list(crd, &format!("{pointer}/shortNames")),
            kind: text(crd, &format!("{pointer}/kind")).to_string(),
            list_kind: text(crd, &format!("{pointer}/listKind")).to_string(),
            categories: list(crd, &format!("{pointer}/categories")),
        }
    }

    /// As the typed status serializes it: `plural` and `kind` always, the rest when set.
    fn to_json(&self) -> Value {
        let mut names = json!({"plural": self.plural, "kind": self.kind});
        if !self.singular.is_empty() {
            names["singular"] = json!(self.singular);
        }
        if !self.short_names.is_empty() {
            names["shortNames"] = json!(self.short_names);
        }
        if !self.list_kind.is_empty() {
            names["listKind"] = json!(self.list_kind);
        }
        if !self.categories.is_empty() {
            names["categories"] = json!(self.categories);
        }
        names
    }
}

/// A condition to set: (type, status, reason, message).
type Condition = (&'static str, &'static str, &'static str, String);

/// `equalToAcceptedOrFresh`.
fn equal_to_accepted_or_fresh(
    requested: &str,
    accepted: &str,
    used: &HashSet<String>,
) -> Result<(), String> {
    if requested == accepted || !used.contains(requested) {
        return Ok(());
    }
    Err(format!(
        "{} is already in use",
        crate::go::strconv::quote(requested)
    ))
}

/// `calculateNamesAndConditions`: the names this CRD may have, its
/// NamesAccepted condition, and its Established condition unless that is
/// already True (then it stays as it is).
fn names_and_conditions(crd: &Value, crds: &[NamingView]) -> (Names, Condition, Option<Condition>) {
    let group = text(crd, "/spec/group");
    let mut resources = HashSet::new();
    let mut kinds = HashSet::new();
    for other in crds.iter().filter(|other| other.spec.group == group) {
        let names = &other.status.accepted_names;
        resources.insert(names.plural.clone());
        resources.insert(names.singular.clone());
        resources.extend(names.short_names.iter().cloned());
        kinds.insert(names.kind.clone());
        kinds.insert(names.list_kind.clone());
    }
    let requested = Names::at(crd, "/spec/names");
    let accepted = Names::at(crd, "/status/acceptedNames");
    let mut names = accepted.clone();
    let mut failure: Option<(&'static str, String)> = None;
    match equal_to_accepted_or_fresh(&requested.plural, &accepted.plural, &resources) {
        Ok(()) => names.plural = requested.plural.clone(),
        Err(error) => failure = Some(("PluralConflict", error)),
    }
    match equal_to_accepted_or_fresh(&requested.singular, &accepted.singular, &resources) {
        Ok(()) => names.singular = requested.singular.clone(),
        Err(error) => failure = Some(("SingularConflict", error)),
    }
    if requested.short_names != accepted.short_names {
        let mut errors = Vec::new();
        for short_name in &requested.short_names {
            if accepted.short_names.contains(short_name)
                || *short_name == accepted.plural
                || *short_name == accepted.singular
            {
                continue;
            }
            if let Err(error) = equal_to_accepted_or_fresh(short_name, "", &resources) {
                errors.push(error);
            }
        }
        if errors.is_empty() {
            names.short_names = requested.short_names.clone();
        } else {
            failure = Some(("ShortNamesConflict", aggregate(&errors)));
        }
    }
    match equal_to_accepted_or_fresh(&requested.kind, &accepted.kind, &kinds) {
        Ok(()) => names.kind = requested.kind.clone(),
        Err(error) => failure = Some(("KindConflict", error)),
    }
    match equal_to_accepted_or_fresh(&requested.list_kind, &accepted.list_kind, &kinds) {
        Ok(()) => names.list_kind = requested.list_kind.clone(),
        Err(error) => failure = Some(("ListKindConflict", error)),
    }
    names.categories = requested.categories.clone();
    let names_accepted = match failure {
        Some((reason, message)) => ("NamesAccepted", "False", reason, message),
        None => (
            "NamesAccepted",
            "True",
            "NoConflicts",
            "no conflicts found".to_string(),
        ),
    };
    let established = if condition_true(crd, "Established") {
        None
    } else if names_accepted.1 == "True" {
        Some((
            "Established",
            "False",
            "Installing",
            "the initial names have been accepted".to_string(),
        ))
    } else {
        Some((
            "Established",
            "False",
            "NotAccepted",
            "not all names are accepted".to_string(),
        ))
    };
    (names, names_accepted, established)
}

use crate::go::errors::aggregate;

fn set_condition(crd: &mut Value, (kind, status, reason, message): &Condition) {
    let now = crate::go::time::now_rfc3339();
    crate::crd::set_condition(crd, kind, status, reason, message, &now);
}

fn condition_equivalent(crd: &Value, (kind, status, reason, message): &Condition) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions.iter().any(|condition| {
                let field = |name: &str| condition.get(name).and_then(Value::as_str);
                field("type") == Some(kind)
                    && field("status") == Some(status)
                    && field("reason") == Some(reason)
                    && field("message") == Some(message.as_str())
            })
        })
}

async fn sync(client: &Client, name: &str, queue: &WorkQueue<String>) -> Result<(), ClientError> {
    let api = client.api();
    let snapshot = api.store.snapshot();
    let Some(mut crd) = snapshot
        .get(&format!("{CRD_PREFIX}{name}"))
        .and_then(|entry| entry.object.value())
    else {
        // Deleted: its names are free; the others of its group may take them.
        requeue_group(&all_crds(&snapshot), name, queue);
        return Ok(());
    };
    let Some(definitions) =
        api.registry
            .lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    else {
        return Ok(());
    };
    let status_path = format!("{}/status", resource_path(definitions, None, Some(name)));
    if Names::at(&crd, "/spec/names") == Names::at(&crd, "/status/acceptedNames") {
        // The establishing controller: accepted names make the CRD served.
        if condition_true(&crd, "NamesAccepted") && !condition_true(&crd, "Established") {
            set_condition(
                &mut crd,
                &(
                    "Established",
                    "True",
                    "InitialNamesAccepted",
                    "the initial names have been accepted".to_string(),
                ),
            );
            return ignore_gone_or_changed(client.update(&status_path, &crd).await);
        }
        return Ok(());
    }
    let crds = all_crds(&snapshot);
    let (names, names_accepted, established) = names_and_conditions(&crd, &crds);
    if Names::at(&crd, "/status/acceptedNames") == names
        && condition_equivalent(&crd, &names_accepted)
    {
        return Ok(());
    }
    crd["status"]["acceptedNames"] = names.to_json();
    set_condition(&mut crd, &names_accepted);
    if let Some(established) = &established {
        set_condition(&mut crd, established);
    }
    ignore_gone_or_changed(client.update(&status_path, &crd).await)?;
    // Names may have been released: the others of the group try again.
    requeue_group(&crds, name, queue);
    Ok(())
}

/// Deleted or changed in the meantime: its change event brings it back.
fn ignore_gone_or_changed(result: Result<Value, ClientError>) -> Result<(), ClientError> {
    match result {
        Ok(_) => Ok(()),
        Err(error) if error.is_not_found() || error.is_conflict() => Ok(()),
        Err(error) => Err(error),
    }
}

/// `requeueAllOtherGroupCRDs`: the group is the name after its first dot.
fn requeue_group(crds: &[NamingView], name: &str, queue: &WorkQueue<String>) {
    let Some((_, group)) = name.split_once('.') else {
        return;
    };
    for crd in crds {
        if crd.spec.group == group && crd.metadata.name != name {
            queue.add(crd.metadata.name.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(name: &str, plural: &str, kind: &str, accepted: Option<(&str, &str)>) -> Value {
        let mut crd = json!({
            "metadata": {"name": name},
            "spec": {"group": "example.com", "names": {
                "plural": plural, "singular": plural.trim_end_matches('s'),
                "kind": kind, "listKind": format!("{kind}List"),
            }},
            "status": {"acceptedNames": {"plural": "", "kind": ""}},
        });
        if let Some((plural, kind)) = accepted {
            crd["status"]["acceptedNames"] = json!({
                "plural": plural, "singular": plural.trim_end_matches('s'),
                "kind": kind, "listKind": format!("{kind}List"),
            });
        }
        crd
    }

    /// The stored CRDs as the controller reads them.
    fn views(crds: &[Value]) -> Vec<NamingView> {
        crds.iter()
            .map(|crd| serde_json::from_value(crd.clone()).unwrap())
            .collect()
    }

    #[test]
    fn fresh_names_are_accepted_and_installing() {
        let widgets = crd("widgets.example.com", "widgets", "Widget", None);
        let (names, accepted, established) =
            names_and_conditions(&widgets, &views(std::slice::from_ref(&widgets)));
        assert_eq!(names, Names::at(&widgets, "/spec/names"));
        assert_eq!(
            accepted,
            (
                "NamesAccepted",
                "True",
                "NoConflicts",
                "no conflicts found".into()
            )
        );
        assert_eq!(
            established,
            Some((
                "Established",
                "False",
                "Installing",
                "the initial names have been accepted".into()
            ))
        );
    }

    #[test]
    fn a_name_held_by_another_crd_of_the_group_conflicts_as_kube_words_it() {
        let holder = crd(
            "widgets.example.com",
            "widgets",
            "Widget",
            Some(("widgets", "Widget")),
        );
        let same_kind = crd("gizmos.example.com", "gizmos", "Widget", None);
        let crds = [holder, same_kind.clone()];
        let (names, accepted, established) = names_and_conditions(&same_kind, &views(&crds));
        assert_eq!(names.plural, "gizmos");
        assert_eq!(names.kind, "");
        assert_eq!(
            accepted,
            (
                "NamesAccepted",
                "False",
                "ListKindConflict",
                "\"WidgetList\" is already in use".into()
            )
        );
        assert_eq!(
            established,
            Some((
                "Established",
                "False",
                "NotAccepted",
                "not all names are accepted".into()
            ))
        );
    }
}
