/*
 * pinkctl's native IK loop: one local solve of pinkctl.ik.loop.run_local for the common case,
 * a single frame goal (full pose or position only) on a chain of revolute, prismatic and
 * continuous joints, stepped by a damped least-squares rule (Levenberg-Marquardt or fixed
 * damping).
 *
 * The Python modules are the reference and hold the documentation: pinkctl/ik/loop.py (the
 * iteration: convergence test, stall detection, pinned joints, step cap, clamping),
 * pinkctl/ik/residual.py (the error and its Jacobian) and pinkctl/ik/methods.py
 * (damped_step). This file performs the same steps in the same order; forward kinematics is
 * written out here (the Python path calls Pinocchio) so the two agree to rounding, which the
 * equivalence tests check to 1e-9 on whole solves (tests/test_native_ik.py). The Python
 * side (pinkctl/ik/native.py) extracts the chain from the Pinocchio model, owns every array
 * and decides when this path applies.
 *
 * A Cholesky factorisation that fails (the damped normal matrix not positive definite, which
 * the Python path answers with a least-squares solve) stops the loop with IK_FALLBACK: the
 * caller then repeats the whole solve on the Python path, so the answer is the same.
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <string.h>
#include <time.h>

#include "_geometry.h"
#include "_ik.h"
#include "_native.h"


double pk_ik_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* c = a b for row-major 3x3 matrices (c distinct from a and b). */
static void mat_mul(const double *restrict a, const double *restrict b, double *restrict c) {
    for (int i = 0; i < 3; ++i) {
        const double a0 = a[3 * i], a1 = a[3 * i + 1], a2 = a[3 * i + 2];
        c[3 * i] = a0 * b[0] + a1 * b[3] + a2 * b[6];
        c[3 * i + 1] = a0 * b[1] + a1 * b[4] + a2 * b[7];
        c[3 * i + 2] = a0 * b[2] + a1 * b[5] + a2 * b[8];
    }
}

/* y = a x for a row-major 3x3 matrix. */
static void mat_vec(const double *restrict a, const double *restrict x, double *restrict y) {
    y[0] = a[0] * x[0] + a[1] * x[1] + a[2] * x[2];
    y[1] = a[3] * x[0] + a[4] * x[1] + a[5] * x[2];
    y[2] = a[6] * x[0] + a[7] * x[1] + a[8] * x[2];
}

/* r = a rot(u, t): a times the rotation by the angle t (c = cos t, s = sin t) about the unit
 * axis u (Rodrigues); about a coordinate axis, only two columns of a mix. */
static void rotate(const double *restrict a, const double *u, double c, double s,
                   double *restrict r) {
    if (pk_rotate_about_axis(a, u, c, s, r)) return;
    const double v = 1.0 - c, x = u[0], y = u[1], z = u[2];
    const double b[9] = {c + x * x * v,     x * y * v - z * s, x * z * v + y * s,
                         y * x * v + z * s, c + y * y * v,     y * z * v - x * s,
                         z * x * v - y * s, z * y * v + x * s, c + z * z * v};
    mat_mul(a, b, r);
}

/* The rotation vector of a rotation matrix (the inverse of exp on SO(3)), through its
 * quaternion, accurate at every angle up to pi. */
