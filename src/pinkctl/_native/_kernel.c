/*
 * pinkctl's native kernel: the motion shaper (MotionLimitFilter and MotionShaper.follow) and
 * an exact solver of box-constrained QPs (the fused control tick's problem).
 *
 * Motion shaper
 * -------------
 *
 * The Python classes (pinkctl/motion/filter.py, shaper.py) are the reference; this file
 * performs the same IEEE-754 operations in the same order, joint by joint, so that both give
 * bit-identical commands (tests/test_native.py). The math is documented there. The Python
 * side computes every constant (pinkctl/motion/native.py) and owns every array; this file
 * only reads and writes them through the Kernel structure.
 *
 * Mirrored rows. The Python filter stacks each joint with its mirror image (row 0: q, v, a;
 * row 1: -q, -v, -a) so that one formula bounds both sides. Negation is exact and
 * round-to-nearest is symmetric, so row 1 of the state is always the exact negation of row 0:
 * only row 0 is stored here and `side` flips the signs.
 *
 * Build: -ffp-contract=off and no -ffast-math (hatch_build.py): a fused multiply-add or
 * fast-math would change the rounding the equivalence relies on.
 */
#include <math.h>

#include "_native.h"

typedef struct Kernel {
    int n;
    int has_acc;
    int has_jerk;
    int fresh;      /* the bounds m_up, m_lo belong to the current state */
    int recovering; /* the last bounds could not meet every constraint */
    double dt;
    /* filter constants, per joint (row 0; row 1 where it differs) */
    const double *h_up;     /* upper position limit (shrunk) */
    const double *h_lo;     /* minus the lower position limit (shrunk) */
    const double *vel;      /* velocity limit (shrunk) */
    const double *adt;      /* A dt */
    const double *bdt;      /* B dt (braking deceleration) */
    const double *two_acc;  /* 2 B */
    const double *half_adt; /* B dt / 2 */
    const double *w;        /* J dt^2 */
    const double *wsq;      /* w^2 */
    const double *two_w;    /* 2 w */
    const double *inv_dt;   /* 1 / dt */
    /* filter state */
    double *q, *v, *a;      /* last command: position, velocity, acceleration */
    double *dyn_up, *dyn_lo; /* acceleration-and-jerk bounds on v and on -v */
    double *m_up, *m_lo;    /* the box: v <= m_up, -v <= m_lo */
    /* shaper constants */
    const double *velocity_limit; /* the limits' velocity (not shrunk) */
    const double *ramp;           /* A/J + dt (dt without jerk limits) */
    const double *acceleration;   /* the limits' acceleration (not shrunk) */
    double min_loop_scale;
    double hold_windup_decay, hold_windup_recovery;
    double saturation_tolerance;
    /* shaper state */
    double loop_scale;
    double scale;
    double *lag; /* the part of the last wanted velocity the command did not take */
    /* work buffers */
    double *target, *command;
} Kernel;

/* pinkctl.motion.approach.PINNED: the share of its step below which a joint's room is none */
#define PINNED 1e-6

static inline double min2(double x, double y) { return y < x ? y : x; }
static inline double max2(double x, double y) { return y > x ? y : x; }

/* h(G): the largest x with x + max(x, 0)^2 / (2 w) <= G (jerk-limited velocity rows). */
static inline double jerk_cap(const Kernel *k, int i, double g) {
    double t = max2(g, 0.0) * k->two_w[i];
    t = t + k->wsq[i];
    t = sqrt(t) - k->w[i];
    return min2(g, t);
}

/* MotionLimitFilter._prepare for one joint: du = a dt. */
static void prepare_joint(Kernel *k, int i, double du) {
    for (int side = 0; side < 2; ++side) {
        double vs = side ? -k->v[i] : k->v[i];
        double dus = side ? -du : du;
        double dyn;
        if (k->has_acc) {
            dyn = vs + k->adt[i];
            if (k->has_jerk) {
                double c = vs + dus;
                dyn = min2(dyn, c + k->w[i]);
                dyn = max2(dyn, c - k->w[i]);
            }
        } else {
            dyn = INFINITY;
        }
        if (side) k->dyn_lo[i] = dyn; else k->dyn_up[i] = dyn;
    }
}

void pk_reset(Kernel *k, const double *q, const double *v, const double *a) {
    for (int i = 0; i < k->n; ++i) {
        k->q[i] = q[i];
        k->v[i] = v[i];
        k->a[i] = a[i];
        prepare_joint(k, i, a[i] * k->dt);
    }
    k->fresh = 0;
}

void pk_update(Kernel *k, const double *v) {
    for (int i = 0; i < k->n; ++i) {
        double qn = k->q[i] + v[i] * k->dt;
        double vn = (qn - k->q[i]) / k->dt; /* exactly as the checker differentiates */
        double du = vn - k->v[i];
        k->q[i] = qn;
        k->v[i] = vn;
        prepare_joint(k, i, du);
        k->a[i] = du / k->dt;
    }
    k->fresh = 0;
}

