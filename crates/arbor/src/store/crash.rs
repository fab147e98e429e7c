//! Named points of the commit and collection paths where tests make the process panic, to
//! check that a crash there leaves a store that reopens at its last durable commit
//! (docs/FORMAT.md §13 names the same steps).

/// A step of a commit, a control file rewrite or a garbage collection after which a test
/// may crash the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CrashPoint {
    /// A commit, before any of its objects is written (FORMAT.md §13.1 C2).
    CommitBeforeObjects,
    /// A commit whose records are written, not yet synced (C4).
    CommitAfterWrite,
    /// A commit synced (or its sync started, under `Pipelined`), not yet indexed (C5).
    CommitAfterSync,
    /// A control file rewrite, after the index sync (C8).
    ControlAfterIndexSync,
    /// A control file rewrite, after the new control file is in place (C9).
    ControlAfterWrite,
    /// A collection, after its prefix file is written (§15).
    GcAfterPrefix,
    /// A collection, after the control file naming the new prefix.
    GcAfterControl,
    /// A collection, after space is given back.
    GcAfterRelease,
}

impl CrashPoint {
    /// The points of the commit path (with its control file rewrite), in order.
    pub const COMMIT: [CrashPoint; 5] = [
        CrashPoint::CommitBeforeObjects,
        CrashPoint::CommitAfterWrite,
        CrashPoint::CommitAfterSync,
        CrashPoint::ControlAfterIndexSync,
        CrashPoint::ControlAfterWrite,
    ];

    /// The points of a garbage collection, in order.
    pub const GC: [CrashPoint; 3] = [CrashPoint::GcAfterPrefix, CrashPoint::GcAfterControl, CrashPoint::GcAfterRelease];

    /// The point's name, as panics and test reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            CrashPoint::CommitBeforeObjects => "commit:before-objects",
            CrashPoint::CommitAfterWrite => "commit:after-write",
            CrashPoint::CommitAfterSync => "commit:after-sync",
            CrashPoint::ControlAfterIndexSync => "control:after-index-sync",
            CrashPoint::ControlAfterWrite => "control:after-write",
            CrashPoint::GcAfterPrefix => "gc:after-prefix",
            CrashPoint::GcAfterControl => "gc:after-control",
            CrashPoint::GcAfterRelease => "gc:after-release",
        }
    }
}

impl std::fmt::Display for CrashPoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Panics if `point` is armed on this thread.
#[cfg(any(test, feature = "crash-points"))]
pub(crate) fn crash_point(point: CrashPoint) {
    if ARMED.get() == Some(point) {
        panic!("crash point {point}");
    }
}

/// Does nothing: crash points exist only in test builds (feature `crash-points`).
#[cfg(not(any(test, feature = "crash-points")))]
#[inline(always)]
pub(crate) fn crash_point(_point: CrashPoint) {}

#[cfg(any(test, feature = "crash-points"))]
thread_local! {
    static ARMED: std::cell::Cell<Option<CrashPoint>> = const { std::cell::Cell::new(None) };
}

/// Arms a crash point on this thread, or disarms with `None` (tests only).
#[cfg(any(test, feature = "crash-points"))]
pub fn arm_crash_point(point: Option<CrashPoint>) {
    ARMED.set(point);
}
