/*
 * Small geometry shared by the collision code of the kernel: the IK's broad phase
 * (_collision.c) and narrow phase (_narrow.c) and the controller's quiet-tick check
 * (_collision_tick.c). Placements are 12 numbers: a rotation row-major, then a translation.
 * Each function has one definition here, so the three files round alike.
 */
#ifndef PINKCTL_GEOMETRY_H
#define PINKCTL_GEOMETRY_H

static inline double pk_dot3(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* out = m p: the point p of m's frame in the world */
static inline void pk_place(const double *m, const double *p, double *out) {
    for (int i = 0; i < 3; ++i)
        out[i] = m[3 * i] * p[0] + m[3 * i + 1] * p[1] + m[3 * i + 2] * p[2] + m[9 + i];
}

/* out = R^T d: the world direction d in m's frame */
static inline void pk_unrotate(const double *m, const double *d, double *out) {
    for (int i = 0; i < 3; ++i) out[i] = m[i] * d[0] + m[3 + i] * d[1] + m[6 + i] * d[2];
}

/* r = a rot(u, t) for a row-major 3x3 a (c = cos t, s = sin t) when the unit axis u is a
 * coordinate axis e_i: only a's columns j = i + 1 and k = i + 2 (mod 3) mix, the joints of
 * most arms. Returns 0 (r untouched) for any other axis. Shared by the IK's kinematics
 * (_ik.c) and its collision check (_collision.c), so both round alike. */
static inline int pk_rotate_about_axis(const double *a, const double *u, double c, double s,
                                       double *r) {
    if (!(u[0] == 1.0 || u[1] == 1.0 || u[2] == 1.0)) return 0;
    const int i = u[0] == 1.0 ? 0 : (u[1] == 1.0 ? 1 : 2), j = (i + 1) % 3, k = (i + 2) % 3;
    for (int row = 0; row < 3; ++row) {
        const double *ar = a + 3 * row;
        double *rr = r + 3 * row;
        rr[i] = ar[i];
        rr[j] = ar[j] * c + ar[k] * s;
        rr[k] = ar[k] * c - ar[j] * s;
    }
    return 1;
}

/* out = a b */
static inline void pk_compose(const double *a, const double *b, double *out) {
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j)
            out[3 * i + j] =
                a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
        out[9 + i] = a[3 * i] * b[9] + a[3 * i + 1] * b[10] + a[3 * i + 2] * b[11] + a[9 + i];
    }
}

/* the first of count vertices (rows of 3) farthest along d, trying every one */
static inline int pk_farthest_vertex(const double *points, int count, const double *d) {
    double best = -INFINITY;
    int at = 0;
    for (int v = 0; v < count; ++v) {
        const double height = pk_dot3(points + 3 * v, d);
        if (height > best) {
            best = height;
            at = v;
        }
    }
    return at;
}

/* the corner of a box (placement m, half sides half) farthest along the world direction n */
static inline void pk_box_support(const double *m, const double *half, const double *n,
                                  double *point) {
    for (int i = 0; i < 3; ++i) point[i] = m[9 + i];
    for (int j = 0; j < 3; ++j) { /* column j of the rotation: the box's axis j */
        const double along = n[0] * m[j] + n[1] * m[3 + j] + n[2] * m[6 + j];
        const double side = along >= 0.0 ? half[j] : -half[j];
        for (int i = 0; i < 3; ++i) point[i] += side * m[3 * i + j];
    }
}

#endif
