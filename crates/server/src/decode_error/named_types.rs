//! The Go type names the OpenAPI schema cannot show (table for
//! [`super::go_types`]).

/// Definition-name prefixes stripped for [`NAMED_TYPES`] keys.
pub(super) const API_PREFIX: &str = "io.k8s.api.";
pub(super) const APIS_META_PREFIX: &str = "io.k8s.apimachinery.pkg.apis.";

/// Fields whose Go type is a named type the OpenAPI schema cannot show
/// (`Protocol string` prints as `v1.Protocol`, `ResourceList` as
/// `v1.ResourceList`, `types.UID`), keyed `<group>.<version>.<Type>.<field>`
/// with the `io.k8s.api.` / `io.k8s.apimachinery.pkg.apis.` prefix removed.
/// From `k8s.io/api` and `k8s.io/apimachinery` types.go; fields not listed
/// print the structural Go type (`string`, `int32`, `map[string]string`,
/// `[]v1.Container`).
pub(super) const NAMED_TYPES: &[(&str, &str)] = &[
    // meta/v1
    ("meta.v1.ObjectMeta.uid", "types.UID"),
    ("meta.v1.OwnerReference.uid", "types.UID"),
    ("meta.v1.Preconditions.uid", "types.UID"),
    ("meta.v1.StatusDetails.uid", "types.UID"),
    ("meta.v1.StatusCause.reason", "v1.CauseType"),
    ("meta.v1.Status.reason", "v1.StatusReason"),
    (
        "meta.v1.ManagedFieldsEntry.operation",
        "v1.ManagedFieldsOperationType",
    ),
    (
        "meta.v1.LabelSelectorRequirement.operator",
        "v1.LabelSelectorOperator",
    ),
    ("meta.v1.Condition.status", "v1.ConditionStatus"),
    (
        "meta.v1.DeleteOptions.propagationPolicy",
        "v1.DeletionPropagation",
    ),
    // core/v1
    ("core.v1.ContainerPort.protocol", "v1.Protocol"),
    ("core.v1.ServicePort.protocol", "v1.Protocol"),
    ("core.v1.EndpointPort.protocol", "v1.Protocol"),
    ("core.v1.PortStatus.protocol", "v1.Protocol"),
    ("core.v1.Container.imagePullPolicy", "v1.PullPolicy"),
    (
        "core.v1.Container.terminationMessagePolicy",
        "v1.TerminationMessagePolicy",
    ),
    (
        "core.v1.Container.restartPolicy",
        "v1.ContainerRestartPolicy",
    ),
    (
        "core.v1.EphemeralContainer.imagePullPolicy",
        "v1.PullPolicy",
    ),
    (
        "core.v1.EphemeralContainer.terminationMessagePolicy",
        "v1.TerminationMessagePolicy",
    ),
    (
        "core.v1.EphemeralContainer.restartPolicy",
        "v1.ContainerRestartPolicy",
    ),
    ("core.v1.ImageVolumeSource.pullPolicy", "v1.PullPolicy"),
    (
        "core.v1.ContainerResizePolicy.resourceName",
        "v1.ResourceName",
    ),
    (
        "core.v1.ContainerResizePolicy.restartPolicy",
        "v1.ResourceResizeRestartPolicy",
    ),
    ("core.v1.ResourceRequirements.limits", "v1.ResourceList"),
    ("core.v1.ResourceRequirements.requests", "v1.ResourceList"),
    (
        "core.v1.VolumeResourceRequirements.limits",
        "v1.ResourceList",
    ),
    (
        "core.v1.VolumeResourceRequirements.requests",
        "v1.ResourceList",
    ),
    (
        "core.v1.ContainerStatus.allocatedResources",
        "v1.ResourceList",
    ),
    ("core.v1.PodSpec.restartPolicy", "v1.RestartPolicy"),
    ("core.v1.PodSpec.dnsPolicy", "v1.DNSPolicy"),
    ("core.v1.PodSpec.preemptionPolicy", "v1.PreemptionPolicy"),
    ("core.v1.PodSpec.overhead", "v1.ResourceList"),
    ("core.v1.PodOS.name", "v1.OSName"),
    (
        "core.v1.PodReadinessGate.conditionType",
        "v1.PodConditionType",
    ),
    ("core.v1.Toleration.operator", "v1.TolerationOperator"),
    ("core.v1.Toleration.effect", "v1.TaintEffect"),
    ("core.v1.Taint.effect", "v1.TaintEffect"),
    (
        "core.v1.NodeSelectorRequirement.operator",
        "v1.NodeSelectorOperator",
    ),
    (
        "core.v1.TopologySpreadConstraint.whenUnsatisfiable",
        "v1.UnsatisfiableConstraintAction",
    ),
    (
        "core.v1.TopologySpreadConstraint.nodeAffinityPolicy",
        "v1.NodeInclusionPolicy",
    ),
    (
        "core.v1.TopologySpreadConstraint.nodeTaintsPolicy",
        "v1.NodeInclusionPolicy",
    ),
    (
        "core.v1.PodSecurityContext.fsGroupChangePolicy",
        "v1.PodFSGroupChangePolicy",
    ),
    (
        "core.v1.PodSecurityContext.supplementalGroupsPolicy",
        "v1.SupplementalGroupsPolicy",
    ),
    (
        "core.v1.PodSecurityContext.seLinuxChangePolicy",
        "v1.PodSELinuxChangePolicy",
    ),
    ("core.v1.SeccompProfile.type", "v1.SeccompProfileType"),
    ("core.v1.AppArmorProfile.type", "v1.AppArmorProfileType"),
    ("core.v1.Capabilities.add", "[]v1.Capability"),
    ("core.v1.Capabilities.drop", "[]v1.Capability"),
    ("core.v1.SecurityContext.procMount", "v1.ProcMountType"),
    ("core.v1.HTTPGetAction.scheme", "v1.URIScheme"),
    ("core.v1.Lifecycle.stopSignal", "v1.Signal"),
    (
        "core.v1.VolumeMount.mountPropagation",
        "v1.MountPropagationMode",
    ),
    (
        "core.v1.VolumeMount.recursiveReadOnly",
        "v1.RecursiveReadOnlyMode",
    ),
    ("core.v1.HostPathVolumeSource.type", "v1.HostPathType"),
    ("core.v1.EmptyDirVolumeSource.medium", "v1.StorageMedium"),
    (
        "core.v1.AzureDiskVolumeSource.cachingMode",
        "v1.AzureDataDiskCachingMode",
    ),
    ("core.v1.AzureDiskVolumeSource.kind", "v1.AzureDataDiskKind"),
    ("core.v1.ObjectReference.uid", "types.UID"),
    ("core.v1.PodCondition.type", "v1.PodConditionType"),
    ("core.v1.PodCondition.status", "v1.ConditionStatus"),
    ("core.v1.PodStatus.phase", "v1.PodPhase"),
    ("core.v1.PodStatus.qosClass", "v1.PodQOSClass"),
    ("core.v1.PodStatus.resize", "v1.PodResizeStatus"),
    ("core.v1.ResourceHealth.health", "v1.ResourceHealthStatus"),
    ("core.v1.ServiceSpec.type", "v1.ServiceType"),
    ("core.v1.ServiceSpec.sessionAffinity", "v1.ServiceAffinity"),
    (
        "core.v1.ServiceSpec.externalTrafficPolicy",
        "v1.ServiceExternalTrafficPolicy",
    ),
    (
        "core.v1.ServiceSpec.internalTrafficPolicy",
        "v1.ServiceInternalTrafficPolicy",
    ),
    ("core.v1.ServiceSpec.ipFamilies", "[]v1.IPFamily"),
    ("core.v1.ServiceSpec.ipFamilyPolicy", "v1.IPFamilyPolicy"),
    (
        "core.v1.LoadBalancerIngress.ipMode",
        "v1.LoadBalancerIPMode",
    ),
    (
        "core.v1.PersistentVolumeClaimSpec.accessModes",
        "[]v1.PersistentVolumeAccessMode",
    ),
    (
        "core.v1.PersistentVolumeClaimSpec.volumeMode",
        "v1.PersistentVolumeMode",
    ),
    (
        "core.v1.PersistentVolumeSpec.accessModes",
        "[]v1.PersistentVolumeAccessMode",
    ),
    ("core.v1.PersistentVolumeSpec.capacity", "v1.ResourceList"),
    (
        "core.v1.PersistentVolumeSpec.persistentVolumeReclaimPolicy",
        "v1.PersistentVolumeReclaimPolicy",
    ),
    (
        "core.v1.PersistentVolumeSpec.volumeMode",
        "v1.PersistentVolumeMode",
    ),
    (
        "core.v1.PersistentVolumeClaimStatus.phase",
        "v1.PersistentVolumeClaimPhase",
    ),
    (
        "core.v1.PersistentVolumeClaimStatus.accessModes",
        "[]v1.PersistentVolumeAccessMode",
    ),
    (
        "core.v1.PersistentVolumeClaimStatus.capacity",
        "v1.ResourceList",
    ),
    (
        "core.v1.PersistentVolumeClaimStatus.allocatedResources",
        "v1.ResourceList",
    ),
    (
        "core.v1.PersistentVolumeClaimStatus.allocatedResourceStatuses",
        "map[v1.ResourceName]v1.ClaimResourceStatus",
    ),
    (
        "core.v1.PersistentVolumeClaimCondition.type",
        "v1.PersistentVolumeClaimConditionType",
    ),
    (
        "core.v1.PersistentVolumeClaimCondition.status",
        "v1.ConditionStatus",
    ),
    (
        "core.v1.PersistentVolumeStatus.phase",
        "v1.PersistentVolumePhase",
    ),
    (
        "core.v1.ModifyVolumeStatus.status",
        "v1.PersistentVolumeClaimModifyVolumeStatus",
    ),
    ("core.v1.Secret.type", "v1.SecretType"),
    ("core.v1.NamespaceSpec.finalizers", "[]v1.FinalizerName"),
    ("core.v1.NamespaceStatus.phase", "v1.NamespacePhase"),
    (
        "core.v1.NamespaceCondition.type",
        "v1.NamespaceConditionType",
    ),
    ("core.v1.NamespaceCondition.status", "v1.ConditionStatus"),
    ("core.v1.NodeStatus.phase", "v1.NodePhase"),
    ("core.v1.NodeStatus.capacity", "v1.ResourceList"),
    ("core.v1.NodeStatus.allocatable", "v1.ResourceList"),
    ("core.v1.NodeAddress.type", "v1.NodeAddressType"),
    ("core.v1.NodeCondition.type", "v1.NodeConditionType"),
    ("core.v1.NodeCondition.status", "v1.ConditionStatus"),
    (
        "core.v1.ComponentCondition.type",
        "v1.ComponentConditionType",
    ),
    ("core.v1.ComponentCondition.status", "v1.ConditionStatus"),
    ("core.v1.LimitRangeItem.type", "v1.LimitType"),
    ("core.v1.LimitRangeItem.max", "v1.ResourceList"),
    ("core.v1.LimitRangeItem.min", "v1.ResourceList"),
    ("core.v1.LimitRangeItem.default", "v1.ResourceList"),
    ("core.v1.LimitRangeItem.defaultRequest", "v1.ResourceList"),
    (
        "core.v1.LimitRangeItem.maxLimitRequestRatio",
        "v1.ResourceList",
    ),
    ("core.v1.ResourceQuotaSpec.hard", "v1.ResourceList"),
    (
        "core.v1.ResourceQuotaSpec.scopes",
        "[]v1.ResourceQuotaScope",
    ),
    ("core.v1.ResourceQuotaStatus.hard", "v1.ResourceList"),
    ("core.v1.ResourceQuotaStatus.used", "v1.ResourceList"),
    (
        "core.v1.ScopedResourceSelectorRequirement.scopeName",
        "v1.ResourceQuotaScope",
    ),
    (
        "core.v1.ScopedResourceSelectorRequirement.operator",
        "v1.ScopeSelectorOperator",
    ),
    (
        "core.v1.ReplicationControllerCondition.type",
        "v1.ReplicationControllerConditionType",
    ),
    (
        "core.v1.ReplicationControllerCondition.status",
        "v1.ConditionStatus",
    ),
    // apps/v1
    (
        "apps.v1.DeploymentStrategy.type",
        "v1.DeploymentStrategyType",
    ),
    (
        "apps.v1.DeploymentCondition.type",
        "v1.DeploymentConditionType",
    ),
    ("apps.v1.DeploymentCondition.status", "v1.ConditionStatus"),
    (
        "apps.v1.StatefulSetSpec.podManagementPolicy",
        "v1.PodManagementPolicyType",
    ),
    (
        "apps.v1.StatefulSetUpdateStrategy.type",
        "v1.StatefulSetUpdateStrategyType",
    ),
    (
        "apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy.whenDeleted",
        "v1.PersistentVolumeClaimRetentionPolicyType",
    ),
    (
        "apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy.whenScaled",
        "v1.PersistentVolumeClaimRetentionPolicyType",
    ),
    (
        "apps.v1.StatefulSetCondition.type",
        "v1.StatefulSetConditionType",
    ),
    ("apps.v1.StatefulSetCondition.status", "v1.ConditionStatus"),
    (
        "apps.v1.DaemonSetUpdateStrategy.type",
        "v1.DaemonSetUpdateStrategyType",
    ),
    (
        "apps.v1.DaemonSetCondition.type",
        "v1.DaemonSetConditionType",
    ),
    ("apps.v1.DaemonSetCondition.status", "v1.ConditionStatus"),
    (
        "apps.v1.ReplicaSetCondition.type",
        "v1.ReplicaSetConditionType",
    ),
    ("apps.v1.ReplicaSetCondition.status", "v1.ConditionStatus"),
    // batch/v1
    ("batch.v1.JobSpec.completionMode", "v1.CompletionMode"),
    (
        "batch.v1.JobSpec.podReplacementPolicy",
        "v1.PodReplacementPolicy",
    ),
    ("batch.v1.JobCondition.type", "v1.JobConditionType"),
    ("batch.v1.JobCondition.status", "v1.ConditionStatus"),
    (
        "batch.v1.PodFailurePolicyRule.action",
        "v1.PodFailurePolicyAction",
    ),
    (
        "batch.v1.PodFailurePolicyOnExitCodesRequirement.operator",
        "v1.PodFailurePolicyOnExitCodesOperator",
    ),
    (
        "batch.v1.PodFailurePolicyOnPodConditionsPattern.type",
        "v1.PodConditionType",
    ),
    (
        "batch.v1.PodFailurePolicyOnPodConditionsPattern.status",
        "v1.ConditionStatus",
    ),
    (
        "batch.v1.CronJobSpec.concurrencyPolicy",
        "v1.ConcurrencyPolicy",
    ),
    ("batch.v1.UncountedTerminatedPods.succeeded", "[]types.UID"),
    ("batch.v1.UncountedTerminatedPods.failed", "[]types.UID"),
    // networking, discovery, policy, storage, scheduling, coordination, node
    ("networking.v1.HTTPIngressPath.pathType", "v1.PathType"),
    (
        "networking.v1.NetworkPolicySpec.policyTypes",
        "[]v1.PolicyType",
    ),
    ("networking.v1.NetworkPolicyPort.protocol", "v1.Protocol"),
    ("networking.v1.IngressPortStatus.protocol", "v1.Protocol"),
    ("discovery.v1.EndpointSlice.addressType", "v1.AddressType"),
    ("discovery.v1.EndpointPort.protocol", "v1.Protocol"),
    (
        "policy.v1.PodDisruptionBudgetSpec.unhealthyPodEvictionPolicy",
        "v1.UnhealthyPodEvictionPolicyType",
    ),
    (
        "storage.v1.StorageClass.reclaimPolicy",
        "v1.PersistentVolumeReclaimPolicy",
    ),
    (
        "storage.v1.StorageClass.volumeBindingMode",
        "v1.VolumeBindingMode",
    ),
    (
        "storage.v1.CSIDriverSpec.volumeLifecycleModes",
        "[]v1.VolumeLifecycleMode",
    ),
    ("storage.v1.CSIDriverSpec.fsGroupPolicy", "v1.FSGroupPolicy"),
    (
        "scheduling.v1.PriorityClass.preemptionPolicy",
        "v1.PreemptionPolicy",
    ),
    (
        "coordination.v1.LeaseSpec.strategy",
        "v1.CoordinatedLeaseStrategy",
    ),
    ("node.v1.Overhead.podFixed", "v1.ResourceList"),
    // autoscaling/v2
    ("autoscaling.v2.MetricSpec.type", "v2.MetricSourceType"),
    ("autoscaling.v2.MetricStatus.type", "v2.MetricSourceType"),
    ("autoscaling.v2.MetricTarget.type", "v2.MetricTargetType"),
    (
        "autoscaling.v2.HPAScalingRules.selectPolicy",
        "v2.ScalingPolicySelect",
    ),
    (
        "autoscaling.v2.HPAScalingPolicy.type",
        "v2.HPAScalingPolicyType",
    ),
    (
        "autoscaling.v2.ResourceMetricSource.name",
        "v1.ResourceName",
    ),
    (
        "autoscaling.v2.ResourceMetricStatus.name",
        "v1.ResourceName",
    ),
    (
        "autoscaling.v2.ContainerResourceMetricSource.name",
        "v1.ResourceName",
    ),
    (
        "autoscaling.v2.ContainerResourceMetricStatus.name",
        "v1.ResourceName",
    ),
    (
        "autoscaling.v2.HorizontalPodAutoscalerCondition.type",
        "v2.HorizontalPodAutoscalerConditionType",
    ),
    (
        "autoscaling.v2.HorizontalPodAutoscalerCondition.status",
        "v1.ConditionStatus",
    ),
    // admissionregistration/v1, certificates/v1, authentication/v1, authorization/v1
    (
        "admissionregistration.v1.ValidatingWebhook.failurePolicy",
        "v1.FailurePolicyType",
    ),
    (
        "admissionregistration.v1.ValidatingWebhook.matchPolicy",
        "v1.MatchPolicyType",
    ),
    (
        "admissionregistration.v1.ValidatingWebhook.sideEffects",
        "v1.SideEffectClass",
    ),
    (
        "admissionregistration.v1.MutatingWebhook.failurePolicy",
        "v1.FailurePolicyType",
    ),
    (
        "admissionregistration.v1.MutatingWebhook.matchPolicy",
        "v1.MatchPolicyType",
    ),
    (
        "admissionregistration.v1.MutatingWebhook.sideEffects",
        "v1.SideEffectClass",
    ),
    (
        "admissionregistration.v1.MutatingWebhook.reinvocationPolicy",
        "v1.ReinvocationPolicyType",
    ),
    (
        "admissionregistration.v1.RuleWithOperations.operations",
        "[]v1.OperationType",
    ),
    (
        "admissionregistration.v1.RuleWithOperations.scope",
        "v1.ScopeType",
    ),
    (
        "admissionregistration.v1.NamedRuleWithOperations.operations",
        "[]v1.OperationType",
    ),
    (
        "admissionregistration.v1.NamedRuleWithOperations.scope",
        "v1.ScopeType",
    ),
    (
        "admissionregistration.v1.ValidatingAdmissionPolicySpec.failurePolicy",
        "v1.FailurePolicyType",
    ),
    (
        "admissionregistration.v1.MatchResources.matchPolicy",
        "v1.MatchPolicyType",
    ),
    (
        "admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec.validationActions",
        "[]v1.ValidationAction",
    ),
    (
        "admissionregistration.v1.ParamRef.parameterNotFoundAction",
        "v1.ParameterNotFoundActionType",
    ),
    (
        "admissionregistration.v1.Validation.reason",
        "v1.StatusReason",
    ),
    (
        "certificates.v1.CertificateSigningRequestSpec.usages",
        "[]v1.KeyUsage",
    ),
    (
        "certificates.v1.CertificateSigningRequestSpec.extra",
        "map[string]v1.ExtraValue",
    ),
    (
        "certificates.v1.CertificateSigningRequestCondition.type",
        "v1.RequestConditionType",
    ),
    (
        "certificates.v1.CertificateSigningRequestCondition.status",
        "v1.ConditionStatus",
    ),
    (
        "authentication.v1.UserInfo.extra",
        "map[string]v1.ExtraValue",
    ),
    (
        "authorization.v1.SubjectAccessReviewSpec.extra",
        "map[string]v1.ExtraValue",
    ),
    (
        "authorization.v1.FieldSelectorRequirement.operator",
        "v1.FieldSelectorOperator",
    ),
];
