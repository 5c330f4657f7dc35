/*
 * aioli runtime header (CONTRACT §5), written by `aioli runtime --out DIR`.
 * Generated files include it by its bare name: compile them with -I DIR
 * and link DIR/aioli.c.
 */
#ifndef AIOLI_H
#define AIOLI_H

#include <stddef.h>
#include <string.h>

/*
 * The size of the extra, last dimension that every derivative has in
 * multi-directional tangent code (f_dv, `aioli tangent --vector`): the
 * largest number of directions one call can carry. A call uses the first
 * `nbdirs` of them. Override with -DNBDIRSMAX=... on every file that
 * includes this header, consistently.
 */
#ifndef NBDIRSMAX
#define NBDIRSMAX 16
#endif

/*
 * The value of NBDIRSMAX that the runtime itself was compiled with, so a
 * driver can check that it agrees with its own.
 */
int aioli_nbdirsmax(void);

/*
 * The adjoint stack. Adjoint code (f_b, f_fwd/f_bwd) pushes on its forward
 * sweep what its backward sweep needs, and pops it back in reverse order.
 * There is one last-in first-out stack for all types: each pop must mirror
 * the push it undoes, with the same function (and, for control markers and
 * arrays, the same width or size). Popping from an empty stack prints a
 * message to stderr and aborts. The stack is not thread-safe.
 */
static inline void aioli_push_real8(double v);
static inline double aioli_pop_real8(void);
static inline void aioli_push_real4(float v);
static inline float aioli_pop_real4(void);
static inline void aioli_push_int(int v);
static inline int aioli_pop_int(void);
static inline void aioli_push_long(long v);
static inline long aioli_pop_long(void);
static inline void aioli_push_pointer(void *p);
static inline void *aioli_pop_pointer(void);

/*
 * Control markers (which branch was taken, how a loop was left): `value`
 * in [0, 2^bits), bits in 1..=16, packed densely as bits. A value or a
 * width out of range prints a message and aborts.
 */
void aioli_push_control(int value, int bits);
int aioli_pop_control(int bits);

/* A whole array (or struct) of `bytes` bytes. */
void aioli_push_array(void *a, size_t bytes);
void aioli_pop_array(void *a, size_t bytes);

/*
 * Memory the original frees while the backward sweep still reads it, and
 * that no allocation the adjoint reverses will free (a block a helper
 * called as it is allocated). The forward sweep hands it to
 * aioli_free_later instead of freeing it; it is freed when the outermost
 * adjoint call ends. Each head's f_b, and its f_fwd/f_bwd pair, brackets
 * its sweeps with aioli_sweep_open and aioli_sweep_close (f_fwd opens,
 * f_bwd closes); the close that ends the outermost one frees what was
 * handed over. A NULL pointer is ignored, as free ignores it.
 */
void aioli_free_later(void *p);
void aioli_sweep_open(void);
void aioli_sweep_close(void);

/*
 * Statistics since the program started (or since the last reset): the
 * total number of bytes pushed, and the peak size of the stack in bytes.
 * Control markers count as bits: a count in bytes is the number of bits
 * divided by 8, rounded up (so 12 one-bit markers count as 2 bytes).
 * Either pointer may be NULL.
 *
 * When the environment variable AIOLI_STACK_STATS is set, the runtime
 * prints them to stderr at exit (when anything was pushed), as
 *     aioli stack: 1234 bytes pushed, peak 567 bytes
 */
void aioli_stack_stats(size_t *pushed_bytes, size_t *peak_bytes);

/* Zeroes both counters: the total pushed becomes 0, the peak the current
 * size of the stack. */
void aioli_stack_reset_stats(void);

/*
 * The scalar pushes and pops are inline. A push that fits in the top block
 * of the stack is a copy and one pointer update; a pop a copy, one pointer
 * update and one counter update. Everything else (a new block, crossing a
 * block boundary or a flushed control word, an empty stack, and the first
 * pop after the stack grew past its recorded peak, which records the new
 * peak) is aioli_push_slow / aioli_pop_slow in aioli.c. The statistics are
 * derived from these few variables when asked for, which keeps the fast
 * paths short: they dominate the cost of a store-all forward sweep. The
 * variables below belong to the runtime; generated code never touches
 * them directly.
 */
extern unsigned char *aioli_sp, *aioli_sp_lo, *aioli_sp_hi, *aioli_sp_peak;
extern size_t aioli_popped_data;
void aioli_push_slow(const void *src, size_t n);
/* `what` numbers the pop that failed, for the message (see aioli.c). */
void aioli_pop_slow(int what, void *dst, size_t n);

/* The stack pointer is read into a local first: the copy into the stack
 * may alias any variable, so the compiler would otherwise reload it. */
#define AIOLI_INLINE_PUSH_POP(T, PUSH, POP, WHAT)                             \
    static inline void PUSH(T v)                                              \
    {                                                                         \
        unsigned char *sp = aioli_sp;                                         \
        if ((size_t)(aioli_sp_hi - sp) >= sizeof v) {                         \
            memcpy(sp, &v, sizeof v);                                         \
            aioli_sp = sp + sizeof v;                                         \
        } else {                                                              \
            aioli_push_slow(&v, sizeof v);                                    \
        }                                                                     \
    }                                                                         \
    static inline T POP(void)                                                 \
    {                                                                         \
        T v;                                                                  \
        unsigned char *sp = aioli_sp;                                         \
        if ((size_t)(sp - aioli_sp_lo) >= sizeof v && sp <= aioli_sp_peak) {  \
            sp -= sizeof v;                                                   \
            memcpy(&v, sp, sizeof v);                                         \
            aioli_sp = sp;                                                    \
            aioli_popped_data += sizeof v;                                    \
        } else {                                                              \
            aioli_pop_slow(WHAT, &v, sizeof v);                               \
        }                                                                     \
        return v;                                                             \
    }

AIOLI_INLINE_PUSH_POP(double, aioli_push_real8, aioli_pop_real8, 0)
AIOLI_INLINE_PUSH_POP(float, aioli_push_real4, aioli_pop_real4, 1)
AIOLI_INLINE_PUSH_POP(int, aioli_push_int, aioli_pop_int, 2)
AIOLI_INLINE_PUSH_POP(long, aioli_push_long, aioli_pop_long, 3)
AIOLI_INLINE_PUSH_POP(void *, aioli_push_pointer, aioli_pop_pointer, 4)

#endif /* AIOLI_H */
