//! Patch engines, pure functions over JSON trees: JSON merge patch
//! (RFC 7396), JSON patch (RFC 6902), and strategic merge patch.

pub mod json_patch;
pub mod merge;
pub mod strategic;
