//! Python bindings (PyO3) of the grantmatch engine.
use pyo3::prelude::*;

#[pymodule]
#[pyo3(name = "_grantmatch")]
fn grantmatch(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
