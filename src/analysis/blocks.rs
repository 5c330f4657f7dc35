//! Block transfers composed once from the statements' elementary effects,
//! and the statement-level sweeps that recover per-point values from
//! block-level solutions. Both apply the same elementary equations as the
//! Datalog clauses (`dep/compose`, `tbr/use`, ...), in sequence.

use super::facts::{Effect, Point};
use super::locs::Zone;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;

pub type Set = BTreeSet<Zone>;

/// Which elementary relation of an effect.
#[derive(Clone, Copy, Debug)]
pub enum Rel {
    Dep,
    DiffDep,
}

pub fn pairs(e: &Effect, rel: Rel) -> &[(Zone, Zone)] {
    match rel {
        Rel::Dep => &e.dep,
        Rel::DiffDep => &e.diff_dep,
    }
}

/// The composed relation of a sequence of points: `(u, w)` when zone `w`
/// at the end depends on zone `u` at the start, for every zone the
/// sequence may write; and the zones it may write and certainly kills.
pub struct Composed {
    pub through: Vec<(Zone, Zone)>,
    pub written: Vec<Zone>,
    pub killed: Vec<Zone>,
}

/// `dep/compose` over a block.
pub fn compose(points: &[Point<'_>], rel: Rel) -> Composed {
    let mut r: HashMap<Zone, Set> = HashMap::default();
    let mut killed = Set::new();
    for p in points {
        let mut updates: HashMap<Zone, Set> = HashMap::default();
        for &(u, w) in pairs(&p.effect, rel) {
            let from = match r.get(&u) {
                Some(s) => s.clone(),
                None => Set::from([u]),
            };
            updates.entry(w).or_default().extend(from);
        }
        for &w in &p.effect.writes {
            // A written zone with no pair (an integer written, in Diff-dep)
            // depends on nothing before.
            r.insert(w, updates.remove(&w).unwrap_or_default());
        }
        killed.extend(p.effect.kills.iter().copied());
    }
    let mut through = Vec::new();
    let mut written: Vec<Zone> = r.keys().copied().collect();
    written.sort_unstable();
    for &w in &written {
        for &u in &r[&w] {
            through.push((u, w));
        }
    }
    Composed {
        through,
        written,
        killed: killed.into_iter().collect(),
    }
}

/// Forward through one point: `S ⊗ Rel(I)` (`activity/varied-assign`).
pub fn forward(s: &Set, e: &Effect, rel: Rel) -> Set {
    let mut out: Set = s
        .iter()
        .copied()
        .filter(|z| e.writes.binary_search(z).is_err())
        .collect();
    for &(u, w) in pairs(e, rel) {
        if s.contains(&u) {
            out.insert(w);
        }
    }
    out
}

/// Backward through one point: `Rel(I) ⊗ S` (`activity/useful-assign`).
pub fn backward(s: &Set, e: &Effect, rel: Rel) -> Set {
    let mut out: Set = s
        .iter()
        .copied()
        .filter(|z| e.writes.binary_search(z).is_err())
        .collect();
    for &(u, w) in pairs(e, rel) {
        if s.contains(&w) {
            out.insert(u);
        }
    }
    out
}

/// A gen/kill transfer composed over a sequence: `Out = (In \ kill) ∪ gen`.
#[derive(Default, Clone)]
pub struct GenKill {
    pub gen_set: Set,
    pub kill: Set,
}

impl GenKill {
    /// Appends a step `S ↦ (S ∪ add) \ remove` after the sequence so far.
    pub fn then(&mut self, add: &Set, remove: &Set) {
        self.gen_set.extend(add.iter().copied());
        for z in remove {
            self.gen_set.remove(z);
        }
        self.kill.extend(remove.iter().copied());
    }
}

/// One step `S ↦ (S ∪ add) \ remove`.
pub fn step(s: &Set, add: &Set, remove: &Set) -> Set {
    s.union(add)
        .copied()
        .filter(|z| !remove.contains(z))
        .collect()
}
