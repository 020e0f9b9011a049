/* solver_priv.h - struct gp_lp for the solvers' adapters (solver.h). */
#ifndef GPUPOOL_SOLVER_PRIV_H
#define GPUPOOL_SOLVER_PRIV_H

#include "gpupool/solver.h"

/* Columns and rows as arrays; the coefficients row by row (row r's are
 * row_col/row_val[row_start[r] .. row_start[r + 1])), as they are added. */
struct gp_lp {
    enum gp_lp_sense sense;
    size_t ncols, col_cap, nints;
    double *col_lo, *col_hi, *obj;
    bool *integer;
    size_t nrows, row_cap;
    double *row_lo, *row_hi;
    size_t *row_start; /* nrows + 1 */
    size_t nnz, nz_cap;
    int *row_col;
    double *row_val;
    unsigned *seen; /* per column: the stamp of the last add_row naming it */
    unsigned stamp; /* one per gp_lp_add_row call */
};

/* The coefficients column by column (CSC): col_start has ncols + 1
 * entries, row_idx and val nnz each. GP_ENOMEM. Freed with free(). */
int gp__lp_by_column(const struct gp_lp *lp, int **col_start, int **row_idx,
                     double **val);
/* Monotonic seconds, for the solve's time. */
double gp__lp_now(void);
/* Fill out's solver-independent part from x (borrowed, ncols values): the
 * copy of x, the objective at x and whether x is feasible. */
int gp__lp_take_point(const struct gp_lp *lp, const double *x,
                      struct gp_lp_result *out, struct gp_diag *diag);

extern const struct gp_solver_ops gp__solver_coin;
extern const struct gp_solver_ops gp__solver_glpk;

#endif
