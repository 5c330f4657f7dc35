/*
 * aioli runtime source (CONTRACT §5), written by `aioli runtime --out DIR`.
 * Plain C99; compile and link it with the generated files.
 *
 * The adjoint stack is a chain of fixed-size blocks, newest on top: a push
 * copies bytes into the top block, starting a new block when it is full; a
 * pop copies them back out, releasing a block when it empties. Values may
 * straddle two blocks. Released blocks are kept for reuse, so a loop that
 * pushes and pops around a block boundary does not call malloc each time,
 * and neither does a second sweep as deep as the first (freeing them would
 * let malloc hand the pages back to the system and fault them in again);
 * the memory held never exceeds the peak size plus two blocks, as every
 * block kept was in use at once. Nothing is ever copied to grow the stack.
 *
 * Control markers are packed as bits into a 32-bit accumulator, which is
 * pushed onto the byte stack as soon as it is full and taken back when a
 * pop needs bits and it is empty. Because it is flushed eagerly (on the
 * push that fills it) and refilled lazily (on the pop that needs it), the
 * refill happens exactly where the mirrored pops reach the flush, so
 * markers and other values may be interleaved in any order. A flushed
 * word goes with the position of the one below it, so that the runtime
 * always knows where the topmost one ends: no pop of a value may reach
 * into it.
 *
 * The statistics count what the program pushed, not the runtime's own
 * layout: control markers count as bits (a byte count is the bit count
 * divided by 8, rounded up), and flushed control words not at all. The
 * inline fast paths keep no statistics of their own beyond a count of the
 * bytes popped: the bytes pushed are those popped plus the growth of the
 * stack, and the peak is recorded whenever the slow paths run, which the
 * fast pop guarantees for the first pop above the recorded peak (the only
 * moment a new peak can be lost).
 */
#include "aioli.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int aioli_nbdirsmax(void)
{
    return NBDIRSMAX;
}

/* ------------------------------------------------------------------ */
/* Failures                                                            */
/* ------------------------------------------------------------------ */

static void aioli_die(const char *what, const char *why)
{
    fprintf(stderr, "aioli runtime: %s: %s\n", what, why);
    fflush(stderr);
    abort();
}

static void aioli_empty(const char *what, size_t needed, size_t held,
                        const char *unit)
{
    char why[200];
    sprintf(why,
            "pop from an empty adjoint stack (needs %lu %s, %lu held): "
            "a pop without its push",
            (unsigned long)needed, unit, (unsigned long)held);
    aioli_die(what, why);
}

/* ------------------------------------------------------------------ */
/* The byte stack                                                      */
/* ------------------------------------------------------------------ */

#define AIOLI_BLOCK_BYTES 65536

struct aioli_block {
    struct aioli_block *prev;
    /* Bytes in use at the start of data; never 0 for the top block. */
    size_t used;
    unsigned char data[AIOLI_BLOCK_BYTES];
};

static struct aioli_block *aioli_top;
/* Empty blocks kept for reuse, chained by prev, or NULL. */
static struct aioli_block *aioli_spare;
/* Bytes in all blocks, flushed control words included (exact after
 * aioli_sync_in). */
static size_t aioli_raw_bytes;

/* A flushed control word on the byte stack: the raw offset where the
 * previous one ended (8 bytes), then the word (4 bytes). */
#define AIOLI_CONTROL_RECORD 12
/* The raw offset just past the topmost flushed control word, 0 if none. */
static size_t aioli_control_end;
/* How many flushed control words the stack holds. */
static size_t aioli_control_records;

/*
 * The window the header's inline fast paths push into and pop from: the
 * lowest byte a pop may reach (the top block's start, or the end of a
 * flushed control word in it), the block's end, the next free byte, and
 * the position where the stack's size equals the recorded peak (clamped to
 * the block's end). While the fast paths run, aioli_top->used and
 * aioli_raw_bytes are stale; every function here that works on blocks or
 * statistics first folds the window back (aioli_sync_in) and finally
 * reopens it (aioli_sync_out). With no block, the window is an empty
 * range on a dummy byte, so the fast paths fall through to the slow ones.
 */
static unsigned char aioli_no_block[1];
unsigned char *aioli_sp = aioli_no_block;
unsigned char *aioli_sp_lo = aioli_no_block;
unsigned char *aioli_sp_hi = aioli_no_block;
unsigned char *aioli_sp_peak = aioli_no_block;

