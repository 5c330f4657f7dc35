//! Timing of a procedure inside a generated check driver: the C code that
//! measures, and the arithmetic that turns its raw numbers into seconds per
//! call.
//!
//! A procedure may overwrite its inputs, so every timed call must start
//! from fresh copies. Copying costs time too, and for small procedures as
//! much as the call itself; it is therefore timed on its own and
//! subtracted:
//!
//! - loop A runs `n` times { restore the inputs; call }, loop B runs `n`
//!   times { restore the inputs } (for a tangent, "restore" also zeroes the
//!   derivatives and seeds the direction, in both loops);
//! - `n` grows until loop A lasts at least a target time (a share of the
//!   time budget), then A and B are each measured [`ROUNDS`] times,
//!   alternately, and the fastest of each is kept (the minimum is the
//!   measurement least disturbed by the rest of the machine); the
//!   procedures compared (`f`, `f_d`, `f_b`) are measured in turn within
//!   each round, so that a change of the machine's load between them
//!   does not skew their ratio;
//! - the time of a call is `(A - B) / n`, but never less than
//!   [`MIN_CALL_SHARE`] of `A / n`: when the call is much cheaper than the
//!   copy, the difference of two noisy times is noise, and a floor keeps
//!   the ratio of two such times finite and positive instead of absurd.
//!
//! Clock: `clock_gettime(CLOCK_MONOTONIC)`. The procedures live in other
//! translation units than the driver, so the compiler cannot inline them
//! into the loops; a compiler barrier (an empty `asm` with a memory
//! clobber, on GCC and Clang) after every restore keeps it from merging the
//! copies of successive iterations.

/// Measurements of each loop, alternated; the fastest is kept.
pub const ROUNDS: u32 = 3;

/// The smallest share of loop A's time per iteration that counts as the
/// call's own time (see the module documentation).
pub const MIN_CALL_SHARE: f64 = 0.02;

/// The loop target for one measurement, in seconds, from the whole budget:
/// two procedures, each measured in a calibration (about two targets) and
/// [`ROUNDS`] pairs of loops.
pub fn loop_target_seconds(budget_ms: u64) -> f64 {
    let loops_per_procedure = 2.0 + 2.0 * f64::from(ROUNDS);
    budget_ms as f64 / 1000.0 / (2.0 * loops_per_procedure)
}

/// The raw numbers of one timed procedure, as the driver prints them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// Fastest loop of `iterations` {restore; call}, in seconds.
    pub with_call: f64,
    /// Fastest loop of `iterations` {restore}, in seconds.
    pub without_call: f64,
    pub iterations: u64,
}

impl Timing {
    /// Seconds per call, the cost of restoring the inputs removed; `None`
    /// when the numbers are not usable (no iteration, a non-finite or
    /// non-positive loop time).
    pub fn per_call(&self) -> Option<f64> {
        if self.iterations == 0 || !self.with_call.is_finite() || self.with_call <= 0.0 {
            return None;
        }
        let n = self.iterations as f64;
        let difference = if self.without_call.is_finite() {
            self.with_call - self.without_call
        } else {
            self.with_call
        };
        Some(difference.max(MIN_CALL_SHARE * self.with_call) / n)
    }
}

