//! Query and path parameters of kube's REST operations, with kube's texts.
//!
//! Mirrors the parameters `k8s.io/apiserver/pkg/endpoints/installer.go` adds
//! from `metav1.ListOptions`, `CreateOptions`, `UpdateOptions`, `PatchOptions`,
//! `DeleteOptions` and the core connect/log option structs. `v2_name` is the
//! key under which kube's `/openapi/v2` shares the parameter in its top-level
//! `parameters` section (kube-openapi `pkg/builder/parameters.go`); `None`
//! means kube inlines it in every operation.

/// Where a parameter goes (`in`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum In {
    Path,
    Query,
}

impl In {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            In::Path => "path",
            In::Query => "query",
        }
    }
}

/// OpenAPI primitive type of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Type {
    String,
    Integer,
    Boolean,
}

impl Type {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Type::String => "string",
            Type::Integer => "integer",
            Type::Boolean => "boolean",
        }
    }
}

/// One non-body parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Param {
    pub name: &'static str,
    pub location: In,
    pub ty: Type,
    pub description: String,
    pub required: bool,
    pub v2_name: Option<&'static str>,
}

/// A parameter with fixed text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    name: &'static str,
    location: In,
    ty: Type,
    description: &'static str,
    v2_name: Option<&'static str>,
}

impl Spec {
    pub(crate) fn param(&self) -> Param {
        Param {
            name: self.name,
            location: self.location,
            ty: self.ty,
            description: self.description.to_string(),
            required: self.location == In::Path,
            v2_name: self.v2_name,
        }
    }
}

const fn query(
    name: &'static str,
    ty: Type,
    description: &'static str,
    v2_name: Option<&'static str>,
) -> Spec {
    Spec {
        name,
        location: In::Query,
        ty,
        description,
        v2_name,
    }
}

/// `{name}` path parameter: "name of the <Kind>".
pub(crate) fn name_param(kind: &str) -> Param {
    Param {
        name: "name",
        location: In::Path,
        ty: Type::String,
        description: format!("name of the {kind}"),
        required: true,
        v2_name: None,
    }
}

pub(crate) const NAMESPACE: Spec = Spec {
    name: "namespace",
    location: In::Path,
    ty: Type::String,
    description: "object name and auth scope, such as for teams and projects",
    v2_name: Some("namespace-vgWSWtn3"),
};
pub(crate) const PRETTY: Spec = query("pretty", Type::String, "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).", Some("pretty-tJGM1-ng"));

// Write options (CreateOptions / UpdateOptions / PatchOptions).
pub(crate) const DRY_RUN: Spec = query("dryRun", Type::String, "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed", None);
pub(crate) const FIELD_MANAGER: Spec = query("fieldManager", Type::String, "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.", Some("fieldManager-Qy4HdaTW"));
pub(crate) const FIELD_MANAGER_PATCH: Spec = query("fieldManager", Type::String, "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch).", Some("fieldManager-7c6nTn1T"));
pub(crate) const FIELD_VALIDATION: Spec = query("fieldValidation", Type::String, "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.", None);
pub(crate) const FORCE: Spec = query("force", Type::Boolean, "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.", Some("force-tOGGb0Yi"));

// Delete options.
pub(crate) const GRACE_PERIOD_SECONDS: Spec = query("gracePeriodSeconds", Type::Integer, "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.", Some("gracePeriodSeconds--K5HaBOS"));
pub(crate) const IGNORE_STORE_READ_ERROR: Spec = query("ignoreStoreReadErrorWithClusterBreakingPotential", Type::Boolean, "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error. A resource is considered corrupt if it can not be retrieved from the underlying storage successfully because of a) its data can not be transformed e.g. decryption failure, or b) it fails to decode into an object. NOTE: unsafe deletion ignores finalizer constraints, skips precondition checks, and removes the object from the storage. WARNING: This may potentially break the cluster if the workload associated with the resource being unsafe-deleted relies on normal deletion flow. Use only if you REALLY know what you are doing. The default value is false, and the user must opt in to enable it", None);
pub(crate) const ORPHAN_DEPENDENTS: Spec = query("orphanDependents", Type::Boolean, "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the \"orphan\" finalizer will be added to/removed from the object's finalizers list. Either this field or PropagationPolicy may be set, but not both.", Some("orphanDependents-uRB25kX5"));
pub(crate) const PROPAGATION_POLICY: Spec = query("propagationPolicy", Type::String, "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground.", Some("propagationPolicy-6jk3prlO"));

