//! Tests of input generation and driver text on hand-built IL, compiled
//! and run with the system C compiler.

use super::domain::Domain;
use super::driver::*;
use crate::front::source::Span;
use crate::il::*;
use std::path::Path;
use std::process::Command;

/// Builds small programs directly in IL, standing in for the front end.
struct Builder {
    p: Program,
}

fn int_ty() -> Type {
    Type::Int {
        kind: IntKind::Int,
        unsigned: false,
    }
}
fn dbl() -> Type {
    Type::Real(RealKind::Double)
}
fn ptr(t: Type) -> Type {
    Type::Pointer(Box::new(QualType::new(t)))
}
fn const_ptr(t: Type) -> Type {
    Type::Pointer(Box::new(QualType {
        ty: t,
        is_const: true,
    }))
}
fn array(t: Type, n: u64) -> Type {
    let len = ArrayLen {
        expr: Box::new(Expr::new(
            ExprKind::IntConst {
                value: n as i64,
                text: n.to_string(),
            },
            QualType::int(),
            Span::default(),
        )),
        value: Some(n),
    };
    Type::Array {
        elem: Box::new(QualType::new(t)),
        len: Some(len),
    }
}

impl Builder {
    fn new() -> Builder {
        let mut p = Program::default();
        p.scopes.push(Scope::default());
        Builder { p }
    }

    fn sym(&mut self, name: &str, ty: Type, kind: SymKind) -> SymId {
        let id = SymId(self.p.symbols.len() as u32);
        self.p.symbols.push(Symbol {
            name: name.to_string(),
            ty: QualType::new(ty),
            kind,
            storage: Storage::Auto,
            scope: ScopeId(0),
            span: Span::default(),
        });
        id
    }

    fn proc(&mut self, name: &str, ret: Type, params: &[(&str, Type)], body: bool) -> ProcId {
        let params = params
            .iter()
            .map(|(n, t)| self.sym(n, t.clone(), SymKind::Param))
            .collect();
        let id = ProcId(self.p.procs.len() as u32);
        self.p.procs.push(Procedure {
            name: name.to_string(),
            ret: QualType::new(ret),
            params,
            scope: ScopeId(0),
            storage: Storage::Auto,
            is_inline: false,
            body: body.then(|| Block {
                stmts: Vec::new(),
                scope: ScopeId(0),
                closing_comments: Vec::new(),
                span: Span::default(),
            }),
            origin: ProcOrigin::User,
            span: Span::default(),
            comments: Comments::default(),
            stmt_count: 0,
        });
        id
    }

    /// `typedef struct { fields } name;`, returning the typedef's type.
    fn strukt(&mut self, name: &str, fields: &[(&str, Type)]) -> Type {
        let sid = StructId(self.p.structs.len() as u32);
        self.p.structs.push(StructDef {
            tag: None,
            fields: fields
                .iter()
                .map(|(n, t)| Field {
                    name: n.to_string(),
                    ty: QualType::new(t.clone()),
                    span: Span::default(),
                    comments: Comments::default(),
                })
                .collect(),
            span: Span::default(),
            comments: Comments::default(),
        });
        let tid = TypedefId(self.p.typedefs.len() as u32);
        self.p.typedefs.push(TypedefDef {
            name: name.to_string(),
            ty: QualType::new(Type::Struct(sid)),
            span: Span::default(),
        });
        Type::Named(tid)
    }

    fn global(&mut self, name: &str, ty: Type, file: u32) {
        let sym = self.sym(name, ty.clone(), SymKind::Global);
        self.p.scopes[0].vars.insert(name.to_string(), sym);
        self.p.items.push(Item {
            kind: ItemKind::Globals {
                base: QualType::new(ty),
                storage: Storage::Auto,
                vars: vec![Declarator { sym, init: None }],
            },
            span: Span::default(),
            comments: Comments::default(),
            file: crate::front::source::FileId(file),
        });
    }
}

