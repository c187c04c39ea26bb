//! Installing CustomResourceDefinitions and waiting until they are served.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use kube::runtime::wait::{await_condition, conditions};

use crate::error::{Error, Result};
use crate::{TestServer, FIELD_MANAGER};

impl TestServer {
    /// Server-side apply each CRD (from `CustomResourceExt::crd()` or YAML),
    /// then wait until each is `Established` and its resources answer a
    /// list at every served version.
    pub async fn install_crds(&self, crds: &[CustomResourceDefinition]) -> Result<()> {
        let api: Api<CustomResourceDefinition> = Api::all(self.client());
        let params = PatchParams::apply(FIELD_MANAGER).force();
        for crd in crds {
            let name = crd.metadata.name.clone().ok_or_else(|| Error::Crd {
                name: String::new(),
                message: "the CustomResourceDefinition has no metadata.name".into(),
            })?;
            api.patch(&name, &params, &Patch::Apply(crd)).await?;
        }
        for crd in crds {
            let name = crd.metadata.name.as_deref().unwrap_or_default();
            await_condition(api.clone(), name, conditions::is_crd_established())
                .await
                .map_err(|error| Error::Crd {
                    name: name.to_string(),
                    message: error.to_string(),
                })?;
            for version in crd.spec.versions.iter().filter(|version| version.served) {
                let group = &crd.spec.group;
                let resource = ApiResource {
                    group: group.clone(),
                    version: version.name.clone(),
                    api_version: format!("{group}/{}", version.name),
                    kind: crd.spec.names.kind.clone(),
                    plural: crd.spec.names.plural.clone(),
                };
                let objects: Api<DynamicObject> = Api::all_with(self.client(), &resource);
                objects.list(&ListParams::default().limit(1)).await?;
            }
        }
        Ok(())
    }
}
