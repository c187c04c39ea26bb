use serde_json::json;

use super::encode::f32_to_f16_exact;
use super::*;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[test]
fn encodes_as_kube_does() {
    let cases = [
        (json!(null), "d9d9f7f6"),
        (json!(true), "d9d9f7f5"),
        (json!(0), "d9d9f700"),
        (json!(23), "d9d9f717"),
        (json!(24), "d9d9f71818"),
        (json!(-1), "d9d9f720"),
        (json!(-500), "d9d9f73901f3"),
        (json!(1.5), "d9d9f7f93e00"),
        (json!(0.1), "d9d9f7fb3fb999999999999a"),
        (json!(100000.5), "d9d9f7fa47c35040"),
        (json!("a"), "d9d9f74161"),
        (json!([1, "b"]), "d9d9f782014162"),
        // Keys by length, then bytes: "b" < "aa" < "ab".
        (
            json!({"ab": 1, "b": 2, "aa": 3}),
            "d9d9f7a34162024261610342616201",
        ),
    ];
    for (value, expected) in cases {
        let encoded = encode(&value);
        assert_eq!(hex(&encoded), expected, "{value}");
        assert_eq!(decode(&encoded).expect("decodes"), value);
    }
}

#[test]
fn half_precision_is_exact_only() {
    assert_eq!(f32_to_f16_exact(1.0), Some(0x3c00));
    assert_eq!(f32_to_f16_exact(-2.0), Some(0xc000));
    assert_eq!(f32_to_f16_exact(65504.0), Some(0x7bff));
    assert_eq!(f32_to_f16_exact(65536.0), None);
    assert_eq!(f32_to_f16_exact(5.960_464_5e-8), Some(0x0001));
    assert_eq!(f32_to_f16_exact(0.1), None);
    for bits in [0x0001u16, 0x03ff, 0x0400, 0x3555, 0x7bff, 0x8001] {
        let value = decode::f16_to_f64(bits) as f32;
        assert_eq!(f32_to_f16_exact(value), Some(bits), "{bits:04x}");
    }
}

#[test]
fn decodes_text_and_byte_strings_tags_and_indefinite_items() {
    // {"a": "x"} with a text key and an indefinite byte string value.
    assert_eq!(
        decode(&[0xa1, 0x61, 0x61, 0x5f, 0x41, 0x78, 0xff]),
        Ok(json!({"a": "x"}))
    );
    // Indefinite array and map, nested self-described tags.
    assert_eq!(
        decode(&[
            0xd9, 0xd9, 0xf7, 0x9f, 0xd9, 0xd9, 0xf7, 0x01, 0xbf, 0x41, 0x6b, 0xf4, 0xff, 0xff
        ]),
        Ok(json!([1, {"k": false}]))
    );
    // Tag 22 (expected base64) on a byte string.
    assert_eq!(decode(&[0xd6, 0x42, 0x01, 0x02]), Ok(json!("AQI=")));
    assert_eq!(
        decode(&[0xfb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0]),
        Ok(json!(1.5))
    );
}