static void log3(const double *r, double *w) {
    double tr = r[0] + r[4] + r[8], qw, qx, qy, qz;
    if (tr > 0.0) {
        double s = 2.0 * sqrt(tr + 1.0);
        qw = 0.25 * s; qx = (r[7] - r[5]) / s; qy = (r[2] - r[6]) / s; qz = (r[3] - r[1]) / s;
    } else if (r[0] > r[4] && r[0] > r[8]) {
        double s = 2.0 * sqrt(1.0 + r[0] - r[4] - r[8]);
        qw = (r[7] - r[5]) / s; qx = 0.25 * s; qy = (r[1] + r[3]) / s; qz = (r[2] + r[6]) / s;
    } else if (r[4] > r[8]) {
        double s = 2.0 * sqrt(1.0 + r[4] - r[0] - r[8]);
        qw = (r[2] - r[6]) / s; qx = (r[1] + r[3]) / s; qy = 0.25 * s; qz = (r[5] + r[7]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + r[8] - r[0] - r[4]);
        qw = (r[3] - r[1]) / s; qx = (r[2] + r[6]) / s; qy = (r[5] + r[7]) / s; qz = 0.25 * s;
    }
    if (qw < 0.0) { qw = -qw; qx = -qx; qy = -qy; qz = -qz; }
    double sn = sqrt(qx * qx + qy * qy + qz * qz);
    double scale = sn < 1e-12 ? 2.0 / qw : 2.0 * atan2(sn, qw) / sn;
    w[0] = scale * qx; w[1] = scale * qy; w[2] = scale * qz;
}

/* Error e (m), weighted error ew, weighted Jacobian J (m x n, row-major) at q; the cost. */
static double evaluate(const IKProblem *p, const double *q, const double *target_p,
                       const double *target_rt, double *e, double *ew, double *J,
                       double *origins, double *axes) {
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, t[3] = {0, 0, 0}, tmp[9], v[3];
    const int n = p->n, m = p->m;
    for (int j = 0; j < p->nj; ++j) {
        const double *pl = p->placement + 12 * j, *a = p->axis + 3 * j;
        mat_vec(R, pl + 9, v);
        t[0] += v[0]; t[1] += v[1]; t[2] += v[2];
        if (p->identity[j])
            memcpy(tmp, R, sizeof tmp);
        else
            mat_mul(R, pl, tmp);
        const double x = q[p->q_index[j]];
        if (p->kind[j] == 0) {
            rotate(tmp, a, cos(x), sin(x), R);
        } else if (p->kind[j] == 2) { /* continuous: q holds (cos, sin) */
            rotate(tmp, a, x, q[p->q_index[j] + 1], R);
        } else {
            memcpy(R, tmp, sizeof tmp);
            double d[3] = {a[0] * x, a[1] * x, a[2] * x};
            mat_vec(R, d, v);
            t[0] += v[0]; t[1] += v[1]; t[2] += v[2];
        }
        memcpy(origins + 3 * j, t, sizeof t);
        if (p->frames != NULL) {
            memcpy(p->frames + 12 * j, R, sizeof R);
            memcpy(p->frames + 12 * j + 9, t, sizeof t);
        }
        mat_vec(R, a, axes + 3 * j);
    }
    double Rf[9], pf[3];
    mat_vec(R, p->frame + 9, v);
    pf[0] = t[0] + v[0]; pf[1] = t[1] + v[1]; pf[2] = t[2] + v[2];
    mat_mul(R, p->frame, Rf);
    for (int i = 0; i < 3; ++i) e[i] = pf[i] - target_p[i];
    if (m == 6) {
        mat_mul(Rf, target_rt, tmp);
        log3(tmp, e + 3);
    }
    memset(J, 0, sizeof(double) * (size_t)(m * n));
    for (int j = 0; j < p->nj; ++j) {
        int c = p->column[j];
        if (c < 0) continue;
        const double *w = axes + 3 * j, *o = origins + 3 * j;
        if (p->kind[j] != 1) {
            double r[3] = {pf[0] - o[0], pf[1] - o[1], pf[2] - o[2]};
            J[c] = w[1] * r[2] - w[2] * r[1];
            J[n + c] = w[2] * r[0] - w[0] * r[2];
            J[2 * n + c] = w[0] * r[1] - w[1] * r[0];
            if (m == 6) {
                J[3 * n + c] = w[0] * p->weight;
                J[4 * n + c] = w[1] * p->weight;
                J[5 * n + c] = w[2] * p->weight;
            }
        } else {
            J[c] = w[0];
            J[n + c] = w[1];
            J[2 * n + c] = w[2];
        }
    }
    double cost = 0.0;
    for (int i = 0; i < m; ++i) {
        ew[i] = i < 3 ? e[i] : e[i] * p->weight;
        cost += ew[i] * ew[i];
    }
    return cost;
}

