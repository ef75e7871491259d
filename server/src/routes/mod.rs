//! Handlers, one module per resource family.

pub mod grants;
pub mod providers;
pub mod reference;
