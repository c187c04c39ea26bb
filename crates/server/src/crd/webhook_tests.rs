//! ConversionReview building and checking against kube's messages
//! (`webhook_converter.go`).

use super::*;
use serde_json::json;

fn crd(webhook: Value) -> Value {
    json!({"spec": {"conversion": {"strategy": "Webhook", "webhook": webhook}}})
}

#[test]
fn the_crd_gives_endpoint_bundle_and_review_versions() {
    let parsed = WebhookConversion::of_crd(&crd(json!({
        "clientConfig": {"service": {"namespace": "hooks", "name": "conv", "path": "/convert"},
                         "caBundle": "LS0tLS1CRUdJTg=="},
        "conversionReviewVersions": ["v2", "v1beta1", "v1"],
    })))
    .expect("webhook");
    assert_eq!(
        parsed.endpoint,
        Some(WebhookEndpoint::Service(ServiceReference {
            namespace: "hooks".into(),
            name: "conv".into(),
            path: "/convert".into(),
            port: 443,
        }))
    );
    assert_eq!(parsed.ca_bundle, b"-----BEGIN");
    // The first version kube speaks, in the CRD's order.
    assert_eq!(parsed.review_version(), Ok(ReviewVersion::V1beta1));
    let none = WebhookConversion {
        review_versions: vec!["v9".into()],
        ..parsed
    };
    assert_eq!(
        none.review_version(),
        Err("no supported conversion review versions".to_string())
    );
    assert_eq!(
        WebhookConversion::of_crd(&json!({"spec": {"conversion": {"strategy": "None"}}})),
        None
    );
}

#[test]
fn the_request_names_uid_desired_version_and_objects() {
    let object = json!({"apiVersion": "example.com/v1", "kind": "Widget"});
    let review = review_request(
        ReviewVersion::V1,
        "u-1",
        "example.com/v2",
        std::slice::from_ref(&object),
    );
    assert_eq!(
        review,
        json!({"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
               "request": {"uid": "u-1", "desiredAPIVersion": "example.com/v2", "objects": [object]}})
    );
    let beta = review_request(ReviewVersion::V1beta1, "u-1", "example.com/v2", &[]);
    assert_eq!(beta["apiVersion"], "apiextensions.k8s.io/v1beta1");
}

fn answer(uid: &str, status: &str, message: &str, objects: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
           "response": {"uid": uid, "result": {"status": status, "message": message},
                        "convertedObjects": objects}})
}

#[test]
fn responses_are_checked_as_kube_checks_them() {
    let v1 = ReviewVersion::V1;
    let ok = answer("u-1", "Success", "", json!([{"a": 1}]));
    assert_eq!(converted_objects(v1, "u-1", &ok), Ok(vec![json!({"a": 1})]));
    assert_eq!(
        converted_objects(v1, "u-2", &ok),
        Err(r#"expected response.uid="u-2", got "u-1""#.to_string())
    );
    assert_eq!(
        converted_objects(v1, "u-1", &answer("u-1", "Failure", "no way", json!([]))),
        Err("no way".to_string())
    );
    assert_eq!(
        converted_objects(v1, "u-1", &answer("u-1", "Failure", "", json!([]))),
        Err("response.result.status was 'Failure', not 'Success'".to_string())
    );
    let mut wrong_kind = ok.clone();
    wrong_kind["apiVersion"] = json!("v1");
    assert_eq!(
        converted_objects(v1, "u-1", &wrong_kind),
        Err("expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /v1, Kind=ConversionReview".to_string())
    );
    assert_eq!(
        converted_objects(
            v1,
            "u-1",
            &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"})
        ),
        Err("no response provided".to_string())
    );
    // v1beta1 checks neither the type nor the uid.
    let mut beta = answer("other", "Success", "", json!([]));
    beta["apiVersion"] = json!("apiextensions.k8s.io/v1beta1");
    assert_eq!(
        converted_objects(ReviewVersion::V1beta1, "u-1", &beta),
        Ok(vec![])
    );
}

fn original() -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
           "metadata": {"name": "w", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                        "labels": {"a": "b"}, "generation": 2},
           "spec": {"size": 3}})
}

const GVK: &str = "example.com/v1, Kind=Widget";

