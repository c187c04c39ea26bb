//! Resources as data: the resource table and lookups over it.

pub mod builtin;
pub mod index;
pub mod resource;
pub mod resources_table;
pub mod rest_facts;
#[cfg(test)]
mod table_equivalence_tests;

pub use builtin::builtin_resources;
pub use index::{GroupInfo, Registry};
pub use resource::{NameRule, ResourceDef, SubresourceDef};
pub use resources_table::RESOURCES;
