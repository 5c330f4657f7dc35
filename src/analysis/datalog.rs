//! The data-flow equations of §5.2 as crepe programs, one per analysis,
//! over the basic blocks of one procedure. Every clause cites the spec ID
//! it implements (`spec/analyses/`).
//!
//! Block-level inputs are the block transfers composed once from the
//! statements' elementary effects (see `blocks.rs`): `Through(b, u, w)` is
//! the composed (diff-)dependency of zone `w` at the block's end on zone
//! `u` at its start, for every zone `w` the block may write
//! (`Written(b, w)`); zones it does not write pass through unchanged.
//! `Gen`/`Kill` are composed gen/kill sets.

/// Block index.
pub type B = u32;
/// Zone index.
pub type Z = u32;
/// Statement (analysis point) index, or control statement id.
pub type S = u32;

/// Dependency and diff-dependency of a procedure (the same equations over
/// different elementary relations).
pub mod dependency {
    use super::{B, Z};
    use crepe::crepe;

    crepe! {
        @input
        pub struct Edge(pub B, pub B);
        @input
        pub struct Entry(pub B);
        @input
        pub struct Through(pub B, pub Z, pub Z);
        @input
        pub struct Written(pub B, pub Z);
        @input
        pub struct Killed(pub B, pub Z);
        @input
        pub struct Mentioned(pub Z);

        @output
        pub struct DepIn(pub B, pub Z, pub Z);
        @output
        pub struct KeptIn(pub B, pub Z);
        struct DepOut(B, Z, Z);
        struct KeptOut(B, Z);

        // `dep/entry`: Dep⁺(I0) = Id, kept as "zone z still holds its entry value"
        KeptIn(b, z) <- Entry(b), Mentioned(z);
        // `dep/untouched`: a zone the block does not certainly overwrite may keep it
        KeptOut(b, z) <- KeptIn(b, z), !Killed(b, z);
        // `dep/compose`: Dep⁺ = Dep⁻ ⊗ Dep(block)
        DepOut(b, u, w) <- DepIn(b, u, v), Through(b, v, w);
        DepOut(b, u, w) <- KeptIn(b, u), Through(b, u, w);
        // `dep/untouched`
        DepOut(b, u, w) <- DepIn(b, u, w), !Written(b, w);
        // `dep/merge`
        DepIn(c, u, w) <- Edge(b, c), DepOut(b, u, w);
        KeptIn(c, z) <- Edge(b, c), KeptOut(b, z);
    }

    pub use self::Crepe as Program;
}

/// Varied, forward.
pub mod varied {
    use super::{B, Z};
    use crepe::crepe;

    crepe! {
        @input
        pub struct Edge(pub B, pub B);
        @input
        pub struct Seed(pub B, pub Z);
        @input
        pub struct Through(pub B, pub Z, pub Z);
        @input
        pub struct Written(pub B, pub Z);

        @output
        pub struct VariedIn(pub B, pub Z);
        struct VariedOut(B, Z);

        // `activity/varied-entry`
        VariedIn(b, z) <- Seed(b, z);
        // `activity/varied-assign`: Varied⁺ = Varied⁻ ⊗ Diff-dep
        VariedOut(b, w) <- VariedIn(b, u), Through(b, u, w);
        // `activity/varied-untouched`
        VariedOut(b, z) <- VariedIn(b, z), !Written(b, z);
        // `activity/varied-merge`
        VariedIn(c, z) <- Edge(b, c), VariedOut(b, z);
    }

    pub use self::Crepe as Program;
}

/// Useful, backward.
pub mod useful {
    use super::{B, Z};
    use crepe::crepe;

    crepe! {
        @input
        pub struct Edge(pub B, pub B);
        @input
        pub struct Seed(pub B, pub Z);
        @input
        pub struct Through(pub B, pub Z, pub Z);
        @input
        pub struct Written(pub B, pub Z);

        @output
        pub struct UsefulOut(pub B, pub Z);
        struct UsefulIn(B, Z);

        // `activity/useful-exit`
        UsefulOut(b, z) <- Seed(b, z);
        // `activity/useful-assign`: Useful⁻ = Diff-dep ⊗ Useful⁺
        UsefulIn(b, u) <- UsefulOut(b, w), Through(b, u, w);
        // `activity/useful-untouched`
        UsefulIn(b, z) <- UsefulOut(b, z), !Written(b, z);
        // `activity/useful-split`
        UsefulOut(b, z) <- Edge(b, c), UsefulIn(c, z);
    }

    pub use self::Crepe as Program;
}

/// Diff-liveness, backward, with control.
pub mod diff_live {
    use super::{B, S, Z};
    use crepe::crepe;

