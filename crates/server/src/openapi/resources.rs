//! Paths of one resource: collection, object, watch and subresource routes.
//!
//! Mirrors `k8s.io/apiserver/pkg/endpoints/installer.go` (`registerResourceHandlers`):
//! which verbs yield which paths, operation names (`listNamespacedDeployment`),
//! descriptions ("list or watch objects of kind Deployment"), actions and responses.

use super::definitions::{Definitions, Gvk};
use super::params::{self, Param, Spec};
use super::paths::{
    article, merge_paths, specs, title, Body, GroupVersion, Media, Method, Operation, PathItem,
    Schema,
};
use crate::registry::{ResourceDef, SubresourceDef};

/// Subresources served as `connect` (upstream `rest.Connecter`).
const CONNECT_SUBRESOURCES: &[&str] = &["attach", "exec", "portforward", "proxy"];

const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";

/// Context shared by the operations of one resource.
struct Res<'a> {
    def: &'a ResourceDef,
    gv: &'a GroupVersion,
    /// `Namespaced` or empty, as in `readNamespacedDeployment`.
    scope: &'static str,
    object: Option<String>,
    list: Option<String>,
    gvk: Gvk,
}

impl Res<'_> {
    fn op(
        &self,
        method: Method,
        verb: &str,
        rest: &str,
        description: String,
        action: &'static str,
    ) -> Operation {
        Operation {
            method,
            id: format!("{verb}{}{rest}", self.gv.camel),
            description: Some(description),
            tag: self.gv.tag.clone(),
            action: Some(action),
            gvk: Some(self.gvk.clone()),
            params: Vec::new(),
            body: None,
            responses: Vec::new(),
            media: Media::Object,
        }
    }

    fn object_schema(&self) -> Schema {
        self.object.clone().map_or(Schema::None, Schema::Ref)
    }

    fn list_schema(&self) -> Schema {
        self.list.clone().map_or(Schema::None, Schema::Ref)
    }

    /// Path params every operation under `{namespace}` / `{name}` carries.
    fn scope_params(&self, name_kind: Option<&str>) -> Vec<Param> {
        let mut out = vec![params::PRETTY.param()];
        if self.def.namespaced {
            out.push(params::NAMESPACE.param());
        }
        if let Some(kind) = name_kind {
            out.push(params::name_param(kind));
        }
        out
    }
}