/* Cholesky solve of the k x k system A x = b in place (A lower triangle overwritten);
 * returns 0 when A is not positive definite. */
static int cholesky_solve(int k, double *A, double *b) {
    for (int j = 0; j < k; ++j) {
        double d = A[k * j + j];
        for (int l = 0; l < j; ++l) d -= A[k * j + l] * A[k * j + l];
        if (!(d > 0.0)) return 0;
        d = sqrt(d);
        A[k * j + j] = d;
        for (int i = j + 1; i < k; ++i) {
            double s = A[k * i + j];
            for (int l = 0; l < j; ++l) s -= A[k * i + l] * A[k * j + l];
            A[k * i + j] = s / d;
        }
    }
    for (int i = 0; i < k; ++i) {
        double s = b[i];
        for (int l = 0; l < i; ++l) s -= A[k * i + l] * b[l];
        b[i] = s / A[k * i + i];
    }
    for (int i = k - 1; i >= 0; --i) {
        double s = b[i];
        for (int l = i + 1; l < k; ++l) s -= A[k * l + i] * b[l];
        b[i] = s / A[k * i + i];
    }
    return 1;
}

/* methods.damped_step: dq = -J^T (J J^T + lam I)^-1 e, on the smaller normal system. */
static int damped_step(int m, int n, const double *J, const double *e, double lam, double *dq) {
    double A[IK_MAX_COLUMNS * IK_MAX_COLUMNS], x[IK_MAX_COLUMNS];
    if (m <= n) {
        for (int i = 0; i < m; ++i)
            for (int j = 0; j <= i; ++j) {
                double s = 0.0;
                for (int c = 0; c < n; ++c) s += J[n * i + c] * J[n * j + c];
                A[m * i + j] = s;
            }
        for (int i = 0; i < m; ++i) { A[m * i + i] += lam; x[i] = e[i]; }
        if (!cholesky_solve(m, A, x)) return 0;
        for (int c = 0; c < n; ++c) {
            double s = 0.0;
            for (int i = 0; i < m; ++i) s += -x[i] * J[n * i + c];
            dq[c] = s;
        }
        return 1;
    }
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j <= i; ++j) {
            double s = 0.0;
            for (int r = 0; r < m; ++r) s += J[n * r + i] * J[n * r + j];
            A[n * i + j] = s;
        }
        double s = 0.0;
        for (int r = 0; r < m; ++r) s += J[n * r + i] * e[r];
        x[i] = s;
    }
    for (int i = 0; i < n; ++i) A[n * i + i] += lam;
    if (!cholesky_solve(n, A, x)) return 0;
    for (int c = 0; c < n; ++c) dq[c] = -x[c];
    return 1;
}

unsigned long pk_ik_problem_size(void) { return (unsigned long)sizeof(IKProblem); }

/* One local solve from p->q (clamped into the limits first, then modified in place: the last
 * iterate). best_q receives the best
 * iterate (the converged one on success), e the error at the last evaluation; cost,
 * iterations and reason go to the problem structure. Returns 1 on success, 0 otherwise. */