#[test]
fn converted_objects_keep_the_original_metadata_but_labels_and_annotations() {
    let converted = json!({"apiVersion": "example.com/v2", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns", "uid": "u", "resourceVersion": "99",
                     "labels": {"a": "c"}, "annotations": {"converted": "yes"}, "generation": 5},
        "spec": {"dimensions": {"size": 3}}});
    let accepted = accept_converted(
        &[original()],
        vec![converted],
        "example.com/v2",
        GVK,
        Batch::Object,
    )
    .expect("accepted");
    assert_eq!(
        accepted[0],
        json!({"apiVersion": "example.com/v2", "kind": "Widget",
               "metadata": {"name": "w", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                            "labels": {"a": "c"}, "annotations": {"converted": "yes"}, "generation": 2},
               "spec": {"dimensions": {"size": 3}}})
    );
    // Labels the webhook leaves out are dropped.
    let bare = json!({"apiVersion": "example.com/v2", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns", "uid": "u"}});
    let accepted = accept_converted(
        &[original()],
        vec![bare],
        "example.com/v2",
        GVK,
        Batch::Object,
    )
    .expect("accepted");
    assert_eq!(accepted[0]["metadata"].get("labels"), None);
}

#[test]
fn converted_objects_are_refused_with_kubes_messages() {
    let refuse = |converted: Value, batch: Batch| {
        accept_converted(&[original()], vec![converted], "example.com/v2", GVK, batch)
            .expect_err("refused")
    };
    let good = json!({"apiVersion": "example.com/v2", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns", "uid": "u"}});
    let with = |pointer: &str, value: Value| {
        let mut object = good.clone();
        if let Some(slot) = object.pointer_mut(pointer) {
            *slot = value;
        }
        object
    };
    assert_eq!(
        accept_converted(&[original()], vec![], "example.com/v2", GVK, Batch::Object),
        Err(format!(
            "conversion webhook for {GVK} returned 0 objects, expected 1"
        ))
    );
    assert_eq!(
        refuse(with("/apiVersion", json!("example.com/v1")), Batch::Object),
        format!("conversion webhook for {GVK} returned invalid object at index 0: invalid groupVersion (expected example.com/v2, received example.com/v1)")
    );
    assert_eq!(
        refuse(with("/apiVersion", json!("example.com/v1")), Batch::ListItems),
        format!("conversion webhook for {GVK} returned invalid converted object at index 1: invalid groupVersion (expected example.com/v2, received example.com/v1)")
    );
    assert_eq!(
        refuse(with("/kind", json!("Gadget")), Batch::Object),
        format!("conversion webhook for {GVK} returned invalid object at index 0: invalid kind (expected Widget, received Gadget)")
    );
    assert_eq!(
        refuse(with("/metadata/name", json!("x")), Batch::Object),
        format!(
            "conversion webhook for {GVK} returned invalid object: must have the same name: w != x"
        )
    );
    assert_eq!(
        refuse(with("/metadata/uid", json!("x")), Batch::ListItems),
        format!("conversion webhook for {GVK} returned invalid converted object at index 1: must have the same UID: u != x")
    );
    assert_eq!(
        refuse(with("/metadata", json!("text")), Batch::Object),
        // validateConvertedObject reads no name from it first.
        format!(
            "conversion webhook for {GVK} returned invalid object: must have the same name: w != "
        )
    );
    let mut labels = good.clone();
    labels["metadata"]["labels"] = json!({"a": 1});
    assert_eq!(
        refuse(labels.clone(), Batch::Object),
        format!("conversion webhook for {GVK} returned invalid metadata: metadata.labels[a] must be a string, but is int64 in converted object")
    );
    labels["metadata"]["labels"] = json!({"a": "not valid!"});
    let message = refuse(labels, Batch::ListItems);
    assert!(
        message.starts_with(&format!(
            "conversion webhook for {GVK} returned invalid metadata in object at index 1: metadata.labels: Invalid value: \"not valid!\": "
        )),
        "{message}"
    );
    assert_eq!(
        refuse(json!({"apiVersion": "example.com/v2"}), Batch::Object),
        r#"Object 'Kind' is missing in '{"apiVersion":"example.com/v2"}'"#
    );
}