/* The rows of one side of one joint (MotionLimitFilter._compute). */
typedef struct {
    double g_vel, p, r, g_brake;
} Rows;

static Rows side_rows(const Kernel *k, int i, int side) {
    Rows rows;
    double vs = side ? -k->v[i] : k->v[i];
    double qs = side ? -k->q[i] : k->q[i];
    double hs = side ? k->h_lo[i] : k->h_up[i];
    double g_vel = k->vel[i] - vs;
    rows.r = hs - qs;
    rows.p = rows.r * k->inv_dt[i];
    double gb = 0.0;
    if (k->has_acc) {
        gb = max2(rows.r, 0.0) * k->two_acc[i];
        gb = sqrt(gb);
        gb = gb + k->half_adt[i];
        gb = gb - vs;
    }
    if (k->has_jerk) {
        g_vel = jerk_cap(k, i, g_vel);
        if (k->has_acc) gb = jerk_cap(k, i, gb);
    }
    rows.g_vel = g_vel + vs;
    rows.g_brake = k->has_acc ? gb + (vs - k->bdt[i]) : 0.0;
    return rows;
}

/* One level of MotionLimitFilter._recover for one joint; returns 1 on a miss. */
static int meet(double *lo, double *hi, double c_lo, double c_hi, int favor_hi, double tol) {
    int bad = c_lo > c_hi;
    if (bad) {
        if (favor_hi) c_lo = c_hi; else c_hi = c_lo;
    }
    double new_lo = min2(max2(*lo, c_lo), *hi);
    double new_hi = max2(min2(*hi, c_hi), *lo);
    int miss = (c_lo - *hi) > tol || (*lo - c_hi) > tol || bad;
    *lo = new_lo;
    *hi = new_hi;
    return miss;
}

static void compute(Kernel *k) {
    int crossing = 0;
    for (int i = 0; i < k->n; ++i) {
        Rows up = side_rows(k, i, 0);
        Rows lo = side_rows(k, i, 1);
        double m0 = min2(min2(k->dyn_up[i], up.g_vel), up.p);
        double m1 = min2(min2(k->dyn_lo[i], lo.g_vel), lo.p);
        if (k->has_acc) {
            m0 = min2(m0, up.g_brake);
            m1 = min2(m1, lo.g_brake);
        }
        k->m_up[i] = m0;
        k->m_lo[i] = m1;
        if (m0 + m1 < 0.0) crossing = 1;
    }
    k->recovering = 0;
    if (crossing) {
        /* not viable: meet the levels one by one, nearest point first */
        for (int i = 0; i < k->n; ++i) {
            Rows up = side_rows(k, i, 0);
            Rows low = side_rows(k, i, 1);
            double lo = -k->dyn_lo[i], hi = k->dyn_up[i];
            double tol = 1e-9 * k->vel[i];
            int miss = meet(&lo, &hi, -low.g_vel, up.g_vel, k->v[i] > 0.0, tol);
            miss |= meet(&lo, &hi, -low.p, up.p, up.r < low.r, tol);
            if (k->has_acc) miss |= meet(&lo, &hi, -low.g_brake, up.g_brake, up.r < low.r, tol);
            k->m_up[i] = hi;
            k->m_lo[i] = -lo;
            if (miss) k->recovering = 1;
        }
    }
    k->fresh = 1;
}

/* The box (lower, upper) on the next command velocity; returns the recovering flag. */
int pk_bounds(Kernel *k, double *lower, double *upper) {
    if (!k->fresh) compute(k);
    for (int i = 0; i < k->n; ++i) {
        lower[i] = -k->m_lo[i];
        upper[i] = k->m_up[i];
    }
    return k->recovering;
}

/* v clipped into the box, recorded as the next command (MotionShaper.commit). */
void pk_commit(Kernel *k, const double *v) {
    if (!k->fresh) compute(k);
    for (int i = 0; i < k->n; ++i) k->command[i] = min2(max2(v[i], -k->m_lo[i]), k->m_up[i]);
    pk_update(k, k->command);
}

/* MotionShaper.follow with the filter (at_rest: the reference motion is 0); the command
 * lands in q, v. */
