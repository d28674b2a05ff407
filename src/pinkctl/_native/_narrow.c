/*
 * The narrow phase of the IK's collision check: whether two convex shapes are at least a
 * threshold apart, decided by GJK on their support functions (pinkctl/ik/capsules.py
 * describes the check; _collision.c calls this for the pairs its capsules cannot clear).
 *
 * Acceptance is proved, not estimated: for any unit direction n, every point x of the
 * Minkowski difference A - B has |x| >= n . x, so min over A - B of n . x (one support point
 * of each shape, computed exactly up to rounding) is a lower bound of the distance. The
 * shapes are accepted only when some direction's bound reaches the threshold; GJK only
 * chooses the directions (first the caller's hint, the capsules' closest-point direction).
 * Rejection is proved too when GJK's simplex holds a point of A - B shorter than the
 * threshold (an upper bound of the distance below it) or the origin (overlap); otherwise,
 * when GJK has converged (|v|^2 - v . w <= 1e-10 |v|^2) or run 64 iterations with neither,
 * the pair is rejected: the distance then lies within that tolerance of the threshold.
 * So an accepted pair is at least the threshold apart (to rounding, ~1e-15 m), and a
 * rejected one is closer, or within ~1e-10 relative of the threshold.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "_geometry.h"
#include "_narrow.h"

#define dot3 pk_dot3

static void copy3(double *to, const double *from) {
    to[0] = from[0];
    to[1] = from[1];
    to[2] = from[2];
}

static void cross3(const double *a, const double *b, double *out) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* The vertex of a hull farthest along d: by climbing its vertex graph from the last one
 * (on a convex polytope's edge graph a vertex no neighbour improves is the farthest), or
 * by trying every vertex when the hull has no graph. */
static int hull_support(const PkShape *s, const double *d) {
    const double *p = s->points;
    if (s->adj_start == NULL) return pk_farthest_vertex(p, s->npoints, d);
    int at = *s->warm;
    double best = dot3(p + 3 * at, d);
    for (int k = s->adj_start[at], end = s->adj_start[at + 1]; k < end; ++k) {
        const int v = s->adj[k];
        const double h = dot3(p + 3 * v, d);
        if (h > best) { /* climb to v and scan its neighbours */
            best = h;
            at = v;
            k = s->adj_start[v] - 1;
            end = s->adj_start[v + 1];
        }
    }
    *s->warm = at;
    return at;
}

/* support point of the shape (not a box) in its own frame along the local direction d */
static void local_support(const PkShape *s, const double *d, double *out) {
    const double *k = s->param;
    out[0] = out[1] = out[2] = 0.0;
    if (s->kind == SHAPE_CONVEX) {
        copy3(out, s->points + 3 * hull_support(s, d));
    } else if (s->kind == SHAPE_CYLINDER) {
        const double r = sqrt(d[0] * d[0] + d[1] * d[1]);
        if (r > 0.0) {
            out[0] = k[0] * d[0] / r;
            out[1] = k[0] * d[1] / r;
        }
        out[2] = d[2] >= 0.0 ? k[1] : -k[1];
    } else { /* a sphere, a capsule: a point or a segment along z, grown by the radius */
        const double n = sqrt(dot3(d, d));
        if (n > 0.0)
            for (int i = 0; i < 3; ++i) out[i] = k[0] * d[i] / n;
        if (s->kind == SHAPE_CAPSULE) out[2] += d[2] >= 0.0 ? k[1] : -k[1];
    }
}

/* support point of the placed shape along the world direction d (a box's: the controller's
 * check's, _geometry.h) */
static void support(const PkShape *s, const double *d, double *out) {
    double local[3], p[3];
    if (s->kind == SHAPE_BOX) {
        pk_box_support(s->m, s->param, d, out);
        return;
    }
    pk_unrotate(s->m, d, local);
    local_support(s, local, p);
    pk_place(s->m, p, out);
}

void pk_shape_support(const PkShape *s, const double *d, double *point) { support(s, d, point); }

double pk_shape_lowest(const PkShape *s, const double *n) {
    double down[3] = {-n[0], -n[1], -n[2]}, p[3];
    support(s, down, p);
    return dot3(n, p);
}

/* the point of A - B that minimises v . x */
static void lowest_difference(const PkShape *a, const PkShape *b, const double *v, double *w) {
    double down[3] = {-v[0], -v[1], -v[2]}, pa[3], pb[3];
    support(a, down, pa);
    support(b, v, pb);
    for (int i = 0; i < 3; ++i) w[i] = pa[i] - pb[i];
}

