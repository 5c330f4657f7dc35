/* One-dimensional heat equation, explicit Euler in time.
 * The cost is the squared distance to a target temperature profile;
 * its gradient with respect to the initial state is what an inverse
 * problem would ask aioli for. */
#include <math.h>
#include <stdlib.h>

#define NX 32

typedef struct {
    double kappa; /* diffusivity */
    double dt;    /* time step */
    int steps;
} Params;

/* One explicit step: u_new[i] = u[i] + r * (u[i-1] - 2u[i] + u[i+1]). */
static void step(int n, const double *u, double *unew, double r)
{
    unew[0] = u[0];
    for (int i = 1; i < n - 1; i++) {
        unew[i] = u[i] + r * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
    }
    unew[n - 1] = u[n - 1];
}

double heat_cost(const double *u0, const double *target, Params p)
{
    double *u = (double *)malloc(NX * sizeof(double));
    double *v = (double *)malloc(NX * sizeof(double));
    double r = p.kappa * p.dt * (NX - 1) * (NX - 1);
    double cost = 0.0;
    for (int i = 0; i < NX; i++) {
        u[i] = u0[i];
    }
    for (int t = 0; t < p.steps; t++) {
        step(NX, u, v, r);
        /* swap the buffers instead of copying */
        double *w = u;
        u = v;
        v = w;
    }
    for (int i = 0; i < NX; i++) {
        double d = u[i] - target[i];
        cost += d * d;
    }
    free(u);
    free(v);
    return sqrt(cost / NX);
}
