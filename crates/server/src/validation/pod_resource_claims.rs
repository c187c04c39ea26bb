//! A pod spec's `resourceClaims` (`pkg/apis/core/validation/validation.go`
//! `validatePodResourceClaims`, `validatePodResourceClaim`): names are unique
//! DNS-1123 labels, each entry names exactly one of a claim or a claim
//! template, both DNS-1123 subdomains.

use std::collections::BTreeSet;

use serde_json::Value;

use super::field::{self, child, index};
use crate::go::strconv::quote;
use crate::status::FieldError;

/// Go's `%#v` of a `*string` field: kube prints the pointer, whose address
/// is not reproducible; a fixed one stands in for it.
fn go_string_pointer(value: Option<&str>) -> &'static str {
    match value {
        None => "(*string)(nil)",
        Some(_) => "(*string)(0xc000000000)",
    }
}

fn optional_str<'a>(claim: &'a Value, name: &str) -> Option<&'a str> {
    claim
        .get(name)
        .filter(|value| !value.is_null())
        .map(|value| value.as_str().unwrap_or_default())
}

/// `validatePodResourceClaims`.
pub fn pod_resource_claims(spec: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let list_path = child(path, "resourceClaims");
    let mut names = BTreeSet::new();
    for (position, claim) in field::items_at(spec, "resourceClaims").iter().enumerate() {
        let claim_path = index(&list_path, position);
        let name = field::str_at(claim, "name");
        if name.is_empty() {
            errors.push(field::required(&child(&claim_path, "name"), ""));
        } else if names.contains(name) {
            errors.push(field::duplicate(&child(&claim_path, "name"), name));
        } else {
            field::dns1123_label(&child(&claim_path, "name"), name, errors);
            names.insert(name);
        }
        let claim_name = optional_str(claim, "resourceClaimName");
        let template_name = optional_str(claim, "resourceClaimTemplateName");
        let rendered = format!(
            "core.PodResourceClaim{{Name:{}, ResourceClaimName:{}, ResourceClaimTemplateName:{}}}",
            quote(name),
            go_string_pointer(claim_name),
            go_string_pointer(template_name)
        );
        match (claim_name, template_name) {
            (Some(_), Some(_)) => errors.push(field::invalid_rendered(
                &claim_path,
                &rendered,
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
            )),
            (None, None) => errors.push(field::invalid_rendered(
                &claim_path,
                &rendered,
                "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            )),
            _ => {}
        }
        for (field_name, value) in [
            ("resourceClaimName", claim_name),
            ("resourceClaimTemplateName", template_name),
        ] {
            if let Some(value) = value {
                field::dns1123_subdomain(&child(&claim_path, field_name), value, errors);
            }
        }
    }
}
