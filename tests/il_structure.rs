//! The derived structures of the IL: the call graph (`il/callgraph`) and
//! zones (`il/zones`), on small programs written for the purpose.

use aioli::front::{FrontOptions, load};
use aioli::il::zones::{ZoneOwner, Zones};
use aioli::il::{Program, visit_stmts};

fn program(src: &str) -> Program {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.c");
    std::fs::write(&path, src).unwrap();
    match load(&path, &FrontOptions::default()) {
        Ok(l) => l.program,
        Err((s, d)) => panic!("{}", aioli::front::diag::render(&s, &d)),
    }
}

const SRC: &str = r#"
#include <stdlib.h>
typedef struct { double x; double y; } Vec2;
typedef struct { Vec2 pos; double mass; int id; } Body;
double g_energy;
static double sq(double v) { return v * v; }
double fact(int n) { return n <= 1 ? 1.0 : n * fact(n - 1); }
double energy(int n, const Body *b, Body q[2], double *w)
{
    Body pair[2];
    double e = 0.0;
    double *tmp = (double *)malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        tmp[i] = sq(b[i].pos.x) + sq(b[i].pos.y);
        e += b[i].mass * tmp[i] * fact(3);
    }
    pair[0].pos.x = e;
    q[1] = pair[0];
    w[0] = e;
    g_energy = e;
    free(tmp);
    return e;
}
"#;

#[test]
fn call_graph_lists_callees_in_order_with_recursion_as_a_cycle() {
    let p = program(SRC);
    let graph = p.call_graph();
    let name = |id: aioli::il::ProcId| p.proc(id).name.clone();
    let fact = p.proc_by_name("fact").unwrap();
    let energy = p.proc_by_name("energy").unwrap();
    let sq = p.proc_by_name("sq").unwrap();
    assert_eq!(
        graph[energy.index()]
            .iter()
            .map(|&c| name(c))
            .collect::<Vec<_>>(),
        ["sq", "fact"]
    );
    assert_eq!(graph[fact.index()], vec![fact], "recursion is a cycle");
    assert!(graph[sq.index()].is_empty());
}

#[test]
fn zones_split_structs_into_leaf_fields_and_give_each_allocation_one() {
    let p = program(SRC);
    let zones = Zones::of(&p);
    let names = |var: &str| -> Vec<String> {
        let sym = p
            .symbols
            .iter()
            .position(|s| s.name == var)
            .map(|i| aioli::il::SymId(i as u32))
            .unwrap();
        zones
            .of_sym(sym)
            .map(|z| zones.zone(z).name.clone())
            .collect()
    };
    // A struct pointer is one zone (what it points to is the pointer
    // analysis' business), and so is a parameter declared as an array,
    // which C adjusts to a pointer; an array of structs has one zone per
    // leaf field.
    assert_eq!(names("b"), ["b"]);
    assert_eq!(names("q"), ["q"]);
    assert_eq!(
        names("pair"),
        ["pair.pos.x", "pair.pos.y", "pair.mass", "pair.id"]
    );
    assert_eq!(names("g_energy"), ["g_energy"]);
    assert_eq!(names("tmp"), ["tmp"]);
    let heap: Vec<_> = zones
        .zones
        .iter()
        .filter(|z| matches!(z.owner, ZoneOwner::Heap { .. }))
        .collect();
    assert_eq!(heap.len(), 1, "one zone per allocation site");

    // A reference without pointers maps to its zones; through a pointer it
    // needs the pointer analysis.
    let energy = p.proc_by_name("energy").unwrap();
    let body = p.proc(energy).body.as_ref().unwrap();
    let mut refs = Vec::new();
    visit_stmts(&body.stmts, &mut |s| {
        if let aioli::il::StmtKind::Assign { lhs, .. } = &s.kind {
            refs.push(zones.of_ref(&p, lhs).map(|zs| {
                zs.iter()
                    .map(|z| zones.zone(*z).name.clone())
                    .collect::<Vec<_>>()
            }));
        }
    });
    assert!(refs.contains(&Some(vec!["pair.pos.x".to_string()])));
    assert!(refs.contains(&Some(vec!["g_energy".to_string()])));
    assert!(refs.contains(&None), "w[0] goes through a pointer");
}
