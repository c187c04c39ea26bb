//! The wire formats ferrokube speaks, below the API layer and independent of
//! it: each turns bytes into kube's JSON form and back, with the exact texts
//! kube-apiserver's Go decoders produce.
//!
//! - [`yaml`]: YAML ⇄ JSON as sigs.k8s.io/yaml (go-yaml) does it.
//! - [`cbor`]: kube's CBOR serializer over JSON trees.
//! - [`protobuf`]: the Kubernetes protobuf envelope and a schema-driven
//!   protobuf ⇄ JSON transcoder (`data/protobuf-schema.json`).
//! - [`quantity`]: canonical `resource.Quantity` values.
//! - [`selector`]: label and field selectors.
//! - [`segments`]: response bodies in shared pieces.
//! - [`go`]: the Go behaviours (strconv, fmt, time, sort) their texts and
//!   everyone else's depend on.
//!
//! The server crate re-exports every module at its root (`ferrokube::yaml`).

pub mod cbor;
pub mod go;
pub mod protobuf;
pub mod quantity;
pub mod segments;
pub mod selector;
pub mod yaml;
