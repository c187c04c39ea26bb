//! Which printer each resource gets and its column definitions, as
//! `AddHandlers` (`pkg/printers/internalversion/printers.go`) registers them.
//! Wide columns carry priority 1; the server always prints wide.

use serde_json::{json, Value};

use super::descriptions as doc;

/// One upstream print handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Printer {
    Pod,
    PodTemplate,
    PodDisruptionBudget,
    ReplicationController,
    ReplicaSet,
    DaemonSet,
    Job,
    CronJob,
    Service,
    Ingress,
    IngressClass,
    StatefulSet,
    Endpoints,
    Node,
    Event,
    Namespace,
    Secret,
    ServiceAccount,
    PersistentVolume,
    PersistentVolumeClaim,
    ComponentStatus,
    Deployment,
    HorizontalPodAutoscaler,
    ConfigMap,
    NetworkPolicy,
    RoleBinding,
    ClusterRoleBinding,
    CertificateSigningRequest,
    Lease,
    StorageClass,
    VolumeAttributesClass,
    ControllerRevision,
    ResourceQuota,
    PriorityClass,
    RuntimeClass,
    VolumeAttachment,
    EndpointSlice,
    CsiNode,
    CsiDriver,
    CsiStorageCapacity,
    MutatingWebhook,
    ValidatingWebhook,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    FlowSchema,
    PriorityLevelConfiguration,
    ServiceCidr,
    IpAddress,
    DeviceClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    /// kube-aggregator's own `ConvertToTable` (not printers.go).
    ApiService,
}

/// The printer kube-apiserver uses for a group/resource; `None` means the
/// default convertor (Name, Created At): roles, clusterroles, limitranges,
/// customresourcedefinitions, the review kinds, ...
pub fn printer_for(group: &str, plural: &str) -> Option<Printer> {
    use Printer::*;
    Some(match (group, plural) {
        ("", "pods") => Pod,
        ("", "podtemplates") => PodTemplate,
        ("", "replicationcontrollers") => ReplicationController,
        ("", "services") => Service,
        ("", "endpoints") => Endpoints,
        ("", "nodes") => Node,
        // events.k8s.io Events are the core Event type in another version.
        ("" | "events.k8s.io", "events") => Event,
        ("", "namespaces") => Namespace,
        ("", "secrets") => Secret,
        ("", "serviceaccounts") => ServiceAccount,
        ("", "persistentvolumes") => PersistentVolume,
        ("", "persistentvolumeclaims") => PersistentVolumeClaim,
        ("", "componentstatuses") => ComponentStatus,
        ("", "configmaps") => ConfigMap,
        ("", "resourcequotas") => ResourceQuota,
        ("apps" | "extensions", "replicasets") => ReplicaSet,
        ("apps" | "extensions", "daemonsets") => DaemonSet,
        ("apps" | "extensions", "deployments") => Deployment,
        ("apps", "statefulsets") => StatefulSet,
        ("apps", "controllerrevisions") => ControllerRevision,
        ("batch", "jobs") => Job,
        ("batch", "cronjobs") => CronJob,
        ("autoscaling", "horizontalpodautoscalers") => HorizontalPodAutoscaler,
        ("policy", "poddisruptionbudgets") => PodDisruptionBudget,
        ("networking.k8s.io", "ingresses") => Ingress,
        ("networking.k8s.io", "ingressclasses") => IngressClass,
        ("networking.k8s.io", "networkpolicies") => NetworkPolicy,
        ("networking.k8s.io", "servicecidrs") => ServiceCidr,
        ("networking.k8s.io", "ipaddresses") => IpAddress,
        ("discovery.k8s.io", "endpointslices") => EndpointSlice,
        ("rbac.authorization.k8s.io", "rolebindings") => RoleBinding,
        ("rbac.authorization.k8s.io", "clusterrolebindings") => ClusterRoleBinding,
        ("certificates.k8s.io", "certificatesigningrequests") => CertificateSigningRequest,
        ("coordination.k8s.io", "leases") => Lease,
        ("storage.k8s.io", "storageclasses") => StorageClass,
        ("storage.k8s.io", "volumeattributesclasses") => VolumeAttributesClass,
        ("storage.k8s.io", "volumeattachments") => VolumeAttachment,
        ("storage.k8s.io", "csinodes") => CsiNode,
        ("storage.k8s.io", "csidrivers") => CsiDriver,
        ("storage.k8s.io", "csistoragecapacities") => CsiStorageCapacity,
        ("scheduling.k8s.io", "priorityclasses") => PriorityClass,
        ("node.k8s.io", "runtimeclasses") => RuntimeClass,
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations") => MutatingWebhook,
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations") => ValidatingWebhook,
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => {
            ValidatingAdmissionPolicy
        }
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => {
            ValidatingAdmissionPolicyBinding
        }
        ("flowcontrol.apiserver.k8s.io", "flowschemas") => FlowSchema,
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") => {
            PriorityLevelConfiguration
        }
        ("resource.k8s.io", "deviceclasses") => DeviceClass,
        ("resource.k8s.io", "resourceclaims") => ResourceClaim,
        ("resource.k8s.io", "resourceclaimtemplates") => ResourceClaimTemplate,
        ("resource.k8s.io", "resourceslices") => ResourceSlice,
        ("apiregistration.k8s.io", "apiservices") => ApiService,
        _ => return None,
    })
}