pub(crate) fn resource_paths(
    def: &ResourceDef,
    gv: &GroupVersion,
    defs: &Definitions,
) -> Vec<PathItem> {
    let res = Res {
        def,
        gv,
        scope: if def.namespaced { "Namespaced" } else { "" },
        object: defs
            .name_for_gvk(&gv.group, &gv.version, def.kind)
            .map(str::to_string),
        list: defs
            .name_for_gvk(&gv.group, &gv.version, &def.list_kind())
            .map(str::to_string),
        gvk: Gvk::new(def.group, def.version, def.kind),
    };
    let kind = def.kind;
    let scope = res.scope;
    let collection = if def.namespaced {
        format!("{}/namespaces/{{namespace}}/{}", gv.prefix, def.plural)
    } else {
        format!("{}/{}", gv.prefix, def.plural)
    };
    let watch_collection = if def.namespaced {
        format!(
            "{}/watch/namespaces/{{namespace}}/{}",
            gv.prefix, def.plural
        )
    } else {
        format!("{}/watch/{}", gv.prefix, def.plural)
    };
    // The generated spec follows `Store.ReturnDeletedObject`; namespaces and CRDs
    // return the object from custom REST code but are documented as Status upstream.
    let documented_as_object = def.returns_deleted_object
        && !matches!(
            (def.group, def.plural),
            ("", "namespaces") | ("apiextensions.k8s.io", "customresourcedefinitions")
        );
    let delete_schema = if documented_as_object {
        res.object_schema()
    } else {
        Schema::Ref(STATUS.into())
    };
    let mut items = Vec::new();
    let mut push = |path: String, mut op: Operation, extra: Vec<Param>| {
        op.params.extend(extra);
        items.push(PathItem {
            path,
            params: Vec::new(),
            ops: vec![op],
        });
    };

    // Collection: list, create, deletecollection.
    if def.has_verb("list") {
        let doc = if def.has_verb("watch") {
            "list or watch objects of kind "
        } else {
            "list objects of kind "
        };
        let mut op = res.op(
            Method::Get,
            "list",
            &format!("{scope}{kind}"),
            format!("{doc}{kind}"),
            "list",
        );
        op.params = specs(params::LIST);
        op.responses = vec![(200, res.list_schema()), (401, Schema::None)];
        op.media = Media::Stream;
        push(collection.clone(), op, res.scope_params(None));
        if def.namespaced {
            let mut all = res.op(
                Method::Get,
                "list",
                &format!("{kind}ForAllNamespaces"),
                format!("{doc}{kind}"),
                "list",
            );
            all.params = specs(params::LIST);
            all.responses = vec![(200, res.list_schema()), (401, Schema::None)];
            all.media = Media::Stream;
            push(
                format!("{}/{}", gv.prefix, def.plural),
                all,
                vec![params::PRETTY.param()],
            );
        }
    }
    if def.has_verb("create") {
        let mut op = res.op(
            Method::Post,
            "create",
            &format!("{scope}{kind}"),
            format!("create{}{kind}", article(kind)),
            "post",
        );
        op.params = specs(params::WRITE);
        op.body = Some(Body::Object(res.object.clone()));
        op.responses = vec![
            (200, res.object_schema()),
            (201, res.object_schema()),
            (202, res.object_schema()),
            (401, Schema::None),
        ];
        push(collection.clone(), op, res.scope_params(None));
    }
    if def.has_verb("deletecollection") {
        let mut op = res.op(
            Method::Delete,
            "delete",
            &format!("Collection{scope}{kind}"),
            format!("delete collection of {kind}"),
            "deletecollection",
        );
        op.params = specs(params::DELETE_COLLECTION);
        op.body = Some(Body::DeleteOptions);
        op.responses = vec![(200, Schema::Ref(STATUS.into())), (401, Schema::None)];
        push(collection.clone(), op, res.scope_params(None));
    }

    // Single object: get, update, patch, delete.
    let object_path = format!("{collection}/{{name}}");
    if def.has_verb("get") {
        let mut op = res.op(
            Method::Get,
            "read",
            &format!("{scope}{kind}"),
            format!("read the specified {kind}"),
            "get",
        );
        op.responses = vec![(200, res.object_schema()), (401, Schema::None)];
        push(object_path.clone(), op, res.scope_params(Some(kind)));
    }
    if def.has_verb("update") {
        let mut op = res.op(
            Method::Put,
            "replace",
            &format!("{scope}{kind}"),
            format!("replace the specified {kind}"),
            "put",
        );
        op.params = specs(params::WRITE);
        op.body = Some(Body::Object(res.object.clone()));
        op.responses = vec![
            (200, res.object_schema()),
            (201, res.object_schema()),
            (401, Schema::None),
        ];
        push(object_path.clone(), op, res.scope_params(Some(kind)));
    }
    if def.has_verb("patch") {
        let mut op = res.op(
            Method::Patch,
            "patch",
            &format!("{scope}{kind}"),
            format!("partially update the specified {kind}"),
            "patch",
        );
        op.params = specs(params::PATCH);
        op.body = Some(Body::Patch);
        op.responses = vec![
            (200, res.object_schema()),
            (201, res.object_schema()),
            (401, Schema::None),
        ];
        push(object_path.clone(), op, res.scope_params(Some(kind)));
    }
    if def.has_verb("delete") {
        let mut op = res.op(
            Method::Delete,
            "delete",
            &format!("{scope}{kind}"),
            format!("delete{}{kind}", article(kind)),
            "delete",
        );
        op.params = specs(params::DELETE);
        op.body = Some(Body::DeleteOptions);
        op.responses = vec![
            (200, delete_schema.clone()),
            (202, delete_schema),
            (401, Schema::None),
        ];
        push(object_path.clone(), op, res.scope_params(Some(kind)));
    }

    // Deprecated watch paths.
    if def.has_verb("watch") {
        let watch = |id: String, desc: String, action: &'static str| {
            let mut op = res.op(Method::Get, "watch", &id, desc, action);
            op.responses = vec![(200, Schema::Ref(WATCH_EVENT.into())), (401, Schema::None)];
            op.media = Media::Stream;
            op.params = specs(params::LIST);
            op
        };
        let single = format!("watch changes to an object of kind {kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.");
        let list = format!("watch individual changes to a list of {kind}. deprecated: use the 'watch' parameter with a list operation instead.");
        push(
            watch_collection.clone(),
            watch(format!("{scope}{kind}List"), list.clone(), "watchlist"),
            res.scope_params(None),
        );
        push(
            format!("{watch_collection}/{{name}}"),
            watch(format!("{scope}{kind}"), single, "watch"),
            res.scope_params(Some(kind)),
        );
        if def.namespaced {
            let all = watch(format!("{kind}ListForAllNamespaces"), list, "watchlist");
            push(
                format!("{}/watch/{}", gv.prefix, def.plural),
                all,
                vec![params::PRETTY.param()],
            );
        }
    }

    for sub in def.subresources {
        items.extend(subresource_paths(&res, sub, &object_path, defs));
    }
    items
}

