//! Pointer destinations, flow-sensitive, one procedure at a time
//! (`spec/analyses/pointers.md`).
//!
//! The graph crepe iterates over has one node per basic-block entry and two
//! per statement that stores a pointer (the store, and the point right
//! after it); statements that do not touch pointers share their block's
//! node, so the chain follows blocks and pointer stores, not statements.
//! A pointer-valued expression is a value id with the node whose
//! destinations it reads; a reference through a pointer is resolved from
//! the destinations of its value.

use super::locs::{Place, Zone};

/// Index of a pointer-valued expression.
pub type Val = u32;
/// Index of a node of the pointer graph.
pub type Node = u32;
/// Index of an interned field path.
pub type PathId = u32;

mod datalog {
    use super::{Node, PathId, Val};
    use crate::analysis::locs::{Place, Zone};
    use crepe::crepe;

    crepe! {
        @input
        pub struct Flow(pub Node, pub Node);
        @input
        pub struct EntryPts(pub Node, pub Zone, pub Place);
        @input
        pub struct ValAt(pub Val, pub Node);
        @input
        pub struct ValStatic(pub Val, pub Place);
        @input
        pub struct ValLoad(pub Val, pub Zone);
        @input
        pub struct ValLoadThrough(pub Val, pub Val, pub PathId);
        @input
        pub struct ValExtend(pub Val, pub Val, pub PathId);
        @input
        pub struct ValCopy(pub Val, pub Val);
        @input
        pub struct StoreDirect(pub Node, pub Zone, pub Val);
        @input
        pub struct Strong(pub Node, pub Zone);
        @input
        pub struct StoreThrough(pub Node, pub Val, pub PathId, pub Val);
        @input
        pub struct PlaceZone(pub Place, pub PathId, pub Zone);
        @input
        pub struct PlaceExtend(pub Place, pub PathId, pub Place);
        @input
        pub struct Constant(pub Zone, pub Place);

        @output
        pub struct PtsIn(pub Node, pub Zone, pub Place);
        @output
        pub struct ValPlace(pub Val, pub Place);
        struct PtsOut(Node, Zone, Place);

        // `ptr/entry`
        PtsIn(n, z, p) <- EntryPts(n, z, p);
        // `ptr/merge`
        PtsIn(m, z, p) <- Flow(n, m), PtsOut(n, z, p);
        // `ptr/strong`: a direct store replaces, other nodes pass through
        PtsOut(n, z, p) <- PtsIn(n, z, p), !Strong(n, z);
        PtsOut(n, z, p) <- StoreDirect(n, z, v), ValPlace(v, p);
        // `ptr/weak`: a store through a pointer adds destinations
        PtsOut(n, z, p) <- StoreThrough(n, a, path, v), ValPlace(a, pa), PlaceZone(pa, path, z), ValPlace(v, p);

        // `ptr/address`, `ptr/null`, `ptr/alloc`
        ValPlace(v, p) <- ValStatic(v, p);
        // `ptr/copy`
        ValPlace(v, p) <- ValCopy(v, w), ValPlace(w, p);
        ValPlace(v, p) <- ValExtend(v, w, path), ValPlace(w, q), PlaceExtend(q, path, p);
        // `ptr/load`
        ValPlace(v, p) <- ValLoad(v, z), ValAt(v, n), PtsIn(n, z, p);
        ValPlace(v, p) <- ValLoadThrough(v, w, path), ValPlace(w, q), PlaceZone(q, path, z), ValAt(v, n), PtsIn(n, z, p);
        // ptr/entry: a pointer the procedure never stores keeps its entry
        // destinations everywhere
        ValPlace(v, p) <- ValLoad(v, z), Constant(z, p);
        ValPlace(v, p) <- ValLoadThrough(v, w, path), ValPlace(w, q), PlaceZone(q, path, z), Constant(z, p);
    }

    pub use self::Crepe as Program;
}

