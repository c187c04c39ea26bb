//! The connect subresources' handler (`handlers/rest.go`
//! `ConnectResource`): `pods/exec`, `attach`, `portforward`, `proxy`,
//! `services/proxy` and `nodes/proxy`, every method. In kube's order: a
//! `dryRun` parameter is refused (400 `dryRun is not supported`), the
//! options object is decoded from the query (`getRequestOptions`, the
//! proxy's trailing path as its `path`), the request is admitted as
//! `CONNECT` with that object, and only then is the backend looked for
//! (`kubelet_proxy.rs`, `proxy.rs`).

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::context::Api;
use super::exchange::{ApiRequest, ApiResponse};
use super::target::Target;
use super::{kubelet_proxy, proxy};
use crate::admission::{Attributes, Caller, GroupVersionName, Operation};
use crate::query::Query;
use crate::status::{Result, Status};

pub(super) async fn connect(
    api: &Arc<Api>,
    request: &ApiRequest,
    target: &Target<'_>,
    subresource: &str,
) -> Result<ApiResponse> {
    if !request.query.all("dryRun").is_empty() {
        return Err(Status::bad_request("dryRun is not supported"));
    }
    let resource = target.resource;
    let kind = resource
        .subresource(subresource)
        .map(|def| def.kind)
        .ok_or_else(Status::no_such_resource)?;
    let mut options = options_object(kind, &request.query, &request.path)?;
    let caller = Caller::new(request.user.clone(), false, Value::Null);
    let name = target.name.unwrap_or_default();
    let attributes = Attributes {
        operation: Operation::Connect,
        kind: GroupVersionName::new(resource.group, resource.version, kind),
        resource: GroupVersionName::new(resource.group, resource.version, resource.plural),
        subresource,
        name,
        namespace: if resource.namespaced {
            target.namespace.unwrap_or_default()
        } else {
            ""
        },
        old_object: None,
        options: Value::Null,
        dry_run: false,
        user: caller.user.as_ref(),
    };
    let admitted = api
        .admission
        .admit_connect(&attributes, &mut options, &caller)
        .await;
    let result = match admitted {
        Err(status) => Err(status),
        Ok(()) if subresource == "proxy" => proxy::connect(api, target),
        Ok(()) => {
            let container = options
                .get("container")
                .and_then(Value::as_str)
                .unwrap_or_default();
            kubelet_proxy::connect(api, target, subresource, container).await
        }
    };
    super::write::admission::with_warnings(result, &caller)
}

/// The options object of `kind` as kube's parameter codec decodes it from
/// the query (`Convert_url_Values_To_v1_PodExecOptions`, …) and encodes it
/// for admission: v1, omitempty fields left out (exec's `command` is not
/// omitempty: `null` without one).
pub(crate) fn options_object(kind: &str, query: &Query, path: &str) -> Result<Value> {
    let mut object = Map::new();
    object.insert("kind".into(), json!(kind));
    object.insert("apiVersion".into(), json!("v1"));
    let flag = |object: &mut Map<String, Value>, name: &str| {
        if query.get(name).is_some_and(query_bool) {
            object.insert(name.into(), json!(true));
        }
    };
    match kind {
        "PodExecOptions" | "PodAttachOptions" => {
            for name in ["stdin", "stdout", "stderr", "tty"] {
                flag(&mut object, name);
            }
            if let Some(container) = query.get("container").filter(|c| !c.is_empty()) {
                object.insert("container".into(), json!(container));
            }
            if kind == "PodExecOptions" {
                let command = query.all("command");
                let command = if command.is_empty() {
                    Value::Null
                } else {
                    json!(command)
                };
                object.insert("command".into(), command);
            }
        }
        "PodPortForwardOptions" => {
            let mut ports = Vec::new();
            for value in query.all("ports") {
                for port in value.split(',') {
                    ports.push(parse_port(port).map_err(|error| {
                        Status::bad_request(format!("cannot convert to []int32: {error}"))
                    })?);
                }
            }
            if !ports.is_empty() {
                object.insert("ports".into(), json!(ports));
            }
        }
        // PodProxyOptions, NodeProxyOptions, ServiceProxyOptions: the
        // trailing path replaces any `path` parameter.
        _ => {
            let path = proxy_subpath(path);
            if !path.is_empty() {
                object.insert("path".into(), json!(path));
            }
        }
    }
    Ok(Value::Object(object))
}