// List options.
pub(crate) const ALLOW_WATCH_BOOKMARKS: Spec = query("allowWatchBookmarks", Type::Boolean, "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server's discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored.", Some("allowWatchBookmarks-HC2hJt-J"));
pub(crate) const CONTINUE: Spec = query("continue", Type::String, "The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize. If the specified continue value is no longer valid whether due to expiration (generally five to fifteen minutes) or a configuration change on the server, the server will respond with a 410 ResourceExpired error together with a continue token. If the client needs a consistent list, it must restart their list without the continue field. Otherwise, the client may send another list request with the token received with the 410 error, the server will respond with a list starting from the next key, but from the latest snapshot, which is inconsistent from the previous list results - objects that are created, modified, or deleted after the first list request will be included in the response, as long as their keys are after the \"next key\".\n\nThis field is not supported when watch is true. Clients may start a watch from the last resourceVersion value returned by the server and not miss any modifications.", Some("continue-QfD61s0i"));
pub(crate) const FIELD_SELECTOR: Spec = query(
    "fieldSelector",
    Type::String,
    "A selector to restrict the list of returned objects by their fields. Defaults to everything.",
    Some("fieldSelector-xIcQKXFG"),
);
pub(crate) const LABEL_SELECTOR: Spec = query(
    "labelSelector",
    Type::String,
    "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
    Some("labelSelector-5Zw57w4C"),
);
pub(crate) const LIMIT: Spec = query("limit", Type::Integer, "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results. Setting a limit may return fewer than the requested amount of items (up to zero items) in the event all requested objects are filtered out and clients should only use the presence of the continue field to determine whether more results are available. Servers may choose not to support the limit argument and will return all of the available results. If limit is specified and the continue field is empty, clients may assume that no more results are available. This field is not supported if watch is true.\n\nThe server guarantees that the objects returned when using continue will be identical to issuing a single list call without a limit - that is, no objects created, modified, or deleted after the first request is issued will be included in any subsequent continued requests. This is sometimes referred to as a consistent snapshot, and ensures that a client that is using limit to receive smaller chunks of a very large result can ensure they see all possible objects. If objects are updated during a chunked list the version of the object that was present at the time the first list result was calculated is returned.", Some("limit-1NfNmdNH"));
pub(crate) const RESOURCE_VERSION: Spec = query("resourceVersion", Type::String, "resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset", Some("resourceVersion-5WAnf1kx"));
pub(crate) const RESOURCE_VERSION_MATCH: Spec = query("resourceVersionMatch", Type::String, "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset", Some("resourceVersionMatch-t8XhRHeC"));
pub(crate) const SEND_INITIAL_EVENTS: Spec = query("sendInitialEvents", Type::Boolean, "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic \"Bookmark\" event  will be sent. The bookmark will report the ResourceVersion (RV) corresponding to the set of objects, and be marked with `\"k8s.io/initial-events-end\": \"true\"` annotation. Afterwards, the watch stream will proceed as usual, sending watch events corresponding to changes (subsequent to the RV) to objects watched.\n\nWhen `sendInitialEvents` option is set, we require `resourceVersionMatch` option to also be set. The semantic of the watch request is as following: - `resourceVersionMatch` = NotOlderThan\n  is interpreted as \"data at least as new as the provided `resourceVersion`\"\n  and the bookmark event is send when the state is synced\n  to a `resourceVersion` at least as fresh as the one provided by the ListOptions.\n  If `resourceVersion` is unset, this is interpreted as \"consistent read\" and the\n  bookmark event is send when the state is synced at least to the moment\n  when request started being processed.\n- `resourceVersionMatch` set to any other value or unset\n  Invalid error is returned.\n\nDefaults to true if `resourceVersion=\"\"` or `resourceVersion=\"0\"` (for backward compatibility reasons) and to false otherwise.", Some("sendInitialEvents-rLXlEK_k"));
pub(crate) const TIMEOUT_SECONDS: Spec = query("timeoutSeconds", Type::Integer, "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.", Some("timeoutSeconds-yvYezaOC"));
pub(crate) const WATCH: Spec = query("watch", Type::Boolean, "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.", Some("watch-XNNPZGbK"));

