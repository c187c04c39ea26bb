//! `meta.k8s.io` Tables, as kube-apiserver 1.34 renders them.
//!
//! Kinds with a print handler in `pkg/printers/internalversion/printers.go`
//! (`AddHandlers`) get its columns and cells; the server always prints wide
//! (`printers.GenerateOptions{Wide: true}`), so priority-1 columns are
//! included. Every other kind gets `rest.NewDefaultTableConvertor`'s Name and
//! Created At.
//!
//! Printers see objects as kube decodes them from storage, defaults applied;
//! where a defaulted field is missing from a stored object, the cell shows
//! the default (a missing `spec.replicas` prints as 1, `minReplicas` as 1, a
//! PV's `volumeMode` as Filesystem, ...), as kube would.
//!
//! - `columns`: which printer a resource gets and its column definitions;
//!   `descriptions`: their `SwaggerDoc()` texts.
//! - `printers_pod`, `printers_core`, `printers_apps`, `printers_cluster`:
//!   the row cells.
//! - `duration`: `HumanDuration`, the AGE cells; `format`: shared helpers.

mod columns;
mod custom;
mod descriptions;
pub mod duration;
mod format;
mod printers_apps;
mod printers_cluster;
mod printers_core;
mod printers_pod;
#[cfg(test)]
mod tests;

use serde_json::{json, Map, Value};

use crate::crd::PrinterColumn;
use crate::object;
use crate::registry::ResourceDef;

pub use columns::{printer_for, Printer};

/// Whose rows a Table holds: a resource, and a custom resource's printer
/// columns (`None` for built-in kinds).
#[derive(Debug, Clone, Copy)]
pub struct TableOf<'a> {
    pub resource: &'a ResourceDef,
    pub custom: Option<&'a [PrinterColumn]>,
}

impl<'a> TableOf<'a> {
    pub fn builtin(resource: &'a ResourceDef) -> Self {
        TableOf {
            resource,
            custom: None,
        }
    }
}

/// `includeObject`: None | Metadata (default) | Object.
fn row_object(value: &Value, include: &str, version: &str) -> Option<Value> {
    match include {
        "None" => None,
        "Object" => Some(value.clone()),
        _ => Some(json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": format!("meta.k8s.io/{version}"),
            "metadata": object::metadata(value).cloned().unwrap_or_default(),
        })),
    }
}

/// A Table of `items` with column definitions (GET and LIST);
/// `include_object` is the request's `includeObject` (`None`, `Metadata`,
/// `Object`). `custom` holds a custom resource's printer columns.
pub fn table(
    of: TableOf<'_>,
    version: &str,
    items: &[Value],
    revision: i64,
    continue_token: Option<&str>,
    include_object: &str,
) -> Value {
    render(
        of,
        version,
        items,
        revision,
        continue_token,
        include_object,
        true,
    )
}

/// [`table`], with `columnDefinitions` left `null` when `headers` is false:
/// kube's watch sends column definitions with the first event only
/// (`TableOptions.NoHeaders` is set for the later ones).
pub fn render(
    of: TableOf<'_>,
    version: &str,
    items: &[Value],
    revision: i64,
    continue_token: Option<&str>,
    include_object: &str,
    headers: bool,
) -> Value {
    let include = include_object;
    let now = duration::now_nanos();
    let resource = of.resource;
    if let Some(printer_columns) = of.custom {
        // `MetaToTableRow` starts from an empty slice: `rows: []` when empty.
        let rows: Vec<Value> = items
            .iter()
            .map(|value| {
                let mut row = Map::new();
                row.insert(
                    "cells".into(),
                    Value::Array(custom::cells(printer_columns, value, now)),
                );
                if let Some(object) = row_object(value, include, version) {
                    row.insert("object".into(), object);
                }
                Value::Object(row)
            })
            .collect();
        let columns = if headers {
            custom::columns(printer_columns)
        } else {
            Value::Null
        };
        return envelope(
            version,
            revision,
            continue_token,
            columns,
            Value::Array(rows),
        );
    }
    let printer = printer_for(resource.group, resource.plural);
    let mut ordered: Vec<&Value> = items.iter().collect();
    if printer == Some(Printer::FlowSchema) {
        ordered.sort_by(|a, b| printers_cluster::flow_schema_order(a, b));
    }
    let rows: Vec<Value> = ordered
        .into_iter()
        .map(|value| {
            let mut row = Map::new();
            row.insert("cells".into(), Value::Array(cells(printer, value, now)));
            if printer == Some(Printer::Pod) {
                if let Some(conditions) = printers_pod::pod_conditions(value) {
                    row.insert("conditions".into(), conditions);
                }
            }
            if let Some(object) = row_object(value, include, version) {
                row.insert("object".into(), object);
            }
            Value::Object(row)
        })
        .collect();
    let columns = match (headers, printer) {
        (false, _) => Value::Null,
        (true, Some(printer)) => columns::columns(printer),
        (true, None) => columns::default_columns(),
    };
    // The default convertor appends rows to a nil slice: an empty list has `rows: null`.
    let rows = if rows.is_empty() && printer.is_none() {
        Value::Null
    } else {
        Value::Array(rows)
    };
    envelope(version, revision, continue_token, columns, rows)
}

