//! The four kinds of PATCH (`handlers/patch.go`), told apart by the
//! request's Content-Type; the dispatcher sends server-side apply to its
//! own handler and the other three to `patch.rs`.

use super::exchange::ApiRequest;
use crate::status::{Result, Status};

/// The patch types kube-apiserver names in its 415 answer.
pub const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
    "application/strategic-merge-patch+json",
];

/// What a custom resource accepts (`crdHandler`'s `supportedTypes`): no
/// strategic merge patch, which needs Go struct tags.
pub const CUSTOM_RESOURCE_PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

/// The kind of a PATCH, from its Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    /// The patch type of a request, or kube's 415 naming the four.
    pub fn of_request(request: &ApiRequest) -> Result<PatchType> {
        let media = crate::negotiate::media_type(request.header("content-type").unwrap_or(""));
        match media.as_str() {
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            "application/apply-patch+yaml" => Ok(PatchType::Apply),
            _ => Err(Status::unsupported_media_type(&media, PATCH_TYPES)),
        }
    }

    /// [`PatchType::of_request`] for a resource: custom resources refuse
    /// strategic merge patches with their own list of types.
    pub fn of_request_for(request: &ApiRequest, custom_resource: bool) -> Result<PatchType> {
        match PatchType::of_request(request) {
            Ok(PatchType::Strategic) | Err(_) if custom_resource => {
                let media =
                    crate::negotiate::media_type(request.header("content-type").unwrap_or(""));
                Err(Status::unsupported_media_type(
                    &media,
                    CUSTOM_RESOURCE_PATCH_TYPES,
                ))
            }
            other => other,
        }
    }
}
