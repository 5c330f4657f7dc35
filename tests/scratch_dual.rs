use aioli::analysis::{Mode, analyze_for, parse_head};
use aioli::check::domain::Domain;
use aioli::check::driver::compute_inputs;
use aioli::check::tangent_interp::{DualOptions, tangent_vs_dual_with};
use aioli::front::{FrontOptions, load};
use aioli::transform::tangent::{TangentOptions, load_rules, tangent_program};

#[test]
fn scratch() {
    let Ok(file) = std::env::var("SCRATCH_FILE") else { return };
    if let Ok(seed) = std::env::var("SCRATCH_SEED") {
        let n: usize = std::env::var("SCRATCH_N").unwrap().parse().unwrap();
        let mut config = aioli::cgen::GenConfig::smooth();
        config.n = n;
        config.features.floats = false;
        if std::env::var("SCRATCH_NONSMOOTH").is_ok() { config.features.discontinuous = true; }
        let g = aioli::cgen::random_program(seed.parse().unwrap(), &config);
        std::fs::write(&file, &g.source).unwrap();
    }
    let dom = std::env::var("SCRATCH_DOMAIN").unwrap();
    let point: u64 = std::env::var("SCRATCH_POINT").unwrap().parse().unwrap();
    let loaded = load(std::path::Path::new(&file), &FrontOptions::default()).unwrap_or_else(|(s, d)| panic!("{}", aioli::front::diag::render(&s, &d)));
    let program = &loaded.program;
    let head = parse_head(program, "head(y)/(x a)").unwrap();
    let opts = TangentOptions::default();
    let rules = load_rules(&opts).unwrap();
    let a = analyze_for(program, std::slice::from_ref(&head), Mode::Tangent);
    let out = tangent_program(&a, &rules, &opts).unwrap();
    let domain = Domain::parse(&dom).unwrap();
    let inputs = compute_inputs(program, "head", &domain, point).unwrap();
    let cmp = tangent_vs_dual_with(program, &out, &head, &inputs, point ^ 0xD1, &DualOptions { fuel: 1_000_000 }).unwrap_or_else(|e| panic!("{e}"));
    let mut worst: f64 = 0.0;
    for (_, e) in cmp.elements() {
        println!("{} dual {:e} tangent {:e} err {:e}", e.label, e.dual, e.tangent, e.error);
        worst = worst.max(e.error);
    }
    println!("WORST {worst:e}");
    std::fs::write("/tmp/scratch_out.c", aioli::back::print_c(&out, &loaded.sources)).unwrap();
}