/// The IL of `particles.c` below, as the front end would produce it.
fn particles_program() -> Program {
    let mut b = Builder::new();
    let particle = b.strukt(
        "Particle",
        &[
            ("pos", array(dbl(), 2)),
            ("mass", dbl()),
            ("id", int_ty()),
            ("hist", ptr(dbl())),
        ],
    );
    let vec2 = b.strukt("Vec2", &[("x", dbl()), ("y", dbl())]);
    b.global("g_total", dbl(), 0);
    b.global("g_hits", array(int_ty(), 3), 0);
    b.global("g_header", dbl(), 1);
    b.proc(
        "advance",
        dbl(),
        &[
            ("n", int_ty()),
            ("m", int_ty()),
            ("dt", Type::Real(RealKind::Float)),
            ("x", const_ptr(dbl())),
            ("idx", ptr(int_ty())),
            ("p", ptr(particle)),
            ("shift", vec2),
            ("out", ptr(Type::Real(RealKind::Float))),
        ],
        true,
    );
    b.proc("helper", dbl(), &[("x", dbl())], false);
    b.p
}

const PARTICLES_C: &str = r#"
typedef struct {
    double pos[2];
    double mass;
    int id;
    double *hist;
} Particle;
typedef struct { double x, y; } Vec2;
double g_total = 0.0;
int g_hits[3] = {1, 2, 3};
double advance(int n, int m, float dt, const double *x, int *idx, Particle *p,
               Vec2 shift, float *out)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        p[i].pos[0] += dt * x[i] + shift.x;
        p[i].pos[1] += shift.y;
        for (int k = 0; k < m; k++) p[i].hist[k] *= p[i].mass;
        idx[i] += p[i].id;
        s += p[i].pos[0];
    }
    out[0] = dt * 2.0f;
    g_total = s;
    g_hits[1] = n;
    return s * m;
}
"#;

const PARTICLES_DOMAIN: &str = "n=3 m=2 dt=[0.1,0.2] x[n]=[-1,1] idx[n]=[0,9] \
    p[n].pos=[-1,1] p[n].mass=[1,2] p[n].id=[0,5] p[n].hist[m]=[0,1] \
    shift.x=[0,1] shift.y=0.5 out[1]=[0,0]";

fn particles_inputs(seed: u64) -> (Program, Inputs) {
    let program = particles_program();
    let domain = Domain::parse(PARTICLES_DOMAIN).unwrap();
    let inputs = compute_inputs(&program, "advance", &domain, seed).unwrap();
    (program, inputs)
}

#[test]
fn inputs_respect_the_domain_and_the_seed() {
    let (_, a) = particles_inputs(42);
    let (_, b) = particles_inputs(42);
    let (_, c) = particles_inputs(43);
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.args.len(), 8);
    assert_eq!(a.args[0], ArgValue::Int(3));
    let ArgValue::Real(dt) = a.args[2] else {
        panic!("dt is a real")
    };
    assert!((0.1..=0.2).contains(&dt) && dt == dt as f32 as f64);
    let ArgValue::RealArray(x) = &a.args[3] else {
        panic!("x is a real array")
    };
    assert_eq!(x.len(), 3);
    assert!(x.iter().all(|v| (-1.0..=1.0).contains(v)));
    let ArgValue::IntArray(idx) = &a.args[4] else {
        panic!("idx is an int array")
    };
    assert!(idx.iter().all(|v| (0..=9).contains(v)));
    let ArgValue::StructArray(p) = &a.args[5] else {
        panic!("p is an array of structs")
    };
    assert_eq!(p.len(), 3);
    let FieldValue::RealPointer(hist) = &p[2].fields[3] else {
        panic!("hist is a pointer field")
    };
    assert_eq!(hist.len(), 2);
    let ArgValue::Struct(shift) = &a.args[6] else {
        panic!("shift is a struct")
    };
    assert_eq!(shift.fields[1], FieldValue::Real(0.5));
    assert_eq!(a.sizes.get("p.hist"), Some(&2));
    assert_eq!(a.sizes.get("x"), Some(&3));
    assert_eq!(a.sizes.get("p"), Some(&3));
}