void pk_follow(Kernel *k, const double *wanted, int at_rest, double gain) {
    int n = k->n;
    double *target = k->target, *command = k->command;
    if (!at_rest) {
        /* a target that jumps (its motion beyond the velocity limits) is a fixed one */
        double excess = -INFINITY;
        for (int i = 0; i < n; ++i)
            excess = max2(excess, fabs(wanted[i] - gain * k->lag[i]) - k->velocity_limit[i]);
        at_rest = excess > 0.0;
    }
    /* the gap g goes to the target array */
    for (int i = 0; i < n; ++i) target[i] = at_rest ? wanted[i] : gain * k->lag[i];
    double closing = 1.0;
    if (gain > 0.0) {
        double four_gain_dt = 4.0 * gain * k->dt;
        double two_dt = 2.0 * k->dt;
        for (int i = 0; i < n; ++i) {
            double speed = fabs(target[i]);
            double g_ramp = gain * k->ramp[i];
            double root = sqrt(g_ramp * g_ramp + four_gain_dt * speed / k->acceleration[i]);
            double envelope = two_dt / (root + g_ramp);
            double deadbeat = 0.5 * min2(k->adt[i], k->w[i]);
            deadbeat = deadbeat / max2(speed, deadbeat);
            closing = min2(closing, max2(envelope, deadbeat));
        }
    }
    if (at_rest) closing *= k->loop_scale;
    else k->loop_scale = 1.0;
    double limit = INFINITY;
    double top_speed = -INFINITY;
    for (int i = 0; i < n; ++i) {
        double t = closing < 1.0 ? wanted[i] - (1.0 - closing) * target[i] : wanted[i];
        target[i] = t;
        limit = min2(limit, k->velocity_limit[i] / max2(fabs(t), 1e-300));
        top_speed = max2(top_speed, fabs(wanted[i]));
    }
    if (!k->fresh) compute(k);
    double fraction = 1.0, unpinned = 1.0;
    for (int i = 0; i < n; ++i) {
        if (limit < 1.0) target[i] = target[i] * limit;
        double lower = -k->m_lo[i], upper = k->m_up[i];
        double start = min2(max2(k->v[i], lower), upper);
        double step = target[i] - start;
        double room = step > 0.0 ? upper - start : lower - start;
        if (step != 0.0) {
            fraction = min2(fraction, room / step);
            double edge = fabs(step > 0.0 ? upper : lower);
            int pinned = room / step < PINNED && edge <= PINNED * fabs(step);
            if (!pinned) unpinned = min2(unpinned, room / step);
        }
        command[i] = start; /* the start, until the fraction is known */
    }
    /* joints pinned at their box's edge keep it; the others move by their own fraction */
    fraction = fraction < PINNED && unpinned > fraction ? unpinned : max2(0.0, fraction);
    for (int i = 0; i < n; ++i) {
        double c = fraction == 1.0 ? target[i] : (target[i] - command[i]) * fraction + command[i];
        command[i] = min2(max2(c, -k->m_lo[i]), k->m_up[i]);
    }
    k->scale = fraction * min2(limit, 1.0) * (at_rest ? closing : 1.0);
    if (at_rest) {
        /* anti-windup: only a cut that keeps a joint from reversing winds up */
        double cut = -INFINITY;
        for (int i = 0; i < n; ++i)
            cut = max2(cut, fabs(command[i] - target[i]) * (command[i] * target[i] < 0.0 ? 1.0 : 0.0));
        double tolerance = k->saturation_tolerance * (1.0 + top_speed * min2(k->scale, 1.0));
        if (cut > tolerance)
            k->loop_scale = max2(k->min_loop_scale, k->hold_windup_decay * k->loop_scale);
        else if (k->loop_scale < 1.0)
            k->loop_scale = min2(1.0, k->loop_scale * k->hold_windup_recovery);
    }
    pk_update(k, command);
    for (int i = 0; i < n; ++i) k->lag[i] = wanted[i] - k->v[i];
}

/*
 * Box-constrained QP
 * ------------------
 * minimise 1/2 x'Hx + c'x subject to lb <= x <= ub, H symmetric positive definite (n x n,
 * row-major), by the primal-dual active-set method of Hintermueller, Ito and Kunisch (2003):
 * fix the active variables at their bounds, solve the free ones exactly (Cholesky of H_FF),
 * then free every active variable whose multiplier has the wrong sign and fix every free
 * variable outside its box, until nothing changes. Then the KKT conditions hold to the
 * tolerances below and x is the unique minimiser. `state` (0 free, -1 lower, +1 upper) warm
 * starts the next solve: a control loop's active set rarely changes between ticks, so most
 * solves take one factorisation.
 *
 * Exchanging every violating index at once may cycle on problems that are not M-matrices:
 * after FULL_EXCHANGES sweeps only the worst violation is exchanged. Should that not settle
 * within 4 n + 10 sweeps the caller solves with DAQP instead (as it does for a pivot below
 * PIVOT_TOLERANCE times the largest diagonal entry: a Hessian too close to singular).
 *
 * Returns the number of factorisations (>= 1) on success, 0 when the caller must fall back.
 * work: n * n + n doubles. x is clipped into the box.
 */