    crepe! {
        @input
        pub struct Edge(pub B, pub B);
        @input
        pub struct Seed(pub B, pub Z);
        @input
        pub struct Through(pub B, pub Z, pub Z);
        @input
        pub struct Written(pub B, pub Z);
        @input
        pub struct UseGen(pub B, pub Z);
        @input
        pub struct StaticLive(pub S);
        @input
        pub struct LiveIf(pub S, pub B, pub Z);
        @input
        pub struct ActiveStmt(pub S);
        @input
        pub struct Encloses(pub S, pub S);
        @input
        pub struct HasJump(pub S);
        @input
        pub struct TestOf(pub B, pub S);
        @input
        pub struct TestRead(pub B, pub Z);
        @input
        pub struct TestWrite(pub B, pub Z);
        @input
        pub struct TestDep(pub B, pub Z, pub Z);

        @output
        pub struct LiveEnd(pub B, pub Z);
        @output
        pub struct StmtLive(pub S);
        @output
        pub struct ControlLive(pub S);
        struct LiveIn(B, Z);
        struct AnyLive();

        // `diff-live/exit`
        LiveEnd(b, z) <- Seed(b, z);
        // `diff-live/split`, then back over the block's test (`diff-live/dep`)
        LiveEnd(b, z) <- Edge(b, c), LiveIn(c, z), !TestWrite(b, z);
        LiveEnd(b, u) <- Edge(b, c), LiveIn(c, w), TestDep(b, u, w);
        // `diff-live/control-use`: a live control's test reads are diff-live
        LiveEnd(b, z) <- TestOf(b, c), ControlLive(c), TestRead(b, z);
        // `diff-live/dep`: Dep ⊗ Diff-live⁺
        LiveIn(b, u) <- LiveEnd(b, w), Through(b, u, w);
        // `diff-live/untouched`
        LiveIn(b, z) <- LiveEnd(b, z), !Written(b, z);
        // `diff-live/use`: use(I') composed back to the block entry
        LiveIn(b, u) <- UseGen(b, u);
        // `diff-live/stmt`: out(I) ∩ Diff-live⁺(I) ≠ ∅
        StmtLive(s) <- StaticLive(s);
        StmtLive(s) <- LiveIf(s, b, w), LiveEnd(b, w);
        // `diff-live/control`: enclosing a diff-live or active statement
        ControlLive(c) <- StmtLive(s), Encloses(c, s);
        ControlLive(c) <- ActiveStmt(s), Encloses(c, s);
        // `diff-live/control`: a jump decides which live statements run
        AnyLive() <- StmtLive(_);
        AnyLive() <- ActiveStmt(_);
        ControlLive(c) <- HasJump(c), AnyLive();
    }

    pub use self::Crepe as Program;
}

/// Gen/kill propagation, forward (TBR) or backward (adjoint-out,
/// upward-exposed reads): `Out = (In \ Kill) ∪ Gen`, merged over
/// neighbours. The caller orients the edges.
pub mod gen_kill {
    use super::{B, Z};
    use crepe::crepe;

    crepe! {
        @input
        pub struct Edge(pub B, pub B);
        @input
        pub struct Seed(pub B, pub Z);
        @input
        pub struct Adds(pub B, pub Z);
        @input
        pub struct Removes(pub B, pub Z);

        @output
        pub struct Reach(pub B, pub Z);
        struct Leave(B, Z);

        // `tbr/entry`, `adj-out/exit`: the seed at the start of the propagation
        Reach(b, z) <- Seed(b, z);
        // `tbr/kill`, `adj-out/write`: what the block certainly removes
        Leave(b, z) <- Reach(b, z), !Removes(b, z);
        // `tbr/use`, `adj-out/write`: what the block adds
        Leave(b, z) <- Adds(b, z);
        // `tbr/merge`, `adj-out/split`
        Reach(c, z) <- Edge(b, c), Leave(b, z);
    }

    pub use self::Crepe as Program;
}

/// Reach-out: zones maybe read before being overwritten from a point on
/// (backward), maybe written from a point on (backward), maybe
/// uninitialised (forward).
pub mod inout {
    use super::{B, Z};
    use crepe::crepe;

    crepe! {
        @input
        pub struct Edge(pub B, pub B);
        @input
        pub struct Entry(pub B);
        @input
        pub struct UpGen(pub B, pub Z);
        @input
        pub struct Killed(pub B, pub Z);
        @input
        pub struct Written(pub B, pub Z);
        @input
        pub struct Local(pub Z);

        @output
        pub struct UpIn(pub B, pub Z);
        @output
        pub struct WriteAfter(pub B, pub Z);
        @output
        pub struct UninitIn(pub B, pub Z);
        struct UpOut(B, Z);
        struct WriteOut(B, Z);
        struct UninitOut(B, Z);

        // `inout/upward-read`
        UpIn(b, z) <- UpGen(b, z);
        UpIn(b, z) <- UpOut(b, z), !Killed(b, z);
        UpOut(b, z) <- Edge(b, c), UpIn(c, z);
        // `inout/may-write`
        WriteAfter(b, z) <- Written(b, z);
        WriteAfter(b, z) <- WriteOut(b, z);
        WriteOut(b, z) <- Edge(b, c), WriteAfter(c, z);
        // `inout/uninit`: any write initialises
        UninitIn(b, z) <- Entry(b), Local(z);
        UninitOut(b, z) <- UninitIn(b, z), !Written(b, z);
        UninitIn(c, z) <- Edge(b, c), UninitOut(b, z);
    }

    pub use self::Crepe as Program;
}
