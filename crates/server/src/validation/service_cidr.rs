//! networking.k8s.io/v1 IPAddress and ServiceCIDR as
//! `pkg/apis/networking/validation` checks them (`ValidateIPAddress`,
//! `ValidateIPAddressUpdate`, `ValidateServiceCIDR`, `ValidateServiceCIDRUpdate`).

use serde_json::Value;

use super::field::{self, child, index};
use super::ip_field;
use super::selector::go_string_slice;
use crate::status::FieldError;

const ONE_PER_FAMILY: &str =
    "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64";

/// `ValidateIPAddress`: the name is an IP address (`ValidateIPAddressName`,
/// reported after the other ObjectMeta rules) and the parent reference is complete.
pub fn ip_address(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = crate::object::name(object);
    if !name.is_empty() {
        ip_field::valid_ip("metadata.name", name, &mut errors);
    }
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let Some(parent) = spec.get("parentRef").filter(|value| !value.is_null()) else {
        errors.push(field::required("spec.parentRef", ""));
        return errors;
    };
    let path = "spec.parentRef";
    let group = field::str_at(parent, "group");
    if !group.is_empty() {
        field::dns1123_subdomain(&child(path, "group"), group, &mut errors);
    }
    for (name, required) in [("resource", true), ("name", true), ("namespace", false)] {
        let value = field::str_at(parent, name);
        if value.is_empty() {
            if required {
                errors.push(field::required(&child(path, name), ""));
            }
        } else {
            for message in crate::names::path_segment(value) {
                errors.push(field::invalid(&child(path, name), value, message));
            }
        }
    }
    errors
}

/// `ValidateIPAddressUpdate`: the parent reference is immutable.
pub fn ip_address_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let parent = object.get("spec").and_then(|spec| spec.get("parentRef"));
    let old_parent = old.get("spec").and_then(|spec| spec.get("parentRef"));
    if parent.filter(|value| !value.is_null()) == old_parent.filter(|value| !value.is_null()) {
        return Vec::new();
    }
    let rendered = match parent.filter(|value| !value.is_null()) {
        None => "null".to_string(),
        Some(parent) => {
            let text = |name: &str| crate::go::strconv::quote(field::str_at(parent, name));
            format!(
                "networking.ParentReference{{Group:{}, Resource:{}, Namespace:{}, Name:{}}}",
                text("group"),
                text("resource"),
                text("namespace"),
                text("name")
            )
        }
    };
    vec![field::invalid_rendered(
        "spec.parentRef",
        &rendered,
        field::FIELD_IMMUTABLE,
    )]
}