#[test]
fn outputs_are_listed_in_the_documented_order() {
    let (program, inputs) = particles_inputs(1);
    let labels: Vec<String> = describe_outputs(&program, &inputs)
        .into_iter()
        .map(|s| s.label)
        .collect();
    let mut expected = vec!["advance".to_string()];
    expected.extend((0..3).map(|k| format!("x[{k}]")));
    expected.extend((0..3).map(|k| format!("idx[{k}]")));
    for i in 0..3 {
        expected.push(format!("p[{i}].pos[0]"));
        expected.push(format!("p[{i}].pos[1]"));
        expected.push(format!("p[{i}].mass"));
        expected.push(format!("p[{i}].id"));
        expected.push(format!("p[{i}].hist[0]"));
        expected.push(format!("p[{i}].hist[1]"));
    }
    expected.push("out[0]".into());
    expected.push("g_total".into());
    expected.extend((0..3).map(|k| format!("g_hits[{k}]")));
    assert_eq!(labels, expected);
}

#[test]
fn domain_errors_name_the_problem() {
    let program = particles_program();
    let cases = [
        ("n=3", "advance", "parameter 'm' of 'advance' has no domain"),
        (
            &format!("{PARTICLES_DOMAIN} q=1"),
            "advance",
            "'q', which is not a parameter",
        ),
        (
            &PARTICLES_DOMAIN.replace("n=3", "n=[1,3]"),
            "advance",
            "needs one integer value",
        ),
        (
            &PARTICLES_DOMAIN.replace(" p[n].mass=[1,2]", ""),
            "advance",
            "field 'p.mass' of parameter 'p' of 'advance' has no domain",
        ),
        (
            &format!("{PARTICLES_DOMAIN} p[n].w=[0,1]"),
            "advance",
            "'p[n].w' does not name a field",
        ),
        (
            &PARTICLES_DOMAIN.replace("idx[n]=[0,9]", "idx[n]=[0,9.5]"),
            "advance",
            "must use integers",
        ),
        (
            &PARTICLES_DOMAIN.replace("x[n]", "x[n-3]"),
            "advance",
            "must be between 1",
        ),
        (
            &PARTICLES_DOMAIN.replace("x[n]", "x[k]"),
            "advance",
            "'k', which is not an integer parameter",
        ),
        (
            &PARTICLES_DOMAIN.replace("p[n].id=[0,5]", "p[2].id=[0,5]"),
            "advance",
            "disagree",
        ),
        ("", "nothing", "no procedure named 'nothing'"),
        ("x=[0,1]", "helper", "only declared"),
    ];
    for (domain, head, needle) in cases {
        let d = Domain::parse(domain).unwrap();
        let err = compute_inputs(&program, head, &d, 0)
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{domain:?}: {err:?} lacks {needle:?}");
    }
}