/// List / watch query parameters (GET on a collection, and the watch paths).
pub(crate) const LIST: &[Spec] = &[
    ALLOW_WATCH_BOOKMARKS,
    CONTINUE,
    FIELD_SELECTOR,
    LABEL_SELECTOR,
    LIMIT,
    RESOURCE_VERSION,
    RESOURCE_VERSION_MATCH,
    SEND_INITIAL_EVENTS,
    TIMEOUT_SECONDS,
    WATCH,
];
/// POST / PUT.
pub(crate) const WRITE: &[Spec] = &[DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];
/// PATCH.
pub(crate) const PATCH: &[Spec] = &[DRY_RUN, FIELD_MANAGER_PATCH, FIELD_VALIDATION, FORCE];
/// DELETE of one object.
pub(crate) const DELETE: &[Spec] = &[
    DRY_RUN,
    GRACE_PERIOD_SECONDS,
    IGNORE_STORE_READ_ERROR,
    ORPHAN_DEPENDENTS,
    PROPAGATION_POLICY,
];
/// DELETE of a collection: delete options plus list options without the watch ones.
pub(crate) const DELETE_COLLECTION: &[Spec] = &[
    CONTINUE,
    DRY_RUN,
    FIELD_SELECTOR,
    GRACE_PERIOD_SECONDS,
    IGNORE_STORE_READ_ERROR,
    LABEL_SELECTOR,
    LIMIT,
    ORPHAN_DEPENDENTS,
    PROPAGATION_POLICY,
    RESOURCE_VERSION,
    RESOURCE_VERSION_MATCH,
    SEND_INITIAL_EVENTS,
    TIMEOUT_SECONDS,
];

// Connect and log options (core/v1 PodExecOptions, PodAttachOptions,
// PodPortForwardOptions, Pod/Node/ServiceProxyOptions, PodLogOptions).
const B: Type = Type::Boolean;
const S: Type = Type::String;
const I: Type = Type::Integer;

