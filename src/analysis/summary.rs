//! What a procedure does, seen from its callers (`call/summary`): the
//! interface zones it may read, may write and must write, its dependencies
//! and differentiable dependencies between entry and exit values, and its
//! pointer effect (`ptr/call`).

use super::locs::{Place, Zone};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Interface and parameter zones whose entry value may be read
    /// (`inout/upward-read`).
    pub reads: Vec<Zone>,
    /// Interface zones maybe written (`inout/may-write`).
    pub writes: Vec<Zone>,
    /// Interface zones written on every path (`inout/must-write`).
    pub kills: Vec<Zone>,
    /// `dep/summary`: (entry zone, exit zone) for every written exit zone;
    /// an unwritten zone keeps its value (implicit identity).
    pub dep: Vec<(Zone, Zone)>,
    /// `diff-dep/equations`, same convention.
    pub diff_dep: Vec<(Zone, Zone)>,
    /// Exit destinations of the interface pointer zones it may write.
    pub ptr_exit: Vec<(Zone, Place)>,
}

impl Summary {
    pub fn normalize(&mut self) {
        for v in [&mut self.reads, &mut self.writes, &mut self.kills] {
            v.sort_unstable();
            v.dedup();
        }
        for v in [&mut self.dep, &mut self.diff_dep] {
            v.sort_unstable();
            v.dedup();
        }
        self.ptr_exit.sort_unstable();
        self.ptr_exit.dedup();
    }
}