/// A `metav1.TableColumnDefinition` (no field is omitempty).
fn col(name: &str, kind: &str, description: &str, priority: u8) -> Value {
    json!({"name": name, "type": kind, "format": "", "description": description, "priority": priority})
}

fn name_col() -> Value {
    json!({"name": "Name", "type": "string", "format": "name", "description": doc::OBJECT_META_NAME, "priority": 0})
}

fn age_col() -> Value {
    col("Age", "string", doc::OBJECT_META_CREATION_TIMESTAMP, 0)
}

/// `rest.NewDefaultTableConvertor`'s columns.
pub fn default_columns() -> Value {
    json!([
        name_col(),
        col("Created At", "date", doc::OBJECT_META_CREATION_TIMESTAMP, 0)
    ])
}

const CONTAINERS: &str = "Names of each container in the template.";
const IMAGES: &str = "Images referenced by each container in the template.";
const WEBHOOKS: &str = "Webhooks indicates the number of webhooks registered in this configuration";

/// `Containers`, `Images` (and `Selector`) wide columns of the workload printers.
fn template_cols(selector: Option<&str>) -> Vec<Value> {
    let mut cols = vec![
        col("Containers", "string", CONTAINERS, 1),
        col("Images", "string", IMAGES, 1),
    ];
    if let Some(description) = selector {
        cols.push(col("Selector", "string", description, 1));
    }
    cols
}