pub use datalog::*;

/// The facts of one procedure's pointer graph, built by the effects pass.
#[derive(Default, Debug, Clone)]
pub struct PointerFacts {
    pub nodes: u32,
    pub flow: Vec<(Node, Node)>,
    pub entry: Vec<(Node, Zone, Place)>,
    pub val_at: Vec<(Val, Node)>,
    pub val_static: Vec<(Val, Place)>,
    pub val_load: Vec<(Val, Zone)>,
    pub val_load_through: Vec<(Val, Val, PathId)>,
    pub val_extend: Vec<(Val, Val, PathId)>,
    pub val_copy: Vec<(Val, Val)>,
    pub store_direct: Vec<(Node, Zone, Val)>,
    pub strong: Vec<(Node, Zone)>,
    pub store_through: Vec<(Node, Val, PathId, Val)>,
    pub vals: u32,
    /// Entry destinations of pointers never stored in the procedure: the
    /// same at every node, so they are not propagated.
    pub constant: Vec<(Zone, Place)>,
}

/// The solution: destinations of every pointer zone at every node, and the
/// places of every value.
#[derive(Default, Debug, Clone)]
pub struct PointerSolution {
    pub pts_in: Vec<Vec<(Zone, Place)>>,
    pub val_places: Vec<Vec<Place>>,
}

/// Runs the pointer program. `place_zone` and `place_extend` give, for
/// every place and path id, the zones it designates and the narrowed place.
pub fn solve(
    facts: &PointerFacts,
    place_zone: &[(Place, PathId, Zone)],
    place_extend: &[(Place, PathId, Place)],
) -> PointerSolution {
    let mut rt = Program::new();
    rt.extend(facts.flow.iter().map(|&(a, b)| Flow(a, b)));
    rt.extend(facts.entry.iter().map(|&(n, z, p)| EntryPts(n, z, p)));
    rt.extend(facts.val_at.iter().map(|&(v, n)| ValAt(v, n)));
    rt.extend(facts.val_static.iter().map(|&(v, p)| ValStatic(v, p)));
    rt.extend(facts.val_load.iter().map(|&(v, z)| ValLoad(v, z)));
    rt.extend(
        facts
            .val_load_through
            .iter()
            .map(|&(v, w, p)| ValLoadThrough(v, w, p)),
    );
    rt.extend(facts.val_extend.iter().map(|&(v, w, p)| ValExtend(v, w, p)));
    rt.extend(facts.val_copy.iter().map(|&(v, w)| ValCopy(v, w)));
    rt.extend(
        facts
            .store_direct
            .iter()
            .map(|&(n, z, v)| StoreDirect(n, z, v)),
    );
    rt.extend(facts.strong.iter().map(|&(n, z)| Strong(n, z)));
    rt.extend(
        facts
            .store_through
            .iter()
            .map(|&(n, a, p, v)| StoreThrough(n, a, p, v)),
    );
    rt.extend(place_zone.iter().map(|&(p, q, z)| PlaceZone(p, q, z)));
    rt.extend(facts.constant.iter().map(|&(z, p)| Constant(z, p)));
    rt.extend(place_extend.iter().map(|&(p, q, r)| PlaceExtend(p, q, r)));
    let (pts, vals) = rt.run_with_hasher::<rustc_hash::FxBuildHasher>();
    let mut sol = PointerSolution {
        pts_in: vec![Vec::new(); facts.nodes as usize],
        val_places: vec![Vec::new(); facts.vals as usize],
    };
    for PtsIn(n, z, p) in pts {
        sol.pts_in[n as usize].push((z, p));
    }
    for ValPlace(v, p) in vals {
        sol.val_places[v as usize].push(p);
    }
    for v in &mut sol.pts_in {
        v.sort_unstable();
    }
    for v in &mut sol.val_places {
        v.sort_unstable();
        v.dedup();
    }
    sol
}