#define PIVOT_TOLERANCE 1e-13
#define KKT_TOLERANCE 1e-12
#define FULL_EXCHANGES 5

static int solve_free(int n, const double *H, const double *c, const double *lb,
                      const double *ub, double *x, const int *state, double *L, double *rhs,
                      double pivot_floor) {
    int free_index[256];
    int nf = 0;
    for (int i = 0; i < n; ++i) {
        if (state[i] < 0) x[i] = lb[i];
        else if (state[i] > 0) x[i] = ub[i];
        else free_index[nf++] = i;
    }
    for (int a = 0; a < nf; ++a) {
        int i = free_index[a];
        double r = -c[i];
        for (int j = 0; j < n; ++j)
            if (state[j] != 0) r -= H[i * n + j] * x[j];
        rhs[a] = r;
    }
    /* Cholesky H_FF = L L' (lower triangle of L, nf x nf) */
    for (int a = 0; a < nf; ++a) {
        for (int b = 0; b <= a; ++b) {
            double sum = H[free_index[a] * n + free_index[b]];
            for (int k = 0; k < b; ++k) sum -= L[a * nf + k] * L[b * nf + k];
            if (a == b) {
                if (!(sum > pivot_floor)) return 0;
                L[a * nf + a] = sqrt(sum);
            } else {
                L[a * nf + b] = sum / L[b * nf + b];
            }
        }
    }
    for (int a = 0; a < nf; ++a) { /* L y = rhs */
        double sum = rhs[a];
        for (int k = 0; k < a; ++k) sum -= L[a * nf + k] * rhs[k];
        rhs[a] = sum / L[a * nf + a];
    }
    for (int a = nf - 1; a >= 0; --a) { /* L' x = y */
        double sum = rhs[a];
        for (int k = a + 1; k < nf; ++k) sum -= L[k * nf + a] * rhs[k];
        rhs[a] = sum / L[a * nf + a];
    }
    for (int a = 0; a < nf; ++a) x[free_index[a]] = rhs[a];
    return 1;
}

int pk_box_qp(int n, const double *H, const double *c, const double *lb, const double *ub,
              double *x, int *state, double *work) {
    if (n > 256) return 0;
    double max_diagonal = 0.0, scale = 1.0;
    for (int i = 0; i < n; ++i) {
        if (!(lb[i] <= ub[i])) return 0; /* empty box or NaN: DAQP reports it */
        /* a non-positive diagonal: H is not positive definite (the problem is not convex).
           Only the free variables' pivots are checked by the factorisation, and a variable
           held at a bound by a warm start would divide by it below: hand it to DAQP */
        if (!(H[i * n + i] > 0.0)) return 0;
        max_diagonal = max2(max_diagonal, H[i * n + i]);
        scale = max2(scale, fabs(c[i]));
    }
    double pivot_floor = PIVOT_TOLERANCE * max_diagonal;
    double *L = work, *rhs = work + n * n;
    int max_sweeps = 4 * n + 10;
    for (int sweep = 1; sweep <= max_sweeps; ++sweep) {
        if (!solve_free(n, H, c, lb, ub, x, state, L, rhs, pivot_floor)) return 0;
        /* after a few full exchanges (which can cycle), change only the worst violation */
        int single = sweep > FULL_EXCHANGES;
        int changed = 0, worst = -1, worst_state = 0;
        double worst_violation = 0.0;
        for (int i = 0; i < n; ++i) {
            int new_state = state[i];
            double violation = 0.0;
            if (state[i] == 0) {
                double tol = KKT_TOLERANCE * (1.0 + fabs(x[i]));
                if (x[i] < lb[i] - tol) { new_state = -1; violation = lb[i] - x[i]; }
                else if (x[i] > ub[i] + tol) { new_state = 1; violation = x[i] - ub[i]; }
            } else {
                double g = c[i];
                for (int j = 0; j < n; ++j) g += H[i * n + j] * x[j];
                /* the multiplier of x >= lb is g, of x <= ub is -g: both must be >= 0 */
                if (state[i] * g > KKT_TOLERANCE * scale) {
                    new_state = 0;
                    violation = fabs(g) / H[i * n + i]; /* the step it asks for */
                }
            }
            if (new_state == state[i]) continue;
            changed = 1;
            if (!single) state[i] = new_state;
            else if (violation > worst_violation) {
                worst_violation = violation;
                worst = i;
                worst_state = new_state;
            }
        }
        if (!changed) {
            for (int i = 0; i < n; ++i) x[i] = min2(max2(x[i], lb[i]), ub[i]);
            return sweep;
        }
        if (single) state[worst] = worst_state;
    }
    return 0;
}

/* Layout check for the Python side (its ctypes.Structure must mirror this one exactly). */
unsigned long pk_kernel_size(void) { return (unsigned long)sizeof(Kernel); }
