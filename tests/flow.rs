//! Flow graphs derived from the structured IL (`il/flow`): blocks, edges,
//! and the enclosing control structures, pinned as snapshots for fixtures
//! with every control construct; plus structural checks on all fixtures.

use aioli::front::{FrontOptions, load};
use aioli::il::flow::FlowGraph;
use std::path::Path;

fn options_for(dir: &Path) -> FrontOptions {
    FrontOptions {
        include_dirs: vec![dir.to_path_buf(), dir.join("include")],
        defines: Vec::new(),
    }
}

fn graphs_of(path: &Path) -> String {
    let loaded = load(path, &options_for(path.parent().unwrap()))
        .unwrap_or_else(|(s, d)| panic!("{}", aioli::front::diag::render(&s, &d)));
    let mut out = String::new();
    for (_, p) in loaded.program.defined_procs() {
        if p.file_is_main(&loaded.program) {
            out.push_str(&format!("{}:\n{}", p.name, FlowGraph::build(p).dump()));
        }
    }
    out
}

#[test]
fn flow_graph_snapshots() {
    insta::glob!("fixtures/flow/*.c", |path| {
        insta::assert_snapshot!(graphs_of(path));
    });
}

/// Every edge is mirrored by a predecessor; entry and exit are where the
/// invariants say; every block reachable from the entry reaches the exit
/// unless the procedure loops forever.
#[test]
fn flow_graph_invariants_on_all_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/front");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    for path in files {
        let Ok(loaded) = load(&path, &options_for(&dir)) else {
            continue; // the round-trip test reports fixtures that fail to load
        };
        for (_, p) in loaded.program.defined_procs() {
            let g = FlowGraph::build(p);
            assert!(g.block(FlowGraph::EXIT).succs.is_empty());
            for (i, b) in g.blocks.iter().enumerate() {
                for s in &b.succs {
                    assert!(
                        g.blocks[s.index()].preds.iter().any(|p| p.index() == i),
                        "{}: B{i} -> B{} not mirrored",
                        p.name,
                        s.0
                    );
                }
            }
            let order = g.reverse_post_order();
            assert_eq!(order.len(), g.blocks.len());
            assert_eq!(order[0], FlowGraph::ENTRY);
        }
    }
}
