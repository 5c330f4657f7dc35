//! Declarations the tool knows for system headers.
//!
//! An `#include <name.h>` of a header listed here is preprocessed as a
//! virtual file holding these plain C declarations, so that the parser and
//! lowering know the standard functions' signatures. The output keeps the
//! `#include` line verbatim; these texts never reach generated code.
//!
//! Prototypes leave their parameters unnamed so that a user macro cannot
//! collide with a parameter name. `size_t` is declared under a shared guard
//! so that several headers can declare it in one translation unit.

/// The shared declaration of `size_t`, guarded so it appears once.
const SIZE_T: &str = "#ifndef __aioli_size_t
#define __aioli_size_t 1
typedef unsigned long size_t;
#endif
";

/// `NULL` is self-referential: the identifier reaches the parser, and
/// lowering treats it as the null pointer constant.
const NULL: &str = "#define NULL NULL\n";

/// Every `<math.h>` function of one argument the tool declares.
const MATH_UNARY: &[&str] = &[
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "erf",
    "erfc", "lgamma", "tgamma", "floor", "ceil", "round", "trunc",
];

/// Every `<math.h>` function of two arguments the tool declares.
const MATH_BINARY: &[&str] = &["pow", "atan2", "hypot", "fmin", "fmax", "fmod", "copysign"];

const MATH_MACROS: &str = "#define M_PI 3.14159265358979323846
#define M_E 2.7182818284590452354
#define M_SQRT2 1.41421356237309504880
#define M_LN2 0.69314718055994530942
#define HUGE_VAL (1.0/0.0)
#define INFINITY (1.0/0.0)
#define NAN (0.0/0.0)
#define FP_NAN 0
#define FP_INFINITE 1
#define FP_ZERO 2
#define FP_SUBNORMAL 3
#define FP_NORMAL 4
";

const STDLIB: &str = "void *malloc(size_t);
void *calloc(size_t, size_t);
void *realloc(void *, size_t);
void free(void *);
int abs(int);
long labs(long);
void exit(int);
void abort(void);
char *getenv(const char *);
int atoi(const char *);
long atol(const char *);
double atof(const char *);
double strtod(const char *, char **);
long strtol(const char *, char **, int);
unsigned long strtoul(const char *, char **, int);
int rand(void);
void srand(unsigned int);
#define RAND_MAX 2147483647
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
";

const STDDEF: &str = "typedef long ptrdiff_t;\n";

const STDIO: &str = "typedef struct _IO_FILE FILE;
extern FILE *stdout;
extern FILE *stderr;
int printf(const char *, ...);
int fprintf(FILE *, const char *, ...);
int sprintf(char *, const char *, ...);
int snprintf(char *, size_t, const char *, ...);
int puts(const char *);
int putchar(int);
int fputs(const char *, FILE *);
int fflush(FILE *);
FILE *fopen(const char *, const char *);
int fclose(FILE *);
int fscanf(FILE *, const char *, ...);
int scanf(const char *, ...);
int sscanf(const char *, const char *, ...);
char *fgets(char *, int, FILE *);
int fgetc(FILE *);
int getchar(void);
int fputc(int, FILE *);
int putc(int, FILE *);
size_t fread(void *, size_t, size_t, FILE *);
size_t fwrite(const void *, size_t, size_t, FILE *);
void perror(const char *);
extern FILE *stdin;
#define EOF (-1)
";

const STRING: &str = "void *memcpy(void *, const void *, size_t);
void *memmove(void *, const void *, size_t);
void *memset(void *, int, size_t);
size_t strlen(const char *);
int strcmp(const char *, const char *);
char *strcpy(char *, const char *);
int strncmp(const char *, const char *, size_t);
char *strncpy(char *, const char *, size_t);
char *strcat(char *, const char *);
char *strncat(char *, const char *, size_t);
char *strchr(const char *, int);
char *strrchr(const char *, int);
char *strstr(const char *, const char *);
int memcmp(const void *, const void *, size_t);
";

const FLOAT: &str = "#define DBL_MAX 1.7976931348623157e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-16
#define FLT_MAX 3.40282347e+38F
#define FLT_EPSILON 1.19209290e-07F
#define FLT_MIN 1.17549435e-38F
#define DBL_DIG 15
#define DBL_MANT_DIG 53
#define FLT_DIG 6
#define FLT_MANT_DIG 24
";

/// The rest of C99's `<math.h>` that scientific code calls. The
/// classification macros (`isnan`, ...) are declared as functions, which is
/// how their calls read.
const MATH_OTHERS: &str = "double ldexp(double, int);
double frexp(double, int *);
double modf(double, double *);
double fma(double, double, double);
double rint(double);
double nearbyint(double);
long lround(double);
long lrint(double);
double remainder(double, double);
double fdim(double, double);
double scalbn(double, int);
double nextafter(double, double);
double nan(const char *);
double logb(double);
int ilogb(double);
int isnan(double);
int isinf(double);
int isfinite(double);
int isnormal(double);
int fpclassify(double);
int signbit(double);
";