int pk_ik_local(IKProblem *p) {
    const int n = p->n, m = p->m, nq = p->nq;
    double *q = p->q, *best_q = p->best_q, *e = p->e;
    const double *target_p = p->target_p, *target_rt = p->target_rt;
    double ew[6], J[6 * IK_MAX_COLUMNS], dq[IK_MAX_COLUMNS], origins[3 * IK_MAX_COLUMNS],
        axes[3 * IK_MAX_COLUMNS];
    int pinned[IK_MAX_COLUMNS];
    double best_cost = INFINITY, stall_ref = INFINITY;
    int since_progress = 0, it = 0;
    p->reason = IK_ITERATIONS;
    for (int c = 0; c < n; ++c) { /* the start clamped into the limits (JointSubset.clamp) */
        if (p->continuous[c]) continue;
        double x = q[p->q_cols[c]];
        x = x < p->lower[c] ? p->lower[c] : x;
        q[p->q_cols[c]] = x > p->upper[c] ? p->upper[c] : x;
    }
    memcpy(best_q, q, sizeof(double) * (size_t)nq);
    while (it < p->max_iterations) {
        ++it;
        double cost = evaluate(p, q, target_p, target_rt, e, ew, J, origins, axes);
        if (!isfinite(cost)) { p->reason = IK_NUMERICAL; break; }
        if (cost < best_cost) {
            best_cost = cost;
            memcpy(best_q, q, sizeof(double) * (size_t)nq);
        }
        if (cost <= p->cost_bound) {
            int ok = 1;
            for (int i = 0; i < m; ++i)
                if (!(fabs(e[i]) <= p->tolerance[i])) { ok = 0; break; }
            if (ok) {
                memcpy(best_q, q, sizeof(double) * (size_t)nq);
                p->cost = cost;
                p->iterations = it;
                p->reason = IK_CONVERGED;
                return 1;
            }
        }
        if (it >= p->max_iterations) break;
        if (p->has_deadline && pk_ik_now() > p->deadline) { p->reason = IK_TIME; break; }
        if (p->stall_iterations > 0) {
            if (cost < stall_ref * p->keep) {
                stall_ref = cost;
                since_progress = 0;
            } else if (++since_progress >= p->stall_iterations) {
                p->reason = IK_STALLED;
                break;
            }
        }
        double lam = p->damping_scale * cost + p->damping_floor;
        if (!damped_step(m, n, J, ew, lam, dq)) { p->reason = IK_FALLBACK; break; }
        int on_limit = 0, any_pinned = 0;
        for (int c = 0; c < n; ++c) {
            if (p->continuous[c]) { pinned[c] = 0; continue; } /* unbounded: never pinned */
            double offset = q[p->q_cols[c]] - p->middle[c];
            int at = fabs(offset) >= p->half_range[c];
            on_limit |= at;
            pinned[c] = at && offset * dq[c] > 0.0;
            any_pinned |= pinned[c];
        }
        if (on_limit && any_pinned) {
            for (int c = 0; c < n; ++c)
                if (pinned[c])
                    for (int r = 0; r < m; ++r) J[n * r + c] = 0.0;
            if (!damped_step(m, n, J, ew, lam, dq)) { p->reason = IK_FALLBACK; break; }
            for (int c = 0; c < n; ++c)
                if (pinned[c]) dq[c] = 0.0;
        }
        if (p->max_step > 0.0) {
            double largest = 0.0;
            for (int c = 0; c < n; ++c) {
                double a = fabs(dq[c]);
                if (a > largest || isnan(a)) largest = a;
            }
            if (largest > p->max_step)
                for (int c = 0; c < n; ++c) dq[c] *= p->max_step / largest;
        }
        for (int c = 0; c < n; ++c) {
            if (p->continuous[c]) { /* pin.integrate: rotate (cos, sin), then renormalise */
                double *cs = q + p->q_cols[c];
                const double ca = cos(dq[c]), sa = sin(dq[c]);
                const double x = cs[0] * ca - cs[1] * sa, y = cs[1] * ca + cs[0] * sa;
                const double f = (3.0 - (x * x + y * y)) / 2.0;
                cs[0] = x * f;
                cs[1] = y * f;
                continue;
            }
            double x = q[p->q_cols[c]] + dq[c];
            x = x < p->lower[c] ? p->lower[c] : x;
            x = x > p->upper[c] ? p->upper[c] : x;
            q[p->q_cols[c]] = x;
        }
    }
    p->cost = best_cost;
    p->iterations = it;
    return 0;
}