fn cidrs(object: &Value) -> (&[Value], Option<&Value>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    (field::items_at(spec, "cidrs"), spec.get("cidrs"))
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// `netutils.IsDualStackCIDRStrings` of two CIDRs: both parse, one per family.
fn dual_stack(first: &str, second: &str) -> bool {
    match (
        ip_field::parse_cidr_sloppy(first),
        ip_field::parse_cidr_sloppy(second),
    ) {
        (Some(first), Some(second)) => first.network.is_ipv4() != second.network.is_ipv4(),
        _ => false,
    }
}

/// `ValidateServiceCIDR`.
pub fn service_cidr(object: &Value) -> Vec<FieldError> {
    let (list, raw) = cidrs(object);
    let path = "spec.cidrs";
    if list.is_empty() {
        return vec![field::required(path, "at least one CIDR required")];
    }
    let spec = format!(
        "networking.ServiceCIDRSpec{{CIDRs:{}}}",
        go_string_slice(raw)
    );
    if list.len() > 2 {
        return vec![field::invalid_rendered(
            path,
            &spec,
            "may only hold up to 2 values",
        )];
    }
    if list.len() == 2 && !dual_stack(text(&list[0]), text(&list[1])) {
        return vec![field::invalid_rendered(path, &spec, ONE_PER_FAMILY)];
    }
    let mut errors = Vec::new();
    for (position, cidr) in list.iter().enumerate() {
        ip_field::valid_cidr(&index(path, position), text(cidr), &mut errors);
    }
    errors
}

/// `ValidateServiceCIDRUpdate`: the CIDRs are immutable, except that a
/// single-stack ServiceCIDR may gain a CIDR of the other family
/// (kubernetes/kubernetes#131261).
pub fn service_cidr_update(object: &Value, old: &Value) -> Vec<FieldError> {
    let (new_list, raw) = cidrs(object);
    let (old_list, _) = cidrs(old);
    let path = "spec.cidrs";
    let mut errors = Vec::new();
    if new_list.len() == old_list.len() {
        for (position, (new, old)) in new_list.iter().zip(old_list).enumerate() {
            if text(new) != text(old) {
                errors.push(field::invalid(
                    &index(path, position),
                    text(new),
                    field::FIELD_IMMUTABLE,
                ));
            }
        }
    } else if old_list.len() == 1 && new_list.len() == 2 {
        if text(&new_list[0]) != text(&old_list[0]) {
            errors.push(field::invalid(
                &index(path, 0),
                text(&new_list[0]),
                field::FIELD_IMMUTABLE,
            ));
        }
        let added = text(&new_list[1]);
        ip_field::valid_cidr(&index(path, 1), added, &mut errors);
        if !dual_stack(text(&new_list[0]), added) {
            errors.push(field::invalid(&index(path, 1), added, ONE_PER_FAMILY));
        }
    } else {
        errors.push(field::invalid_rendered(
            path,
            &go_string_slice(raw),
            field::FIELD_IMMUTABLE,
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    /// Cases from kube's `TestValidateIPAddress`, `TestValidateIPAddressUpdate`.
    #[test]
    fn ip_addresses() {
        let address = |name: &str, parent: Value| json!({"metadata": {"name": name}, "spec": {"parentRef": parent}});
        let service =
            json!({"group": "", "resource": "services", "name": "foo", "namespace": "bar"});
        assert!(ip_address(&address("192.168.1.1", service.clone())).is_empty());
        assert!(ip_address(&address(
            "2001:db8::1",
            json!({"group": "custom.com", "resource": "gateways", "name": "g"})
        ))
        .is_empty());
        assert_eq!(
            texts(&ip_address(
                &json!({"metadata": {"name": "1.1.1.1"}, "spec": {}})
            )),
            ["spec.parentRef: Required value"]
        );
        assert_eq!(
            texts(&ip_address(&address("foo", json!({"group": "A_B", "name": "a/b", "namespace": ".."})))),
            [
                "metadata.name: Invalid value: \"foo\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "spec.parentRef.group: Invalid value: \"A_B\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.parentRef.resource: Required value",
                "spec.parentRef.name: Invalid value: \"a/b\": may not contain '/'",
                "spec.parentRef.namespace: Invalid value: \"..\": may not be '..'",
            ]
        );
        let old = address("192.168.1.1", service.clone());
        assert!(ip_address_update(&old, &old).is_empty());
        assert_eq!(
            texts(&ip_address_update(&address("192.168.1.1", json!({"resource": "services", "name": "other"})), &old)),
            ["spec.parentRef: Invalid value: networking.ParentReference{Group:\"\", Resource:\"services\", Namespace:\"\", Name:\"other\"}: field is immutable"]
        );
    }

    /// Cases from kube's `TestValidateServiceCIDR`, `TestValidateServiceCIDRUpdate`.
    #[test]
    fn service_cidrs() {
        let cidr = |list: Value| json!({"metadata": {"name": "c"}, "spec": {"cidrs": list}});
        assert!(service_cidr(&cidr(json!(["10.0.0.0/16"]))).is_empty());
        assert!(service_cidr(&cidr(json!(["10.0.0.0/16", "fd00::/120"]))).is_empty());
        let cases = [
            (json!([]), "spec.cidrs: Required value: at least one CIDR required"),
            (json!(["10.0.0.0/16", "fd00::/120", "10.1.0.0/16"]), "spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{\"10.0.0.0/16\", \"fd00::/120\", \"10.1.0.0/16\"}}: may only hold up to 2 values"),
            (json!(["10.0.0.0/16", "10.1.0.0/16"]), "spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{\"10.0.0.0/16\", \"10.1.0.0/16\"}}: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"),
            (json!(["10.0.0.0"]), "spec.cidrs[0]: Invalid value: \"10.0.0.0\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
        ];
        for (list, expected) in cases {
            assert_eq!(
                texts(&service_cidr(&cidr(list.clone()))),
                [expected],
                "{list}"
            );
        }
        let old = cidr(json!(["10.0.0.0/16"]));
        assert!(service_cidr_update(&cidr(json!(["10.0.0.0/16", "fd00::/120"])), &old).is_empty());
        assert_eq!(
            texts(&service_cidr_update(&cidr(json!(["10.1.0.0/16"])), &old)),
            ["spec.cidrs[0]: Invalid value: \"10.1.0.0/16\": field is immutable"]
        );
        assert_eq!(
            texts(&service_cidr_update(&cidr(json!(["10.0.0.0/16", "10.2.0.0/16"])), &old)),
            ["spec.cidrs[1]: Invalid value: \"10.2.0.0/16\": may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"]
        );
        assert_eq!(
            texts(&service_cidr_update(
                &old,
                &cidr(json!(["10.0.0.0/16", "fd00::/120"]))
            )),
            ["spec.cidrs: Invalid value: []string{\"10.0.0.0/16\"}: field is immutable"]
        );
    }
}
