//! Printers for the networking, storage, RBAC, admission, scheduling,
//! flow-control, certificates, coordination and resource groups (plus
//! kube-aggregator's APIService table).

use std::cmp::Ordering;

use serde_json::{json, Value};

use super::duration::{human_duration, since};
use super::format::*;

fn age(obj: &Value, now: i64) -> Value {
    json!(since(creation_timestamp(obj), now))
}

/// `printIngress`: Name, Class, Hosts, Address, Ports, Age.
pub fn ingress(obj: &Value, now: i64) -> Vec<Value> {
    let rules = arr_at(obj, &["spec", "rules"]);
    const MAX: usize = 3;
    let (mut hosts, mut more) = (Vec::new(), false);
    for rule in rules {
        if hosts.len() == MAX {
            more = true;
        }
        let host = str_at(rule, &["host"]);
        if !more && !host.is_empty() {
            hosts.push(host);
        }
    }
    let hosts = if hosts.is_empty() {
        "*".to_string()
    } else if more {
        format!("{} + {} more...", hosts.join(","), rules.len() - MAX)
    } else {
        hosts.join(",")
    };
    let ports = if arr_at(obj, &["spec", "tls"]).is_empty() {
        "80"
    } else {
        "80, 443"
    };
    vec![
        json!(name(obj)),
        json!(opt_str(obj, &["spec", "ingressClassName"]).unwrap_or("<none>")),
        json!(hosts),
        json!(load_balancer_ingress(arr_at(
            obj,
            &["status", "loadBalancer", "ingress"]
        ))),
        json!(ports),
        age(obj, now),
    ]
}

/// `printIngressClass`: Name, Controller, Parameters (`Kind.group/name`), Age.
pub fn ingress_class(obj: &Value, now: i64) -> Vec<Value> {
    let parameters = match at(obj, &["spec", "parameters"]).filter(|p| !p.is_null()) {
        None => "<none>".to_string(),
        Some(p) => {
            let mut text = str_at(p, &["kind"]).to_string();
            if let Some(group) = opt_str(p, &["apiGroup"]) {
                text = format!("{text}.{group}");
            }
            format!("{text}/{}", str_at(p, &["name"]))
        }
    };
    vec![
        json!(name(obj)),
        json!(str_at(obj, &["spec", "controller"])),
        json!(parameters),
        age(obj, now),
    ]
}

/// `printNetworkPolicy`.
pub fn network_policy(obj: &Value, now: i64) -> Vec<Value> {
    let selector = at(obj, &["spec", "podSelector"])
        .cloned()
        .unwrap_or_else(|| json!({}));
    vec![
        json!(name(obj)),
        json!(format_label_selector(Some(&selector))),
        age(obj, now),
    ]
}