/// The C functions that time the calls: `aioli_loop` and `aioli_time_all`.
/// They use the driver's `aioli_reset`, `aioli_seed`, `aioli_call_f` and
/// `aioli_call_f_d` (and, with `adjoint`, `aioli_seed_adjoints` and
/// `aioli_call_f_b`), and print `@aioli time NAME A B N` (A and B in `%a`).
///
/// For the adjoint (`aioli_what` 4), "restore" is: the primal inputs,
/// every adjoint zeroed, the dependents' adjoints set to `ȳ` (loop B, 5,
/// does exactly that without the call). So R_a counts `f_b`'s own work,
/// including its pushes and pops, but not the caller's preparation; the
/// stack is empty again after each balanced call, so every iteration
/// starts alike.
pub fn c_code(adjoint: bool) -> String {
    let adjoint_cases = if adjoint {
        r#" else if (aioli_what == 4) {
            aioli_seed_adjoints(aioli_ybar_now, -1);
            aioli_call_f_b();
        } else if (aioli_what == 5) {
            aioli_seed_adjoints(aioli_ybar_now, -1);
        }"#
    } else {
        ""
    };
    format!(
        r#"static double aioli_now(void)
{{
    struct timespec aioli_ts;
    clock_gettime(CLOCK_MONOTONIC, &aioli_ts);
    return (double)aioli_ts.tv_sec + 1e-9 * (double)aioli_ts.tv_nsec;
}}

/* aioli_what: 1 = f, 2 = f_d, 3 = only what f_d needs before its call,
 * 4 = f_b, 5 = only what f_b needs before its call,
 * 0 = nothing after the restore. (Every name starts with aioli_: the
 * tangent file's macros are in scope.) */
static double aioli_loop(int aioli_what, long aioli_n)
{{
    long aioli_i;
    double aioli_t0 = aioli_now();
    for (aioli_i = 0; aioli_i < aioli_n; aioli_i++) {{
        aioli_reset();
        if (aioli_what == 1) {{
            aioli_call_f();
        }} else if (aioli_what == 2) {{
            aioli_seed();
            aioli_call_f_d();
        }} else if (aioli_what == 3) {{
            aioli_seed();
        }}{adjoint_cases}
        AIOLI_BARRIER();
    }}
    return aioli_now() - aioli_t0;
}}

/* Each procedure's loop count grows until its loop lasts the target;
 * then every procedure is measured once per round, in turn, so that a
 * change of machine load between them falls on all of them alike. */
static void aioli_time_all(int aioli_count, const char *const *aioli_names,
                           const int *aioli_with, const int *aioli_without,
                           double aioli_target)
{{
    long aioli_n[3];
    double aioli_best_a[3], aioli_best_b[3];
    double aioli_a, aioli_b;
    int aioli_k, aioli_r;
    for (aioli_k = 0; aioli_k < aioli_count; aioli_k++) {{
        aioli_n[aioli_k] = 1;
        for (;;) {{
            aioli_a = aioli_loop(aioli_with[aioli_k], aioli_n[aioli_k]);
            if (aioli_a >= aioli_target || aioli_n[aioli_k] >= (1L << 40))
                break;
            if (aioli_a <= 0.0) {{
                aioli_n[aioli_k] *= 16;
            }} else {{
                double aioli_grow = 1.2 * aioli_target / aioli_a;
                if (aioli_grow < 2.0)
                    aioli_grow = 2.0;
                if (aioli_grow > 1024.0)
                    aioli_grow = 1024.0;
                aioli_n[aioli_k] = (long)((double)aioli_n[aioli_k] * aioli_grow);
            }}
        }}
        aioli_best_a[aioli_k] = aioli_a;
        aioli_best_b[aioli_k] = aioli_loop(aioli_without[aioli_k], aioli_n[aioli_k]);
    }}
    for (aioli_r = 1; aioli_r < {ROUNDS}; aioli_r++) {{
        for (aioli_k = 0; aioli_k < aioli_count; aioli_k++) {{
            aioli_a = aioli_loop(aioli_with[aioli_k], aioli_n[aioli_k]);
            if (aioli_a < aioli_best_a[aioli_k])
                aioli_best_a[aioli_k] = aioli_a;
            aioli_b = aioli_loop(aioli_without[aioli_k], aioli_n[aioli_k]);
            if (aioli_b < aioli_best_b[aioli_k])
                aioli_best_b[aioli_k] = aioli_b;
        }}
    }}
    for (aioli_k = 0; aioli_k < aioli_count; aioli_k++)
        printf("@aioli time %s %a %a %ld\n", aioli_names[aioli_k], aioli_best_a[aioli_k],
               aioli_best_b[aioli_k], aioli_n[aioli_k]);
}}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_restore_is_subtracted() {
        let t = Timing {
            with_call: 3.0,
            without_call: 1.0,
            iterations: 1000,
        };
        assert!((t.per_call().unwrap() - 2e-3).abs() < 1e-15);
    }

    #[test]
    fn noise_never_gives_a_negative_time() {
        let t = Timing {
            with_call: 1.0,
            without_call: 1.5,
            iterations: 10,
        };
        assert!((t.per_call().unwrap() - MIN_CALL_SHARE / 10.0).abs() < 1e-15);
    }

    #[test]
    fn unusable_numbers_give_nothing() {
        for (a, n) in [(0.0, 10), (f64::NAN, 10), (1.0, 0), (-1.0, 5)] {
            let t = Timing {
                with_call: a,
                without_call: 0.0,
                iterations: n,
            };
            assert_eq!(t.per_call(), None);
        }
    }

    #[test]
    fn the_budget_is_shared() {
        assert!((loop_target_seconds(160) - 0.01).abs() < 1e-12);
    }
}
