//! The routes apiextensions-apiserver documents for one served version of a
//! CRD, as a [`PathItem`] list `v2.rs` and `v3.rs` render like any other.
//!
//! Mirrors `pkg/controller/openapi/builder/builder.go` (`generateBuilder`,
//! `buildRoute`, `descriptionFor`): every verb whatever the CRD's state, no
//! watch paths, the options of `GetOptions`/`ListOptions`/`CreateOptions`/
//! `UpdateOptions`/`DeleteOptions` (`endpoints.AddObjectParams`), JSON and
//! YAML only, and the CRD's group/version/kind on every operation (scale too).

use super::custom_schema::definition_name;
use super::definitions::Gvk;
use super::params::{self, Param, Spec};
use super::paths::{
    article, merge_paths, title, Body, GroupVersion, Media, Method, Operation, PathItem, Schema,
};
use crate::registry::ResourceDef;

const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// The `pretty` parameter as the CRD builder declares it (shorter than the
/// built-in one).
fn pretty() -> Param {
    Param {
        name: "pretty",
        location: params::In::Query,
        ty: params::Type::String,
        description: "If 'true', then the output is pretty printed.".into(),
        required: false,
        v2_name: None,
    }
}

/// Which options struct `buildRoute` adds parameters from.
#[derive(Clone, Copy)]
enum Action {
    List,
    Post,
    DeleteCollection,
    Get,
    Put,
    Delete,
    Patch,
}

impl Action {
    fn key(self) -> &'static str {
        match self {
            Action::List => "list",
            Action::Post => "post",
            Action::DeleteCollection => "deletecollection",
            Action::Get => "get",
            Action::Put => "put",
            Action::Delete => "delete",
            Action::Patch => "patch",
        }
    }

    /// The operation verb `descriptionFor` and the operation id start with.
    fn operation_verb(self) -> &'static str {
        match self {
            Action::List => "list",
            Action::Post => "create",
            Action::DeleteCollection => "deletecollection",
            Action::Get => "read",
            Action::Put => "replace",
            Action::Delete => "delete",
            Action::Patch => "patch",
        }
    }

    fn method(self) -> Method {
        match self {
            Action::List | Action::Get => Method::Get,
            Action::Post => Method::Post,
            Action::DeleteCollection | Action::Delete => Method::Delete,
            Action::Put => Method::Put,
            Action::Patch => Method::Patch,
        }
    }

    fn options(self) -> &'static [Spec] {
        match self {
            Action::Get => &[params::RESOURCE_VERSION],
            Action::List | Action::DeleteCollection => params::LIST,
            Action::Post | Action::Put | Action::Patch => params::WRITE,
            Action::Delete => &[
                params::DRY_RUN,
                params::GRACE_PERIOD_SECONDS,
                params::IGNORE_STORE_READ_ERROR,
                params::ORPHAN_DEPENDENTS,
                params::PROPAGATION_POLICY,
            ],
        }
    }
}

struct Builder<'a> {
    def: &'a ResourceDef,
    gv: GroupVersion,
    object: String,
    list: String,
}

