//! Python bindings (PyO3) of the grantmatch engine.
