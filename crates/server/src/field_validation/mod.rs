//! Server-side field validation (`?fieldValidation=Ignore|Warn|Strict`,
//! default `Warn`): the detection half, as kube-apiserver 1.34 does it.
//!
//! kube decodes a create/update body with the strict serializer when the
//! directive is `Warn` or `Strict` (`handlers/create.go`, `update.go`):
//! `sigs.k8s.io/json` `UnmarshalStrict` into the typed object collects
//! non-fatal *strict errors* while decoding, in body order:
//!
//! * `unknown field "spec.foo"`: a key the Go struct has no field for (JSON
//!   keys are case-sensitive); nothing inside an unknown field is looked at;
//! * `duplicate field "spec.paused"`: a struct field or map key given twice in
//!   one JSON object (a key that is both unknown and repeated is reported once,
//!   as unknown).
//!
//! Paths join struct fields and map keys with `.` and list indices as `[i]`
//! (`spec.template.spec.containers[0].bogus`, `metadata.labels.app`); each
//! distinct message is reported once, at most 100 of them. Values decoded by a
//! custom unmarshaller (`RawExtension`, `FieldsV1`, `Patch`, apiextensions'
//! `JSON` / `JSONSchemaPropsOr*`) are not looked into; empty structs
//! (`CustomResourceSubresourceStatus`, `StorageVersionSpec`) accept no field.
//!
//! Then (`runtime.NewStrictDecodingError`, `handlers/rest.go`):
//!
//! * `Strict` → 400 BadRequest, message [`strict_decoding_bad_request`]:
//!   `Deployment in version "v1" cannot be handled as a Deployment: strict
//!   decoding error: unknown field "spec.foo", duplicate field "spec.paused"`
//!   (errors joined with `", "`, in the order found). For PATCH the same text
//!   is the detail of a 422 Invalid on field `patch` (see [`strict_patch_detail`]).
//! * `Warn` → one `Warning: 299 - "<text>"` header per strict error
//!   ([`warnings`], [`warning_header_value`]), the object is stored without the
//!   unknown fields (duplicates: the last value wins);
//! * `Ignore` → the same object, silently.
//!
//! YAML bodies: kube first runs `YAMLToJSONStrict` on the raw body (its one
//! error, `error converting YAML to JSON: yaml: unmarshal errors:\n  line 10:
//! key "x" already set in map\n  ...`, comes first), then decodes the converted
//! JSON (whose keys are sorted, with no duplicates left), so unknown fields of
//! a YAML body come in sorted-key order ([`yaml_strict_errors`]). As warnings,
//! the YAML error is split into one warning per line
//! (`line 10: key "x" already set in map`).
//!
//! Custom resources decode into `map[string]interface{}`: every repeated key
//! at any depth is a duplicate ([`duplicate_fields`]); their unknown fields
//! come from pruning against the CRD schema ([`unknown_fields_in_schema`]).

mod decoded;
mod messages;
mod raw_body;
mod shape;
#[cfg(test)]
mod tests;

pub use decoded::{drop_unknown_fields, unknown_fields, unknown_fields_in_schema};
pub use messages::{
    strict_decoding_bad_request, strict_decoding_error, strict_patch_detail, warning_header_value,
    warnings,
};
pub use raw_body::{duplicate_fields, strict_errors, yaml_strict_errors};

/// `metav1.FieldValidation*`, the `fieldValidation` query parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

impl FieldValidation {
    /// Parses the query parameter; absent or empty is `Warn`. An unknown value
    /// is returned as `Err(value)`: kube answers 422 Invalid on the options
    /// kind (`CreateOptions.meta.k8s.io "" is invalid: fieldValidation:
    /// Unsupported value: "bogus": supported values: "", "Ignore", "Strict",
    /// "Warn"`; `UpdateOptions`/`PatchOptions` likewise).
    pub fn parse(value: Option<&str>) -> Result<Self, String> {
        match value.unwrap_or("") {
            "" | "Warn" => Ok(FieldValidation::Warn),
            "Ignore" => Ok(FieldValidation::Ignore),
            "Strict" => Ok(FieldValidation::Strict),
            other => Err(other.to_string()),
        }
    }

    /// Whether kube decodes strictly (collects strict errors) at all.
    pub fn is_checked(self) -> bool {
        self != FieldValidation::Ignore
    }
}
