//! Decoding: go-yaml v2's decoder into interface{} (map[interface{}]interface{}).

use std::collections::{HashMap, HashSet};

use super::go_fmt::go_syntax;
use super::parse::{NodeKind, Tree};
use super::resolve::{resolve, Resolved};
use super::MAX_DEPTH;

/// A value as go-yaml v2 decodes it into `interface{}`.
#[derive(Debug, Clone)]
pub(super) enum GoVal {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    /// A `*big.Int` (integers past 64 bits that are not floats), decimal.
    Big(String),
    Str(String),
    Seq(Vec<GoVal>),
    Map(GoMap),
}

/// Hashable identity of a Go map key (`interface{}` equality).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyId {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(u64),
    /// NaN never equals itself: every NaN key is its own entry.
    Nan(usize),
    Big(String),
    Str(String),
}

#[derive(Debug, Clone, Default)]
pub(super) struct GoMap {
    pub(super) entries: Vec<(GoVal, GoVal)>,
    index: HashMap<KeyId, usize>,
}

impl GoMap {
    fn key_id(&self, key: &GoVal) -> KeyId {
        match key {
            GoVal::Null => KeyId::Null,
            GoVal::Bool(b) => KeyId::Bool(*b),
            GoVal::Int(i) => KeyId::Int(*i),
            GoVal::Uint(u) => KeyId::Uint(*u),
            GoVal::Float(f) if f.is_nan() => KeyId::Nan(self.entries.len()),
            GoVal::Float(f) => KeyId::Float(if *f == 0.0 { 0 } else { f.to_bits() }),
            GoVal::Big(s) => KeyId::Big(s.clone()),
            GoVal::Str(s) => KeyId::Str(s.clone()),
            // Rejected before insertion ("invalid map key").
            GoVal::Seq(_) | GoVal::Map(_) => KeyId::Nan(self.entries.len()),
        }
    }

    fn contains(&self, key: &GoVal) -> bool {
        self.index.contains_key(&self.key_id(key))
    }

    fn set(&mut self, key: GoVal, value: GoVal) {
        let id = self.key_id(&key);
        match self.index.get(&id) {
            Some(&at) => self.entries[at].1 = value,
            None => {
                self.index.insert(id, self.entries.len());
                self.entries.push((key, value));
            }
        }
    }
}

pub(super) const STR_TAG: &str = "tag:yaml.org,2002:str";
pub(super) const BOOL_TAG: &str = "tag:yaml.org,2002:bool";
pub(super) const INT_TAG: &str = "tag:yaml.org,2002:int";
pub(super) const FLOAT_TAG: &str = "tag:yaml.org,2002:float";
pub(super) const NULL_TAG: &str = "tag:yaml.org,2002:null";
pub(super) const TIMESTAMP_TAG: &str = "tag:yaml.org,2002:timestamp";
pub(super) const BINARY_TAG: &str = "tag:yaml.org,2002:binary";
pub(super) const MERGE_TAG: &str = "tag:yaml.org,2002:merge";

/// go-yaml's `shortTag`.
pub(super) fn short_tag(tag: &str) -> String {
    match tag.strip_prefix("tag:yaml.org,2002:") {
        Some(rest) => format!("!!{rest}"),
        None => tag.to_string(),
    }
}

pub(super) struct Decoder<'a> {
    pub(super) tree: &'a Tree,
    pub(super) strict: bool,
    pub(super) terrors: Vec<String>,
    pub(super) decode_count: usize,
    pub(super) alias_count: usize,
    pub(super) alias_depth: usize,
    pub(super) active_aliases: HashSet<usize>,
    pub(super) depth: usize,
    /// Bytes of output still allowed (alias expansion of big scalars).
    pub(super) budget: usize,
}

/// go-yaml's `allowedAliasRatio`.
fn allowed_alias_ratio(decode_count: usize) -> f64 {
    const LOW: f64 = 400_000.0;
    const HIGH: f64 = 4_000_000.0;
    let count = decode_count as f64;
    if count <= LOW {
        0.99
    } else if count >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((count - LOW) / (HIGH - LOW))
    }
}

const EXCESSIVE_ALIASING: &str = "yaml: document contains excessive aliasing";

