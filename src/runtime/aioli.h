/*
 * aioli runtime header (CONTRACT §5), written by `aioli runtime --out DIR`.
 * Generated files include it by its bare name: compile them with -I DIR
 * and link DIR/aioli.c.
 */
#ifndef AIOLI_H
#define AIOLI_H

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

/* The adjoint stack is added by the adjoint mode (issue 5). */

#endif /* AIOLI_H */
