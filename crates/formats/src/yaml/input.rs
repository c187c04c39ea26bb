//! Input: encodings and characters, as libyaml's reader checks them.

/// Decodes the body as libyaml's reader does: a UTF-16 BOM selects UTF-16, a
/// UTF-8 BOM is dropped, anything else must be UTF-8; control characters are
/// refused. Errors are the reader's problems (go-yaml gives them no line).
pub(super) fn decode_input(body: &[u8]) -> Result<String, String> {
    let text = if let Some(rest) = body.strip_prefix(&[0xFF, 0xFE][..]) {
        decode_utf16(rest, u16::from_le_bytes)?
    } else if let Some(rest) = body.strip_prefix(&[0xFE, 0xFF][..]) {
        decode_utf16(rest, u16::from_be_bytes)?
    } else {
        let rest = body.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(body);
        match std::str::from_utf8(rest) {
            Ok(text) => text.to_string(),
            Err(err) => return Err(utf8_problem(&rest[err.valid_up_to()..]).to_string()),
        }
    };
    for c in text.chars() {
        let v = c as u32;
        let allowed = matches!(v, 0x09 | 0x0A | 0x0D | 0x20..=0x7E | 0x85)
            || (0xA0..=0xD7FF).contains(&v)
            || (0xE000..=0xFFFD).contains(&v)
            || (0x10000..=0x10FFFF).contains(&v);
        if !allowed {
            return Err("control characters are not allowed".to_string());
        }
    }
    Ok(text)
}

fn decode_utf16(raw: &[u8], word: fn([u8; 2]) -> u16) -> Result<String, String> {
    if raw.len() % 2 == 1 {
        return Err("incomplete UTF-16 character".to_string());
    }
    let units = raw.chunks_exact(2).map(|pair| word([pair[0], pair[1]]));
    let mut out = String::with_capacity(raw.len() / 2);
    for unit in char::decode_utf16(units) {
        match unit {
            Ok(c) => out.push(c),
            Err(err) if (0xDC00..=0xDFFF).contains(&err.unpaired_surrogate()) => {
                return Err("unexpected low surrogate area".to_string())
            }
            Err(_) => return Err("expected low surrogate area".to_string()),
        }
    }
    Ok(out)
}

/// libyaml's reader problem for the first invalid UTF-8 sequence.
fn utf8_problem(bad: &[u8]) -> &'static str {
    let lead = bad[0];
    let width = if lead & 0x80 == 0 {
        1
    } else if lead & 0xE0 == 0xC0 {
        2
    } else if lead & 0xF0 == 0xE0 {
        3
    } else if lead & 0xF8 == 0xF0 {
        4
    } else {
        return "invalid leading UTF-8 octet";
    };
    if bad.len() < width {
        return "incomplete UTF-8 octet sequence";
    }
    if bad[1..width].iter().any(|b| b & 0xC0 != 0x80) {
        return "invalid trailing UTF-8 octet";
    }
    let mut value = u32::from(lead & (0xFF >> (width + 1)));
    for b in &bad[1..width] {
        value = (value << 6) | u32::from(b & 0x3F);
    }
    let min = [0, 0, 0x80, 0x800, 0x10000][width];
    if value < min {
        return "invalid length of a UTF-8 sequence";
    }
    "invalid Unicode character"
}
