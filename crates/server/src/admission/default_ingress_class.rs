//! DefaultIngressClass (`plugin/pkg/admission/network/defaultingressclass`
//! `classDefaulterPlugin.Admit`): an Ingress created without
//! `spec.ingressClassName` and without the `kubernetes.io/ingress.class`
//! annotation gets the default IngressClass (annotation
//! `ingressclass.kubernetes.io/is-default-class: "true"`), the newest of
//! several; without a default it is left alone.

use serde_json::Value;

use super::attributes::{Attributes, Operation};
use super::default_class::{annotation_is_true, newest_default};
use crate::object::ObjectStore;

/// `networkingv1.AnnotationIsDefaultIngressClass`.
pub const IS_DEFAULT_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";
/// `networkingv1beta1.AnnotationIngressClass`.
const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// `classDefaulterPlugin.Admit`.
pub fn admit(store: &ObjectStore, attributes: &Attributes<'_>, object: Option<&mut Value>) {
    if attributes.operation != Operation::Create
        || attributes.resource.group != "networking.k8s.io"
        || attributes.resource.name != "ingresses"
        || !attributes.subresource.is_empty()
    {
        return;
    }
    let Some(ingress) = object else {
        return;
    };
    if ingress
        .pointer("/spec/ingressClassName")
        .is_some_and(|name| !name.is_null())
    {
        return;
    }
    let annotated = ingress
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(INGRESS_CLASS_ANNOTATION))
        .is_some();
    if annotated {
        return;
    }
    let Some(default) = newest_default(store, "/registry/ingressclasses/", |class| {
        annotation_is_true(class, IS_DEFAULT_ANNOTATION)
    }) else {
        return;
    };
    if let Some(map) = ingress.as_object_mut() {
        let spec = map
            .entry("spec")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(spec) = spec.as_object_mut() {
            spec.insert("ingressClassName".into(), Value::String(default));
        }
    }
}