/* ------------------------------------------------------------------ */
/* Statistics                                                          */
/* ------------------------------------------------------------------ */

/* Bytes of values (not control markers) popped since the last reset
 * (updated by the header's inline fast pop too). */
size_t aioli_popped_data;
/* Bytes of values on the stack at the last reset. */
static size_t aioli_data_at_reset;
/* Control bits pushed since the last reset. */
static size_t aioli_pushed_bits;
/* Control bits now on the stack. */
static size_t aioli_cur_bits;
/* The peak of aioli_size() since the last reset, as far as recorded. */
static size_t aioli_peak;
/* Whether the exit report has been considered (registered if asked). */
static int aioli_report_registered;

static size_t aioli_bits_to_bytes(size_t bits)
{
    return bits / 8 + (bits % 8 != 0);
}

/* Bytes of values now on the stack (after aioli_sync_in). */
static size_t aioli_cur_data(void)
{
    return aioli_raw_bytes - AIOLI_CONTROL_RECORD * aioli_control_records;
}

/* The size of the stack in bytes, as the statistics count it (after
 * aioli_sync_in). */
static size_t aioli_size(void)
{
    return aioli_cur_data() + aioli_bits_to_bytes(aioli_cur_bits);
}

static void aioli_note_peak(void)
{
    size_t size = aioli_size();
    if (size > aioli_peak) {
        aioli_peak = size;
    }
}

static void aioli_sync_in(void)
{
    if (aioli_top != NULL) {
        size_t used = (size_t)(aioli_sp - aioli_top->data);
        aioli_raw_bytes = aioli_raw_bytes - aioli_top->used + used;
        aioli_top->used = used;
    }
    aioli_note_peak();
}

static void aioli_sync_out(void)
{
    aioli_note_peak();
    if (aioli_top != NULL) {
        size_t base = aioli_raw_bytes - aioli_top->used;
        size_t room = AIOLI_BLOCK_BYTES - aioli_top->used;
        size_t headroom = aioli_peak - aioli_size();
        aioli_sp_lo = aioli_top->data;
        if (aioli_control_end > base) {
            aioli_sp_lo += aioli_control_end - base;
        }
        aioli_sp_hi = aioli_top->data + AIOLI_BLOCK_BYTES;
        aioli_sp = aioli_top->data + aioli_top->used;
        aioli_sp_peak = aioli_sp + (headroom < room ? headroom : room);
    } else {
        aioli_sp = aioli_sp_lo = aioli_sp_hi = aioli_sp_peak = aioli_no_block;
    }
}

static void aioli_report(void)
{
    size_t pushed, peak;
    aioli_stack_stats(&pushed, &peak);
    fprintf(stderr, "aioli stack: %lu bytes pushed, peak %lu bytes\n",
            (unsigned long)pushed, (unsigned long)peak);
}

/* Registers the exit report on the first use of the stack, if asked. */
static void aioli_touch(void)
{
    if (!aioli_report_registered) {
        aioli_report_registered = 1;
        if (getenv("AIOLI_STACK_STATS") != NULL) {
            atexit(aioli_report);
        }
    }
}

void aioli_stack_stats(size_t *pushed_bytes, size_t *peak_bytes)
{
    aioli_touch();
    aioli_sync_in();
    if (pushed_bytes != NULL) {
        /* Every byte pushed since the reset was popped or is still there. */
        *pushed_bytes = aioli_popped_data + aioli_cur_data() - aioli_data_at_reset
                        + aioli_bits_to_bytes(aioli_pushed_bits);
    }
    if (peak_bytes != NULL) {
        *peak_bytes = aioli_peak;
    }
    aioli_sync_out();
}

void aioli_stack_reset_stats(void)
{
    aioli_touch();
    aioli_sync_in();
    aioli_popped_data = 0;
    aioli_data_at_reset = aioli_cur_data();
    aioli_pushed_bits = 0;
    aioli_peak = aioli_size();
    aioli_sync_out();
}

/* ------------------------------------------------------------------ */
/* Blocks                                                              */
/* ------------------------------------------------------------------ */

