/*
 * The kernel's entry points, defined in _kernel.c (motion shaper, box QP), _ik.c (IK loop),
 * _ik_query.c (a whole IK query), _collision.c (the IK's collision broad phase) and
 * _collision_tick.c (the controller's quiet-tick check),
 * called by the CPython module in _module.c. The structures are filled by the Python side
 * (pinkctl/motion/native.py, pinkctl/ik/native.py), which mirrors their layout.
 */
#ifndef PINKCTL_NATIVE_H
#define PINKCTL_NATIVE_H

struct Kernel;
struct IKProblem;
struct IKQuery;
struct CapsuleProblem;
struct CollisionTick;

unsigned long pk_kernel_size(void);
void pk_reset(struct Kernel *k, const double *q, const double *v, const double *a);
void pk_update(struct Kernel *k, const double *v);
int pk_bounds(struct Kernel *k, double *lower, double *upper);
void pk_commit(struct Kernel *k, const double *v);
void pk_follow(struct Kernel *k, const double *wanted, int at_rest, double gain);
int pk_box_qp(int n, const double *H, const double *c, const double *lb, const double *ub,
              double *x, int *state, double *work);

unsigned long pk_ik_problem_size(void);
int pk_ik_local(struct IKProblem *p);
unsigned long pk_ik_query_size(void);
double *pk_ik_query_seed(struct IKQuery *s, int *nq);
int pk_ik_query(struct IKQuery *s, const double *position, const double *rotation);

unsigned long pk_capsule_problem_size(void);
int pk_capsule_near(struct CapsuleProblem *p);
int pk_capsule_free(struct CapsuleProblem *p, const double *q);
int pk_capsule_free_ik(struct CapsuleProblem *p, const double *q, const struct IKProblem *ik);

unsigned long pk_collision_tick_size(void);
int pk_collision_quiet(struct CollisionTick *t, const double *measured, long nmeasured, int space,
                       const double *position, long nposition);

#endif