/* The point of segment or triangle [y0 .. y(n-1)] closest to the origin (Ericson, Real-Time
 * Collision Detection, 5.1.5), into v; the simplex keeps the vertices of its feature. */
static void closest_triangle(double (*y)[3], int *n, double *v) {
    double *a = y[0], *b = y[1], *c = y[2], ab[3], ac[3], bc[3];
    for (int i = 0; i < 3; ++i) {
        ab[i] = b[i] - a[i];
        ac[i] = c[i] - a[i];
        bc[i] = c[i] - b[i];
    }
    const double d1 = -dot3(ab, a), d2 = -dot3(ac, a);
    if (d1 <= 0.0 && d2 <= 0.0) {
        copy3(v, a);
        *n = 1;
        return;
    }
    const double d3 = -dot3(ab, b), d4 = -dot3(ac, b);
    if (d3 >= 0.0 && d4 <= d3) {
        copy3(v, b);
        copy3(y[0], b);
        *n = 1;
        return;
    }
    const double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        const double t = d1 / (d1 - d3);
        for (int i = 0; i < 3; ++i) v[i] = a[i] + t * ab[i];
        *n = 2;
        return;
    }
    const double d5 = -dot3(ab, c), d6 = -dot3(ac, c);
    if (d6 >= 0.0 && d5 <= d6) {
        copy3(v, c);
        copy3(y[0], c);
        *n = 1;
        return;
    }
    const double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        const double t = d2 / (d2 - d6);
        for (int i = 0; i < 3; ++i) v[i] = a[i] + t * ac[i];
        copy3(y[1], c);
        *n = 2;
        return;
    }
    const double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
        const double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        for (int i = 0; i < 3; ++i) v[i] = b[i] + t * bc[i];
        copy3(y[0], b);
        copy3(y[1], c);
        *n = 2;
        return;
    }
    const double denom = 1.0 / (va + vb + vc), s = vb * denom, t = vc * denom;
    for (int i = 0; i < 3; ++i) v[i] = a[i] + s * ab[i] + t * ac[i];
    *n = 3;
}

static void closest_segment(double (*y)[3], int *n, double *v) {
    double ab[3];
    for (int i = 0; i < 3; ++i) ab[i] = y[1][i] - y[0][i];
    const double len2 = dot3(ab, ab), t = len2 > 0.0 ? -dot3(y[0], ab) / len2 : 0.0;
    if (t <= 0.0) {
        copy3(v, y[0]);
        *n = 1;
    } else if (t >= 1.0) {
        copy3(v, y[1]);
        copy3(y[0], y[1]);
        *n = 1;
    } else {
        for (int i = 0; i < 3; ++i) v[i] = y[0][i] + t * ab[i];
    }
}

/* tetrahedron: the nearest of the faces the origin lies outside of (a flat one: every
 * face); 0 when the origin is inside */
static int closest_tetrahedron(double (*y)[3], int *n, double *v) {
    static const int faces[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};
    double best = INFINITY, keep[3][3];
    int kept = 0;
    for (int f = 0; f < 4; ++f) {
        const double *a = y[faces[f][0]], *b = y[faces[f][1]], *c = y[faces[f][2]];
        const double *d = y[faces[f][3]];
        double ab[3], ac[3], ad[3], normal[3];
        for (int i = 0; i < 3; ++i) {
            ab[i] = b[i] - a[i];
            ac[i] = c[i] - a[i];
            ad[i] = d[i] - a[i];
        }
        cross3(ab, ac, normal);
        const double side_o = -dot3(normal, a), side_d = dot3(normal, ad);
        const double scale = dot3(normal, normal) * dot3(ad, ad);
        if (side_o * side_d >= 0.0 && side_d * side_d > 1e-24 * scale) continue;
        double face[3][3], point[3];
        int count = 3;
        copy3(face[0], a);
        copy3(face[1], b);
        copy3(face[2], c);
        closest_triangle(face, &count, point);
        const double d2 = dot3(point, point);
        if (d2 < best) {
            best = d2;
            copy3(v, point);
            for (int k = 0; k < count; ++k) copy3(keep[k], face[k]);
            kept = count;
        }
    }
    if (kept == 0) return 0;
    for (int k = 0; k < kept; ++k) copy3(y[k], keep[k]);
    *n = kept;
    return 1;
}