impl Decoder<'_> {
    fn charge(&mut self, bytes: usize) -> Result<(), String> {
        self.budget = self
            .budget
            .checked_sub(bytes + 16)
            .ok_or_else(|| EXCESSIVE_ALIASING.to_string())?;
        Ok(())
    }

    /// go-yaml's `unmarshal(n, out)` for an `interface{}` target (`into` is
    /// `None`) or for an existing map (merge keys).
    pub(super) fn unmarshal(
        &mut self,
        id: usize,
        into: Option<&mut GoMap>,
    ) -> Result<GoVal, String> {
        self.decode_count += 1;
        if self.alias_depth > 0 {
            self.alias_count += 1;
        }
        if self.alias_count > 100
            && self.decode_count > 1000
            && self.alias_count as f64 / self.decode_count as f64
                > allowed_alias_ratio(self.decode_count)
        {
            return Err(EXCESSIVE_ALIASING.to_string());
        }
        if self.depth >= MAX_DEPTH {
            return Err(format!("yaml: exceeded max depth of {MAX_DEPTH}"));
        }
        self.depth += 1;
        let result = self.unmarshal_node(id, into);
        self.depth -= 1;
        result
    }

    fn unmarshal_node(&mut self, id: usize, into: Option<&mut GoMap>) -> Result<GoVal, String> {
        let node = &self.tree.nodes[id];
        match &node.kind {
            NodeKind::Alias { target, name } => {
                if !self.active_aliases.insert(id) {
                    return Err(format!("yaml: anchor '{name}' value contains itself"));
                }
                self.alias_depth += 1;
                let result = self.unmarshal(*target, into);
                self.alias_depth -= 1;
                self.active_aliases.remove(&id);
                result
            }
            NodeKind::Scalar {
                value,
                implicit,
                tag,
            } => {
                self.charge(value.len())?;
                scalar(value, *implicit, tag)
            }
            NodeKind::Sequence(children) => {
                self.charge(0)?;
                let mut items = Vec::with_capacity(children.len());
                for &child in children {
                    items.push(self.unmarshal(child, None)?);
                }
                Ok(GoVal::Seq(items))
            }
            NodeKind::Mapping(children) => {
                self.charge(0)?;
                match into {
                    Some(map) => {
                        self.mapping(children, map)?;
                        Ok(GoVal::Null)
                    }
                    None => {
                        let mut map = GoMap::default();
                        self.mapping(children, &mut map)?;
                        Ok(GoVal::Map(map))
                    }
                }
            }
        }
    }

    fn mapping(&mut self, children: &[usize], map: &mut GoMap) -> Result<(), String> {
        for pair in children.chunks(2) {
            let (key, value) = (pair[0], pair.get(1).copied());
            let Some(value) = value else { break };
            if self.is_merge(key) {
                self.merge(value, map)?;
                continue;
            }
            let k = self.unmarshal(key, None)?;
            if matches!(k, GoVal::Map(_) | GoVal::Seq(_)) {
                return Err(format!("yaml: invalid map key: {}", go_syntax(&k)));
            }
            let v = self.unmarshal(value, None)?;
            if self.strict && map.contains(&k) {
                self.terrors.push(format!(
                    "line {}: key {} already set in map",
                    self.tree.nodes[value].line,
                    go_syntax(&k)
                ));
                continue;
            }
            map.set(k, v);
        }
        Ok(())
    }

    fn is_merge(&self, id: usize) -> bool {
        matches!(&self.tree.nodes[id].kind,
            NodeKind::Scalar { value, implicit, tag }
                if value == "<<" && (*implicit || tag == MERGE_TAG))
    }

    fn merge(&mut self, id: usize, map: &mut GoMap) -> Result<(), String> {
        const WANT_MAP: &str = "yaml: map merge requires map or sequence of maps as the value";
        let is_mapping = |tree: &Tree, id: usize| match &tree.nodes[id].kind {
            NodeKind::Mapping(_) => true,
            NodeKind::Alias { target, .. } => {
                matches!(tree.nodes[*target].kind, NodeKind::Mapping(_))
            }
            _ => false,
        };
        match &self.tree.nodes[id].kind {
            NodeKind::Mapping(_) | NodeKind::Alias { .. } => {
                if !is_mapping(self.tree, id) {
                    return Err(WANT_MAP.to_string());
                }
                self.unmarshal(id, Some(map))?;
            }
            NodeKind::Sequence(children) => {
                // Earlier maps take precedence: walk backwards.
                for &child in children.iter().rev() {
                    if !is_mapping(self.tree, child) {
                        return Err(WANT_MAP.to_string());
                    }
                    self.unmarshal(child, Some(map))?;
                }
            }
            NodeKind::Scalar { .. } => return Err(WANT_MAP.to_string()),
        }
        Ok(())
    }
}

/// go-yaml's `decoder.scalar` into `interface{}`.
pub(super) fn scalar(value: &str, implicit: bool, tag: &str) -> Result<GoVal, String> {
    if tag.is_empty() && !implicit {
        return Ok(GoVal::Str(value.to_string()));
    }
    let (rtag, resolved) = resolve(tag, value)?;
    if rtag == BINARY_TAG {
        let cleaned: String = value.chars().filter(|c| !c.is_whitespace()).collect();
        use base64::Engine as _;
        return match base64::engine::general_purpose::STANDARD.decode(cleaned.as_bytes()) {
            Ok(bytes) => Ok(GoVal::Str(String::from_utf8_lossy(&bytes).into_owned())),
            Err(_) => Err("yaml: !!binary value contains invalid base64 data".to_string()),
        };
    }
    Ok(match resolved {
        Resolved::Null => GoVal::Null,
        Resolved::Bool(b) => GoVal::Bool(b),
        Resolved::Int(i) => GoVal::Int(i),
        Resolved::Uint(u) => GoVal::Uint(u),
        Resolved::Float(f) => GoVal::Float(f),
        Resolved::Big(s) => GoVal::Big(s),
        // Timestamps stay strings in interface{} (go-yaml v2 compatibility).
        Resolved::Str | Resolved::Timestamp | Resolved::Merge => GoVal::Str(value.to_string()),
    })
}