/// `printEndpointSlice`: Name, AddressType, Ports, Endpoints, Age.
pub fn endpoint_slice(obj: &Value, now: i64) -> Vec<Value> {
    const MAX: usize = 3;
    let ports = arr_at(obj, &["ports"]);
    let port_list: Vec<String> = ports
        .iter()
        .take(MAX)
        .map(
            |port| match (opt_int(port, &["port"]), opt_str(port, &["name"])) {
                (Some(number), _) => number.to_string(),
                (None, Some(port_name)) => port_name.to_string(),
                (None, None) => "*".to_string(),
            },
        )
        .collect();
    let addresses: Vec<String> = arr_at(obj, &["endpoints"])
        .iter()
        .flat_map(|e| {
            arr_at(e, &["addresses"])
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    let shown: Vec<String> = addresses.iter().take(MAX).cloned().collect();
    vec![
        json!(name(obj)),
        json!(str_at(obj, &["addressType"])),
        json!(list_with_more(
            &port_list,
            ports.len() > MAX,
            ports.len(),
            MAX
        )),
        json!(list_with_more(
            &shown,
            addresses.len() > MAX,
            addresses.len(),
            MAX
        )),
        age(obj, now),
    ]
}

/// `printServiceCIDR`.
pub fn service_cidr(obj: &Value, now: i64) -> Vec<Value> {
    let cidrs: Vec<&str> = arr_at(obj, &["spec", "cidrs"])
        .iter()
        .filter_map(Value::as_str)
        .collect();
    vec![json!(name(obj)), json!(cidrs.join(",")), age(obj, now)]
}

/// `printIPAddress`: `resource.group[/namespace]/name`; the age cell has no column upstream.
pub fn ip_address(obj: &Value, now: i64) -> Vec<Value> {
    let parent = match at(obj, &["spec", "parentRef"]).filter(|p| !p.is_null()) {
        None => "<none>".to_string(),
        Some(p) => {
            let (group, resource) = (str_at(p, &["group"]), str_at(p, &["resource"]));
            let mut text = if group.is_empty() {
                resource.to_string()
            } else {
                format!("{resource}.{group}")
            }
            .to_lowercase();
            let namespace = str_at(p, &["namespace"]);
            if !namespace.is_empty() {
                text = format!("{text}/{namespace}");
            }
            format!("{text}/{}", str_at(p, &["name"]))
        }
    };
    vec![json!(name(obj)), json!(parent), age(obj, now)]
}

/// `storageutil.IsDefaultAnnotation`.
fn is_default_class(obj: &Value, key: &str, beta_key: &str) -> bool {
    annotation(obj, key) == Some("true") || annotation(obj, beta_key) == Some("true")
}

/// `printStorageClass`: the default class is named "NAME (default)".
pub fn storage_class(obj: &Value, now: i64) -> Vec<Value> {
    let mut class_name = name(obj).to_string();
    if is_default_class(
        obj,
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    ) {
        class_name.push_str(" (default)");
    }
    vec![
        json!(class_name),
        json!(str_at(obj, &["provisioner"])),
        json!(opt_str(obj, &["reclaimPolicy"]).unwrap_or("Delete")),
        json!(opt_str(obj, &["volumeBindingMode"]).unwrap_or("Immediate")),
        json!(opt_bool(obj, &["allowVolumeExpansion"]).unwrap_or(false)),
        age(obj, now),
    ]
}

/// `printVolumeAttributesClass`.
pub fn volume_attributes_class(obj: &Value, now: i64) -> Vec<Value> {
    let mut class_name = name(obj).to_string();
    if annotation(obj, "storage.kubernetes.io/is-default-class") == Some("true") {
        class_name.push_str(" (default)");
    }
    vec![
        json!(class_name),
        json!(str_at(obj, &["driverName"])),
        age(obj, now),
    ]
}

/// `printCSIDriver`: AttachRequired, PodInfoOnMount, StorageCapacity, TokenRequests, RequiresRepublish, Modes, Age.
pub fn csi_driver(obj: &Value, now: i64) -> Vec<Value> {
    let modes: Vec<&str> = arr_at(obj, &["spec", "volumeLifecycleModes"])
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let modes = if modes.is_empty() {
        "<none>".to_string()
    } else {
        modes.join(",")
    };
    let token_requests = match at(obj, &["spec", "tokenRequests"]).and_then(Value::as_array) {
        None => "<unset>".to_string(),
        Some(requests) => requests
            .iter()
            .map(|t| str_at(t, &["audience"]))
            .collect::<Vec<_>>()
            .join(","),
    };
    let flag =
        |field: &str, default: bool| json!(opt_bool(obj, &["spec", field]).unwrap_or(default));
    vec![
        json!(name(obj)),
        flag("attachRequired", true),
        flag("podInfoOnMount", false),
        flag("storageCapacity", false),
        json!(token_requests),
        flag("requiresRepublish", false),
        json!(modes),
        age(obj, now),
    ]
}

/// `printCSINode`.
pub fn csi_node(obj: &Value, now: i64) -> Vec<Value> {
    vec![
        json!(name(obj)),
        json!(len_at(obj, &["spec", "drivers"])),
        age(obj, now),
    ]
}

/// `printCSIStorageCapacity`: no age.
pub fn csi_storage_capacity(obj: &Value, _now: i64) -> Vec<Value> {
    let capacity = at(obj, &["capacity"])
        .filter(|c| !c.is_null())
        .map_or_else(|| "<unset>".to_string(), |c| quantity_string(Some(c)));
    vec![
        json!(name(obj)),
        json!(str_at(obj, &["storageClassName"])),
        json!(capacity),
    ]
}

/// `printVolumeAttachment`: Name, Attacher, PV, Node, Attached, Age.
pub fn volume_attachment(obj: &Value, now: i64) -> Vec<Value> {
    vec![
        json!(name(obj)),
        json!(str_at(obj, &["spec", "attacher"])),
        json!(str_at(obj, &["spec", "source", "persistentVolumeName"])),
        json!(str_at(obj, &["spec", "nodeName"])),
        json!(opt_bool(obj, &["status", "attached"]).unwrap_or(false)),
        age(obj, now),
    ]
}

/// `printRoleBinding` / `printClusterRoleBinding`: Role, Age, Users, Groups, ServiceAccounts.
pub fn role_binding(obj: &Value, now: i64) -> Vec<Value> {
    let role = format!(
        "{}/{}",
        str_at(obj, &["roleRef", "kind"]),
        str_at(obj, &["roleRef", "name"])
    );
    let (mut users, mut groups, mut service_accounts) = (Vec::new(), Vec::new(), Vec::new());
    for subject in arr_at(obj, &["subjects"]) {
        let subject_name = str_at(subject, &["name"]);
        match str_at(subject, &["kind"]) {
            "ServiceAccount" => service_accounts.push(format!(
                "{}/{subject_name}",
                str_at(subject, &["namespace"])
            )),
            "User" => users.push(subject_name.to_string()),
            "Group" => groups.push(subject_name.to_string()),
            _ => {}
        }
    }
    vec![
        json!(name(obj)),
        json!(role),
        age(obj, now),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(service_accounts.join(", ")),
    ]
}

/// `printLease`.
pub fn lease(obj: &Value, now: i64) -> Vec<Value> {
    vec![
        json!(name(obj)),
        json!(str_at(obj, &["spec", "holderIdentity"])),
        age(obj, now),
    ]
}

/// `printPriorityClass`: Name, Value, Global-Default, Age, PreemptionPolicy.
pub fn priority_class(obj: &Value, now: i64) -> Vec<Value> {
    vec![
        json!(name(obj)),
        json!(int_at(obj, &["value"])),
        json!(opt_bool(obj, &["globalDefault"]).unwrap_or(false)),
        age(obj, now),
        json!(str_at(obj, &["preemptionPolicy"])),
    ]
}

/// `printRuntimeClass`.
pub fn runtime_class(obj: &Value, now: i64) -> Vec<Value> {
    vec![
        json!(name(obj)),
        json!(str_at(obj, &["handler"])),
        age(obj, now),
    ]
}

/// `printMutatingWebhook` / `printValidatingWebhook`.
pub fn webhook_configuration(obj: &Value, now: i64) -> Vec<Value> {
    vec![
        json!(name(obj)),
        json!(len_at(obj, &["webhooks"])),
        age(obj, now),
    ]
}

/// `printValidatingAdmissionPolicy`.
pub fn validating_admission_policy(obj: &Value, now: i64) -> Vec<Value> {
    let param_kind = match at(obj, &["spec", "paramKind"]).filter(|p| !p.is_null()) {
        Some(p) => format!("{}/{}", str_at(p, &["apiVersion"]), str_at(p, &["kind"])),
        None => "<unset>".to_string(),
    };
    vec![
        json!(name(obj)),
        json!(len_at(obj, &["spec", "validations"])),
        json!(param_kind),
        age(obj, now),
    ]
}

/// `printValidatingAdmissionPolicyBinding`.
pub fn validating_admission_policy_binding(obj: &Value, now: i64) -> Vec<Value> {
    let mut param = "<unset>".to_string();
    if let Some(p) = at(obj, &["spec", "paramRef"]).filter(|p| !p.is_null()) {
        let (param_name, namespace) = (str_at(p, &["name"]), str_at(p, &["namespace"]));
        if !param_name.is_empty() {
            param = if namespace.is_empty() {
                format!("*/{param_name}")
            } else {
                format!("{namespace}/{param_name}")
            };
        } else if let Some(selector) = at(p, &["selector"]).filter(|s| !s.is_null()) {
            param = label_selector_proto_string(selector);
        }
    }
    vec![
        json!(name(obj)),
        json!(str_at(obj, &["spec", "policyName"])),
        json!(param),
        age(obj, now),
    ]
}

/// `(*metav1.LabelSelector).String()` (the gogo-proto text form).
fn label_selector_proto_string(selector: &Value) -> String {
    let mut labels: Vec<(&String, &Value)> = obj_at(selector, &["matchLabels"])
        .into_iter()
        .flatten()
        .collect();
    labels.sort_by(|a, b| a.0.cmp(b.0));
    let labels: String = labels
        .iter()
        .map(|(k, v)| format!("{k}: {},", v.as_str().unwrap_or("")))
        .collect();
    let expressions: String = arr_at(selector, &["matchExpressions"])
        .iter()
        .map(|e| {
            let values: Vec<&str> = arr_at(e, &["values"])
                .iter()
                .filter_map(Value::as_str)
                .collect();
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                str_at(e, &["key"]),
                str_at(e, &["operator"]),
                values.join(" ")
            )
        })
        .collect();
    format!("&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}")
}

/// `extractCSRStatus`.
fn csr_status(obj: &Value) -> String {
    let has = |kind: &str| {
        arr_at(obj, &["status", "conditions"])
            .iter()
            .any(|c| str_at(c, &["type"]) == kind)
    };
    let mut status = if has("Denied") {
        "Denied"
    } else if has("Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_string();
    if has("Failed") {
        status.push_str(",Failed");
    }
    if !str_at(obj, &["status", "certificate"]).is_empty() {
        status.push_str(",Issued");
    }
    status
}

/// `printCertificateSigningRequest`: Name, Age, SignerName, Requestor, RequestedDuration, Condition.
pub fn certificate_signing_request(obj: &Value, now: i64) -> Vec<Value> {
    let signer = match str_at(obj, &["spec", "signerName"]) {
        "" => "<none>",
        signer => signer,
    };
    let requested = opt_int(obj, &["spec", "expirationSeconds"]).map_or_else(
        || "<none>".to_string(),
        |seconds| human_duration(seconds.saturating_mul(1_000_000_000)),
    );
    vec![
        json!(name(obj)),
        age(obj, now),
        json!(signer),
        json!(str_at(obj, &["spec", "username"])),
        json!(requested),
        json!(csr_status(obj)),
    ]
}

/// `printFlowSchema`: Name, PriorityLevel, MatchingPrecedence, DistinguisherMethod, Age, MissingPL.
pub fn flow_schema(obj: &Value, now: i64) -> Vec<Value> {
    let distinguisher = opt_str(obj, &["spec", "distinguisherMethod", "type"])
        .or_else(|| {
            at(obj, &["spec", "distinguisherMethod"])
                .filter(|d| !d.is_null())
                .map(|_| "")
        })
        .unwrap_or("<none>");
    let missing = arr_at(obj, &["status", "conditions"])
        .iter()
        .find(|c| str_at(c, &["type"]) == "Dangling")
        .map_or("?", |c| str_at(c, &["status"]));
    vec![
        json!(name(obj)),
        json!(str_at(obj, &["spec", "priorityLevelConfiguration", "name"])),
        json!(matching_precedence(obj)),
        json!(distinguisher),
        age(obj, now),
        json!(missing),
    ]
}

/// `spec.matchingPrecedence`; flowcontrol/v1 defaulting turns 0 into 1000.
fn matching_precedence(obj: &Value) -> i64 {
    match int_at(obj, &["spec", "matchingPrecedence"]) {
        0 => 1000,
        precedence => precedence,
    }
}

/// `printFlowSchemaList` sorts by `FlowSchemaSequence`: precedence, then name.
pub fn flow_schema_order(a: &Value, b: &Value) -> Ordering {
    matching_precedence(a)
        .cmp(&matching_precedence(b))
        .then_with(|| name(a).cmp(name(b)))
}

/// `printPriorityLevelConfiguration`: numbers are integer cells, else "<none>".
pub fn priority_level_configuration(obj: &Value, now: i64) -> Vec<Value> {
    let none = || json!("<none>");
    let (mut shares, mut queues, mut hand_size, mut queue_length) =
        (none(), none(), none(), none());
    if let Some(limited) = at(obj, &["spec", "limited"]).filter(|l| !l.is_null()) {
        // flowcontrol/v1 defaulting: 30 shares; 64 queues, hand size 8, 50 per queue.
        shares = json!(opt_int(limited, &["nominalConcurrencyShares"]).unwrap_or(30));
        if let Some(queuing) = at(limited, &["limitResponse", "queuing"]).filter(|q| !q.is_null()) {
            queues = json!(opt_int(queuing, &["queues"]).unwrap_or(64));
            hand_size = json!(opt_int(queuing, &["handSize"]).unwrap_or(8));
            queue_length = json!(opt_int(queuing, &["queueLengthLimit"]).unwrap_or(50));
        }
    }
    vec![
        json!(name(obj)),
        json!(str_at(obj, &["spec", "type"])),
        shares,
        queues,
        hand_size,
        queue_length,
        age(obj, now),
    ]
}

/// `printDeviceClass` / `printResourceClaimTemplate`: Name, Age.
pub fn name_and_age(obj: &Value, now: i64) -> Vec<Value> {
    vec![json!(name(obj)), age(obj, now)]
}

/// `printResourceClaim`: State is `deleted`, `pending`, `allocated`, `reserved` as they apply.
pub fn resource_claim(obj: &Value, now: i64) -> Vec<Value> {
    let deleted = deletion_timestamp(obj).is_some();
    let mut states = Vec::new();
    if deleted {
        states.push("deleted");
    }
    if at(obj, &["status", "allocation"]).is_none_or(Value::is_null) {
        if !deleted {
            states.push("pending");
        }
    } else {
        states.push("allocated");
        if !arr_at(obj, &["status", "reservedFor"]).is_empty() {
            states.push("reserved");
        }
    }
    vec![json!(name(obj)), json!(states.join(",")), age(obj, now)]
}

/// `printResourceSlice`: Name, Node, Driver, Pool, Age.
pub fn resource_slice(obj: &Value, now: i64) -> Vec<Value> {
    vec![
        json!(name(obj)),
        json!(str_at(obj, &["spec", "nodeName"])),
        json!(str_at(obj, &["spec", "driver"])),
        json!(str_at(obj, &["spec", "pool", "name"])),
        age(obj, now),
    ]
}

/// kube-aggregator's APIService table: Name, Service (`ns/name` or Local), Available, Age.
pub fn api_service(obj: &Value, now: i64) -> Vec<Value> {
    let service = match at(obj, &["spec", "service"]).filter(|s| !s.is_null()) {
        Some(s) => format!("{}/{}", str_at(s, &["namespace"]), str_at(s, &["name"])),
        None => "Local".to_string(),
    };
    let available = match arr_at(obj, &["status", "conditions"])
        .iter()
        .find(|c| str_at(c, &["type"]) == "Available")
    {
        None => "Unknown".to_string(),
        Some(c) => {
            let (status, reason) = (str_at(c, &["status"]), str_at(c, &["reason"]));
            if status == "True" || reason.is_empty() {
                status.to_string()
            } else {
                format!("{status} ({reason})")
            }
        }
    };
    vec![
        json!(name(obj)),
        json!(service),
        json!(available),
        age(obj, now),
    ]
}