int pk_shapes_apart(const PkShape *a, const PkShape *b, double threshold, const double *hint) {
    double y[4][3], v[3], w[3];
    int n = 0;
    if (hint != NULL && dot3(hint, hint) > 0.0) {
        copy3(v, hint);
    } else {
        for (int i = 0; i < 3; ++i) v[i] = a->m[9 + i] - b->m[9 + i];
        if (dot3(v, v) == 0.0) v[0] = 1.0;
    }
    for (int iteration = 0; iteration < 64; ++iteration) {
        const double vv = dot3(v, v);
        if (vv == 0.0) return 0; /* the origin is in A - B: they overlap */
        const double norm = sqrt(vv);
        if (n > 0 && norm < threshold) return 0; /* a point of A - B closer than threshold */
        lowest_difference(a, b, v, w);
        const double vw = dot3(v, w);
        if (vw >= threshold * norm) return 1; /* the bound along v reaches the threshold */
        if (n > 0 && vv - vw <= 1e-10 * vv) return 0; /* converged, within tolerance */
        copy3(y[n++], w);
        if (n == 1) {
            copy3(v, w);
        } else if (n == 2) {
            closest_segment(y, &n, v);
        } else if (n == 3) {
            closest_triangle(y, &n, v);
        } else if (!closest_tetrahedron(y, &n, v)) {
            return 0;
        }
    }
    return 0;
}

/* The point of the hull of the simplex y[0 .. n-1] nearest the origin, by the subsets of the
 * simplex (Johnson's sub-algorithm, each subset's affine hull solved by its normal
 * equations): the nearest of the subsets' projections whose barycentric coordinates are all
 * positive. Keeps that subset (y, pa, pb reordered) and writes its coordinates into lambda;
 * 0 when the whole tetrahedron holds the origin. */
static int nearest_subset(double (*y)[3], double (*pa)[3], double (*pb)[3], int *n,
                          double *lambda, double *v) {
    double best = INFINITY, best_l[4] = {0.0, 0.0, 0.0, 0.0};
    int best_mask = 0;
    /* the newest vertex first: when it makes progress (the caller's check) the nearest
       point lies on a face that holds it; the other subsets only where none does (rounding) */
    const int newest = 1 << (*n - 1);
    for (int pass = 0; pass < 2 && best_mask == 0; ++pass) {
        for (int mask = 1; mask < (1 << *n); ++mask) {
            if (((mask & newest) != 0) == pass) continue;
            int idx[4], k = 0;
            for (int i = 0; i < *n; ++i)
                if (mask & (1 << i)) idx[k++] = i;
            double e[3][3], m[3][3], r[3], mu[3] = {0.0, 0.0, 0.0};
            const double *y0 = y[idx[0]];
            for (int i = 1; i < k; ++i)
                for (int j = 0; j < 3; ++j) e[i - 1][j] = y[idx[i]][j] - y0[j];
            for (int i = 0; i < k - 1; ++i) {
                r[i] = -dot3(e[i], y0);
                for (int j = 0; j < k - 1; ++j) m[i][j] = dot3(e[i], e[j]);
            }
            if (k == 2) {
                if (!(m[0][0] > 1e-300)) continue;
                mu[0] = r[0] / m[0][0];
            } else if (k == 3) {
                const double det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
                if (!(fabs(det) > 1e-14 * m[0][0] * m[1][1])) continue;
                mu[0] = (r[0] * m[1][1] - m[0][1] * r[1]) / det;
                mu[1] = (m[0][0] * r[1] - r[0] * m[1][0]) / det;
            } else if (k == 4) {
                double c[3][3]; /* cofactors: m is symmetric */
                c[0][0] = m[1][1] * m[2][2] - m[1][2] * m[2][1];
                c[0][1] = m[1][2] * m[2][0] - m[1][0] * m[2][2];
                c[0][2] = m[1][0] * m[2][1] - m[1][1] * m[2][0];
                c[1][1] = m[0][0] * m[2][2] - m[0][2] * m[2][0];
                c[1][2] = m[0][1] * m[2][0] - m[0][0] * m[2][1];
                c[2][2] = m[0][0] * m[1][1] - m[0][1] * m[1][0];
                c[1][0] = c[0][1], c[2][0] = c[0][2], c[2][1] = c[1][2];
                const double det = m[0][0] * c[0][0] + m[0][1] * c[0][1] + m[0][2] * c[0][2];
                if (!(fabs(det) > 1e-14 * m[0][0] * m[1][1] * m[2][2])) continue;
                for (int i = 0; i < 3; ++i)
                    mu[i] = (c[i][0] * r[0] + c[i][1] * r[1] + c[i][2] * r[2]) / det;
            }
            double l[4], sum = 0.0, point[3];
            int positive = 1;
            for (int i = 1; i < k; ++i) {
                l[i] = mu[i - 1];
                sum += l[i];
                positive &= l[i] > 0.0;
            }
            l[0] = 1.0 - sum;
            positive &= l[0] > 0.0;
            if (!positive) continue;
            for (int j = 0; j < 3; ++j) {
                point[j] = 0.0;
                for (int i = 0; i < k; ++i) point[j] += l[i] * y[idx[i]][j];
            }
            const double d2 = dot3(point, point);
            if (d2 < best) {
                best = d2;
                best_mask = mask;
                for (int i = 0; i < k; ++i) best_l[i] = l[i];
                copy3(v, point);
            }
        }
    }
    if (best_mask == (1 << 4) - 1 || best_mask == 0) return 0;
    int k = 0;
    for (int i = 0; i < *n; ++i)
        if (best_mask & (1 << i)) {
            copy3(y[k], y[i]);
            copy3(pa[k], pa[i]);
            copy3(pb[k], pb[i]);
            lambda[k] = best_l[k];
            ++k;
        }
    *n = k;
    return 1;
}