fn subresource_paths(
    res: &Res<'_>,
    sub: &SubresourceDef,
    object_path: &str,
    defs: &Definitions,
) -> Vec<PathItem> {
    let kind = res.def.kind;
    let scope = res.scope;
    let path = format!("{object_path}/{}", sub.name);
    let sub_title = title(sub.name);
    let gvk = Gvk::new(sub.group, sub.version, sub.kind);
    let schema = defs
        .name_for_gvk(sub.group, sub.version, sub.kind)
        .map_or(Schema::None, |n| Schema::Ref(n.to_string()));
    let body_def = match &schema {
        Schema::Ref(name) => Some(name.clone()),
        _ => None,
    };
    let mut items = Vec::new();
    let base = |method: Method, verb: &str, rest: String, desc: String, action: &'static str| {
        let mut op = res.op(method, verb, &rest, desc, action);
        op.gvk = Some(gvk.clone());
        op
    };

    if CONNECT_SUBRESOURCES.contains(&sub.name) {
        let mut methods: Vec<Method> = sub
            .verbs
            .iter()
            .filter_map(|verb| verb_method(verb))
            .collect();
        if sub.name == "proxy" {
            methods.extend([Method::Head, Method::Options]);
        }
        methods.sort();
        methods.dedup();
        let query = params::subresource_query(res.def.plural, sub.name);
        let variants: Vec<(String, &str)> = if sub.name == "proxy" {
            vec![(path.clone(), ""), (format!("{path}/{{path}}"), "WithPath")]
        } else {
            vec![(path.clone(), "")]
        };
        for (variant_path, suffix) in variants {
            let mut item = PathItem {
                path: variant_path,
                params: Vec::new(),
                ops: Vec::new(),
            };
            for method in &methods {
                let rest = format!("{}{scope}{kind}{sub_title}{suffix}", method.title());
                let desc = format!(
                    "connect {} requests to {} of {kind}",
                    method.key().to_uppercase(),
                    sub.name
                );
                let mut op = base(*method, "connect", rest, desc, "connect");
                // Connect routes take no `pretty`.
                op.params = res.scope_params(Some(sub.kind));
                op.params.retain(|p| p.name != "pretty");
                if suffix.is_empty() {
                    op.params.extend(query.iter().map(Spec::param));
                } else {
                    op.params.push(params::PROXY_PATH.param());
                }
                op.responses = vec![(200, Schema::String), (401, Schema::None)];
                op.media = Media::Connect;
                item.ops.push(op);
            }
            items.push(item);
        }
        return merge_paths(items);
    }

    let mut push = |op: Operation| {
        items.push(PathItem {
            path: path.clone(),
            params: Vec::new(),
            ops: vec![op],
        })
    };
    for verb in sub.verbs {
        let rest = format!("{scope}{kind}{sub_title}");
        let name = sub.name;
        let op = match *verb {
            "get" if name == "log" => {
                let mut op = base(
                    Method::Get,
                    "read",
                    rest,
                    format!("read {name} of the specified {kind}"),
                    "get",
                );
                op.params = res.scope_params(Some(sub.kind));
                op.params.extend(
                    params::subresource_query(res.def.plural, name)
                        .iter()
                        .map(Spec::param),
                );
                op.responses = vec![(200, Schema::String), (401, Schema::None)];
                op.media = Media::Log;
                op
            }
            "get" => {
                let mut op = base(
                    Method::Get,
                    "read",
                    rest,
                    format!("read {name} of the specified {kind}"),
                    "get",
                );
                op.params = res.scope_params(Some(sub.kind));
                op.responses = vec![(200, schema.clone()), (401, Schema::None)];
                op
            }
            "update" => {
                let mut op = base(
                    Method::Put,
                    "replace",
                    rest,
                    format!("replace {name} of the specified {kind}"),
                    "put",
                );
                op.params = res.scope_params(Some(sub.kind));
                op.params.extend(specs(params::WRITE));
                op.body = Some(Body::Object(body_def.clone()));
                op.responses = vec![
                    (200, schema.clone()),
                    (201, schema.clone()),
                    (401, Schema::None),
                ];
                op
            }
            "patch" => {
                let mut op = base(
                    Method::Patch,
                    "patch",
                    rest,
                    format!("partially update {name} of the specified {kind}"),
                    "patch",
                );
                op.params = res.scope_params(Some(sub.kind));
                op.params.extend(specs(params::PATCH));
                op.body = Some(Body::Patch);
                op.responses = vec![
                    (200, schema.clone()),
                    (201, schema.clone()),
                    (401, Schema::None),
                ];
                op
            }
            "create" => {
                let mut op = base(
                    Method::Post,
                    "create",
                    rest,
                    format!("create {name} of{}{kind}", article(kind)),
                    "post",
                );
                op.params = res.scope_params(Some(sub.kind));
                op.params.extend(specs(params::WRITE));
                op.body = Some(Body::Object(body_def.clone()));
                op.responses = vec![
                    (200, schema.clone()),
                    (201, schema.clone()),
                    (202, schema.clone()),
                    (401, Schema::None),
                ];
                op
            }
            _ => continue,
        };
        push(op);
    }
    merge_paths(items)
}

fn verb_method(verb: &str) -> Option<Method> {
    match verb {
        "get" => Some(Method::Get),
        "create" => Some(Method::Post),
        "update" => Some(Method::Put),
        "patch" => Some(Method::Patch),
        "delete" => Some(Method::Delete),
        _ => None,
    }
}
