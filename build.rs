//! Generates the C parser from `grammar/c.lalrpop` into `$OUT_DIR/c.rs`.

fn main() {
    println!("cargo:rerun-if-changed=grammar");
    println!("cargo:rerun-if-changed=build.rs");
    // With `set_in_dir`, the output path mirrors the path relative to
    // `grammar/`, so the parser lands in `$OUT_DIR/c.rs`.
    if let Err(e) = lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .emit_rerun_directives(true)
        .process()
    {
        eprintln!("lalrpop failed: {e}");
        std::process::exit(1);
    }
}
