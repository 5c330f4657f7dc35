//! The S-expression form of the IL (`parse --emit il`), pinned for a dozen
//! fixtures that together cover every IL node kind: this is the text rule
//! authors and auditors read, so a change to it must show in review.

use aioli::front::{FrontOptions, load};
use std::path::Path;

const PINNED: &[&str] = &[
    "c_paper_test.c",
    "comments_everywhere.c",
    "geom_triangle.c",
    "globals_energy.c",
    "gmm_logsumexp.c",
    "alias_buffer.c",
    "operators_all.c",
    "pointer_walk.c",
    "recursion_chebyshev.c",
    "series_heap.c",
    "switch_quadrature.c",
    "lstm_sequence.c",
    "pragma_once_pendulum.c",
];

#[test]
fn il_of_pinned_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/front");
    for name in PINNED {
        let path = dir.join(name);
        let options = FrontOptions {
            include_dirs: vec![dir.clone(), dir.join("include")],
            defines: Vec::new(),
        };
        let loaded = load(&path, &options)
            .unwrap_or_else(|(s, d)| panic!("{}", aioli::front::diag::render(&s, &d)));
        let il = aioli::back::print_il(&loaded.program, &loaded.sources);
        insta::assert_snapshot!(name.trim_end_matches(".c"), il);
    }
}
