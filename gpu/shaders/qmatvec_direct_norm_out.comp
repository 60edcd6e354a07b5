// As qmatvec_direct_norm.comp, and workgroup 0 also writes the sum and the normed row (QMV_NORM_OUT): the
// first consumer of an add_rmsnorm folded into projections materialises its outputs for the other ops.
#version 450
#define QMV_NORM
#define QMV_NORM_OUT
#include "qmatvec_direct.glsl"
