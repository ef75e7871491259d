//! Criterion benches of the grantmatch engine live in `benches/`.