#[test]
fn unsupported_parameter_types_are_named() {
    let mut b = Builder::new();
    b.proc("f", Type::Void, &[("pp", ptr(ptr(dbl())))], true);
    b.proc(
        "g",
        Type::Void,
        &[("file", ptr(Type::Opaque("FILE".into())))],
        true,
    );
    let program = b.p;
    let err = compute_inputs(&program, "f", &Domain::parse("pp[1]=[0,1]").unwrap(), 0)
        .unwrap_err()
        .to_string();
    // The type as C spells it.
    assert!(
        err.contains("parameter 'pp' of 'f' has type double **,"),
        "{err}"
    );
    let err = compute_inputs(&program, "g", &Domain::parse("file[1]=[0,1]").unwrap(), 0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("parameter 'file' of 'g'"), "{err}");
    assert!(err.contains("has type FILE *,"), "{err}");
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// Compiles and runs a C program, returning its standard output.
fn compile_and_run(dir: &Path, name: &str, source: &str) -> String {
    let c = dir.join(format!("{name}.c"));
    let exe = dir.join(name);
    std::fs::write(&c, source).unwrap();
    let status = Command::new(cc())
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(&c)
        .arg("-lm")
        .status()
        .unwrap();
    assert!(status.success(), "{name}.c does not compile:\n{source}");
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn driver_compiles_runs_and_prints_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let (program, inputs) = particles_inputs(7);
    let unit = dir.path().join("particles.c");
    std::fs::write(&unit, PARTICLES_C).unwrap();
    let text = generate_driver(&program, &inputs, &unit).unwrap();
    assert!(text.contains(&format!("#include \"{}\"", unit.display())));
    let stdout = compile_and_run(dir.path(), "driver", &text);
    let lines: Vec<&str> = stdout.lines().collect();
    let slots = describe_outputs(&program, &inputs);
    assert_eq!(lines.len(), slots.len(), "{text}\n{stdout}");

    // Inputs the procedure only reads come back unchanged, exactly.
    let ArgValue::RealArray(x) = &inputs.args[3] else {
        panic!()
    };
    for (k, v) in x.iter().enumerate() {
        assert_eq!(lines[1 + k], format_hex_float(*v));
    }
    // idx[i] += p[i].id, and g_hits[1] = n.
    let (ArgValue::IntArray(idx), ArgValue::StructArray(p)) = (&inputs.args[4], &inputs.args[5])
    else {
        panic!()
    };
    for i in 0..3 {
        let FieldValue::Int(id) = p[i].fields[2] else {
            panic!()
        };
        assert_eq!(lines[4 + i], (idx[i] + id).to_string());
        assert_eq!(lines[7 + 6 * i + 3], id.to_string());
    }
    assert_eq!(lines[lines.len() - 2], "3");
    // out[0] = dt * 2.0f, computed in float.
    let ArgValue::Real(dt) = inputs.args[2] else {
        panic!()
    };
    assert_eq!(lines[25], format_hex_float((dt as f32 * 2.0f32) as f64));
}

#[test]
fn hex_floats_match_printf() {
    let values = [
        0.0,
        -0.0,
        1.0,
        -1.5,
        0.1,
        1e300,
        -2.5e-310,
        f64::MIN_POSITIVE,
        4.9e-324,
        f64::MAX,
        123456.789,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let mut src = String::from("#include <stdio.h>\n#include <math.h>\nint main(void)\n{\n");
    for v in values {
        let lit = if v.is_infinite() {
            if v > 0.0 {
                "INFINITY".to_string()
            } else {
                "-INFINITY".to_string()
            }
        } else {
            format_hex_float(v)
        };
        src.push_str(&format!("    printf(\"%a\\n\", {lit});\n"));
    }
    src.push_str("    printf(\"%a\\n\", NAN);\n    return 0;\n}\n");
    let dir = tempfile::tempdir().unwrap();
    let out = compile_and_run(dir.path(), "hex", &src);
    let expected: Vec<String> = values
        .iter()
        .map(|v| format_hex_float(*v))
        .chain(std::iter::once(format_hex_float(f64::NAN)))
        .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn a_file_with_main_is_refused() {
    let mut b = Builder::new();
    b.proc("f", dbl(), &[("a", dbl())], true);
    b.proc("main", int_ty(), &[], true);
    let inputs = compute_inputs(&b.p, "f", &Domain::parse("a=[0,1]").unwrap(), 0).unwrap();
    let err = generate_driver(&b.p, &inputs, Path::new("f.c")).unwrap_err();
    assert_eq!(err, DriverError::DefinesMain);
}

#[test]
fn float_inputs_stay_inside_ranges_that_are_not_floats() {
    let mut b = Builder::new();
    b.proc(
        "f",
        Type::Void,
        &[("x", ptr(Type::Real(RealKind::Float)))],
        true,
    );
    for (lo, hi) in [(0.1, 0.1), (-0.3, -0.3), (0.1, 0.2), (-0.7, -0.1)] {
        let d = Domain::parse(&format!("x[64]=[{lo},{hi}]")).unwrap();
        let inputs = compute_inputs(&b.p, "f", &d, 3).unwrap();
        let ArgValue::RealArray(x) = &inputs.args[0] else {
            panic!()
        };
        for v in x {
            assert!(*v == *v as f32 as f64);
            // A single-point range that is not a float has no float inside;
            // the nearest float inside is then one step away at most.
            if lo < hi {
                assert!((lo..=hi).contains(v), "{v} outside [{lo},{hi}]");
            }
        }
    }
}