static void aioli_new_block(void)
{
    struct aioli_block *b = aioli_spare;
    if (b != NULL) {
        aioli_spare = b->prev;
    } else {
        b = (struct aioli_block *)malloc(sizeof *b);
        if (b == NULL) {
            aioli_die("push", "out of memory for the adjoint stack");
        }
    }
    b->prev = aioli_top;
    b->used = 0;
    aioli_top = b;
}

static void aioli_release_block(void)
{
    struct aioli_block *b = aioli_top;
    aioli_top = b->prev;
    b->prev = aioli_spare;
    aioli_spare = b;
}

/* Between aioli_sync_in and aioli_sync_out. */
static void aioli_push_raw(const void *src, size_t n)
{
    const unsigned char *s = (const unsigned char *)src;
    while (n > 0) {
        size_t room, chunk;
        if (aioli_top == NULL || aioli_top->used == AIOLI_BLOCK_BYTES) {
            aioli_new_block();
        }
        room = AIOLI_BLOCK_BYTES - aioli_top->used;
        chunk = n < room ? n : room;
        memcpy(aioli_top->data + aioli_top->used, s, chunk);
        aioli_top->used += chunk;
        aioli_raw_bytes += chunk;
        s += chunk;
        n -= chunk;
    }
}

/* Pops the last n bytes pushed into dst; the caller checked they exist.
 * Between aioli_sync_in and aioli_sync_out. */
static void aioli_pop_raw(void *dst, size_t n)
{
    unsigned char *d = (unsigned char *)dst;
    if (aioli_raw_bytes < n) {
        aioli_die("pop", "the adjoint stack is corrupt (pops do not mirror pushes)");
    }
    while (n > 0) {
        size_t chunk = n < aioli_top->used ? n : aioli_top->used;
        aioli_top->used -= chunk;
        aioli_raw_bytes -= chunk;
        n -= chunk;
        memcpy(d + n, aioli_top->data + aioli_top->used, chunk);
        if (aioli_top->used == 0) {
            aioli_release_block();
        }
    }
}

static void aioli_push_data(const void *src, size_t n)
{
    aioli_touch();
    aioli_sync_in();
    aioli_push_raw(src, n);
    aioli_sync_out();
}

static void aioli_pop_data(const char *what, void *dst, size_t n)
{
    size_t held;
    aioli_sync_in();
    /* Only the values above the topmost flushed control word can be
     * popped as values. */
    held = aioli_raw_bytes - aioli_control_end;
    if (held < n) {
        aioli_empty(what, n, held, "bytes");
    }
    aioli_pop_raw(dst, n);
    aioli_popped_data += n;
    aioli_sync_out();
}

/* The slow paths of the header's inline pushes and pops: the value does
 * not fit in (or is not all in) the window, there is no block, or the
 * stack grew past its recorded peak. */
void aioli_push_slow(const void *src, size_t n)
{
    aioli_push_data(src, n);
}

void aioli_pop_slow(int what, void *dst, size_t n)
{
    static const char *const names[] = {
        "aioli_pop_real8", "aioli_pop_real4", "aioli_pop_int",
        "aioli_pop_long", "aioli_pop_pointer",
    };
    aioli_pop_data(what >= 0 && what < 5 ? names[what] : "aioli_pop", dst, n);
}

/* ------------------------------------------------------------------ */
/* Typed pushes and pops                                               */
/* ------------------------------------------------------------------ */

void aioli_push_array(void *a, size_t bytes)
{
    if (bytes > 0 && a == NULL) {
        aioli_die("aioli_push_array", "null array");
    }
    aioli_push_data(a, bytes);
}

void aioli_pop_array(void *a, size_t bytes)
{
    if (bytes > 0 && a == NULL) {
        aioli_die("aioli_pop_array", "null array");
    }
    aioli_pop_data("aioli_pop_array", a, bytes);
}

/* ------------------------------------------------------------------ */
/* Control markers                                                     */
/* ------------------------------------------------------------------ */

#define AIOLI_ACC_BITS 32

/* The newest control bits, the most recent in the low bits. */
static uint32_t aioli_acc;
/* How many bits aioli_acc holds, 0..AIOLI_ACC_BITS-1 between calls. */
static int aioli_acc_bits;

static uint32_t aioli_mask(int bits)
{
    return ((uint32_t)1 << bits) - 1u;
}

static void aioli_check_bits(const char *what, int bits)
{
    if (bits < 1 || bits > 16) {
        char why[80];
        sprintf(why, "width %d outside 1..16", bits);
        aioli_die(what, why);
    }
}

