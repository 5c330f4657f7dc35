/*
 * aioli runtime source (CONTRACT §5), written by `aioli runtime --out DIR`.
 * The adjoint mode adds its stack here (issue 5); the vector tangent mode
 * needs nothing but the NBDIRSMAX of aioli.h.
 */
#include "aioli.h"

int aioli_nbdirsmax(void)
{
    return NBDIRSMAX;
}
