//! Realistic scientific C for benchmarks: stencils, reductions, small linear
//! algebra, time stepping, struct-of-arrays updates, switch-based kernels,
//! and composite drivers that call earlier procedures, so that the call
//! graph is deep. The text compiles with `cc -std=c99 -Wall -Wextra -Werror`.

use super::rng::Rng;

/// The kinds of procedure already written, by signature, so that later
/// procedures can call them.
#[derive(Default)]
struct Catalog {
    /// `void f(int n, const double *u, double *v, double c)`.
    stencils: Vec<String>,
    /// `double f(int n, const double *u)`.
    reductions: Vec<String>,
    /// `double f(int n, const double *u, const double *v)`.
    dots: Vec<String>,
    /// `void f(int n, double alpha, const double *u, double *v)`.
    axpys: Vec<String>,
    /// `double f(int kind, double ul, double ur)`.
    fluxes: Vec<String>,
    /// `void f(int n, double *u, double *work, double dt)`.
    steppers: Vec<String>,
    /// `void f(Particles *p, double dt)`.
    particles: Vec<String>,
}

const TOPICS: &[&str] = &[
    "heat", "wave", "adv", "diff", "flow", "mass", "energy", "press", "visc", "grid", "cell",
    "phase",
];

/// A deterministic C file of about `lines` lines of realistic scientific
/// procedures.
pub fn realistic_c(lines: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out: Vec<String> = vec![
        "/* Benchmark input: scientific kernels and drivers (generated). */".into(),
        "#include <math.h>".into(),
        String::new(),
        "/* Particles stored as a structure of arrays. */".into(),
        "typedef struct {".into(),
        "    double *pos;".into(),
        "    double *vel;".into(),
        "    double *force;".into(),
        "    int count;".into(),
        "} Particles;".into(),
        String::new(),
        "/* Global physical constants. */".into(),
        "double g_viscosity = 0.01;".into(),
        "double g_gravity = 9.81;".into(),
        "int g_substeps = 2;".into(),
        String::new(),
    ];
    let mut cat = Catalog::default();
    let mut k = 0usize;
    while out.len() < lines {
        k += 1;
        let topic = *rng.pick(TOPICS);
        let name = format!("{topic}_{k}");
        // Early on, write the leaf kernels every driver needs.
        let choice = if k <= 7 {
            k - 1
        } else {
            rng.weighted(&[3, 2, 2, 2, 2, 3, 2, 2, 2, 4])
        };
        let text = match choice {
            0 => stencil(&mut rng, &name, &mut cat),
            1 => reduction(&mut rng, &name, &mut cat),
            2 => dot(&name, &mut cat),
            3 => axpy(&name, &mut cat),
            4 => flux(&mut rng, &name, &mut cat),
            5 => stepper(&mut rng, &name, &mut cat),
            6 => particles(&mut rng, &name, &mut cat),
            7 => laplace2d(&mut rng, &name),
            8 => tridiag(&name),
            _ => composite(&mut rng, &name, &mut cat),
        };
        out.extend(text.lines().map(str::to_string));
        out.push(String::new());
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

fn coef(rng: &mut Rng) -> &'static str {
    const COEFS: [&str; 7] = ["0.25", "0.5", "0.125", "0.1", "0.2", "0.05", "0.75"];
    COEFS[rng.below(COEFS.len() as u64) as usize]
}

fn stencil(rng: &mut Rng, name: &str, cat: &mut Catalog) -> String {
    let c1 = coef(rng);
    cat.stencils.push(name.to_string());
    let body = match rng.below(3) {
        0 => "        v[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1]);".to_string(),
        1 => format!(
            "        /* upwind difference, then a little smoothing */\n        \
             double grad = u[i] - u[i - 1];\n        \
             v[i] = u[i] - c * grad + {c1} * (u[i + 1] - 2.0 * u[i] + u[i - 1]);"
        ),
        _ => format!(
            "        double left = 0.5 * (u[i - 1] + u[i]);\n        \
             double right = 0.5 * (u[i] + u[i + 1]);\n        \
             v[i] = u[i] - c * (right * right - left * left) * {c1};"
        ),
    };
    format!(
        "/* Explicit three-point stencil: one step of {name}. */\n\
         void {name}(int n, const double *u, double *v, double c)\n{{\n    \
         int i;\n    \
         for (i = 1; i < n - 1; i++) {{\n{body}\n    }}\n    \
         /* boundaries keep their values */\n    \
         v[0] = u[0];\n    \
         v[n - 1] = u[n - 1];\n}}\n"
    )
}

fn reduction(rng: &mut Rng, name: &str, cat: &mut Catalog) -> String {
    cat.reductions.push(name.to_string());
    let (init, update, fin) = match rng.below(3) {
        0 => ("0.0", "s += u[i] * u[i];", "sqrt(s / (double) n)"),
        1 => ("0.0", "s = fmax(s, fabs(u[i]));", "s"),
        _ => (
            "0.0",
            "s += log(1.0 + u[i] * u[i]);",
            "s / (1.0 + (double) n)",
        ),
    };
    format!(
        "/* Reduction over the field: {name}. */\n\
         double {name}(int n, const double *u)\n{{\n    \
         double s = {init};\n    \
         for (int i = 0; i < n; ++i) {{\n        {update}\n    }}\n    \
         return {fin};\n}}\n"
    )
}

fn dot(name: &str, cat: &mut Catalog) -> String {
    cat.dots.push(name.to_string());
    format!(
        "/* Inner product, two partial sums to shorten the dependence chain. */\n\
         double {name}(int n, const double *u, const double *v)\n{{\n    \
         double even = 0.0, odd = 0.0;\n    \
         int i = 0;\n    \
         for (; i + 1 < n; i += 2) {{\n        \
         even += u[i] * v[i];\n        \
         odd += u[i + 1] * v[i + 1];\n    }}\n    \
         if (i < n) {{\n        even += u[i] * v[i]; /* odd length */\n    }}\n    \
         return even + odd;\n}}\n"
    )
}

fn axpy(name: &str, cat: &mut Catalog) -> String {
    cat.axpys.push(name.to_string());
    format!(
        "/* v := v + alpha * u */\n\
         void {name}(int n, double alpha, const double *u, double *v)\n{{\n    \
         for (int i = n - 1; i >= 0; i--) {{\n        \
         v[i] += alpha * u[i];\n    }}\n}}\n"
    )
}

fn flux(rng: &mut Rng, name: &str, cat: &mut Catalog) -> String {
    cat.fluxes.push(name.to_string());
    let c = coef(rng);
    format!(
        "/* Numerical flux selected by kind (0 upwind, 1 central, 2 Rusanov). */\n\
         double {name}(int kind, double ul, double ur)\n{{\n    \
         double f = 0.0;\n    \
         switch (kind) {{\n    \
         case 0:\n        \
         f = ul;\n        \
         break;\n    \
         case 1:\n        \
         f = 0.5 * (ul + ur);\n        \
         break;\n    \
         case 2:\n        \
         f = 0.5 * (ul + ur) - 0.5 * fmax(fabs(ul), fabs(ur)) * (ur - ul);\n        \
         /* fall through */\n    \
         default:\n        \
         f *= 1.0 - {c} * g_viscosity;\n        \
         break;\n    }}\n    \
         return f;\n}}\n"
    )
}

fn stepper(rng: &mut Rng, name: &str, cat: &mut Catalog) -> String {
    let st = cat.stencils.last().cloned();
    let red = cat.reductions.last().cloned();
    let c = coef(rng);
    let mut body = String::new();
    body.push_str("    for (int step = 0; step < g_substeps; step++) {\n");
    match st {
        Some(st) => body.push_str(&format!("        {st}(n, u, work, dt * {c});\n")),
        None => body.push_str(&format!(
            "        for (int i = 0; i < n; i++) {{\n            work[i] = u[i] * (1.0 - dt * {c});\n        }}\n"
        )),
    }
    body.push_str(
        "        for (int i = 0; i < n; i++) {\n            u[i] = work[i];\n        }\n",
    );
    if let Some(red) = red {
        body.push_str(&format!(
            "        /* stop early once the field has decayed */\n        \
             if ({red}(n, u) < 1e-12) {{\n            break;\n        }}\n"
        ));
    }
    body.push_str("    }\n");
    cat.steppers.push(name.to_string());
    format!(
        "/* Time stepping: g_substeps explicit steps of size dt. */\n\
         void {name}(int n, double *u, double *work, double dt)\n{{\n{body}}}\n"
    )
}

fn particles(rng: &mut Rng, name: &str, cat: &mut Catalog) -> String {
    let damp = coef(rng);
    cat.particles.push(name.to_string());
    format!(
        "/* Symplectic Euler update of a particle system. */\n\
         void {name}(Particles *p, double dt)\n{{\n    \
         int i;\n    \
         for (i = 0; i < p->count; i++) {{\n        \
         double a = p->force[i] - g_gravity * {damp} * p->vel[i];\n        \
         p->vel[i] += dt * a;\n        \
         p->pos[i] += dt * p->vel[i];\n        \
         if (p->pos[i] < 0.0) {{\n            \
         /* reflect at the wall */\n            \
         p->pos[i] = -p->pos[i];\n            \
         p->vel[i] = -p->vel[i];\n        }}\n    }}\n}}\n"
    )
}

fn laplace2d(rng: &mut Rng, name: &str) -> String {
    let w = coef(rng);
    format!(
        "/* Five-point Laplacian on an nx by ny grid stored by rows. */\n\
         void {name}(int nx, int ny, const double *u, double *v)\n{{\n    \
         for (int j = 1; j < ny - 1; j++) {{\n        \
         for (int i = 1; i < nx - 1; i++) {{\n            \
         int c = j * nx + i;\n            \
         v[c] = {w} * (u[c - 1] + u[c + 1] + u[c - nx] + u[c + nx] - 4.0 * u[c]);\n        }}\n    }}\n}}\n"
    )
}

fn tridiag(name: &str) -> String {
    format!(
        "/* Thomas algorithm for a diagonally dominant tridiagonal system;\n   \
         the solution overwrites d. */\n\
         void {name}(int n, const double *a, const double *b, const double *c, double *d, double *work)\n{{\n    \
         double m = b[0];\n    \
         work[0] = c[0] / m;\n    \
         d[0] = d[0] / m;\n    \
         for (int i = 1; i < n; i++) {{\n        \
         m = b[i] - a[i] * work[i - 1];\n        \
         work[i] = c[i] / m;\n        \
         d[i] = (d[i] - a[i] * d[i - 1]) / m;\n    }}\n    \
         for (int i = n - 2; i >= 0; i--) {{\n        \
         d[i] -= work[i] * d[i + 1]; /* back substitution */\n    }}\n}}\n"
    )
}

fn composite(rng: &mut Rng, name: &str, cat: &mut Catalog) -> String {
    let mut body = String::new();
    body.push_str("    double r = 0.0;\n");
    // Call the most recent driver so that the call graph gets deep.
    if let Some(prev) = cat.steppers.last() {
        body.push_str(&format!("    {prev}(n, u, work, 0.5 * dt);\n"));
    }
    if let Some(st) = cat
        .stencils
        .get(rng.below(cat.stencils.len() as u64) as usize)
    {
        body.push_str(&format!("    {st}(n, u, work, dt);\n"));
    }
    if let Some(ax) = cat.axpys.last() {
        body.push_str(&format!(
            "    {ax}(n, -1.0, u, work); /* work := work - u */\n"
        ));
    }
    if let Some(d) = cat.dots.last() {
        body.push_str(&format!("    r = {d}(n, work, work);\n"));
    }
    if let Some(fl) = cat.fluxes.last() {
        body.push_str(&format!(
            "    for (int i = 1; i < n; i++) {{\n        \
             int kind = i % 3;\n        \
             work[i] = {fl}(kind, u[i - 1], u[i]) - {fl}(kind, u[i], u[i - 1]);\n    }}\n"
        ));
    }
    if let Some(red) = cat.reductions.last() {
        body.push_str(&format!("    r += {red}(n, work);\n"));
    }
    body.push_str(
        "    /* relax toward the corrected field */\n    \
         for (int i = 0; i < n; i++) {\n        \
         u[i] = u[i] + dt * work[i] / (1.0 + r);\n    }\n",
    );
    cat.steppers.push(name.to_string());
    format!(
        "/* Driver: one corrected step built from the kernels above. */\n\
         void {name}(int n, double *u, double *work, double dt)\n{{\n{body}}}\n"
    )
}