impl Builder<'_> {
    /// `descriptionFor(path, operationVerb)`.
    fn description(&self, action: Action, subresource: &str) -> String {
        let kind = self.def.kind;
        let verb = action.operation_verb();
        let of = if subresource.is_empty() {
            String::new()
        } else {
            format!(" {subresource} of")
        };
        match action {
            Action::Patch => format!("partially update{of} the specified {kind}"),
            Action::DeleteCollection => format!("delete collection of{of} {kind}"),
            Action::List => format!("list{of} objects of kind {kind}"),
            Action::Get | Action::Put => format!("{verb}{of} the specified {kind}"),
            Action::Post | Action::Delete => format!("{verb}{of}{}{kind}", article(kind)),
        }
    }

    /// `buildRoute(root, path, method, action, operationVerb, sample)`.
    fn route(
        &self,
        path: String,
        action: Action,
        subresource: &str,
        sample: &str,
        operation: Option<String>,
    ) -> PathItem {
        let kind = self.def.kind;
        let scope = if self.def.namespaced {
            "Namespaced"
        } else {
            ""
        };
        let rest = operation.unwrap_or_else(|| format!("{scope}{kind}{}", title(subresource)));
        // `GetOperationIDAndTags`: the verb, then group and version, then the rest.
        let verb = match action {
            Action::DeleteCollection => "delete",
            other => other.operation_verb(),
        };
        let rest = match action {
            Action::DeleteCollection => format!("Collection{rest}"),
            _ => rest,
        };
        let mut params = vec![pretty()];
        if path.contains("{namespace}") {
            params.push(params::NAMESPACE.param());
        }
        if path.contains("{name}") {
            params.push(params::name_param(kind));
        }
        params.extend(action.options().iter().map(Spec::param));
        let sample_schema = Schema::Ref(sample.to_string());
        let mut responses = vec![(200, sample_schema.clone())];
        let body = match action {
            Action::Post => {
                responses.push((201, sample_schema.clone()));
                responses.push((202, sample_schema));
                Some(Body::Object(Some(sample.to_string())))
            }
            Action::Put => {
                responses.push((201, sample_schema));
                Some(Body::Object(Some(sample.to_string())))
            }
            Action::Delete => {
                responses.push((202, sample_schema));
                Some(Body::DeleteOptions)
            }
            Action::Patch => Some(Body::Patch),
            Action::List | Action::Get | Action::DeleteCollection => None,
        };
        responses.push((401, Schema::None));
        responses.sort_by_key(|(code, _)| *code);
        PathItem {
            path,
            params: Vec::new(),
            ops: vec![Operation {
                method: action.method(),
                id: format!("{verb}{}{rest}", self.gv.camel),
                description: Some(self.description(action, subresource)),
                tag: self.gv.tag.clone(),
                action: Some(action.key()),
                gvk: Some(Gvk::new(self.def.group, self.def.version, kind)),
                params,
                body,
                responses,
                media: Media::Custom,
            }],
        }
    }
}

/// Definition names of a custom kind and its list.
pub(crate) fn definition_names(def: &ResourceDef) -> (String, String) {
    (
        definition_name(def.group, def.version, def.kind),
        definition_name(def.group, def.version, &def.list_kind()),
    )
}

