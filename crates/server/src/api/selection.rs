//! The label and field selectors of a list, watch or delete-collection
//! request, parsed once, and matching cached objects against them.

use super::exchange::ApiRequest;
use super::target::Target;
use crate::object;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::{Result, Status};

/// The field selector's labels are ones the resource supports: kube's
/// per-kind field labels, or a custom resource's `metadata.name`,
/// `metadata.namespace` and `selectableFields` (400 otherwise).
pub fn validate_fields(fields: &FieldSelector, target: &Target<'_>) -> Result<()> {
    let valid = match &target.custom {
        Some(custom) => {
            let selectable: Vec<&str> = custom
                .selectable_fields
                .iter()
                .map(String::as_str)
                .collect();
            fields.validate_for_custom_resource(target.resource.namespaced, &selectable)
        }
        None => fields.validate_for(target.resource.group, target.resource.kind),
    };
    valid.map_err(|error| Status::bad_request(error.to_string()))
}

/// Filters of a list or delete-collection request.
pub struct Selection {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Selection {
    pub fn from_request(request: &ApiRequest, target: &Target<'_>) -> Result<Self> {
        let labels = LabelSelector::parse(request.query.get("labelSelector").unwrap_or(""))
            .map_err(|error| Status::bad_request(error.to_string()))?;
        let fields = FieldSelector::parse(request.query.get("fieldSelector").unwrap_or(""))
            .map_err(|error| Status::bad_request(error.to_string()))?;
        validate_fields(&fields, target)?;
        Ok(Selection { labels, fields })
    }

    pub fn is_everything(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// Whether a cached object is selected: from its index when the selection
    /// reads only labels, name and namespace (no parse), parsing it for other
    /// fields. A corrupt object matches nothing.
    pub fn matches_stored(
        &self,
        resource: &crate::registry::ResourceDef,
        object: &object::StoredObject,
    ) -> bool {
        let Some(index) = object.index() else {
            return false;
        };
        if self.is_everything() {
            return true;
        }
        if !self.labels.matches_lookup(|key| index.label(key)) {
            return false;
        }
        if self.fields.is_empty() {
            return true;
        }
        let indexed = index.regular().then(|| {
            self.fields.matches_meta(
                resource.group,
                resource.kind,
                index.name(),
                index.namespace(),
            )
        });
        match indexed.flatten() {
            Some(matches) => matches,
            // Fields are read in the request version's wire form (its field
            // labels name its fields: `regarding.name` of events.k8s.io/v1
            // is `involvedObject.name` of the core Event stored).
            None => object.value().is_some_and(|mut value| {
                crate::versions::to_version(&mut value, resource).is_ok()
                    && self.fields.matches(resource.group, resource.kind, &value)
            }),
        }
    }
}
