//! arbor-trace: context operation traces.