/// Every documented path of one served CRD version.
pub(crate) fn custom_paths(def: &ResourceDef) -> Vec<PathItem> {
    let (object, list) = definition_names(def);
    let builder = Builder {
        def,
        gv: GroupVersion::new(def.group, def.version),
        object,
        list,
    };
    let (object, list) = (builder.object.as_str(), builder.list.as_str());
    let prefix = &builder.gv.prefix;
    let mut items = Vec::new();
    let root = if def.namespaced {
        items.push(builder.route(
            format!("{prefix}/{}", def.plural),
            Action::List,
            "",
            list,
            Some(format!("{}ForAllNamespaces", def.kind)),
        ));
        format!("{prefix}/namespaces/{{namespace}}/{}", def.plural)
    } else {
        format!("{prefix}/{}", def.plural)
    };
    items.push(builder.route(root.clone(), Action::List, "", list, None));
    items.push(builder.route(root.clone(), Action::Post, "", object, None));
    items.push(builder.route(root.clone(), Action::DeleteCollection, "", STATUS, None));
    let named = format!("{root}/{{name}}");
    items.push(builder.route(named.clone(), Action::Get, "", object, None));
    items.push(builder.route(named.clone(), Action::Put, "", object, None));
    items.push(builder.route(named.clone(), Action::Delete, "", STATUS, None));
    items.push(builder.route(named.clone(), Action::Patch, "", object, None));
    for (subresource, sample) in [("status", object), ("scale", SCALE)] {
        if def.subresource(subresource).is_none() {
            continue;
        }
        let path = format!("{named}/{subresource}");
        for action in [Action::Get, Action::Put, Action::Patch] {
            items.push(builder.route(path.clone(), action, subresource, sample, None));
        }
    }
    merge_paths(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{NameRule, SubresourceDef};

    const SUBRESOURCES: &[SubresourceDef] = &[
        SubresourceDef {
            name: "scale",
            group: "autoscaling",
            version: "v1",
            kind: "Scale",
            verbs: &["get", "patch", "update"],
        },
        SubresourceDef {
            name: "status",
            group: "example.com",
            version: "v1",
            kind: "Widget",
            verbs: &["get", "patch", "update"],
        },
    ];

    pub(crate) const WIDGET: ResourceDef = ResourceDef {
        group: "example.com",
        version: "v1",
        kind: "Widget",
        plural: "widgets",
        singular: "widget",
        namespaced: true,
        verbs: &["get"],
        short_names: &[],
        categories: &[],
        subresources: SUBRESOURCES,
        storage: "example.com/widgets",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
        custom: true,
    };

    fn op<'a>(items: &'a [PathItem], path: &str, method: Method) -> &'a Operation {
        items
            .iter()
            .find(|item| item.path == path)
            .and_then(|item| item.ops.iter().find(|op| op.method == method))
            .unwrap_or_else(|| panic!("{path} {method:?}"))
    }

    #[test]
    fn routes_like_the_crd_builder() {
        let items = custom_paths(&WIDGET);
        let paths: Vec<&str> = items.iter().map(|item| item.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/apis/example.com/v1/namespaces/{namespace}/widgets",
                "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}",
                "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale",
                "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status",
                "/apis/example.com/v1/widgets",
            ]
        );
        let collection = "/apis/example.com/v1/namespaces/{namespace}/widgets";
        let list = op(&items, collection, Method::Get);
        assert_eq!(list.id, "listExampleComV1NamespacedWidget");
        assert_eq!(list.tag, "exampleCom_v1");
        assert_eq!(
            list.description.as_deref(),
            Some("list objects of kind Widget")
        );
        assert_eq!(
            list.responses[0],
            (200, Schema::Ref("com.example.v1.WidgetList".into()))
        );
        assert!(list.params.iter().any(|p| p.name == "watch"));
        let create = op(&items, collection, Method::Post);
        assert_eq!(create.id, "createExampleComV1NamespacedWidget");
        assert_eq!(create.description.as_deref(), Some("create a Widget"));
        assert_eq!(
            create
                .responses
                .iter()
                .map(|(code, _)| *code)
                .collect::<Vec<_>>(),
            [200, 201, 202, 401]
        );
        assert!(create.params.iter().any(|p| p.name == "fieldValidation"));
        let collection_delete = op(&items, collection, Method::Delete);
        assert_eq!(
            collection_delete.id,
            "deleteExampleComV1CollectionNamespacedWidget"
        );
        assert_eq!(
            collection_delete.description.as_deref(),
            Some("delete collection of Widget")
        );
        assert!(collection_delete.body.is_none());

        let named = "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}";
        let patch = op(&items, named, Method::Patch);
        assert_eq!(patch.id, "patchExampleComV1NamespacedWidget");
        assert_eq!(patch.body, Some(Body::Patch));
        assert_eq!(patch.media, Media::Custom);
        let names: Vec<&str> = patch.params.iter().map(|p| p.name).collect();
        assert!(names.contains(&"fieldValidation") && names.contains(&"dryRun"));
        let delete = op(&items, named, Method::Delete);
        assert_eq!(delete.responses[0], (200, Schema::Ref(STATUS.into())));
        assert_eq!(delete.description.as_deref(), Some("delete a Widget"));
        // Shared by every operation of the path: lifted to the path item.
        let item = items.iter().find(|item| item.path == named).expect("named");
        let lifted: Vec<&str> = item.params.iter().map(|p| p.name).collect();
        assert_eq!(lifted, ["name", "namespace", "pretty"]);

        let status = op(&items, &format!("{named}/status"), Method::Put);
        assert_eq!(status.id, "replaceExampleComV1NamespacedWidgetStatus");
        assert_eq!(
            status.description.as_deref(),
            Some("replace status of the specified Widget")
        );
        let scale = op(&items, &format!("{named}/scale"), Method::Patch);
        assert_eq!(scale.id, "patchExampleComV1NamespacedWidgetScale");
        assert_eq!(
            scale.description.as_deref(),
            Some("partially update scale of the specified Widget")
        );
        assert_eq!(scale.responses[0], (200, Schema::Ref(SCALE.into())));
        assert_eq!(scale.gvk, Some(Gvk::new("example.com", "v1", "Widget")));

        let all = op(&items, "/apis/example.com/v1/widgets", Method::Get);
        assert_eq!(all.id, "listExampleComV1WidgetForAllNamespaces");
        // No deprecated watch paths for custom resources.
        assert!(!paths.iter().any(|p| p.contains("/watch/")));
    }

    #[test]
    fn cluster_scoped_routes() {
        let def = ResourceDef {
            namespaced: false,
            subresources: &[],
            ..WIDGET
        };
        let items = custom_paths(&def);
        let paths: Vec<&str> = items.iter().map(|item| item.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/apis/example.com/v1/widgets",
                "/apis/example.com/v1/widgets/{name}"
            ]
        );
        let get = op(&items, "/apis/example.com/v1/widgets/{name}", Method::Get);
        assert_eq!(get.id, "readExampleComV1Widget");
    }
}
