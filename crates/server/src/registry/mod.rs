//! Resources as data: the resource table and lookups over it.

pub mod index;
pub mod resource;
pub mod resources_table;

pub use index::{GroupInfo, Registry};
pub use resource::{NameRule, ResourceDef, SubresourceDef};
pub use resources_table::RESOURCES;