double pk_shapes_distance(const PkShape *a, const PkShape *b, const double *hint, double enough,
                          double *wa, double *wb, double *lower) {
    double y[4][3], pa[4][3], pb[4][3], lambda[4] = {1.0, 0.0, 0.0, 0.0}, v[3];
    int n = 0, converged = 0;
    double low = -INFINITY;
    if (hint != NULL && dot3(hint, hint) > 0.0) {
        copy3(v, hint);
    } else {
        for (int i = 0; i < 3; ++i) v[i] = a->m[9 + i] - b->m[9 + i];
        if (dot3(v, v) == 0.0) v[0] = 1.0;
    }
    for (int iteration = 0; iteration < 64 && !converged; ++iteration) {
        double down[3] = {-v[0], -v[1], -v[2]}, sa[3], sb[3], w[3];
        support(a, down, sa);
        support(b, v, sb);
        for (int i = 0; i < 3; ++i) w[i] = sa[i] - sb[i];
        const double vv = dot3(v, v), vw = dot3(v, w);
        if (vw > 0.0 && vw / sqrt(vv) > low) low = vw / sqrt(vv);
        if (n > 0 && (vv - vw <= 1e-10 * vv || low >= enough)) {
            converged = 1;
            break;
        }
        int again = 0; /* w already in the simplex: no progress */
        for (int k = 0; k < n; ++k)
            again |= y[k][0] == w[0] && y[k][1] == w[1] && y[k][2] == w[2];
        if (again) {
            converged = 1;
            break;
        }
        double keep_y[4][3], keep_pa[4][3], keep_pb[4][3], keep_lambda[4], keep_v[3];
        const int keep_n = n;
        memcpy(keep_y, y, sizeof y);
        memcpy(keep_pa, pa, sizeof pa);
        memcpy(keep_pb, pb, sizeof pb);
        memcpy(keep_lambda, lambda, sizeof lambda);
        copy3(keep_v, v);
        copy3(y[n], w);
        copy3(pa[n], sa);
        copy3(pb[n], sb);
        ++n;
        if (!nearest_subset(y, pa, pb, &n, lambda, v)) return -INFINITY;
        const double shorter = dot3(v, v);
        if (shorter <= 1e-24) return -INFINITY; /* touching or overlapping */
        if (keep_n > 0 && shorter >= vv) { /* no progress: rounding holds the simplex in a cycle (w added,
                                then dropped) that the 64 iterations would only repeat */
            n = keep_n;
            memcpy(y, keep_y, sizeof y);
            memcpy(pa, keep_pa, sizeof pa);
            memcpy(pb, keep_pb, sizeof pb);
            memcpy(lambda, keep_lambda, sizeof lambda);
            copy3(v, keep_v);
            converged = 1;
        }
    }
    if (n == 0) return -INFINITY;
    for (int i = 0; i < 3; ++i) {
        wa[i] = wb[i] = 0.0;
        for (int k = 0; k < n; ++k) {
            wa[i] += lambda[k] * pa[k][i];
            wb[i] += lambda[k] * pb[k][i];
        }
    }
    *lower = low;
    return sqrt(dot3(v, v));
}