const LIMITS: &str = "#define CHAR_BIT 8
#define SCHAR_MAX 127
#define SCHAR_MIN (-128)
#define UCHAR_MAX 255
#define CHAR_MAX 127
#define CHAR_MIN (-128)
#define SHRT_MAX 32767
#define SHRT_MIN (-32768)
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-INT_MAX - 1)
#define UINT_MAX 4294967295U
#define LONG_MAX 9223372036854775807L
#define LONG_MIN (-LONG_MAX - 1L)
#define ULONG_MAX 18446744073709551615UL
#define LLONG_MAX 9223372036854775807LL
#define LLONG_MIN (-LLONG_MAX - 1LL)
#define ULLONG_MAX 18446744073709551615ULL
";

const STDBOOL: &str = "#define bool _Bool
#define true 1
#define false 0
";

/// `assert` stays a call, so the output keeps the user's checks (the
/// real `<assert.h>`, included verbatim, defines it there); its argument
/// may be any scalar (see the lowering of calls).
/// C99's exact-width integers, as the LP64 data model has them.
const STDINT: &str = "typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef long intmax_t;
typedef unsigned long uintmax_t;
#define INT8_MAX 127
#define INT16_MAX 32767
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807L
#define INT8_MIN (-128)
#define INT16_MIN (-32768)
#define INT32_MIN (-INT32_MAX - 1)
#define INT64_MIN (-INT64_MAX - 1L)
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615UL
";

/// `<time.h>`: timing around the computation.
const TIME: &str = "typedef long time_t;
typedef long clock_t;
time_t time(time_t *);
clock_t clock(void);
double difftime(time_t, time_t);
#define CLOCKS_PER_SEC 1000000L
";

const ASSERT: &str =
    "#ifdef NDEBUG\n#define assert(e) ((void)0)\n#else\nvoid assert(int);\n#endif\n";

/// The headers [`header_text`] knows, by the name written between `<>`.
const KNOWN: &[&str] = &[
    "math.h",
    "stdlib.h",
    "stddef.h",
    "stdio.h",
    "string.h",
    "float.h",
    "limits.h",
    "stdbool.h",
    "assert.h",
    "stdint.h",
    "time.h",
];

/// The names of the system headers the tool has declarations for.
pub fn known_headers() -> &'static [&'static str] {
    KNOWN
}

/// The C declarations the tool uses for system header `name` (as written
/// between `<>`, e.g. `math.h`), or `None` when it knows nothing of it.
pub fn header_text(name: &str) -> Option<&'static str> {
    use std::sync::OnceLock;
    static TEXTS: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();
    let texts = TEXTS.get_or_init(|| KNOWN.iter().map(|&n| (n, build(n))).collect());
    texts
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| text.as_str())
}

/// Assembles the text of one known header.
fn build(name: &str) -> String {
    let mut text = String::new();
    match name {
        "math.h" => {
            text.push_str(MATH_MACROS);
            for f in MATH_UNARY {
                text.push_str(&format!(
                    "double {f}(double);\nfloat {f}f(float);\nlong double {f}l(long double);\n"
                ));
            }
            for f in MATH_BINARY {
                text.push_str(&format!(
                    "double {f}(double, double);\nfloat {f}f(float, float);\n\
                     long double {f}l(long double, long double);\n"
                ));
            }
            // Known by signature only: not intrinsics, so calls to them are
            // ordinary (passive) library calls.
            text.push_str(MATH_OTHERS);
        }
        "stdlib.h" => {
            text.push_str(SIZE_T);
            text.push_str(NULL);
            text.push_str(STDLIB);
        }
        "stddef.h" => {
            text.push_str(SIZE_T);
            text.push_str(NULL);
            text.push_str(STDDEF);
        }
        "stdio.h" => {
            text.push_str(SIZE_T);
            text.push_str(NULL);
            text.push_str(STDIO);
        }
        "string.h" => {
            text.push_str(SIZE_T);
            text.push_str(NULL);
            text.push_str(STRING);
        }
        "float.h" => text.push_str(FLOAT),
        "limits.h" => text.push_str(LIMITS),
        "stdbool.h" => text.push_str(STDBOOL),
        "assert.h" => text.push_str(ASSERT),
        "stdint.h" => text.push_str(STDINT),
        "time.h" => {
            text.push_str(SIZE_T);
            text.push_str(NULL);
            text.push_str(TIME);
        }
        _ => {}
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_header_has_text() {
        for name in known_headers() {
            assert!(header_text(name).is_some_and(|t| !t.is_empty()), "{name}");
        }
        assert!(header_text("unistd.h").is_none());
    }

    #[test]
    fn math_declares_double_and_float_versions() {
        let math = header_text("math.h").unwrap_or_default();
        for f in ["sqrt", "trunc", "pow", "copysign", "lgamma"] {
            assert!(math.contains(&format!(" {f}(")), "{f}");
            assert!(math.contains(&format!(" {f}f(")), "{f}f");
        }
        assert!(math.contains("#define INFINITY (1.0/0.0)"));
    }
}