#[test]
fn refuses_what_kube_refuses() {
    let cases: Vec<(&[u8], CborError)> = vec![
        (&[], CborError::Empty),
        (&[0x18], CborError::Truncated),
        (&[0x01, 0x02], CborError::Extraneous(1, 1)),
        (
            &[0x1c],
            CborError::InvalidAdditional(28, "positive integer"),
        ),
        (
            &[0x1b, 0x80, 0, 0, 0, 0, 0, 0, 0],
            CborError::IntegerOverflow("positive integer"),
        ),
        (&[0x61, 0xff], CborError::InvalidUtf8),
        (
            &[0xa2, 0x41, 0x61, 0x01, 0x41, 0x61, 0x02],
            CborError::DuplicateKey("a".into(), 1),
        ),
        (&[0xa1, 0x01, 0x01], CborError::MapKey("positive integer")),
        (
            &[0xf9, 0x7e, 0x00],
            CborError::NotFinite("floating-point NaN"),
        ),
        (
            &[0xf9, 0x7c, 0x00],
            CborError::NotFinite("floating-point infinity"),
        ),
        (&[0xff], CborError::UnexpectedBreak),
        (
            &[0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            CborError::Truncated,
        ),
        (
            &[0x5f, 0x61, 0x61, 0xff],
            CborError::IndefiniteChunk("UTF-8 text string", "byte string"),
        ),
    ];
    for (body, expected) in cases {
        assert_eq!(decode(body), Err(expected), "{}", hex(body));
    }
    let deep: Vec<u8> = std::iter::repeat_n(0x81, MAX_NESTING + 1)
        .chain([0x01])
        .collect();
    assert_eq!(decode(&deep), Err(CborError::TooDeep(MAX_NESTING)));
}

/// Tags are nesting levels (fxamacker/cbor's `MaxNestedLevels`): a 2 MiB
/// chain of tag 21 (`0xd5`, whose content is decoded in place) once
/// overflowed a worker's stack and took the whole server down.
#[test]
fn tag_chains_count_toward_the_nesting_limit() {
    let chain = vec![0xd5; 2 * 1024 * 1024];
    assert_eq!(decode(&chain), Err(CborError::TooDeep(MAX_NESTING)));
    let self_described: Vec<u8> = SELF_DESCRIBED.repeat(100_000);
    assert_eq!(
        decode(&self_described),
        Err(CborError::TooDeep(MAX_NESTING))
    );
    let tag_zero: Vec<u8> = std::iter::repeat_n(0xc0, 100_000).collect();
    assert!(decode(&tag_zero).is_err());
    // 64 levels, the self-described tag among them, still decode.
    let mut deepest = SELF_DESCRIBED.to_vec();
    deepest.extend(std::iter::repeat_n(0x81, MAX_NESTING - 1));
    deepest.push(0x01);
    assert!(decode(&deepest).is_ok());
    let mut too_deep = SELF_DESCRIBED.to_vec();
    too_deep.extend(std::iter::repeat_n(0x81, MAX_NESTING));
    too_deep.push(0x01);
    assert_eq!(decode(&too_deep), Err(CborError::TooDeep(MAX_NESTING)));
}

/// A value nested exactly `MAX_NESTING` deep decodes from a body without
/// the self-described tag, and its own encoding, which starts with the tag
/// as kube's does, is one level too deep for the same decoder: as with
/// kube-apiserver's and client-go's decoders, whose `MaxNestedLevels`
/// counts tags too. AFL++ found it (`fuzz-afl/corpus/cbor/crash-*`).
#[test]
fn the_self_described_tag_of_an_encoding_is_a_nesting_level() {
    let mut deepest: Vec<u8> = std::iter::repeat_n(0x81, MAX_NESTING).collect();
    deepest.push(0x00);
    let value = decode(&deepest).expect("64 levels decode");
    let encoded = encode(&value);
    assert_eq!(encoded[..3], SELF_DESCRIBED);
    assert_eq!(decode(&encoded), Err(CborError::TooDeep(MAX_NESTING)));
    assert_eq!(decode(&encoded[3..]), Ok(value));
}

#[test]
fn watch_events_embed_a_tagged_object() {
    let event = encode_watch_event("ADDED", &json!({"a": 1}));
    assert_eq!(
        decode(&event).expect("decodes"),
        json!({"type": "ADDED", "object": {"a": 1}})
    );
    assert!(event.starts_with(&SELF_DESCRIBED));
    let two = [event.clone(), encode_watch_event("DELETED", &json!(null))].concat();
    assert_eq!(
        decode_seq(&two).expect("a sequence"),
        vec![
            json!({"type": "ADDED", "object": {"a": 1}}),
            json!({"type": "DELETED", "object": null})
        ]
    );
    assert_eq!(&event[3..9], &[0xa2, 0x44, b't', b'y', b'p', b'e']);
}