/// Query parameters of a connect or log subresource, by `<plural>/<subresource>`.
pub(crate) fn subresource_query(plural: &str, subresource: &str) -> Vec<Spec> {
    match (plural, subresource) {
        ("pods", "exec") => vec![
            query("command", S, "Command is the remote command to execute. argv array. Not executed within a shell.", Some("command-Py3eQybp")),
            query("container", S, "Container in which to execute the command. Defaults to only container if there is only one container in the pod.", Some("container-i5dOmRiM")),
            query("stderr", B, "Redirect the standard error stream of the pod for this call.", Some("stderr-W_1TNlWc")),
            query("stdin", B, "Redirect the standard input stream of the pod for this call. Defaults to false.", Some("stdin-PSzNhyUC")),
            query("stdout", B, "Redirect the standard output stream of the pod for this call.", Some("stdout--EZLRwV1")),
            query("tty", B, "TTY if true indicates that a tty will be allocated for the exec call. Defaults to false.", Some("tty-s0flW37O")),
        ],
        ("pods", "attach") => vec![
            query("container", S, "The container in which to execute the command. Defaults to only container if there is only one container in the pod.", Some("container-_Q-EJ3nR")),
            query("stderr", B, "Stderr if true indicates that stderr is to be redirected for the attach call. Defaults to true.", Some("stderr-26jJhFUR")),
            query("stdin", B, "Stdin if true, redirects the standard input stream of the pod for this call. Defaults to false.", Some("stdin-sEFnN3IS")),
            query("stdout", B, "Stdout if true indicates that stdout is to be redirected for the attach call. Defaults to true.", Some("stdout-005YMKE6")),
            query("tty", B, "TTY if true indicates that a tty will be allocated for the attach call. This is passed through the container runtime so the tty is allocated on the worker node by the container runtime. Defaults to false.", Some("tty-g7MlET_l")),
        ],
        ("pods", "portforward") => {
            vec![query("ports", I, "List of ports to forward Required when using WebSockets", Some("ports-91KROJmm"))]
        }
        ("pods", "log") => vec![
            query("container", S, "The container for which to stream logs. Defaults to only container if there is one container in the pod.", Some("container-1GeXxFDC")),
            query("follow", B, "Follow the log stream of the pod. Defaults to false.", Some("follow-9OIXh_2R")),
            query("insecureSkipTLSVerifyBackend", B, "insecureSkipTLSVerifyBackend indicates that the apiserver should not confirm the validity of the serving certificate of the backend it is connecting to.  This will make the HTTPS connection between the apiserver and the backend insecure. This means the apiserver cannot verify the log data it is receiving came from the real kubelet.  If the kubelet is configured to verify the apiserver's TLS credentials, it does not mean the connection to the real kubelet is vulnerable to a man in the middle attack (e.g. an attacker could not intercept the actual log data coming from the real kubelet).", Some("insecureSkipTLSVerifyBackend-gM00jVbe")),
            query("limitBytes", I, "If set, the number of bytes to read from the server before terminating the log output. This may not display a complete final line of logging, and may return slightly more or slightly less than the specified limit.", Some("limitBytes-zwd1RXuc")),
            query("previous", B, "Return previous terminated container logs. Defaults to false.", Some("previous-1jxDPu3y")),
            query("sinceSeconds", I, "A relative time in seconds before the current time from which to show logs. If this value precedes the time a pod was started, only logs since the pod start will be returned. If this value is in the future, no logs will be returned. Only one of sinceSeconds or sinceTime may be specified.", Some("sinceSeconds-vE2NLdnP")),
            query("stream", S, "Specify which container log stream to return to the client. Acceptable values are \"All\", \"Stdout\" and \"Stderr\". If not specified, \"All\" is used, and both stdout and stderr are returned interleaved. Note that when \"TailLines\" is specified, \"Stream\" can only be set to nil or \"All\".", None),
            query("tailLines", I, "If set, the number of lines from the end of the logs to show. If not specified, logs are shown from the creation of the container or sinceSeconds or sinceTime", Some("tailLines-2fRTNzbP")),
            query("timestamps", B, "If true, add an RFC3339 or RFC3339Nano timestamp at the beginning of every line of log output. Defaults to false.", Some("timestamps-c17fW1w_")),
        ],
        ("pods", "proxy") => vec![proxy_path_query("Path is the URL path to use for the current proxy request to pod.", "path-oPbzgLUj")],
        ("nodes", "proxy") => vec![proxy_path_query("Path is the URL path to use for the current proxy request to node.", "path-rFDtV0x9")],
        ("services", "proxy") => vec![proxy_path_query("Path is the part of URLs that include service endpoints, suffixes, and parameters to use for the current proxy request to service. For example, the whole request URL is http://localhost/api/v1/namespaces/kube-system/services/elasticsearch-logging/_search?q=user:kimchy. Path is _search?q=user:kimchy.", "path-QCf0eosM")],
        _ => Vec::new(),
    }
}

const fn proxy_path_query(description: &'static str, v2_name: &'static str) -> Spec {
    query("path", S, description, Some(v2_name))
}

/// `{path}` of `.../proxy/{path}`.
pub(crate) const PROXY_PATH: Spec = Spec {
    name: "path",
    location: In::Path,
    ty: Type::String,
    description: "path to the resource",
    v2_name: Some("path-z6Ciiujn"),
};

/// `{logpath}` of `/logs/{logpath}`.
pub(crate) const LOG_PATH: Spec = Spec {
    name: "logpath",
    location: In::Path,
    ty: Type::String,
    description: "path to the log",
    v2_name: Some("logpath-Noq7euwC"),
};

/// Sorts parameters like kube-openapi's builder: by name, then location.
pub(crate) fn sort(params: &mut [Param]) {
    params.sort_by(|a, b| a.name.cmp(b.name).then(a.location.cmp(&b.location)));
}