/// The column definitions of a printer, in order.
pub fn columns(printer: Printer) -> Value {
    use Printer::*;
    let s = "string";
    let i = "integer";
    let b = "boolean";
    let mut cols = vec![name_col()];
    let rest: Vec<Value> = match printer {
        Pod => vec![
            col("Ready", s, "The aggregate readiness state of this pod for accepting traffic.", 0),
            col("Status", s, "The aggregate status of the containers in this pod.", 0),
            col("Restarts", s, "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", 0),
            age_col(),
            col("IP", s, doc::POD_STATUS_POD_IP, 1),
            col("Node", s, doc::POD_SPEC_NODE_NAME, 1),
            col("Nominated Node", s, doc::POD_STATUS_NOMINATED_NODE_NAME, 1),
            col("Readiness Gates", s, doc::POD_SPEC_READINESS_GATES, 1),
        ],
        PodTemplate => vec![
            col("Containers", s, CONTAINERS, 0),
            col("Images", s, IMAGES, 0),
            col("Pod Labels", s, "The labels for the pod template.", 0),
        ],
        PodDisruptionBudget => vec![
            col("Min Available", s, "The minimum number of pods that must be available.", 0),
            col("Max Unavailable", s, "The maximum number of pods that may be unavailable.", 0),
            col("Allowed Disruptions", i, "Calculated number of pods that may be disrupted at this time.", 0),
            age_col(),
        ],
        ReplicationController => [
            vec![
                col("Desired", i, doc::RC_SPEC_REPLICAS, 0),
                col("Current", i, doc::RC_STATUS_REPLICAS, 0),
                col("Ready", i, doc::RC_STATUS_READY_REPLICAS, 0),
                age_col(),
            ],
            template_cols(Some(doc::RC_SPEC_SELECTOR)),
        ]
        .concat(),
        ReplicaSet => [
            vec![
                col("Desired", i, doc::RS_SPEC_REPLICAS, 0),
                col("Current", i, doc::RS_STATUS_REPLICAS, 0),
                col("Ready", i, doc::RS_STATUS_READY_REPLICAS, 0),
                age_col(),
            ],
            template_cols(Some(doc::RS_SPEC_SELECTOR)),
        ]
        .concat(),
        DaemonSet => [
            vec![
                col("Desired", i, doc::DS_STATUS_DESIRED, 0),
                col("Current", i, doc::DS_STATUS_CURRENT, 0),
                col("Ready", i, doc::DS_STATUS_READY, 0),
                col("Up-to-date", i, doc::DS_STATUS_UPDATED, 0),
                col("Available", i, doc::DS_STATUS_AVAILABLE, 0),
                col("Node Selector", s, doc::POD_SPEC_NODE_SELECTOR, 0),
                age_col(),
            ],
            template_cols(Some(doc::DS_SPEC_SELECTOR)),
        ]
        .concat(),
        Job => [
            vec![
                col("Status", s, "Status of the job.", 0),
                col("Completions", s, doc::JOB_STATUS_SUCCEEDED, 0),
                col("Duration", s, "Time required to complete the job.", 0),
                age_col(),
            ],
            template_cols(Some(doc::JOB_SPEC_SELECTOR)),
        ]
        .concat(),
        CronJob => [
            vec![
                col("Schedule", s, doc::CRONJOB_SPEC_SCHEDULE, 0),
                col("Timezone", s, doc::CRONJOB_SPEC_TIME_ZONE, 0),
                col("Suspend", b, doc::CRONJOB_SPEC_SUSPEND, 0),
                col("Active", i, doc::CRONJOB_STATUS_ACTIVE, 0),
                col("Last Schedule", s, doc::CRONJOB_STATUS_LAST_SCHEDULE, 0),
                age_col(),
            ],
            template_cols(Some(doc::JOB_SPEC_SELECTOR)),
        ]
        .concat(),
        Service => vec![
            col("Type", s, doc::SERVICE_SPEC_TYPE, 0),
            col("Cluster-IP", s, doc::SERVICE_SPEC_CLUSTER_IP, 0),
            col("External-IP", s, doc::SERVICE_SPEC_EXTERNAL_IPS, 0),
            col("Port(s)", s, doc::SERVICE_SPEC_PORTS, 0),
            age_col(),
            col("Selector", s, doc::SERVICE_SPEC_SELECTOR, 1),
        ],
        Ingress => vec![
            col("Class", s, "The name of the IngressClass resource that should be used for additional configuration", 0),
            col("Hosts", s, "Hosts that incoming requests are matched against before the ingress rule", 0),
            col("Address", s, "Address is a list containing ingress points for the load-balancer", 0),
            col("Ports", s, "Ports of TLS configurations that open", 0),
            age_col(),
        ],
        IngressClass => vec![
            col("Controller", s, "Controller that is responsible for handling this class", 0),
            col("Parameters", s, "A reference to a resource with additional parameters", 0),
            age_col(),
        ],
        StatefulSet => [vec![col("Ready", s, "Number of the pod with ready state", 0), age_col()], template_cols(None)].concat(),
        Endpoints => vec![col("Endpoints", s, doc::ENDPOINTS_SUBSETS, 0), age_col()],
        Node => vec![
            col("Status", s, "The status of the node", 0),
            col("Roles", s, "The roles of the node", 0),
            age_col(),
            col("Version", s, doc::NODE_INFO_KUBELET_VERSION, 0),
            col("Internal-IP", s, doc::NODE_STATUS_ADDRESSES, 1),
            col("External-IP", s, doc::NODE_STATUS_ADDRESSES, 1),
            col("OS-Image", s, doc::NODE_INFO_OS_IMAGE, 1),
            col("Kernel-Version", s, doc::NODE_INFO_KERNEL_VERSION, 1),
            col("Container-Runtime", s, doc::NODE_INFO_CONTAINER_RUNTIME_VERSION, 1),
        ],
        Event => {
            // The event table leads with Last Seen; Name is its last (wide) column.
            return json!([
                col("Last Seen", s, doc::EVENT_LAST_TIMESTAMP, 0),
                col("Type", s, doc::EVENT_TYPE, 0),
                col("Reason", s, doc::EVENT_REASON, 0),
                col("Object", s, doc::EVENT_INVOLVED_OBJECT, 0),
                col("Subobject", s, doc::OBJECT_REFERENCE_FIELD_PATH, 1),
                col("Source", s, doc::EVENT_SOURCE, 1),
                col("Message", s, doc::EVENT_MESSAGE, 0),
                col("First Seen", s, doc::EVENT_FIRST_TIMESTAMP, 1),
                col("Count", s, doc::EVENT_COUNT, 1),
                json!({"name": "Name", "type": s, "format": "name", "description": doc::OBJECT_META_NAME, "priority": 1}),
            ]);
        }
        Namespace => vec![col("Status", s, "The status of the namespace", 0), age_col()],
        Secret => vec![col("Type", s, doc::SECRET_TYPE, 0), col("Data", s, doc::SECRET_DATA, 0), age_col()],
        ServiceAccount => vec![col("Secrets", s, doc::SERVICE_ACCOUNT_SECRETS, 0), age_col()],
        PersistentVolume => vec![
            col("Capacity", s, doc::PV_SPEC_CAPACITY, 0),
            col("Access Modes", s, doc::PV_SPEC_ACCESS_MODES, 0),
            col("Reclaim Policy", s, doc::PV_SPEC_RECLAIM_POLICY, 0),
            col("Status", s, doc::PV_STATUS_PHASE, 0),
            col("Claim", s, doc::PV_SPEC_CLAIM_REF, 0),
            col("StorageClass", s, "StorageClass of the pv", 0),
            col("VolumeAttributesClass", s, "VolumeAttributesClass of the pv", 0),
            col("Reason", s, doc::PV_STATUS_REASON, 0),
            age_col(),
            col("VolumeMode", s, doc::PV_SPEC_VOLUME_MODE, 1),
        ],
        PersistentVolumeClaim => vec![
            col("Status", s, doc::PVC_STATUS_PHASE, 0),
            col("Volume", s, doc::PVC_SPEC_VOLUME_NAME, 0),
            col("Capacity", s, doc::PVC_STATUS_CAPACITY, 0),
            col("Access Modes", s, doc::PVC_STATUS_ACCESS_MODES, 0),
            col("StorageClass", s, "StorageClass of the pvc", 0),
            col("VolumeAttributesClass", s, "VolumeAttributesClass of the pvc", 0),
            age_col(),
            col("VolumeMode", s, doc::PVC_SPEC_VOLUME_MODE, 1),
        ],
        ComponentStatus => vec![
            col("Status", s, "Status of the component conditions", 0),
            col("Message", s, "Message of the component conditions", 0),
            col("Error", s, "Error of the component conditions", 0),
        ],
        Deployment => [
            vec![
                col("Ready", s, "Number of the pod with ready state", 0),
                col("Up-to-date", s, doc::DEPLOY_STATUS_UPDATED, 0),
                col("Available", s, doc::DEPLOY_STATUS_AVAILABLE, 0),
                age_col(),
            ],
            template_cols(Some(doc::DEPLOY_SPEC_SELECTOR)),
        ]
        .concat(),
        HorizontalPodAutoscaler => vec![
            col("Reference", s, doc::HPA_SPEC_SCALE_TARGET_REF, 0),
            col("Targets", s, doc::HPA_SPEC_METRICS, 0),
            col("MinPods", s, doc::HPA_SPEC_MIN_REPLICAS, 0),
            col("MaxPods", s, doc::HPA_SPEC_MAX_REPLICAS, 0),
            col("Replicas", s, doc::HPA_STATUS_CURRENT_REPLICAS, 0),
            age_col(),
        ],
        ConfigMap => vec![col("Data", s, doc::CONFIG_MAP_DATA, 0), age_col()],
        NetworkPolicy => vec![col("Pod-Selector", s, doc::NETPOL_SPEC_POD_SELECTOR, 0), age_col()],
        RoleBinding | ClusterRoleBinding => {
            let (role_ref, what) = if printer == RoleBinding {
                (doc::ROLE_BINDING_ROLE_REF, "roleBinding")
            } else {
                (doc::CLUSTER_ROLE_BINDING_ROLE_REF, "clusterRoleBinding")
            };
            vec![
                col("Role", s, role_ref, 0),
                age_col(),
                col("Users", s, &format!("Users in the {what}"), 1),
                col("Groups", s, &format!("Groups in the {what}"), 1),
                col("ServiceAccounts", s, &format!("ServiceAccounts in the {what}"), 1),
            ]
        }
        CertificateSigningRequest => vec![
            age_col(),
            col("SignerName", s, doc::CSR_SPEC_SIGNER_NAME, 0),
            col("Requestor", s, doc::CSR_SPEC_REQUEST, 0),
            col("RequestedDuration", s, doc::CSR_SPEC_EXPIRATION_SECONDS, 0),
            col("Condition", s, doc::CSR_STATUS_CONDITIONS, 0),
        ],
        Lease => vec![col("Holder", s, doc::LEASE_SPEC_HOLDER_IDENTITY, 0), age_col()],
        StorageClass => vec![
            col("Provisioner", s, doc::STORAGE_CLASS_PROVISIONER, 0),
            col("ReclaimPolicy", s, doc::STORAGE_CLASS_RECLAIM_POLICY, 0),
            col("VolumeBindingMode", s, doc::STORAGE_CLASS_VOLUME_BINDING_MODE, 0),
            col("AllowVolumeExpansion", s, doc::STORAGE_CLASS_ALLOW_VOLUME_EXPANSION, 0),
            age_col(),
        ],
        VolumeAttributesClass => vec![col("DriverName", s, doc::VOLUME_ATTRIBUTES_CLASS_DRIVER_NAME, 0), age_col()],
        ControllerRevision => vec![
            col("Controller", s, "Controller of the object", 0),
            col("Revision", s, doc::CONTROLLER_REVISION_REVISION, 0),
            age_col(),
        ],
        ResourceQuota => vec![
            col("Request", s, "Request represents a minimum amount of cpu/memory that a container may consume.", 0),
            col("Limit", s, "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.", 0),
            age_col(),
        ],
        PriorityClass => vec![
            col("Value", i, doc::PRIORITY_CLASS_VALUE, 0),
            col("Global-Default", b, doc::PRIORITY_CLASS_GLOBAL_DEFAULT, 0),
            age_col(),
            col("PreemptionPolicy", s, doc::PRIORITY_CLASS_PREEMPTION_POLICY, 0),
        ],
        // Upstream reads ObjectMeta's (missing) "handler" doc: an empty description.
        RuntimeClass => vec![col("Handler", s, "", 0), age_col()],
        VolumeAttachment => vec![
            json!({"name": "Attacher", "type": s, "format": "name", "description": doc::VOLUME_ATTACHMENT_SPEC_ATTACHER, "priority": 0}),
            col("PV", s, doc::VOLUME_ATTACHMENT_SOURCE_PV_NAME, 0),
            col("Node", s, doc::VOLUME_ATTACHMENT_SPEC_NODE_NAME, 0),
            col("Attached", b, doc::VOLUME_ATTACHMENT_STATUS_ATTACHED, 0),
            age_col(),
        ],
        EndpointSlice => vec![
            col("AddressType", s, doc::ENDPOINT_SLICE_ADDRESS_TYPE, 0),
            col("Ports", s, doc::ENDPOINT_SLICE_PORTS, 0),
            col("Endpoints", s, doc::ENDPOINT_SLICE_ENDPOINTS, 0),
            age_col(),
        ],
        CsiNode => vec![col("Drivers", i, "Drivers indicates the number of CSI drivers registered on the node", 0), age_col()],
        CsiDriver => vec![
            col("AttachRequired", b, doc::CSI_DRIVER_ATTACH_REQUIRED, 0),
            col("PodInfoOnMount", b, doc::CSI_DRIVER_POD_INFO_ON_MOUNT, 0),
            col("StorageCapacity", b, doc::CSI_DRIVER_STORAGE_CAPACITY, 0),
            col("TokenRequests", s, doc::CSI_DRIVER_TOKEN_REQUESTS, 0),
            col("RequiresRepublish", b, doc::CSI_DRIVER_REQUIRES_REPUBLISH, 0),
            col("Modes", s, doc::CSI_DRIVER_MODES, 0),
            age_col(),
        ],
        CsiStorageCapacity => vec![
            col("StorageClassName", s, doc::CSI_STORAGE_CAPACITY_CLASS, 0),
            col("Capacity", s, doc::CSI_STORAGE_CAPACITY_CAPACITY, 0),
        ],
        MutatingWebhook | ValidatingWebhook => vec![col("Webhooks", i, WEBHOOKS, 0), age_col()],
        ValidatingAdmissionPolicy => vec![
            col("Validations", i, "Validations indicates the number of validation rules defined in this configuration", 0),
            col("ParamKind", s, "ParamKind specifies the kind of resources used to parameterize this policy", 0),
            age_col(),
        ],
        ValidatingAdmissionPolicyBinding => vec![
            col("PolicyName", s, "PolicyName indicates the policy definition which the policy binding binded to", 0),
            col("ParamRef", s, "ParamRef indicates the param resource which sets the configration param", 0),
            age_col(),
        ],
        FlowSchema => vec![
            col("PriorityLevel", s, doc::FLOW_SCHEMA_PL_NAME, 0),
            col("MatchingPrecedence", s, doc::FLOW_SCHEMA_MATCHING_PRECEDENCE, 0),
            col("DistinguisherMethod", s, doc::FLOW_SCHEMA_DISTINGUISHER_METHOD, 0),
            age_col(),
            col("MissingPL", s, "references a broken or non-existent PriorityLevelConfiguration", 0),
        ],
        PriorityLevelConfiguration => vec![
            col("Type", s, doc::PL_SPEC_TYPE, 0),
            col("NominalConcurrencyShares", s, doc::PL_NOMINAL_CONCURRENCY_SHARES, 0),
            col("Queues", s, doc::PL_QUEUES, 0),
            col("HandSize", s, doc::PL_HAND_SIZE, 0),
            col("QueueLengthLimit", s, doc::PL_QUEUE_LENGTH_LIMIT, 0),
            age_col(),
        ],
        ServiceCidr => vec![col("CIDRs", s, doc::SERVICE_CIDR_SPEC_CIDRS, 0), age_col()],
        // Upstream defines no Age column here (its rows still carry an age cell).
        IpAddress => vec![col("ParentRef", s, doc::IP_ADDRESS_SPEC_PARENT_REF, 0)],
        DeviceClass | ResourceClaimTemplate => vec![age_col()],
        ResourceClaim => vec![col("State", s, "A summary of the current state (allocated, pending, reserved, etc.).", 0), age_col()],
        ResourceSlice => vec![
            col("Node", s, doc::RESOURCE_SLICE_SPEC_NODE_NAME, 0),
            col("Driver", s, doc::RESOURCE_SLICE_SPEC_DRIVER, 0),
            col("Pool", s, doc::RESOURCE_POOL_NAME, 0),
            age_col(),
        ],
        ApiService => vec![
            col("Service", s, "The reference to the service that hosts this API endpoint.", 0),
            col("Available", s, "Whether this service is available.", 0),
            age_col(),
        ],
    };
    cols.extend(rest);
    Value::Array(cols)
}