/* Between aioli_sync_in and aioli_sync_out. */
static void aioli_flush_control(void)
{
    uint64_t below = (uint64_t)aioli_control_end;
    aioli_push_raw(&below, sizeof below);
    aioli_push_raw(&aioli_acc, sizeof aioli_acc);
    aioli_control_end = aioli_raw_bytes;
    aioli_control_records++;
    aioli_acc = 0;
    aioli_acc_bits = 0;
}

/* Between aioli_sync_in and aioli_sync_out. */
static void aioli_refill_control(void)
{
    uint64_t below;
    if (aioli_control_records == 0 || aioli_raw_bytes != aioli_control_end) {
        aioli_die("aioli_pop_control",
                  "the adjoint stack is corrupt (pops do not mirror pushes)");
    }
    aioli_pop_raw(&aioli_acc, sizeof aioli_acc);
    aioli_pop_raw(&below, sizeof below);
    aioli_control_end = (size_t)below;
    aioli_control_records--;
    aioli_acc_bits = AIOLI_ACC_BITS;
}

void aioli_push_control(int value, int bits)
{
    int remaining = bits;
    aioli_check_bits("aioli_push_control", bits);
    if (value < 0 || (uint32_t)value > aioli_mask(bits)) {
        char why[80];
        sprintf(why, "value %d does not fit in %d bits", value, bits);
        aioli_die("aioli_push_control", why);
    }
    aioli_touch();
    aioli_sync_in();
    /* The high bits go first, into the older word if the value straddles
     * two: the pop takes the low bits first. */
    while (remaining > 0) {
        int room = AIOLI_ACC_BITS - aioli_acc_bits;
        int take = remaining < room ? remaining : room;
        uint32_t part = ((uint32_t)value >> (remaining - take)) & aioli_mask(take);
        aioli_acc = (aioli_acc << take) | part;
        aioli_acc_bits += take;
        remaining -= take;
        if (aioli_acc_bits == AIOLI_ACC_BITS) {
            aioli_flush_control();
        }
    }
    aioli_pushed_bits += (size_t)bits;
    aioli_cur_bits += (size_t)bits;
    aioli_sync_out();
}

int aioli_pop_control(int bits)
{
    uint32_t value = 0;
    int got = 0;
    aioli_check_bits("aioli_pop_control", bits);
    if (aioli_cur_bits < (size_t)bits) {
        aioli_empty("aioli_pop_control", (size_t)bits, aioli_cur_bits,
                    "control bits");
    }
    aioli_sync_in();
    while (got < bits) {
        int take;
        if (aioli_acc_bits == 0) {
            aioli_refill_control();
        }
        take = bits - got < aioli_acc_bits ? bits - got : aioli_acc_bits;
        value |= (aioli_acc & aioli_mask(take)) << got;
        /* take < 32 here, so the shift is defined. */
        aioli_acc >>= take;
        aioli_acc_bits -= take;
        got += take;
    }
    aioli_cur_bits -= (size_t)bits;
    aioli_sync_out();
    return (int)value;
}

/* ------------------------------------------------------------------ */
/* Frees put off to the end of the outermost adjoint call              */
/* ------------------------------------------------------------------ */

static void **aioli_later = NULL;
static size_t aioli_later_len = 0;
static size_t aioli_later_cap = 0;
static int aioli_sweeps = 0;

void aioli_free_later(void *p)
{
    if (p == NULL) {
        return;
    }
    if (aioli_later_len == aioli_later_cap) {
        size_t cap = aioli_later_cap == 0 ? 64 : 2 * aioli_later_cap;
        void **grown = (void **)realloc(aioli_later, cap * sizeof(void *));
        if (grown == NULL) {
            aioli_die("aioli_free_later", "out of memory");
        }
        aioli_later = grown;
        aioli_later_cap = cap;
    }
    aioli_later[aioli_later_len++] = p;
}

void aioli_sweep_open(void)
{
    aioli_sweeps++;
}

void aioli_sweep_close(void)
{
    if (aioli_sweeps == 0) {
        aioli_die("aioli_sweep_close", "no adjoint call is open (a close without its open)");
    }
    if (--aioli_sweeps == 0) {
        while (aioli_later_len > 0) {
            free(aioli_later[--aioli_later_len]);
        }
    }
}