fn envelope(
    version: &str,
    revision: i64,
    continue_token: Option<&str>,
    columns: Value,
    rows: Value,
) -> Value {
    let mut metadata = Map::new();
    metadata.insert("resourceVersion".into(), json!(revision.to_string()));
    if let Some(token) = continue_token {
        metadata.insert("continue".into(), json!(token));
    }
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": metadata,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

/// One row's cells: the printer's, or the default convertor's name and
/// RFC 3339 creation time (Go's zero time when unset).
fn cells(printer: Option<Printer>, value: &Value, now: i64) -> Vec<Value> {
    use printers_apps as apps;
    use printers_cluster as cluster;
    use printers_core as core;
    use Printer::*;
    let print: fn(&Value, i64) -> Vec<Value> = match printer {
        None => {
            let created = match object::meta_str(value, "creationTimestamp") {
                "" => "0001-01-01T00:00:00Z",
                created => created,
            };
            return vec![json!(object::name(value)), json!(created)];
        }
        Some(Pod) => printers_pod::pod,
        Some(PodTemplate) => core::pod_template,
        Some(ReplicationController) => core::replication_controller,
        Some(Service) => core::service,
        Some(Endpoints) => core::endpoints,
        Some(Node) => core::node,
        Some(Event) => core::event,
        Some(Namespace) => core::namespace,
        Some(Secret) => core::secret,
        Some(ServiceAccount) => core::service_account,
        Some(PersistentVolume) => core::persistent_volume,
        Some(PersistentVolumeClaim) => core::persistent_volume_claim,
        Some(ComponentStatus) => core::component_status,
        Some(ConfigMap) => core::config_map,
        Some(ResourceQuota) => core::resource_quota,
        Some(Deployment) => apps::deployment,
        Some(ReplicaSet) => apps::replica_set,
        Some(StatefulSet) => apps::stateful_set,
        Some(DaemonSet) => apps::daemon_set,
        Some(ControllerRevision) => apps::controller_revision,
        Some(Job) => apps::job,
        Some(CronJob) => apps::cron_job,
        Some(HorizontalPodAutoscaler) => apps::horizontal_pod_autoscaler,
        Some(PodDisruptionBudget) => apps::pod_disruption_budget,
        Some(Ingress) => cluster::ingress,
        Some(IngressClass) => cluster::ingress_class,
        Some(NetworkPolicy) => cluster::network_policy,
        Some(EndpointSlice) => cluster::endpoint_slice,
        Some(ServiceCidr) => cluster::service_cidr,
        Some(IpAddress) => cluster::ip_address,
        Some(StorageClass) => cluster::storage_class,
        Some(VolumeAttributesClass) => cluster::volume_attributes_class,
        Some(CsiDriver) => cluster::csi_driver,
        Some(CsiNode) => cluster::csi_node,
        Some(CsiStorageCapacity) => cluster::csi_storage_capacity,
        Some(VolumeAttachment) => cluster::volume_attachment,
        Some(RoleBinding | ClusterRoleBinding) => cluster::role_binding,
        Some(Lease) => cluster::lease,
        Some(PriorityClass) => cluster::priority_class,
        Some(RuntimeClass) => cluster::runtime_class,
        Some(MutatingWebhook | ValidatingWebhook) => cluster::webhook_configuration,
        Some(ValidatingAdmissionPolicy) => cluster::validating_admission_policy,
        Some(ValidatingAdmissionPolicyBinding) => cluster::validating_admission_policy_binding,
        Some(CertificateSigningRequest) => cluster::certificate_signing_request,
        Some(FlowSchema) => cluster::flow_schema,
        Some(PriorityLevelConfiguration) => cluster::priority_level_configuration,
        Some(DeviceClass | ResourceClaimTemplate) => cluster::name_and_age,
        Some(ResourceClaim) => cluster::resource_claim,
        Some(ResourceSlice) => cluster::resource_slice,
        Some(ApiService) => cluster::api_service,
    };
    print(value, now)
}