/// `runtime.Convert_Slice_string_To_bool`: only `0` and `false` (any case)
/// are false.
fn query_bool(value: &str) -> bool {
    !(value == "0" || value.eq_ignore_ascii_case("false"))
}

/// Go's `strconv.ParseUint(value, 10, 16)`, with its errors.
fn parse_port(value: &str) -> std::result::Result<u16, String> {
    let quoted = crate::go::strconv::quote(value);
    if value.is_empty() || !value.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseUint: parsing {quoted}: invalid syntax"
        ));
    }
    value
        .parse::<u16>()
        .map_err(|_| format!("strconv.ParseUint: parsing {quoted}: value out of range"))
}

/// `getRequestOptions`' subpath: the request path's parts after
/// `{resource}/{name}/proxy` joined with `/`, with a leading `/`, and a
/// trailing `/` when the request path has one.
fn proxy_subpath(path: &str) -> String {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    // `api/v1/…` or `apis/{group}/{version}/…`.
    let mut rest = match parts.first() {
        Some(&"api") => parts.get(2..).unwrap_or_default(),
        _ => parts.get(3..).unwrap_or_default(),
    };
    if let ["namespaces", _, more @ ..] = rest {
        if !more.is_empty() {
            rest = more;
        }
    }
    let mut subpath = rest.get(3..).unwrap_or_default().join("/");
    if !subpath.is_empty() && !subpath.starts_with('/') {
        subpath.insert(0, '/');
    }
    if path.ends_with('/') && !subpath.ends_with('/') {
        subpath.push('/');
    }
    crate::query::percent_decode_path(&subpath)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(kind: &str, query: &str, path: &str) -> Result<Value> {
        options_object(kind, &Query::parse(query), path)
    }

    #[test]
    fn exec_and_attach_options_are_decoded_as_kubes_parameter_codec() {
        assert_eq!(
            options(
                "PodExecOptions",
                "command=sh&command=-c&command=ls&container=c&stdin=true&stdout=1&stderr=false&tty=0",
                "/api/v1/namespaces/ns/pods/p/exec"
            )
            .unwrap(),
            json!({"kind": "PodExecOptions", "apiVersion": "v1", "stdin": true,
                   "stdout": true, "container": "c", "command": ["sh", "-c", "ls"]})
        );
        assert_eq!(
            options("PodExecOptions", "", "/api/v1/namespaces/ns/pods/p/exec").unwrap(),
            json!({"kind": "PodExecOptions", "apiVersion": "v1", "command": null})
        );
        assert_eq!(
            options("PodAttachOptions", "tty=yes&stdin=FALSE", "").unwrap(),
            json!({"kind": "PodAttachOptions", "apiVersion": "v1", "tty": true})
        );
    }

    #[test]
    fn port_forward_ports_are_uint16_lists() {
        assert_eq!(
            options("PodPortForwardOptions", "ports=80,443&ports=8080", "").unwrap(),
            json!({"kind": "PodPortForwardOptions", "apiVersion": "v1", "ports": [80, 443, 8080]})
        );
        assert_eq!(
            options("PodPortForwardOptions", "ports=http", "")
                .unwrap_err()
                .message,
            r#"cannot convert to []int32: strconv.ParseUint: parsing "http": invalid syntax"#
        );
        assert_eq!(
            options("PodPortForwardOptions", "ports=70000", "")
                .unwrap_err()
                .message,
            r#"cannot convert to []int32: strconv.ParseUint: parsing "70000": value out of range"#
        );
    }

    #[test]
    fn proxy_options_carry_the_trailing_path() {
        let cases = [
            ("/api/v1/namespaces/ns/pods/p/proxy", None),
            ("/api/v1/namespaces/ns/pods/p/proxy/", Some("/")),
            ("/api/v1/namespaces/ns/pods/p:80/proxy/a/b", Some("/a/b")),
            (
                "/api/v1/namespaces/ns/services/s/proxy/a//b/",
                Some("/a//b/"),
            ),
            ("/api/v1/nodes/n/proxy/metrics", Some("/metrics")),
            ("/api/v1/namespaces/proxy/pods/proxy/proxy/x", Some("/x")),
        ];
        for (path, expected) in cases {
            let object = options("PodProxyOptions", "path=/ignored", path).unwrap();
            assert_eq!(
                object.get("path").and_then(Value::as_str),
                expected,
                "{path}"
            );
        }
    }
}
